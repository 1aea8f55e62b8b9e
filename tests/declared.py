"""Test data and settings chosen from what a model class declares, never from its name.

A model class says which distributions its feature columns follow
(``feature_kinds``; the first is a numeric column's), whether it takes one
type per column (a ``column_types`` hyperparameter), and its hyperparameter
specs. The helpers here turn any real-valued rows into rows the class takes
and pick the settings a test needs from those declarations, so that a model
type added by CONTRIBUTING.md's checklist is tested by every test that uses
them without any test naming it.

The setup the parity tests share (tables with folds or missing cells,
nbcli's posteriors read back, scikit-learn's text pipelines, the Poisson
formula, Weka's NaiveBayes) lives in :mod:`tests.fixtures` and is imported
from here, as every test helper is.
"""

from __future__ import annotations

import numpy as np

from tests.fixtures import AUSTEN_TEST as AUSTEN_TEST
from tests.fixtures import AUSTEN_TRAIN as AUSTEN_TRAIN
from tests.fixtures import Weka as Weka
from tests.fixtures import assert_out_of_fold as assert_out_of_fold
from tests.fixtures import digits_counts as digits_counts
from tests.fixtures import fold_search as fold_search
from tests.fixtures import poisson_posteriors as poisson_posteriors
from tests.fixtures import posteriors_of as posteriors_of
from tests.fixtures import predicted as predicted
from tests.fixtures import r_poisson_naive_bayes as r_poisson_naive_bayes
from tests.fixtures import text_pipeline as text_pipeline
from tests.fixtures import texts as texts
from tests.fixtures import with_folds as with_folds
from tests.fixtures import with_missing as with_missing


def spec_names(cls) -> set[str]:
    """The names of the hyperparameters ``cls`` declares."""
    return {spec.name for spec in cls.hyperparameters}


def column_kinds(cls, n_features: int) -> list[str]:
    """The distribution of each of ``n_features`` columns for model class ``cls``.

    A class with a ``column_types`` hyperparameter gets every kind it declares
    in turn (so every kind of statistics array is filled); any other class
    gets its one numeric kind throughout.
    """
    kinds = tuple(cls.feature_kinds)
    if takes_column_types(cls):
        return [kinds[j % len(kinds)] for j in range(n_features)]
    return [kinds[0]] * n_features


def takes_column_types(cls) -> bool:
    """Whether ``cls`` takes one type per column (a ``column_types``
    hyperparameter): the command line must then be told which columns are
    not its numeric kind."""
    return any(spec.kind == "column_types" for spec in cls.hyperparameters)


def _as_kind(column: np.ndarray, kind: str) -> np.ndarray:
    if kind in ("gaussian", "kernel", "discretized"):  # any reals
        return column
    if kind == "poisson":  # non-negative whole-number counts
        return np.abs(np.round(column * 2))
    if kind == "multinomial":  # non-negative counts
        return np.abs(np.round(column * 2))
    if kind == "bernoulli":  # 0/1 indicators
        return (column > 0).astype(float)
    if kind == "categorical":  # non-negative whole-number codes
        return np.abs(np.round(column))
    raise AssertionError(f"no test data for feature kind {kind!r}")


def of_kind(X: np.ndarray, kind: str) -> np.ndarray:
    """``X`` (any reals) made into columns of one feature kind ``kind``."""
    X = np.asarray(X, dtype=float)
    return np.column_stack([_as_kind(X[:, j], kind) for j in range(X.shape[1])])


def as_declared(cls, X: np.ndarray) -> np.ndarray:
    """``X`` (any reals, shape (n_samples, n_features)) made into rows ``cls`` takes."""
    X = np.asarray(X, dtype=float)
    kinds = column_kinds(cls, X.shape[1])
    return np.column_stack([_as_kind(X[:, j], kind) for j, kind in enumerate(kinds)])


def declared_params(cls, n_features: int, **wanted) -> dict:
    """Hyperparameters for rows made by :func:`as_declared`, plus those of
    ``wanted`` that ``cls`` declares (the others are left out).

    A ``column_types`` hyperparameter gets the column kinds.
    """
    params: dict = {}
    for spec in cls.hyperparameters:
        if spec.kind == "column_types":
            params[spec.name] = column_kinds(cls, n_features)
    names = spec_names(cls)
    params.update({k: v for k, v in wanted.items() if k in names})
    return params


def fittable(cls, X: np.ndarray, **wanted) -> tuple[np.ndarray, dict]:
    """Rows and hyperparameters for ``cls`` from any real-valued ``X``."""
    Xm = as_declared(cls, X)
    return Xm, declared_params(cls, Xm.shape[1], **wanted)


def smooths_with_counts(cls) -> bool:
    """Whether ``cls`` smooths counts by a pseudo-count (an ``alpha``): then
    duplicating every row changes its posteriors, while the other models'
    estimates are ratios that duplication leaves as they are."""
    return "alpha" in spec_names(cls)


def is_numeric_only(cls) -> bool:
    """Whether every column ``cls`` takes is a real-valued (Gaussian) one."""
    return set(cls.feature_kinds) == {"gaussian"}


def stats_arrays(stats) -> dict[str, np.ndarray]:
    """Every array a statistics object declares (``shapes``) and holds, by name
    (an optional array it does not hold is left out)."""
    arrays = {name: getattr(stats, name) for name in type(stats).shapes}
    return {name: np.asarray(a) for name, a in arrays.items() if a is not None}


def _other_value(spec, n_classes: int):
    """A valid value of ``spec`` other than its default, or None for none."""
    default = spec.default
    if spec.kind == "bool":
        return not default
    if spec.kind == "priors":
        weights = np.arange(1.0, n_classes + 1)
        return [float(w) for w in weights / weights.sum()]
    if spec.kind == "choice":
        return next((o for o in spec.options if o != default), None)
    if spec.kind in ("float", "int"):
        # Text options first (LDA's "auto" shrinkage takes another path).
        numbers: list = [0.25, 0.5, 0.125, 2.0] if spec.kind == "float" else [1, 2, 3]
        if isinstance(default, (int, float)) and not isinstance(default, bool) and default:
            numbers = [default * 2, default / 2, *numbers]
            if spec.kind == "int":
                numbers = [int(default) + 1, *numbers[2:]]
        for value in [*spec.options, *numbers]:
            if value != default and spec.is_valid(value):
                return value
    return None


def non_default_params(cls, n_features: int, n_classes: int = 2) -> dict:
    """Valid settings of every hyperparameter ``cls`` declares, each other than
    its default where the spec allows one (so a setting lost on the way shows),
    for rows made by :func:`as_declared`.

    Python-only objects (``kind="object"``) keep their defaults.
    """
    params = declared_params(cls, n_features)
    for spec in cls.hyperparameters:
        if spec.kind in ("column_types", "object") or spec.name in params:
            continue
        value = _other_value(spec, n_classes)
        if value is not None and _accepted(cls, {**params, spec.name: value}):
            params[spec.name] = value
    return params


def _accepted(cls, params: dict) -> bool:
    """Whether ``cls`` takes these settings together (pca and Ledoit-Wolf shrinkage do
    not), gathering the statistics of its defaults (pca on Gaussian NB gathers
    scatter matrices: tests of the stored statistics expect the usual ones)."""
    try:
        model = cls(**params)
        model.check_hyperparameters()
    except ValueError:
        return False
    gathered = getattr(model, "gathered_statistics", None)
    return gathered is None or gathered() == cls().gathered_statistics()


def leaves_missing_cells_out(params: dict, cls=None) -> bool:
    """Whether a model with these settings takes NaN cells and leaves them out
    (with ``cls``, as the model says: a projection drops the row instead)."""
    if cls is not None:
        return cls(**params).missing_policy == "ignore"
    return params.get("missing") == "ignore"


def sklearn_twin(cls):
    """The scikit-learn estimator class ``cls`` declares as its equivalent
    (``sklearn_equivalent``), or None."""
    if cls.sklearn_equivalent is None:
        return None
    import importlib

    module, _, name = cls.sklearn_equivalent.rpartition(".")
    return getattr(importlib.import_module(module), name)


def model_types_where(predicate) -> list[str]:
    """The model types (as ``--model`` spells them) whose class satisfies
    ``predicate(cls)``, in the registry's order."""
    from nbcli.models.registry import model_classes

    return [name for name, cls in model_classes().items() if predicate(cls)]


#: Feature kinds whose columns are whole-number counts or category codes.
COUNT_KINDS = ("multinomial", "poisson", "categorical")


def takes_counts(cls) -> bool:
    """Whether the columns ``cls`` takes by default (its numeric column's kind,
    ``feature_kinds[0]``) are whole-number counts or category codes."""
    return cls.feature_kinds[0] in COUNT_KINDS


def grid_number(cls):
    """The first number ``cls`` declares that ``nbcli tune`` can search on one
    pass (a ``float`` with a flag, applied when statistics become a model, not
    a count of components): the spec of a test grid's axis."""
    return next(
        spec
        for spec in cls.hyperparameters
        if spec.kind == "float"
        and spec.flag
        and not spec.shapes_statistics
        and not spec.count_or_fraction
    )
