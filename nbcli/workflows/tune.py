"""Hyperparameter search from per-fold statistics: ``nbcli tune``.

The folds' statistics are gathered once (:func:`nbcli.workflows.cv.collect_fold_statistics`);
every combination of the grid turns the same statistics into fold models
(smoothing and regularisation are applied only then) and is scored by its
pooled out-of-fold metrics. The best combination's model on all rows is the
merge of all folds' statistics with its values: a fit on all data, without
reading them again.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

import numpy as np

from nbcli.errors import NbcliError
from nbcli.io.limits import MAX_GRID
from nbcli.workflows.engine import Engine, Reporter
from nbcli.workflows.folds import collect_fold_statistics
from nbcli.workflows.inputs import request_inputs
from nbcli.workflows.settings import FoldSettings, ScoreSettings, Search

if TYPE_CHECKING:
    from nbcli.io.modelfile import ModelFile
    from nbcli.io.request import DataRequest
    from nbcli.models import BayesClassifier
    from nbcli.reports.tuning import TuningReport

OUT_OF_FOLD_BUDGET = 512 << 20
"""Bytes of out-of-fold posteriors held at once; more combinations take more passes
over the (kept) rows."""


def parse_values(text: str, where: str, parse=None) -> list:
    """Grid values from ``0.01,0.1,1``, ``log:1e-9..1:20`` or ``lin:0..1:11``.

    ``log:A..B:N`` is ``N`` values spaced evenly in log scale from ``A`` to
    ``B`` (both included, both positive); ``lin:A..B:N`` evenly in linear
    scale. ``parse`` turns a listed word into a value (``auto``); numbers
    otherwise.

    Raises
    ------
    NbcliError
        Naming ``where`` for a malformed range or value.
    """
    text = text.strip()
    scale, sep, rest = text.partition(":")
    if sep and scale in ("log", "lin"):
        try:
            bounds, _, count = rest.partition(":")
            lo_text, dots, hi_text = bounds.partition("..")
            lo, hi, n = float(lo_text), float(hi_text), int(count)
            if n > MAX_GRID:
                raise NbcliError(
                    f"{where} {text!r}: {n:,} values; a grid holds at most {MAX_GRID:,} settings"
                )
            if not dots or n < 1 or not (math.isfinite(lo) and math.isfinite(hi)):
                raise ValueError
        except ValueError:
            example = "log:1e-9..1:20" if scale == "log" else "lin:0..0.5:20"
            raise NbcliError(
                f"{where} {text!r}: expected {scale}:A..B:N (finite bounds A and B, N values, "
                f"at least 1), e.g. {example}"
            ) from None
        if scale == "log":
            if lo <= 0 or hi <= 0:
                raise NbcliError(f"{where} {text!r}: a log range needs positive bounds")
            return _log_points(lo, hi, n)
        else:
            values = np.linspace(lo, hi, n) if n > 1 else np.array([lo])
        return [float(v) for v in values]
    out = []
    for item in (p.strip() for p in text.split(",")):
        if not item:
            raise NbcliError(f"{where} {text!r}: an empty value in the list")
        try:
            out.append(parse(item, where) if parse is not None else float(item))
        except ValueError as exc:
            raise NbcliError(f"{where} {text!r}: {exc}") from None
    return out


def is_range(text: str) -> bool:
    """Whether ``text`` is a ``log:`` or ``lin:`` range (not a list of values)."""
    scale, sep, _ = text.strip().partition(":")
    return bool(sep) and scale in ("log", "lin")


def grid_values(text: str, where: str, spec=None) -> tuple[list, str | None]:
    """Grid values of one hyperparameter (see :func:`parse_values`), with what
    to tell of them.

    With ``spec`` (the :class:`~nbcli.models.hyperparameters.Hyperparameter`),
    each point of a range is taken as the hyperparameter takes it
    (:meth:`~nbcli.models.hyperparameters.Hyperparameter.grid_point`): an
    integer-valued one is rounded to whole numbers. Points that round to the
    same number are kept once, and the second item then says how the grid
    shrank (None otherwise).

    Raises
    ------
    NbcliError
        As :func:`parse_values`, and for a value listed twice
        (:func:`refuse_repeated_values`).
    """
    values = parse_values(text, where, spec.parse if spec is not None else None)
    refuse_repeated_values(values, where)
    if spec is None or not is_range(text):
        return values, None
    numbers = [v for v in values if isinstance(v, (int, float))]
    if getattr(spec, "count_or_fraction", False) and min(numbers) < 1 <= max(numbers):
        # Below 1 a value is a share of the variance, from 1 on a count: one
        # evenly spaced range cannot mean both.
        raise NbcliError(
            f"{where} {text.strip()!r}: the range runs across 1, where {spec.name} turns "
            "from a fraction of the variance into a number of components; give a range of "
            "counts (lin:1..8:8) or of fractions (lin:0.5..0.95:10), or list the values"
        )
    points = list(dict.fromkeys(spec.grid_point(v) for v in values))
    if len(points) == len(values):
        return points, None
    return points, (
        f"{where} {text.strip()!r}: the {len(values)} points round to {len(points)} whole "
        f"numbers ({', '.join(str(v) for v in points)}), so the grid searches {len(points)} "
        f"values of {spec.name}"
    )


def refuse_repeated_values(values: list, where: str) -> None:
    """Refuse a grid that lists a value twice (``--pca 2,2``, or a range whose
    points coincide, as ``lin:1..1:3``): the same setting would be scored twice.

    Raises
    ------
    NbcliError
        Naming ``where`` and the first repeated value.
    """
    for i, value in enumerate(values):
        if value in values[:i]:
            raise NbcliError(f"{where}: the value {value} is listed twice; list each value once")


def _log_points(lo: float, hi: float, n: int) -> list[float]:
    """``n`` points evenly spaced in log scale from ``lo`` to ``hi``.

    Exponents are spaced evenly; a whole-number exponent gives the decade
    exactly (``1e-05``, not ``geomspace``'s ``9.999999999999999e-06``), and
    the bounds are the values given.
    """
    if n == 1:
        return [lo]
    exponents = np.linspace(math.log10(lo), math.log10(hi), n)
    out = []
    for e in exponents.tolist():
        k = round(e)
        out.append(float(f"1e{k}") if abs(e - k) < 1e-9 else float(10.0**e))
    out[0], out[-1] = lo, hi
    return out


def check_grid_size(grid: dict[str, list]) -> None:
    """Refuse a grid of more than :data:`~nbcli.io.limits.MAX_GRID` settings
    (the product of its value lists), before any is tried."""
    size = math.prod(len(v) for v in grid.values())
    if size > MAX_GRID:
        shape = " x ".join(f"{len(v):,} {name}" for name, v in grid.items())
        raise NbcliError(
            f"the grid has {size:,} settings ({shape}); a grid holds at most {MAX_GRID:,}: "
            "give fewer values"
        )


def combinations(grid: dict[str, list]) -> list[dict]:
    """Every combination of ``grid``, the first name varying slowest (the order given)."""
    check_grid_size(grid)
    names = list(grid)
    return [dict(zip(names, values)) for values in itertools.product(*grid.values())]


def check_grid(estimator: BayesClassifier, grid: dict[str, list]) -> None:
    """Refuse names that are not the model's hyperparameters, or cannot be searched
    on fixed statistics, and values their specs refuse."""
    specs = {s.name: s for s in estimator.hyperparameters}
    if not grid:
        raise NbcliError(
            f"nothing to search: give values of a hyperparameter of the {estimator.name} model "
            f"({', '.join(s.name for s in specs.values() if s.searched)})"
        )
    for name, values in grid.items():
        if name not in specs:
            raise NbcliError(
                f"{name} is not a hyperparameter of the {estimator.name} model "
                f"(it takes {', '.join(sorted(specs))})"
            )
        if specs[name].shapes_statistics:
            raise NbcliError(
                f"{name} shapes the statistics themselves, so it cannot be searched on "
                "one pass over the data; fit one model per value instead"
            )
        if not values:
            raise NbcliError(f"no values to search for {name}")
        for v in values:
            # First: a word the hyperparameter does not take is refused as such.
            try:
                specs[name].check(v, name)
            except ValueError as exc:
                raise NbcliError(str(exc)) from None
        words = [v for v in values if isinstance(v, str)]
        if words and len(words) < len(values):
            # shrinkage='auto' (Ledoit-Wolf) is computed from statistics of its
            # own, which a pass collecting the numeric values' does not keep.
            raise NbcliError(
                f"{name}: {words[0]!r} and numbers need different statistics, so they cannot "
                f"share one grid; search {words[0]!r} and the numbers in two runs"
            )
        _check_one_kind_of_statistics(estimator, name, values)


def _check_one_kind_of_statistics(estimator: BayesClassifier, name: str, values: list) -> None:
    """Refuse values that need statistics of different kinds (pca none and a count)."""
    gathered = getattr(estimator, "gathered_statistics", None)
    if gathered is None:
        return
    kinds = []
    for v in values:
        model = type(estimator)(**{**estimator.get_params(), name: v})
        kinds.append(getattr(model, "gathered_statistics")())  # noqa: B009
    if any(k != kinds[0] for k in kinds):
        raise NbcliError(
            f"{name}: {values[0]!r} and {next(v for v, k in zip(values, kinds) if k != kinds[0])!r} "
            "need statistics of different kinds, so they cannot share one grid; search them "
            "in two runs"
        )


def _check_widths(estimator: BayesClassifier, grid: dict[str, list], n_features: int, data) -> None:
    """Refuse a grid value the data's columns cannot take (``pca`` above the
    number of features) in one line, rather than as a combination without a
    model: no fold could ever fit it.

    Raises
    ------
    NbcliError
        Naming ``data``, the value and the number of features.
    """
    if getattr(estimator, "check_width", None) is None:
        return
    for name, values in grid.items():
        for v in values:
            model = type(estimator)(**{**estimator.get_params(), name: v})
            try:
                model.check_width(n_features)  # type: ignore[attr-defined]
            except ValueError as exc:
                raise NbcliError(f"{data}: the grid's {exc}") from None


def _describe(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def _plain(v):
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v


def tune(
    estimator: BayesClassifier,
    request: DataRequest,
    search: Search,
    folds: FoldSettings | None = None,
    scoring: ScoreSettings | None = None,
    *,
    priors_by_label: dict | None = None,
    reporter: Reporter | None = None,
    engine: Engine | None = None,
) -> tuple[TuningReport, ModelFile]:
    """Cross-validate every combination of ``search.grid`` on one set of fold statistics.

    Parameters
    ----------
    estimator : BayesClassifier
        Unfitted; its hyperparameters outside the grid are kept fixed.
    request : DataRequest
        Labelled data, as for :func:`nbcli.workflows.cv.cross_validate`;
        with a text block the written model holds the vocabulary of all
        rows, as ``nbcli fit`` chooses it.
    search : Search
        ``grid``: values of each searched hyperparameter, combinations in
        the order given (see :func:`combinations`); ``metric``: the pooled
        out-of-fold metric to optimise (one of
        :data:`nbcli.reports.tuning.SEARCH_METRICS`); losses are minimised.
    folds, priors_by_label
        As for :func:`nbcli.workflows.cv.cross_validate`.
    scoring : ScoreSettings, optional
        ``bootstrap``, ``confidence``: intervals of every combination's
        metrics (0 resamples: none): the
        confusion-matrix metrics' BCa interval as ``evaluate`` draws it, the
        losses' normal approximation, none for the ranking metrics (see
        :mod:`nbcli.reports.selection_scores`).
    engine : nbcli.engines.Engine, optional
        Read ``request``'s data as parts on this engine (see
        :mod:`nbcli.workflows.fold_parts`); None: one file, in this process.

    Returns
    -------
    report : TuningReport
    model_file : ModelFile
        The best combination's model on all rows, with the search summary
        in its ``search`` member.

    Raises
    ------
    NbcliError
        For a bad grid or metric, unreadable data, bad folds, or when no
        combination gives a defined metric.

    Examples
    --------
    >>> from nbcli.io.request import DataRequest
    >>> from nbcli.models import GaussianNB
    >>> from nbcli.workflows.settings import FoldSettings, ScoreSettings, Search
    >>> from nbcli.workflows.tune import tune
    >>> report, model_file = tune(GaussianNB(), DataRequest.of("sample_data/iris_train.csv"),
    ...                           Search(grid={"var_smoothing": [1e-9, 1e-3, 1e-1]}),
    ...                           FoldSettings(n_folds=5), ScoreSettings(bootstrap=0))
    >>> len(report.results), sorted(report.best["params"])
    (3, ['var_smoothing'])
    """
    from nbcli.reports.bootstrap import no_interval
    from nbcli.reports.metrics import encode_labels
    from nbcli.reports.tuning import (
        SEARCH_METRICS,
        SearchResult,
        TuningReport,
        best_index,
        result_keys,
    )

    grid, metric = search.grid, search.metric
    folds = folds or FoldSettings()
    scores = scoring or ScoreSettings()
    data, seed = request.path, folds.seed
    bootstrap, confidence = scores.bootstrap, scores.confidence
    if metric not in SEARCH_METRICS:
        raise NbcliError(f"unknown metric {metric!r}; choose one of {', '.join(SEARCH_METRICS)}")
    if grid or not search.text_grid:
        check_grid(estimator, grid)
    combos = combinations(grid)
    # Statistics are gathered as the grid's settings need them (pca: scatter
    # matrices); check_grid made sure one kind serves every combination.
    estimator = type(estimator)(**{**estimator.get_params(), **combos[0]})
    variants = _text_variants(request, search)
    if engine is None:
        fs = collect_fold_statistics(
            estimator, request, folds, priors_by_label=priors_by_label, reporter=reporter
        )
    else:
        # Parts (and their engine) only when the data come in parts.
        from nbcli.workflows.fold_parts import collect_part_fold_statistics

        fs = collect_part_fold_statistics(estimator, request, folds, engine, priors_by_label)
    _check_widths(estimator, grid, len(fs.feature_names), data)
    sources = [fs] if not search.text_grid else [_with_text(fs, v) for v in variants]
    from nbcli.reports.evaluation import positive_column
    from nbcli.reports.selection_scores import CHEAP_KEYS, selection_scores
    from nbcli.workflows.evaluate import check_pos_label

    check_pos_label(fs.classes, scores.pos_label, data)
    coding = encode_labels(fs.classes, np.tile(fs.labels, fs.n_repeats))
    keys = result_keys(metric)
    ranking = not set(keys) <= set(CHEAP_KEYS)
    positive = positive_column(list(fs.classes), scores.pos_label)
    per_combo = max(1, coding.codes.size * fs.classes.size * 8)
    batch = max(1, OUT_OF_FOLD_BUDGET // per_combo)
    results = []
    warnings = [*search.warnings, *fs.warnings]
    failures: list[str] = []
    # Per result: the statistics (text settings) and hyperparameters it was scored with.
    picks: list[tuple[int, dict]] = []
    for source_index, (variant, source) in enumerate(zip(variants, sources)):
        for shown, params, log_proba, failed in _scored(source, variant, combos, batch):
            picks.append((source_index, params))
            if failed is not None:
                warnings.append(f"{_describe(shown)}: no model ({failed})")
                failures.append(f"{_describe(shown)}: {failed.removeprefix(f'{data}: ')}")
                metrics = {k: no_interval(float("nan")) for k in keys}
                results.append(SearchResult(shown, metrics))
                continue
            # Only what the table compares, with cheap intervals: not a whole
            # evaluation (curves, calibration, resampled rows) per combination.
            figures = selection_scores(
                coding,
                np.exp(log_proba, out=log_proba),
                ranking=ranking,
                n_resamples=bootstrap,
                confidence=confidence,
                seed=seed,
                pos_label=scores.pos_label,
            )
            results.append(SearchResult(shown, {k: figures[k] for k in keys}))
    for source in sources:
        warnings.extend(w for w in source.model_warnings() if w not in warnings)
    values = [r.metrics[metric].value for r in results]
    index = best_index(values, metric)
    if index is None and len(failures) == len(picks):
        # Why the first failed is why, most often, all did: say it.
        raise NbcliError(f"{data}: no combination searched gives a model; {failures[0]}")
    if index is None:
        raise NbcliError(f"{data}: {metric} is undefined for every combination searched")
    best_source, best_params = picks[index]
    # fit's warnings of the chosen model (of all rows), once.
    told = len(search.warnings) + len(fs.warnings)
    warnings[told:told] = [
        w for w in sources[best_source].fit_warnings(best_params) if w not in warnings
    ]
    fixed = {k: _plain(v) for k, v in estimator.get_params().items() if k not in grid}
    searched = {**search.text_grid, **grid}
    report = TuningReport(
        model_type=estimator.name,
        grid={k: [_plain(v) for v in vs] for k, vs in searched.items()},
        fixed=fixed,
        plan=fs.plan,
        results=results,
        best={
            "params": dict(results[index].params),
            "metric": metric,
            "value": float(values[index]),
            "index": int(index),
        },
        n_samples=int(fs.codes.size),
        inputs=request_inputs(request, engine),
        settings={
            "bootstrap_resamples": int(bootstrap),
            "confidence": float(confidence),
            "seed": seed,
            **_text_record(request, sources[best_source]),
        },
        warnings=warnings,
        ranking_class=None if positive is None or not ranking else fs.classes[positive],
    )
    report.warnings.extend(edge_warnings(grid, best_params, type(estimator).hyperparameters))
    if fs.n_repeats > 1 and bootstrap > 0:
        from nbcli.reports.cross_validation import REPEATS_WARNING

        report.warnings.append(REPEATS_WARNING.format(r=fs.n_repeats))
    return report, sources[best_source].model_file(best_params, report.search_summary())


def _text_variants(request, search: Search) -> list[dict]:
    """The combinations of the text settings searched (one empty one without)."""
    if not search.text_grid:
        return [{}]
    if request.text is None:
        raise NbcliError(
            "grids of --ngram, --min-df or --max-df search text settings: name the text "
            "columns with --text"
        )
    check_grid_size({**search.text_grid, **search.grid})
    return combinations(search.text_grid)


def _with_text(fs, variant: dict):
    """The fold statistics of ``fs`` under the text settings ``variant``."""
    from dataclasses import replace

    try:
        settings = replace(fs.text, **variant)
    except ValueError as exc:
        raise NbcliError(f"text settings {_describe(variant)}: {exc}") from None
    return fs.with_text(settings)


def _text_record(request, source) -> dict:
    """The text settings of the report: those of the best model's statistics."""
    text = getattr(source, "text", None)
    return request.text_record() if text is None else {"text": text.to_metadata()}


def _scored(source, variant: dict, combos: list[dict], batch: int):
    """Yield ``(shown, params, log_proba, failure)`` for each combination on the
    statistics ``source`` (text settings ``variant``): the out-of-fold log
    posteriors, or None and why no model was made. A text setting that keeps
    no term fails every combination."""
    text = {k: _plain(list(v) if isinstance(v, tuple) else v) for k, v in variant.items()}
    for first in range(0, len(combos), batch):
        part = combos[first : first + batch]
        failed: dict[int, str] = {}
        try:
            scored = list(zip(part, source.out_of_fold(part, failed)))
        except NbcliError as exc:
            scored = [(params, None) for params in part]
            failed = dict.fromkeys(range(len(part)), str(exc))
        for i, (params, log_proba) in enumerate(scored):
            shown = {**text, **{k: _plain(v) for k, v in params.items()}}
            yield shown, params, log_proba, failed.get(i)


def edge_warnings(grid: dict, best: dict, specs=()) -> list[str]:
    """A warning for each numeric hyperparameter whose best value is the
    smallest or largest of at least three searched: the best may lie beyond,
    unless that value is the bound the hyperparameter's spec (among
    ``specs``, the model's declarations) sets on it, beyond which there is
    nothing to search (``reg_param`` 0)."""
    bounds = {s.name: (s.low, s.high) for s in specs}
    out = []
    for name, values in grid.items():
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(numbers) < 3 or len(numbers) != len(values) or name not in best:
            continue
        chosen = best[name]
        low, high = bounds.get(name, (None, None))
        if chosen == min(numbers):
            side, bound = "smallest", low
        elif chosen == max(numbers):
            side, bound = "largest", high
        else:
            continue
        if bound is not None and chosen == bound:
            continue
        out.append(
            f"the best {name}, {_plain(chosen)!r}, is the {side} value searched; "
            "the best value may lie beyond it: extend the grid that way"
        )
    return out
