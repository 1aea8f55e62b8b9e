"""ComplementNB and CategoricalNB: parity with scikit-learn, chunks, missing and unseen values.

Parity is ``predict_proba`` to 1e-8 absolute (observed: 1e-13 or smaller)
through the estimators; chunked and merged fits equal one fit to 1e-12.
Differences on purpose: alpha below 1e-10 is raised to 1e-10 (scikit-learn
keeps it with ``force_alpha=True``), and CategoricalNB refuses a code that
is not a non-negative integer where scikit-learn truncates it.
"""

import functools

import numpy as np
import pandas as pd
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn import datasets  # noqa: E402
from sklearn import naive_bayes as sk_nb  # noqa: E402
from sklearn.preprocessing import KBinsDiscretizer  # noqa: E402

from nbcli.models import CategoricalNB, ComplementNB  # noqa: E402
from nbcli.models._validation import DataValueError  # noqa: E402

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical

TOL = 1e-8


def _split(X, y, seed=0):
    idx = np.random.default_rng(seed).permutation(len(y))
    n = int(0.7 * len(y))
    return X[idx[:n]], y[idx[:n]], X[idx[n:]], y[idx[n:]]


def _digits():
    return _split(*datasets.load_digits(return_X_y=True))


def _discretised(name, n_bins=5):
    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    codes = KBinsDiscretizer(
        n_bins=n_bins,
        encode="ordinal",
        strategy="quantile",
        quantile_method="averaged_inverted_cdf",
    ).fit_transform(X)
    return _split(codes, y)


# -- ComplementNB --------------------------------------------------------------------------


@pytest.mark.parametrize("norm", [False, True])
@pytest.mark.parametrize("alpha", [1.0, 0.01, 3.5])
def test_complement_equals_sklearn_on_digits(norm, alpha):
    Xtr, ytr, Xte, _ = _digits()
    ours = ComplementNB(alpha=alpha, norm=norm).fit(Xtr, ytr)
    theirs = sk_nb.ComplementNB(alpha=alpha, norm=norm).fit(Xtr, ytr)
    np.testing.assert_allclose(ours.predict_proba(Xte), theirs.predict_proba(Xte), rtol=0, atol=TOL)
    np.testing.assert_allclose(ours.feature_log_prob_, theirs.feature_log_prob_, rtol=1e-12)
    assert np.array_equal(ours.predict(Xte), theirs.predict(Xte))
    # A wrong program that added the prior (as MultinomialNB does) would move these.
    np.testing.assert_allclose(
        ours.joint_log_likelihood(Xte), theirs.predict_joint_log_proba(Xte), rtol=1e-12
    )


def test_complement_ignores_prior_except_for_one_class():
    Xtr, ytr, Xte, _ = _digits()
    prior = np.full(10, 0.01)
    prior[3] = 0.91
    ours = ComplementNB(class_prior=prior).fit(Xtr, ytr)
    theirs = sk_nb.ComplementNB(class_prior=prior).fit(Xtr, ytr)
    np.testing.assert_allclose(ours.predict_proba(Xte), theirs.predict_proba(Xte), rtol=0, atol=TOL)
    np.testing.assert_allclose(
        ours.predict_proba(Xte), ComplementNB().fit(Xtr, ytr).predict_proba(Xte), atol=1e-15
    )
    one = ComplementNB().fit(Xtr[:5], np.zeros(5, dtype=int))
    assert np.array_equal(one.predict_proba(Xte[:3]), np.ones((3, 1)))
    np.testing.assert_allclose(
        one.joint_log_likelihood(Xte),
        sk_nb.ComplementNB().fit(Xtr[:5], np.zeros(5, dtype=int)).predict_joint_log_proba(Xte),
        rtol=1e-12,
    )


def test_complement_sample_weight_equals_sklearn_and_repeated_rows():
    Xtr, ytr, Xte, _ = _digits()
    w = np.random.default_rng(1).integers(0, 4, len(ytr)).astype(float)
    ours = ComplementNB().fit(Xtr, ytr, sample_weight=w)
    theirs = sk_nb.ComplementNB().fit(Xtr, ytr, sample_weight=w)
    np.testing.assert_allclose(ours.predict_proba(Xte), theirs.predict_proba(Xte), rtol=0, atol=TOL)
    rep = np.repeat(np.arange(len(ytr)), w.astype(int))
    np.testing.assert_allclose(
        ComplementNB().fit(Xtr[rep], ytr[rep]).predict_proba(Xte),
        ours.predict_proba(Xte),
        rtol=0,
        atol=1e-12,
    )


def test_complement_chunks_and_merge_equal_one_fit():
    Xtr, ytr, Xte, _ = _digits()
    whole = ComplementNB(norm=True).fit(Xtr, ytr).predict_proba(Xte)
    bounds = [0, 7, 300, 301, len(ytr)]
    chunks = [(Xtr[a:b], ytr[a:b]) for a, b in zip(bounds, bounds[1:])]
    chunked = ComplementNB(norm=True).fit_chunks(chunks).predict_proba(Xte)
    np.testing.assert_allclose(chunked, whole, rtol=0, atol=1e-12)
    a = ComplementNB(norm=True).fit(Xtr[:400], ytr[:400])
    b = ComplementNB(norm=True).fit(Xtr[400:], ytr[400:])
    np.testing.assert_allclose(a.merge(b).predict_proba(Xte), whole, rtol=0, atol=1e-12)


def test_complement_refuses_negative_counts_and_bad_parameters():
    with pytest.raises(DataValueError, match="negative value -1 at row 1, column 0"):
        ComplementNB().fit([[1.0], [-1.0]], [0, 1])
    with pytest.raises(ValueError, match="alpha"):
        ComplementNB(alpha=-1).fit([[1.0], [2.0]], [0, 1])
    with pytest.raises(ValueError, match="norm must be true or false"):
        ComplementNB(norm="yes").fit([[1.0], [2.0]], [0, 1])


# -- CategoricalNB -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer"])
@pytest.mark.parametrize("alpha", [1.0, 0.3])
def test_categorical_equals_sklearn_on_discretised_data(name, alpha):
    Xtr, ytr, Xte, _ = _discretised(name)
    ours = CategoricalNB(alpha=alpha).fit(Xtr, ytr)
    theirs = sk_nb.CategoricalNB(alpha=alpha).fit(Xtr, ytr)
    np.testing.assert_allclose(ours.predict_proba(Xte), theirs.predict_proba(Xte), rtol=0, atol=TOL)
    np.testing.assert_allclose(
        ours.joint_log_likelihood(Xte), theirs.predict_joint_log_proba(Xte), rtol=1e-12
    )
    assert np.array_equal(ours.n_categories_, theirs.n_categories_)
    for a, b in zip(ours.feature_log_prob_, theirs.feature_log_prob_):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_categorical_equals_sklearn_on_digits_with_min_categories_and_priors():
    Xtr, ytr, Xte, _ = _digits()
    Xte = np.minimum(Xte, Xtr.max(axis=0))  # codes scikit-learn can index
    for params in (
        {},
        {"min_categories": 20},
        {"min_categories": np.arange(64) % 25},
        {"fit_prior": False},
        {"class_prior": np.full(10, 0.1)},
    ):
        ours = CategoricalNB(**params).fit(Xtr, ytr)
        theirs = sk_nb.CategoricalNB(**params).fit(Xtr.astype(int), ytr)
        np.testing.assert_allclose(
            ours.predict_proba(Xte), theirs.predict_proba(Xte.astype(int)), rtol=0, atol=TOL
        )
        assert np.array_equal(ours.n_categories_, theirs.n_categories_)


def test_categorical_sample_weight_equals_sklearn():
    Xtr, ytr, Xte, _ = _discretised("wine", n_bins=4)
    w = np.random.default_rng(2).uniform(0, 3, len(ytr))
    ours = CategoricalNB().fit(Xtr, ytr, sample_weight=w)
    theirs = sk_nb.CategoricalNB().fit(Xtr, ytr, sample_weight=w)
    np.testing.assert_allclose(ours.predict_proba(Xte), theirs.predict_proba(Xte), rtol=0, atol=TOL)


def test_categorical_chunks_with_growing_codes_equal_one_fit_and_sklearn_partial_fit():
    X = np.array([[0, 0], [1, 0], [0, 1], [2, 3], [4, 1], [1, 2], [0, 0], [3, 5]], dtype=float)
    y = np.array([0, 1, 0, 1, 1, 0, 0, 1])
    whole = CategoricalNB().fit(X, y)
    ours = CategoricalNB().partial_fit(X[:3], y[:3], classes=[0, 1])
    theirs = sk_nb.CategoricalNB().partial_fit(X[:3], y[:3], classes=[0, 1])
    for lo, hi in [(3, 5), (5, 8)]:  # each later chunk shows larger codes
        ours.partial_fit(X[lo:hi], y[lo:hi])
        theirs.partial_fit(X[lo:hi], y[lo:hi])
    assert np.array_equal(ours.n_categories_, [5, 6])
    np.testing.assert_allclose(ours.predict_proba(X), whole.predict_proba(X), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=0, atol=TOL)
    for a, b in zip(ours.category_count_, whole.category_count_):
        assert np.array_equal(a, b)


def test_categorical_fit_chunks_and_merge_with_missing_equal_one_fit():
    Xtr, ytr, Xte, _ = _discretised("breast_cancer", n_bins=6)
    rng = np.random.default_rng(3)
    Xtr = Xtr.copy()
    Xtr[rng.random(Xtr.shape) < 0.15] = np.nan
    Xte = Xte.copy()
    Xte[rng.random(Xte.shape) < 0.15] = np.nan
    whole = CategoricalNB(missing="ignore").fit(Xtr, ytr)
    bounds = [0, 3, 50, 51, 200, len(ytr)]
    chunks = [(Xtr[a:b], ytr[a:b]) for a, b in zip(bounds, bounds[1:])]
    chunked = CategoricalNB(missing="ignore").fit_chunks(chunks)
    np.testing.assert_allclose(
        chunked.predict_proba(Xte), whole.predict_proba(Xte), rtol=0, atol=1e-12
    )
    a = CategoricalNB(missing="ignore").fit(Xtr[:100], ytr[:100])
    b = CategoricalNB(missing="ignore").fit(Xtr[100:], ytr[100:])
    np.testing.assert_allclose(
        a.merge(b).predict_proba(Xte), whole.predict_proba(Xte), rtol=0, atol=1e-12
    )


def test_categorical_missing_ignore_is_the_documented_formula():
    X = np.array([[0, 1], [np.nan, 1], [1, 0], [1, np.nan], [0, 0], [2, 1]])
    y = np.array(["a", "a", "a", "b", "b", "b"])
    model = CategoricalNB(missing="ignore", alpha=0.5).fit(X, y)
    # Feature 0: K = 3; class a observes codes 0, 1 (N_a0 = 2), class b 1, 0, 2 (N_b0 = 3).
    p0 = {"a": np.array([1.5, 1.5, 0.5]) / 3.5, "b": np.array([1.5, 1.5, 1.5]) / 4.5}
    # Feature 1: K = 2; class a: 1, 1, 0 (N = 3); class b: 0, 1 (N = 2).
    p1 = {"a": np.array([1.5, 2.5]) / 4.0, "b": np.array([1.5, 1.5]) / 3.0}
    rows = np.array([[2, 0], [np.nan, 1], [1, np.nan], [np.nan, np.nan]])
    expected = []
    for x in rows:
        scores = []
        for c in ("a", "b"):
            s = np.log(0.5)
            if not np.isnan(x[0]):
                s += np.log(p0[c][int(x[0])])
            if not np.isnan(x[1]):
                s += np.log(p1[c][int(x[1])])
            scores.append(s)
        scores = np.exp(scores)
        expected.append(scores / scores.sum())
    np.testing.assert_allclose(model.predict_proba(rows), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.predict_proba(rows[3:]), [[0.5, 0.5]], atol=1e-15)


def test_categorical_missing_error_is_the_default_and_names_the_cell():
    X = np.array([[0, 1], [1, np.nan], [1, 0]])
    with pytest.raises(DataValueError, match="NaN at row 1, column 1") as err:
        CategoricalNB().fit(X, [0, 1, 1])
    assert (err.value.row, err.value.column) == (1, 1)
    model = CategoricalNB().fit(np.nan_to_num(X), [0, 1, 1])
    with pytest.raises(DataValueError, match="NaN at row 1, column 1"):
        model.predict(X)


def test_infinity_is_never_missing():
    X = np.array([[0, 1], [1, np.inf], [1, 0]])
    with pytest.raises(DataValueError, match="infinity at row 1, column 1"):
        CategoricalNB(missing="ignore").fit(X, [0, 1, 1])
    model = CategoricalNB(missing="ignore").fit(np.array([[0, 1], [1, 1], [1, 0]]), [0, 1, 1])
    with pytest.raises(DataValueError, match="infinity at row 0, column 0"):
        model.predict([[np.inf, np.nan]])


def test_categorical_unseen_category_error_names_column_and_value_and_ignore_drops_it():
    X = pd.DataFrame({"colour": [0.0, 1, 1, 0], "size": [0.0, 1, 2, 2]})
    y = [0, 0, 1, 1]
    model = CategoricalNB().fit(X, y)
    test = pd.DataFrame({"colour": [1.0, 0], "size": [1.0, 7]})
    with pytest.raises(DataValueError, match=r"unseen category 7 at row 1, column 1 \('size'\)"):
        model.predict(test)
    ignoring = CategoricalNB(unseen="ignore").fit(X, y)
    colour_only = CategoricalNB().fit(X[["colour"]], y)
    np.testing.assert_allclose(
        ignoring.predict_proba(test)[1], colour_only.predict_proba(test[["colour"]])[1], atol=1e-15
    )
    np.testing.assert_allclose(
        ignoring.predict_proba(test)[0], model.predict_proba(test.iloc[:1])[0], atol=1e-15
    )


@pytest.mark.parametrize("bad, text", [(-1.0, "-1"), (2.5, "2.5"), (float(1 << 24), "16777216")])
def test_categorical_refuses_values_that_are_not_codes(bad, text):
    with pytest.raises(
        DataValueError, match=f"value {text} is not a category code.*row 1, column 0"
    ):
        CategoricalNB().fit([[0.0], [bad]], [0, 1])
    model = CategoricalNB(unseen="ignore").fit([[0.0], [1.0]], [0, 1])
    with pytest.raises(DataValueError, match="is not a category code"):
        model.predict([[bad]])


def test_categorical_bad_hyperparameters():
    X, y = [[0.0], [1.0]], [0, 1]
    for params, text in [
        ({"missing": "skip"}, "missing must be one of 'error', 'ignore', 'drop'"),
        ({"unseen": "skip"}, "unseen must be one of"),
        ({"min_categories": 2.5}, "min_categories must be an integer"),
        ({"min_categories": -1}, "min_categories must be an integer >= 0"),
        ({"min_categories": [2, 3]}, "min_categories has 2 values but there are 1 features"),
        ({"alpha": -0.1}, "alpha must be a finite number >= 0"),
    ]:
        with pytest.raises(ValueError, match=text):
            CategoricalNB(**params).fit(X, y)


def test_categorical_tags_say_whether_nan_is_allowed():
    from sklearn.utils import get_tags

    assert get_tags(CategoricalNB()).input_tags.allow_nan is False
    assert get_tags(CategoricalNB(missing="ignore")).input_tags.allow_nan is True
    assert get_tags(CategoricalNB()).input_tags.positive_only is True
    assert get_tags(ComplementNB()).input_tags.positive_only is True


def test_a_measurement_given_to_the_categorical_model_says_what_to_use():
    from nbcli.models import CategoricalNB, MixedNB

    X = np.array([[0.0, 1.5], [1.0, 2.25], [0.0, 3.0], [1.0, 0.5]])
    y = ["a", "b", "a", "b"]
    with pytest.raises(DataValueError, match="not categorical: use the mixed model"):
        CategoricalNB().fit(X, y)
    with pytest.raises(DataValueError, match=r"the type gaussian \(--column NAME=gaussian\)"):
        MixedNB(column_types=["categorical", "categorical"]).fit(X, y)


# -- scikit-learn's API: predict_joint_log_proba, force_alpha, one alpha per feature ----------


def _round_trip(model, tmp_path):
    from nbcli.io.modelfile import ModelFile, load_model, save_model

    names = [f"x{j}" for j in range(model.n_features_in_)]
    save_model(ModelFile(model=model, feature_names=names), tmp_path / "m.nbm")
    return load_model(tmp_path / "m.nbm").model


def test_predict_joint_log_proba_equals_sklearn():
    Xtr, ytr, Xte, _ = _digits()
    for ours, theirs in [
        (ComplementNB().fit(Xtr, ytr), sk_nb.ComplementNB().fit(Xtr, ytr)),
        (
            CategoricalNB(min_categories=17).fit(Xtr, ytr),
            sk_nb.CategoricalNB(min_categories=17).fit(Xtr, ytr),
        ),
    ]:
        jll = ours.predict_joint_log_proba(Xte)
        ref = theirs.predict_joint_log_proba(Xte)
        # Sums of about 64 log-probabilities: a few ulps of their magnitude.
        np.testing.assert_allclose(jll, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
        np.testing.assert_allclose(ours.predict_proba(Xte), theirs.predict_proba(Xte), atol=TOL)


@pytest.mark.parametrize("cls", ["ComplementNB", "CategoricalNB"])
def test_force_alpha_equals_sklearn(cls):
    Xtr, ytr, Xte, _ = _digits()
    # Pixel values 0..16 as codes: every one a category, seen in training or not.
    kw = {"min_categories": 17} if cls == "CategoricalNB" else {}
    ours_cls = functools.partial(
        {"ComplementNB": ComplementNB, "CategoricalNB": CategoricalNB}[cls], **kw
    )
    theirs_cls = functools.partial(getattr(sk_nb, cls), **kw)
    # Kept as given (1e-12 < the floor), as scikit-learn's default keeps it.
    kept = ours_cls(alpha=1e-12).fit(Xtr, ytr)
    floor = ours_cls(alpha=1e-10).fit(Xtr, ytr)
    np.testing.assert_allclose(
        kept.predict_proba(Xte), theirs_cls(alpha=1e-12).fit(Xtr, ytr).predict_proba(Xte), atol=TOL
    )
    assert np.abs(kept.predict_joint_log_proba(Xte) - floor.predict_joint_log_proba(Xte)).max() > 1
    # force_alpha=False raises it to the floor, with scikit-learn's warning.
    with pytest.warns(UserWarning, match="alpha too small will result in numeric errors"):
        raised = ours_cls(alpha=1e-12, force_alpha=False).fit(Xtr, ytr)
    with pytest.warns(UserWarning, match="alpha too small"):
        ref = theirs_cls(alpha=1e-12, force_alpha=False).fit(Xtr, ytr)
    np.testing.assert_allclose(raised.predict_proba(Xte), ref.predict_proba(Xte), atol=TOL)
    np.testing.assert_array_equal(raised.predict_proba(Xte), floor.predict_proba(Xte))


def test_complement_alpha_per_feature_equals_sklearn_and_survives_a_model_file(tmp_path):
    Xtr, ytr, Xte, _ = _digits()
    alpha = np.random.default_rng(3).uniform(0.01, 5, Xtr.shape[1])
    ours = ComplementNB(alpha=alpha, norm=True).fit(Xtr, ytr)
    theirs = sk_nb.ComplementNB(alpha=alpha, norm=True).fit(Xtr, ytr)
    np.testing.assert_allclose(ours.predict_proba(Xte), theirs.predict_proba(Xte), atol=TOL)
    np.testing.assert_allclose(ours.feature_log_prob_, theirs.feature_log_prob_, rtol=1e-12)
    # One number per feature is not one number: a wrong program using alpha[0] differs.
    scalar = ComplementNB(alpha=alpha[0], norm=True).fit(Xtr, ytr)
    assert np.abs(scalar.feature_log_prob_ - ours.feature_log_prob_).max() > 1e-3
    back = _round_trip(ours, tmp_path)
    np.testing.assert_array_equal(np.asarray(back.alpha), alpha)
    np.testing.assert_allclose(back.predict_proba(Xte), ours.predict_proba(Xte), rtol=0, atol=1e-15)
    a = ComplementNB(alpha=alpha).fit(Xtr[:300], ytr[:300])
    a.merge(ComplementNB(alpha=alpha).fit(Xtr[300:], ytr[300:]))
    np.testing.assert_allclose(
        a.predict_proba(Xte), ComplementNB(alpha=alpha).fit(Xtr, ytr).predict_proba(Xte), atol=1e-12
    )


def test_categorical_alpha_per_feature_is_each_features_own_sklearn_fit(tmp_path):
    # scikit-learn 1.9's CategoricalNB takes one alpha only; feature j of the
    # per-feature model must be feature j of its fit with alpha_j.
    Xtr, ytr, Xte, _ = _discretised("wine")
    alpha = np.linspace(0.05, 4.0, Xtr.shape[1])
    ours = CategoricalNB(alpha=alpha, min_categories=5).fit(Xtr, ytr)
    jll = np.zeros((len(Xte), len(ours.classes_)))
    for j, a in enumerate(alpha):
        ref = sk_nb.CategoricalNB(alpha=a, min_categories=5).fit(Xtr, ytr)
        np.testing.assert_allclose(ours.feature_log_prob_[j], ref.feature_log_prob_[j], rtol=1e-12)
        jll += ref.feature_log_prob_[j][:, Xte[:, j].astype(int)].T
    jll += ref.class_log_prior_
    expected = np.exp(jll - jll.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ours.predict_proba(Xte), expected, atol=TOL)
    back = _round_trip(ours, tmp_path)
    np.testing.assert_allclose(back.predict_proba(Xte), ours.predict_proba(Xte), rtol=0, atol=1e-15)
    chunked = CategoricalNB(alpha=alpha, min_categories=5).fit_chunks(
        [(Xtr[:40], ytr[:40]), (Xtr[40:], ytr[40:])]
    )
    np.testing.assert_allclose(chunked.predict_proba(Xte), ours.predict_proba(Xte), atol=1e-12)


def test_alpha_per_feature_must_give_one_non_negative_value_per_feature():
    X = np.array([[0.0, 1.0], [1.0, 0.0]])
    for cls in (ComplementNB, CategoricalNB):
        with pytest.raises(ValueError, match="should contains `n_features`"):
            cls(alpha=[1.0, 2.0, 3.0]).fit(X, [0, 1])
        with pytest.raises(ValueError, match="All values in alpha must be greater than 0"):
            cls(alpha=[1.0, -0.1]).fit(X, [0, 1])


def test_complement_counts_beyond_float64_name_the_column_not_alpha():
    # 1e308 + 1 - 1e308 is 0 in float64: a complement of 0, whatever alpha.
    from nbcli.models import ColumnUndeterminedError

    X = np.array([[1e308, 2.0, 1.0], [3.0, 1.0, 2.0], [1.0, 4.0, 1.0], [2.0, 1.0, 5.0]])
    y = np.array([0, 0, 1, 1])
    for alpha in (1e-10, 1.0):
        model = ComplementNB(alpha=alpha)
        with pytest.raises(ColumnUndeterminedError, match="up to 1e\\+308") as caught:
            model.fit(X, y)
        assert "smaller alpha" not in str(caught.value)
        assert caught.value.named(["big", "b", "c"]).startswith("the counts of column 'big'")
