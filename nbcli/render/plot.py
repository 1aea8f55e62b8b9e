"""Reliability diagrams (matplotlib, an optional dependency).

A reliability diagram plots, per confidence bin, the accuracy of the
predictions in the bin against their mean confidence; a calibrated model lies
on the diagonal (DeGroot and Fienberg, "The comparison and evaluation of
forecasters", The Statistician 32, 1983; Niculescu-Mizil and Caruana,
"Predicting good probabilities with supervised learning", ICML 2005). A
histogram of the number of predictions per bin beneath shows how much each
point weighs.
"""

from __future__ import annotations

import io
from pathlib import Path

from nbcli.errors import NbcliError

FORMATS = {".png": "png", ".svg": "svg"}
BIN_KEYS = ("lower", "upper", "count", "mean_confidence", "accuracy")

_SERIES = (
    # label, colour, marker
    ("before calibration", "#d95f02", "o"),
    ("after calibration", "#1b9e77", "s"),
)


def _check_bins(bins, name: str) -> list[dict]:
    bins = list(bins)
    for i, b in enumerate(bins):
        missing = [k for k in BIN_KEYS if k not in b]
        if missing:
            raise ValueError(f"{name}[{i}] lacks {missing}; a bin needs {list(BIN_KEYS)}")
    return bins


def plot_reliability(bins_before, bins_after, path) -> None:
    """Write a reliability diagram to a PNG or SVG file (see :func:`reliability_image`).

    ``path`` is written with :func:`nbcli.io.atomic.atomic_write`: a temporary
    file renamed over it, so a reader never sees half a file (links are
    followed, devices written in place).
    """
    image = reliability_image(bins_before, bins_after, Path(path).suffix)
    from nbcli.io.atomic import atomic_write

    with atomic_write(path, "wb") as fh:
        fh.write(image)


def reliability_image(bins_before, bins_after, suffix: str) -> bytes:
    """A reliability diagram (accuracy against confidence per bin, with a
    confidence histogram beneath) as PNG or SVG bytes.

    Parameters
    ----------
    bins_before : sequence of dict
        Confidence bins of the uncalibrated predictions, in order. Each has
        ``lower`` and ``upper`` (the bin's confidence edges), ``count`` (the
        number of predictions in it), ``mean_confidence`` and ``accuracy``
        (``None`` for an empty bin, which is not plotted).
    bins_after : sequence of dict or None
        The same for the calibrated predictions, drawn alongside; ``None``
        for a single series.
    suffix : str
        ``".png"`` or ``".svg"`` (case-insensitive).

    Raises
    ------
    NbcliError
        For another extension, or when matplotlib is not installed.
    ValueError
        When a bin lacks one of the keys above.
    """
    fmt = FORMATS.get(suffix.lower())
    if fmt is None:
        raise NbcliError(
            f"cannot write a plot with extension {suffix!r}; use one of {', '.join(FORMATS)}"
        )
    series = [_check_bins(bins_before, "bins_before")]
    if bins_after is not None:
        series.append(_check_bins(bins_after, "bins_after"))
    try:
        # The object-oriented API with the Agg canvas leaves pyplot's global
        # state (and any interactive backend) alone.
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise NbcliError("plotting needs matplotlib: pip install 'nbcli[plot]'") from None

    fig = Figure(figsize=(6.0, 7.0), layout="constrained")
    FigureCanvasAgg(fig)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 1))
    top.plot([0, 1], [0, 1], linestyle="--", color="0.5", linewidth=1, label="perfectly calibrated")
    share = 0.8 / len(series)  # each series gets a slice of every bin's width
    for s, (bins, (label, colour, marker)) in enumerate(zip(series, _SERIES)):
        filled = [
            b
            for b in bins
            if b["count"] and b["mean_confidence"] is not None and b["accuracy"] is not None
        ]
        top.plot(
            [b["mean_confidence"] for b in filled],
            [b["accuracy"] for b in filled],
            marker=marker,
            color=colour,
            label=label if len(series) > 1 else "model",
        )
        widths = [(b["upper"] - b["lower"]) * share for b in bins]
        lefts = [b["lower"] + (b["upper"] - b["lower"]) * (0.1 + s * share) for b in bins]
        bottom.bar(
            lefts, [b["count"] for b in bins], width=widths, align="edge", color=colour, alpha=0.8
        )
    top.set(xlim=(0, 1), ylim=(0, 1), ylabel="accuracy", title="Reliability diagram")
    top.grid(True, linewidth=0.5, alpha=0.5)
    top.legend(loc="upper left")
    bottom.set(xlabel="confidence (top-class probability)", ylabel="predictions")
    bottom.grid(True, axis="y", linewidth=0.5, alpha=0.5)

    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt)
    return buffer.getvalue()
