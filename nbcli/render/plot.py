"""Plots of scoring reports (matplotlib, an optional dependency, imported only
when a plot is drawn): reliability diagrams, ROC curves, confusion matrices.

Each plot has an ``*_image`` function returning PNG or SVG bytes and a
``plot_*`` function writing them to a file through
:func:`nbcli.io.atomic.atomic_write`, the format chosen by the extension.

A reliability diagram plots, per confidence bin, the accuracy of the
predictions in the bin against their mean confidence; a calibrated model lies
on the diagonal (DeGroot and Fienberg, "The comparison and evaluation of
forecasters", The Statistician 32, 1983; Niculescu-Mizil and Caruana,
"Predicting good probabilities with supervised learning", ICML 2005). A
histogram of the number of predictions per bin beneath shows how much each
point weighs.

A ROC curve plots, per class (one-vs-rest), the true-positive rate against
the false-positive rate as the threshold on the class's posterior falls; the
legend gives each class's area under the curve. A confusion matrix is drawn
as a heat map of counts, true classes in rows and predicted classes in
columns, each cell labelled with its count.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np

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
    _write(path, reliability_image(bins_before, bins_after, Path(path).suffix))


def _write(path, image: bytes) -> None:
    from nbcli.io.atomic import atomic_write

    with atomic_write(path, "wb") as fh:
        fh.write(image)


def _format(suffix: str) -> str:
    fmt = FORMATS.get(suffix.lower())
    if fmt is None:
        raise NbcliError(
            f"cannot write a plot with extension {suffix!r}; use one of {', '.join(FORMATS)}"
        )
    return fmt


def _new_figure(figsize: tuple[float, float]):
    try:
        # The object-oriented API with the Agg canvas leaves pyplot's global
        # state (and any interactive backend) alone.
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise NbcliError("plotting needs matplotlib: pip install 'nbcli[plot]'") from None
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _image(fig, fmt: str) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt)
    return buffer.getvalue()


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
    fmt = _format(suffix)
    series = [_check_bins(bins_before, "bins_before")]
    if bins_after is not None:
        series.append(_check_bins(bins_after, "bins_after"))
    fig = _new_figure((6.0, 7.0))
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
    return _image(fig, fmt)


# --------------------------------------------------------------------------
# ROC curves


def _curve_points(curve, i: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(fpr, tpr, area) of a ROC curve given as an object with ``x``, ``y``
    and ``area`` (:class:`nbcli.reports.ranking.Curve`) or as its JSON dict."""
    if isinstance(curve, dict):
        missing = [k for k in ("fpr", "tpr", "area") if k not in curve]
        if missing:
            raise ValueError(f"curves[{i}] lacks {missing}; a ROC curve needs fpr, tpr and area")
        x, y, area = curve["fpr"], curve["tpr"], curve["area"]
    else:
        x, y, area = curve.x, curve.y, curve.area
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"curves[{i}] has {x.shape} false- and {y.shape} true-positive rates")
    return x, y, float("nan") if area is None else float(area)


def roc_legend(label, area: float) -> str:
    """Legend entry of one class's curve: ``"setosa (AUC 0.987)"``, or
    ``"(AUC undefined)"`` for a class without rows or without others."""
    value = f"{area:.3f}" if np.isfinite(area) else "undefined"
    return f"{label} (AUC {value})"


def roc_figure(curves: Sequence, labels: Sequence, *, title: str = "ROC curves (one-vs-rest)"):
    """The matplotlib figure of :func:`roc_image` (for embedding or inspection)."""
    curves = list(curves)
    labels = list(labels)
    if len(curves) != len(labels):
        raise ValueError(f"{len(curves)} curves but {len(labels)} labels")
    points = [_curve_points(c, i) for i, c in enumerate(curves)]
    fig = _new_figure((6.0, 6.0))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], linestyle="--", color="0.5", linewidth=1, label="chance (AUC 0.5)")
    # tab10 then tab20 distinguish up to 20 classes; beyond that colours repeat.
    from matplotlib import colormaps

    cmap = colormaps["tab10" if len(points) <= 10 else "tab20"]
    for i, ((x, y, area), label) in enumerate(zip(points, labels)):
        if not np.isfinite(x).all() or not np.isfinite(y).all():
            # An undefined curve still gets its legend entry.
            ax.plot([], [], color=cmap(i % cmap.N), label=roc_legend(label, area))
            continue
        ax.plot(x, y, color=cmap(i % cmap.N), linewidth=1.5, label=roc_legend(label, area))
    ax.set(
        xlim=(0, 1),
        ylim=(0, 1.005),
        xlabel="false-positive rate",
        ylabel="true-positive rate",
        title=title,
        aspect="equal",
    )
    ax.grid(True, linewidth=0.5, alpha=0.5)
    ax.legend(loc="lower right", fontsize="small" if len(points) > 6 else "medium")
    return fig


def roc_image(curves: Sequence, labels: Sequence, suffix: str) -> bytes:
    """ROC curves, one per class with its AUC in the legend, as PNG or SVG bytes.

    Parameters
    ----------
    curves : sequence of Curve or dict
        Per class, an object with ``x`` (false-positive rates), ``y``
        (true-positive rates) and ``area`` (the AUC), as
        :func:`nbcli.reports.ranking.roc_curves` returns, or its ``to_dict()``
        form (``fpr``, ``tpr``, ``area``). A curve with undefined rates
        (a class without rows) is listed in the legend but not drawn.
    labels : sequence
        Class label of each curve, shown in the legend.
    suffix : str
        ``".png"`` or ``".svg"`` (case-insensitive).

    Raises
    ------
    NbcliError
        For another extension, or when matplotlib is not installed.
    ValueError
        When curves and labels differ in number or a curve is malformed.
    """
    fmt = _format(suffix)
    return _image(roc_figure(curves, labels), fmt)


def plot_roc(curves: Sequence, labels: Sequence, path) -> None:
    """Write ROC curves (see :func:`roc_image`) to a PNG or SVG file, atomically."""
    _write(path, roc_image(curves, labels, Path(path).suffix))


# --------------------------------------------------------------------------
# Confusion matrices

# Above this many classes the cells are too small to carry their counts.
_ANNOTATE_MAX = 30


def confusion_figure(confusion, labels: Sequence, *, title: str = "Confusion matrix"):
    """The matplotlib figure of :func:`confusion_image`."""
    counts = np.asarray(confusion)
    labels = [str(x) for x in labels]
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1]:
        raise ValueError(f"a confusion matrix must be square, got shape {counts.shape}")
    if counts.shape[0] != len(labels):
        raise ValueError(f"{counts.shape[0]} rows in the confusion matrix but {len(labels)} labels")
    k = counts.shape[0]
    side = min(14.0, max(4.5, 2.0 + 0.45 * k))
    fig = _new_figure((side + 1.2, side))
    ax = fig.subplots()
    image = ax.imshow(counts, cmap="Blues", vmin=0, interpolation="nearest")
    fig.colorbar(image, ax=ax, label="rows", shrink=0.8)
    ticks = np.arange(k)
    crowded = sum(len(x) for x in labels) > 4 * side  # roughly, labels would overlap
    ax.set_xticks(ticks, labels, rotation=90 if crowded else 0)
    ax.set_yticks(ticks, labels)
    ax.set(xlabel="predicted class", ylabel="true class", title=title)
    if k <= _ANNOTATE_MAX:
        top = counts.max() if counts.size else 0
        for (i, j), n in np.ndenumerate(counts):
            # White text on dark cells, black on light ones.
            colour = "white" if top and n > top / 2 else "black"
            ax.text(j, i, f"{n:g}", ha="center", va="center", color=colour, fontsize="small")
    return fig


def confusion_image(confusion, labels: Sequence, suffix: str) -> bytes:
    """A confusion matrix as a heat map with its counts, as PNG or SVG bytes.

    Parameters
    ----------
    confusion : array-like of int, shape (n_labels, n_labels)
        ``confusion[i, j]`` rows of true class ``i`` predicted as ``j``.
    labels : sequence, length n_labels
        Class labels of the rows and columns.
    suffix : str
        ``".png"`` or ``".svg"`` (case-insensitive).

    Raises
    ------
    NbcliError
        For another extension, or when matplotlib is not installed.
    ValueError
        For a non-square matrix or a wrong number of labels.
    """
    fmt = _format(suffix)
    return _image(confusion_figure(confusion, labels), fmt)


def plot_confusion(confusion, labels: Sequence, path) -> None:
    """Write a confusion matrix (see :func:`confusion_image`) to a PNG or SVG file, atomically."""
    _write(path, confusion_image(confusion, labels, Path(path).suffix))
