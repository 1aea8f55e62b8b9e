"""Every model type, found from the classes that declare one.

The modules of :mod:`nbcli.models` are imported and every
:class:`~nbcli.models._base.BayesClassifier` subclass defined in them that
declares a ``name`` is a model type: adding one is writing its class.

>>> from nbcli.models import registry
>>> sorted(registry.model_classes())
['bernoulli', 'categorical', 'complement', 'gaussian', 'lda', 'mixed', 'multinomial', 'poisson', 'qda']
"""

from __future__ import annotations

import functools
import importlib
import os
import pkgutil
from dataclasses import dataclass, field

from nbcli.model_names import ordered
from nbcli.models._base import BayesClassifier
from nbcli.models.hyperparameters import Hyperparameter

# The package of the model modules, found from this module's own place (not by
# importing the package, which imports this module).
_PACKAGE = __name__.rpartition(".")[0]
_PATH = [os.path.dirname(os.path.abspath(__file__))]


@functools.cache
def model_classes() -> dict[str, type[BayesClassifier]]:
    """``{name: class}`` of every model type.

    Raises
    ------
    RuntimeError
        When two classes declare the same name (a programming error).
    """
    found: dict[str, type[BayesClassifier]] = {}
    for info in pkgutil.iter_modules(_PATH):
        if info.name == "registry":
            continue
        module = importlib.import_module(f"{_PACKAGE}.{info.name}")
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and issubclass(obj, BayesClassifier)
                and obj.__module__ == module.__name__
                and obj.__dict__.get("name")
            ):
                if obj.name in found and found[obj.name] is not obj:
                    raise RuntimeError(
                        f"model type {obj.name!r} is declared by both "
                        f"{found[obj.name].__qualname__} and {obj.__qualname__}"
                    )
                found[obj.name] = obj
    return {name: found[name] for name in ordered(list(found))}


def get(name: str) -> type[BayesClassifier]:
    """The class of model type ``name``; ``KeyError`` if there is none."""
    return model_classes()[name]


@dataclass(frozen=True)
class Flag:
    """One hyperparameter flag of ``nbcli fit`` and the model types it applies to.

    Attributes
    ----------
    flag : str
        ``--alpha`` or ``--fit-prior/--no-fit-prior``.
    spec : Hyperparameter
        The spec of the first model type that declares it (help, kind, parsing).
    params : dict
        ``{model type: hyperparameter name}`` (``--priors`` sets ``priors``
        or ``class_prior``).
    """

    flag: str
    spec: Hyperparameter
    params: dict
    #: ``{model type: spec}``: the models' own specs (their defaults may differ).
    specs: dict = field(default_factory=dict, compare=False)

    @property
    def models(self) -> list[str]:
        return list(self.params)

    @property
    def shown_default(self) -> str:
        """The default as ``--help`` and the docs show it; per model where they differ
        (``gaussian: global; mixed: feature``)."""
        shown = {m: s.shown_default for m, s in self.specs.items()} or {"": self.spec.shown_default}
        if len(set(shown.values())) == 1:
            return next(iter(shown.values()))
        return "; ".join(f"{m}: {d}" for m, d in shown.items())

    @property
    def dest(self) -> str:
        """A Python identifier for the flag (``fit_prior`` for ``--fit-prior/--no-fit-prior``)."""
        return self.flag.split("/")[0].lstrip("-").replace("-", "_")


@functools.cache
def flags() -> dict[str, Flag]:
    """Every hyperparameter flag, in the order model types and specs declare them.

    Raises
    ------
    RuntimeError
        When two model types give one flag different kinds (a programming error).
    """
    out: dict[str, Flag] = {}
    for model, cls in model_classes().items():
        for spec in cls.hyperparameters:
            if spec.flag is None:
                continue
            if spec.flag not in out:
                out[spec.flag] = Flag(spec.flag, spec, {})
            elif out[spec.flag].spec.kind != spec.kind:
                raise RuntimeError(f"flag {spec.flag} has two kinds: {spec.kind}, ...")
            out[spec.flag].params[model] = spec.name
            out[spec.flag].specs[model] = spec
    # --priors applies to every model; it reads best last, as it always has.
    return dict(sorted(out.items(), key=lambda kv: kv[0] == "--priors"))


def flag_help(flag: Flag) -> str:
    """``--help`` text of a flag: which models, what it means, its default."""
    every = len(flag.params) == len(model_classes())
    where = "" if every else f"{', '.join(flag.models)}: "
    text = flag.spec.help
    text = text[0].upper() + text[1:] if every else text
    if flag.spec.kind == "bool" or flag.spec.default_text == "class frequencies":
        return f"{where}{text}."
    return f"{where}{text} [default: {flag.shown_default}]."


def hyperparameter_table() -> str:
    """The table of hyperparameter flags (Markdown) of the docs' model reference, rendered from the specs."""
    lines = ["| flag | model | meaning | default |", "| --- | --- | --- | --- |"]
    every = len(model_classes())
    for flag in flags().values():
        models = "all" if len(flag.params) == every else ", ".join(flag.models)
        lines.append(f"| `{flag.flag}` | {models} | {flag.spec.help} | {flag.shown_default} |")
    return "\n".join(lines) + "\n"
