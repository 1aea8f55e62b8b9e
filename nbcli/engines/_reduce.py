"""What every engine shares: the merge tree and the statistics of a set of parts.

Per-part results are combined in one fixed binary tree over the part index,
on every engine: level by level, neighbours ``(0, 1), (2, 3), ...`` are
merged and an odd last value moves up unchanged, so six parts give
``((p0 + p1) + (p2 + p3)) + (p4 + p5)``. The statistics merge by the
Chan-Golub-LeVeque update, which is exact in real arithmetic for any order;
fixing the tree fixes the rounding too, so a local run and a distributed run
over the same parts give the same bits, run after run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")

# A part reader returns the part's rows as chunks ``(X, y)`` or ``(X, y, w)``:
# X of shape (n_rows, n_features), y (n_rows,), w (n_rows,) frequency weights.
Chunk = tuple
PartReader = Callable[[Any], Iterable[Chunk]]


def tree_pairs(n: int) -> list[list[tuple[int, int]]]:
    """The merge tree over ``n`` values as levels of index pairs.

    Level ``j`` lists pairs ``(a, b)`` of positions in the values left after
    level ``j - 1``; ``b == -1`` means ``a`` moves up unmerged. Positions are
    in part-index order, so the tree depends on ``n`` alone.
    """
    levels = []
    while n > 1:
        level = [(i, i + 1) for i in range(0, n - 1, 2)]
        if n % 2:
            level.append((n - 1, -1))
        levels.append(level)
        n = len(level)
    return levels


def column_ranges(n_columns: int, n_ranges: int) -> list[tuple[int, int]]:
    """``n_columns`` cut into at most ``n_ranges`` consecutive ``(lo, hi)``, as even as can be.

    >>> column_ranges(5, 2)
    [(0, 2), (2, 5)]
    >>> column_ranges(2, 4)
    [(0, 1), (1, 2)]
    """
    n = max(1, min(n_columns, n_ranges))
    edges = [n_columns * j // n for j in range(n + 1)]
    return [(lo, hi) for lo, hi in zip(edges[:-1], edges[1:]) if hi > lo]


def tree_reduce(values: Sequence[T], combine: Callable[[T, T], T]) -> T:
    """Combine ``values`` (in part-index order) along :func:`tree_pairs`.

    Raises ValueError for no values.
    """
    if not values:
        raise ValueError("nothing to combine: no parts")
    current = list(values)
    for level in tree_pairs(len(current)):
        current = [current[a] if b < 0 else combine(current[a], current[b]) for a, b in level]
    return current[0]


@dataclass
class FitStatistics:
    """Sufficient statistics of the training rows of one or more parts.

    Attributes
    ----------
    classes : ndarray of shape (n_classes,)
        Sorted labels seen so far; the first axis of every array in ``stats``.
    stats : statistics object
        The model's mergeable statistics (``ClassCounts``, ``ClassMoments``,
        ``ClassScatter`` or ``PooledScatter``), all classes on axis 0.
    n_features : int
    n_rows : int
        Rows read (before weighting).
    feature_names : ndarray of str or None
        Column names of the first chunk that had them.
    """

    classes: np.ndarray
    stats: Any
    n_features: int
    n_rows: int
    feature_names: np.ndarray | None = None

    def merge(self, other: FitStatistics) -> FitStatistics:
        """Statistics of the rows of both, classes aligned by label.

        Raises ValueError when the number of features or the feature names differ.
        """
        if other.n_features != self.n_features:
            raise ValueError(
                f"parts differ in their number of features: {self.n_features} "
                f"and {other.n_features}"
            )
        names = self.feature_names if self.feature_names is not None else other.feature_names
        if (
            self.feature_names is not None
            and other.feature_names is not None
            and not np.array_equal(self.feature_names, other.feature_names)
        ):
            raise ValueError("parts differ in their feature names")
        from nbcli.io.cells import aligned_labels

        mine, others = aligned_labels([self.classes, other.classes])
        classes = np.union1d(mine, others)
        ours = self.stats.reindex(np.searchsorted(classes, mine), len(classes))
        theirs = other.stats.reindex(np.searchsorted(classes, others), len(classes))
        return FitStatistics(
            classes, ours.merge(theirs), self.n_features, self.n_rows + other.n_rows, names
        )

    def to_estimator(self, estimator):
        """A fitted copy of the unfitted ``estimator``, built from these statistics.

        Smoothing and regularisation are applied here, once, as in a local fit.
        Raises ValueError where the model is not defined by the statistics
        (e.g. a QDA class with a single row).
        """
        fitted = type(estimator).from_stats(
            self.stats, self.classes, estimator.get_params(), self.n_features
        )
        if self.feature_names is not None:
            fitted.feature_names_in_ = self.feature_names
        return fitted


def part_statistics(estimator, chunks: Iterable[Chunk]) -> FitStatistics | None:
    """Statistics of the chunks of one part; None if the part has no rows.

    ``estimator`` is unfitted and is used only for its statistics type and
    its input checks (the same as in a local fit); it is not modified.
    """
    est = type(estimator)(**estimator.get_params())
    counted = {"rows": 0}

    def nonempty():
        for chunk in chunks:
            if len(chunk[1]):
                counted["rows"] += len(chunk[1])
                yield chunk

    # The model's own chunk accumulation: the same checks, label handling and
    # statistics as a local fit, without turning them into a model (which a
    # part with one row of a QDA class could not be).
    try:
        est.fit_chunks(nonempty(), finalize=False)
    except ValueError:
        if counted["rows"] == 0:
            return None
        raise
    n_rows = counted["rows"]
    return FitStatistics(
        est.classes_,
        est.stats_,
        int(est.n_features_in_),
        n_rows,
        getattr(est, "feature_names_in_", None),
    )


def merge_optional(a: FitStatistics | None, b: FitStatistics | None) -> FitStatistics | None:
    """:meth:`FitStatistics.merge` where an empty part (None) is the identity."""
    if a is None:
        return b
    if b is None:
        return a
    return a.merge(b)


def finish_fit(total: FitStatistics | None, estimator):
    """The fitted model from merged statistics; ValueError when no part had rows."""
    if total is None:
        raise ValueError("no training data: every part was empty")
    return total.to_estimator(estimator)


@dataclass
class PartOutcome:
    """What a per-part map did with one part.

    Attributes
    ----------
    index : int
        Position of the part in the list given.
    part : object
        The part as given (e.g. its path).
    value : object
        What the function returned (e.g. rows written); None on failure.
    error : str or None
        One-line reason the part failed, else None.
    """

    index: int
    part: Any
    value: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def guarded(fn: Callable[..., Any], index: int, part: Any, *args) -> PartOutcome:
    """Run ``fn(index, part, *args)``; a failure becomes the outcome's one-line error.

    As in local batch prediction, an error of the input (``NbcliError``) keeps
    its message and anything else is named an internal error, and neither
    stops the other parts.
    """
    from nbcli.errors import NbcliError

    try:
        return PartOutcome(index, part, fn(index, part, *args))
    except NbcliError as exc:
        return PartOutcome(index, part, error=" ".join(str(exc).split()))
    except Exception as exc:  # a bug in one part must not stop the others
        return PartOutcome(index, part, error=f"internal error ({type(exc).__name__}: {exc})")


def add(a, b):
    """``a + b``, or ``a.merge(b)`` for objects that merge rather than add."""
    merge = getattr(a, "merge", None)
    return merge(b) if merge is not None else a + b
