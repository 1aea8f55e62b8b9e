"""Classification metrics computed from class labels and posterior probabilities.

Every metric here equals the value scikit-learn's ``sklearn.metrics`` gives on
the same inputs (the tests check this to 1e-12), so that numbers reported by
nbcli can be compared with numbers computed elsewhere.

Labels are compared by their string form (``str(label)``): the integer ``3``
and the string ``"3"`` are the same class. This lets test labels read from a
text file match a model whose classes were integers.

The metrics that depend only on the confusion matrix (accuracy, balanced
accuracy, macro-F1, Cohen's kappa) are written for a stack of confusion
matrices of shape ``(..., n_labels, n_labels)``, so that the bootstrap can
evaluate them on all its resamples at once, and also (:class:`MarginMetric`)
for stacks of per-label hits, support and predicted counts, which is all
they depend on and what the bootstrap uses when there are many labels.

NumPy only: no file I/O, no printing.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from nbcli.distinct import unique_inverse

# Log-loss clips probabilities here before taking the log, so that a zero
# probability on the true class costs a large finite amount
# (-log(2.2e-308) = 708.4 nats) instead of infinity.
PROBA_FLOOR = float(np.finfo(np.float64).tiny)


# --------------------------------------------------------------------------
# JSON-friendly values


def json_number(x) -> float | int | None:
    """``x`` as a plain Python ``int`` or ``float``; ``None`` when not finite.

    JSON has no NaN or infinity, so an undefined metric is written as null.
    """
    if x is None:
        return None
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, numbers.Integral):
        return int(x)
    x = float(x)
    return x if math.isfinite(x) else None


def json_label(label):
    """A class label as a plain Python value, keeping its type (int stays int, str stays str)."""
    if isinstance(label, np.generic):
        return label.item()
    return label


def label_key(label) -> str:
    """The string form by which labels are compared."""
    return str(json_label(label))


# --------------------------------------------------------------------------
# Label coding


@dataclass(frozen=True)
class LabelCoding:
    """Test labels coded as integers over the model's classes plus unseen labels.

    Attributes
    ----------
    labels : list
        Plain Python labels: the model's classes in model order, then the test
        labels the model never saw (sorted, numbers numerically).
    n_classes : int
        Number of model classes; ``labels[:n_classes]`` are the model classes.
    codes : ndarray of shape (n_samples,)
        Index into ``labels`` of each test label.
    """

    labels: list
    n_classes: int
    codes: np.ndarray

    @property
    def known(self) -> np.ndarray:
        """Boolean mask of shape (n_samples,): rows whose label the model knows."""
        return self.codes < self.n_classes

    @property
    def unseen_labels(self) -> list:
        return self.labels[self.n_classes :]

    @property
    def n_unseen(self) -> int:
        """Number of test rows whose label the model never saw."""
        return int(np.count_nonzero(self.codes >= self.n_classes))


def _label_order(label):
    # Numbers sort numerically and before strings; everything else by its text.
    if isinstance(label, numbers.Real) and not isinstance(label, bool):
        return (0, float(label), "")
    return (1, 0.0, str(label))


def encode_labels(classes, y_true) -> LabelCoding:
    """Code test labels against the model's classes.

    Parameters
    ----------
    classes : array-like of shape (n_classes,)
        The model's class labels in model (column) order.
    y_true : array-like of shape (n_samples,)
        Test labels as given; may hold labels the model never saw.

    Raises
    ------
    ValueError
        If two model classes have the same string form, or ``y_true`` is not
        one-dimensional.
    """
    class_labels = [json_label(c) for c in np.asarray(classes, dtype=object).ravel()]
    keys = [str(c) for c in class_labels]
    index = {k: i for i, k in enumerate(keys)}
    if len(index) != len(keys):
        raise ValueError(f"model classes are not distinct as text: {keys}")

    y = np.asarray(y_true)
    if y.ndim != 1:
        raise ValueError(f"y_true must be one-dimensional, got shape {y.shape}")
    if y.dtype == object:
        values = y.tolist()
        types = set(map(type, values))
        if types == {int}:
            # Integer labels gathered from several chunks: coded as integers.
            try:
                y = np.array(values, dtype=np.int64)
            except OverflowError:
                pass
    if y.dtype == object:
        # Mixed types cannot be sorted by np.unique. Distinct (type, value)
        # pairs are found by a dict, in C, and only they are turned into text:
        # a million labels take a tenth of a second, not seconds. The type is
        # part of the key because 1, 1.0 and True are equal in Python but
        # differ as text.
        # One type (text read from a file): the values themselves are the keys.
        rows = values if len(types) == 1 else list(zip(map(type, values), values))
        first_of_key: dict[str, int] = {}
        pair_code: dict = {}
        uniq_values: list[object] = []
        for pair in dict.fromkeys(rows):
            value = pair if len(types) == 1 else pair[1]
            key = label_key(value)
            if key not in first_of_key:
                first_of_key[key] = len(uniq_values)
                uniq_values.append(json_label(value))
            pair_code[pair] = first_of_key[key]
        keys_of_labels: list[str] = list(first_of_key)
        inverse = np.fromiter(map(pair_code.__getitem__, rows), dtype=np.intp, count=len(rows))
    else:
        uniq, inverse = unique_inverse(y)
        uniq_values = [json_label(v) for v in uniq]
        keys_of_labels = [str(v) for v in uniq_values]

    unseen: dict[str, object] = {}
    for k, v in zip(keys_of_labels, uniq_values):
        if k not in index and k not in unseen:
            unseen[k] = v
    unseen_values = sorted(unseen.values(), key=_label_order)
    for v in unseen_values:
        index[str(v)] = len(index)
    lookup = np.array([index[k] for k in keys_of_labels], dtype=np.intp)
    codes = lookup[inverse.ravel()] if len(keys_of_labels) else np.zeros(0, dtype=np.intp)
    return LabelCoding(class_labels + unseen_values, len(class_labels), codes)


def predicted_codes(proba) -> np.ndarray:
    """Index of the predicted class, ``argmax`` over columns of ``proba`` (n_samples, n_classes).

    Ties go to the first class, as ``numpy.argmax`` (and so ``nbcli predict``) does.
    """
    return np.argmax(np.asarray(proba), axis=1)


def confusion_matrix(true_codes, pred_codes, n_labels: int) -> np.ndarray:
    """Counts of shape (n_labels, n_labels): rows are true labels, columns predicted labels."""
    flat = np.asarray(true_codes, dtype=np.intp) * n_labels + np.asarray(pred_codes, dtype=np.intp)
    return np.bincount(flat, minlength=n_labels * n_labels).reshape(n_labels, n_labels)


# --------------------------------------------------------------------------
# Metrics of (stacks of) confusion matrices, shape (..., L, L)
#
# Each of these metrics depends on the confusion matrix only through three
# per-label vectors (its "margins" here): the hits (the diagonal), the support
# (row sums: how often the label is true) and the predicted counts (column
# sums). Moreover each is a function of the number of rows and of a few sums
# over labels of per-label terms. That form is what lets the bootstrap
# resample them for thousands of labels: a resample needs only the margins,
# and leaving one row out changes the terms of at most two labels.


def _ratio(num, den):
    num, den = np.broadcast_arrays(np.asarray(num, dtype=float), np.asarray(den, dtype=float))
    return np.divide(num, den, out=np.zeros(num.shape), where=den > 0)


def confusion_margins(confusion) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hits, support and predicted counts of (a stack of) confusion matrices.

    ``confusion`` has shape (..., L, L), rows true and columns predicted.
    Returns three float arrays of shape (..., L): the diagonal, the row sums
    and the column sums.
    """
    c = np.asarray(confusion)
    # Summing counts straight into float64 is exact (below 2**53) and spares
    # a float copy of an L x L matrix.
    hits = np.diagonal(c, axis1=-2, axis2=-1).astype(float)
    return hits, c.sum(axis=-1, dtype=float), c.sum(axis=-2, dtype=float)


@dataclass(frozen=True)
class MarginMetric:
    """A confusion-matrix metric of the form ``combine(n, sum_l g_1(l), ..., sum_l g_j(l))``.

    ``terms(hits, support, predicted)`` maps per-label arrays of any common
    shape (..., L) to the tuple of per-label terms ``(g_1, ..., g_j)``, each
    elementwise in its inputs (label ``l``'s terms depend on label ``l``'s
    counts only). ``combine(n, *sums)`` maps the number of rows and the sums
    of the terms over labels, each of shape (...), to the metric.

    Calling the metric on confusion matrices of shape (..., L, L) gives
    values of shape (...).
    """

    terms: Callable[[np.ndarray, np.ndarray, np.ndarray], tuple]
    combine: Callable[..., np.ndarray]

    def from_margins(self, hits, support, predicted) -> np.ndarray:
        """The metric from per-label hits, support and predicted counts, each shape (..., L)."""
        n = np.asarray(support).sum(axis=-1)
        return self.combine(n, *(t.sum(axis=-1) for t in self.terms(hits, support, predicted)))

    def __call__(self, confusion) -> np.ndarray:
        return self.from_margins(*confusion_margins(confusion))


def _accuracy_terms(hits, support, predicted):
    return (hits,)


def _accuracy_combine(n, hits):
    return hits / n


def _recall_terms(hits, support, predicted):
    return _ratio(hits, support), support > 0


def _mean_over_present(n, total, present):
    return total / present


def _f1_terms(hits, support, predicted):
    denom = support + predicted
    return _ratio(2.0 * hits, denom), denom > 0


def _kappa_terms(hits, support, predicted):
    return hits, support * predicted


def _kappa_combine(n, hits, margin_products):
    observed = hits / n
    expected = margin_products / (n * n)
    den = 1.0 - expected
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, (observed - expected) / np.where(den > 0, den, 1.0), np.nan)


ACCURACY = MarginMetric(_accuracy_terms, _accuracy_combine)
BALANCED_ACCURACY = MarginMetric(_recall_terms, _mean_over_present)
MACRO_F1 = MarginMetric(_f1_terms, _mean_over_present)
COHEN_KAPPA = MarginMetric(_kappa_terms, _kappa_combine)


def accuracy(confusion):
    """Fraction of rows on the diagonal; shape ``confusion.shape[:-2]``."""
    return ACCURACY(confusion)


def balanced_accuracy(confusion):
    """Mean recall over the labels that occur among the true labels.

    As ``sklearn.metrics.balanced_accuracy_score`` (Brodersen et al., ICPR
    2010): labels that are only predicted do not enter the mean.
    """
    return BALANCED_ACCURACY(confusion)


def macro_f1(confusion):
    """Unweighted mean F1 over labels that are true or predicted at least once.

    F1 = 2 TP / (2 TP + FP + FN) = 2 TP / (support + predicted), 0 where
    undefined (``zero_division=0``), averaged over the labels scikit-learn
    uses by default (``unique_labels(y_true, y_pred)``).
    """
    return MACRO_F1(confusion)


def cohen_kappa(confusion):
    """Cohen's kappa, (p_o - p_e) / (1 - p_e) (Cohen 1960).

    ``p_o`` is the observed agreement (accuracy) and ``p_e`` the agreement
    expected from the row and column margins. NaN when ``p_e == 1`` (true and
    predicted labels all one and the same class), as scikit-learn.
    """
    return COHEN_KAPPA(confusion)


CONFUSION_METRICS = {
    "accuracy": accuracy,
    "balanced_accuracy": balanced_accuracy,
    "macro_f1": macro_f1,
    "cohen_kappa": cohen_kappa,
}
"""Metrics that depend only on the confusion matrix, keyed by report name."""

MARGIN_METRICS = {
    "accuracy": ACCURACY,
    "balanced_accuracy": BALANCED_ACCURACY,
    "macro_f1": MACRO_F1,
    "cohen_kappa": COHEN_KAPPA,
}
"""The metrics of :data:`CONFUSION_METRICS` in their :class:`MarginMetric` form."""


# --------------------------------------------------------------------------
# Per-row losses


def true_class_values(proba, true_codes) -> np.ndarray:
    """``proba[i, true_codes[i]]`` for every row i, shape (n_samples,) (a new array)."""
    p = np.asarray(proba, dtype=float)
    codes = np.asarray(true_codes, dtype=np.intp)
    if p.ndim == 2 and p.flags.c_contiguous:
        # One gather from the flat array: faster than a two-index gather.
        index = np.arange(0, p.size, p.shape[1], dtype=np.intp)
        index += codes
        return np.take(p.reshape(-1), index)
    if p.ndim == 2 and p.flags.f_contiguous:
        index = codes * p.shape[0]
        index += np.arange(p.shape[0], dtype=np.intp)
        return np.take(p.reshape(-1, order="F"), index)
    return p[np.arange(codes.size), codes]


def log_loss_per_row(proba, true_codes) -> np.ndarray:
    """Negative natural log of the probability given to the true class, shape (n_samples,).

    ``proba`` is (n_samples, n_classes); ``true_codes`` (n_samples,) indexes its
    columns. Probabilities are clipped below at the smallest positive normal
    float64 (about 2.2e-308) before the log, so a zero probability on the true
    class costs about 708.4 instead of infinity. scikit-learn's ``log_loss``
    clips at machine epsilon instead; the two agree whenever no probability of
    a true class is below 2.2e-16.
    """
    p = true_class_values(proba, true_codes)
    np.maximum(p, PROBA_FLOOR, out=p)
    np.log(p, out=p)
    return np.negative(p, out=p)


def brier_per_row(proba, true_codes) -> np.ndarray:
    """Sum over classes of (p_k - 1[y = k])^2, shape (n_samples,).

    Brier's original multiclass score (Brier 1950, Monthly Weather Review
    78(1)); its mean equals ``sklearn.metrics.brier_score_loss(...,
    scale_by_half=False)``. It ranges from 0 to 2.
    """
    p = np.asarray(proba, dtype=float)
    # Squares added column by column, in column order: the same bits whatever
    # the memory layout (a reduction along rows adds in an order of its own),
    # without a temporary of the shape of proba.
    sq = np.zeros(p.shape[0])
    square = np.empty(p.shape[0])
    for j in range(p.shape[1]):
        np.multiply(p[:, j], p[:, j], out=square)
        sq += square
    true = true_class_values(p, true_codes)
    true *= 2.0
    sq -= true
    sq += 1.0
    return sq


def _mean_or_nan(values) -> float:
    return float(np.mean(values)) if len(values) else math.nan


def log_loss(proba, true_codes) -> float:
    """Mean log-loss in nats (see :func:`log_loss_per_row`); NaN for no rows."""
    return _mean_or_nan(log_loss_per_row(proba, true_codes))


def brier_score(proba, true_codes) -> float:
    """Mean multiclass Brier score (see :func:`brier_per_row`); NaN for no rows."""
    return _mean_or_nan(brier_per_row(proba, true_codes))


# --------------------------------------------------------------------------
# Tables


@dataclass(frozen=True)
class ClassScores:
    """Precision, recall, F1 and support of one label (or an average over labels)."""

    label: object
    precision: float
    recall: float
    f1: float
    support: int
    #: One-vs-rest ROC AUC of the label's posterior column (NaN where undefined,
    #: e.g. a label the model never saw); None where not computed (averages).
    roc_auc: float | None = None

    def to_dict(self) -> dict:
        out = {
            "label": json_label(self.label),
            "precision": json_number(self.precision),
            "recall": json_number(self.recall),
            "f1": json_number(self.f1),
            "support": int(self.support),
        }
        if self.roc_auc is not None:
            out["roc_auc"] = json_number(self.roc_auc)
        return out


def per_class_scores(confusion, labels) -> tuple[list[ClassScores], dict[str, ClassScores]]:
    """Per-label precision, recall, F1 and support, with macro and weighted averages.

    As ``sklearn.metrics.classification_report`` with ``zero_division=0``:
    only labels that are true or predicted at least once are listed and
    averaged; an undefined ratio counts as 0. The weighted average weights each
    label by its support.

    Parameters
    ----------
    confusion : ndarray of shape (n_labels, n_labels)
    labels : sequence of length n_labels

    Returns
    -------
    rows : list of ClassScores, in label order
    averages : {"macro": ClassScores, "weighted": ClassScores}; their
        ``label`` is the average's name and ``support`` the total.
    """
    tp, support, predicted = confusion_margins(confusion)
    precision = _ratio(tp, predicted)
    recall = _ratio(tp, support)
    f1 = _ratio(2.0 * tp, support + predicted)
    active = np.flatnonzero(support + predicted > 0)
    rows = [
        ClassScores(labels[i], float(precision[i]), float(recall[i]), float(f1[i]), int(support[i]))
        for i in active
    ]
    total = int(support.sum())
    w = support[active] / total if total else np.zeros(len(active))

    def average(name, weights):
        return ClassScores(
            name,
            float(np.dot(weights, precision[active])),
            float(np.dot(weights, recall[active])),
            float(np.dot(weights, f1[active])),
            total,
        )

    uniform = np.full(len(active), 1.0 / len(active)) if len(active) else np.zeros(0)
    return rows, {"macro": average("macro avg", uniform), "weighted": average("weighted avg", w)}


def class_scores(confusion, labels, i: int) -> ClassScores:
    """Precision, recall, F1 and support of label ``labels[i]`` (0 where
    undefined, as :func:`per_class_scores`), whether or not it occurs.

    Parameters
    ----------
    confusion : ndarray of shape (n_labels, n_labels)
    labels : sequence of length n_labels
    i : int
        Index of the label in ``labels``.
    """
    tp, support, predicted = confusion_margins(confusion)
    return ClassScores(
        labels[i],
        float(_ratio(tp, predicted)[i]),
        float(_ratio(tp, support)[i]),
        float(_ratio(2.0 * tp, support + predicted)[i]),
        int(support[i]),
    )


@dataclass(frozen=True)
class ConfusedPair:
    """A true label that was predicted as another label ``count`` times."""

    true: object
    predicted: object
    count: int

    def __str__(self) -> str:
        return f"{self.true} -> {self.predicted} ({self.count})"

    def to_dict(self) -> dict:
        return {
            "true": json_label(self.true),
            "predicted": json_label(self.predicted),
            "count": int(self.count),
        }


def most_confused(confusion, labels, top: int | None = 10) -> list[ConfusedPair]:
    """Off-diagonal cells of the confusion matrix, largest count first.

    Ties keep label order (row first, then column). Empty cells are left
    out; ``top=None`` keeps all the others.
    """
    c = np.asarray(confusion)
    n = c.shape[1]
    flat = c.ravel()
    # Only occupied cells are sorted: with thousands of labels almost all of
    # the L x L cells are empty.
    cells = np.flatnonzero(flat)
    cells = cells[cells // n != cells % n]
    # A stable sort on the negated counts keeps row-major (label) order within ties.
    order = cells[np.argsort(-flat[cells], kind="stable")]
    if top is not None:
        order = order[:top]
    return [ConfusedPair(labels[i // n], labels[i % n], int(flat[i])) for i in order]


def report_header(schema: str, inputs, settings, version: int = 1) -> dict:
    """The fields every JSON report starts with (see docs/guide/outputs.md, "JSON reports")."""
    from nbcli import __version__

    return {
        "schema": schema,
        "schema_version": version,
        "nbcli_version": __version__,
        "inputs": inputs,
        "settings": settings,
    }


_HEADER_KEYS = ("schema", "schema_version", "nbcli_version", "inputs", "settings")


def closed_object(properties: dict, required=None) -> dict:
    """The JSON Schema of an object of exactly ``properties`` (each a schema),
    those of ``required`` (default: all of them) present."""
    return {
        "type": "object",
        "required": list(properties if required is None else required),
        "additionalProperties": False,
        "properties": properties,
    }


def report_schema(
    name: str,
    version: int,
    title: str,
    *,
    required: list[str],
    properties: dict,
    inputs: dict | None = None,
    settings: dict | None = None,
) -> dict:
    """The JSON Schema (draft 2020-12) of a report: :func:`report_header`'s
    fields first, the report's own ``required``/``properties`` next, ``warnings`` last.

    ``inputs`` and ``settings`` are those members' schemas (any object by
    default); no other members are allowed.
    """
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "type": "object",
        "required": [*_HEADER_KEYS, *required, "warnings"],
        "additionalProperties": False,
        "properties": {
            "schema": {"const": name},
            "schema_version": {"const": version},
            "nbcli_version": {"type": "string"},
            "inputs": inputs if inputs is not None else {"type": "object"},
            "settings": settings if settings is not None else {"type": "object"},
            **properties,
            "warnings": {"type": "array", "items": {"type": "string"}},
        },
    }
