"""Rich tables for ``nbcli inspect``."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text


def _short(text) -> str:
    """``text`` cut to :data:`~nbcli.io.limits.MAX_METADATA_TEXT` characters,
    saying how long it was, control characters escaped: a model file's texts
    are shown, not laid out whole, and never acted on by the terminal."""
    from nbcli.io.limits import MAX_METADATA_TEXT
    from nbcli.terminal import escape_controls

    text = str(text)
    if len(text) <= MAX_METADATA_TEXT:
        return escape_controls(text)
    return f"{escape_controls(text[:MAX_METADATA_TEXT])}... ({len(text):,} characters)"


def _g(x) -> str:
    return "-" if x is None else f"{x:.6g}"


def render_model(report) -> list:
    """Summary, classes, and the model's own analysis (indicative features,
    discriminant directions or class covariances)."""
    head = Table(
        title="Model file", show_header=False, box=None, pad_edge=False, title_justify="left"
    )
    head.add_column(style="bold", no_wrap=True)
    head.add_column(overflow="fold")
    head.add_row("file", Text(_short(report.path)))
    head.add_row(
        "format",
        f"version {report.format_version}, written by nbcli {_short(report.nbcli_version)}",
    )
    head.add_row("model", _short(report.model))
    # As fit's summary shows them: None is the hyperparameter's default.
    params = ", ".join(
        f"{k}={'default' if v is None else v}" for k, v in report.hyperparameters.items()
    )
    head.add_row("hyperparameters", Text(_short(params or "-")))
    head.add_row("target", Text(_short(report.target)))
    n = len(report.features)
    shown = ", ".join(_feature(f) for f in report.features[:8])
    head.add_row(
        "features", Text(_short(f"{n}: {shown}" + (f", ... ({n - 8} more)" if n > 8 else "")))
    )
    training = report.training
    head.add_row(
        "training rows",
        f"{training.get('n_samples', '-'):,}"
        if isinstance(training.get("n_samples"), int)
        else _short(training.get("n_samples", "-")),
    )
    if training.get("data") is not None:
        head.add_row("training data", Text(_short(training["data"])))
    fingerprint = training.get("fingerprint")
    if fingerprint:
        head.add_row("fingerprint", _short(f"{fingerprint['algorithm']} {fingerprint['value']}"))
    elif training.get("data_sha256"):
        head.add_row("data sha256", _short(training["data_sha256"]))
    head.add_row("calibrator", _short(calibrator_text(report.calibration)))
    if report.search:
        best = report.search.get("best", {})
        text = ", ".join(f"{k}={v}" for k, v in best.get("params", {}).items()) if best else ""
        head.add_row("search", Text(_short(text or "yes")))
    out: list = [head]

    classes = Table(title="Classes")
    classes.add_column("class", overflow="fold")
    classes.add_column("count", justify="right")
    classes.add_column("prior", justify="right")
    for c in report.classes:
        classes.add_row(Text(_short(c["label"])), f"{c['count']:g}", f"{c['prior']:.4f}")
    out.append(classes)

    if report.indicative is not None:
        table = Table(
            title="Most indicative features",
            caption=Text(_short(f"score: {report.indicative_definition}")),
        )
        table.add_column("class", overflow="fold")
        table.add_column("rank", justify="right")
        table.add_column("feature", overflow="fold")
        table.add_column("score", justify="right")
        counted = report.below_min_count is not None
        documents = report.counted_in in ("documents", "mixed")
        if counted:
            table.add_column("count (class / all)", justify="right")
            if documents:
                table.add_column("documents", justify="right")
            floor = (
                f"in at least {report.count_floor:,} training documents"
                if report.counted_in == "documents"
                else f"counted at least {report.count_floor:,} times in training"
                if report.counted_in == "occurrences"
                else f"in at least {report.count_floor:,} training documents (words) or "
                "counted as often (other features)"
            )
            table.title = (
                f"Most indicative features ({floor}; {report.below_min_count:,} below that "
                "left out)"
            )
        for label, rows in report.indicative.items():
            for i, row in enumerate(rows):
                name = row["feature"]
                if "higher" in row:
                    name += " (higher)" if row["higher"] else " (lower)"
                cells: list[Text | str] = [
                    Text(_short(label) if i == 0 else ""),
                    str(i + 1),
                    Text(_short(name)),
                    _g(row["score"]),
                ]
                if counted:
                    cells.append(f"{row['count']:g} / {row['total']:g}")
                    if documents:
                        df = row.get("document_frequency")
                        cells.append("" if df is None else f"{df:g}")
                table.add_row(*cells)
        out.append(table)
    if report.discriminant is not None:
        disc = report.discriminant
        table = Table(
            title=f"Discriminant directions ({disc['solver']} solver, covariance rank {disc['rank']})"
        )
        table.add_column("direction", justify="right")
        table.add_column("variance share", justify="right")
        table.add_column("feature", overflow="fold")
        table.add_column("standardised weight", justify="right")
        for i, d in enumerate(disc["directions"]):
            for j, w in enumerate(d["weights"]):
                table.add_row(
                    str(i + 1) if j == 0 else "",
                    f"{d['explained_variance_ratio']:.4f}" if j == 0 else "",
                    Text(_short(w["feature"])),
                    _g(w["standardized"]),
                )
        out.append(table)
    if report.parameters is not None:
        out.extend(_parameter_tables(report.parameters))
    if report.covariances is not None:
        table = Table(title="Class covariances")
        table.add_column("class", overflow="fold")
        table.add_column("log-determinant", justify="right")
        table.add_column("condition number", justify="right")
        for label, c in report.covariances.items():
            table.add_row(Text(_short(label)), _g(c["log_determinant"]), _g(c["condition_number"]))
        out.append(table)
    projection = report.projection
    if projection is not None and projection["components"]:
        scaled = "standardised columns" if projection["standardize"] else "centred columns"
        table = Table(title=f"Principal components (of the {scaled})")
        table.add_column("component", justify="right")
        table.add_column("explained variance", justify="right")
        table.add_column("share", justify="right")
        table.add_column("cumulative share", justify="right")
        for c in projection["components"]:
            table.add_row(
                c["component"],
                _g(c["explained_variance"]),
                f"{c['explained_variance_ratio']:.4f}",
                f"{c['cumulative_ratio']:.4f}",
            )
        out.append(table)
    elif projection is not None:
        out.append(Text("columns standardised (centred, unit variance) before the model"))
    return out


def _parameter_tables(parameters: dict) -> list:
    """What was learnt per column: one table of the Gaussian columns (mean and
    standard deviation per class), one of the Bernoulli and multinomial ones,
    and a conditional probability table per categorical column (classes by
    categories, as R's e1071 prints them); captions say what was left out."""
    columns = parameters["columns"]
    left = parameters["n_left_out"]
    note = (
        f"{left:,} more column{'' if left == 1 else 's'} left out (--top shows more)"
        if left
        else None
    )
    out: list = []
    gaussian = [c for c in columns if c["type"] == "gaussian"]
    if gaussian:
        table = Table(title="Gaussian columns: mean and standard deviation per class")
        table.add_column("column", overflow="fold")
        table.add_column("class", overflow="fold")
        table.add_column("mean", justify="right")
        table.add_column("sd", justify="right")
        for c in gaussian:
            for i, (label, v) in enumerate(c["classes"].items()):
                sd = None if v["variance"] is None else v["variance"] ** 0.5
                table.add_row(
                    Text(_short(c["feature"]) if i == 0 else ""),
                    Text(_short(label)),
                    _g(v["mean"]),
                    _g(sd),
                )
        out.append(table)
    binary = [c for c in columns if c["type"] in ("bernoulli", "multinomial", "poisson", "kernel")]
    if binary:
        table = Table(
            title="One figure per class: Bernoulli P(1 | class), multinomial p, Poisson rate, "
            "kernel bandwidth"
        )
        table.add_column("column", overflow="fold")
        table.add_column("type")
        for label in binary[0]["classes"]:
            table.add_column(Text(_short(label)), justify="right")
        for c in binary:
            table.add_row(
                Text(_short(c["feature"])),
                c["type"],
                *(_g(next(iter(v.values()))) for v in c["classes"].values()),
            )
        out.append(table)
    for c in (c for c in columns if c["type"] in ("categorical", "discretized")):
        more = c["n_left_out"]
        table = Table(
            title=Text(_short(f"P({c['feature']} | class)")),
            caption=(
                f"{more:,} more categor{'y' if more == 1 else 'ies'} left out (--top shows more)"
                if more
                else None
            ),
        )
        table.add_column("class", overflow="fold")
        for value in c["categories"]:
            table.add_column(Text(_short(value)), justify="right")
        for label, probabilities in c["classes"].items():
            table.add_row(Text(_short(label)), *(_g(p) for p in probabilities))
        out.append(table)
    if note and out:
        out[-1].caption = f"{out[-1].caption}; {note}" if out[-1].caption else note
    return out


def _feature(entry: dict) -> str:
    """``name (type)``, with a text column's vocabulary size: ``doc (text, 5769 words)``."""
    if "type" not in entry:
        return entry["name"]
    words = f", {entry['n_words']:,} words" if "n_words" in entry else ""
    return f"{entry['name']} ({entry['type']}{words})"


def calibrator_text(calibration: dict | None) -> str:
    """``temperature (T = 1.3)``, ``sigmoid (A = -0.8, B = 0.1)``, ``isotonic (12, 9, 15
    breakpoints)`` or ``none``."""
    if not calibration:
        return "none"
    method = str(calibration["method"])
    if "temperature" in calibration:
        bound = ", at the end of its search range" if calibration.get("at_bound") else ""
        return f"{method} (T = {calibration['temperature']:.6g}{bound})"
    if "a" in calibration and "b" in calibration:
        pairs = ", ".join(
            f"A = {a:.4g}, B = {b:.4g}" for a, b in zip(calibration["a"], calibration["b"])
        )
        shown = pairs if len(calibration["a"]) <= 3 else f"{len(calibration['a'])} sigmoids"
        return f"{method} ({shown})"
    if "breakpoints" in calibration:
        counts = ", ".join(str(n) for n in calibration["breakpoints"])
        return f"{method} ({counts} breakpoints per class)"
    return method
