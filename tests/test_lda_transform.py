"""LDA's transform and QDA's rotations, against scikit-learn's definitions."""

import numpy as np
import pytest
from sklearn import discriminant_analysis as sk
from sklearn.datasets import load_iris, load_wine

from nbcli.models import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical


def _aligned(ours, theirs):
    """``ours`` with each column's sign turned to agree with ``theirs``."""
    return ours * np.where(np.sum(ours * theirs, axis=0) < 0, -1.0, 1.0)


@pytest.mark.parametrize("load", [load_iris, load_wine])
@pytest.mark.parametrize(
    "params",
    [
        {"solver": "svd"},
        {"solver": "svd", "n_components": 1},
        {"solver": "eigen"},
        {"solver": "eigen", "n_components": 1},
        {"solver": "eigen", "shrinkage": 0.3},
    ],
)
def test_transform_equals_scikit_learn_up_to_sign(load, params):
    X, y = load(return_X_y=True)
    theirs = sk.LinearDiscriminantAnalysis(**params).fit(X, y)
    ours = LinearDiscriminantAnalysis(**params).fit(X, y)
    expected = theirs.transform(X)
    got = ours.transform(X)
    assert got.shape == expected.shape
    scale = np.abs(expected).max()
    np.testing.assert_allclose(_aligned(got, expected), expected, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(
        ours.explained_variance_ratio_, theirs.explained_variance_ratio_, atol=1e-12
    )
    assert ours.scalings_.shape == theirs.scalings_.shape
    k = got.shape[1]
    np.testing.assert_allclose(
        _aligned(ours.scalings_[:, :k], theirs.scalings_[:, :k]),
        theirs.scalings_[:, :k],
        atol=1e-8 * np.abs(theirs.scalings_[:, :k]).max(),
    )
    np.testing.assert_allclose(
        ours.xbar_,
        theirs.priors_ @ theirs.means_,
        rtol=1e-12,
        atol=1e-12 * np.abs(theirs.means_).max(),
    )
    np.testing.assert_allclose(ours.fit_transform(X, y), got, rtol=0, atol=1e-12 * scale)


def test_every_solver_fits_the_same_model():
    X, y = load_wine(return_X_y=True)
    base = LinearDiscriminantAnalysis().fit(X, y).predict_proba(X)
    for solver in ("lsqr", "eigen"):
        got = LinearDiscriminantAnalysis(solver=solver).fit(X, y).predict_proba(X)
        np.testing.assert_array_equal(got, base)
    theirs = sk.LinearDiscriminantAnalysis(solver="lsqr").fit(X, y).predict_proba(X)
    np.testing.assert_allclose(base, theirs, atol=1e-8)


def test_lsqr_has_no_transform_and_n_components_is_bounded():
    X, y = load_iris(return_X_y=True)
    lsqr = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    with pytest.raises(NotImplementedError, match="lsqr"):
        lsqr.transform(X)
    assert not hasattr(lsqr, "scalings_")
    with pytest.raises(ValueError, match="n_components cannot be larger"):
        LinearDiscriminantAnalysis(n_components=3).fit(X, y)
    with pytest.raises(ValueError, match="solver must be one of 'svd', 'lsqr', 'eigen'"):
        LinearDiscriminantAnalysis(solver="cholesky").fit(X, y)
    with pytest.raises(ValueError, match="n_components must be a whole number >= 1"):
        LinearDiscriminantAnalysis(n_components=1.5).fit(X, y)


def test_directions_whiten_the_covariance_and_survive_chunking():
    X, y = load_wine(return_X_y=True)
    whole = LinearDiscriminantAnalysis().fit(X, y)
    s = whole.scalings_
    np.testing.assert_allclose(s.T @ whole.covariance_ @ s, np.eye(s.shape[1]), atol=1e-10)
    chunked = LinearDiscriminantAnalysis().fit_chunks(
        [(X[i::3], y[i::3]) for i in range(3)], finalize=True
    )
    np.testing.assert_allclose(
        _aligned(chunked.transform(X), whole.transform(X)), whole.transform(X), atol=1e-9
    )
    assert whole.get_feature_names_out().tolist() == [
        "lineardiscriminantanalysis0",
        "lineardiscriminantanalysis1",
    ]


@pytest.mark.parametrize("reg_param", [0.0, 0.2])
def test_qda_rotations_and_scalings_are_scikit_learns(reg_param):
    X, y = load_iris(return_X_y=True)
    theirs = sk.QuadraticDiscriminantAnalysis(reg_param=reg_param, store_covariance=True).fit(X, y)
    ours = QuadraticDiscriminantAnalysis(reg_param=reg_param, store_covariance=True).fit(X, y)
    for k in range(3):
        # Entries near zero are held to the matrix's magnitude, not their own.
        scale = np.abs(theirs.scalings_[k]).max()
        np.testing.assert_allclose(
            ours.scalings_[k], theirs.scalings_[k], rtol=1e-10, atol=1e-10 * scale
        )
        np.testing.assert_allclose(
            _aligned(ours.rotations_[k], theirs.rotations_[k]), theirs.rotations_[k], atol=1e-9
        )
        scale = np.abs(theirs.covariance_[k]).max()
        np.testing.assert_allclose(
            ours.covariance_[k], theirs.covariance_[k], rtol=1e-10, atol=1e-10 * scale
        )


def test_solver_and_n_components_survive_the_model_file(tmp_path):
    from nbcli.io.modelfile import ModelFile, load_model, save_model

    X, y = load_wine(return_X_y=True)
    model = LinearDiscriminantAnalysis(solver="eigen", n_components=1).fit(X, y)
    save_model(ModelFile(model, [f"f{j}" for j in range(13)]), tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz").model
    assert loaded.get_params() == model.get_params()
    np.testing.assert_array_equal(loaded.transform(X), model.transform(X))
    assert loaded.transform(X).shape == (178, 1)
