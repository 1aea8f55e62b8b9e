"""The core estimators: worked examples, independent densities, chunked fits, extreme scales."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from nbcli.models import (
    MODELS,
    BernoulliNB,
    GaussianNB,
    LinearDiscriminantAnalysis,
    MultinomialNB,
    NotFittedError,
    QuadraticDiscriminantAnalysis,
)
from tests.declared import column_kinds, of_kind

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical


def test_seed_000_one_dimensional_posterior():
    # Priors 0.6/0.4, class means 2 and 5, variances 1 and 1.5, query x = 3.5.
    # Class 0 sample {1, 3}: mean 2, population variance 1; class 1 sample
    # {5 - sqrt(1.5), 5 + sqrt(1.5)}: mean 5, variance 1.5.
    s = np.sqrt(1.5)
    X = np.array([[1.0], [3.0], [5.0 - s], [5.0 + s]])
    y = np.array([0, 0, 1, 1])
    model = GaussianNB(priors=[0.6, 0.4], var_smoothing=0.0).fit(X, y)
    lik0 = np.exp(-(1.5**2) / 2) / np.sqrt(2 * np.pi)
    lik1 = np.exp(-(1.5**2) / 3) / np.sqrt(2 * np.pi * 1.5)
    assert lik0 == pytest.approx(0.12952, abs=5e-6)
    assert lik1 == pytest.approx(0.15387, abs=5e-6)
    post = model.predict_proba([[3.5]])[0]
    expected0 = 0.6 * lik0 / (0.6 * lik0 + 0.4 * lik1)
    assert post[0] == pytest.approx(expected0, rel=1e-12)
    assert post[0] == pytest.approx(0.55804, abs=5e-6)
    assert model.predict([[3.5]])[0] == 0


def test_seed_001_spam_counts():
    # free, money, meeting, other words; totals 50 (spam) and 100 (ham).
    X = np.array([[8, 6, 1, 35], [1, 2, 10, 87]], dtype=float)
    y = np.array(["spam", "ham"])
    model = MultinomialNB(alpha=0.0, class_prior=[0.6, 0.4]).fit(X, y)  # classes: ham, spam
    assert model.classes_.tolist() == ["ham", "spam"]
    p = np.exp(model.feature_log_prob_)
    assert p[1, 0] == pytest.approx(0.16, rel=1e-8)  # P(free | spam) = 8/50
    assert p[1, 1] == pytest.approx(0.12, rel=1e-8)
    assert p[0, 0] == pytest.approx(0.01, rel=1e-8)
    assert p[0, 1] == pytest.approx(0.02, rel=1e-8)
    joint = np.exp(model.joint_log_likelihood([[1, 1, 0, 0]])[0])
    assert joint[1] == pytest.approx(0.00768, rel=1e-8)  # 0.4 * 0.16 * 0.12
    assert joint[0] == pytest.approx(0.00012, rel=1e-8)  # 0.6 * 0.01 * 0.02
    post = model.predict_proba([[1, 1, 0, 0]])[0]
    assert post[1] == pytest.approx(0.00768 / (0.00768 + 0.00012), rel=1e-8)
    assert model.predict([[1, 1, 0, 0]])[0] == "spam"


def test_seed_001_laplace_smoothing_example():
    # 'free' 5 times in 200 spam words, vocabulary 10,000, alpha 1: 6 / 10,200.
    counts = np.zeros((2, 10_000))
    counts[0, 0] = 5
    counts[0, 1] = 195
    counts[1, 2] = 100
    model = MultinomialNB(alpha=1.0).fit(counts, ["spam", "ham"])
    p = np.exp(model.feature_log_prob_[model.classes_.tolist().index("spam")])
    assert p[0] == pytest.approx(6 / 10_200, rel=1e-12)
    assert p[5] == pytest.approx(1 / 10_200, rel=1e-12)


def test_gaussian_joint_log_likelihood_equals_scipy_density():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5)) * [1, 10, 0.1, 1e3, 1] + [0, 5, -3, 1e4, 2]
    y = rng.integers(0, 3, 60)
    m = GaussianNB().fit(X, y)
    Xq = rng.normal(size=(7, 5)) * [1, 10, 0.1, 1e3, 1] + [0, 5, -3, 1e4, 2]
    expected = np.stack(
        [
            np.log(m.class_prior_[k])
            + stats.norm.logpdf(Xq, m.theta_[k], np.sqrt(m.var_[k])).sum(1)
            for k in range(3)
        ],
        axis=1,
    )
    np.testing.assert_allclose(m.joint_log_likelihood(Xq), expected, rtol=1e-12, atol=1e-10)


def test_qda_joint_log_likelihood_equals_scipy_density():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(4, 4))
    X = rng.normal(size=(300, 4)) @ A + 3.0
    y = rng.integers(0, 3, 300)
    m = QuadraticDiscriminantAnalysis(reg_param=0.1).fit(X, y)
    Xq = rng.normal(size=(9, 4)) @ A
    expected = np.stack(
        [
            np.log(m.priors_[k])
            + stats.multivariate_normal.logpdf(Xq, m.means_[k], m.covariance_[k])
            for k in range(3)
        ],
        axis=1,
    )
    # A log density near zero is held to the scores' magnitude, not its own.
    np.testing.assert_allclose(
        m.joint_log_likelihood(Xq), expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max()
    )


def test_lda_posterior_equals_shared_covariance_bayes_rule():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3)) @ rng.normal(size=(3, 3))
    y = rng.integers(0, 2, 200)
    X[y == 1] += 1.0
    m = LinearDiscriminantAnalysis().fit(X, y)
    pooled = sum(np.cov(X[y == k].T, bias=True) * (y == k).sum() for k in (0, 1)) / 200
    np.testing.assert_allclose(m.covariance_, pooled, rtol=1e-12)
    logpdf = np.stack(
        [
            np.log(m.priors_[k]) + stats.multivariate_normal.logpdf(X[:5], m.means_[k], pooled)
            for k in (0, 1)
        ],
        axis=1,
    )
    post = np.exp(logpdf - np.logaddexp(logpdf[:, :1], logpdf[:, 1:]))
    np.testing.assert_allclose(m.predict_proba(X[:5]), post, rtol=1e-10)


def test_lda_constant_features_do_not_change_predictions():
    # A singular covariance (constant columns, like digits' border pixels) is
    # handled by leaving those directions out, not by a fudge.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 3))
    y = rng.integers(0, 3, 150)
    X[y == 2] += 2
    padded = np.hstack([np.zeros((150, 2)), X, np.full((150, 1), 7.0)])
    a = LinearDiscriminantAnalysis().fit(X, y)
    b = LinearDiscriminantAnalysis().fit(padded, y)
    assert b.rank_ == 3
    Xq = rng.normal(size=(20, 3))
    Pq = np.hstack([np.zeros((20, 2)), Xq, np.full((20, 1), 7.0)])
    np.testing.assert_allclose(b.predict_proba(Pq), a.predict_proba(Xq), rtol=1e-10)


def test_qda_needs_reg_param_when_class_smaller_than_features():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(23, 5))
    y = np.array([0] * 20 + [1] * 3)
    with pytest.raises(ValueError, match=r"class 1 has 3 samples for 5 features.*reg_param > 0"):
        QuadraticDiscriminantAnalysis().fit(X, y)
    m = QuadraticDiscriminantAnalysis(reg_param=0.1).fit(X, y)
    # With reg_param every direction counts: the regularised covariance of the
    # small class is full rank.
    assert np.linalg.matrix_rank(m.covariance_[1]) == 5
    assert np.all(np.isfinite(m.predict_log_proba(X)))


def test_qda_singular_class_covariance_is_named():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    y = np.repeat([0, 1], 20)
    X[y == 1, 2] = 4.0  # constant within class 1
    with pytest.raises(ValueError, match=r"covariance of class 1 is singular"):
        QuadraticDiscriminantAnalysis().fit(X, y)


@pytest.mark.parametrize("d", [784, 10_000])
def test_many_features_give_finite_normalised_posteriors(d):
    rng = np.random.default_rng(6)
    counts = rng.poisson(0.3, size=(40, d)).astype(float)
    y = np.repeat([0, 1, 2, 3], 10)
    for model, X in [
        (MultinomialNB(), counts),
        (BernoulliNB(), (counts > 0).astype(float)),
        (GaussianNB(), counts),
    ]:
        logp = model.fit(X, y).predict_log_proba(X)
        assert np.all(np.isfinite(logp))
        # In linear space these joint likelihoods underflow to exactly 0.
        assert np.all(np.exp(model.joint_log_likelihood(X)) == 0.0) or d == 784
        np.testing.assert_allclose(np.exp(logp).sum(1), 1.0, rtol=1e-12)


@pytest.mark.parametrize(
    "name, params", [(name, {}) for name in MODELS] + [("lda", {"shrinkage": "auto"})]
)
def test_chunked_fit_equals_single_fit(name, params):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 4)) + 1e9  # mean 1e9, spread 1
    kind = column_kinds(MODELS[name], 4)[0]
    if kind != "gaussian":
        # Counts, indicators or codes: a far-off mean tests real-valued columns
        # only (a count of 1e9 makes terms of 2e10 in every class).
        X = of_kind(rng.poisson(2.0, size=(400, 4)) - 0.5, kind)
    y = rng.choice(np.array(["a", "b", "c"]), 400)
    whole = MODELS[name](**params).fit(X, y)
    order = rng.permutation(400)
    cuts = np.sort(rng.choice(np.arange(1, 400), 9, replace=False))
    pieces = np.split(order, cuts)
    chunked = MODELS[name](**params)
    for rows in pieces:
        chunked.partial_fit(X[rows], y[rows], classes=np.unique(y))
    for field in [
        "count",
        "class_count",
        "feature_count",
        "m2",
        "scatter",
        "third",
        "fourth",
        "within",
        "mean",
    ]:
        a = getattr(whole.stats_, field, None)
        if a is None:
            continue
        b = getattr(chunked.stats_, field)
        scale = np.abs(a).max()
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12 * scale, err_msg=field)
    for attr in (
        "theta_",
        "var_",
        "feature_log_prob_",
        "coef_",
        "covariance_",
        "log_det_",
        "class_prior_",
        "priors_",
    ):
        if hasattr(whole, attr):
            got, want = getattr(chunked, attr), getattr(whole, attr)
            if isinstance(want, list):  # categorical: one array per feature
                got, want = np.hstack(got), np.hstack(want)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300, err_msg=attr)
    np.testing.assert_allclose(
        chunked.predict_proba(X[:50]), whole.predict_proba(X[:50]), rtol=1e-11, atol=1e-14
    )


def test_variance_is_exact_with_a_large_mean():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(1000, 1)) + 1e9
    y = np.zeros(1000, dtype=int)
    y[::2] = 1
    m = GaussianNB(var_smoothing=0.0)
    for rows in np.array_split(np.arange(1000), 13):
        m.partial_fit(X[rows], y[rows], classes=[0, 1])
    for k in (0, 1):
        exact = np.var(X[y == k] - 1e9)  # subtracting 1e9 is exact here
        assert m.var_[k, 0] == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize("scale", [1e150, 1e-150])
@pytest.mark.parametrize("name", ["gaussian", "lda", "qda"])
def test_extreme_magnitudes_give_correct_finite_posteriors(name, scale):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(300, 3))
    y = rng.integers(0, 2, 300)
    X[y == 1] += 1.5
    ref = MODELS[name]().fit(X, y).predict_proba(X)
    got = MODELS[name]().fit(X * scale, y).predict_proba(X * scale)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)


def test_feature_constant_in_a_class_stays_finite_for_gaussian():
    X = np.array([[0.0, 1.0], [0.0, 2.0], [0.0, 3.0], [1.0, 1.5], [2.0, 2.5], [3.0, 0.5]])
    y = np.array([0, 0, 0, 1, 1, 1])
    logp = GaussianNB().fit(X, y).predict_log_proba(X)
    assert np.all(np.isfinite(logp))
    assert GaussianNB().fit(X, y).predict(X).tolist() == y.tolist()


def test_fit_returns_self_and_rejects_bad_input():
    X = np.eye(4)
    y = [0, 0, 1, 1]
    m = GaussianNB()
    assert m.fit(X, y) is m
    with pytest.raises(NotFittedError):
        GaussianNB().predict(X)
    with pytest.raises(ValueError, match="NaN"):
        GaussianNB().fit(np.array([[np.nan, 1.0], [1.0, 2.0]]), [0, 1])
    with pytest.raises(ValueError, match="expecting 4 features"):
        m.predict(np.ones((2, 3)))
    with pytest.raises(ValueError, match="negative value -1 at row 1, column 0"):
        MultinomialNB().fit([[1.0], [-1.0]], [0, 1])
    with pytest.raises(ValueError, match="value 2 at row 0, column 1 is not 0 or 1"):
        BernoulliNB(binarize=None).fit([[0.0, 2.0], [1.0, 0.0]], [0, 1])
    with pytest.raises(ValueError, match="Unknown label type"):
        GaussianNB().fit(X, [0.5, 1.5, 0.5, 1.5])
    with pytest.raises(ValueError, match="shrinkage"):
        LinearDiscriminantAnalysis(shrinkage=2.0).fit(X, y)


def test_partial_fit_with_fixed_classes_refuses_new_labels():
    m = GaussianNB().partial_fit(np.ones((2, 1)) * [[0], [1]], [0, 1], classes=[0, 1])
    with pytest.raises(ValueError, match=r"labels \[5\] are not in classes"):
        m.partial_fit([[2.0]], [5])


def test_merge_equals_fit_on_union():
    rng = np.random.default_rng(10)
    X = rng.normal(size=(100, 3))
    y = rng.integers(0, 3, 100)
    a = QuadraticDiscriminantAnalysis(reg_param=0.1).fit(X[:60], y[:60])
    b = QuadraticDiscriminantAnalysis(reg_param=0.1).fit(X[60:], y[60:])
    whole = QuadraticDiscriminantAnalysis(reg_param=0.1).fit(X, y)
    np.testing.assert_allclose(a.merge(b).predict_proba(X), whole.predict_proba(X), rtol=1e-10)


def test_partial_fit_needs_classes_on_the_first_call():
    m = MultinomialNB()
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        m.partial_fit([[1.0, 0.0]], ["b"])
    assert not hasattr(m, "stats_")


def test_new_class_in_a_later_chunk_is_added_in_order():
    chunks = [([[1.0, 0.0], [0.0, 1.0]], ["b", "c"]), ([[2.0, 2.0]], ["a"])]
    m = MultinomialNB().fit_chunks(chunks)
    whole = MultinomialNB().fit([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]], ["b", "c", "a"])
    assert m.classes_.tolist() == ["a", "b", "c"]
    np.testing.assert_allclose(m.feature_log_prob_, whole.feature_log_prob_, rtol=1e-14)


def test_lda_keeps_one_pooled_scatter_unless_ledoit_wolf():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(120, 6))
    y = rng.integers(0, 4, 120)
    plain = LinearDiscriminantAnalysis().fit(X, y)
    assert set(plain.stats_.arrays()) == {"count", "shift", "offset", "within"}
    assert plain.stats_.within.shape == (6, 6)
    per_class = LinearDiscriminantAnalysis(shrinkage="auto").fit(X, y)
    assert per_class.stats_.scatter.shape == (4, 6, 6)
    # Both pool the same within-class scatter.
    np.testing.assert_allclose(
        plain.stats_.within, per_class.stats_.scatter.sum(axis=0), rtol=1e-12
    )


@pytest.mark.parametrize(
    "model, message",
    [
        (MultinomialNB(alpha=1e308), r"alpha=1e\+308 is too large"),
        (BernoulliNB(alpha=1e308, binarize=0.5), r"alpha=1e\+308 is too large"),
        (GaussianNB(var_smoothing=1e308), r"var_smoothing=1e\+308 is too large"),
        (LinearDiscriminantAnalysis(tol=2.0), r"tol must be a number in \[0, 1\)"),
    ],
)
def test_hyperparameters_that_overflow_are_refused(model, message):
    X = np.abs(np.random.default_rng(12).normal(size=(20, 3))) * 10
    with pytest.raises(ValueError, match=message):
        model.fit(X, [0, 1] * 10)


@settings(max_examples=60, deadline=None)
@given(
    classes=st.integers(1, 40),
    separation=st.sampled_from([0.0, 3.0, 1e6, 1e12]),
    weighted=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_class_moments_of_a_chunk_equal_the_two_pass_formula(classes, separation, weighted, seed):
    # Few or many classes (products or gathered rows), classes near the chunk's
    # first row or far from it against their spread (the fallback), with weights.
    from nbcli.models._stats import ClassMoments

    rng = np.random.default_rng(seed)
    n, d = 400, 3
    y = rng.integers(0, classes, n)
    X = rng.normal(size=(n, d)) + separation * y[:, None]
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    got = ClassMoments.from_data(np.asfortranarray(X), y, w, classes)
    by_rows = ClassMoments.from_data(np.ascontiguousarray(X), y, w, classes)
    np.testing.assert_allclose(by_rows.mean, got.mean, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(by_rows.m2, got.m2, rtol=1e-11, atol=1e-300)
    for k in range(classes):
        rows = y == k
        wk = np.ones(rows.sum()) if w is None else w[rows]
        if not rows.any():
            assert got.count[k] == 0 and np.all(got.m2[k] == 0)
            continue
        # The two-pass formula about one of the class's rows: subtracting a
        # nearby value is exact, so the reference keeps every digit at 1e12.
        shift = X[rows][0]
        centred = X[rows] - shift
        offset = np.average(centred, axis=0, weights=wk)
        m2 = (wk[:, None] * (centred - offset) ** 2).sum(axis=0)
        assert got.count[k] == pytest.approx(wk.sum(), rel=1e-14)
        # The mean, a sum of two parts near ``shift``, is good to its last bits.
        close = 4 * np.spacing(np.abs(shift).max()) + 1e-12
        np.testing.assert_allclose(got.mean[k] - shift, offset, rtol=1e-9, atol=close)
        np.testing.assert_allclose(got.m2[k], m2, rtol=1e-11, atol=0)


@pytest.mark.parametrize("name", ["gaussian", "lda", "qda", "mixed"])
def test_rows_whose_classes_cannot_be_told_apart_get_nan_not_a_tie(name):
    # Equal class spreads: the exact log-odds of the second class is linear in
    # x, but 1e17 spreads out both scores are about -1e34 and their difference
    # is below their rounding. A row still resolved (1e6 out) keeps its answer.
    X = np.array([[1.0, 2.0], [2.0, 3.0], [3.0, 1.0], [5.0, 6.0], [6.0, 7.0], [7.0, 5.0]])
    y = np.array([0, 0, 0, 1, 1, 1])
    model = MODELS[name]().fit(X, y)
    far = np.array([[1e17, 2.0], [1e6, 2.0], [4.0, 4.0]])
    proba = model.predict_proba(far)
    if name == "lda":
        # The discriminant is linear in x (no squared distances): resolved.
        np.testing.assert_array_equal(proba[0], [0.0, 1.0])
        return
    assert np.isnan(proba[0]).all()
    assert proba[1, 1] == pytest.approx(1.0) and np.isfinite(proba[2]).all()
    assert np.isnan(model.predict_log_proba(far)[0]).all()


def test_lda_collinearity_warning_lists_ten_features_and_counts_the_rest():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 50)), rng.integers(0, 2, 30)
    with pytest.warns(UserWarning, match=r"\(along features x0, x1, .*, x9 and 40 more\)"):
        LinearDiscriminantAnalysis().fit(X, y)
