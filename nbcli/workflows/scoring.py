"""Scoring files with a model: the one path every workflow predicts through.

``predict``, ``evaluate``, ``calibrate`` and ``compare`` all get their
posteriors from :func:`iter_scores`, so a prediction written by ``predict``
and one scored by ``evaluate`` can never disagree.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from nbcli.errors import NbcliError
from nbcli.io.request import DataRequest
from nbcli.workflows.engine import Reporter


@dataclass
class ScoredChunk:
    """Posteriors of one chunk of rows, with what the workflows need around them."""

    log_proba: np.ndarray  # (n_rows, n_classes), calibrated if the model file has a calibrator
    y: np.ndarray | None  # labels from the file, if it has the target column
    kept: dict
    X: np.ndarray  # the numeric features (with text columns, one CRC-32 per document too)
    #: Rows that were scored (the others, under ``--missing drop``, have NaN rows).
    scored: np.ndarray | None = None
    #: Rows of the file before this chunk.
    row_offset: int = 0
    #: Word occurrences of text columns that training never kept.
    unseen_words: int = 0

    @property
    def n_scored(self) -> int:
        return self.n_rows if self.scored is None else int(self.scored.sum())

    @property
    def n_rows(self) -> int:
        return self.log_proba.shape[0]


@dataclass
class Scores:
    """Every posterior and label of a labelled file, gathered by :func:`score`.

    Attributes
    ----------
    log_proba : ndarray of shape (n_samples, n_classes), or None
        Log posteriors (calibrated if the model file carries a calibrator);
        None when :func:`score` was asked for the posteriors instead.
    y_true : ndarray of shape (n_samples,)
        Labels as read from the file.
    training_match : bool
        True when the rows are the model's training data (same fingerprint).
    n_left_out : int
        Rows with a missing value left out under an explicit ``--missing
        drop`` (their posteriors and labels are not in the arrays).
    proba : ndarray of shape (n_samples, n_classes), or None
        The posteriors, when asked for: column-major (each class's column
        contiguous, as the ranking figures read them).
    predicted : ndarray of int, shape (n_samples,), or None
        With ``proba``: the column of each row's largest posterior (the first
        of equal ones, as ``numpy.argmax`` and ``nbcli predict``).
    """

    log_proba: np.ndarray | None
    y_true: np.ndarray
    training_match: bool
    n_left_out: int = 0
    proba: np.ndarray | None = None
    predicted: np.ndarray | None = None


def iter_scores(
    mf,
    path,
    *,
    read: DataRequest | None = None,
    need_target: bool = False,
    keep: list[str] | None = None,
    reporter: Reporter | None = None,
    unseen_counts: dict | None = None,
    labels: bool = True,
) -> Iterator[ScoredChunk]:
    """Stream a data file through a model; yields :class:`ScoredChunk`.

    Parameters
    ----------
    mf : nbcli.io.modelfile.ModelFile
        A loaded model file.
    path : str
        Data file (CSV, NPZ, Parquet) or ``-`` for stdin.
    read : DataRequest, optional
        How to read it (default: the readers' defaults); its ``data`` is not used.
    need_target : bool
        Refuse a file without the label column.
    keep : list of str, optional
        Input columns to carry along in each chunk's ``kept``.
    unseen_counts : dict, optional
        Filled as the chunks go with ``{categorical column: cells with a
        category unseen in training}`` (under ``unseen="ignore"``).
    labels : bool
        Read the target column into ``ScoredChunk.y``; with False it is
        not read (``y`` is None), so a missing label does not matter.

    Categorical columns are read through the model file's categories and
    missing cells by the model's policy (``read.missing``/``read.unseen``
    override them): under ``ignore`` every row is scored; under ``drop`` a
    row with a missing cell is not, and its ``log_proba`` row is NaN (an
    empty prediction), ``ScoredChunk.scored`` saying which were.

    Raises
    ------
    NbcliError
        For unreadable data, missing feature columns, or values the model
        refuses (the message names file, column and row).
    """
    from nbcli.io.data import iter_dataset
    from nbcli.workflows.blocks import fingerprint_columns, model_blocks
    from nbcli.workflows.data_errors import data_error
    from nbcli.workflows.tables import read_options_for

    reporter = reporter or Reporter()
    read = read or DataRequest()
    table = read_options_for(mf, missing=read.missing, unseen=read.unseen, na_values=read.na_values)
    blocks = model_blocks(mf)
    if read.target is not None and read.target in blocks.input_columns:
        # The column would be read twice, as a feature and as labels (or, by
        # predict, not ignored at all).
        trained = f" (it was trained on {mf.target!r})" if mf.target else ""
        raise NbcliError(
            f"{path}: --target {read.target} is a feature column of the model{trained}; "
            "name the label column, or leave --target out"
        )
    stream = iter_dataset(
        path,
        read,
        model_features=blocks.input_columns,
        need_target=need_target,
        keep=keep,
        target_hint=mf.target,
        labels=labels or need_target,
        **{**table, "kinds": {**table["kinds"], **blocks.kinds}},
    )
    if unseen_counts is not None:
        unseen_counts.update({name: 0 for name in stream.categories})
    # What the reader noticed of the file (a last line cut short); at fit
    # time the training report carries these.
    for message in stream.plan.warnings:
        reporter.warn(message)
    rows = 0
    for ds in reporter.progress(stream, f"scoring {path}"):
        scored = None
        if table["missing"] != "ignore" and ds.X.shape[1]:
            holes = np.isnan(ds.X).any(axis=1)
            if holes.any():
                scored = ~holes
        X: Any = ds.X if scored is None else ds.X[scored]
        where = None if scored is None else np.flatnonzero(scored)
        counts = blocks.matrix(X, ds.words if scored is None else _rows_of(ds.words, scored))
        X, unseen_words = counts.X, counts.unseen_tokens
        fingerprinted = fingerprint_columns(ds.X, ds.words, blocks.text_columns)
        try:
            # Rows the model cannot score are refused just below, not warned about.
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                logp = mf.model.predict_log_proba(X)
        except ValueError as exc:
            raise data_error(
                path, exc, mf.feature_names, rows, rows=_file_rows(where, rows)
            ) from None
        # The model's own posteriors are checked before any calibrator sees
        # them, so a row that cannot be scored is named the same way with or
        # without one.
        if ds.X.shape[1]:
            numeric = ds.X if scored is None else ds.X[scored]
            _check_scored(path, logp, numeric, ds.feature_names, rows, where)
        if mf.calibrator is not None:
            try:
                logp = mf.calibrator.transform(logp)
            except ValueError as exc:
                raise data_error(path, exc, mf.feature_names, rows) from None
        if scored is not None:
            # Rows that cannot be scored get an empty prediction, never dropped.
            full = np.full((ds.X.shape[0], logp.shape[1]), np.nan)
            full[scored] = logp
            logp = full
        if unseen_counts is not None:
            unseen_counts.update(stream.unseen)
            _count_unseen_codes(unseen_counts, mf, X, labelled=set(stream.categories))
        yield ScoredChunk(
            log_proba=logp,
            y=ds.y,
            kept=ds.kept,
            X=fingerprinted,
            scored=scored,
            row_offset=rows,
            unseen_words=unseen_words,
        )
        rows += ds.X.shape[0]
    # Found only by reading every row: said once the file is read.
    for message in stream.read_warnings():
        reporter.warn(message)


def _count_unseen_codes(counts: dict, mf, X, labelled: set) -> None:
    """Add the cells of integer-coded categorical columns whose code the model
    never saw; columns read as labels (``labelled``) the reader counts."""
    counter = getattr(mf.model, "unseen_cells", None)
    if counter is None or getattr(mf.model, "unseen", "error") != "ignore":
        return
    for j in np.flatnonzero(cells := counter(X)):
        name = str(mf.feature_names[j])
        if name not in labelled:
            counts[name] = counts.get(name, 0) + int(cells[j])


def _rows_of(words: dict, rows: np.ndarray) -> dict:
    return {name: values[rows] for name, values in words.items()}


def _file_rows(where, offset: int):
    return None if where is None else offset + where


def _check_scored(
    path, logp: np.ndarray, X: np.ndarray, feature_names, row_offset: int, where=None
) -> None:
    """Refuse the first row whose posterior is undefined (NaN).

    That happens when a row lies so far from the training data (by more
    than about 1e154 spreads) that its likelihood underflows to zero under
    every class, or its squared distance overflows: the posterior is then
    0/0; or (from some 1e7 spreads) when the classes' scores differ by less
    than their rounding (see :mod:`nbcli.models._logspace`). Such a value
    is almost always a unit or data-entry error.
    """
    undefined = np.isnan(logp).any(axis=1)
    if not undefined.any():
        return
    i = int(np.argmax(undefined))
    j = int(np.nanargmax(np.abs(X[i]))) if not np.isnan(X[i]).all() else 0
    row = row_offset + (i if where is None else int(where[i])) + 1
    raise NbcliError(
        f"{path}: row {row} cannot be scored: its values are so far from the "
        "training data that its posterior is undefined in double precision (the "
        "likelihoods underflow, or differ by less than their rounding; largest "
        f"value: column {feature_names[j]!r} = {X[i, j]:g}); check that row's values and units"
    )


def score(
    mf,
    path: str,
    *,
    read: DataRequest | None = None,
    reporter: Reporter | None = None,
    missing_option: bool = False,
    posteriors: bool = False,
) -> Scores:
    """All log posteriors and labels of a labelled file, and whether it is the model's training data.

    Parameters
    ----------
    mf : nbcli.io.modelfile.ModelFile
        A loaded model file; its calibrator, if any, is applied.
    path : str
        Labelled data file, or ``-`` for stdin.
    missing_option : bool
        The command takes ``--missing``: a row the model cannot score under
        ``drop`` is left out (counted in ``Scores.n_left_out``) when
        ``read.missing`` is ``"drop"``, and otherwise refused with a hint
        naming that option (and ``ignore`` for a model that can take it).
        Without it, such a row is refused.
    posteriors : bool
        Give the posteriors and each row's predicted column
        (``Scores.proba``, ``Scores.predicted``) instead of the log
        posteriors: they are taken chunk by chunk, while the reader parses
        the next chunk.

    Returns
    -------
    Scores

    Raises
    ------
    NbcliError
        For unreadable data, a missing target column or no data rows.
    """
    from nbcli.io.fingerprint import TrainingFingerprint

    # The SHA-256 of format version 1 is computed only for a file that has no other.
    fp = TrainingFingerprint(legacy="fingerprint" not in mf.training)
    logps: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    left_out = 0
    predicted: list[np.ndarray] = []
    for logp, y_chunk, n_left in scored_chunks(
        mf, path, read=read, reporter=reporter, missing_option=missing_option, fp=fp
    ):
        if posteriors:
            # The chunk's own array (or a copy of its scored rows): changed in place.
            logp = np.exp(logp, out=logp)
            predicted.append(np.argmax(logp, axis=1))
        logps.append(logp)
        ys.append(y_chunk)
        left_out += n_left
    check_scored(mf, path, ys, left_out)
    y = _joined_labels(ys)
    match = fp.matches(mf.training)
    if posteriors:
        # Column-major: the ranking figures read each class's column, and a
        # strided column costs a cache line per value at every pass.
        proba = np.empty((len(y), logps[0].shape[1]), order="F")
        lo = 0
        for part in logps:
            proba[lo : lo + len(part)] = part
            lo += len(part)
        return Scores(None, y, match, left_out, proba=proba, predicted=np.concatenate(predicted))
    return Scores(
        log_proba=np.concatenate(logps), y_true=y, training_match=match, n_left_out=left_out
    )


def scored_chunks(mf, path: str, *, read=None, reporter=None, missing_option=False, fp=None):
    """Yield ``(log_proba, y, n_left_out)`` of each chunk of the labelled ``path``:
    the scored rows (see :func:`score`'s ``missing_option``), their labels and
    the rows left out; ``fp`` (``update(X, y)``) sees every row, scored or not.

    Raises
    ------
    NbcliError
        For a row the model cannot score, unless ``missing_option`` and
        ``read.missing`` is ``"drop"``.
    """
    leave_out = missing_option and read is not None and read.missing == "drop"
    for chunk in iter_scores(mf, path, read=read, need_target=True, reporter=reporter):
        # The fingerprint covers every row of the file, scored or not.
        if fp is not None:
            fp.update(chunk.X, chunk.y)
        if chunk.scored is None:
            yield chunk.log_proba, np.asarray(chunk.y), 0
            continue
        if not leave_out:
            i = int(np.argmin(chunk.scored))
            raise NbcliError(
                f"{path}: row {chunk.row_offset + i + 1} has a missing value, which the "
                f"model cannot score ({_policy_named(mf, read)}), and a score of the "
                "model measures every row unless told to leave such rows out: "
                f"{_missing_hint(mf, missing_option)}"
            )
        yield (
            chunk.log_proba[chunk.scored],
            np.asarray(chunk.y)[chunk.scored],
            chunk.n_rows - chunk.n_scored,
        )


def check_scored(mf, path: str, ys: list, left_out: int) -> None:
    """Refuse data without a scored row: no rows at all, or every one left out.

    Raises
    ------
    NbcliError
        Naming ``path``.
    """
    if not ys:
        raise NbcliError(f"{path}: no data rows")
    if left_out and not sum(len(v) for v in ys):
        raise NbcliError(
            f"{path}: every row has a missing value, so none is left to score under "
            f"--missing drop; {_missing_hint(mf, False)}"
        )


def _joined_labels(parts: list) -> np.ndarray:
    """The labels of every chunk in one array: of their own type when every chunk
    has labels of one kind (integers, text), else as Python objects, so that
    no label is turned into another type's spelling (an integer into text)."""
    arrays = [np.asarray(v) for v in parts]
    if len(arrays) == 1:
        return arrays[0]
    kinds = {a.dtype.kind for a in arrays}
    if len(kinds) == 1 and kinds <= set("biuU"):
        return np.concatenate(arrays)
    return np.concatenate([a.astype(object) for a in arrays])


def _policy_named(mf, read) -> str:
    """The missing-value policy a row went unscored by, as the refusal names it."""
    from nbcli.workflows.tables import missing_in_force

    given = (read.missing if read is not None else None) or mf.training.get("missing") or "drop"
    if missing_in_force(mf.model, given) == given:
        return f"its missing-value policy, {given}, leaves such a row without a score"
    # A projection mixes every column: a cell cannot be left out on its own.
    return (
        f"its missing-value policy, {given}, acts as drop under --pca and --standardize: "
        "such a row gets no score"
    )


def _missing_hint(mf, missing_option: bool) -> str:
    """The ways on for a row with a missing value: those the command and the model have."""
    from nbcli.workflows.tables import can_ignore_missing, missing_in_force

    if not missing_option:
        return "fill the value in or remove the row"
    hint = (
        "fill the value in, remove the row, or pass --missing drop to leave such rows out "
        "of the figures (a warning of the report counts them)"
    )
    if can_ignore_missing(mf.model) and missing_in_force(mf.model, "ignore") == "ignore":
        hint += " (or --missing ignore to score them without the missing cells)"
    return hint


@dataclass(frozen=True)
class _PartScoring:
    model_file: Any
    read: Any  # DataRequest
    missing_option: bool


@dataclass
class _PartScores:
    """Log posteriors and labels of consecutive parts, rows left out, fingerprint."""

    logps: list
    ys: list
    left_out: int
    fingerprint: Any  # RowHashFingerprint

    def merge(self, other: _PartScores) -> _PartScores:
        return _PartScores(
            self.logps + other.logps,
            self.ys + other.ys,
            self.left_out + other.left_out,
            self.fingerprint.combine(other.fingerprint),
        )


def _score_part(index: int, part: str, shared: _PartScoring) -> _PartScores:
    from nbcli.io.fingerprint import RowHashFingerprint

    fp = RowHashFingerprint()
    logps, ys, left_out = [], [], 0
    for logp, y, n_left in scored_chunks(
        shared.model_file,
        part,
        read=shared.read,
        missing_option=shared.missing_option,
        fp=fp,
    ):
        logps.append(logp)
        ys.append(y)
        left_out += n_left
    return _PartScores(logps, ys, left_out, fp)


def score_parts(mf, request: DataRequest, engine, *, missing_option: bool = False) -> Scores:
    """:func:`score` of the labelled parts of ``request`` (a folder, a glob,
    several files), each part scored where its task runs on ``engine``: the
    same log posteriors, in the same row order, as the parts joined into one
    file; only the posteriors and labels travel back.

    Raises
    ------
    NbcliError
        As :func:`score`, naming the part and its row.
    """
    from nbcli.io.fingerprint import rowhash_matches
    from nbcli.workflows.parts import at_client, check_parts, expand_parts

    parts = expand_parts(request.data)
    check_parts(parts, engine)
    parts = [at_client(p, engine) for p in parts]
    total: _PartScores = engine.sum_over_parts(
        parts, _score_part, _PartScoring(mf, request, missing_option)
    )
    check_scored(mf, request.path, total.ys, total.left_out)
    return Scores(
        log_proba=np.concatenate(total.logps),
        y_true=_joined_labels(total.ys),
        training_match=rowhash_matches(mf.training, total.fingerprint),
        n_left_out=total.left_out,
    )
