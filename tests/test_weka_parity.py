"""Discretized and kernel columns against Weka's own NaiveBayes -D and -K (MDL
discretisation), run from Debian's ``weka`` package; skipped where Java, a
Java compiler or Weka cannot be had."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from nbcli.models import GaussianNB, MixedNB
from tests.conftest import nbcli_in_process

pytestmark = pytest.mark.numerical

WEKA_JAR = Path("/usr/share/java/weka.jar")

# Full-precision posteriors: Weka 3.6's own -p output rounds to 3 decimals.
_SOURCE = """
import weka.classifiers.bayes.NaiveBayes;
import weka.core.Instances;
import weka.core.Utils;
import weka.core.converters.ConverterUtils.DataSource;

public class NaiveBayesPosteriors {
    public static void main(String[] args) throws Exception {
        Instances data = new DataSource(args[0]).getDataSet();
        data.setClassIndex(data.numAttributes() - 1);
        NaiveBayes nb = new NaiveBayes();
        nb.setOptions(Utils.splitOptions(args[1]));
        nb.buildClassifier(data);
        for (int i = 0; i < data.numInstances(); i++) {
            double[] p = nb.distributionForInstance(data.instance(i));
            StringBuilder line = new StringBuilder();
            for (int k = 0; k < p.length; k++) {
                if (k > 0) line.append(',');
                line.append(Double.toString(p[k]));
            }
            System.out.println(line);
        }
    }
}
"""


@pytest.fixture(scope="module")
def weka(tmp_path_factory):
    if not (shutil.which("java") and shutil.which("javac") and WEKA_JAR.exists()):
        pytest.skip("needs java, javac and Debian's weka package (/usr/share/java/weka.jar)")
    where = tmp_path_factory.mktemp("weka")
    (where / "NaiveBayesPosteriors.java").write_text(_SOURCE)
    subprocess.run(
        ["javac", "-cp", str(WEKA_JAR), "NaiveBayesPosteriors.java"],
        cwd=where,
        check=True,
        capture_output=True,
        timeout=120,
    )

    done: dict = {}

    def run(X, y, options):
        # One Weka run per table and option (JVM start-up dominates).
        key = (X.tobytes(), np.asarray(y).tobytes(), options)
        if key not in done:
            done[key] = _run(X, y, options)
        return done[key]

    def _run(X, y, options):
        arff = where / "data.arff"
        classes = sorted(set(y))
        lines = ["@relation data"]
        lines += [f"@attribute x{j} numeric" for j in range(X.shape[1])]
        lines += ["@attribute class {" + ",".join(f"c{c}" for c in classes) + "}", "@data"]
        for row, label in zip(X, y):
            cells = ["?" if np.isnan(v) else repr(float(v)) for v in row]
            lines.append(",".join([*cells, f"c{label}"]))
        arff.write_text("\n".join(lines) + "\n")
        done = subprocess.run(
            ["java", "-cp", f"{WEKA_JAR}:{where}", "NaiveBayesPosteriors", str(arff), options],
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return np.array([[float(v) for v in line.split(",")] for line in done.stdout.split()])

    return run


def _tables():
    from sklearn.datasets import load_breast_cancer, load_iris, load_wine

    out = {}
    for name, loader in (("iris", load_iris), ("wine", load_wine)):
        X, y = loader(return_X_y=True)
        out[name] = (X, y)
    X, y = load_breast_cancer(return_X_y=True)
    out["breast_cancer"] = (X[:, :10], y)
    penguins = _penguins()
    if penguins is not None:
        out["penguins"] = penguins
    return out


def _penguins():
    """The shipped penguins table's four measurements, missing cells and all."""
    import pandas as pd

    path = Path(__file__).resolve().parents[1] / "sample_data" / "penguins.csv"
    if not path.exists():
        return None
    frame = pd.read_csv(path)
    columns = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
    codes = frame["species"].astype("category").cat.codes.to_numpy()
    return frame[columns].to_numpy(dtype=float), codes


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer", "penguins"])
def test_discretized_columns_equal_weka_naive_bayes_d(weka, name):
    tables = _tables()
    if name not in tables:
        pytest.skip(f"no {name} table")
    X, y = tables[name]
    want = weka(X, y, "-D")
    # Weka's class prior is Laplace-smoothed, (n_c + 1) / (n + K): given as priors.
    counts = np.bincount(y)
    prior = (counts + 1.0) / (counts.sum() + counts.size)
    model = MixedNB(column_types="discretized", alpha=1.0, class_prior=prior, missing="ignore").fit(
        X, y
    )
    got = model.predict_proba(X)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    # Not a coincidence of flat posteriors: the model is sure of most rows.
    assert np.mean(got.max(axis=1) > 0.9) > 0.5


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer", "penguins"])
def test_kernel_columns_equal_weka_naive_bayes_k(weka, name):
    tables = _tables()
    if name not in tables:
        pytest.skip(f"no {name} table")
    X, y = tables[name]
    want = weka(X, y, "-K")
    counts = np.bincount(y)
    prior = (counts + 1.0) / (counts.sum() + counts.size)
    model = MixedNB(
        column_types="kernel", bandwidth="weka", class_prior=prior, missing="ignore"
    ).fit(X, y)
    got = model.predict_proba(X)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    # Silverman's bandwidth (the default) is another estimator.
    other = MixedNB(column_types="kernel", class_prior=prior, missing="ignore").fit(X, y)
    assert np.abs(other.predict_proba(X) - want).max() > 1e-3


def _weka_prior(y):
    """Weka's class prior, Laplace-smoothed: (n_c + 1) / (n + K)."""
    counts = np.bincount(y)
    return (counts + 1.0) / (counts.sum() + counts.size)


#: Weka's switch, the estimator that is nbcli's one switch, and the kernel rule.
_SWITCHES = {"-K": ("kernel", {"bandwidth": "weka"}), "-D": ("discretized", {})}


@pytest.mark.parametrize("switch", sorted(_SWITCHES))
@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer", "penguins"])
def test_numeric_estimator_of_every_column_equals_weka(weka, name, switch):
    """``numeric_estimator`` is Weka's -K / -D for every numeric column at
    once, in the gaussian model and in the mixed model without column types."""
    tables = _tables()
    if name not in tables:
        pytest.skip(f"no {name} table")
    X, y = tables[name]
    want = weka(X, y, switch)
    estimator, settings = _SWITCHES[switch]
    prior = _weka_prior(y)
    models = [
        GaussianNB(numeric_estimator=estimator, priors=prior, missing="ignore", **settings),
        MixedNB(numeric_estimator=estimator, class_prior=prior, missing="ignore", **settings),
    ]
    for model in models:
        got = model.fit(X, y).predict_proba(X)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9, err_msg=type(model).__name__)
    # Not Weka's default estimator: the Gaussian one differs.
    plain = weka(X, y, "")
    assert np.abs(plain - want).max() > 1e-3
    assert np.mean(want.max(axis=1) > 0.9) > 0.5


@pytest.mark.parametrize("switch", sorted(_SWITCHES))
def test_cli_numeric_estimator_through_a_model_file_equals_weka(weka, tmp_path, switch):
    """``nbcli fit -m gaussian --numeric-estimator ...`` and ``predict --proba``
    from the saved model file give Weka's posteriors on wine."""
    import pandas as pd

    X, y = _tables()["wine"]
    want = weka(X, y, switch)
    estimator, settings = _SWITCHES[switch]
    names = [f"x{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)
    frame["label"] = [f"c{v}" for v in y]
    data = tmp_path / "wine.csv"
    frame.to_csv(data, index=False, float_format="%.17g")
    prior = ",".join(f"c{k}={float(p)!r}" for k, p in enumerate(_weka_prior(y)))
    model = tmp_path / "model.npz"
    extra = [f"--{k}={v}" for k, v in settings.items()]
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", data, "--numeric-estimator", estimator, *extra,
        "--priors", prior, "-o", model, "--quiet",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    out = tmp_path / "proba.csv"
    run = nbcli_in_process("predict", "-m", model, "-d", data, "--proba", "-o", out, "--quiet")
    assert run.returncode == 0, run.stderr
    got = pd.read_csv(out)[[f"proba_c{k}" for k in range(3)]].to_numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
