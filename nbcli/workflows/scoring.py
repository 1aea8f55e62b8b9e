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
from nbcli.workflows.engine import Reporter
from nbcli.workflows.inputs import ReadOptions


@dataclass
class ScoredChunk:
    """Posteriors of one chunk of rows, with what the workflows need around them."""

    log_proba: np.ndarray  # (n_rows, n_classes), calibrated if the model file has a calibrator
    y: np.ndarray | None  # labels from the file, if it has the target column
    kept: dict
    X: np.ndarray  # the numeric features (and, with text columns, one CRC-32 per document)
    unseen_words: int = 0  # word occurrences of text columns that training never kept

    @property
    def n_rows(self) -> int:
        return self.log_proba.shape[0]


@dataclass
class Scores:
    """Every posterior and label of a labelled file, gathered by :func:`score`.

    Attributes
    ----------
    log_proba : ndarray of shape (n_samples, n_classes)
        Log posteriors (calibrated if the model file carries a calibrator).
    y_true : ndarray of shape (n_samples,)
        Labels as read from the file.
    training_match : bool
        True when the rows are the model's training data (same fingerprint).
    """

    log_proba: np.ndarray
    y_true: np.ndarray
    training_match: bool


def iter_scores(
    mf,
    path,
    *,
    read: ReadOptions | None = None,
    need_target: bool = False,
    keep: list[str] | None = None,
    reporter: Reporter | None = None,
) -> Iterator[ScoredChunk]:
    """Stream a data file through a model; yields :class:`ScoredChunk`.

    Parameters
    ----------
    mf : nbcli.io.modelfile.ModelFile
        A loaded model file.
    path : str
        Data file (CSV, NPZ, Parquet) or ``-`` for stdin.
    read : ReadOptions, optional
        How to read it (default: the readers' defaults).
    need_target : bool
        Refuse a file without the label column.
    keep : list of str, optional
        Input columns to carry along in each chunk's ``kept``.

    Raises
    ------
    NbcliError
        For unreadable data, missing feature columns, or values the model
        refuses (the message names file, column and row).
    """
    from nbcli.io.data import iter_dataset
    from nbcli.workflows.train import data_error

    reporter = reporter or Reporter()
    read = read or ReadOptions()
    text = None
    if getattr(mf, "text", None) is not None:
        # The tokeniser (and SciPy) load only for a model with text columns.
        from nbcli.workflows.text_features import TextModel, fingerprint_columns

        text = TextModel(mf)
    stream = iter_dataset(
        path,
        chunk_size=read.chunk_size,
        target=read.target,
        model_features=list(mf.feature_names) if text is None else text.input_columns,
        kinds=None if text is None else text.kinds,
        need_target=need_target,
        delimiter=read.delimiter,
        x_key=read.x_key,
        y_key=read.y_key,
        keep=keep,
        target_hint=mf.target,
    )
    rows = 0
    for ds in reporter.progress(stream, f"scoring {path}"):
        X: Any = ds.X
        unseen, fingerprinted = 0, ds.X
        if text is not None:
            counts = text.matrix(ds.X, ds.words)
            X, unseen = counts.X, counts.unseen_tokens
            fingerprinted = fingerprint_columns(ds.X, ds.words, text.settings.columns)
        try:
            # Rows the model cannot score are refused just below, not warned about.
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                logp = mf.model.predict_log_proba(X)
        except ValueError as exc:
            raise data_error(path, exc, mf.feature_names, rows) from None
        # The model's own posteriors are checked before any calibrator sees
        # them, so a row that cannot be scored is named the same way with or
        # without one.
        if ds.X.shape[1]:
            _check_scored(path, logp, ds.X, ds.feature_names, rows)
        if mf.calibrator is not None:
            try:
                logp = mf.calibrator.transform(logp)
            except ValueError as exc:
                raise data_error(path, exc, mf.feature_names, rows) from None
        rows += ds.X.shape[0]
        yield ScoredChunk(
            log_proba=logp, y=ds.y, kept=ds.kept, X=fingerprinted, unseen_words=unseen
        )


def _check_scored(path, logp: np.ndarray, X: np.ndarray, feature_names, row_offset: int) -> None:
    """Refuse the first row whose posterior is undefined (NaN).

    That happens when a row lies so far from the training data (by more
    than about 1e154 spreads) that its likelihood underflows to zero under
    every class, or its squared distance overflows: the posterior is then
    0/0. Such a value is almost always a unit or data-entry error.
    """
    undefined = np.isnan(logp).any(axis=1)
    if not undefined.any():
        return
    i = int(np.argmax(undefined))
    j = int(np.argmax(np.abs(X[i])))
    raise NbcliError(
        f"{path}: row {row_offset + i + 1} cannot be scored: its values are so far from the "
        "training data that its likelihood underflows to zero for every class (largest "
        f"value: column {feature_names[j]!r} = {X[i, j]:g}); check that row's values and units"
    )


def score(
    mf,
    path: str,
    *,
    read: ReadOptions | None = None,
    reporter: Reporter | None = None,
) -> Scores:
    """All log posteriors and labels of a labelled file, and whether it is the model's training data.

    Parameters
    ----------
    mf : nbcli.io.modelfile.ModelFile
        A loaded model file; its calibrator, if any, is applied.
    path : str
        Labelled data file, or ``-`` for stdin.

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
    logps, ys = [], []
    for chunk in iter_scores(mf, path, read=read, need_target=True, reporter=reporter):
        fp.update(chunk.X, chunk.y)
        logps.append(chunk.log_proba)
        ys.append(np.asarray(chunk.y))
    if not logps:
        raise NbcliError(f"{path}: no data rows")
    logp = np.concatenate(logps)
    y = np.concatenate([np.asarray(v, dtype=object) for v in ys]) if len(ys) > 1 else ys[0]
    match = fp.matches(mf.training)
    return Scores(log_proba=logp, y_true=y, training_match=match)
