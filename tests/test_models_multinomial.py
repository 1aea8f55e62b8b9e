"""MultinomialNB: one alpha per feature, against scikit-learn.

Parity is ``predict_proba`` to 1e-8 absolute; chunked and merged fits equal
one fit to 1e-12; a model file keeps the per-feature alpha exactly.
"""

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn import datasets  # noqa: E402
from sklearn import naive_bayes as sk_nb  # noqa: E402

from nbcli.io.modelfile import ModelFile, load_model, save_model  # noqa: E402
from nbcli.models import MultinomialNB  # noqa: E402
from tests.conftest import assert_one_error_line, nbcli_in_process  # noqa: E402

TOL = 1e-8


def _digits():
    X, y = datasets.load_digits(return_X_y=True)
    return X[:1200], y[:1200], X[1200:], y[1200:]


def test_alpha_per_feature_equals_sklearn():
    Xtr, ytr, Xte, _ = _digits()
    alpha = np.random.default_rng(0).uniform(0.01, 10, Xtr.shape[1])
    ours = MultinomialNB(alpha=alpha).fit(Xtr, ytr)
    theirs = sk_nb.MultinomialNB(alpha=alpha).fit(Xtr, ytr)
    np.testing.assert_allclose(ours.predict_proba(Xte), theirs.predict_proba(Xte), rtol=0, atol=TOL)
    np.testing.assert_allclose(ours.feature_log_prob_, theirs.feature_log_prob_, rtol=1e-12)
    # A program that used one of the values for every feature would differ.
    assert (
        np.abs(
            MultinomialNB(alpha=alpha.mean()).fit(Xtr, ytr).feature_log_prob_
            - ours.feature_log_prob_
        ).max()
        > 0.1
    )


def test_alpha_per_feature_floor_and_check_alpha_follow_sklearn():
    Xtr, ytr, Xte, _ = _digits()
    alpha = np.full(Xtr.shape[1], 0.5)
    alpha[:3] = [0.0, 5e-11, 2e-10]
    with pytest.warns(UserWarning, match="setting alpha = 1.0e-10"):
        ours = MultinomialNB(alpha=alpha, force_alpha=False).fit(Xtr, ytr)
    with pytest.warns(UserWarning, match="setting alpha = 1.0e-10"):
        theirs = sk_nb.MultinomialNB(alpha=alpha, force_alpha=False).fit(Xtr, ytr)
    np.testing.assert_allclose(ours.predict_proba(Xte), theirs.predict_proba(Xte), rtol=0, atol=TOL)
    with pytest.warns(UserWarning):
        applied = ours._check_alpha()
    np.testing.assert_array_equal(applied[:3], [1e-10, 1e-10, 2e-10])


def test_alpha_per_feature_chunks_merge_and_model_file(tmp_path):
    Xtr, ytr, Xte, _ = _digits()
    alpha = np.linspace(0.1, 3.0, Xtr.shape[1])
    whole = MultinomialNB(alpha=alpha).fit(Xtr, ytr)
    chunked = MultinomialNB(alpha=alpha).fit_chunks(
        [(Xtr[:500], ytr[:500]), (Xtr[500:], ytr[500:])]
    )
    np.testing.assert_allclose(chunked.predict_proba(Xte), whole.predict_proba(Xte), atol=1e-12)
    merged = MultinomialNB(alpha=alpha).fit(Xtr[:500], ytr[:500])
    merged.merge(MultinomialNB(alpha=list(alpha)).fit(Xtr[500:], ytr[500:]))
    np.testing.assert_allclose(merged.predict_proba(Xte), whole.predict_proba(Xte), atol=1e-12)
    names = [f"p{j}" for j in range(Xtr.shape[1])]
    save_model(ModelFile(model=whole, feature_names=names), tmp_path / "m.nbm")
    back = load_model(tmp_path / "m.nbm").model
    np.testing.assert_array_equal(np.asarray(back.alpha), alpha)
    np.testing.assert_allclose(
        back.predict_proba(Xte), whole.predict_proba(Xte), rtol=0, atol=1e-15
    )


def test_alpha_per_feature_of_the_wrong_shape_or_sign_is_refused():
    X, y = np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([0, 1])
    with pytest.raises(ValueError, match="alpha has 3 values but there are 2 features"):
        MultinomialNB(alpha=[1.0, 2.0, 3.0]).fit(X, y)
    with pytest.raises(ValueError, match="All values in alpha must be greater than 0"):
        MultinomialNB(alpha=[1.0, -0.1]).fit(X, y)


def test_the_command_line_refuses_one_alpha_per_feature_in_one_line(tmp_path):
    cfg = tmp_path / "m.toml"
    cfg.write_text('model = "multinomial"\n[hyperparameters]\nalpha = [1.0, 2.0]\n')
    data = tmp_path / "d.csv"
    data.write_text("a,b,label\n1,0,x\n0,2,y\n")
    run = nbcli_in_process("fit", "--config", cfg, "-d", data, "-o", tmp_path / "m.nbm")
    assert_one_error_line(run, "[hyperparameters] alpha must be one number", "Python API")
    assert not (tmp_path / "m.nbm").exists()
