"""The count models on ``scipy.sparse`` input: the same models and scores as on dense input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from nbcli.models import BernoulliNB, MultinomialNB

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical

sklearn_nb = pytest.importorskip("sklearn.naive_bayes")


def _counts(seed=0, n=300, d=30):
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.4, (n, d)).astype(np.float64)
    y = rng.choice(np.array(["a", "b", "c"]), n)
    w = rng.uniform(0.5, 2.0, n)
    return X, y, w


CASES = [
    (lambda: MultinomialNB(alpha=0.5), lambda: sklearn_nb.MultinomialNB(alpha=0.5)),
    (lambda: BernoulliNB(binarize=0.0), lambda: sklearn_nb.BernoulliNB(binarize=0.0)),
    (lambda: BernoulliNB(binarize=1.0), lambda: sklearn_nb.BernoulliNB(binarize=1.0)),
]


@pytest.mark.parametrize("fmt", ["csr_array", "csr_matrix", "csc_matrix", "coo_array"])
@pytest.mark.parametrize("ours, theirs", CASES)
def test_sparse_fit_and_scores_equal_scikit_learn_and_dense(ours, theirs, fmt):
    X, y, w = _counts()
    Xs = getattr(sp, fmt)(X)
    model = ours().fit(Xs, y, sample_weight=w)
    reference = theirs().fit(sp.csr_matrix(X), y, sample_weight=w)
    dense = ours().fit(X, y, sample_weight=w)
    np.testing.assert_allclose(model.feature_count_, dense.feature_count_, rtol=1e-14)
    np.testing.assert_allclose(model.feature_count_, reference.feature_count_, rtol=1e-12)
    X_test = _counts(seed=1, n=50)[0]
    expected = reference.predict_proba(X_test)
    np.testing.assert_allclose(model.predict_proba(sp.csr_array(X_test)), expected, atol=1e-8)
    np.testing.assert_allclose(
        model.predict_log_proba(sp.csr_array(X_test)), dense.predict_log_proba(X_test), atol=1e-12
    )
    assert (model.predict(sp.csr_array(X_test)) == reference.predict(X_test)).all()


def test_sparse_chunks_merge_into_the_one_fit():
    X, y, _ = _counts(n=400)
    Xs = sp.csr_array(X)
    whole = MultinomialNB().fit(Xs, y)
    chunked = MultinomialNB().fit_chunks((Xs[i : i + 97], y[i : i + 97]) for i in range(0, 400, 97))
    np.testing.assert_array_equal(chunked.feature_count_, whole.feature_count_)
    np.testing.assert_allclose(chunked.feature_log_prob_, whole.feature_log_prob_, atol=1e-12)
    online = BernoulliNB(binarize=0.0)
    for i in range(0, 400, 150):
        online.partial_fit(Xs[i : i + 150], y[i : i + 150], classes=["a", "b", "c"])
    np.testing.assert_allclose(
        online.predict_proba(Xs), BernoulliNB(binarize=0.0).fit(X, y).predict_proba(X), atol=1e-12
    )


def test_a_wide_sparse_matrix_is_never_made_dense():
    # 200,000 rows by 2,000,000 columns is 3.2 TB dense; its 600,000
    # non-zeros are a few megabytes.
    rng = np.random.default_rng(0)
    n, d = 200_000, 2_000_000
    rows = np.repeat(np.arange(n), 3)
    X = sp.csr_array((np.ones(rows.size), (rows, rng.integers(0, d, rows.size))), shape=(n, d))
    y = rng.integers(0, 2, n)
    model = MultinomialNB().fit(X, y)
    proba = model.predict_proba(X[:1000])
    assert proba.shape == (1000, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_sparse_input_errors_name_row_and_column():
    X = sp.csr_array(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, -3.0]]))
    with pytest.raises(ValueError, match="negative value -3 at row 1, column 2"):
        MultinomialNB().fit(X, [0, 1])
    with pytest.raises(ValueError, match="NaN at row 1, column 0"):
        MultinomialNB().fit(sp.csr_array(np.array([[0.0, 1.0], [np.nan, 0.0]])), [0, 1])
    with pytest.raises(ValueError, match="value 4 at row 0, column 1 is not 0 or 1"):
        BernoulliNB(binarize=None).fit(sp.csr_array(np.array([[0.0, 4.0], [1.0, 0.0]])), [0, 1])
    fitted = MultinomialNB().fit(np.eye(3), [0, 1, 1])
    with pytest.raises(ValueError, match="expecting 3 features"):
        fitted.predict(sp.csr_array(np.ones((2, 4))))
    with pytest.raises(ValueError, match="0 sample"):
        fitted.predict(sp.csr_array((0, 3)))
