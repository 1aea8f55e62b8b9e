"""Rich tables for the scoring reports of :mod:`nbcli.reports`.

Each ``render_*`` function returns a list of Rich renderables for a console
to print in order. Labels are always shown in full: a table whose labels do
not fit the console's width is drawn with short keys (``#1``, ``#2``...) and
a legend below it that lists each key's label on its own line. Labels are
printed as plain text, never as console markup.

:func:`make_console` builds the console: without a terminal (a pipe, a CI
log) it has no colour and is 200 columns wide, instead of the 80 Rich would
assume, so that tables are not squeezed.
"""

from __future__ import annotations

import math
import sys

from rich import box
from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from nbcli.terminal import escape_controls, is_terminal

PIPE_WIDTH = 200
#: How wide a confusion matrix may grow in piped output (about 150 classes).
PIPED_CONFUSION_WIDTH = 1000
"""Console width used when the output is not a terminal."""

BAR_WIDTH = 20
"""Characters in one bar of the reliability diagram (the full bar is accuracy 1)."""

_EIGHTHS = " ▏▎▍▌▋▊▉█"
_MARKER = "|"
_DASH = "—"

_METRIC_NAMES = {
    "accuracy": "Accuracy",
    "balanced_accuracy": "Balanced accuracy",
    "macro_f1": "Macro F1",
    "cohen_kappa": "Cohen's kappa",
    "log_loss": "Log-loss",
    "brier": "Brier score",
    "roc_auc": "ROC AUC",
    "roc_auc_weighted": "Weighted ROC AUC",
    "average_precision": "Average precision",
    "ece": "ECE",
    "mce": "MCE",
    "mean_confidence": "Mean confidence",
    "accuracy_a": "Accuracy A",
    "accuracy_b": "Accuracy B",
    "difference": "Difference B - A",
}


class SafeConsole(Console):
    """A console that never passes a control character from the data (a
    label, a column name, a file name) to the terminal: text is shown with
    such characters escaped (``\\x1b``); only Rich's own styling reaches the
    terminal as codes."""

    def render_str(self, text: str, **kwargs) -> Text:
        return super().render_str(escape_controls(text), **kwargs)

    def _render_buffer(self, buffer) -> str:
        from rich.segment import Segment

        safe = (
            segment
            if segment.control
            else Segment(escape_controls(segment.text, keep_whitespace=True), segment.style)
            for segment in buffer
        )
        text = super()._render_buffer(safe)
        if self.is_terminal:
            return text
        # Rich pads every line to the table's width: trailing spaces in a
        # log or a diff are noise.
        return "\n".join(line.rstrip(" ") for line in text.split("\n"))


def make_console(file=None, width: int | None = None) -> Console:
    """A Rich console writing to ``file`` (default ``sys.stdout``).

    On a terminal, Rich's defaults apply (colour, the terminal's width)
    unless ``width`` is given. Otherwise there is no colour, no markup
    highlighting, and the width is ``width`` or :data:`PIPE_WIDTH`, so that
    tables are never cut or squeezed in a log.
    """
    file = sys.stdout if file is None else file
    if is_terminal(file):
        return SafeConsole(file=file, width=width, highlight=False)
    return SafeConsole(
        file=file,
        width=width or PIPE_WIDTH,
        no_color=True,
        color_system=None,
        force_terminal=False,
        force_interactive=False,
        highlight=False,
        emoji=False,
    )


# --------------------------------------------------------------------------
# Building blocks


class FirstThatFits:
    """Renders the first of several layouts whose natural width fits the console.

    Each layout is given as a zero-argument function that builds it, so that
    layouts are built only when tried: a confusion matrix of thousands of
    labels is never built at all. ``min_widths`` (one per layout, default 0)
    are cheap lower bounds on the layouts' natural widths; a layout whose
    bound exceeds the console width is skipped without being built or
    measured. The last layout is the fallback and is rendered whatever its
    width.
    """

    def __init__(self, *builders, min_widths=None, piped_width: int = 0):
        self.builders = builders
        self.min_widths = list(min_widths) if min_widths is not None else [0] * len(builders)
        # Off a terminal nothing is cut by a window: a layout up to this wide
        # is shown as a whole rather than given up for a narrower one.
        self.piped_width = piped_width

    def _natural_width(self, console, options, layout) -> int:
        return Measurement.get(console, options.update_width(1_000_000), layout).maximum

    def __rich_console__(self, console, options):
        for build, bound in zip(self.builders[:-1], self.min_widths):
            if bound > options.max_width:
                continue
            layout = build()
            if self._natural_width(console, options, layout) <= options.max_width:
                yield layout
                return
        if not console.is_terminal and self.piped_width > options.max_width:
            for build, bound in zip(self.builders[:-1], self.min_widths):
                if bound > self.piped_width:
                    continue
                layout = build()
                width = self._natural_width(console, options, layout)
                if width <= self.piped_width:
                    yield from console.render(layout, options.update_width(width))
                    return
        yield self.builders[-1]()

    def __rich_measure__(self, console, options):
        return Measurement.get(console, options, self.builders[-1]())


def percent(level: float) -> str:
    """A confidence level as a percentage with every digit it has: 0.95 ->
    "95%", 0.975 -> "97.5%" (never rounded to a level that was not asked for)."""
    return f"{round(level * 100, 8):g}%"


def _num(x, digits: int = 4) -> str:
    if x is None or not math.isfinite(x):
        return _DASH
    return f"{x:.{digits}f}"


def _signed(x, digits: int = 4) -> str:
    if x is None or not math.isfinite(x):
        return _DASH
    return f"{x:+.{digits}f}"


def _label(label) -> Text:
    return Text(escape_controls(str(label)), overflow="fold")


#: The mark after an interval of another method than the table's own.
_INTERVAL_MARKS = {"percentile": "*", "DeLong": "†"}


def _interval_text(iv) -> str:
    if iv.method == "none" or not (math.isfinite(iv.lower) and math.isfinite(iv.upper)):
        return _DASH
    mark = _INTERVAL_MARKS.get(iv.method, "")
    return f"[{_num(iv.lower)}, {_num(iv.upper)}]{mark}"


def _table(title=None, **kwargs) -> Table:
    return Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False, **kwargs)


def _legend(labels, keys) -> Text:
    lines = Text(overflow="fold")
    for i, (key, label) in enumerate(zip(keys, labels)):
        if i:
            lines.append("\n")
        lines.append(f"  {key}  ")
        lines.append(escape_controls(str(label)))
    return lines


def _interval_note(settings: dict, intervals) -> Text:
    """The line under a table of intervals: their method, resamples and seed, and
    why a metric has none. ``intervals`` is a mapping of metric to Interval, or
    a sequence of them."""
    from nbcli.reports.ranking_summary import MAX_CURVE_CLASSES as max_classes
    from nbcli.reports.ranking_summary import RANKING_KEYS as ranking_keys

    named = dict(intervals) if hasattr(intervals, "items") else {}
    intervals = list(named.values()) if named else list(intervals)
    n = settings.get("bootstrap_resamples", 0)
    level = settings.get("confidence", 0.95)
    if not n:
        return Text("No intervals: bootstrap resampling was turned off (0 resamples).")
    if intervals and all(iv.method == "none" for iv in intervals):
        return Text("No intervals: a bootstrap needs at least 2 rows to resample.")
    seed = settings.get("seed")
    note = f"{percent(level)} BCa bootstrap intervals from {n} resamples (seed {seed})."
    if any(iv.method == "percentile" for iv in intervals):
        note += (
            " * percentile interval: BCa is undefined for this sample (e.g. all resamples equal),"
            " or, for average precision, has no jackknife."
        )
    if any(iv.method == "DeLong" for iv in intervals):
        note += " † DeLong's interval: too many rows x resamples to bootstrap the ranking metrics."
    without = [
        key
        for key in ranking_keys
        if key in named and named[key].method == "none" and math.isfinite(named[key].value)
    ]
    if without == ["average_precision"] and named["roc_auc"].method == "DeLong":
        note += (
            " Average precision has no interval here: it is not bootstrapped at this size"
            " and has no closed form like DeLong's."
        )
    elif without:
        note += f" The ranking metrics have no interval beyond {max_classes} classes."
    return Text(note)


def _metric_table(title: str, metrics: dict, level: float) -> Table:
    t = _table(title)
    t.add_column("Metric")
    t.add_column("Value", justify="right")
    texts = [_interval_text(iv) for iv in metrics.values()]
    # With a mark after some interval (another method), the intervals are
    # left-justified: the brackets stay aligned and the mark hangs past them.
    marked = any(text.endswith(tuple(_INTERVAL_MARKS.values())) for text in texts)
    t.add_column(f"{percent(level)} interval", justify="left" if marked else "right", no_wrap=True)
    for (key, iv), text in zip(metrics.items(), texts):
        t.add_row(_METRIC_NAMES.get(key, key), _num(iv.value), text)
    return t


# --------------------------------------------------------------------------
# Evaluation


def _per_class_table(rows, averages, keys=None) -> Table:
    t = _table("Per class")
    t.add_column("#" if keys else "Label", overflow="fold")
    for name in ("Precision", "Recall", "F1"):
        t.add_column(name, justify="right")
    t.add_column("Support", justify="right")
    auc = any(r.roc_auc is not None for r in rows)
    if auc:
        t.add_column("ROC AUC", justify="right")
    for i, r in enumerate(rows):
        head = Text(keys[i]) if keys else _label(r.label)
        cells = [_num(r.precision), _num(r.recall), _num(r.f1), str(r.support)]
        t.add_row(head, *cells, *([_num(r.roc_auc)] if auc else []))
    t.add_section()
    for key, avg in averages.items():
        t.add_row(
            # With two classes: the positive class's own scores, said to be.
            _label(f"binary ({avg.label})" if key == "binary" else avg.label),
            _num(avg.precision),
            _num(avg.recall),
            _num(avg.f1),
            str(avg.support),
            *([""] if auc else []),
        )
    return t


def _per_class(report):
    rows, averages = report.per_class, report.averages
    keys = [f"#{i + 1}" for i in range(len(rows))]
    return FirstThatFits(
        lambda: _per_class_table(rows, averages),
        lambda: Group(
            _per_class_table(rows, averages, keys), _legend([r.label for r in rows], keys)
        ),
    )


def _confusion_table(labels, counts, n_classes, row_heads, col_heads) -> Table:
    t = _table("Confusion matrix")
    t.add_column("true \\ predicted", overflow="fold")
    for head in col_heads[:n_classes]:
        t.add_column(head, justify="right", overflow="fold")
    for i in range(len(labels)):
        t.add_row(row_heads[i], *(str(int(c)) for c in counts[i][:n_classes]))
    return t


def _confusion(report):
    labels = report.labels
    counts = report.confusion
    n_classes = len(labels) - len(report.unseen_labels)
    keys = [f"#{i + 1}" for i in range(len(labels))]
    not_shown = Text(
        f"Confusion matrix not shown: {n_classes} predicted classes do not fit the width of this output; "
        "it is in the JSON report (--json)."
    )
    # Every count column takes at least one character and two of padding:
    # with more predicted classes than a third of the width no table fits,
    # and building one (L**2 cells) would take minutes for thousands of labels.
    bound = 3 * n_classes
    return FirstThatFits(
        lambda: _confusion_table(
            labels, counts, n_classes, [_label(x) for x in labels], [_label(x) for x in labels]
        ),
        lambda: _confusion_table(
            labels,
            counts,
            n_classes,
            [Text(f"{k} {escape_controls(str(x))}", overflow="fold") for k, x in zip(keys, labels)],
            [Text(k) for k in keys],
        ),
        lambda: Group(
            _confusion_table(
                labels, counts, n_classes, [Text(k) for k in keys], [Text(k) for k in keys]
            ),
            _legend(labels, keys),
        ),
        lambda: not_shown,
        min_widths=[bound, bound, bound],
        piped_width=PIPED_CONFUSION_WIDTH,
    )


def _most_confused(pairs, top: int = 10) -> Text:
    text = Text("Most confused (true -> predicted, count):", overflow="fold")
    if not pairs:
        text.append("\n  none: every prediction is right")
    for p in pairs[:top]:
        text.append("\n  ")
        text.append(escape_controls(str(p)))
    return text


def _bar(accuracy, confidence, width: int = BAR_WIDTH) -> str:
    if accuracy is None or not math.isfinite(accuracy):
        return " " * width
    cells = []
    filled = accuracy * width
    for i in range(width):
        part = min(max(filled - i, 0.0), 1.0)
        cells.append(_EIGHTHS[int(round(part * 8))])
    marker = min(width - 1, max(0, int(confidence * width - 1e-9)))
    cells[marker] = _MARKER
    return "".join(cells)


def reliability_table(diagram, title: str = "Reliability (top-class confidence)") -> Table:
    """The reliability diagram as a table: one row per bin with a bar of its accuracy.

    The bar is drawn with block characters (a full bar is accuracy 1) and
    ``|`` marks the bin's mean confidence, so the distance between the bar's
    end and the mark shows the gap.
    """
    t = _table(title)
    t.add_column("Confidence bin", no_wrap=True)
    t.add_column("Rows", justify="right")
    t.add_column(f"█ accuracy {_MARKER} conf.", no_wrap=True, min_width=BAR_WIDTH)
    t.add_column("Accuracy", justify="right")
    t.add_column("Confidence", justify="right")
    t.add_column("Gap", justify="right")
    edges = _edge_texts([b.lower for b in diagram.bins[:1]] + [b.upper for b in diagram.bins])
    for i, b in enumerate(diagram.bins):
        opening = "[" if i == 0 else "("
        t.add_row(
            f"{opening}{edges[i]}, {edges[i + 1]}]",
            str(b.count),
            _bar(b.accuracy, b.mean_confidence) if b.count else "",
            _num(b.accuracy) if b.count else _DASH,
            _num(b.mean_confidence) if b.count else _DASH,
            _signed(b.gap) if b.count else _DASH,
        )
    return t


def _p_text(p: float) -> str:
    """``p = 0.0123``; a p-value that underflowed to 0 as ``p < 1e-300``."""
    return "p < 1e-300" if p == 0 else f"p = {p:.4g}"


def _edge_texts(edges) -> list[str]:
    """Bin edges in the fewest significant digits (3 at least) that tell every
    two neighbours apart, so that quantile edges near 1 do not all read ``1``."""
    for digits in range(3, 18):
        texts = [f"{e:.{digits}g}" for e in edges]
        if all(a != b for a, b in zip(texts, texts[1:])):
            return texts
    return [repr(float(e)) for e in edges]


def _scored(inputs: dict) -> Text | None:
    """``Model MODEL scored on DATA`` from a report's inputs (None when not known)."""

    def path(role):
        entry = inputs.get(role) if isinstance(inputs, dict) else None
        return entry.get("path") if isinstance(entry, dict) else None

    model, data = path("model"), path("data")
    if model is None or data is None:
        return None
    return Text(
        f"Model {escape_controls(str(model))} scored on {escape_controls(str(data))}",
        overflow="fold",
    )


def terms_note(*, log_loss: bool = True) -> Text:
    """What the report's terms mean, printed where they appear."""
    lines = [
        "ECE: expected calibration error, the row-weighted mean |accuracy - confidence| "
        "over the confidence bins; MCE: the largest such gap of a bin.",
        "Gap: accuracy - confidence of a bin; positive means under-confident, negative "
        "over-confident.",
        "Brier score: the squared error summed over all classes (the multiclass sum: for two "
        "classes twice the usual binary figure), averaged over rows.",
    ]
    if log_loss:
        lines.append(
            "Log-loss: natural log, probabilities clipped below at 2.2e-308, so a confident "
            "mistake costs up to 708 (scikit-learn clips at 2.2e-16: at most 36)."
        )
    return Text("\n".join(lines), overflow="fold")


def render_evaluation(report) -> list:
    """Renderables for an :class:`~nbcli.reports.evaluation.EvaluationReport`.

    Headline metrics with intervals (and a line naming the interval method,
    the number of resamples and the seed), the per-class table, the
    confusion matrix, the most-confused pairs and the calibration summary
    with its reliability diagram. Warnings are not included: the CLI prints
    them as ``warning:`` lines.
    """
    s = report.settings
    title = f"Evaluation on {report.n_samples} test rows"
    cal = report.calibration
    left_out = ""
    if report.n_unseen == 1:
        left_out = " (the row with a label the model never saw left out)"
    elif report.n_unseen:
        left_out = f" (the {report.n_unseen:,} rows with labels the model never saw left out)"
    summary = Text(
        f"Calibration on {cal.diagram.n_samples} rows{left_out}: mean confidence "
        f"{_num(cal.mean_confidence)}, accuracy {_num(cal.accuracy)}, ECE {_num(cal.ece)}, "
        f"MCE {_num(cal.mce)}"
    )
    note = _interval_note(s, report.metrics)
    positive = report.ranking_class()
    if positive is not None:
        note.append(
            f"\nWith two classes, ROC AUC and average precision are those of class "
            f"{escape_controls(str(positive))} "
            f"({'--pos-label' if report.pos_label is not None else 'the second'}) "
            "against the other."
        )
    if report.n_unseen:
        note.append(
            f"\n{report.n_unseen} {'row has a label' if report.n_unseen == 1 else 'rows have labels'}"
            " the model never saw: counted as errors and left out of log-loss, Brier score, "
            "ROC AUC, average precision and calibration."
        )
    scored = _scored(report.inputs)
    return [
        *([scored] if scored is not None else []),
        _metric_table(title, report.metrics, s.get("confidence", 0.95)),
        note,
        _per_class(report),
        _confusion(report),
        _most_confused(report.most_confused),
        Text(""),
        summary,
        reliability_table(cal.diagram),
        terms_note(),
    ]


# --------------------------------------------------------------------------
# Comparison


def _model_path(inputs: dict, which: str):
    """Path of model A or B from ``inputs``: ``{"models": [a, b]}`` or ``{"model_a": a, "model_b": b}``."""
    if not isinstance(inputs, dict):
        return None
    entry = inputs.get(f"model_{which.lower()}")
    models = inputs.get("models")
    if entry is None and isinstance(models, list) and len(models) == 2:
        entry = models["AB".index(which)]
    return entry.get("path") if isinstance(entry, dict) else None


def render_comparison(report) -> list:
    """Renderables for a :class:`~nbcli.reports.comparison.ComparisonReport`.

    Both accuracies and the paired difference B - A with intervals, the 2 x 2
    agreement table and McNemar's exact test.
    """
    s = report.settings
    out: list[RenderableType] = []
    names = [(w, _model_path(report.inputs, w)) for w in ("A", "B")]
    if any(path for _, path in names):
        legend = Text(overflow="fold")
        for i, (w, path) in enumerate(names):
            legend.append(("\n" if i else "") + f"  {w}: ")
            legend.append(escape_controls(str(path or "?")))
        out.append(legend)
    out.append(
        _metric_table(
            f"Comparison on {report.n_samples} test rows", report.metrics, s.get("confidence", 0.95)
        )
    )
    out.append(_interval_note(s, report.metrics.values()))
    t = _table("Agreement (rows)")
    t.add_column("")
    t.add_column("B right", justify="right")
    t.add_column("B wrong", justify="right")
    tab = report.table
    t.add_row("A right", str(tab.both_correct), str(tab.only_a_correct))
    t.add_row("A wrong", str(tab.only_b_correct), str(tab.both_wrong))
    out.append(t)
    out.append(
        Text(
            f"McNemar exact test: {_p_text(report.p_value)} (two-sided; "
            f"{tab.only_a_correct} row{'' if tab.only_a_correct == 1 else 's'} only A got right, "
            f"{tab.only_b_correct} only B)"
        )
    )
    return out


# --------------------------------------------------------------------------
# Calibration


def _calibration_values(report) -> dict:
    m = report.metrics
    return {
        "ece": m.get("ece"),
        "mce": report.mce,
        "brier": m.get("brier"),
        "log_loss": m.get("log_loss"),
        "mean_confidence": report.mean_confidence,
        "accuracy": report.accuracy,
    }


def _cell(v) -> str:
    if v is None:
        return _DASH
    if hasattr(v, "method"):
        interval = _interval_text(v)
        return _num(v.value) if interval == _DASH else f"{_num(v.value)} {interval}"
    return _num(v)


def render_calibration(report, before=None) -> list:
    """Renderables for a :class:`~nbcli.reports.reliability.CalibrationReport`.

    With ``before`` (the report before calibration), the summary shows both
    side by side and both reliability diagrams are drawn. A
    :class:`~nbcli.reports.reliability.RecalibrationReport` is drawn that way.
    """
    if before is None and hasattr(report, "before") and hasattr(report, "after"):
        report, before = report.after, report.before
    s = report.settings
    level = s.get("confidence", 0.95)
    t = _table(f"Calibration on {report.n_samples - report.n_unseen} rows")
    t.add_column("Metric")
    if before is not None:
        t.add_column(f"Before [{percent(level)} interval]", justify="right", no_wrap=True)
    t.add_column(
        f"{'After' if before is not None else 'Value'} [{percent(level)} interval]",
        justify="right",
        no_wrap=True,
    )
    after_values = _calibration_values(report)
    before_values = _calibration_values(before) if before is not None else None
    for key, v in after_values.items():
        cells = [_cell(before_values[key])] if before_values is not None else []
        t.add_row(_METRIC_NAMES.get(key, key), *cells, _cell(v))
    intervals = list(report.metrics.values()) + (
        list(before.metrics.values()) if before is not None else []
    )
    out = [t, _interval_note(s, intervals)]
    if before is not None:
        out.append(reliability_table(before.diagram, "Reliability before calibration"))
        out.append(reliability_table(report.diagram, "Reliability after calibration"))
    else:
        out.append(reliability_table(report.diagram))
    out.append(terms_note())
    return out


def verdict_table(verdict) -> list:
    """Renderables for a :class:`~nbcli.reports.reliability.CalibrationVerdict`:
    each candidate's cross-fitted scores and paired differences, and the rule."""
    level = percent(verdict.confidence)
    kind = "paired bootstrap" if verdict.interval_method == "bootstrap" else "normal"
    t = _table(
        f"Cross-fitted on {verdict.folds} folds (calibrated - before, {level} {kind} interval)"
    )
    t.add_column("Method")
    for name in ("Log-loss", "Difference", "Brier score", "Difference", "ECE", "MCE"):
        t.add_column(name, justify="right", no_wrap=True)
    t.add_column("Verdict")
    b = verdict.before
    t.add_row(
        "before", _num(b["log_loss"]), "", _num(b["brier"]), "", _num(b["ece"]), _num(b["mce"]), ""
    )
    for c in verdict.candidates:
        if not c.differences:
            t.add_row(c.method, *[_DASH] * 6, f"left out: {c.note}")
            continue
        cells = []
        for key, value in (("log_loss", c.log_loss), ("brier", c.brier)):
            d = c.differences[key]
            interval = _interval_text(d)
            cells += [_num(value), _signed(d.value) + ("" if interval == _DASH else f" {interval}")]
        mark = "chosen" if c.method == verdict.chosen else ("accepted" if c.accepted else "no")
        if c.note and not c.accepted:
            mark += f" ({c.note})"
        t.add_row(c.method, *cells, _num(c.ece), _num(c.mce), mark)
    if verdict.chosen:
        chosen = f"Chosen: {verdict.chosen}."
    elif any(not c.never_written for c in verdict.candidates):
        chosen = "None chosen: only --allow-worse writes one (the best candidate)."
    else:
        chosen = "None chosen: no candidate can be written, not even with --allow-worse."
    return [t, Text(f"Rule: {verdict.rule}. {chosen}")]
