#!/usr/bin/env python
"""Time nbcli's numerical core against scikit-learn on the same arrays.

Run by hand (not part of the test suite)::

    python benchmarks/bench_core.py              # n = 1,000,000, d = 100, k = 10
    python benchmarks/bench_core.py --quick      # n = 100,000
    python benchmarks/bench_core.py --cases gaussian,lda
    python benchmarks/bench_core.py --quick --targets   # only the figures with targets

Every measurement is the median of several runs timed with
``time.perf_counter`` (5, or 3 when one run takes longer than
``--slow`` seconds): shared machines are noisy. Alongside each estimator the
script times the machine's floors on the same array: one pass reading it
(``X.sum()``), one copy, and the bare matrix product ``X @ W`` with ``W`` of
shape (d, k), which is all an affine model's scoring has to do. QDA's floor
is a bare product of its flop count, ``X @ M`` with ``M`` of shape (d, k d)
in row blocks; the evaluate row times the report's bootstrap (1,000
resamples) against ``predict_proba`` of the same rows. See
benchmarks/README.md for what each ratio means.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass

import numpy as np

import nbcli.models as nb

CASES = (
    "floor",
    "gaussian",
    "gaussian-784",
    "multinomial",
    "bernoulli",
    "lda",
    "qda",
    "evaluate",
)


@dataclass
class Timing:
    median: float
    best: float


@dataclass
class Row:
    case: str
    op: str
    shape: str
    ours: Timing
    theirs: Timing | None = None
    floor: Timing | None = None  # bare X @ W of the same shape, timed in the same rounds
    target: str = ""
    met: bool | None = None


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def time_in_turns(
    fns: dict, repeat: int, slow: float, keep=(), clock=time.perf_counter
) -> tuple[dict, dict]:
    """Time of each ``fns[name]()`` by ``clock``: median and fastest of several rounds.

    The functions run in turn within each round, rather than one after the
    other, so that they meet the same bursts of load from other processes.
    When any run of the first round exceeds ``slow`` seconds, 3 rounds are
    run instead of ``repeat``. Returns the timings and, for the names in
    ``keep``, the result of the last run (a fitted model, say).
    """
    times = {name: [] for name in fns}
    kept = {}
    rounds = repeat
    r = 0
    while r < rounds:
        for name, fn in fns.items():
            gc.collect()
            t0 = clock()
            result = fn()
            times[name].append(clock() - t0)
            kept[name] = result if name in keep else None
            del result
        if r == 0 and max(t[0] for t in times.values()) > slow:
            rounds = min(rounds, 3)
        r += 1
    timings = {name: Timing(statistics.median(t), min(t)) for name, t in times.items()}
    return timings, {name: kept[name] for name in keep}


def make_gaussian(n: int, d: int, k: int, seed: int):
    """Rows from k Gaussian classes with different means, built in place (one n x d array)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    centres = rng.normal(0.0, 1.0, (k, d))
    X = rng.standard_normal((n, d))
    step = 1 << 16
    for lo in range(0, n, step):
        X[lo : lo + step] += centres[y[lo : lo + step]]
    return X, y


def fmt_s(t: Timing | None) -> str:
    if t is None:
        return "-"
    return f"{t.median:.4f}" if t.median < 10 else f"{t.median:.2f}"


def fmt_ratio(a: Timing | None, b: Timing | None, best: bool = False) -> str:
    if a is None or b is None:
        return "-"
    return f"{a.best / b.best:.3f}" if best else f"{a.median / b.median:.3f}"


def floor_product(X):
    """The bare affine scoring of X: ``X @ W`` with ``W`` of shape (d, 10)."""
    W = np.random.default_rng(0).standard_normal((X.shape[1], 10))
    return lambda: X @ W


def floor_quadratic(k: int):
    """QDA's floor: a bare product of its flop count, ``X @ M`` with ``M`` (d, k d).

    Taken in blocks of 4,096 rows into one reused buffer, so that the floor
    pays for the 2 n d^2 k flops and not for writing an n x k d result.
    """

    def make(X):
        M = np.random.default_rng(0).standard_normal((X.shape[1], k * X.shape[1]))
        step = 4096
        buf = np.empty((step, M.shape[1]))

        def run():
            for lo in range(0, X.shape[0], step):
                block = X[lo : lo + step]
                np.matmul(block, M, out=buf[: block.shape[0]])

        return run

    return make


class Bench:
    def __init__(self, args):
        self.repeat = args.repeat
        self.slow = args.slow
        self.clock = CLOCKS[args.clock]
        self.rows: list[Row] = []

    def times(self, fns: dict, keep=()) -> tuple[dict, dict]:
        return time_in_turns(fns, self.repeat, self.slow, keep, self.clock)

    def floors(self, X, label: str) -> None:
        """Record the machine's floors for this array: one read, one copy, X @ W."""
        shape = f"{X.shape[0]}x{X.shape[1]}"
        buf = np.empty_like(X)
        t, _ = self.times(
            {
                "X.sum() (read once)": lambda: X.sum(),
                "copy X": lambda: np.copyto(buf, X),
                "X @ W, W (d, 10)": floor_product(X),
            }
        )
        for op, timing in t.items():
            self.rows.append(Row(label, op, shape, timing))
            self._log(label, op, timing, None)

    def pair(
        self,
        case,
        X,
        y,
        ours,
        theirs,
        *,
        floor=False,
        fit_target=None,
        proba_target=None,
        floor_target=None,
        fit_also=None,
    ):
        """Time fit and predict_proba of ``ours()`` and ``theirs()`` on (X, y).

        With ``floor`` (True for the bare ``X @ W``, or a function making
        the floor's callable from ``X``), the floor is timed in the same
        rounds as predict_proba. ``fit_also = (name, factory)`` adds another
        scikit-learn variant to the fit rounds. Targets are factors: nbcli's
        median time at most ``target`` times scikit-learn's (or the floor's).
        """
        shape = f"{X.shape[0]}x{X.shape[1]}"
        fits = {"ours": lambda: ours().fit(X, y), "theirs": lambda: theirs().fit(X, y)}
        if fit_also is not None:
            fits["also"] = lambda: fit_also[1]().fit(X, y)
        t, fitted = self.times(fits, keep=("ours", "theirs"))
        self._add(case, "fit", shape, t["ours"], t["theirs"], None, fit_target)
        if fit_also is not None:
            self._add(
                case, f"fit vs sklearn {fit_also[0]}", shape, t["ours"], t["also"], None, None
            )
        a, b = fitted["ours"], fitted["theirs"]
        del fits, fitted
        predicts = {"ours": lambda: a.predict_proba(X), "theirs": lambda: b.predict_proba(X)}
        if floor:
            predicts["floor"] = (floor_product if floor is True else floor)(X)
        t, _ = self.times(predicts)
        row = self._add(
            case, "predict_proba", shape, t["ours"], t["theirs"], t.get("floor"), proba_target
        )
        if floor_target is not None:
            ok = t["ours"].median <= floor_target * t["floor"].median
            row.target = (row.target + "; " if row.target else "") + f"<= {floor_target}x floor"
            row.met = ok if row.met is None else (row.met and ok)

    def evaluation(self, X, y, model, n_resamples: int = 1000) -> None:
        """``build_evaluation`` (all metrics, 1,000 BCa resamples) against the model's
        ``predict_proba`` on the same rows, the figure that ``evaluate``
        adds to scoring."""
        from nbcli.reports.evaluation import build_evaluation

        shape = f"{X.shape[0]}x{X.shape[1]}"
        proba = model.predict_proba(X)
        t, _ = self.times(
            {
                "report": lambda: build_evaluation(
                    model.classes_, y, proba, n_resamples=n_resamples
                ),
                "predict_proba": lambda: model.predict_proba(X),
            }
        )
        row = Row("evaluate", f"report, {n_resamples} resamples", shape, t["report"])
        row.floor = t["predict_proba"]
        row.target = "ratio to predict_proba (floor column)"
        self.rows.append(row)
        self._log("evaluate", row.op, t["report"], None)

    def _add(self, case, op, shape, ours, theirs, floor, target):
        row = Row(case, op, shape, ours, theirs, floor)
        if target is not None:
            row.target = f"<= {target}x sklearn"
            row.met = ours.median <= target * theirs.median
        self.rows.append(row)
        self._log(case, op, ours, theirs)
        return row

    @staticmethod
    def _log(case, op, ours, theirs):
        print(
            f"  {case:<14} {op:<22} nbcli {fmt_s(ours)} s  sklearn {fmt_s(theirs)} s",
            file=sys.stderr,
            flush=True,
        )


def run(args) -> list[Row]:
    from sklearn import discriminant_analysis as skda
    from sklearn import naive_bayes as sknb

    cases = set(args.cases)
    bench = Bench(args)
    n, d, k = args.n, 100, 10
    if cases & {"floor", "gaussian", "multinomial", "bernoulli", "lda", "qda", "evaluate"}:
        X, y = make_gaussian(n, d, k, args.seed)
        if "floor" in cases:
            bench.floors(X, "floor")
        if "gaussian" in cases:
            bench.pair(
                "gaussian NB",
                X,
                y,
                nb.GaussianNB,
                sknb.GaussianNB,
                floor=True,
                fit_target=0.5,
                proba_target=0.10,
            )
        if "lda" in cases:
            bench.pair(
                "LDA",
                X,
                y,
                nb.LinearDiscriminantAnalysis,
                lambda: skda.LinearDiscriminantAnalysis(solver="svd"),
                floor=True,
                fit_target=0.3,
                floor_target=1.5,
                fit_also=("lsqr", lambda: skda.LinearDiscriminantAnalysis(solver="lsqr")),
            )
        if "qda" in cases:
            m = min(n, args.qda_rows)
            bench.pair(
                "QDA",
                X[:m],
                y[:m],
                lambda: nb.QuadraticDiscriminantAnalysis(reg_param=0.01),
                lambda: skda.QuadraticDiscriminantAnalysis(reg_param=0.01),
                floor=floor_quadratic(k),
                fit_target=0.3,
                proba_target=0.3,
                floor_target=1.3,
            )
        if "evaluate" in cases:
            bench.evaluation(X, y, nb.GaussianNB().fit(X, y))
        if "bernoulli" in cases:
            bench.pair(
                "Bernoulli NB",
                X,
                y,
                lambda: nb.BernoulliNB(binarize=0.0),
                lambda: sknb.BernoulliNB(binarize=0.0),
                floor=True,
                floor_target=1.5,
            )
        if "multinomial" in cases:
            # Last, because it turns X into non-negative "counts" in place.
            np.abs(X, out=X)
            bench.pair(
                "multinomial NB",
                X,
                y,
                nb.MultinomialNB,
                sknb.MultinomialNB,
                floor=True,
                floor_target=1.5,
            )
        del X, y
        gc.collect()
    if "gaussian-784" in cases:
        X, y = make_gaussian(60_000, 784, k, args.seed + 1)
        if "floor" in cases:
            bench.floors(X, "floor")
        bench.pair(
            "gaussian NB",
            X,
            y,
            nb.GaussianNB,
            sknb.GaussianNB,
            floor=True,
            fit_target=0.5,
            proba_target=0.10,
        )
        del X, y
    return bench.rows


@dataclass
class Figure:
    """One ratio with a target: ``ours / reference`` (medians, and fastest runs)."""

    name: str
    ours: Timing
    reference: Timing
    target: float
    beside: str = ""  # another ratio shown for information

    @property
    def ratio(self) -> float:
        return self.ours.median / self.reference.median

    @property
    def fastest(self) -> float:
        return self.ours.best / self.reference.best


def run_targets(args) -> list[Figure]:
    """The core's figures that have targets, in one short run.

    Affine ``predict_proba`` (multinomial NB, Bernoulli NB, LDA) against the
    bare ``X @ W`` of the same rows, QDA's ``predict_proba`` against its
    floor (and, beside it, scikit-learn), Gaussian NB ``fit`` against
    scikit-learn. Fitting the models whose scoring is timed is not timed.
    The affine rounds are cheap, so they get three times ``--repeat``.
    """
    from sklearn import discriminant_analysis as skda
    from sklearn import naive_bayes as sknb

    bench = Bench(args)
    n, d, k = args.n, 100, 10
    X, y = make_gaussian(n, d, k, args.seed)
    figures = []
    t, _ = bench.times(
        {"ours": lambda: nb.GaussianNB().fit(X, y), "theirs": lambda: sknb.GaussianNB().fit(X, y)}
    )
    figures.append(Figure("Gaussian NB fit / scikit-learn", t["ours"], t["theirs"], 0.5))
    affine = {
        "LDA": nb.LinearDiscriminantAnalysis().fit(X, y),
        "Bernoulli NB": nb.BernoulliNB(binarize=0.0).fit(X, y),
    }
    counts = np.abs(X)
    affine["multinomial NB"] = nb.MultinomialNB().fit(counts, y)
    fns = {"floor": floor_product(X)}
    for name, model in affine.items():
        rows = counts if name == "multinomial NB" else X
        fns[name] = lambda model=model, rows=rows: model.predict_proba(rows)
    t, _ = time_in_turns(fns, 3 * args.repeat, args.slow, clock=bench.clock)
    for name in affine:
        figures.append(Figure(f"{name} predict_proba / X @ W", t[name], t["floor"], 1.5))
    del counts, affine, fns
    m = min(n, args.qda_rows)
    Xq, yq = X[:m], y[:m]
    ours = nb.QuadraticDiscriminantAnalysis(reg_param=0.01).fit(Xq, yq)
    theirs = skda.QuadraticDiscriminantAnalysis(reg_param=0.01).fit(Xq, yq)
    t, _ = bench.times(
        {
            "ours": lambda: ours.predict_proba(Xq),
            "floor": floor_quadratic(k)(Xq),
            "theirs": lambda: theirs.predict_proba(Xq),
        }
    )
    sk = t["ours"].median / t["theirs"].median
    figures.append(
        Figure(
            f"QDA predict_proba / its floor ({m:,} rows)",
            t["ours"],
            t["floor"],
            1.3,
            f"{sk:.2f}x scikit-learn",
        )
    )
    return figures


def print_figures(figures: list[Figure]) -> None:
    header = ("figure", "median", "fastest", "target", "met", "beside")
    body = [
        (
            f.name,
            f"{f.ratio:.2f}x",
            f"{f.fastest:.2f}x",
            f"<= {f.target}x",
            "yes" if f.ratio <= f.target else "NO",
            f.beside,
        )
        for f in figures
    ]
    widths = [max(len(str(c)) for c in col) for col in zip(header, *body)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for b in body:
        print(line(b))


def print_table(rows: list[Row]) -> None:
    header = (
        "case",
        "operation",
        "n x d",
        "nbcli (s)",
        "sklearn (s)",
        "nbcli/sklearn",
        "floor (s)",
        "nbcli/floor",
        "fastest: /sklearn",
        "fastest: /floor",
        "target",
        "met",
    )
    body = [
        (
            r.case,
            r.op,
            r.shape,
            fmt_s(r.ours),
            fmt_s(r.theirs),
            fmt_ratio(r.ours, r.theirs),
            fmt_s(r.floor),
            fmt_ratio(r.ours, r.floor),
            fmt_ratio(r.ours, r.theirs, best=True),
            fmt_ratio(r.ours, r.floor, best=True),
            r.target,
            "" if r.met is None else ("yes" if r.met else "NO"),
        )
        for r in rows
    ]
    widths = [max(len(str(c)) for c in col) for col in zip(header, *body)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    print(line(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for b in body:
        print(line(b))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="n = 100,000 instead of 1,000,000")
    p.add_argument(
        "--cases",
        default=",".join(CASES),
        help=f"comma-separated subset of {', '.join(CASES)} (default: all)",
    )
    p.add_argument("--repeat", type=int, default=5, help="runs per measurement (default 5)")
    p.add_argument(
        "--slow",
        type=float,
        default=2.0,
        help="a first run longer than this many seconds cuts the runs to 3",
    )
    p.add_argument(
        "--qda-rows",
        type=int,
        default=200_000,
        help="rows used for QDA (default 200,000: its scoring costs n d^2 per class)",
    )
    p.add_argument(
        "--targets",
        action="store_true",
        help="only the ratios that have targets (affine predict_proba / X @ W, QDA "
        "predict_proba / its floor, Gaussian NB fit / scikit-learn): one short run",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--blas-threads",
        type=int,
        default=None,
        help="limit BLAS threads (threadpoolctl); default: BLAS's own choice",
    )
    p.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="wall: time.perf_counter (default); cpu: time.process_time, the CPU "
        "time of all threads, steadier on a busy machine (use with --blas-threads 1)",
    )
    args = p.parse_args(argv)
    args.cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = sorted(set(args.cases) - set(CASES))
    if unknown:
        p.error(f"unknown case(s) {unknown}; choose from {', '.join(CASES)}")
    args.n = 100_000 if args.quick else 1_000_000

    import sklearn
    from threadpoolctl import threadpool_info, threadpool_limits

    blas = threadpool_info()
    threads = args.blas_threads or max((b["num_threads"] for b in blas), default=1)
    print(
        f"nbcli core vs scikit-learn {sklearn.__version__}, numpy {np.__version__}, "
        f"python {platform.python_version()}, {os.cpu_count()} CPUs, {threads} BLAS "
        f"thread(s); n = {args.n:,}, QDA on {min(args.n, args.qda_rows):,} rows; "
        f"{args.clock} clock, median of {args.repeat} runs "
        f"(3 when a run exceeds {args.slow:g} s); load average {os.getloadavg()[0]:.1f}"
    )
    t0 = time.perf_counter()
    with threadpool_limits(limits=args.blas_threads):
        if args.targets:
            print_figures(run_targets(args))
        else:
            print_table(run(args))
    print(f"total {time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
