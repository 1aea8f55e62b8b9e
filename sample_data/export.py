"""Export the sample data sets to CSV with fixed stratified splits.

Three groups (``--sets``, default all):

* ``uci``: scikit-learn's bundled iris, wine, breast_cancer and digits, as
  ``<name>_train.csv`` (60%), ``<name>_calib.csv`` (20%) and
  ``<name>_test.csv`` (20%). Each file has a header row, snake_case feature
  columns, and the class label last in a column named ``label``.
* ``penguins``: Palmer penguins from the ``palmerpenguins`` package, as
  shipped (``penguins.csv``: text columns, ``NA`` for missing values), and
  ``penguins_train.csv`` (70%) / ``penguins_test.csv`` (30%), stratified by
  ``species``, each row written exactly as in the shipped file.
* ``austen``: paragraphs of Jane Austen's six novels from the Debian package
  ``r-cran-janeaustenr`` (read with the ``rdata`` package), labelled by
  novel: ``austen_train.csv`` / ``austen_test.csv`` with columns ``text`` and
  ``label`` (see ``sample_data/README.md``).

The output is a pure function of the bundled data and ``SEED``: running the
script again reproduces the same bytes. Floats are written in Python's
shortest round-trip form (``repr``), so ``0.1`` stays ``0.1``; the digits'
pixel counts are written as integers.

Usage::

    python sample_data/export.py                     # all, into sample_data/
    python sample_data/export.py --out DIR --sets uci,penguins
    python sample_data/export.py --austen-dir /usr/lib/R/site-library/janeaustenr

scikit-learn, palmerpenguins and rdata are needed here only; nbcli itself
does not depend on them.
"""

from __future__ import annotations

import argparse
import bz2
import csv
import gzip
import lzma
import re
import struct
import sys
import zlib
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
    """Write the three split files of every UCI sample data set into ``out_dir``.

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


# -- Palmer penguins -----------------------------------------------------------

PENGUINS_TEST_SIZE = 0.3


def penguins_source() -> Path:
    """The CSV file that the ``palmerpenguins`` package ships."""
    import palmerpenguins

    return Path(palmerpenguins.__file__).resolve().parent / "data" / "penguins.csv"


def export_penguins(out_dir: Path, seed: int = SEED) -> list[Path]:
    """Write ``penguins.csv`` (the shipped bytes) and its stratified 70/30 split.

    The split is a stratified ``train_test_split`` on ``species`` with
    ``random_state=seed``; rows keep the shipped file's text (``NA``,
    integers without a decimal point), in shuffled order.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    raw = penguins_source().read_bytes()
    if b"\r" in raw or not raw.endswith(b"\n"):
        raise ValueError("penguins.csv: expected \\n line endings")
    header, *lines = raw.decode("utf-8").splitlines()
    species = np.array([line.split(",", 1)[0] for line in lines])
    idx = np.arange(len(lines))
    train, test = train_test_split(
        idx, test_size=PENGUINS_TEST_SIZE, stratify=species, random_state=seed
    )
    written = [out_dir / "penguins.csv"]
    written[0].write_bytes(raw)
    for split, rows in (("train", train), ("test", test)):
        path = out_dir / f"penguins_{split}.csv"
        path.write_text("\n".join([header, *(lines[i] for i in rows)]) + "\n", encoding="utf-8")
        written.append(path)
    return written


# -- Jane Austen's novels ------------------------------------------------------

AUSTEN_DIR = Path("/usr/lib/R/site-library/janeaustenr")
# R object name in the package -> label.
AUSTEN_NOVELS = {
    "sensesensibility": "sense_and_sensibility",
    "prideprejudice": "pride_and_prejudice",
    "mansfieldpark": "mansfield_park",
    "emma": "emma",
    "northangerabbey": "northanger_abbey",
    "persuasion": "persuasion",
}
AUSTEN_PER_NOVEL = 200
AUSTEN_MIN_WORDS = 8
AUSTEN_TEST_SIZE = 0.3


def _unpack_lazyload(blob: bytes) -> bytes:
    """One object of an R lazy-load database: 4-byte length, a type byte, the data.

    The type byte is R's: ``Z`` zlib, ``2`` bzip2, ``X`` xz, ``0`` none
    (``R_decompress3`` in R's ``src/main/serialize.c``).
    """
    size = struct.unpack(">I", blob[:4])[0]
    kind, data = blob[4:5], blob[5:]
    inflate = {b"Z": zlib.decompress, b"2": bz2.decompress, b"X": lzma.decompress}
    out = inflate[kind](data) if kind in inflate else data if kind == b"0" else None
    if out is None:
        out = zlib.decompress(blob[4:])  # R's older format: zlib without a type byte
    if len(out) != size:
        raise ValueError("R lazy-load object: wrong length after decompression")
    return out


def austen_lines(source_dir: Path = AUSTEN_DIR) -> dict[str, list[str]]:
    """The lines of each novel, as ``janeaustenr`` holds them (R character vectors)."""
    import warnings

    from rdata.conversion import convert
    from rdata.parser import parse_data

    base = source_dir / "data" / "Rdata"
    out = {}
    with warnings.catch_warnings():
        # rdata says "Unknown file type: assumed RDS" for the bare serialised objects.
        warnings.simplefilter("ignore", UserWarning)
        index = convert(parse_data(gzip.decompress(base.with_suffix(".rdx").read_bytes())))
        db = base.with_suffix(".rdb").read_bytes()
        for name in AUSTEN_NOVELS:
            offset, length = (int(v) for v in index["variables"][name])
            lines = convert(parse_data(_unpack_lazyload(db[offset : offset + length])))
            out[name] = [str(v) for v in lines]
    return out


def paragraphs(lines: list[str]) -> list[str]:
    """Runs of non-blank lines joined by one space; headings and short runs dropped.

    A paragraph is kept when it has at least ``AUSTEN_MIN_WORDS`` words,
    which leaves out chapter headings and title pages.
    """
    out, run = [], []
    for line in [*lines, ""]:
        text = line.strip()
        if text:
            run.append(text)
        elif run:
            para = " ".join(run)
            if len(para.split()) >= AUSTEN_MIN_WORDS:
                out.append(para)
            run = []
    return out


def export_austen(out_dir: Path, source_dir: Path = AUSTEN_DIR, seed: int = SEED) -> list[Path]:
    """Write ``austen_train.csv`` / ``austen_test.csv``: paragraphs labelled by novel.

    ``AUSTEN_PER_NOVEL`` paragraphs are drawn from each novel without
    replacement (``numpy.random.default_rng(seed)``), then split 70/30
    stratified by novel with ``train_test_split(random_state=seed)``.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for name, lines in austen_lines(source_dir).items():
        paras = paragraphs(lines)
        pick = np.sort(rng.choice(len(paras), size=AUSTEN_PER_NOVEL, replace=False))
        texts.extend(paras[i] for i in pick)
        labels.extend([AUSTEN_NOVELS[name]] * AUSTEN_PER_NOVEL)
    labels_arr = np.array(labels)
    train, test = train_test_split(
        np.arange(len(texts)), test_size=AUSTEN_TEST_SIZE, stratify=labels_arr, random_state=seed
    )
    written = []
    for split, rows in (("train", train), ("test", test)):
        path = out_dir / f"austen_{split}.csv"
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(["text", TARGET])
            for i in rows:
                writer.writerow([texts[i], labels_arr[i]])
        written.append(path)
    return written


SETS = ("uci", "penguins", "austen")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent,
        metavar="DIR",
        help="folder to write the CSV files into (default: the folder of this script)",
    )
    parser.add_argument(
        "--sets",
        default=",".join(SETS),
        help=f"comma-separated groups to write, of {', '.join(SETS)} (default: all)",
    )
    parser.add_argument(
        "--austen-dir",
        type=Path,
        default=AUSTEN_DIR,
        metavar="DIR",
        help=f"the installed janeaustenr R package (default: {AUSTEN_DIR})",
    )
    args = parser.parse_args(argv)
    chosen = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = sorted(set(chosen) - set(SETS))
    if unknown:
        parser.error(f"unknown set(s) {', '.join(unknown)}; choose from {', '.join(SETS)}")
    written = []
    if "uci" in chosen:
        written += export(args.out)
    if "penguins" in chosen:
        written += export_penguins(args.out)
    if "austen" in chosen:
        written += export_austen(args.out, args.austen_dir)
    for path in written:
        print(path, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
