"""The model types' names, read from their classes' declarations without importing them.

``nbcli --help`` lists every model type and must not pay for NumPy, which
importing the model classes (:mod:`nbcli.models.registry`) costs. A model
class declares its type as a class attribute ``name = "..."``
(:class:`nbcli.models._base.BayesClassifier`); this module reads those lines
from the source of :mod:`nbcli.models`, and ``tests/test_declarations.py``
checks that it finds exactly what the registry finds, in the same order.
Standard library only.
"""

from __future__ import annotations

import re
from pathlib import Path

# The order the command line lists model types in: these first, as the docs
# always have; any other in the order its module and class are found.
FIRST = ("gaussian", "multinomial", "bernoulli", "lda", "qda")

_DECLARATION = re.compile(r'^    name = "([^"\\]+)"\s*$', re.MULTILINE)


def ordered(names: list[str]) -> list[str]:
    """``names`` (in the order found) with :data:`FIRST` first."""
    rank = {name: i for i, name in enumerate(FIRST)}
    return sorted(names, key=lambda name: rank.get(name, len(rank)))


def declared_model_names() -> list[str]:
    """Every model type declared in :mod:`nbcli.models`, in the registry's order.

    Returns
    -------
    list of str
        The names, as ``--model`` takes them.
    """
    folder = Path(__file__).resolve().parent / "models"
    found: list[str] = []
    # pkgutil.iter_modules (what the registry walks) lists modules by name.
    for path in sorted(folder.glob("*.py")):
        if path.stem in ("registry", "__init__"):
            continue
        for name in _DECLARATION.findall(path.read_text(encoding="utf-8")):
            if name not in found:
                found.append(name)
    return ordered(found)
