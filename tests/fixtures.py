"""Setup the parity tests share, imported as ``from tests.declared import ...``:
tables with folds or missing cells, nbcli's posteriors read back from its
predictions file, and what they are compared with (scikit-learn's text
pipelines and searches, the Poisson formula, Weka's NaiveBayes).

scikit-learn, pandas and Java are loaded only by the helpers that use them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np

from tests.conftest import SAMPLE, nbcli_in_process

AUSTEN_TRAIN, AUSTEN_TEST = SAMPLE / "austen_train.csv", SAMPLE / "austen_test.csv"


# -- tables ---------------------------------------------------------------------------


def with_missing(X, rate: float, seed: int) -> np.ndarray:
    """A copy of ``X`` with each cell missing (NaN) with probability ``rate``."""
    X = np.array(X, dtype=float)
    X[np.random.default_rng(seed).random(X.shape) < rate] = np.nan
    return X


def digits_counts(n_rows: int, columns) -> tuple[np.ndarray, np.ndarray]:
    """Pixel intensities (whole numbers 0..16) of ``columns`` of the first
    ``n_rows`` digits, and their labels (10 classes)."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return X[:n_rows, list(columns)].astype(float), y[:n_rows]


def with_folds(frame, path: Path, n_folds: int = 4):
    """``frame`` with a ``fold`` column (row ``i`` in fold ``i % n_folds``: equal
    folds in file order), written to ``path`` as CSV; returns ``(path, frame)``."""
    frame = frame.assign(fold=np.arange(len(frame)) % n_folds)
    frame.to_csv(path, index=False)
    return path, frame


def texts(path=AUSTEN_TRAIN):
    """A text sample's ``text`` and ``label`` columns (an empty text stays ``""``)."""
    import pandas as pd

    frame = pd.read_csv(path, keep_default_na=False)
    return frame["text"], frame["label"]


# -- nbcli's posteriors --------------------------------------------------------------


def predicted(model, data, out):
    """``nbcli predict --proba`` of ``model`` on ``data``, written to ``out`` and
    read back as a frame (``prediction`` and one ``proba_<class>`` column a class)."""
    import pandas as pd

    run = nbcli_in_process("predict", "-m", model, "-d", data, "--proba", "-o", out, "--quiet")
    assert run.returncode == 0, run.stderr
    return pd.read_csv(out)


def posteriors_of(frame, classes, rows=None) -> np.ndarray:
    """The ``proba_<class>`` columns of a predictions frame in the order of
    ``classes`` (a reference's ``classes_``), of ``rows`` (a mask) or all rows."""
    columns = [f"proba_{c}" for c in classes]
    return (frame[columns] if rows is None else frame.loc[rows, columns]).to_numpy()


def assert_out_of_fold(oof, folds, reference, atol: float = 1e-12) -> None:
    """Each fold's rows of the out-of-fold predictions ``oof`` equal what
    ``reference(train, held)`` (boolean masks of the rows) returns: a model's
    ``(classes, posteriors of the held rows)`` fitted on the others."""
    folds = np.asarray(folds)
    assert len(np.unique(folds)) > 1
    for f in np.unique(folds):
        held = folds == f
        classes, want = reference(~held, held)
        np.testing.assert_allclose(posteriors_of(oof, classes, held), want, rtol=0, atol=atol)


# -- scikit-learn ---------------------------------------------------------------------


def text_pipeline(vectorizer, estimator, text=None, labels=None):
    """``make_pipeline(vectorizer, estimator)``, fitted on ``text`` and ``labels`` if given."""
    from sklearn.pipeline import make_pipeline

    pipe = make_pipeline(vectorizer, estimator)
    return pipe if text is None else pipe.fit(text, labels)


def fold_search(pipe, grid: dict, frame, scoring, **options):
    """scikit-learn's ``GridSearchCV`` of ``pipe`` over ``grid`` on the folds of
    ``frame``'s ``fold`` column (the folds nbcli is given), fitted on its
    ``text`` and ``label``."""
    from sklearn.model_selection import GridSearchCV, PredefinedSplit

    cv = PredefinedSplit(frame["fold"].to_numpy())
    search = GridSearchCV(pipe, grid, scoring=scoring, cv=cv, **options)
    return search.fit(frame["text"], frame["label"])


# -- the documented Poisson formula ----------------------------------------------------


def poisson_posteriors(X, y, queries, alpha: float) -> np.ndarray:
    """Poisson naive Bayes computed from its definition: per class the prior
    ``n_c / n`` and per column the rate ``(sum of the observed counts + alpha)
    / (number observed)``, a query's missing cell left out of the product;
    posteriors of ``queries``, shape (n_queries, n_classes) in sorted class order."""
    from scipy import stats
    from scipy.special import logsumexp

    scores = []
    for c in np.unique(y):
        rows = X[y == c]
        s = np.full(len(queries), np.log(np.mean(y == c)))
        for j in range(X.shape[1]):
            seen = rows[~np.isnan(rows[:, j]), j]
            rate = (seen.sum() + alpha) / seen.size
            q = queries[:, j]
            s += np.where(np.isnan(q), 0.0, stats.poisson.logpmf(np.nan_to_num(q), rate))
        scores.append(s)
    scores = np.column_stack(scores)
    return np.exp(scores - logsumexp(scores, axis=1, keepdims=True))


def r_poisson_naive_bayes(X, y, newdata, laplace: float) -> np.ndarray:
    """R naivebayes' ``poisson_naive_bayes`` written out: lambda =
    ``(rowsum(x, y, na.rm = TRUE) + laplace) / n`` with ``n`` the non-missing
    counts, and per class ``colSums(-lambda + x log(lambda) - lgamma(x + 1))``
    (missing cells 0) plus the log prior, normalised. Asserts that no term
    reaches R's threshold rule (a term below ``log(.Machine$double.xmin)``)."""
    from scipy.special import gammaln

    levels = np.unique(y)
    onehot = (y[:, None] == levels).astype(float)
    observed = onehot.T @ (~np.isnan(X)).astype(float)
    lam = (onehot.T @ np.nan_to_num(X) + laplace) / observed
    prior = onehot.mean(axis=0)
    post = np.empty((len(newdata), len(levels)))
    for i in range(len(levels)):
        term = -lam[i] + newdata * np.log(lam[i]) - gammaln(newdata + 1)
        term[np.isnan(newdata)] = 0.0
        assert term.min() > np.log(np.finfo(float).tiny)
        post[:, i] = term.sum(axis=1) + np.log(prior[i])
    return 1.0 / np.exp(post[:, None, :] - post[:, :, None]).sum(axis=2)


# -- Weka ------------------------------------------------------------------------------

WEKA_JAR = Path("/usr/share/java/weka.jar")

# Full-precision posteriors: Weka 3.6's own -p output rounds to 3 decimals.
_WEKA_SOURCE = """
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
        Instances rows = args.length > 2 ? new DataSource(args[2]).getDataSet() : data;
        rows.setClassIndex(rows.numAttributes() - 1);
        for (int i = 0; i < rows.numInstances(); i++) {
            double[] p = nb.distributionForInstance(rows.instance(i));
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


class Weka:
    """Weka's ``NaiveBayes`` (Debian's ``weka`` package), compiled once into
    ``folder``; each table and set of options is run once (the JVM's start-up
    dominates)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        (self.folder / "NaiveBayesPosteriors.java").write_text(_WEKA_SOURCE)
        subprocess.run(
            ["javac", "-cp", str(WEKA_JAR), "NaiveBayesPosteriors.java"],
            cwd=self.folder,
            check=True,
            capture_output=True,
            timeout=120,
        )
        self._done: dict = {}

    @classmethod
    def or_skip(cls, folder: Path) -> Weka:
        """A runner, or the test skipped where Java, its compiler or Weka is missing."""
        import pytest

        if not (shutil.which("java") and shutil.which("javac") and WEKA_JAR.exists()):
            pytest.skip("needs java, javac and Debian's weka package (/usr/share/java/weka.jar)")
        return cls(folder)

    @staticmethod
    def prior(y) -> np.ndarray:
        """Weka's class prior of labels ``y`` (0..K-1), Laplace-smoothed: ``(n_c + 1) / (n + K)``."""
        counts = np.bincount(y)
        return (counts + 1.0) / (counts.sum() + counts.size)

    def posteriors(self, X, y, options: str = "", test=None) -> np.ndarray:
        """Weka's posteriors of ``test`` (default: the training rows ``X``), one
        column a class in sorted order, after training with ``options`` (``-K``,
        ``-D``) on the numeric columns ``X`` (NaN: missing) and labels ``y``."""
        X = np.asarray(X, dtype=float)
        rows = X if test is None else np.asarray(test, dtype=float)
        key = (X.tobytes(), X.shape, np.asarray(y).tobytes(), options, rows.tobytes())
        if key not in self._done:
            classes = [f"c{c}" for c in sorted(set(np.asarray(y).tolist()))]
            train = self._arff("train.arff", X, [f"c{label}" for label in y], classes)
            args = [str(train), options]
            if test is not None:
                args.append(str(self._arff("test.arff", rows, [None] * len(rows), classes)))
            done = subprocess.run(
                ["java", "-cp", f"{WEKA_JAR}:{self.folder}", "NaiveBayesPosteriors", *args],
                check=True,
                capture_output=True,
                text=True,
                timeout=300,
            )
            lines = done.stdout.split()
            self._done[key] = np.array([[float(v) for v in line.split(",")] for line in lines])
        return self._done[key]

    def _arff(self, name: str, X: np.ndarray, labels, classes) -> Path:
        import arff

        attributes = [(f"x{j}", "NUMERIC") for j in range(X.shape[1])] + [("class", classes)]
        data = [
            [None if np.isnan(v) else float(v) for v in row] + [label]
            for row, label in zip(X, labels)
        ]
        path = self.folder / name
        path.write_text(arff.dumps({"relation": "data", "attributes": attributes, "data": data}))
        return path


def overconfident_scores(n, k, seed, sharpness=3.0):
    """Log posteriors (n, k) of an over-confident model, and labels drawn from a softer one."""
    from nbcli.models import log_normalise

    rng = np.random.default_rng(seed)
    z = log_normalise(rng.normal(size=(n, k)) * sharpness)
    soft = np.exp(log_normalise(z / 2.5))
    y = (soft.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1)
    return z, np.minimum(y, k - 1)
