#!/usr/bin/env python
"""Time the report builders and renderers against the budgets they must keep.

Run by hand (not part of the test suite, whose results must not depend on
how busy the machine is)::

    python benchmarks/bench_reports.py

Each case is timed as the best of three runs with ``time.perf_counter``;
the script prints every time beside its budget and exits 1 when one is
over it.
"""

from __future__ import annotations

import io
import sys
import time

import numpy as np
from rich.console import Console

from nbcli.render import render
from nbcli.render.tables import PIPE_WIDTH
from nbcli.reports.evaluation import build_evaluation


def _best_of(f, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - start)
    return best


def _posteriors(n: int, k: int, boost: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), y] += boost
    p = np.exp(logits)
    return y, p / p.sum(axis=1, keepdims=True)


def evaluation_10000_rows_10_classes() -> None:
    """The default evaluation (1,000 BCa resamples) of 10,000 rows and 10 classes."""
    y, p = _posteriors(10_000, 10, 2.0)
    build_evaluation(np.arange(10), y, p)


def evaluation_2000_classes() -> None:
    """5,000 rows and 2,000 classes: count tables, never whole resampled tables."""
    rng = np.random.default_rng(0)
    n, k = 5000, 2000
    y = rng.integers(0, k, n)
    p = rng.random((n, k))
    p[np.arange(n)[: n // 3], y[: n // 3]] += k
    build_evaluation(np.arange(k), y, p / p.sum(axis=1, keepdims=True))


def render_400_classes_to_a_pipe() -> None:
    """A report of 400 classes rendered for a pipe: the confusion matrix is not built."""
    rng = np.random.default_rng(0)
    k, n = 400, 800
    idx = rng.integers(0, k, n)
    p = rng.random((n, k))
    p[np.arange(n), idx] += 1.0
    report = build_evaluation(np.arange(k), idx, p / p.sum(axis=1, keepdims=True), n_resamples=0)
    console = Console(file=io.StringIO(), width=PIPE_WIDTH, color_system=None)
    for renderable in render(report):
        console.print(renderable)


#: (case, budget in seconds); the budgets the test suite used to assert.
CASES = [
    (evaluation_10000_rows_10_classes, 1.0),
    (evaluation_2000_classes, 20.0),
    (render_400_classes_to_a_pipe, 5.0),
]


def main() -> int:
    over = 0
    for case, budget in CASES:
        seconds = _best_of(case, repeat=1 if budget > 5 else 3)
        verdict = "ok" if seconds <= budget else "OVER BUDGET"
        over += seconds > budget
        print(f"{case.__name__:40s} {seconds:8.3f} s  (budget {budget:g} s)  {verdict}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
