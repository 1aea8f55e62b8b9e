"""Rich tables for model selection: ``nbcli cv`` and ``nbcli tune`` reports."""

from __future__ import annotations

from rich.text import Text

from nbcli.render.tables import _METRIC_NAMES, _interval_text, _num, _table, render_evaluation
from nbcli.terminal import escape_controls

_FOLD_COLUMNS = ("accuracy", "log_loss", "roc_auc")


def _plan_line(plan: dict, n_samples: int) -> Text:
    if plan["method"] == "column":
        how = f"{plan['n_folds']} folds from column {plan['fold_column']!r}"
    else:
        how = f"{plan['n_folds']}-fold {plan['method']}"
        if plan["method"] == "group":
            how += f" (groups from {plan['group_column']!r})"
        if plan["n_repeats"] > 1:
            how += f", {plan['n_repeats']} repeats"
        how += f", seed {plan['seed']}"
    passes = "read once" if plan["passes"] == 1 else f"read {plan['passes']} times"
    return Text(f"Cross-validation: {how}; {n_samples} rows; data {passes}.")


def render_cross_validation(report) -> list:
    """Renderables for a :class:`~nbcli.reports.cross_validation.CrossValidationReport`:
    the fold plan, one line per fold, then the pooled evaluation as ``evaluate`` shows it."""
    t = _table("Folds")
    repeats = report.plan["n_repeats"] > 1
    if repeats:
        t.add_column("Repeat", justify="right")
    t.add_column("Fold", overflow="fold")
    t.add_column("Rows", justify="right")
    for key in _FOLD_COLUMNS:
        t.add_column(_METRIC_NAMES.get(key, key), justify="right")
    for f in report.folds:
        cells = [str(f.fold), str(f.n_samples), *(_num(f.metrics[k]) for k in _FOLD_COLUMNS)]
        t.add_row(*([str(f.repeat)] if repeats else []), *cells)
    pooled = render_evaluation(report.pooled)
    pooled[0].title = f"Pooled out-of-fold evaluation of {report.pooled.n_samples} scores"
    return [
        _plan_line(report.plan, report.pooled.n_samples // report.plan["n_repeats"]),
        t,
        *pooled,
    ]


def render_tuning(report) -> list:
    """Renderables for a :class:`~nbcli.reports.tuning.TuningReport`: one row per
    combination (the chosen one marked) with the search metric and its interval."""
    names = list(report.results[0].params) if report.results else []
    metric = report.best["metric"]
    n = len(report.results)
    t = _table(f"Search over {n} combination{'' if n == 1 else 's'} ({metric})")
    t.add_column("")
    for name in names:
        t.add_column(name, justify="right")
    shown = [metric] + [k for k in ("accuracy", "log_loss") if k != metric]
    for key in shown:
        t.add_column(_METRIC_NAMES.get(key, key), justify="right")
    t.add_column(f"{_METRIC_NAMES.get(metric, metric)} interval", justify="right", no_wrap=True)
    for i, r in enumerate(report.results):
        mark = "*" if i == report.best["index"] else ""
        values = [_num(r.metrics[k].value) for k in shown]
        t.add_row(
            mark,
            *(
                repr(r.params[n]) if isinstance(r.params[n], float) else str(r.params[n])
                for n in names
            ),
            *values,
            _interval_text(r.metrics[metric]),
        )
    best = ", ".join(f"{k}={v}" for k, v in report.best["params"].items())
    line = Text(
        f"Best: {escape_controls(best)} ({metric} {_num(report.best['value'])}); ties go to the first."
    )
    methods = {r.metrics[metric].method for r in report.results} - {"none"}
    if methods:
        level = f"{100 * report.settings.get('confidence', 0.95):g}%"
        how = ", ".join(_INTERVAL_METHODS.get(m, m) for m in sorted(methods))
        line.append(f"\nIntervals ({level}): {how}.")
    return [_plan_line(report.plan, report.n_samples), t, line]


_INTERVAL_METHODS = {
    "normal": "normal approximation of the mean over rows",
    "BCa": "BCa bootstrap",
    "percentile": "percentile bootstrap",
}
