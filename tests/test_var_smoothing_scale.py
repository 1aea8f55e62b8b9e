"""var_smoothing_scale: scikit-learn's global epsilon, or one per feature that follows its units."""

import numpy as np
import pytest

from nbcli.models import GaussianNB, MixedNB

sklearn = pytest.importorskip("sklearn")
from sklearn.datasets import load_breast_cancer  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.naive_bayes import GaussianNB as SkGaussianNB  # noqa: E402

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical


@pytest.fixture(scope="module")
def cancer():
    data = load_breast_cancer()
    split = train_test_split(
        data.data, data.target, test_size=114, random_state=0, stratify=data.target
    )
    column = list(data.feature_names).index("worst area")
    return split, column


def _rescaled(X, column, factor=1000.0):
    X = X.copy()
    X[:, column] *= factor
    return X


def test_global_scale_is_scikit_learns_and_depends_on_the_units(cancer):
    (Xtr, Xte, ytr, _), column = cancer
    ours = GaussianNB(var_smoothing=1e-2).fit(Xtr, ytr)
    theirs = SkGaussianNB(var_smoothing=1e-2).fit(Xtr, ytr)
    np.testing.assert_allclose(ours.predict_proba(Xte), theirs.predict_proba(Xte), atol=1e-8)
    assert isinstance(ours.epsilon_, float)
    big = GaussianNB(var_smoothing=1e-2).fit(_rescaled(Xtr, column), ytr)
    # The largest variance now belongs to the rescaled column and swamps the others.
    assert (big.predict(_rescaled(Xte, column)) != ours.predict(Xte)).sum() > 0


@pytest.mark.parametrize("cls", [GaussianNB, MixedNB])
def test_feature_scale_makes_posteriors_independent_of_a_columns_units(cancer, cls):
    (Xtr, Xte, ytr, _), column = cancer
    a = cls(var_smoothing=1e-2, var_smoothing_scale="feature").fit(Xtr, ytr)
    b = cls(var_smoothing=1e-2, var_smoothing_scale="feature").fit(_rescaled(Xtr, column), ytr)
    np.testing.assert_allclose(
        b.predict_proba(_rescaled(Xte, column)), a.predict_proba(Xte), rtol=0, atol=1e-9
    )
    np.testing.assert_allclose(b.epsilon_[column], 1e6 * a.epsilon_[column], rtol=1e-12)
    np.testing.assert_allclose(a.epsilon_, 1e-2 * Xtr.var(axis=0), rtol=1e-12)


def test_feature_scale_is_the_formula():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)) * [1.0, 100.0, 0.01]
    y = np.repeat([0, 1], 20)
    model = GaussianNB(var_smoothing=0.1, var_smoothing_scale="feature").fit(X, y)
    for k in (0, 1):
        np.testing.assert_allclose(
            model.var_[k], X[y == k].var(axis=0) + 0.1 * X.var(axis=0), rtol=1e-12
        )


@pytest.mark.parametrize("cls", [GaussianNB, MixedNB])
def test_a_feature_constant_everywhere_gets_the_global_epsilon_and_changes_no_posterior(cls):
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(size=30), np.full(30, 5.0), 1e4 * rng.normal(size=30)])
    y = np.repeat([0, 1, 2], 10)
    model = cls(var_smoothing=1e-3, var_smoothing_scale="feature").fit(X, y)
    var_all = X.var(axis=0)
    np.testing.assert_allclose(model.epsilon_[1], 1e-3 * var_all.max(), rtol=1e-12)
    np.testing.assert_allclose(model.epsilon_[[0, 2]], 1e-3 * var_all[[0, 2]], rtol=1e-12)
    without = cls(var_smoothing=1e-3, var_smoothing_scale="feature").fit(X[:, [0, 2]], y)
    probe = np.column_stack([rng.normal(size=5), [5.0, 4.0, 6.0, 5.0, 5.5], rng.normal(size=5)])
    # The constant column's term is the same in every class: posteriors as without it.
    np.testing.assert_allclose(
        model.predict_proba(probe), without.predict_proba(probe[:, [0, 2]]), rtol=0, atol=1e-12
    )


def test_large_epsilon_lists_the_pairs_where_epsilon_exceeds_the_stated_share():
    from nbcli.models._gaussian_terms import EPSILON_SHARE

    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 3)) * [1.0, 1e-4, 1e3]
    y = np.repeat([0, 1], 30)
    for cls in (GaussianNB, MixedNB):
        model = cls(var_smoothing=1e-8, var_smoothing_scale="global").fit(X, y)
        raw = np.array([X[y == k].var(axis=0) for k in (0, 1)])
        eps = 1e-8 * X.var(axis=0).max()
        expected = np.argwhere(eps > EPSILON_SHARE * raw)
        # Feature 1 (variance ~1e-8) against epsilon ~1e-2: both classes, nothing else.
        assert expected.tolist() == [[0, 1], [1, 1]]
        assert model.large_epsilon_.tolist() == expected.tolist()
        assert (
            cls(var_smoothing=1e-8, var_smoothing_scale="feature").fit(X, y).large_epsilon_.size
            == 0
        )


def test_mixed_defaults_to_the_feature_scale_and_gaussian_to_scikit_learns():
    assert MixedNB().var_smoothing_scale == "feature"
    assert GaussianNB().var_smoothing_scale == "global"


def test_mixed_default_is_invariant_to_a_columns_units_where_gaussians_is_not(cancer):
    """The issue's table: breast cancer, one column times 1e5, 114 test rows."""
    (Xtr, Xte, ytr, _), column = cancer
    a, b = MixedNB().fit(Xtr, ytr), MixedNB().fit(_rescaled(Xtr, column, 1e5), ytr)
    assert np.array_equal(a.predict(Xte), b.predict(_rescaled(Xte, column, 1e5)))
    np.testing.assert_allclose(
        b.predict_proba(_rescaled(Xte, column, 1e5)), a.predict_proba(Xte), rtol=0, atol=1e-9
    )
    g, h = GaussianNB().fit(Xtr, ytr), GaussianNB().fit(_rescaled(Xtr, column, 1e5), ytr)
    changed = int((g.predict(Xte) != h.predict(_rescaled(Xte, column, 1e5))).sum())
    assert changed > 5  # scikit-learn's rule: the units of one column decide
    assert h.large_epsilon_.shape[0] > g.large_epsilon_.shape[0] > 0
    # The column that sets the global epsilon, as the warning names it.
    assert h.largest_variance_feature_ == column == b.largest_variance_feature_
    # With the global scale mixed is gaussian again.
    m = MixedNB(var_smoothing_scale="global").fit(_rescaled(Xtr, column, 1e5), ytr)
    np.testing.assert_allclose(
        m.predict_proba(_rescaled(Xte, column, 1e5)),
        h.predict_proba(_rescaled(Xte, column, 1e5)),
        rtol=0,
        atol=1e-9,
    )


@pytest.mark.parametrize("cls", [GaussianNB, MixedNB])
def test_zero_variance_lists_the_pairs_set_by_smoothing_alone(cls):
    X = np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 4.0], [4.0, 6.0], [7.0, 7.0], [7.0, 1.0]])
    model = cls().fit(X, [0, 0, 1, 1, 2, 2])
    assert model.zero_variance_.tolist() == [[0, 1], [2, 0]]
    assert cls().fit(X[2:4], [0, 1]).zero_variance_.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
