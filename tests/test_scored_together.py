"""Models scored together (``log_proba_together``, what a class may declare for
the models of one fold in a search) give each model's own posteriors."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import datasets

from nbcli.models import model_classes
from nbcli.models._projection import shared_log_proba
from tests.declared import fittable, grid_number

pytestmark = pytest.mark.numerical

TOGETHER = sorted(
    name for name, cls in model_classes().items() if hasattr(cls, "log_proba_together")
)


def _grid(spec, n: int = 12) -> list[float]:
    """``n`` values of a declared number across its range, its default among them."""
    low = spec.low if spec.low is not None and spec.low > 0 else float(spec.default) * 1e-3
    high = spec.high if spec.high is not None else float(spec.default) * 1e9
    values = np.geomspace(max(low, 1e-12), high, n - 1)
    return sorted({float(spec.default), *values.tolist()})


@pytest.mark.parametrize("name", TOGETHER)
@pytest.mark.parametrize("load", [datasets.load_breast_cancer, datasets.load_wine])
def test_scored_together_equals_each_model(name, load):
    cls = model_classes()[name]
    X, y = load(return_X_y=True)
    X, params = fittable(cls, X)
    spec = grid_number(cls)
    train, held = np.arange(0, len(y), 2), np.arange(1, len(y), 2)
    models = [cls(**params, **{spec.name: v}).fit(X[train], y[train]) for v in _grid(spec)]
    own = [m.predict_log_proba(X[held]) for m in models]
    together = cls.log_proba_together(models, np.asfortranarray(X[held]))
    assert together is not None
    # Each model's terms are taken about the first model's centre: the same
    # densities rounded about another point, so scores agree to the rounding
    # of their size (breast cancer's reach -3e3 nats).
    for a, b in zip(together, own):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())
    # The search's entry point takes the same route (other memory order of
    # the rows, so other BLAS blocking: equal to rounding, not bit for bit).
    via_shared = shared_log_proba(models, X[held])
    for a, b in zip(via_shared, own):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())


@pytest.mark.parametrize("name", TOGETHER)
def test_scored_together_declines_what_it_cannot_share(name):
    """Models of other statistics, or rows with a missing cell, are scored
    one by one (None), so each model refuses or leaves cells out as its own."""
    cls = model_classes()[name]
    X, y = datasets.load_wine(return_X_y=True)
    X, params = fittable(cls, X)
    a = cls(**params).fit(X[:100], y[:100])
    b = cls(**params).fit(X[50:], y[50:])
    assert cls.log_proba_together([a, b], X) is None
    same = cls(**params).fit(X[:100], y[:100])
    holes = X.copy()
    holes[3, 2] = np.nan
    assert cls.log_proba_together([a, same], holes) is None
    assert cls.log_proba_together([a], X) is None
