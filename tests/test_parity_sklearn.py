"""Every model agrees with scikit-learn's equivalent on real data, through a saved model file.

Tolerance: predict_proba to 1e-8 absolute (observed differences are 1e-12 or
smaller). Differences on purpose, and how the tests account for them:

* BernoulliNB: nbcli's ``binarize`` default is None (input must be 0/1), so
  the threshold is always passed explicitly.
* LDA with shrinkage: scikit-learn's lsqr solver solves with the raw
  covariance; on breast cancer (condition number ~1e11) that loses ~1e-7 in
  the posteriors, while nbcli solves in standardised coordinates and agrees
  with a 50-digit reference to ~1e-13. Both sides are given standardised
  features for the shrinkage cases (LDA is invariant to feature scaling, and
  so is Ledoit-Wolf shrinkage on standardised features), and one extra test
  checks that nbcli's raw-feature result equals scikit-learn's standardised one.
* QDA: scikit-learn refuses covariances with an eigenvalue below 1e-4 in
  absolute terms, so the parity cases use reg_param > 0, under which both
  use every direction.
"""

import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn import datasets  # noqa: E402
from sklearn import discriminant_analysis as sk_da  # noqa: E402
from sklearn import naive_bayes as sk_nb  # noqa: E402

from nbcli.io.modelfile import ModelFile, load_model, save_model  # noqa: E402
from nbcli.models import (  # noqa: E402
    MODELS,
    BernoulliNB,
    GaussianNB,
    LinearDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
)
from tests.declared import as_declared, spec_names  # noqa: E402

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical

DATASETS = ["iris", "wine", "breast_cancer", "digits"]


def _split(name):
    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(y))
    n = int(0.7 * len(y))
    return X[idx[:n]], y[idx[:n]], X[idx[n:]], y[idx[n:]]


def _standardise(Xtr, Xte):
    mu, sd = Xtr.mean(0), Xtr.std(0)
    sd[sd == 0] = 1.0
    return (Xtr - mu) / sd, (Xte - mu) / sd


def _round_trip(model, tmp_path):
    path = tmp_path / "m.npz"
    save_model(
        ModelFile(model=model, feature_names=[f"f{i}" for i in range(model.n_features_in_)]), path
    )
    return load_model(path).model


def _cases(X):
    threshold = float(np.median(X))
    return {
        "gaussian": (GaussianNB(), sk_nb.GaussianNB()),
        "gaussian-vs": (GaussianNB(var_smoothing=1e-3), sk_nb.GaussianNB(var_smoothing=1e-3)),
        "gaussian-priors": (GaussianNB(priors=None), sk_nb.GaussianNB()),
        "multinomial": (MultinomialNB(alpha=0.5), sk_nb.MultinomialNB(alpha=0.5)),
        "multinomial-uniform": (
            MultinomialNB(alpha=1.0, fit_prior=False),
            sk_nb.MultinomialNB(alpha=1.0, fit_prior=False),
        ),
        "bernoulli": (
            BernoulliNB(alpha=1.0, binarize=threshold),
            sk_nb.BernoulliNB(alpha=1.0, binarize=threshold),
        ),
        "bernoulli-alpha": (
            BernoulliNB(alpha=0.1, binarize=threshold),
            sk_nb.BernoulliNB(alpha=0.1, binarize=threshold),
        ),
        "lda": (LinearDiscriminantAnalysis(), sk_da.LinearDiscriminantAnalysis()),
        "qda": (
            QuadraticDiscriminantAnalysis(reg_param=0.01),
            sk_da.QuadraticDiscriminantAnalysis(reg_param=0.01),
        ),
    }


@pytest.mark.parametrize("name", DATASETS)
@pytest.mark.parametrize(
    "case",
    [
        "gaussian",
        "gaussian-vs",
        "multinomial",
        "multinomial-uniform",
        "bernoulli",
        "bernoulli-alpha",
        "lda",
        "qda",
    ],
)
def test_predict_proba_matches_sklearn(name, case, tmp_path):
    Xtr, ytr, Xte, _ = _split(name)
    ours, theirs = _cases(Xtr)[case]
    loaded = _round_trip(ours.fit(Xtr, ytr), tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = theirs.fit(Xtr, ytr).predict_proba(Xte)
    got = loaded.predict_proba(Xte)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(loaded.predict(Xte), theirs.predict(Xte))
    np.testing.assert_array_equal(loaded.classes_, theirs.classes_)


@pytest.mark.parametrize("name", DATASETS)
@pytest.mark.parametrize("shrinkage", [0.3, 0.01])
def test_lda_fixed_shrinkage_matches_sklearn(name, shrinkage, tmp_path):
    Xtr, ytr, Xte, _ = _split(name)
    ours = _round_trip(LinearDiscriminantAnalysis(shrinkage=shrinkage).fit(Xtr, ytr), tmp_path)
    theirs = sk_da.LinearDiscriminantAnalysis(solver="lsqr", shrinkage=shrinkage).fit(Xtr, ytr)
    np.testing.assert_allclose(
        ours.predict_proba(Xte), theirs.predict_proba(Xte), rtol=0, atol=1e-8
    )


@pytest.mark.parametrize("name", DATASETS)
def test_lda_ledoit_wolf_matches_sklearn(name, tmp_path):
    Xtr, ytr, Xte, _ = _split(name)
    Ztr, Zte = _standardise(Xtr, Xte)
    ours = _round_trip(LinearDiscriminantAnalysis(shrinkage="auto").fit(Ztr, ytr), tmp_path)
    theirs = sk_da.LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto").fit(Ztr, ytr)
    np.testing.assert_allclose(
        ours.predict_proba(Zte), theirs.predict_proba(Zte), rtol=0, atol=1e-8
    )
    if name != "digits":
        # Ledoit-Wolf works on standardised features, so nbcli on the raw ones
        # gives the same, well-conditioned answer. (Not on digits: a pixel
        # constant within a class keeps scale 1 in either unit, so there the
        # estimate depends on the units, in scikit-learn as in nbcli.)
        raw = LinearDiscriminantAnalysis(shrinkage="auto").fit(Xtr, ytr)
        np.testing.assert_allclose(
            raw.predict_proba(Xte), theirs.predict_proba(Zte), rtol=0, atol=1e-8
        )


@pytest.mark.parametrize("name", ["iris", "wine"])
def test_qda_without_regularisation_matches_sklearn(name):
    # Classes have more samples than features; standardised so that
    # scikit-learn's absolute eigenvalue threshold does not refuse them
    # (it refuses breast cancer's nearly collinear radius/perimeter/area
    # even then; nbcli accepts them).
    Xtr, ytr, Xte, _ = _split(name)
    Ztr, Zte = _standardise(Xtr, Xte)
    ours = QuadraticDiscriminantAnalysis().fit(Ztr, ytr)
    theirs = sk_da.QuadraticDiscriminantAnalysis().fit(Ztr, ytr)
    np.testing.assert_allclose(
        ours.predict_proba(Zte), theirs.predict_proba(Zte), rtol=0, atol=1e-8
    )


@pytest.mark.parametrize("name", ["iris", "wine"])
def test_given_priors_match_sklearn(name):
    Xtr, ytr, Xte, _ = _split(name)
    priors = np.array([0.5, 0.3, 0.2])
    pairs = [
        (GaussianNB(priors=priors), sk_nb.GaussianNB(priors=priors)),
        (MultinomialNB(class_prior=priors), sk_nb.MultinomialNB(class_prior=priors)),
        (
            LinearDiscriminantAnalysis(priors=priors),
            sk_da.LinearDiscriminantAnalysis(priors=priors),
        ),
        (
            QuadraticDiscriminantAnalysis(priors=priors, reg_param=0.05),
            sk_da.QuadraticDiscriminantAnalysis(priors=priors, reg_param=0.05),
        ),
    ]
    for ours, theirs in pairs:
        np.testing.assert_allclose(
            ours.fit(Xtr, ytr).predict_proba(Xte),
            theirs.fit(Xtr, ytr).predict_proba(Xte),
            rtol=0,
            atol=1e-8,
        )


def test_string_labels_are_kept_and_match_sklearn():
    Xtr, ytr, Xte, _ = _split("iris")
    names = np.array(["setosa", "versicolor", "virginica"])
    ours = GaussianNB().fit(Xtr, names[ytr])
    theirs = sk_nb.GaussianNB().fit(Xtr, names[ytr])
    assert ours.classes_.tolist() == ["setosa", "versicolor", "virginica"]
    np.testing.assert_array_equal(ours.predict(Xte), theirs.predict(Xte))


def test_sample_weight_matches_sklearn():
    Xtr, ytr, Xte, _ = _split("wine")
    w = np.random.default_rng(3).uniform(0.5, 2.0, len(ytr))
    np.testing.assert_allclose(
        MultinomialNB().fit(Xtr, ytr, sample_weight=w).predict_proba(Xte),
        sk_nb.MultinomialNB().fit(Xtr, ytr, sample_weight=w).predict_proba(Xte),
        rtol=0,
        atol=1e-8,
    )
    # GaussianNB: equal to scikit-learn when var_smoothing's variance is the same
    # (scikit-learn uses the unweighted one, nbcli the weighted one).
    np.testing.assert_allclose(
        GaussianNB(var_smoothing=0.0).fit(Xtr, ytr, sample_weight=w).predict_proba(Xte),
        sk_nb.GaussianNB(var_smoothing=0.0).fit(Xtr, ytr, sample_weight=w).predict_proba(Xte),
        rtol=0,
        atol=1e-8,
    )


def _twin(cls):
    import importlib

    module, _, name = cls.sklearn_equivalent.rpartition(".")
    return getattr(importlib.import_module(module), name)


#: Settings both sides need on these tables, where a model declares them:
#: scikit-learn's QDA refuses covariances with an eigenvalue below 1e-4.
TWIN_SETTINGS = {"reg_param": 0.1}


@pytest.mark.parametrize(
    "name", [n for n, cls in MODELS.items() if cls.sklearn_equivalent is not None]
)
@pytest.mark.parametrize("dataset", ["iris", "wine", "breast_cancer"])
def test_every_declared_equivalent_agrees_through_a_model_file(name, dataset, tmp_path):
    """Each model that names its scikit-learn equivalent agrees with it at the
    defaults, on rows made of the kind its class declares, through a saved file."""
    cls = MODELS[name]
    twin = _twin(cls)
    Xtr, ytr, Xte, _ = _split(dataset)
    Xtr, _ = _standardise(Xtr, Xte)
    X = as_declared(cls, Xtr)
    shared = set(twin().get_params())
    params = {k: v for k, v in TWIN_SETTINGS.items() if k in spec_names(cls) and k in shared}
    ours = _round_trip(cls(**params).fit(X, ytr), tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # collinearity warnings of scikit-learn's LDA/QDA
        theirs = twin(**params).fit(X, ytr)
        expected = theirs.predict_proba(X)
    np.testing.assert_allclose(ours.predict_proba(X), expected, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
