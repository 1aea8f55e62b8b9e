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
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

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
    return 0


if __name__ == "__main__":
    sys.exit(main())
