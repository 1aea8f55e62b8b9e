"""Part files for the engine tests: small CSV and NPZ parts and a reader for them.

The reader stands in for nbcli's own: it reads a part with NumPy (label in
the first CSV column, features after it; ``X``/``y`` in an NPZ) and raises
an ``NbcliError`` naming the file and data row of the first bad cell.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from nbcli.errors import NbcliError
from nbcli.models import (
    BernoulliNB,
    GaussianNB,
    LinearDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
)

# Uneven part sizes, one of them a single row.
PART_SIZES = (37, 1, 120, 64, 15, 83)


class BadRowError(NbcliError):
    """A subclass, to check that the exception type survives the trip."""


def read_part(path):
    """Yield the part's rows as ``(X, y)`` chunks of at most 50 rows."""
    path = str(path)
    if path.endswith(".npz"):
        with np.load(path, allow_pickle=False) as f:
            X, y = f["X"], f["y"]
    else:
        lines = Path(path).read_text().splitlines()[1:]
        rows = []
        for r, line in enumerate(lines, start=1):
            try:
                rows.append([float(v) for v in line.split(",")])
            except ValueError:
                raise BadRowError(
                    f"{path}: row {r}: a cell is not a number; fix or remove that row"
                ) from None
        data = np.array(rows).reshape(len(rows), -1) if rows else np.zeros((0, 1))
        y, X = data[:, 0].astype(np.int64), data[:, 1:]
    for i in range(0, len(y), 50):
        yield X[i : i + 50], y[i : i + 50]


#: Feature kinds whose columns are whole-number counts (category codes among them).
COUNT_KINDS = ("multinomial", "poisson", "categorical")


def make_data(model, n: int, seed: int = 0, d: int = 3, k: int = 3):
    """Training rows ``(X, y)`` for ``model`` (an estimator or its class), classes
    0..k-1 all present: columns of the kind it declares for a numeric column
    (``feature_kinds[0]``), each kind's counts or values depending on the class."""
    kind = model.feature_kinds[0]
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    own = y[:, None] == np.arange(d)[None, :] % k  # the columns of each row's class
    if kind in COUNT_KINDS:
        return rng.poisson(1.0 + 2.0 * own, (n, d)).astype(float), y
    if kind == "bernoulli":
        return (rng.random((n, d)) < 0.2 + 0.6 * own).astype(float), y
    # Mean 1e6 and unit spread: the case E[x^2] - E[x]^2 gets wrong. Class 1's
    # first two columns are correlated: the classes' covariances differ.
    X = 1e6 + rng.standard_normal((n, d)) + 0.7 * y[:, None]
    X[:, 0] += 0.5 * (X[:, 1] - 1e6) * (y == 1)
    return X, y


ESTIMATORS = {
    "gaussian": lambda: GaussianNB(),
    "multinomial": lambda: MultinomialNB(alpha=0.5),
    "bernoulli": lambda: BernoulliNB(alpha=1.0, binarize=None),
    "lda": lambda: LinearDiscriminantAnalysis(),
    "lda-shrinkage": lambda: LinearDiscriminantAnalysis(shrinkage="auto"),
    "qda": lambda: QuadraticDiscriminantAnalysis(reg_param=0.01),
}


def write_parts(folder, X, y, sizes=PART_SIZES, fmt="csv"):
    """Split rows into parts of ``sizes`` (in order); returns the paths in part order."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths, start = [], 0
    for i, size in enumerate(sizes):
        Xi, yi = X[start : start + size], y[start : start + size]
        start += size
        # CSV and NPZ alternate, so both readers are exercised.
        kind = fmt if fmt != "mixed" else ("npz" if i % 2 else "csv")
        path = folder / f"part-{i:02d}.{kind}"
        if kind == "npz":
            np.savez(path, X=Xi, y=yi)
        else:
            # %.17g reads back to the same float64.
            body = "\n".join(
                ",".join([str(int(label))] + [f"{v:.17g}" for v in row])
                for label, row in zip(yi, Xi)
            )
            path.write_text("label," + ",".join(f"x{j}" for j in range(X.shape[1])) + "\n" + body)
        paths.append(str(path))
    assert start == len(y)
    return paths


def predict_part(index, path, model):
    """Score one part with ``model`` and write ``<name>.pred.csv`` beside it, atomically."""
    X = np.concatenate([X for X, _ in read_part(path)])
    proba = model.predict_proba(X)
    out = Path(path).with_suffix(".pred.csv")
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    np.savetxt(tmp, proba, delimiter=",", fmt="%.17g")
    os.replace(tmp, out)
    return len(X)
