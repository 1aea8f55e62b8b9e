"""PoissonNB: the documented formula computed directly, R naivebayes' formula,
agreement with the mixed model's Poisson columns, chunks, the command line."""

import numpy as np
import pytest
from sklearn.datasets import load_digits

from nbcli.models import MixedNB, PoissonNB
from tests.conftest import nbcli, posterior_tolerance
from tests.declared import (
    digits_counts,
    poisson_posteriors,
    posteriors_of,
    predicted,
    r_poisson_naive_bayes,
    with_missing,
)

pytestmark = pytest.mark.numerical


PIXELS = [19, 20, 27, 28, 35, 36, 43, 44]


def _counts(n_rows=500):
    """Eight central pixels of the digits (whole numbers 0..16), 10 classes."""
    return digits_counts(n_rows, PIXELS)


@pytest.mark.parametrize("alpha", [1.0, 0.25])
def test_posteriors_equal_poisson_logpmf_with_the_documented_rate(alpha):
    X, y = _counts()
    X = with_missing(X, 0.1, 1)
    model = PoissonNB(alpha=alpha, missing="ignore").fit(X, y)
    queries = with_missing(load_digits().data[500:700][:, PIXELS], 0.1, 2)
    want = poisson_posteriors(X, y, queries, alpha)
    got = model.predict_proba(queries)
    assert np.all(np.abs(got - want) <= posterior_tolerance(model, queries, want))
    assert np.mean(got.argmax(axis=1) == load_digits().target[500:700]) > 0.5


def test_equals_r_naivebayes_poisson_naive_bayes():
    """poisson_naive_bayes(x, y, laplace = 1): its rates, (rowsum(x, y) + laplace)
    / n, and its posteriors."""
    X, y = _counts(300)
    laplace = 1.0
    lam = np.array([(X[y == c].sum(axis=0) + laplace) / np.sum(y == c) for c in np.unique(y)])
    want = r_poisson_naive_bayes(X, y, X, laplace)
    model = PoissonNB(alpha=laplace).fit(X, y)
    np.testing.assert_allclose(model.rate_, lam, rtol=1e-14)
    got = model.predict_proba(X)
    assert np.all(np.abs(got - want) <= posterior_tolerance(model, X, want))


def test_mixed_poisson_columns_chunks_and_merges_equal_one_fit():
    X, y = _counts()
    X = with_missing(X, 0.05, 3)
    whole = PoissonNB(missing="ignore").fit(X, y)
    mixed = MixedNB(column_types="poisson", missing="ignore").fit(X, y)
    np.testing.assert_allclose(mixed.predict_proba(X), whole.predict_proba(X), rtol=0, atol=1e-13)
    bounds = [0, 1, 2, 170, 333, len(y)]
    chunked = PoissonNB(missing="ignore").fit_chunks(
        (X[a:b], y[a:b]) for a, b in zip(bounds, bounds[1:])
    )
    merged = PoissonNB(missing="ignore").fit(X[250:], y[250:])
    merged = merged.merge(PoissonNB(missing="ignore").fit(X[:250], y[:250]))
    for other in (chunked, merged):
        np.testing.assert_allclose(other.predict_proba(X), whole.predict_proba(X), atol=1e-12)


def test_refusals_name_the_cell():
    X, y = _counts(60)
    X[5, 3] = -2
    with pytest.raises(ValueError, match=r"value -2 is negative.*row 5, column 3"):
        PoissonNB().fit(X, y)
    X[5, 3] = np.nan
    with pytest.raises(ValueError):
        PoissonNB().fit(X, y)  # missing="error"
    model = PoissonNB(missing="ignore").fit(X, y)
    assert np.isfinite(model.rate_).all()


def test_command_line_round_trip(tmp_path):
    import pandas as pd

    X, y = _counts(200)
    frame = pd.DataFrame(X.astype(int), columns=[f"p{j}" for j in range(X.shape[1])])
    frame["label"] = y
    data = tmp_path / "digits_counts.csv"
    frame.to_csv(data, index=False)
    model, out = tmp_path / "m.npz", tmp_path / "p.csv"
    run = nbcli("fit", "-m", "poisson", "-d", data, "--alpha", "0.5", "-o", model, "--quiet")
    assert run.returncode == 0, run.stderr
    direct = PoissonNB(alpha=0.5).fit(X, y)
    got = posteriors_of(predicted(model, data, out), direct.classes_)
    np.testing.assert_allclose(got, direct.predict_proba(X), rtol=0, atol=1e-12)


def test_inspect_shows_the_rates(tmp_path):
    import json

    model = tmp_path / "m.npz"
    run = nbcli("fit", "-m", "poisson", "-d", "sample_data/digits_train.csv", "-o", model)
    assert run.returncode == 0, run.stderr
    run = nbcli("inspect", model, "--json", "-", "--top", "70")
    assert run.returncode == 0, run.stderr
    columns = json.loads(run.stdout)["parameters"]["columns"]
    import pandas as pd

    train = pd.read_csv("sample_data/digits_train.csv")
    X, y = train.drop(columns="label").to_numpy(float), train["label"].to_numpy()
    direct = PoissonNB(missing="ignore").fit(X, y)
    assert len(columns) == X.shape[1]
    rates = np.array([[c["classes"][str(k)]["rate"] for k in direct.classes_] for c in columns])
    np.testing.assert_allclose(rates.T, direct.rate_, rtol=1e-15)
