"""Poisson, kernel and discretized columns of the mixed model: the documented
formulas computed directly, published cut points, chunks and parts equal to
one fit, model files."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln, logsumexp
from sklearn.datasets import load_iris, load_wine

from nbcli.models import MixedNB
from nbcli.models import _value_table as vt
from tests.conftest import nbcli, posterior_tolerance
from tests.declared import (
    assert_out_of_fold,
    digits_counts,
    poisson_posteriors,
    posteriors_of,
    predicted,
    r_poisson_naive_bayes,
    with_folds,
    with_missing,
)

pytestmark = pytest.mark.numerical


def _softmax(scores):
    return np.exp(scores - logsumexp(scores, axis=1, keepdims=True))


def _close(got, want, tol):
    """Every cell within its own tolerance (an array of the cells' shape)."""
    worst = np.max(np.abs(got - want) - tol)
    assert worst <= 0, f"a posterior is {worst:.3g} beyond its tolerance"


def _digits_counts(n_rows=600):
    """Pixel intensities (whole numbers 0..16) of a few central pixels of digits."""
    return digits_counts(n_rows, (20, 21, 28, 36, 43, 44))


# -- Poisson --------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_poisson_posteriors_equal_logpmf_with_the_documented_rate(alpha):
    X, y = _digits_counts()
    X = with_missing(X, 0.1, 1)
    model = MixedNB(column_types="poisson", alpha=alpha, missing="ignore").fit(X, y)
    queries = with_missing(_digits_counts(800)[0][600:], 0.1, 2)
    want = poisson_posteriors(X, y, queries, alpha)  # the docstring's lambda_cj
    got = model.predict_proba(queries)
    _close(got, want, posterior_tolerance(model, queries, want))
    assert model.poisson_rate_.shape == (10, X.shape[1])


def test_poisson_columns_equal_r_naivebayes_formula():
    """R naivebayes' ``poisson_naive_bayes`` (laplace = 1), missing cells and all."""
    X, y = _digits_counts(400)
    X = with_missing(X, 0.05, 3)
    laplace = 1.0
    newdata = X[::3]
    want = r_poisson_naive_bayes(X, y, newdata, laplace)
    model = MixedNB(column_types="poisson", alpha=laplace, missing="ignore").fit(X, y)
    got = model.predict_proba(newdata)
    _close(got, want, posterior_tolerance(model, newdata, want))


@pytest.mark.parametrize("model", ["poisson", "mixed"])
def test_poisson_alpha_zero_is_raised_to_the_floor_not_a_zero_rate(model):
    # As documented: alpha 0 -> 1e-10, so a class that saw only zeros has the
    # rate 1e-10 / n_c and a positive count a finite, very small log-probability.
    from nbcli.models import PoissonNB

    X = np.array([[0.0], [0.0], [1.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    est = PoissonNB(alpha=0) if model == "poisson" else MixedNB(column_types=["poisson"], alpha=0)
    est.fit(X, y)
    x = 2.0
    rates = np.array([1e-10 / 2, (4 + 1e-10) / 2])
    want = np.log(0.5) + x * np.log(rates) - rates - gammaln(x + 1)
    got = est.joint_log_likelihood(np.array([[x]]))[0]
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_poisson_cells_must_not_be_negative():
    X, y = _digits_counts(50)
    Z = X.copy()
    Z[7, 2] = -1.0
    with pytest.raises(ValueError, match=r"value -1 is negative: Poisson columns take counts"):
        MixedNB(column_types="poisson").fit(Z, y)
    # Non-integers are scored by the same formula, log x! as log Gamma(x + 1).
    Z[7, 2] = 2.5
    model = MixedNB(column_types="poisson").fit(Z, y)
    rate, row = model.poisson_rate_, Z[7]
    want = model.class_log_prior_ + (row * np.log(rate) - rate - gammaln(row + 1)).sum(axis=1)
    np.testing.assert_allclose(model.joint_log_likelihood_block(Z[7:8])[:, 0], want, rtol=1e-12)


# -- discretized ----------------------------------------------------------------


def _weka_mdl(x, labels, n_classes):
    """Weka's ``Discretize.cutPointsForSubset`` (Fayyad-Irani, worse encoding)
    over rows sorted by value, one row at a time, entropies as Weka's
    ``ContingencyTables`` forms them (x ln x terms)."""

    def ln(v):
        return v * np.log(v) if v > 0 else 0.0

    def entropy(c):
        total = sum(c)
        return 0.0 if total == 0 else (-sum(ln(v) for v in c) + ln(total)) / (total * np.log(2))

    def conditioned(rows):
        total = sum(sum(r) for r in rows)
        val = sum(sum(ln(v) for v in r) - ln(sum(r)) for r in rows)
        return -val / (total * np.log(2))

    order = np.argsort(x, kind="stable")
    xs, ys = x[order], labels[order]
    cuts = []

    def subset(first, last):
        if last - first < 2:
            return
        left, right = [0.0] * n_classes, [0.0] * n_classes
        for i in range(first, last):
            right[ys[i]] += 1
        prior = list(right)
        prior_e = best_e = entropy(prior)
        best = None
        for i in range(first, last - 1):
            left[ys[i]] += 1
            right[ys[i]] -= 1
            if xs[i] < xs[i + 1]:
                e = conditioned([left, right])
                if e < best_e:
                    best_e, best = e, (i, (xs[i] + xs[i + 1]) / 2, list(left), list(right))
        n = last - first
        if best is None or prior_e - best_e <= 0:
            return
        i, cut, bl, br = best
        k = sum(v > 0 for v in prior)
        k1, k2 = sum(v > 0 for v in bl), sum(v > 0 for v in br)
        delta = np.log2(3.0**k - 2) - (k * prior_e - k2 * entropy(br) - k1 * entropy(bl))
        if prior_e - best_e > (np.log2(n - 1) + delta) / n:
            cuts.append(cut)
            subset(first, i + 1)
            subset(i + 1, last)

    subset(0, len(xs))
    return sorted(cuts)


def test_discretized_cut_points_equal_the_mdl_recursion_and_wekas_for_iris():
    X, y = load_iris(return_X_y=True)
    model = MixedNB(column_types="discretized").fit(X, y)
    for j in range(4):
        np.testing.assert_allclose(model.cut_points_[j], _weka_mdl(X[:, j], y, 3), rtol=1e-15)
    # Weka's NaiveBayes -D on iris (as its output lists them).
    np.testing.assert_allclose(model.cut_points_[2], [2.45, 4.75], rtol=1e-12)
    np.testing.assert_allclose(model.cut_points_[3], [0.8, 1.75], rtol=1e-12)
    assert all(c.size >= 1 for c in model.cut_points_)


def test_discretized_posteriors_equal_categorical_terms_of_the_intervals():
    X, y = load_wine(return_X_y=True)
    X = with_missing(X[:, :5], 0.05, 4)
    alpha = 0.7
    model = MixedNB(column_types="discretized", alpha=alpha, missing="ignore").fit(X, y)
    scores = np.log(np.bincount(y) / len(y))[None, :].repeat(len(X), axis=0)
    for j in range(X.shape[1]):
        seen = ~np.isnan(X[:, j])
        cuts = np.asarray(_weka_mdl(X[seen, j], y[seen], 3))
        np.testing.assert_allclose(model.cut_points_[j], cuts, rtol=1e-15)
        code = np.searchsorted(cuts, X[:, j])  # x <= cut: the lower interval
        k = cuts.size + 1
        for c in range(3):
            obs = seen & (y == c)
            n_cv = np.bincount(code[obs], minlength=k)
            p = (n_cv + alpha) / (obs.sum() + alpha * k)
            scores[seen, c] += np.log(p[code[seen]])
    want = _softmax(scores)
    got = model.predict_proba(X)
    _close(got, want, posterior_tolerance(model, X, want))


# -- kernel ---------------------------------------------------------------------


def _nrd0(v):
    """R's bw.nrd0 from its definition."""
    lo = min(np.std(v, ddof=1), (np.percentile(v, 75) - np.percentile(v, 25)) / 1.34)
    return 0.9 * lo * len(v) ** -0.2


@pytest.mark.parametrize("adjust", [1.0, 0.5])
def test_kernel_posteriors_equal_gaussian_kde_with_silvermans_bandwidth(adjust):
    X, y = load_wine(return_X_y=True)
    X = with_missing(X[:, [0, 6, 9, 12]], 0.05, 5)  # alcohol, flavanoids, colour, proline
    model = MixedNB(column_types="kernel", bandwidth_adjust=adjust, missing="ignore").fit(X, y)
    queries = X[::2]
    scores = np.log(np.bincount(y) / len(y))[None, :].repeat(len(queries), axis=0)
    for j in range(X.shape[1]):
        for c in range(3):
            v = X[(y == c) & ~np.isnan(X[:, j]), j]
            h = adjust * _nrd0(v)
            assert model.bandwidth_[c, j] == pytest.approx(h, rel=1e-12)
            kde = stats.gaussian_kde(v, bw_method=h / np.std(v, ddof=1))
            q = queries[:, j]
            seen = ~np.isnan(q)
            scores[seen, c] += kde.logpdf(q[seen])
    want = _softmax(scores)
    got = model.predict_proba(queries)
    # gaussian_kde forms the density from its own covariance factor: a few
    # more roundings than the model's, relative to each log-density.
    tol = posterior_tolerance(model, queries, want) * 8
    _close(got, want, tol)


def test_kernel_log_density_stays_finite_far_from_the_data():
    v = np.array([0.0, 1.0, 2.0])
    far = vt.kernel_log_density(np.array([1e3]), v, np.log(np.full(3, 1 / 3)), 0.5)
    direct = logsumexp(stats.norm.logpdf(1e3, v, 0.5)) - np.log(3)
    assert np.isfinite(far[0]) and far[0] == pytest.approx(direct, rel=1e-12)


def test_too_many_distinct_values_is_an_error_naming_the_column(monkeypatch):
    monkeypatch.setattr(vt, "MAX_DISTINCT", 20)
    X, y = load_wine(return_X_y=True)
    with pytest.raises(ValueError, match=r"kernel column 1 has more than 20 distinct values"):
        MixedNB(column_types=["gaussian", "kernel"]).fit(X[:, :2], y)
    few = np.round(X[:, :2])
    parts = [MixedNB(column_types=["gaussian", "kernel"]).fit(few[a::2], y[a::2]) for a in (0, 1)]
    monkeypatch.setattr(vt, "MAX_DISTINCT", 5)
    with pytest.raises(ValueError, match=r"kernel column 1 has more than 5 distinct values"):
        parts[0].merge(parts[1])


@pytest.mark.parametrize(
    "command, more",
    [
        ("fit", []),
        ("fit", ["--chunk-size", "40"]),
        ("fit", ["--parts"]),
        ("cv", ["--bootstrap", "0"]),
        ("cv", ["--bootstrap", "0", "--chunk-size", "40"]),
    ],
)
def test_cli_too_many_distinct_values_names_the_column(tmp_path, monkeypatch, command, more):
    # One chunk over the limit, or chunks, folds or parts each under it whose
    # merge is over.
    import pandas as pd

    from tests.conftest import assert_one_error_line, nbcli_in_process

    monkeypatch.setattr(vt, "MAX_DISTINCT", 30)
    data = "sample_data/iris_train.csv"
    frame = pd.read_csv(data)
    values = frame["sepal_length_cm"]
    assert values.nunique() > 30
    assert all(values.iloc[a : a + 40].nunique() <= 30 for a in range(0, len(values), 40))
    if more == ["--parts"]:
        more, data = [], tmp_path / "parts"
        data.mkdir()
        for a in range(0, len(frame), 40):
            frame.iloc[a : a + 40].to_csv(data / f"part{a}.csv", index=False)
    args = (command, "-m", "mixed", "-d", data, "--column", "sepal_length_cm=kernel", *more)
    out = ["-o", tmp_path / "m.npz"] if command == "fit" else ["-q"]
    run = nbcli_in_process(*args, *out)
    assert_one_error_line(run, "kernel column 'sepal_length_cm' has more than 30 distinct values")


# -- every new kind: chunks, parts, statistics --------------------------------------


def _mixed_table():
    X, y = load_wine(return_X_y=True)
    counts = np.round(X[:, [4]] / 10)  # magnesium in tens: counts
    table = np.column_stack([X[:, [0, 1]], counts, X[:, [6, 9]], X[:, [2]]])
    types = ["kernel", "discretized", "poisson", "discretized", "kernel", "gaussian"]
    return with_missing(table, 0.05, 6), y, types


@pytest.mark.parametrize("bandwidth", ["nrd0", "weka"])
def test_chunks_parts_and_partial_fit_equal_one_fit(bandwidth):
    X, y, types = _mixed_table()
    params = {"column_types": types, "missing": "ignore", "bandwidth": bandwidth}
    whole = MixedNB(**params).fit(X, y)
    bounds = [0, 3, 4, 60, 61, len(y)]
    chunked = MixedNB(**params).fit_chunks((X[a:b], y[a:b]) for a, b in zip(bounds, bounds[1:]))
    order = np.random.default_rng(7).permutation(len(y))
    halves = [order[: len(y) // 2], order[len(y) // 2 :]]
    merged = MixedNB(**params).fit(X[halves[1]], y[halves[1]])
    merged = merged.merge(MixedNB(**params).fit(X[halves[0]], y[halves[0]]))
    stepwise = MixedNB(**params)
    for a, b in zip(bounds, bounds[1:]):
        stepwise.partial_fit(X[a:b], y[a:b], classes=[0, 1, 2])
    for other in (chunked, merged, stepwise):
        np.testing.assert_allclose(
            other.predict_proba(X), whole.predict_proba(X), rtol=0, atol=1e-12
        )
        for a, b in zip(other.cut_points_, whole.cut_points_):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(other.bandwidth_, whole.bandwidth_, rtol=1e-12)
        np.testing.assert_allclose(other.poisson_rate_, whole.poisson_rate_, rtol=1e-12)


def test_sample_weights_equal_repeated_rows():
    X, y, types = _mixed_table()
    w = np.random.default_rng(8).integers(1, 4, len(y))
    params = {"column_types": types, "missing": "ignore"}
    weighted = MixedNB(**params).fit(X, y, sample_weight=w.astype(float))
    repeated = MixedNB(**params).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(
        weighted.predict_proba(X), repeated.predict_proba(X), rtol=0, atol=1e-12
    )


def test_statistics_rebuild_the_model_and_a_missing_cell_is_left_out():
    X, y, types = _mixed_table()
    model = MixedNB(column_types=types, missing="ignore").fit(X, y)
    stats_ = type(model.stats_)(**model.stats_.arrays())
    assert stats_.implausible() is None
    again = MixedNB.from_stats(stats_, model.classes_, model.get_params(), X.shape[1])
    np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))
    for j in range(X.shape[1]):
        row = X[:1].copy()
        row[0, j] = np.nan
        keep = [i for i in range(X.shape[1]) if i != j]
        sub = MixedNB(column_types=[types[i] for i in keep], missing="ignore").fit(X[:, keep], y)
        np.testing.assert_allclose(
            model.predict_proba(row), sub.predict_proba(row[:, keep]), rtol=0, atol=1e-12
        )


def test_statistics_with_unsorted_values_are_implausible():
    X, y, types = _mixed_table()
    st = MixedNB(column_types=types, missing="ignore").fit(X, y).stats_
    bad = st.copy()
    bad.value_points = bad.value_points[::-1].copy()
    assert "not sorted" in bad.implausible()


# -- command line and model files ---------------------------------------------------


def test_cli_column_kinds_round_trip_through_a_model_file(tmp_path):
    model_path = tmp_path / "m.npz"
    run = nbcli(
        "fit",
        "-d",
        "sample_data/iris_train.csv",
        "-m",
        "mixed",
        "--column",
        "petal_length_cm=discretised,petal_width_cm=discretized",
        "--column",
        "sepal_length_cm=kernel",
        "-o",
        str(model_path),
    )
    assert run.returncode == 0, run.stderr
    from nbcli.io.modelfile import load_model

    loaded = load_model(model_path)
    types = [c["type"] for c in loaded.columns]
    assert types == ["kernel", "gaussian", "discretized", "discretized"]
    got = predicted(model_path, "sample_data/iris_test.csv", tmp_path / "p.csv")
    import pandas as pd

    train = pd.read_csv("sample_data/iris_train.csv")
    test = pd.read_csv("sample_data/iris_test.csv")
    names = list(train.columns[:4])
    direct = MixedNB(column_types=types, missing="ignore").fit(
        train[names].to_numpy(), train["label"].to_numpy()
    )
    want = direct.predict_proba(test[names].to_numpy())
    np.testing.assert_allclose(posteriors_of(got, direct.classes_), want, rtol=0, atol=1e-12)


def test_cli_refuses_an_unknown_column_kind(tmp_path):
    run = nbcli(
        "fit",
        "-d",
        "sample_data/iris_train.csv",
        "-m",
        "mixed",
        "--column",
        "sepal_length_cm=beta",
        "-o",
        tmp_path / "m.npz",
    )
    assert run.returncode == 2
    assert "unknown column type" in run.stderr and "discretized" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize(
    "given",
    [
        ["sepal_length_cm=kernel,sepal_length_cm=poisson"],
        ["sepal_length_cm=kernel", "sepal_length_cm=poisson"],
    ],
)
def test_cli_refuses_a_column_given_two_kinds(tmp_path, given):
    from tests.conftest import assert_one_error_line, nbcli_in_process

    flags = [a for g in given for a in ("--column", g)]
    out = tmp_path / "m.npz"
    run = nbcli_in_process(
        "fit", "-d", "sample_data/iris_train.csv", "-m", "mixed", *flags, "-o", out
    )
    assert_one_error_line(run, "--column sepal_length_cm", "kernel and poisson")
    assert not out.exists()
    # The same kind twice says one thing, and is taken.
    twice = "sepal_length_cm=kernel,sepal_length_cm=kernel"
    run = nbcli_in_process(
        "fit",
        "-d",
        "sample_data/iris_train.csv",
        "-m",
        "mixed",
        "--column",
        twice,
        "-o",
        out,
        "--quiet",
    )
    assert run.returncode == 0, run.stderr


def test_cli_chunks_and_parts_equal_one_fit(tmp_path):
    import pandas as pd

    kinds = ["--column", "sepal_length_cm=kernel,petal_length_cm=discretized"]
    train = pd.read_csv("sample_data/iris_train.csv")
    parts = tmp_path / "parts"
    parts.mkdir()
    for i, rows in enumerate((train.iloc[:37], train.iloc[37:])):
        rows.to_csv(parts / f"part{i}.csv", index=False)
    probas = []
    for name, data in (
        ("one", ["-d", "sample_data/iris_train.csv"]),
        ("chunks", ["-d", "sample_data/iris_train.csv", "--chunk-size", "7"]),
        ("parts", ["-d", parts]),
    ):
        model = tmp_path / f"{name}.npz"
        run = nbcli("fit", *data, "-m", "mixed", *kinds, "-o", model)
        assert run.returncode == 0, run.stderr
        out = tmp_path / f"{name}.csv"
        run = nbcli("predict", "-m", model, "-d", "sample_data/iris_test.csv", "--proba", "-o", out)
        assert run.returncode == 0, run.stderr
        probas.append(pd.read_csv(out).filter(like="proba_").to_numpy())
    for other in probas[1:]:
        np.testing.assert_allclose(other, probas[0], rtol=0, atol=1e-12)
    assert probas[0].shape == (30, 3)


@pytest.mark.parametrize(
    "params",
    [
        {"column_types": "kernel", "bandwidth": "nrd0"},
        {"column_types": "kernel", "bandwidth": "weka"},
        {"column_types": "discretized"},
    ],
)
def test_terms_looked_up_equal_terms_computed(monkeypatch, params):
    from nbcli.models import mixed

    X, y = load_wine(return_X_y=True)
    X = X[:, [0, 9]]
    # Training values, others, and missing cells among them.
    queries = np.vstack([X[::3], X[::5] + 0.013])
    queries[::4, 0] = np.nan
    params = {**params, "missing": "ignore"}
    tabled = MixedNB(**params).fit(X, y)
    monkeypatch.setattr(mixed, "_TABLED_VALUES", 0)
    computed = MixedNB(**params).fit(X, y)
    assert computed._kernel_tables + computed._interval_tables == [None, None]
    assert all(t is not None for t in tabled._kernel_tables + tabled._interval_tables)
    np.testing.assert_allclose(
        tabled.predict_log_proba(queries), computed.predict_log_proba(queries), rtol=1e-13
    )


def test_cv_out_of_fold_posteriors_equal_fits_on_the_other_folds(tmp_path):
    import pandas as pd

    data, frame = with_folds(pd.read_csv("sample_data/iris_train.csv"), tmp_path / "f.csv", 3)
    oof = tmp_path / "oof.csv"
    kinds = "sepal_length_cm=kernel,sepal_width_cm=discretized,petal_length_cm=discretized"
    run = nbcli(
        "cv",
        "-m",
        "mixed",
        "-d",
        data,
        "--fold-column",
        "fold",
        "--column",
        kinds,
        "--bandwidth",
        "weka",
        "--bootstrap",
        "0",
        "--oof-output",
        oof,
        "--quiet",
    )
    assert run.returncode == 0, run.stderr
    X, y = frame[list(frame.columns[:4])].to_numpy(), frame["label"].to_numpy()
    types = ["kernel", "discretized", "discretized", "gaussian"]

    def fold_model(train, held):
        model = MixedNB(column_types=types, bandwidth="weka", missing="ignore")
        model.fit(X[train], y[train])
        return model.classes_, model.predict_proba(X[held])

    assert_out_of_fold(pd.read_csv(oof), frame["fold"], fold_model)


def test_inspect_shows_rates_bandwidths_and_intervals(tmp_path):
    import json

    import pandas as pd

    frame = pd.read_csv("sample_data/iris_train.csv")
    frame["petal_width_cm"] = np.round(frame["petal_width_cm"] * 10)  # tenths: counts
    data = tmp_path / "iris_counts.csv"
    frame.to_csv(data, index=False)
    model = tmp_path / "m.npz"
    kinds = "sepal_length_cm=kernel,petal_length_cm=discretized,petal_width_cm=poisson"
    run = nbcli("fit", "-d", data, "-m", "mixed", "--column", kinds, "-o", model, "--quiet")
    assert run.returncode == 0, run.stderr
    run = nbcli("inspect", model, "--json", "-")
    assert run.returncode == 0, run.stderr
    columns = {c["feature"]: c for c in json.loads(run.stdout)["parameters"]["columns"]}
    names = list(frame.columns[:4])
    direct = MixedNB(column_types=["kernel", "gaussian", "discretized", "poisson"])
    direct.fit(frame[names].to_numpy(), frame["label"].to_numpy())
    labels = [str(c) for c in direct.classes_]
    rates = [columns["petal_width_cm"]["classes"][c]["rate"] for c in labels]
    np.testing.assert_allclose(rates, direct.poisson_rate_[:, 0], rtol=1e-15)
    widths = [columns["sepal_length_cm"]["classes"][c]["bandwidth"] for c in labels]
    np.testing.assert_allclose(widths, direct.bandwidth_[:, 0], rtol=1e-15)
    lengths = columns["petal_length_cm"]
    np.testing.assert_allclose(lengths["cut_points"], direct.cut_points_[0], rtol=1e-15)
    assert len(lengths["categories"]) == direct.cut_points_[0].size + 1
    probabilities = [lengths["classes"][c] for c in labels]
    np.testing.assert_allclose(probabilities, np.exp(direct.interval_log_prob_[0]), rtol=1e-14)
    run = nbcli("inspect", model)
    assert run.returncode == 0 and "Poisson rate" in run.stdout and "<= " in run.stdout


@pytest.mark.parametrize(
    "values",
    [
        np.round(np.random.default_rng(0).normal(size=3000), 2),  # a grid with gaps
        np.geomspace(1e-6, 1e6, 500),  # far from even: the binary search
        np.concatenate([np.arange(50) * 1e-9, np.arange(50) + 1e3]),  # two clusters
        np.array([-0.0, 1.0, 2.5, 2.5000000000000004]),  # neighbours one ulp apart
        np.array([3.0]),
        np.zeros(0),
    ],
)
def test_value_index_finds_exactly_the_distinct_values(values):
    values = np.unique(values + 0.0)
    rng = np.random.default_rng(1)
    others = np.concatenate([rng.normal(size=200) * 10, [-1e300, 1e300, -np.inf, np.inf, -0.0]])
    if values.size:
        gaps = (values[:-1] + values[1:]) / 2  # between neighbours, never one of them
        x = np.concatenate([rng.permutation(values), gaps, others, np.nextafter(values, np.inf)])
    else:
        x = others
    pos, found = vt.ValueIndex(values).locate(x)
    np.testing.assert_array_equal(found, np.isin(x, values))
    np.testing.assert_array_equal(values[pos[found]], x[found])
    assert found[: values.size].all()


@pytest.mark.parametrize("sd_scale", [0.05, 1.0, 30.0])
def test_weka_sums_in_windows_equal_sums_over_all_kernels(sd_scale):
    # Wide kernels (sd_scale 30) run past the first windows, and past the widest.
    rng = np.random.default_rng(2)
    values = np.unique(np.round(rng.normal(size=2000) * 5, 2))
    weights = rng.integers(1, 50, values.size).astype(float)
    precision = vt.weka_precision(values)
    centres, w, sd = vt.weka_kernels(values, weights, precision)
    x = np.concatenate([values, values + precision / 3, [-1e3, 1e3, values[0], values[-1]]])
    got = vt.weka_log_probability(x, centres, w, precision, sd * sd_scale)
    sums = vt._weka_all(x, centres, w, precision, sd * sd_scale, float(w.sum()))
    # The same terms added in the same order: equal, not merely close.
    np.testing.assert_array_equal(got, np.log(np.maximum(sums / w.sum(), vt.WEKA_FLOOR)))


@pytest.mark.parametrize("spread", ["grid", "far from even"])
def test_value_counts_equal_unique_and_weighted_counts(spread):
    rng = np.random.default_rng(3)
    n = 5000
    if spread == "grid":
        col = np.round(rng.normal(size=n), 2)
    else:
        col = rng.choice(np.geomspace(1e-6, 1e6, 300), n)
    col[::7] = np.nan
    y = rng.integers(0, 3, n)
    w = rng.uniform(0.5, 2.0, n)
    points, counts, sizes = vt.count_values(col[:, None], y, w, 3)
    seen = ~np.isnan(col)
    values, where = np.unique(col[seen], return_inverse=True)
    want = np.zeros((3, values.size))
    np.add.at(want, (y[seen], where), w[seen])
    np.testing.assert_array_equal(points, values)
    np.testing.assert_array_equal(sizes, [values.size])
    # Sums of the same weights in another order: within a few ulps of the total.
    np.testing.assert_allclose(counts, want, rtol=0, atol=1e-12 * w.sum())
