"""ComplementNB on ``scipy.sparse`` input: the model and scores of dense input and scikit-learn's."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from nbcli.models import ComplementNB, MultinomialNB

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical

sklearn_nb = pytest.importorskip("sklearn.naive_bayes")


def _counts(seed=0, n=300, d=30):
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.4, (n, d)).astype(np.float64)
    y = rng.choice(np.array(["a", "b", "c"]), n)
    w = rng.uniform(0.5, 2.0, n)
    return X, y, w


@pytest.mark.parametrize("fmt", ["csr_array", "csr_matrix", "csc_matrix", "coo_array"])
@pytest.mark.parametrize("norm", [False, True])
def test_sparse_fit_and_scores_equal_scikit_learn_and_dense(fmt, norm):
    X, y, w = _counts()
    model = ComplementNB(alpha=0.5, norm=norm).fit(getattr(sp, fmt)(X), y, sample_weight=w)
    dense = ComplementNB(alpha=0.5, norm=norm).fit(X, y, sample_weight=w)
    reference = sklearn_nb.ComplementNB(alpha=0.5, norm=norm).fit(
        sp.csr_matrix(X), y, sample_weight=w
    )
    np.testing.assert_allclose(model.feature_count_, dense.feature_count_, rtol=1e-14)
    np.testing.assert_allclose(model.feature_log_prob_, reference.feature_log_prob_, rtol=1e-12)
    X_test = _counts(seed=1, n=50)[0]
    Xs_test = getattr(sp, fmt)(X_test)
    np.testing.assert_allclose(
        model.predict_proba(Xs_test), reference.predict_proba(X_test), rtol=0, atol=1e-8
    )
    np.testing.assert_allclose(
        model.predict_log_proba(Xs_test), dense.predict_log_proba(X_test), atol=1e-12
    )
    assert (model.predict(Xs_test) == reference.predict(X_test)).all()


def test_sparse_chunks_merge_into_the_one_fit():
    X, y, _ = _counts(n=400)
    Xs = sp.csr_array(X)
    whole = ComplementNB().fit(Xs, y)
    chunked = ComplementNB().fit_chunks((Xs[i : i + 97], y[i : i + 97]) for i in range(0, 400, 97))
    np.testing.assert_array_equal(chunked.feature_count_, whole.feature_count_)
    np.testing.assert_allclose(chunked.feature_log_prob_, whole.feature_log_prob_, atol=1e-12)


def test_a_wide_sparse_matrix_is_never_made_dense():
    # 50,000 rows by 2,000,000 columns is 800 GB dense; its non-zeros are kilobytes.
    rng = np.random.default_rng(0)
    n, d = 50_000, 2_000_000
    rows = np.repeat(np.arange(n), 3)
    X = sp.csr_array((np.ones(rows.size), (rows, rng.integers(0, d, rows.size))), shape=(n, d))
    y = rng.integers(0, 2, n)
    proba = ComplementNB().fit(X, y).predict_proba(X[:1000])
    assert proba.shape == (1000, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_sparse_input_errors_name_row_and_column():
    X = sp.csr_array(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, -3.0]]))
    with pytest.raises(ValueError, match="negative value -3 at row 1, column 2"):
        ComplementNB().fit(X, [0, 1])
    model = ComplementNB().fit(sp.csr_array(np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 0.0]])), [0, 1])
    with pytest.raises(ValueError, match="negative value -3 at row 1, column 2"):
        model.predict(X)
    with pytest.raises(ValueError, match="X has 2 features"):
        model.predict(sp.csr_array(np.ones((1, 2))))
    with pytest.raises(ValueError, match="NaN at row 0, column 1"):
        model.predict(sp.csr_array(np.array([[0.0, np.nan, 1.0]])))


@pytest.mark.parametrize("model", [ComplementNB, MultinomialNB])
@pytest.mark.parametrize("missing", ["ignore", "drop"])
def test_a_missing_policy_does_not_stop_sparse_input(model, missing):
    # Sparse input holds no NaN, so there is nothing to leave out or drop.
    X, y, _ = _counts()
    got = model(missing=missing).fit(sp.csr_array(X), y)
    assert got.n_dropped_ == 0
    np.testing.assert_allclose(
        got.predict_proba(sp.csr_array(X[:20])), model().fit(X, y).predict_proba(X[:20]), atol=1e-12
    )
