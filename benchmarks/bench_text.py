#!/usr/bin/env python
"""Time nbcli's text path against scikit-learn's CountVectorizer + MultinomialNB.

Run by hand (not part of the test suite)::

    python benchmarks/bench_text.py                 # 200,000 training documents
    python benchmarks/bench_text.py --docs 50000 --repeat 1

The documents are generated: ``--words`` words per document drawn from a
Zipf(1) law over about 75,000 made-up words of 3-8 letters (so the
vocabulary of 200,000 documents has 50,000+ terms), with two classes drawn
at random; a quarter as many held-out documents are scored. Both sides do
the same job: tokenise and count the training documents, fit a multinomial
model, tokenise the held-out documents over the fitted vocabulary and
compute posteriors. nbcli's side is the library path (``TextVectorizer``
statistics, ``MultinomialNB.from_stats``, sparse scoring), with each
tokenising engine. Each time is the median of ``--repeat`` runs; the
posteriors of both sides are compared.

``--cli`` also runs the command line against the same job as a script
(pandas reads the CSV, ``CountVectorizer`` + ``MultinomialNB``, posteriors
written as CSV), each in its own process, with wall time and peak resident
memory (``/usr/bin/time``); ``--csv-mb 50,100`` then measures ``nbcli fit``'s
peak memory on generated text CSVs of those sizes, to see how it grows.
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


def make_documents(n_docs: int, n_words: int, seed: int):
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lexicon = np.unique(
        np.array(["".join(rng.choice(letters, size=rng.integers(3, 9))) for _ in range(80_000)])
    )
    p = 1.0 / np.arange(1, lexicon.size + 1)
    p /= p.sum()
    words = lexicon[rng.choice(lexicon.size, size=(n_docs, n_words), p=p)]
    return [" ".join(row) for row in words], rng.integers(0, 2, size=n_docs)


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


SKLEARN_SCRIPT = """
import sys, numpy as np, pandas as pd
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.naive_bayes import MultinomialNB
train, test, out = sys.argv[1:4]
d = pd.read_csv(train)
vec = CountVectorizer()
model = MultinomialNB().fit(vec.fit_transform(d.text.fillna("")), d.label)
t = pd.read_csv(test)
p = model.predict_proba(vec.transform(t.text.fillna("")))
pd.DataFrame(p, columns=[f"proba_{c}" for c in model.classes_]).to_csv(out, index=False)
"""


def measured(cmd) -> tuple[float, float]:
    """Wall seconds and peak resident memory (MB) of one process."""
    t = time.perf_counter()
    run = subprocess.run(
        ["/usr/bin/time", "-f", "%M", *map(str, cmd)], capture_output=True, text=True
    )
    secs = time.perf_counter() - t
    if run.returncode != 0:
        raise RuntimeError(run.stderr)
    return secs, int(run.stderr.strip().splitlines()[-1]) / 1024


def write_csv(path: Path, docs, labels) -> None:
    import pandas as pd

    pd.DataFrame({"text": docs, "label": np.asarray(labels).astype(str)}).to_csv(path, index=False)


def run_cli(args, train, y, test, y_test) -> None:
    nbcli = [sys.executable, "-m", "nbcli"]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        write_csv(d / "train.csv", train, y)
        write_csv(d / "test.csv", test, y_test)
        size = (d / "train.csv").stat().st_size / 2**20
        print(f"\ntraining CSV {size:.1f} MB; medians of {args.repeat} runs", file=sys.stderr)
        rows = {
            "scikit-learn script (fit + predict)": [
                sys.executable,
                "-c",
                SKLEARN_SCRIPT,
                d / "train.csv",
                d / "test.csv",
                d / "sk.csv",
            ],
            "nbcli fit --text text": [
                *nbcli,
                "fit",
                "--data",
                d / "train.csv",
                "--model",
                "multinomial",
                "--text",
                "text",
                "--target",
                "label",
                "-o",
                d / "m.npz",
                "-q",
            ],
            "nbcli predict --proba": [
                *nbcli,
                "predict",
                "--model",
                d / "m.npz",
                "--data",
                d / "test.csv",
                "--proba",
                "-o",
                d / "nb.csv",
                "-q",
            ],
        }
        results = {}
        for name, cmd in rows.items():
            runs = [measured(cmd) for _ in range(args.repeat)]
            results[name] = (
                statistics.median(r[0] for r in runs),
                statistics.median(r[1] for r in runs),
            )
        import pandas as pd

        sk = pd.read_csv(d / "sk.csv").to_numpy()
        nb = pd.read_csv(d / "nb.csv").iloc[:, 1:].to_numpy()
        base_s, base_mb = results["scikit-learn script (fit + predict)"]
        print("\n| process | seconds | peak MB | x scikit-learn time | x scikit-learn memory |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for name, (secs, mb) in results.items():
            print(f"| {name} | {secs:.2f} | {mb:.0f} | {secs / base_s:.2f} | {mb / base_mb:.2f} |")
        fit_s = results["nbcli fit --text text"][0] + results["nbcli predict --proba"][0]
        print(f"| nbcli fit + predict | {fit_s:.2f} | | {fit_s / base_s:.2f} | |")
        print(f"\nmax abs posterior difference: {np.abs(sk - nb).max():.1e}", file=sys.stderr)
        for mb in [float(v) for v in args.csv_mb.split(",") if v]:
            n = int(args.docs * mb / size)
            docs, labels = make_documents(n, args.words, args.seed + 1)
            write_csv(d / "big.csv", docs, labels)
            del docs, labels
            real = (d / "big.csv").stat().st_size / 2**20
            secs, peak = measured(
                [
                    *nbcli,
                    "fit",
                    "--data",
                    d / "big.csv",
                    "--model",
                    "multinomial",
                    "--text",
                    "text",
                    "--target",
                    "label",
                    "-o",
                    d / "big.npz",
                    "-q",
                ]
            )
            sk_secs, sk_peak = measured(
                [sys.executable, "-c", SKLEARN_SCRIPT, d / "big.csv", d / "test.csv", d / "sk.csv"]
            )
            print(
                f"| {real:.0f} MB text CSV ({n} documents) | nbcli fit {secs:.1f} s, "
                f"{peak:.0f} MB | scikit-learn script {sk_secs:.1f} s, {sk_peak:.0f} MB "
                f"| memory ratio {peak / sk_peak:.2f} |"
            )


def timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=200_000, help="training documents")
    parser.add_argument("--words", type=int, default=12, help="words per document")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--engines", default="polars,python")
    parser.add_argument("--cli", action="store_true", help="also time the command line")
    parser.add_argument("--csv-mb", default="", help="with --cli: text CSV sizes (MB) to fit")
    args = parser.parse_args(argv)
    train, y = make_documents(args.docs, args.words, args.seed)
    test = train[: args.docs // 4]
    print(f"{args.docs} training documents, {len(test)} held out", file=sys.stderr)
    base, (expected, n_terms) = timed(lambda: run_sklearn(train, y, test), args.repeat)
    print("| pipeline | seconds | x scikit-learn | max abs posterior difference |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| scikit-learn CountVectorizer + MultinomialNB | {base:.2f} | 1.00 | |")
    for engine in args.engines.split(","):
        secs, (proba, n_kept) = timed(lambda e=engine: run_nbcli(train, y, test, e), args.repeat)
        assert n_kept == n_terms
        diff = float(np.abs(proba - expected).max())
        print(f"| nbcli.text, {engine} engine | {secs:.2f} | {secs / base:.2f} | {diff:.1e} |")
    print(f"\nvocabulary: {n_terms} terms", file=sys.stderr)
    if args.cli:
        held_out, y_held_out = make_documents(len(test), args.words, args.seed + 2)
        os.environ.setdefault("PYTHONPATH", str(Path(__file__).resolve().parents[1]))
        run_cli(args, train, y, held_out, y_held_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
