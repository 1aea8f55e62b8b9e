"""Read a data set (features and class labels) from CSV, gzip-compressed CSV,
NPZ, Parquet or stdin.

:func:`read_dataset` reads a whole file, :func:`iter_dataset` reads it in
chunks of rows for streaming fits and predictions. Both choose the target
column and the feature columns the same way (:mod:`nbcli.io.plan`), and
raise :class:`~nbcli.errors.NbcliError` with a one-line message (file name
first, then the column and first offending row where that applies) for
anything wrong with the input.

The parts, one module each: where the bytes come from
(:mod:`nbcli.io.sources`), the column plan (:mod:`nbcli.io.plan`), cell
conversion (:mod:`nbcli.io.cells`) and messages (:mod:`nbcli.io.messages`),
and one reader per format behind one interface (:mod:`nbcli.io.readers`:
:mod:`~nbcli.io.csv_format`, :mod:`~nbcli.io.parquet_format`,
:mod:`~nbcli.io.npz_format`). CSV and Parquet are parsed by polars.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nbcli import interrupts
from nbcli.errors import NbcliError
from nbcli.io.cells import check_cells, label_codes, resolve_labels, text_array
from nbcli.io.formats import open_reader
from nbcli.io.messages import fail
from nbcli.io.readers import RawChunk, TableReader, read_ahead
from nbcli.io.request import DataRequest
from nbcli.io.sources import Source, file_sha256

__all__ = [
    "Dataset",
    "DatasetStream",
    "read_dataset",
    "iter_dataset",
    "resolve_labels",
    "file_sha256",
    "default_chunk_rows",
]


@dataclass
class Dataset:
    """Features, labels and the names that go with them.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features), float64
        Finite values of the numeric features (possibly column-major).
    y : ndarray of shape (n_samples,) or None
        Class labels (int64, bool or str), or None when there is no target.
    feature_names : list of str, length n_features
        The numeric features, the columns of ``X``.
    target : str or None
        The target column (CSV, Parquet) or array key (NPZ) used for ``y``.
    path : str
        The path as given, ``"-"`` for stdin.
    kept : dict of str to ndarray of shape (n_samples,)
        Columns asked for with ``keep=``, values as read (e.g. an ID column).
    note : str or None
        A sentence worth showing the user, such as which column became the
        target and why.
    y_missing : ndarray of shape (n_samples,), bool, or None
        Rows without a label (only when the read options let them through:
        ``skip_missing_labels``); their ``y`` entry is a placeholder.
    words : dict of str to ndarray of shape (n_samples,)
        Text features read as words (``kinds={column: "words"}``): object
        arrays of str, a missing cell an empty document.
    y_coding : LabelCoding or None
        Text labels coded once as read (:class:`~nbcli.distinct.LabelCoding`),
        used only while it :meth:`~nbcli.distinct.LabelCoding.describes` ``y``.
    """

    X: np.ndarray
    y: np.ndarray | None
    feature_names: list[str]
    target: str | None
    path: str
    kept: dict[str, np.ndarray] = field(default_factory=dict)
    note: str | None = None
    y_missing: np.ndarray | None = None
    words: dict[str, np.ndarray] = field(default_factory=dict)
    y_coding: Any = None

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])


def strip_labels(y):
    """Text labels without surrounding whitespace (``" x"`` and ``"x"`` are one
    class, at fit and at scoring alike); other labels as they are."""
    return coded_labels(y)[0]


def coded_labels(y, coding=None) -> tuple:
    """``(labels, coding)``: the labels as :func:`strip_labels` gives them and,
    for text labels, their :class:`~nbcli.distinct.LabelCoding` (coded here
    once, for the fingerprint and the model's statistics), else None.
    ``coding``: the reader's coding of ``y``, used instead of coding it again."""
    from nbcli.distinct import LabelCoding

    if coding is not None and not coding.describes(y):
        coding = None
    if y is None or y.dtype.kind not in "UO" or y.size == 0:
        return y, coding
    if y.dtype.kind == "O":
        values = y.tolist() if coding is None else coding.uniques.tolist()
        kinds = set(map(type, values))
        if kinds != {str} and not all(issubclass(k, str) for k in kinds):
            return y, coding
    # Stripped once per distinct label; rows share the stripped strings.
    if coding is None:
        uniques, codes = label_codes(y)
    else:
        uniques, codes = coding.uniques, coding.codes
    stripped = [v.strip() for v in uniques.tolist()]
    if stripped == uniques.tolist():
        out = y if y.dtype.kind == "O" else uniques[codes]
        return out, LabelCoding(out, uniques, codes)
    # Stripping may make two labels one, or change their order: the few
    # distinct labels are coded again, and the rows through them.
    merged, recode = label_codes(text_array(stripped))
    out = text_array(stripped)[codes]
    return out, LabelCoding(out, merged, recode[codes])


def _dataset(
    reader: TableReader,
    chunk: RawChunk,
    missing: str,
    unseen_text: dict | None = None,
    remedies: tuple[str, ...] = ("ignore", "drop"),
) -> Dataset:
    """A chunk as a Dataset, after the one check of its feature cells
    (missing cells refused under ``missing="error"``).

    Text in a numeric column the reader let through (``--unseen ignore`` at
    predict time, :attr:`RawChunk.unseen_text`) is a missing cell, counted
    per column in ``unseen_text``, unless missing cells are refused: then
    it is refused as text, as without ``--unseen ignore``.
    """
    plan = reader.plan
    unread = chunk.unread
    if chunk.unseen_text and missing != "error":
        unread = {}
        if unseen_text is not None:
            for name, n in chunk.unseen_text.items():
                unseen_text[name] = unseen_text.get(name, 0) + n
    try:
        opts = getattr(reader, "opts", None)
        typed = getattr(opts, "column_types", None)
        # At scoring time --unseen ignore reads such text as a missing cell.
        scoring = opts is not None and not opts.infer and opts.unseen != "ignore"
        check_cells(
            chunk.X,
            plan.matrix,
            reader.source.display,
            chunk.row_offset,
            unread,
            missing,
            remedies,
            typed=typed,
            unseen_way=scoring and missing != "error",
        )
    except NbcliError as cell_error:
        # The first bad row of the chunk is reported, whether its label or a
        # cell is at fault, so any chunking names the same row.
        label = chunk.label_error
        if label is not None and label.row is not None and cell_error.row is not None:
            if label.row < cell_error.row:
                raise label from None
        raise
    if chunk.label_error is not None:
        raise chunk.label_error
    y, y_coding = coded_labels(chunk.y, chunk.y_coding)
    return Dataset(
        X=chunk.X,
        y=y,
        y_coding=y_coding,
        feature_names=list(plan.matrix),
        target=plan.target,
        path=reader.source.path,
        kept=chunk.kept,
        note=plan.note,
        y_missing=chunk.y_missing,
        words=chunk.words,
    )


def _no_rows(display: str):
    return fail(display, "has a header but no data rows; add rows below the header")


def read_dataset(path, request: DataRequest | None = None, **options) -> Dataset:
    """Read a whole data file into a :class:`Dataset`.

    Parameters
    ----------
    path : str or path-like
        A ``.csv``/``.tsv``/``.txt`` (or any other name: CSV), ``.csv.gz``,
        ``.npz`` or ``.parquet`` file, or ``"-"`` for stdin.
    request : DataRequest, optional
        How to read it (:class:`~nbcli.io.request.DataRequest`: target,
        delimiter, NPZ keys, features, drop, ``na_values``, ``missing``...);
        its ``data`` is not used. Default: every field's default.
    **options
        Fields of the request replaced for this read
        (:meth:`~nbcli.io.request.DataRequest.reading`), such as
        ``target``, ``features``, ``model_features`` (the model's features:
        exactly these columns, in this order, matched by name; NPZ without
        ``feature_names``: by position), ``need_target`` (False at
        prediction time: the target is never guessed), ``keep`` (columns
        returned as read in ``Dataset.kept``), ``target_hint``, ``infer``
        and ``categorical`` (decide the kinds of the columns from the first
        rows), ``categories``, ``skip_missing_labels``, ``kinds``. With no
        target given: ``target_hint`` if that column exists, else (when
        ``need_target``) the one column named ``label``/``target``/
        ``class``/``y`` (any case), else the last column.

    Returns
    -------
    Dataset
        ``X`` of shape (n_samples, n_features) float64 and ``y`` of shape
        (n_samples,): CSV labels through :func:`resolve_labels`; NPZ and
        Parquet labels with their stored type (integral floats become int64).

    Raises
    ------
    NbcliError
        For every problem with the input, with the file, the column and the
        first offending row (1-based, header not counted) in the message.

    Examples
    --------
    >>> from nbcli.io.data import read_dataset
    >>> data = read_dataset("sample_data/iris_test.csv")
    >>> data.X.shape, data.y[:2].tolist()
    ((30, 4), ['virginica', 'setosa'])
    """
    opts = (request or DataRequest()).reading(**options)
    reader = open_reader(Source(path), opts, opts.delimiter)
    chunk = next(iter(reader.chunks(None, resolve=True)), None)
    if chunk is None:
        raise _no_rows(reader.source.display)
    return _dataset(reader, chunk, opts.missing or "error", remedies=opts.missing_remedies)


# Values per chunk when the caller does not choose: 2 million float64 is
# 16 MB; the text of the chunk is held beside it while it is converted.
# Smaller chunks cost more calls; larger ones cost more memory and, being
# fresh memory the system must clear each time, more time too, and delay
# the overlap of reading with the work on the rows (measured on 100
# columns: 8 million values a chunk took about 10% longer to read).
CHUNK_VALUES = 2 << 20

#: Values of a file, at most, that a streaming read of it with the default
#: chunks may still hold whole afterwards, for the summaries that need all
#: its rows (a fit's training accuracy): the chunk size of earlier releases,
#: so those summaries cover the same files.
WHOLE_VALUES = 8 << 20


#: Rows per chunk, at most, when the file has text columns read as words.
TEXT_CHUNK_ROWS = 20_000


def default_chunk_rows(n_columns: int, values: int | None = None) -> int:
    """Rows per chunk so that one chunk holds about ``values`` values
    (default :data:`CHUNK_VALUES`)."""
    values = CHUNK_VALUES if values is None else values
    return max(1_000, min(1_000_000, values // max(1, n_columns)))


class DatasetStream:
    """The rows of a data file as :class:`Dataset` chunks of at most
    ``chunk_size`` rows, all with the same ``feature_names`` and ``target``.

    The header (or schema) is read and checked when the stream is made; the
    rows are read on iteration, the next chunk parsed in a worker thread
    while the caller works on this one, and every iteration starts again
    from the top. CSV and Parquet files are read in chunks; stdin, named
    pipes and devices (read once) and NPZ archives are held whole.

    Attributes
    ----------
    feature_names : list of str
        The numeric features.
    word_columns : list of str
        The WORDS features (text read as words), in feature order.
    target : str or None
    note : str or None
    path : str
    plan : ColumnPlan
        With the kinds and warnings of the plan.
    chunk_size : int
        Rows per chunk.
    whole_rows : int
        Files of at most this many rows may be held whole by a caller of a
        streaming read (see :data:`WHOLE_VALUES`); ``chunk_size`` when the
        caller chose it.
    """

    def __init__(self, path, opts: DataRequest, *, raw_labels: bool, labels: bool = True):
        source = Source(path)
        chunk_size = opts.chunk_size
        display = source.display
        if chunk_size is not None and (
            isinstance(chunk_size, bool)
            or not isinstance(chunk_size, (int, np.integer))
            or chunk_size < 1
        ):
            raise fail(
                display, f"the chunk size must be a positive whole number, got {chunk_size!r}"
            )
        self.path = source.path
        self._raw_labels = raw_labels
        self._reader = open_reader(source, opts, opts.delimiter)
        self._reader.read_target = bool(labels)
        self._missing = opts.missing or "error"
        self._remedies = opts.missing_remedies
        self._unseen_text: dict[str, int] = {}
        plan = self._reader.plan
        self.feature_names = list(plan.matrix)
        in_matrix = set(self.feature_names)
        self.word_columns = [c for c in plan.features if c not in in_matrix]
        self.target = plan.target
        self.note = plan.note
        self.plan = plan
        if chunk_size is not None:
            whole_rows = int(chunk_size)
        else:
            chunk_size = default_chunk_rows(len(self.feature_names) + 1)
            whole_rows = default_chunk_rows(len(self.feature_names) + 1, WHOLE_VALUES)
            if self.word_columns:
                # A document is many values once tokenised (and a Python
                # string before that): fewer rows keep a chunk to tens of MB.
                chunk_size = whole_rows = min(chunk_size, TEXT_CHUNK_ROWS)
        self.chunk_size = int(chunk_size)
        self.whole_rows = int(whole_rows)

    @property
    def categories(self) -> dict[str, list[str]]:
        """The categories of each categorical feature, as read so far."""
        return {name: list(t.values) for name, t in self._reader.encoders.items()}

    def spelling_warnings(self) -> list[str]:
        """After a full read at fit: labels and categories met in several
        Unicode forms beyond what the plan warned about (see
        :func:`nbcli.io.readers.read_spelling_warnings`)."""
        from nbcli.io.readers import read_spelling_warnings

        return read_spelling_warnings(self._reader)

    def read_warnings(self) -> list[str]:
        """After a full read: rows with fewer fields than the header (see
        :meth:`nbcli.io.readers.TableReader.read_warnings`)."""
        return self._reader.read_warnings()

    @property
    def unseen(self) -> dict[str, int]:
        """Cells per categorical feature given the unseen code so far, and per
        numeric feature its text cells read as missing (``--unseen ignore``)."""
        counts = {name: t.n_unseen for name, t in self._reader.encoders.items()}
        counts.update(self._unseen_text)
        return counts

    def __iter__(self) -> Iterator[Dataset]:
        reader = self._reader
        chunks = read_ahead(
            iter(reader.chunks(self.chunk_size, resolve=not self._raw_labels)),
            uses_polars=reader.uses_polars,
        )
        rows = 0
        try:
            for chunk in chunks:
                # A worker thread's reading stops once the command is interrupted.
                interrupts.checkpoint()
                yield _dataset(reader, chunk, self._missing, self._unseen_text, self._remedies)
                rows += chunk.n_rows
        finally:
            chunks.close()  # type: ignore[attr-defined]
        if rows == 0:
            raise _no_rows(reader.source.display)


def iter_dataset(
    path,
    request: DataRequest | None = None,
    *,
    raw_labels: bool = False,
    labels: bool = True,
    **options,
) -> DatasetStream:
    """Read a data file in chunks of at most ``request.chunk_size`` rows
    (None: about 2 million values per chunk, see :func:`default_chunk_rows`).

    Takes the request and options of :func:`read_dataset` and chooses the same target
    and features. CSV labels go through :func:`resolve_labels` chunk by
    chunk, unless ``raw_labels`` is True: then each chunk's ``y`` is a
    unicode array as read, so that a caller can resolve the type once, on the
    set of all labels (a column that looks numeric in one chunk and textual
    in another would otherwise change type between chunks). NPZ and Parquet
    labels keep their stored type either way. With ``labels=False`` the
    target column is not read at all (each chunk's ``y`` is None): a caller
    that needs no labels neither pays for them nor is stopped by a missing
    one.

    Raises
    ------
    NbcliError
        When the stream is made, for problems with the header, names and
        options; while iterating, for bad cells (row numbers count from the
        first data row of the file, not of the chunk).
    """
    opts = (request or DataRequest()).reading(**options)
    return DatasetStream(path, opts, raw_labels=raw_labels, labels=labels)
