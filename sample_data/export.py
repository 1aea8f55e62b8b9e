"""Export scikit-learn's bundled UCI data sets to CSV with a fixed stratified split.

Writes ``<name>_train.csv`` (60%), ``<name>_calib.csv`` (20%) and
``<name>_test.csv`` (20%) for iris, wine, breast_cancer and digits. Each file
has a header row, snake_case feature columns, and the class label last in a
column named ``label``.

The output is a pure function of the bundled data and ``SEED``: running the
script again reproduces the same bytes. Floats are written in Python's
shortest round-trip form (``repr``), so ``0.1`` stays ``0.1``; the digits'
pixel counts are written as integers.

Usage::

    python sample_data/export.py            # into sample_data/
    python sample_data/export.py --out DIR

scikit-learn is needed here only; nbcli itself does not depend on it.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn import datasets
from sklearn.model_selection import train_test_split

SEED = 0
SPLITS = ("train", "calib", "test")
TARGET = "label"


@dataclass(frozen=True)
class SampleDataset:
    """One bundled data set and how its labels and features are written.

    ``loader`` is a ``sklearn.datasets.load_*`` function. With
    ``named_labels`` the label column holds ``target_names[y]`` (strings such as
    ``setosa``); otherwise the integer target itself. With ``integer_features``
    every feature value is written as an integer (the digits' pixel counts).
    """

    name: str
    loader: Callable
    named_labels: bool
    integer_features: bool


SAMPLE_DATASETS = (
    SampleDataset("iris", datasets.load_iris, named_labels=True, integer_features=False),
    SampleDataset("wine", datasets.load_wine, named_labels=True, integer_features=False),
    SampleDataset(
        "breast_cancer", datasets.load_breast_cancer, named_labels=True, integer_features=False
    ),
    SampleDataset("digits", datasets.load_digits, named_labels=False, integer_features=True),
)


def snake_case(name: str) -> str:
    """Column name in lower snake_case: ``"sepal length (cm)"`` -> ``"sepal_length_cm"``.

    Every run of characters other than letters and digits becomes one
    underscore (so ``od280/od315_of_diluted_wines`` -> ``od280_od315_of_diluted_wines``).

    Raises
    ------
    ValueError
        If nothing is left of the name.
    """
    out = re.sub(r"[^0-9a-z]+", "_", name.strip().lower()).strip("_")
    if not out:
        raise ValueError(f"column name {name!r} has no letters or digits")
    return out


def load(spec: SampleDataset) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Feature names, features ``(n_samples, n_features)`` and labels ``(n_samples,)``.

    Labels are strings for ``named_labels`` data sets and integers otherwise.

    Raises
    ------
    ValueError
        If two feature names collide after conversion to snake_case, or if
        ``integer_features`` is set and a value is not an integer.
    """
    bunch = spec.loader()
    names = [snake_case(str(n)) for n in bunch.feature_names]
    if len(set(names)) != len(names) or TARGET in names:
        raise ValueError(f"{spec.name}: feature names collide after snake_case: {names}")
    X = np.asarray(bunch.data, dtype=np.float64)
    if spec.integer_features and not np.array_equal(X, np.round(X)):
        raise ValueError(f"{spec.name}: integer_features is set but a value is not an integer")
    y = np.asarray(bunch.target)
    labels = np.asarray(bunch.target_names)[y] if spec.named_labels else y
    return names, X, labels


def split_indices(y: np.ndarray, seed: int = SEED) -> dict[str, np.ndarray]:
    """Row indices of a stratified 60/20/20 split into train, calib and test.

    Two stratified ``train_test_split`` calls: 40% is held out from the whole,
    then the held-out rows are halved (the second half goes to test, which
    gets the extra row when the count is odd). Within each part the rows are
    in shuffled order, as ``train_test_split`` returns them.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Class labels to stratify on.

    Returns
    -------
    dict mapping ``"train"``, ``"calib"``, ``"test"`` to integer index arrays;
    together they hold every index ``0 .. n_samples - 1`` exactly once.
    """
    idx = np.arange(len(y))
    train, rest = train_test_split(idx, test_size=0.4, stratify=y, random_state=seed)
    calib, test = train_test_split(rest, test_size=0.5, stratify=y[rest], random_state=seed)
    return {"train": train, "calib": calib, "test": test}


def format_value(value: float, integer: bool) -> str:
    """Text of one feature value: shortest round-trip float, or an integer."""
    if integer:
        return str(int(value))
    return repr(float(value))


def write_csv(
    path: Path, names: list[str], X: np.ndarray, labels: np.ndarray, integer_features: bool
) -> None:
    """Write ``X`` (n_samples, n_features) and ``labels`` (n_samples,) to ``path``.

    UTF-8, ``\\n`` line endings, header row with ``label`` as the last column.
    """
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow([*names, TARGET])
        for row, label in zip(X, labels):
            writer.writerow([*(format_value(v, integer_features) for v in row), str(label)])


def export(out_dir: Path, seed: int = SEED) -> list[Path]:
    """Write the three split files of every sample data set into ``out_dir``.

    Returns the paths written, in the order data set, then train/calib/test.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for spec in SAMPLE_DATASETS:
        names, X, labels = load(spec)
        for split, rows in split_indices(labels, seed).items():
            path = out_dir / f"{spec.name}_{split}.csv"
            write_csv(path, names, X[rows], labels[rows], spec.integer_features)
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent,
        metavar="DIR",
        help="folder to write the CSV files into (default: the folder of this script)",
    )
    args = parser.parse_args(argv)
    for path in export(args.out):
        print(path, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
