"""``nbcli split``: one data file into train, test and calibration files.

Two passes over the input: the first reads the target column only, through
the reader every other command uses (:func:`nbcli.io.formats.open_reader`:
the same rows, quoting rules, ragged-row and long-line checks and missing
labels), to draw an exact, stratified split plan
(:func:`nbcli.resampling.stratified_split`); the second sends each row to
its part. Each part keeps the input's format:
a CSV row is copied byte for byte (header, delimiter, quoting and gzip
kept), Parquet row groups keep their schema, an NPZ archive keeps its keys.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import os
import stat
import tempfile
import types
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, BinaryIO

import numpy as np

from nbcli.errors import NbcliError
from nbcli.io.atomic import atomic_group, check_outputs
from nbcli.io.cells import as_text, label_codes, na_texts
from nbcli.io.csv_format import read_header
from nbcli.io.messages import translated
from nbcli.io.output_kinds import is_model_file
from nbcli.io.request import DataRequest
from nbcli.io.sources import Source
from nbcli.resampling import CALIB, TEST, TRAIN, stratified_split

PARTS = ("train", "test", "calib")


@dataclass
class SplitReport:
    """What ``split`` wrote.

    Attributes
    ----------
    data : str
        The input file.
    target : str
        The column the split was stratified by (or read for its size).
    seed : int
    stratify : bool
    target_note : str
        How the target was chosen: ``"given by --target"`` or, chosen by
        default, ``"chosen by default: named like a target"`` and the like.
    warnings : list of str
        A target that looks continuous (each distinct value a class).
    outputs : dict of str to str
        Part (``train``, ``test``, ``calib``) to the file written.
    n_samples : dict of str to int
        Rows in each part.
    class_counts : dict of str to dict of str to int
        Rows of each class (label text) in each part.
    removed : list of str
        Parts of an earlier split of the same input that this split does
        not write (a calibration file, when ``calib`` is now 0), removed so
        that the folder holds one split's parts only.
    """

    data: str
    target: str
    seed: int
    stratify: bool
    target_note: str = ""
    warnings: list[str] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    n_samples: dict[str, int] = field(default_factory=dict)
    class_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)


def output_paths(data: str, output_dir, with_calib: bool) -> dict[str, str]:
    """``DIR/<stem>.train.<ext>`` and the others, for ``data`` (``-``: ``stdin.csv``).

    The extension is the last suffix of the file name, the last two for
    ``.gz`` (``x.csv.gz`` gives ``x.train.csv.gz``); a name without one is CSV.
    """
    name = "stdin.csv" if data == "-" else os.path.basename(os.fspath(data))
    pieces = name.split(".")
    keep = 2 if len(pieces) > 2 and pieces[-1].lower() == "gz" else 1
    if len(pieces) > 1:
        stem, ext = ".".join(pieces[:-keep]), ".".join(pieces[-keep:])
    else:
        stem, ext = name, "csv"
    parts = PARTS if with_calib else PARTS[:2]
    folder = os.fspath(output_dir)
    if "://" in folder:
        return {p: folder.rstrip("/") + f"/{stem}.{p}.{ext}" for p in parts}
    return {p: os.path.join(folder, f"{stem}.{p}.{ext}") for p in parts}


def split(
    request: DataRequest,
    *,
    test,
    calib=0,
    stratify: bool = True,
    seed: int = 0,
    output_dir=".",
    force: bool = False,
) -> SplitReport:
    """Split the data of ``request`` into train, test and (with ``calib``) calibration files.

    Parameters
    ----------
    request : DataRequest
        A CSV (optionally gzipped), Parquet or NPZ file, or ``-`` for stdin;
        its ``target``, ``delimiter``, ``x_key`` and ``y_key`` as for
        reading training data: the target column (default as ``fit``
        chooses it), the CSV delimiter (default detected), the NPZ keys of
        features and labels.
    test, calib : float or int
        Size of the test and calibration parts: a fraction in (0, 1) of the
        rows (rounded up) or a row count; ``calib=0`` writes no calibration file.
    stratify : bool
        Share each part among the classes of the target in proportion (by
        the largest-remainder method), else draw from all rows alike.
    seed : int
        Seed of the shuffle that picks the rows: the same seed, the same split.
    output_dir : path
        Folder the parts are written to (see :func:`output_paths`), made
        (with its parents) when it does not exist, just before the parts are
        written; removed again if writing them fails or is interrupted.
    force : bool
        Replace existing outputs that are not earlier splits of the same
        kind of data (see below).

    Returns
    -------
    SplitReport

    Raises
    ------
    NbcliError
        For unreadable input, sizes that leave no training row, or outputs
        that cannot be written (checked before the input is read). Outputs
        appear together, only when every part has been written. An existing
        output is replaced only when it is empty or is data of the input's
        format with the input's columns (CSV header, Parquet schema names,
        NPZ array keys), as an earlier split of it is; anything else (a
        model file, other data) is refused unless ``force``. A part this
        split does not write (``<stem>.calib.<ext>`` without ``calib``) that
        an earlier split of data like the input left in a local
        ``output_dir`` is refused (nothing written), so that a later command
        never takes a part of one split beside another's; with ``force`` it
        is removed once the new parts are in place. A file of that name that
        is not such data is left as it was.

    Examples
    --------
    >>> from nbcli.io.request import DataRequest
    >>> from nbcli.workflows.split import split
    >>> report = split(DataRequest.of("sample_data/iris_train.csv"), test=0.2, output_dir="splits")
    >>> report.n_samples
    {'train': 72, 'test': 18}
    """
    data, delimiter = request.path, request.delimiter
    outputs = output_paths(data, output_dir, bool(calib))
    from nbcli.io.remote import is_url

    if is_url(os.fspath(output_dir)):
        pass  # a store has no folders to make: the objects' names hold the prefix
    elif os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise NbcliError(f"--output-dir {output_dir}: is a file, not a folder")
    # As `predict --output-dir` does, a missing folder is made, but only for
    # the writing: a split that fails or is interrupted leaves none behind.
    made = [] if is_url(os.fspath(output_dir)) else _folders_to_make(output_dir)
    if not made:
        check_outputs(
            [(f"--output-dir ({part})", path) for part, path in outputs.items()],
            [("--data", data)],
        )
    source = Source(data)
    opts = DataRequest(
        target=request.target,
        x_key=request.x_key,
        y_key=request.y_key,
        skip_missing_labels=True,
        na_labels=request.na_labels,
    )
    if source.format == "csv":
        fmt: _Format = _Csv(source, delimiter)
    elif source.format == "parquet":
        fmt = _Parquet(source)
    elif source.format == "npz":
        fmt = _Npz(source)
    else:
        names = {"arff": "ARFF", "svmlight": "svmlight", "feather": "Arrow IPC (Feather)"}
        raise NbcliError(
            f"{source.display}: split copies CSV, Parquet and NPZ files; this "
            f"{names.get(source.format, source.format)} file is not split yet: convert it first"
        )
    if not force:
        for part, path in outputs.items():
            _check_replace(fmt, f"--output-dir ({part}) {path}", path)
    labels, no_label, target_name = _labels(fmt, source, opts, delimiter)
    note, warnings = _target_note(fmt, opts, labels[~no_label], target_name)
    if no_label.any():
        # Rows without a label are shared among the parts like one more class.
        n = int(no_label.sum())
        warnings.append(
            f"{source.display}: {n} {'row has' if n == 1 else 'rows have'} no label (first at row "
            f"{int(np.argmax(no_label)) + 1}); {'it is' if n == 1 else 'they are'} shared "
            "among the parts like a class of its own (fit skips such rows)"
        )
    classes, codes = label_codes(labels)
    try:
        parts = stratified_split(codes, test, calib, stratify=stratify, seed=seed)
    except ValueError as exc:
        raise NbcliError(f"{source.display}: {exc}") from None
    stale = [] if is_url(os.fspath(output_dir)) else _stale_parts(fmt, data, output_dir, outputs)
    if stale and not force:
        # Left, it would pair an old calibration part with the new training
        # part; removed unasked, a file of the user's that merely shares the
        # input's columns would be lost. The user says which.
        raise NbcliError(
            f"{stale[0]}: a part of an earlier split of the same file, which this split "
            "does not write, is in --output-dir: left beside the new parts it would hold "
            "rows of the new training part; remove it, or pass --force to have split "
            "remove it with the earlier split"
        )
    # All parts replace their files together: never a new test split beside an old train split.
    with _made_for_writing(output_dir, made), atomic_group(list(outputs.values())) as handles:
        fmt.write(parts, handles)
    # The renames have put the new parts in place, and from them on a signal
    # is held back: the stale part goes with the split it belonged to.
    for path in stale:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise NbcliError(
                f"{path}: is a part of an earlier split, beside the new parts, and could "
                f"not be removed ({exc.strerror or exc}); remove it"
            ) from None
    report = SplitReport(
        data=source.display,
        target=target_name,
        seed=int(seed),
        stratify=stratify,
        target_note=note,
        warnings=warnings,
    )
    report.outputs = dict(outputs)
    report.removed = stale
    for i, part in enumerate(outputs):
        report.n_samples[part] = int(np.sum(parts == (TRAIN, TEST, CALIB)[i]))
    by_part = np.zeros((classes.size, 3), dtype=np.int64)
    np.add.at(by_part, (codes, parts), 1)
    # Rows without a label are counted in n_samples, under no class.
    labelled = [k for k, c in enumerate(classes) if not (c == "" and no_label.any())]
    report.class_counts = {
        part: {str(classes[k]): int(by_part[k, i]) for k in labelled}
        for i, part in enumerate(outputs)
    }
    untrained = [str(classes[k]) for k in labelled if by_part[k, TRAIN] == 0]
    # A target that looks continuous has its warning already: each value a class.
    if untrained and not warnings:
        shown = ", ".join(repr(c) for c in untrained[:10])
        more = f" and {len(untrained) - 10} more" if len(untrained) > 10 else ""
        report.warnings.append(
            f"{'class' if len(untrained) == 1 else 'classes'} {shown}{more} "
            f"{'has' if len(untrained) == 1 else 'have'} no row in the training part (too few "
            "rows to share): a model fitted on it cannot predict "
            f"{'it' if len(untrained) == 1 else 'them'}"
        )
    return report


def _stale_parts(fmt: _Format, data: str, output_dir, outputs: dict[str, str]) -> list[str]:
    """The files of the part names of ``data`` that this split does not
    write (see :func:`output_paths`) and that hold data like the input: the
    leftovers of an earlier split with other options."""
    stale = []
    for part, path in output_paths(data, output_dir, True).items():
        if part in outputs:
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue
        # Only a regular, non-empty file of the input's format and columns
        # is an earlier split's part: anything else is the user's file.
        if stat.S_ISREG(st.st_mode) and st.st_size > 0 and fmt.same_columns(path):
            with contextlib.suppress(OSError):
                if data != "-" and os.path.samefile(path, data):
                    continue  # the input itself, reached by another name
            stale.append(path)
    return stale


def _folders_to_make(output_dir) -> list[str]:
    """The folders, outermost first, that writing into ``output_dir`` makes
    (none when it exists), checked that they can be made.

    Raises
    ------
    NbcliError
        When the nearest existing folder above is not a folder or refuses a
        new folder (probed by making and removing one).
    """
    made: list[str] = []
    path = os.path.abspath(output_dir)
    while not os.path.lexists(path):
        made.insert(0, path)
        path = os.path.dirname(path)
    if made:
        try:
            os.rmdir(tempfile.mkdtemp(prefix=".nbcli-probe-", dir=path))
        except OSError as exc:
            raise NbcliError(
                f"--output-dir {output_dir}: cannot create the folder ({exc.strerror or exc})"
            ) from None
    return made


@contextlib.contextmanager
def _made_for_writing(output_dir, made: list[str]):
    """Make the folders ``made`` for the body; remove them again (innermost
    first, only while empty) when the body fails or is interrupted."""
    try:
        if made:
            os.makedirs(output_dir, exist_ok=True)
    except OSError as exc:
        raise NbcliError(
            f"--output-dir {output_dir}: cannot create the folder ({exc.strerror or exc})"
        ) from None
    try:
        yield
    except BaseException:
        for folder in reversed(made):
            try:
                os.rmdir(folder)
            except OSError:
                break
        raise


def _labels(fmt: _Format, source: Source, opts, delimiter) -> tuple[np.ndarray, np.ndarray, str]:
    """The labels of every row as text (``""`` where missing), which rows
    have none, and the target's name, read as every command reads the file."""
    from nbcli.io.data import default_chunk_rows, strip_labels
    from nbcli.io.formats import open_reader

    reader = open_reader(source, opts, delimiter)
    if reader.plan.target is None:
        raise NbcliError(f"{source.display}: has no target column to split by")
    reader.read_features = False
    fmt.note = reader.plan.note
    texts, missing = [], []
    for chunk in reader.chunks(default_chunk_rows(1), resolve=False):
        if chunk.label_error is not None:
            raise chunk.label_error
        y = np.asarray(chunk.y)
        texts.append(as_text(y))
        missing.append(
            np.zeros(y.shape[0], dtype=bool) if chunk.y_missing is None else chunk.y_missing
        )
    if not texts:
        raise NbcliError(f"{source.display}: has a header but no data rows")
    # Object arrays of shared strings: a fixed-width array would take the
    # longest label's width for every row.
    labels = strip_labels(np.concatenate(texts))
    no_label = np.concatenate(missing)
    labels[no_label] = ""
    fmt.n = labels.size
    return labels, no_label, reader.plan.target


def _target_note(fmt, opts, labels: np.ndarray, target: str) -> tuple[str, list[str]]:
    """How ``target`` was chosen, and the reader's warning when it looks continuous."""
    import polars as pl

    from nbcli.io.plan import _check_target
    from nbcli.io.profile import SAMPLE_ROWS, profile_columns

    chosen = getattr(fmt, "note", None)
    if opts.target is not None:
        note = "given by --target"
    elif chosen is None:
        note = f"chosen by default: the --y-key array {target!r}"
    else:
        note = "chosen by default: " + chosen.split("(", 1)[-1].rstrip(")")
    frame = pl.DataFrame({target: pl.Series(labels[:SAMPLE_ROWS].tolist(), dtype=pl.String)})
    profile = profile_columns(frame, [target], na_texts(opts.na_values))[target]
    # Split refuses nothing the user may still mean, so a chosen target that
    # looks continuous is warned about as an explicit one is.
    plan = types.SimpleNamespace(target=target, note=None)
    warnings = _check_target(plan, profile, replace(opts, target=target), fmt.display)  # type: ignore[arg-type]
    return note, warnings


def _check_replace(fmt: _Format, shown: str, path: str) -> None:
    """Refuse to replace an existing file that is not data like the input."""
    from nbcli.io.output_kinds import KIND_NAMES, file_kind

    try:
        st = os.stat(path)
    except OSError:
        return
    if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
        return
    if fmt.same_columns(path):
        return
    found = file_kind(path)
    what = KIND_NAMES[found] if found in KIND_NAMES else "another kind of file"
    raise NbcliError(
        f"{shown}: exists and is not a split of data like {fmt.display} (it is {what}); "
        "remove it, choose another --output-dir, or give --force to replace it"
    )


class _Format:
    display = ""
    #: How the target was chosen (the plan's note), once the labels are read.
    note: str | None = None
    #: Rows of the input, once the labels are read.
    n = 0

    def same_columns(self, path: str) -> bool:
        """Whether the existing file ``path`` is data of this format and columns."""
        raise NotImplementedError

    def write(self, parts: np.ndarray, handles: list[BinaryIO]) -> None:
        raise NotImplementedError


def _lines(stream: BinaryIO, lone_cr: bool) -> Iterator[bytes]:
    """The lines of ``stream``, each with its ending: ``\n`` (or ``\r\n``), or with
    ``lone_cr`` a lone ``\r`` too (a file whose lines end so, as the reader takes it)."""
    if not lone_cr:
        yield from stream
        return
    for line in stream:
        pieces = line.split(b"\r")
        for piece in pieces[:-1]:
            yield piece + b"\r"
        if pieces[-1]:
            yield pieces[-1]


def csv_records(
    stream: BinaryIO,
    *,
    lone_cr: bool = False,
    display: str = "the data",
    delimiter: str | None = None,
) -> Iterator[bytes]:
    """The records of a CSV stream as their raw bytes, line ending included.

    A record ends at a line break outside double quotes (RFC 4180: a quote
    inside a quoted field is doubled, so an odd count of quotes so far means
    the field is still open); blank lines are skipped, as the reader does.
    ``lone_cr``: lines end in a lone carriage return (see :func:`_lines`).
    With ``delimiter``, records whose cells are all blank (``,,``) are
    skipped too, as the reader skips them.

    Raises
    ------
    NbcliError
        When the stream ends inside a quoted field (a file cut short): its
        last record would be written as a line no reader can parse.
    """
    pending: list[bytes] = []
    quotes = 0
    for line in _lines(stream, lone_cr):
        pending.append(line)
        quotes += line.count(b'"')
        if quotes % 2:
            continue
        record = pending[0] if len(pending) == 1 else b"".join(pending)
        pending.clear()
        quotes = 0
        if record.strip() and not (delimiter is not None and _blank(record, delimiter)):
            yield record
    if pending and b"".join(pending).strip():
        raise NbcliError(
            f"{display}: ends inside a quoted field (a '\"' that is never closed), as if the "
            "file was cut short; check that the copy or download finished"
        )


def _blank(record: bytes, delimiter: str) -> bool:
    """Whether every cell of ``record`` is empty or blank."""
    if record.translate(None, b' \t\r\n"' + delimiter.encode()):
        return False
    # Nothing but quotes, spaces and delimiters: parsed, as a quote may be a cell's text.
    cells = next(csv.reader([record.decode("utf-8")], delimiter=delimiter), [])
    return not any(c.strip() for c in cells)


class _Csv(_Format):
    def __init__(self, source: Source, delimiter: str | None):
        self.source = source
        self.display = source.display
        self.delimiter = delimiter
        self.note: str | None = None
        self.header = read_header(source.open_binary, source.display, delimiter)

    def same_columns(self, path):
        if is_model_file(path):
            return False
        try:
            other = Source(path)
            if other.format != "csv":
                return False
            with translated(path):
                header = read_header(other.open_binary, path, self.header.delimiter)
        except (NbcliError, OSError, UnicodeDecodeError):
            return False
        return list(header.columns) == list(self.header.columns)

    def write(self, parts, handles):
        gz = self.source.gzipped or self.source.display.lower().endswith(".gz")
        with contextlib.ExitStack() as stack:
            outs: list[Any] = [
                stack.enter_context(gzip.GzipFile(fileobj=h, mode="wb", mtime=0)) if gz else h
                for h in handles
            ]
            with translated(self.source.display), self.source.open_binary() as stream:
                records = csv_records(
                    stream,
                    lone_cr=self.header.lone_cr,
                    display=self.source.display,
                    delimiter=self.header.delimiter,
                )
                header = next(records)
                ending = (
                    b"\r\n"
                    if header.endswith(b"\r\n")
                    else b"\r"
                    if header.endswith(b"\r")
                    else b"\n"
                )
                if not header.endswith((b"\n", b"\r")):
                    header += ending
                for out in outs:
                    out.write(header)
                i = -1
                for i, record in enumerate(records):
                    if i >= parts.size:
                        break
                    if not record.endswith((b"\n", b"\r")):
                        record += ending
                    outs[parts[i]].write(record)
                if i + 1 != parts.size:
                    # The records are cut where the reader cuts its rows; a
                    # file on which they disagree is not copied in part.
                    raise NbcliError(
                        f"{self.source.display}: its records could not be matched with the "
                        f"{parts.size} rows read; the parts are not written"
                    )


class _Parquet(_Format):
    def __init__(self, source: Source):
        import pyarrow.parquet as pq

        self.source = source
        self.display = source.display
        self.note: str | None = None
        with translated(source.display):
            self.file = pq.ParquetFile(source.file_or_buffer())

    def same_columns(self, path):
        import pyarrow.parquet as pq

        try:
            names = pq.read_schema(path).names
        except Exception:  # not Parquet, or unreadable
            return False
        return list(names) == list(self.file.schema_arrow.names)

    def write(self, parts, handles):
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = self.file.schema_arrow
        writers = [pq.ParquetWriter(h, schema) for h in handles]
        start = 0
        with translated(self.source.display):
            for batch in self.file.iter_batches():
                here = parts[start : start + batch.num_rows]
                for p, writer in enumerate(writers):
                    writer.write_batch(batch.filter(pa.array(here == p)))
                start += batch.num_rows
        for writer in writers:
            writer.close()


class _Npz(_Format):
    def __init__(self, source: Source):
        from nbcli.io.npz_format import read_member

        self.source = source
        self.display = source.display
        with translated(source.display):
            with np.load(source.file_or_buffer(), allow_pickle=False) as archive:
                self.arrays = {k: read_member(archive, k, self.display) for k in archive.files}

    def same_columns(self, path):
        if is_model_file(path):
            return False
        try:
            with np.load(path, allow_pickle=False) as archive:
                return sorted(archive.files) == sorted(self.arrays)
        except Exception:  # not an NPZ archive, or unreadable
            return False

    def write(self, parts, handles):
        # Arrays of one entry per row are split; the rest (feature names) are copied.
        for p, handle in enumerate(handles):
            out = {
                k: (
                    a[parts == p]
                    if a.ndim >= 1 and a.shape[0] == self.n and k != "feature_names"
                    else a
                )
                for k, a in self.arrays.items()
            }
            np.savez(handle, **out)
