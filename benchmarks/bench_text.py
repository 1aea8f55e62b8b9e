#!/usr/bin/env python
"""Time nbcli's text path against scikit-learn's CountVectorizer + MultinomialNB.

Run by hand (not part of the test suite)::

    python benchmarks/bench_text.py                  # 200,000 documents: library and CLI
    python benchmarks/bench_text.py --docs 50000 --repeat 1 --no-library
    python benchmarks/bench_text.py --memory 1000 --no-library --no-cli

The documents are generated: ``--words`` words per document drawn from a
Zipf(1) law over about 80,000 made-up words of 3-8 letters (so the
vocabulary of 200,000 documents has 70,000+ terms), with two classes drawn
at random; a quarter as many held-out documents, drawn from the same
words, are scored. Both sides do the same job: tokenise and count the
training documents, fit a multinomial model, tokenise the held-out
documents over the fitted vocabulary and compute posteriors.

Three measurements, each printed as a table:

* **library**: in one process, ``nbcli.text`` (``TextVectorizer``
  statistics, ``MultinomialNB.from_stats``, sparse scoring) with each
  tokenising engine against the scikit-learn pipeline on the same lists of
  documents, fit and predict together; medians of ``--repeat`` runs.
* **cli** (the issue's figure): whole processes on the same CSV files.
  ``nbcli fit --text text`` against a script that reads the CSV with
  pandas, fits ``CountVectorizer`` + ``MultinomialNB`` and pickles the
  pipeline; ``nbcli predict --proba -o`` against a script that unpickles
  it, reads the held-out CSV, and writes the posteriors as CSV. The runs
  alternate (the four commands in turn, ``--repeat`` rounds after one
  untimed round); each command's median wall time and peak resident
  memory, and the ratios fit, predict and fit + predict. The posteriors
  of both are compared (they must agree to 1e-8).
* **memory** (``--memory MB``): ``nbcli fit``'s peak resident memory on a
  generated text CSV of about that many MB (written to ``--tmp`` and
  deleted afterwards); the issue's target is under 1 GB for a 1 GB file.

Peak memory is the process's maximum resident set (GNU time's ``%M``, so
``/usr/bin/time`` must exist), which includes the interpreter and its
libraries (about 150 MB for either side).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from nbcli.models import MultinomialNB
from nbcli.text import TextVectorizer

LETTERS = np.array(list("abcdefghijklmnopqrstuvwxyz"))


def make_lexicon(seed: int, size: int = 80_000) -> np.ndarray:
    """Distinct made-up words of 3 to 8 letters, sorted (so Zipf ranks favour 'a...')."""
    import polars as pl

    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, 9, size=size)
    letters = pl.Series(LETTERS[rng.integers(0, 26, size=int(lengths.sum()))])
    words = (
        pl.DataFrame({"w": np.repeat(np.arange(size), lengths), "c": letters})
        .group_by("w", maintain_order=True)
        .agg(pl.col("c").str.join(""))
        .get_column("c")
    )
    return np.unique(words.to_numpy().astype(str))


def make_documents(lexicon: np.ndarray, n_docs: int, n_words: int, rng):
    """``n_docs`` documents of ``n_words`` Zipf-drawn words (a polars Series) and 0/1 labels."""
    import polars as pl

    cdf = np.cumsum(1.0 / np.arange(1, lexicon.size + 1))
    cdf /= cdf[-1]
    draws = np.searchsorted(cdf, rng.random(n_docs * n_words), side="right")
    words = pl.Series(lexicon).gather(draws).reshape((n_docs, n_words))
    return words.arr.join(" ").alias("text"), rng.integers(0, 2, size=n_docs)


def write_csv(path: Path, docs, labels) -> None:
    import polars as pl

    pl.DataFrame({"text": docs, "label": np.asarray(labels).astype(str)}).write_csv(path)


def write_sized_csv(path: Path, megabytes: float, n_words: int, seed: int) -> int:
    """A text CSV of about ``megabytes`` MB, written in blocks; returns its documents."""
    import polars as pl

    lexicon = make_lexicon(seed)
    rng = np.random.default_rng(seed + 1)
    n = 0
    with open(path, "wb") as f:
        f.write(b"text,label\n")
        while f.tell() < megabytes * 2**20:
            block = min(200_000, max(1000, int((megabytes * 2**20 - f.tell()) / (7 * n_words))))
            docs, labels = make_documents(lexicon, block, n_words, rng)
            frame = pl.DataFrame({"text": docs, "label": labels.astype(str)})
            frame.write_csv(f, include_header=False)
            n += block
    return n


# -- library -------------------------------------------------------------------------


def run_sklearn(train, y, test):
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.naive_bayes import MultinomialNB as SkMultinomialNB

    vec = CountVectorizer()
    model = SkMultinomialNB().fit(vec.fit_transform(train), y)
    return model.predict_proba(vec.transform(test)), len(vec.vocabulary_)


def run_nbcli(train, y, test, engine):
    vec = TextVectorizer(engine=engine)
    classes, y_idx = np.unique(y, return_inverse=True)
    kept = vec.finalize(vec.accumulate(train, y_idx, len(classes)))
    model = MultinomialNB.from_stats(vec.stats_.class_counts(kept), classes, {}, len(kept))
    return model.predict_proba(vec.transform(test)), len(kept)


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def run_library(args, train, y, test) -> None:
    # Imported before the clock starts: the in-process figure leaves out start-up.
    import sklearn.feature_extraction.text  # noqa: F401
    import sklearn.naive_bayes  # noqa: F401

    print(f"\n## library: {len(train)} training documents, {len(test)} held out")
    print(f"medians of {args.repeat} runs, fit + predict in one process\n")
    base, (expected, n_terms) = timed(lambda: run_sklearn(train, y, test), args.repeat)
    print("| pipeline | seconds | x scikit-learn | max abs posterior difference |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| scikit-learn CountVectorizer + MultinomialNB | {base:.2f} | 1.00 | |")
    for engine in args.engines.split(","):
        secs, (proba, n_kept) = timed(lambda e=engine: run_nbcli(train, y, test, e), args.repeat)
        assert n_kept == n_terms, (n_kept, n_terms)
        diff = float(np.abs(proba - expected).max())
        print(f"| nbcli.text, {engine} engine | {secs:.2f} | {secs / base:.2f} | {diff:.1e} |")
    print(f"\nvocabulary: {n_terms} terms")


# -- command line ------------------------------------------------------------------------

SKLEARN_FIT = """
import pickle, sys, pandas as pd
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.naive_bayes import MultinomialNB
from sklearn.pipeline import make_pipeline
train, out = sys.argv[1:3]
d = pd.read_csv(train, dtype={"label": str}, keep_default_na=False)
model = make_pipeline(CountVectorizer(), MultinomialNB()).fit(d["text"], d["label"])
with open(out, "wb") as f:
    pickle.dump(model, f)
"""

SKLEARN_PREDICT = """
import pickle, sys, pandas as pd
model_path, test, out = sys.argv[1:4]
with open(model_path, "rb") as f:
    model = pickle.load(f)
t = pd.read_csv(test, keep_default_na=False)
p = model.predict_proba(t["text"])
frame = pd.DataFrame(p, columns=[f"proba_{c}" for c in model.classes_])
frame.insert(0, "prediction", model.classes_[p.argmax(axis=1)])
frame.to_csv(out, index=False)
"""


def measured(cmd) -> tuple[float, float]:
    """Wall seconds and peak resident memory (MB) of one process.

    The process is started by GNU time (``/usr/bin/time``), not by this
    one: Linux carries a process's peak resident memory across ``exec``,
    so a child forked from this interpreter would report at least this
    interpreter's size.
    """
    with tempfile.NamedTemporaryFile(suffix=".rss") as rss:
        t = time.perf_counter()
        run = subprocess.run(
            ["/usr/bin/time", "-o", rss.name, "-f", "%M", *map(str, cmd)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        secs = time.perf_counter() - t
        if run.returncode != 0:
            raise RuntimeError(f"{[str(c) for c in cmd[:4]]} failed:\n{run.stderr}")
        # GNU time's %M is the peak resident set in kilobytes.
        return secs, int(Path(rss.name).read_text().split()[-1]) / 1024


def run_cli(args, lexicon, train, y, tmp: Path) -> None:
    import polars as pl

    held_out, y_held_out = make_documents(
        lexicon, max(1, len(train) // 4), args.words, np.random.default_rng(args.seed + 2)
    )
    write_csv(tmp / "train.csv", train, y)
    write_csv(tmp / "test.csv", held_out, y_held_out)
    size = (tmp / "train.csv").stat().st_size / 2**20
    py = sys.executable
    nbcli = [py, "-m", "nbcli"]
    commands = {
        "sk fit": [py, "-c", SKLEARN_FIT, tmp / "train.csv", tmp / "sk.pkl"],
        "nbcli fit": [
            *nbcli,
            "fit",
            "--data",
            tmp / "train.csv",
            "--model",
            "multinomial",
            "--text",
            "text",
            "--target",
            "label",
            "-o",
            tmp / "m.npz",
            "-q",
        ],
        "sk predict": [py, "-c", SKLEARN_PREDICT, tmp / "sk.pkl", tmp / "test.csv", tmp / "sk.csv"],
        "nbcli predict": [
            *nbcli,
            "predict",
            "--model",
            tmp / "m.npz",
            "--data",
            tmp / "test.csv",
            "--proba",
            "-o",
            tmp / "nb.csv",
            "-q",
        ],
    }
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for round_ in range(args.repeat + 1):
        for name, cmd in commands.items():
            result = measured(cmd)
            if round_:  # the first round warms the disk cache and compiled files
                runs[name].append(result)
    med = {
        name: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs))
        for name, rs in runs.items()
    }
    sk = pl.read_csv(tmp / "sk.csv").drop("prediction").to_numpy()
    nb = pl.read_csv(tmp / "nb.csv").drop("prediction").to_numpy()
    diff = float(np.abs(sk - nb).max())
    load = os.getloadavg()[0]
    print(
        f"\n## command line: {len(train)} training documents ({size:.1f} MB CSV), "
        f"{held_out.len()} held out"
    )
    print(f"medians of {args.repeat} alternating runs after a warm-up; load average {load:.1f}\n")
    print("| command | seconds | peak MB | scikit-learn script seconds | peak MB | x time |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for step in ("fit", "predict"):
        (a, am), (b, bm) = med[f"nbcli {step}"], med[f"sk {step}"]
        print(f"| nbcli {step} | {a:.2f} | {am:.0f} | {b:.2f} | {bm:.0f} | {a / b:.2f} |")
    ours = med["nbcli fit"][0] + med["nbcli predict"][0]
    theirs = med["sk fit"][0] + med["sk predict"][0]
    print(f"| fit + predict | {ours:.2f} | | {theirs:.2f} | | {ours / theirs:.2f} |")
    print(f"\nmax abs posterior difference: {diff:.1e}")
    if not diff <= 1e-8:
        raise SystemExit(f"the posteriors disagree by {diff:.1e} (more than 1e-8)")


def run_memory(args, tmp: Path) -> None:
    print("\n## memory: nbcli fit on generated text CSVs\n")
    print("| CSV MB | documents | seconds | peak MB | peak MB per CSV MB |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for mb in [float(v) for v in args.memory.split(",") if v]:
        path = tmp / "sized.csv"
        try:
            n = write_sized_csv(path, mb, args.words, args.seed + 10)
            real = path.stat().st_size / 2**20
            secs, peak = measured(
                [
                    sys.executable,
                    "-m",
                    "nbcli",
                    "fit",
                    "--data",
                    path,
                    "--model",
                    "multinomial",
                    "--text",
                    "text",
                    "--target",
                    "label",
                    "-o",
                    tmp / "sized.npz",
                    "-q",
                ]
            )
        finally:
            path.unlink(missing_ok=True)
            (tmp / "sized.npz").unlink(missing_ok=True)
        print(f"| {real:.0f} | {n} | {secs:.1f} | {peak:.0f} | {peak / real:.2f} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=200_000, help="training documents")
    parser.add_argument("--words", type=int, default=12, help="words per document")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--engines", default="polars,python", help="library engines")
    parser.add_argument("--no-library", action="store_true", help="skip the library timing")
    parser.add_argument("--no-cli", action="store_true", help="skip the command-line timing")
    parser.add_argument("--cli", action="store_true", help=argparse.SUPPRESS)  # the default now
    parser.add_argument(
        "--memory", default="", help="text CSV sizes in MB (e.g. 1000) to fit for peak memory"
    )
    parser.add_argument("--tmp", default=None, help="folder for the generated files")
    args = parser.parse_args(argv)
    # Child processes import this checkout's nbcli, compiled as an installed
    # package is (the warm-up round writes the bytecode scikit-learn has).
    os.environ.setdefault("PYTHONPATH", str(Path(__file__).resolve().parents[1]))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    lexicon = make_lexicon(args.seed)
    train_s, y = make_documents(lexicon, args.docs, args.words, np.random.default_rng(args.seed))
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        if not args.no_library:
            test_s, _ = make_documents(
                lexicon, max(1, args.docs // 4), args.words, np.random.default_rng(args.seed + 1)
            )
            run_library(args, train_s.to_list(), y, test_s.to_list())
        if not args.no_cli:
            run_cli(args, lexicon, train_s, y, Path(tmp))
        if args.memory:
            run_memory(args, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
