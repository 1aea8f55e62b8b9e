"""The stated limits of every input besides the data rows themselves.

Each limit is refused in one line before the memory or time it guards is
taken; docs/guide/outputs.md ("Limits") lists them. Memory follows the size of the data
(labels and categories are codes of their distinct values), so these bound
what a small input could otherwise multiply: a header field, a stop-word
file, a count of runs, a grid, statistics of size ``n_classes * d**2``.
"""

from __future__ import annotations

from typing import Any

from nbcli.errors import NbcliError

__all__ = [
    "MAX_NAME_CHARS",
    "MAX_STOP_WORD_BYTES",
    "MAX_STOP_WORDS",
    "MAX_REPEATS",
    "MAX_GRID",
    "MAX_CHUNK_ROWS",
    "STATISTICS_BYTES",
    "MAX_METADATA_TEXT",
    "MAX_NPZ_TEXT_BYTES",
    "check_names",
    "check_statistics_size",
]

#: Characters of one column name (a header field, an NPZ feature name).
MAX_NAME_CHARS = 10_000
#: Bytes of a ``--stop-words`` file, and the words it may hold.
MAX_STOP_WORD_BYTES = 10 << 20
MAX_STOP_WORDS = 1_000_000
#: ``cv --repeats``: fold plans of one run.
MAX_REPEATS = 100
#: Settings a ``tune`` grid may hold (the product of its value lists).
MAX_GRID = 10_000
#: ``--chunk-size``: rows read at a time.
MAX_CHUNK_ROWS = 10_000_000
#: Bytes the per-class statistics of one model may take (1 GiB).
STATISTICS_BYTES = 1 << 30
#: Bytes of one fixed-width text array of an NPZ data file, decompressed.
MAX_NPZ_TEXT_BYTES = 256 << 20
#: Characters of one text of a model file's metadata shown by ``inspect``.
MAX_METADATA_TEXT = 1_000


def check_names(names, display: str) -> None:
    """Refuse a column name longer than :data:`MAX_NAME_CHARS`.

    Raises
    ------
    NbcliError
        Naming the column's position and length.
    """
    for i, name in enumerate(names):
        if len(name) > MAX_NAME_CHARS:
            raise NbcliError(
                f"{display}: column {i + 1} of the header is {len(name):,} characters long; "
                f"column names are at most {MAX_NAME_CHARS:,} characters (is the first line "
                "a header, and are its quotes closed?)"
            )


def statistics_bytes(estimator, n_classes: int, n_features: int, dims=None) -> int:
    """Bytes of the float64 statistics ``estimator`` keeps for ``n_classes``
    classes of ``n_features`` features, from the shapes its statistics
    classes declare (extra dimensions from ``dims``, else 0)."""
    total = 0
    size = {"K": n_classes, "d": n_features}
    cls: Any = estimator if isinstance(estimator, type) else type(estimator)
    # A model whose settings decide what it gathers (pca: scatter matrices) says so.
    gathered = None if isinstance(estimator, type) else _gathered(estimator)
    shapes = gathered if gathered is not None else [s.shapes for s in cls.statistics]
    for declared in shapes:
        for units in declared.values():
            n = 1
            for unit in units:
                n *= size.get(unit, (dims or {}).get(unit, 0))
            total += n
    return 8 * total


def _gathered(estimator):
    method = getattr(estimator, "gathered_statistics", None)
    return None if method is None else method()


def check_statistics_size(
    display: str, estimator, n_features: int, n_classes: int = 2, *, copies: int = 1, dims=None
) -> None:
    """Refuse a model whose statistics would exceed :data:`STATISTICS_BYTES`
    (``copies`` of them: one per fold), before they are allocated.

    ``estimator`` is a model or a model class.

    Raises
    ------
    NbcliError
        Naming the model, the figures and the way out.
    """
    need = copies * statistics_bytes(estimator, n_classes, n_features, dims)
    if need <= STATISTICS_BYTES:
        return
    gathered = None if isinstance(estimator, type) else _gathered(estimator)
    if gathered is not None and getattr(estimator, "pca", None) is not None:
        per_class = any(
            u.startswith("K") and u.endswith("dd") for g in gathered for u in g.values()
        )
        shape = f"{n_classes:,} x {n_features:,}^2" if per_class else f"{n_features:,}^2"
        folds = f" for {copies} sets of fold statistics" if copies > 1 else ""
        raise NbcliError(
            f"{display}: --pca needs the scatter matrices of the input columns ({shape} "
            f"floats each{folds}): {need // 8:,} floats ({need / (1 << 30):.3g} GiB), over "
            f"the limit of {STATISTICS_BYTES // 8:,} floats ({STATISTICS_BYTES / (1 << 30):.3g} "
            "GiB); leave columns out with --features or --drop, or use fewer folds"
        )
    what = f"{n_classes:,} classes of {n_features:,} features"
    if (dims or {}).get("S"):
        what += f" ({dims['S']:,} categories)"
    if copies > 1:
        what += f", {copies} fold models"
    raise NbcliError(
        f"{display}: the {estimator.name} model's statistics for {what} would take "
        f"{need / (1 << 30):,.1f} GiB, over the limit of {STATISTICS_BYTES >> 30} GiB; "
        "leave columns out with --features or --drop, or choose a smaller model (gaussian "
        "keeps two numbers per class and feature)"
    )
