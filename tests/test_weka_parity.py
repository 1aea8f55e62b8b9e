"""Discretized and kernel columns against Weka's own NaiveBayes -D and -K (MDL
discretisation), run from Debian's ``weka`` package; skipped where Java, a
Java compiler or Weka cannot be had."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from nbcli.models import MixedNB

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

    def run(X, y, options):
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
