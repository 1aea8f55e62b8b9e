"""One interface for every data format: a reader makes a column plan from the
header (or schema) and hands out the rows as :class:`RawChunk` blocks.

Readers register themselves by format (:func:`register`); :func:`nbcli.io.formats.open_reader`
picks one from what :class:`~nbcli.io.sources.Source` found, so no caller
tells readers apart. :func:`read_ahead` parses the next chunk in a worker
thread while the caller works on this one.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, TypeVar, cast

import numpy as np

# NumPy imports numpy.ma on first use, which np.unique and polars' Series of
# an array both make while chunks are read: imported here, before the
# reader's thread starts, it takes a quarter of the time it takes beside it.
import numpy.ma  # noqa: F401

from nbcli import interrupts
from nbcli.errors import NbcliError
from nbcli.io.categories import Categories
from nbcli.io.cells import na_texts
from nbcli.io.plan import CATEGORICAL, ColumnPlan, decide_kinds
from nbcli.io.request import DataRequest
from nbcli.io.sources import Source

__all__ = [
    "RawChunk",
    "TableReader",
    "register",
    "read_ahead",
    "labels_or_error",
    "finish_plan",
    "unseen_text_counts",
]

T = TypeVar("T")


@dataclass
class RawChunk:
    """Rows of a file as read, before the check of feature cells.

    Attributes
    ----------
    X : ndarray of shape (n_rows, n_numeric), float64
        The plan's numeric features; NaN where a cell is missing or unreadable.
    unread : dict of int to (int, str)
        Per feature column, the first cell that is not a number: (0-based
        row in this chunk, its text).
    y : ndarray of shape (n_rows,) or None
    kept : dict of str to ndarray of shape (n_rows,)
    row_offset : int
        Data rows of the file before this chunk.
    label_error : NbcliError or None
        What is wrong with the labels (a missing one, say), raised after the
        feature cells are checked, so that features are blamed first.
    y_missing : ndarray of shape (n_rows,), bool, or None
        Rows whose label is missing, when the options let them through
        (``DataRequest.skip_missing_labels``).
    words : dict of str to ndarray of shape (n_rows,)
        The plan's WORDS features, as text (see :mod:`nbcli.io.words`).
    """

    X: np.ndarray
    unread: dict[int, tuple[int, str]]
    y: np.ndarray | None
    kept: dict[str, np.ndarray] = field(default_factory=dict)
    row_offset: int = 0
    label_error: NbcliError | None = None
    y_missing: np.ndarray | None = None
    words: dict[str, np.ndarray] = field(default_factory=dict)
    #: Under ``--unseen ignore`` at predict time, per numeric column, its
    #: cells that are not numbers (text the model never saw there), which
    #: are then missing cells instead of errors; empty otherwise.
    unseen_text: dict[str, int] = field(default_factory=dict)
    #: The labels coded as read (a :class:`~nbcli.distinct.LabelCoding` of
    #: ``y``), when the reader coded them; None otherwise.
    y_coding: Any = None

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])


class TableReader(abc.ABC):
    """A data file of one format.

    A reader is made from a :class:`~nbcli.io.sources.Source` and
    :class:`~nbcli.io.request.DataRequest`; making it reads and checks the
    header (or schema) and decides :attr:`plan`. Iterating :meth:`chunks`
    reads the rows, from the top each time.
    """

    #: The :attr:`Source.format` this reader reads.
    format: ClassVar[str]
    source: Source
    plan: ColumnPlan
    #: The category tables of the plan's categorical features.
    encoders: dict[str, Categories] = {}
    #: Whether :meth:`chunks` reads the target column (``RawChunk.y``); a
    #: caller that needs no labels (predictions) sets it False before
    #: reading, and the column is then neither converted nor checked.
    read_target: bool = True
    #: Whether :meth:`chunks` reads and converts the features; a caller that
    #: needs the labels alone (``split``) sets it False, and each chunk's
    #: ``X`` then has no columns.
    read_features: bool = True
    #: At fit, the non-ASCII spellings of the labels met, by their normal form.
    label_spellings: dict[str, set[str]]
    #: Whether reading imports polars (which takes SIGINT over when
    #: imported): such a reader's rows are read ahead (:func:`read_ahead`)
    #: only once polars is imported on the main thread; a reader that never
    #: uses it spares the import.
    uses_polars: ClassVar[bool] = True

    @abc.abstractmethod
    def __init__(self, source: Source, opts: DataRequest, delimiter: str | None = None): ...

    def read_warnings(self) -> list[str]:
        """After a full read: what it met that the plan could not tell (a CSV
        row with fewer fields than the header), once per file."""
        return []

    @abc.abstractmethod
    def chunks(self, chunk_size: int | None, resolve: bool) -> Iterator[RawChunk]:
        """The rows in chunks of exactly ``chunk_size`` (the last may be
        shorter), or in one chunk for None.

        ``resolve`` types text labels (:func:`nbcli.io.cells.resolve_labels`)
        chunk by chunk; otherwise they stay text. Labels stored with a type
        keep it either way. Raises NbcliError for unreadable input, in order:
        rows before the problem are handed out first.
        """


def labels_or_error(convert, *args) -> tuple[Any, NbcliError | None]:
    """``convert(*args)``, or None and the error it raised (see :attr:`RawChunk.label_error`)."""
    try:
        return convert(*args), None
    except NbcliError as exc:
        return None, exc


def unseen_text_counts(frame, plan: ColumnPlan, X, unread, opts: DataRequest) -> dict[str, int]:
    """:attr:`RawChunk.unseen_text`: the text cells of numeric columns when
    ``opts`` read them as missing (``unseen="ignore"`` at predict time)."""
    if not unread or opts.infer or opts.unseen != "ignore":
        return {}
    from nbcli.io.cells import unread_counts

    return unread_counts(frame, plan.matrix, X, unread, na_texts(opts.na_values))


def finish_plan(
    plan: ColumnPlan, opts: DataRequest, display: str, sample
) -> tuple[ColumnPlan, dict[str, Categories]]:
    """The plan with its kinds decided and the category tables of its
    categorical features.

    ``sample()`` returns the planning sample as a polars frame (the first
    :data:`~nbcli.io.profile.SAMPLE_ROWS` data rows, columns as the reader
    reads them); it is called only at fit time (``opts.infer``). At predict
    time the tables are the model's (``opts.categories``), fixed.
    """
    from nbcli.io.profile import profile_columns

    if opts.infer and opts.model is not None:
        from nbcli.io.limits import check_statistics_size
        from nbcli.models import registry

        # Before the sample is read: a wide header alone can rule the model out.
        check_statistics_size(display, registry.get(opts.model), len(plan.features))
    if opts.infer:
        frame = sample()
        profiles = profile_columns(frame, list(plan.features), na_texts(opts.na_values))
        if plan.target is not None:
            # Only an empty cell is a missing label (and --na-labels): `NA` or
            # `None` is a class unless named there.
            profiles.update(profile_columns(frame, [plan.target], ("", *opts.na_labels)))
        plan = decide_kinds(plan, profiles, opts, display)
        merged = _spelling_warnings(frame, plan, display)
        if merged:
            plan = replace(plan, warnings=[*plan.warnings, *merged])
    elif opts.read_as_missing:
        # The texts fit read as missing cells of a numeric column, as it read them.
        numeric = set(plan.numeric)
        stray = {c: tuple(texts) for c, texts in opts.read_as_missing.items() if c in numeric}
        plan = replace(plan, stray=stray)
    encoders = {
        name: Categories(
            name, opts.categories.get(name), frozen=not opts.infer, unseen=opts.unseen or "error"
        )
        for name in plan.features
        if plan.kind(name) == CATEGORICAL
    }
    return plan, encoders


def spelling_warning(display: str, name: str, groups, what: str) -> str:
    """The warning for a column whose texts come in several Unicode forms."""
    shown = "; ".join(" and ".join(ascii(t) for t in g) for g in groups[:3])
    more = f" and {len(groups) - 3} more" if len(groups) > 3 else ""
    return (
        f"{display}: column '{name}' writes one text in several Unicode forms ({shown}{more}); "
        f"they are read as one {what}, in normal form C (NFC)"
    )


def read_spelling_warnings(reader: TableReader) -> list[str]:
    """Warnings for labels and categories met in several Unicode forms over
    the whole read, for the columns whose planning sample did not show it
    (those are warned about with the plan)."""
    from nbcli.io.cells import merged_spellings

    plan = reader.plan
    warned = {
        w.split("column '", 1)[1].split("'", 1)[0] for w in plan.warnings if "Unicode forms" in w
    }
    found = []
    if plan.target is not None:
        found.append((plan.target, getattr(reader, "label_spellings", {}), "class"))
    found += [(n, t.spellings, "category") for n, t in reader.encoders.items()]
    out = []
    for name, groups, what in found:
        merged = merged_spellings(groups)
        if merged and name not in warned:
            out.append(spelling_warning(reader.source.display, name, merged, what))
    return out


def _spelling_warnings(frame, plan: ColumnPlan, display: str) -> list[str]:
    """Warnings for labels and categories of the planning sample written in
    more than one Unicode form, which the reader takes for one (NFC)."""
    from nbcli.io.cells import spelling_merges

    names = [plan.target] if plan.target is not None else []
    names += [c for c in plan.features if plan.kind(c) == CATEGORICAL]
    out = []
    for name in names:
        if name not in frame.columns:
            continue
        groups = spelling_merges(frame.get_column(name))
        if not groups:
            continue
        what = "class" if name == plan.target else "category"
        out.append(spelling_warning(display, name, groups, what))
    return out


_READERS: dict[str, type[TableReader]] = {}


def register(cls: type[TableReader]) -> type[TableReader]:
    """Class decorator: ``cls`` reads sources of ``cls.format``."""
    _READERS[cls.format] = cls
    return cls


_END = object()


def read_ahead(items: Iterator[T], *, uses_polars: bool = True) -> Iterator[T]:
    """Yield what ``items`` yields, computing the next item in a worker
    thread while the caller works on the current one.

    polars parses and NumPy converts without holding the GIL, so the next
    chunk is read while this one is used (a streaming fit, say): one item
    ahead, so at most two are held. Exceptions reach the caller where the
    item would have; closing this generator (or an interruption, Ctrl-C or
    SIGTERM) waits for the item in progress, then closes ``items``: a
    generator cannot be closed while the worker runs it. An interruption
    that arrives during that wait is raised after it.

    With ``uses_polars`` (a :class:`TableReader`'s own), the libraries that
    take signals over when imported are imported first, on this thread
    (:func:`nbcli.interrupts.before_threads`), not by the worker; False
    spares the import (polars' is some 80 ms) for items that never use it.
    """
    if uses_polars:
        interrupts.before_threads()
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nbcli-read")
    future: Future | None = None
    try:
        # A signal inside submit would leave the item queued (and run) with
        # no future to wait on before closing ``items``: hold it until the
        # future is known.
        with interrupts.held():
            future = pool.submit(next, items, _END)
        while True:
            item = future.result()
            if item is _END:
                return
            with interrupts.held():
                future = pool.submit(next, items, _END)
            yield cast(T, item)
    finally:
        interruption: BaseException | None = None
        while future is not None:
            # On the future, not on the thread: a join cut short by Ctrl-C
            # counts the thread as ended, and a second join returns at once.
            try:
                wait([future])
                break
            except BaseException as exc:  # Ctrl-C or SIGTERM while waiting: wait on
                interruption = interruption or exc
        pool.shutdown(wait=False)  # its one thread is idle now, and ends
        close = getattr(items, "close", None)
        if close is not None:
            close()
        if interruption is not None:
            raise interruption
