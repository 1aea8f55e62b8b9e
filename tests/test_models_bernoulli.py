"""BernoulliNB: one alpha per feature.

scikit-learn 1.9's BernoulliNB accepts an alpha of shape (n_features,) but
adds it to the class counts, which fails to broadcast unless there are as
many classes as features; nbcli smooths feature ``j`` with ``alpha_j``,
``p_kj = (N_kj + alpha_j) / (N_k + 2 alpha_j)``. Each feature is checked
against scikit-learn fitted with that feature's alpha (naive Bayes treats
the features independently), posteriors to 1e-8.
"""

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn import datasets  # noqa: E402
from sklearn import naive_bayes as sk_nb  # noqa: E402

from nbcli.io.modelfile import ModelFile, load_model, save_model  # noqa: E402
from nbcli.models import BernoulliNB  # noqa: E402

TOL = 1e-8


def _digits():
    X, y = datasets.load_digits(return_X_y=True)
    B = (X > 4).astype(float)
    return B[:1200], y[:1200], B[1200:], y[1200:]


def _expected(alpha, Xtr, ytr, Xte):
    """Posteriors from scikit-learn fits with each feature's own alpha."""
    jll = 0.0
    for j, a in enumerate(alpha):
        ref = sk_nb.BernoulliNB(alpha=a).fit(Xtr, ytr)
        p = ref.feature_log_prob_[:, j]
        q = np.log1p(-np.exp(p))
        jll = jll + np.outer(Xte[:, j], p) + np.outer(1 - Xte[:, j], q)
    jll = jll + ref.class_log_prior_
    out = np.exp(jll - jll.max(axis=1, keepdims=True))
    return out / out.sum(axis=1, keepdims=True), ref


@pytest.mark.parametrize("missing", ["error", "ignore"])
def test_alpha_per_feature_is_each_features_own_sklearn_fit(missing):
    Xtr, ytr, Xte, _ = _digits()
    alpha = np.random.default_rng(1).uniform(0.05, 8, Xtr.shape[1])
    ours = BernoulliNB(alpha=alpha, missing=missing).fit(Xtr, ytr)
    expected, _ = _expected(alpha, Xtr, ytr, Xte)
    np.testing.assert_allclose(ours.predict_proba(Xte), expected, rtol=0, atol=TOL)
    for j in (0, 17, 63):
        ref = sk_nb.BernoulliNB(alpha=alpha[j]).fit(Xtr, ytr)
        np.testing.assert_allclose(
            ours.feature_log_prob_[:, j], ref.feature_log_prob_[:, j], rtol=1e-12
        )


def test_alpha_per_feature_with_missing_cells_counts_the_observed_rows():
    X = np.array([[1.0, np.nan], [0.0, 1.0], [1.0, 1.0], [np.nan, 0.0]])
    y = np.array([0, 0, 1, 1])
    alpha = np.array([0.5, 2.0])
    m = BernoulliNB(alpha=alpha, missing="ignore", binarize=None).fit(X, y)
    # Class 0, feature 1: one observed row, a one: (1 + 2) / (1 + 4).
    np.testing.assert_allclose(np.exp(m.feature_log_prob_[0, 1]), 3 / 5, rtol=1e-15)
    # Class 1, feature 0: one observed row, a one: (1 + 0.5) / (1 + 1).
    np.testing.assert_allclose(np.exp(m.feature_log_prob_[1, 0]), 1.5 / 2, rtol=1e-15)


def test_alpha_per_feature_chunks_and_model_file(tmp_path):
    Xtr, ytr, Xte, _ = _digits()
    alpha = np.linspace(0.1, 3.0, Xtr.shape[1])
    whole = BernoulliNB(alpha=alpha).fit(Xtr, ytr)
    chunked = BernoulliNB(alpha=alpha).fit_chunks([(Xtr[:700], ytr[:700]), (Xtr[700:], ytr[700:])])
    np.testing.assert_allclose(chunked.predict_proba(Xte), whole.predict_proba(Xte), atol=1e-12)
    names = [f"p{j}" for j in range(Xtr.shape[1])]
    save_model(ModelFile(model=whole, feature_names=names), tmp_path / "m.nbm")
    back = load_model(tmp_path / "m.nbm").model
    np.testing.assert_allclose(
        back.predict_proba(Xte), whole.predict_proba(Xte), rtol=0, atol=1e-15
    )
