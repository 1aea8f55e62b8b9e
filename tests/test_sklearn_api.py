"""scikit-learn's estimator API on nbcli's classes: the items a drop-in
replacement needs, each against scikit-learn's own estimator where it has one."""

import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sklearn = pytest.importorskip("sklearn")
from sklearn import covariance as sk_cov  # noqa: E402
from sklearn import datasets  # noqa: E402
from sklearn import discriminant_analysis as sk_da  # noqa: E402
from sklearn import naive_bayes as sk_nb  # noqa: E402

from nbcli.models import (  # noqa: E402
    MODELS,
    BernoulliNB,
    GaussianNB,
    LinearDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
    UndeterminedError,
)
from tests.declared import fittable, spec_names, takes_counts  # noqa: E402

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical


@pytest.fixture(scope="module")
def iris():
    return datasets.load_iris(return_X_y=True)


def _binary(iris):
    X, y = iris
    keep = y < 2
    return X[keep], y[keep]


# -- LDA: solver, tol, covariance_estimator -------------------------------------------
@pytest.mark.parametrize("solver", ["svd", "lsqr", "eigen"])
def test_lda_every_solver_is_the_same_model(iris, solver):
    X, y = iris
    base = LinearDiscriminantAnalysis().fit(X, y)
    model = LinearDiscriminantAnalysis(solver=solver).fit(X, y)
    assert model.get_params()["solver"] == solver
    np.testing.assert_array_equal(model.predict_proba(X), base.predict_proba(X))
    ref = sk_da.LinearDiscriminantAnalysis(solver=solver).fit(X, y)
    np.testing.assert_allclose(model.predict_proba(X), ref.predict_proba(X), atol=1e-8)


def test_lda_refuses_an_unknown_solver(iris):
    with pytest.raises(ValueError, match=r"solver must be one of 'svd', 'lsqr', 'eigen'; got 'qr'"):
        LinearDiscriminantAnalysis(solver="qr").fit(*iris)


def test_lda_tol_drops_directions_below_it():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    X[:, 2] = X[:, 0] + 1e-3 * rng.normal(size=60)  # nearly collinear
    y = np.repeat([0, 1], 30)
    assert LinearDiscriminantAnalysis(tol=1e-4).fit(X, y).rank_ == 3
    assert LinearDiscriminantAnalysis(tol=1e-2).fit(X, y).rank_ == 2


@pytest.mark.parametrize(
    "estimator",
    [sk_cov.EmpiricalCovariance(), sk_cov.ShrunkCovariance(shrinkage=0.3), sk_cov.LedoitWolf()],
    ids=lambda e: type(e).__name__,
)
def test_lda_covariance_estimator_equals_scikit_learn(iris, estimator):
    X, y = iris
    ours = LinearDiscriminantAnalysis(covariance_estimator=estimator).fit(X, y)
    ref = sk_da.LinearDiscriminantAnalysis(solver="lsqr", covariance_estimator=estimator).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-8)
    # Chunked fitting gives the same model.
    chunks = [(X[i::3], y[i::3]) for i in range(3)]
    merged = LinearDiscriminantAnalysis(covariance_estimator=estimator).fit_chunks(chunks)
    np.testing.assert_allclose(merged.predict_proba(X), ours.predict_proba(X), atol=1e-12)


@pytest.mark.parametrize(
    "params",
    [
        {"shrinkage": 0.2},
        {"shrinkage": "auto"},
        {"covariance_estimator": sk_cov.LedoitWolf()},
        {"covariance_estimator": sk_cov.ShrunkCovariance(shrinkage=0.3)},
    ],
    ids=repr,
)
def test_qda_shrinkage_equals_scikit_learns_eigen_solver(iris, params):
    X, y = iris
    ours = QuadraticDiscriminantAnalysis(**params).fit(X, y)
    ref = sk_da.QuadraticDiscriminantAnalysis(solver="eigen", **params).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-8)
    chunks = [(X[i::4], y[i::4]) for i in range(4)]
    merged = QuadraticDiscriminantAnalysis(**params).fit_chunks(chunks)
    np.testing.assert_allclose(merged.predict_proba(X), ours.predict_proba(X), atol=1e-12)


def test_qda_shrinkage_fits_a_class_with_fewer_samples_than_features():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(9, 4))
    y = np.array([1, 1, 1, 1, 1, 1, 2, 2, 2])
    with pytest.raises(np.linalg.LinAlgError, match="not full rank"):
        QuadraticDiscriminantAnalysis().fit(X, y)
    model = QuadraticDiscriminantAnalysis(shrinkage=0.3).fit(X, y)
    ref = sk_da.QuadraticDiscriminantAnalysis(solver="eigen", shrinkage=0.3).fit(X, y)
    np.testing.assert_allclose(model.predict_proba(X), ref.predict_proba(X), atol=1e-8)


def test_lda_covariance_estimator_refuses_what_statistics_cannot_give(iris):
    with pytest.raises(ValueError, match="covariance_estimator=OAS is not supported"):
        LinearDiscriminantAnalysis(covariance_estimator=sk_cov.OAS()).fit(*iris)
    with pytest.raises(ValueError, match="Only one of the two can be set"):
        LinearDiscriminantAnalysis(
            shrinkage=0.1, covariance_estimator=sk_cov.EmpiricalCovariance()
        ).fit(*iris)


# -- decision_function ----------------------------------------------------------------
@pytest.mark.parametrize("binary", [False, True])
def test_decision_function_equals_scikit_learn(iris, binary):
    X, y = _binary(iris) if binary else iris
    pairs = [
        (LinearDiscriminantAnalysis(), sk_da.LinearDiscriminantAnalysis()),
        (
            QuadraticDiscriminantAnalysis(reg_param=0.01),
            sk_da.QuadraticDiscriminantAnalysis(reg_param=0.01),
        ),
    ]
    for ours, ref in pairs:
        got = ours.fit(X, y).decision_function(X)
        want = ref.fit(X, y).decision_function(X)
        assert got.shape == want.shape == ((len(y),) if binary else (len(y), 3))
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-8)


# -- naive Bayes: force_alpha, predict_joint_log_proba, binarize ----------------------------
def test_predict_joint_log_proba_equals_scikit_learn(iris):
    X, y = iris
    Xb = (X > X.mean(axis=0)).astype(float)
    cases = [
        (GaussianNB(), sk_nb.GaussianNB(), X),
        (MultinomialNB(), sk_nb.MultinomialNB(), X),
        (BernoulliNB(), sk_nb.BernoulliNB(), Xb),
    ]
    for ours, ref, data in cases:
        got = ours.fit(data, y).predict_joint_log_proba(data)
        np.testing.assert_allclose(got, ref.fit(data, y).predict_joint_log_proba(data), rtol=1e-10)


def test_force_alpha_keeps_alpha_or_floors_it_with_scikit_learns_warning():
    X = np.array([[1, 0], [1, 1]])
    y = np.array([0, 1])
    kept = MultinomialNB(alpha=0.0).fit(X, y)  # force_alpha=True by default
    assert kept.feature_log_prob_[0, 1] == -np.inf
    msg = "alpha too small will result in numeric errors, setting alpha = 1.0e-10"
    for cls in (MultinomialNB, BernoulliNB):
        with pytest.warns(UserWarning, match=re.escape(msg)):
            floored = cls(alpha=0.0, force_alpha=False).fit(X, y)
        ref = getattr(sk_nb, cls.__name__)(alpha=0.0, force_alpha=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref.fit(X, y)
        np.testing.assert_allclose(floored.predict_proba(X), ref.predict_proba(X), atol=1e-12)
        assert np.all(np.isfinite(floored.feature_log_prob_))
    # The command line's chunked path floors alpha as documented, without the warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MultinomialNB(alpha=0.0, force_alpha=False).fit_chunks([(X, y)])


def test_bernoulli_binarizes_at_zero_by_default_as_scikit_learn(iris):
    X, y = iris
    Xc = X - X.mean(axis=0)
    model = BernoulliNB().fit(Xc, y)
    assert model.binarize == 0.0
    ref = sk_nb.BernoulliNB().fit(Xc, y)
    np.testing.assert_allclose(model.predict_proba(Xc), ref.predict_proba(Xc), atol=1e-12)
    with pytest.raises(ValueError, match="is not 0 or 1"):
        BernoulliNB(binarize=None).fit(Xc, y)


def test_the_command_line_keeps_its_own_defaults():
    from nbcli.cli.fit_cmd import _estimator

    bernoulli, _ = _estimator("bernoulli", {}, None, {})
    assert bernoulli.binarize is None  # input must be 0/1 unless --binarize is given
    assert bernoulli.force_alpha is False  # --alpha 0 is raised to the floor
    assert _estimator("multinomial", {}, None, {})[0].force_alpha is False


# -- get_feature_names_out --------------------------------------------------------------
def test_lda_get_feature_names_out_as_scikit_learn(iris):
    X, y = iris
    ours = LinearDiscriminantAnalysis().fit(X, y).get_feature_names_out()
    ref = sk_da.LinearDiscriminantAnalysis().fit(X, y).get_feature_names_out()
    np.testing.assert_array_equal(ours, ref)
    assert ours.dtype == object


# -- priors -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "cls", [GaussianNB, LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis]
)
def test_priors_never_share_memory_with_the_callers_array(iris, cls):
    X, y = iris
    priors = np.array([0.2, 0.3, 0.5])
    model = cls(priors=priors).fit(X, y)
    fitted = model.priors_ if hasattr(model, "priors_") else model.class_prior_
    assert not np.shares_memory(fitted, priors)
    priors[0] = 0.9
    assert fitted[0] == 0.2


def test_lda_priors_not_summing_to_one_are_renormalised_with_a_warning(iris):
    X, y = iris
    with pytest.warns(UserWarning, match="The priors do not sum to 1. Renormalizing"):
        model = LinearDiscriminantAnalysis(priors=[0.5, 0.6, 0.9]).fit(X, y)
    np.testing.assert_allclose(model.priors_, np.array([0.5, 0.6, 0.9]) / 2.0, rtol=1e-15)
    with pytest.raises(ValueError, match="priors must be non-negative"):
        LinearDiscriminantAnalysis(priors=[0.5, -0.5, 1.0]).fit(X, y)


def test_singular_qda_covariance_raises_linalg_error():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X[:, 2] = X[:, 0] + X[:, 1]  # collinear in every class
    y = np.repeat([0, 1], 20)
    with pytest.raises(np.linalg.LinAlgError, match="covariance of class 0 is singular"):
        QuadraticDiscriminantAnalysis().fit(X, y)
    assert issubclass(np.linalg.LinAlgError, ValueError)


def test_messages_print_plain_values():
    model = GaussianNB().partial_fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1], classes=[0, 1])
    with pytest.raises(ValueError) as info:
        model.partial_fit([[1.0]], [0], classes=np.array([0, 2]))
    assert "np." not in str(info.value) and "[0, 2]" in str(info.value)
    assert repr(MultinomialNB(alpha=np.float64(0.5))) == (
        "MultinomialNB(alpha=0.5, class_prior=None, fit_prior=True, force_alpha=True, "
        "missing='error')"
    )


# -- online learning -------------------------------------------------------------------------
# Every registered model type with its defaults, and settings that change the statistics.
# A threshold inside iris's values where a model declares one.
ONLINE = [
    (name, {"binarize": 3.0} if "binarize" in spec_names(cls) else {})
    for name, cls in MODELS.items()
] + [
    ("lda", {"shrinkage": "auto"}),
    ("qda", {"reg_param": 0.1}),
    ("qda", {"shrinkage": "auto"}),
]


@pytest.mark.parametrize("name, params", ONLINE, ids=lambda v: str(v))
def test_150_single_rows_equal_one_fit(iris, name, params):
    X, y = iris
    if takes_counts(MODELS[name]):
        X = np.round(X).astype(int)  # whole-number counts and category codes
    model = MODELS[name](**params)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(y))
    online = sklearn.base.clone(model)
    for i in order:
        online.partial_fit(X[i : i + 1], y[i : i + 1], classes=[0, 1, 2])
    batch = sklearn.base.clone(model).fit(X, y)
    np.testing.assert_allclose(online.predict_proba(X), batch.predict_proba(X), atol=1e-12)
    np.testing.assert_allclose(
        online.predict_log_proba(X), batch.predict_log_proba(X), rtol=1e-10, atol=1e-12
    )


@pytest.mark.parametrize(
    "model", [GaussianNB(), LinearDiscriminantAnalysis(), QuadraticDiscriminantAnalysis()], ids=repr
)
def test_an_undetermined_model_accumulates_and_refuses_only_at_predict(iris, model):
    X, y = iris
    model.partial_fit(X[:1], y[:1], classes=[0, 1, 2])  # one row: no spread yet
    with pytest.raises(
        UndeterminedError, match="cannot score yet: .*add more rows with partial_fit"
    ):
        model.predict(X[:1])
    with pytest.raises(ValueError, match="cannot score yet"):
        model.predict_proba(X[:1])
    for i in range(1, 150, 7):
        model.partial_fit(X[i : i + 7], y[i : i + 7])
    batch = type(model)().fit(X, y)
    np.testing.assert_allclose(model.predict_proba(X), batch.predict_proba(X), atol=1e-12)


def test_fit_still_refuses_at_once():
    with pytest.raises(ValueError, match="one sample is not enough"):
        GaussianNB().fit([[1.0, 2.0]], [0])


def test_models_learnt_online_merge_before_they_can_score(iris):
    X, y = iris
    a = QuadraticDiscriminantAnalysis().partial_fit(X[::2][:3], y[::2][:3], classes=[0, 1, 2])
    b = QuadraticDiscriminantAnalysis().partial_fit(X[1::2][:3], y[1::2][:3], classes=[0, 1, 2])
    a.merge(b)
    with pytest.raises(UndeterminedError, match="cannot score yet"):
        a.predict(X)
    a.partial_fit(X, y)
    whole = QuadraticDiscriminantAnalysis().fit(
        np.concatenate([X[::2][:3], X[1::2][:3], X]), np.concatenate([y[::2][:3], y[1::2][:3], y])
    )
    np.testing.assert_allclose(a.predict_proba(X), whole.predict_proba(X), atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(
    name=st.sampled_from(["gaussian", "multinomial", "lda", "qda"]),
    sizes=st.lists(st.integers(1, 4), min_size=1, max_size=60),
    seed=st.integers(0, 2**16),
)
def test_online_learning_in_chunks_of_a_few_rows_equals_one_fit(name, sizes, seed):
    X, y = datasets.load_iris(return_X_y=True)
    order = np.random.default_rng(seed).permutation(len(y))
    cuts = np.cumsum(sizes)
    cuts = cuts[cuts < len(y)]
    model = MODELS[name]()
    for rows in np.split(order, cuts):
        model.partial_fit(X[rows], y[rows], classes=[0, 1, 2])
    batch = MODELS[name]().fit(X, y)
    np.testing.assert_allclose(model.predict_proba(X), batch.predict_proba(X), atol=1e-12)


def test_merge_refuses_models_of_other_columns_or_label_types(iris):
    # Statistics merge column by column in position: DataFrames with other
    # column names (or their own in another order) would mix the columns.
    import pandas as pd

    X, y = iris
    a = GaussianNB().fit(pd.DataFrame(X, columns=list("abcd")), y)
    b = GaussianNB().fit(pd.DataFrame(X[:, ::-1], columns=list("dcba")), y)
    with pytest.raises(ValueError, match="cannot merge models fitted on other columns"):
        a.merge(b)
    same = GaussianNB().fit(pd.DataFrame(X, columns=list("abcd")), y)
    np.testing.assert_allclose(
        a.merge(same).predict_proba(X), GaussianNB().fit(np.r_[X, X], np.r_[y, y]).predict_proba(X),
        rtol=0, atol=1e-12,
    )  # fmt: skip
    # Numbers beside text would become text, and 1 and '1' two classes.
    numbers = GaussianNB().fit(X, y)
    text = GaussianNB().fit(X, np.array(["a", "b", "c"])[y])
    with pytest.raises(ValueError, match=r"labels of another type \(text\) than the classes"):
        numbers.merge(text)
    assert numbers.classes_.tolist() == [0, 1, 2]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_priors_by_label_are_refused_by_an_estimator_with_the_way_on(name, iris):
    # The command line and config files take {label: prior}; an estimator a
    # list in class order, and a table is refused in those words, not in
    # NumPy's (float() of a dict).
    cls = MODELS[name]
    prior = cls.prior_param
    if prior is None:
        pytest.skip(f"{name} takes no priors")
    X, y = iris
    Xm, params = fittable(cls, X, **{prior: {0: 0.2, 1: 0.3, 2: 0.5}})
    with pytest.raises(ValueError, match=rf"^{prior} is a table by class label"):
        cls(**params).fit(Xm, y)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_predict_refuses_a_row_whose_posterior_is_undefined(name, iris):
    # Values beyond what float64 holds give no class a finite joint
    # log-likelihood: predict_proba says NaN, and predict has no label to give
    # (argmax would name the first class, and score count it right).
    cls = MODELS[name]
    X, y = iris
    Xm, params = fittable(cls, X)
    model = cls(**params).fit(Xm, y)
    huge = Xm[:4].copy()
    huge[3] *= 1e200
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            proba = model.predict_proba(huge)
        except ValueError:
            pytest.skip(f"{name} refuses such values at its input check")
    if np.isfinite(proba[3]).all():
        pytest.skip(f"{name} scores such a row (its joint log-likelihood stays finite)")
    with pytest.raises(ValueError, match=r"^row 3 of X has no class with a finite joint"):
        model.predict(huge)
    assert model.predict(huge[:3]).tolist() == model.predict(Xm[:3]).tolist()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_dropped_row_is_not_checked_for_unseen_categories(name):
    # Under missing="drop" a row with a missing cell gets no score whatever
    # its other cells hold: a category unseen in training there is no error.
    cls = MODELS[name]
    if "drop" not in next((s.options for s in cls.hyperparameters if s.name == "missing"), ()):
        pytest.skip(f"{name} has no missing='drop'")
    codes = np.array([[0, 0], [1, 0], [0, 1], [1, 1], [0, 0], [1, 1]], dtype=float)
    y = np.array([0, 0, 1, 1, 0, 1])
    Xm, params = fittable(cls, codes, missing="drop", reg_param=0.5)
    model = cls(**params).fit(Xm, y)
    rows = np.vstack([Xm[:2], Xm[2] * 0 + 2])  # every cell 2: unseen where categorical
    rows[2, 1] = np.nan
    with np.errstate(all="ignore"):
        proba = model.predict_proba(rows)
    assert np.isnan(proba[2]).all() and np.isfinite(proba[:2]).all()
    np.testing.assert_allclose(proba[:2], model.predict_proba(Xm[:2]), rtol=0, atol=1e-15)
