"""Feature blocks in the workflows: the table's columns and the text blocks of a request.

A :class:`~nbcli.io.request.DataRequest` holds the table's columns and zero
or more text blocks. The reader gives every chunk as ``(X, y, words)``: the
table's columns and, per text column, its documents. The functions here
take such chunks, or a request, whatever blocks it holds, so that the
workflows (``train``, part-wise fits, folds) call one function and never ask
whether there is text; the text side (the tokeniser, term statistics,
vocabularies) is imported only when a request has a text block.
"""

from __future__ import annotations

import zlib
from types import SimpleNamespace

import numpy as np

from nbcli.errors import NbcliError

__all__ = [
    "check_blocks",
    "check_text_columns",
    "check_text_target",
    "fingerprint_columns",
    "fit_blocks",
    "model_rows",
    "tally_blocks",
    "text_terms_beside_table",
]


def check_blocks(estimator, request) -> None:
    """What the feature blocks of ``request`` ask of ``estimator``, before reading.

    Raises
    ------
    NbcliError
        With text blocks: for a model that cannot take word counts
        (:func:`check_text_model`) or a text column that is the target.
        Without: for ``vocabulary_sizes`` given by hand (``--text`` sets it).
    """
    if request.text is None:
        if estimator.get_params().get("vocabulary_sizes") is not None:
            raise NbcliError(
                "vocabulary_sizes is set by --text from the vocabularies it builds; leave it out "
                "of the configuration"
            )
        return
    from nbcli.workflows.text_features import check_text_model

    check_text_model(estimator)
    check_text_target(request)


def fit_blocks(estimator, settings, chunks, names, source: str, frequencies=None) -> tuple:
    """Stream ``(X, y, words)`` chunks into ``estimator``'s statistics (not finalized):
    the table's columns, and the word counts of the text block (``settings``;
    None: no text block, ``words`` unused). ``frequencies``: see
    :func:`~nbcli.workflows.text_features.finalize_text`.

    Returns
    -------
    (vocabularies, feature_names)
        ``{column: list of terms}`` (None without text) and the model's
        feature names: ``names`` (the table's), then each text column's terms.
    """
    if settings is None:
        # The labels may come coded (a LabelCoding), which the model takes as they are.
        estimator.fit_chunks(((X, y) for X, y, _ in chunks), finalize=False)
        return None, list(names)
    from nbcli.workflows.text_features import fit_text_chunks

    vocabularies = fit_text_chunks(
        estimator,
        settings,
        ((X, _labels_of(y), words) for X, y, words in chunks),
        list(names),
        source=source,
        frequencies=frequencies,
    )
    return vocabularies, list(estimator.feature_names_in_)


def _labels_of(y):
    """The label array of ``y``, a label array or a :class:`~nbcli.distinct.LabelCoding`."""
    from nbcli.distinct import LabelCoding

    return y.labels if isinstance(y, LabelCoding) else y


def tally_blocks(estimator, settings, chunks):
    """The statistics of a stream of ``(X, y, words)`` chunks before any vocabulary is
    chosen (:func:`nbcli.workflows.text_features.tally_text_chunks`); without a text
    block (``settings`` None), None: the estimator holds the table's statistics (not
    finalized)."""
    if settings is None:
        estimator.fit_chunks(((X, y) for X, y, _ in chunks), finalize=False)
        return None
    from nbcli.workflows.text_features import tally_text_chunks

    return tally_text_chunks(estimator, settings, chunks)


def model_from_blocks(estimator, settings, stats, names: list, frequencies=None) -> tuple:
    """A model of ``estimator``'s type from merged part statistics (not finalized),
    as a one-file fit leaves it: the table's statistics (a
    :class:`~nbcli.engines._reduce.FitStatistics`), or with a text block the
    :class:`~nbcli.workflows.text_features.TextChunkStats` whose vocabularies
    are chosen here, once.

    Returns
    -------
    (estimator, vocabularies, feature_names)
        As :func:`fit_blocks` gives them, with the new estimator first.

    Raises
    ------
    NbcliError
        For a vocabulary that keeps no term.
    """
    params = estimator.get_params()
    if settings is None:
        est = type(estimator).from_stats(
            stats.stats, stats.classes, params, stats.n_features, finalize=False
        )
        return est, None, list(names)
    from nbcli.workflows.text_features import finalize_text

    est = type(estimator)(**params)
    vocabularies = finalize_text(est, settings, stats, list(names), frequencies)
    return est, vocabularies, list(est.feature_names_in_)


def model_rows(rows, settings, vocabularies: dict | None):
    """``rows`` (with ``X``, ``y``, ``words``) as the model reads them: the table's
    columns, then the text block's counts over ``vocabularies``; as they are
    without a text block."""
    if settings is None or vocabularies is None:
        return rows
    from nbcli.text.vocabulary import Vocabulary
    from nbcli.workflows.text_features import text_matrix

    vocab = {c: Vocabulary(v) for c, v in vocabularies.items()}
    return SimpleNamespace(X=text_matrix(rows.X, rows.words, settings, vocab).X, y=rows.y)


def text_terms_beside_table(estimator, request, plan) -> None:
    """Give the mixed model's ``column_types`` for the table's columns only: its
    text columns are multinomial terms of their own (``vocabulary_sizes``).
    Nothing to do without a text block or for a model without column types.

    Raises
    ------
    NbcliError
        For a text column also given a ``--column`` type.
    """
    text = request.text
    if text is None or "column_types" not in estimator.get_params():
        return
    column_types = request.column_types
    given = [c for c in text.columns if c in column_types]
    if given:
        raise NbcliError(
            f"{request.path}: --column {given[0]}={column_types[given[0]]}: the column is a text "
            "column (--text), a multinomial term of its words; drop one of the two"
        )
    types = estimator.get_params()["column_types"]
    estimator.set_params(
        column_types=[t for c, t in zip(plan.features, types) if c not in text.columns],
        vocabulary_sizes=None,
    )


def check_text_target(request) -> None:
    """Refuse a text block that names the target column of ``request``.

    Raises
    ------
    NbcliError
        Naming the column: a text column must be a feature.
    """
    target = request.target
    if target is not None and target in request.text_columns:
        raise NbcliError(
            f"{request.path}: --text {target}: the column is the target; a text column must be a "
            "feature"
        )


def check_text_columns(data: str, columns, stream) -> None:
    """Refuse text ``columns`` the reader of ``stream`` does not read as words.

    Raises
    ------
    NbcliError
        For the first column that is the target or left out of the features.
    """
    outside = [c for c in columns if c not in stream.word_columns]
    if outside and str(data).lower().endswith(".npz"):
        raise NbcliError(
            f"{data}: --text {outside[0]}: an NPZ archive holds numeric arrays, not columns "
            "of text; give the documents in a CSV or Parquet file"
        )
    if outside:
        raise NbcliError(
            f"{data}: --text {outside[0]}: the column is the target or left out of the "
            "features (--features, --drop); a text column must be a feature"
        )


def fingerprint_columns(X: np.ndarray, words: dict, columns) -> np.ndarray:
    """``X`` with one column per text column: each document's CRC-32, for the
    chunk-independent training fingerprint (exact in float64); ``X`` itself
    without text columns."""
    if not columns:
        return X
    crcs = [
        np.fromiter(
            map(zlib.crc32, map(str.encode, words[c])), dtype=np.float64, count=len(words[c])
        )
        for c in columns
    ]
    return np.column_stack([np.asarray(X, dtype=np.float64), *crcs])


class TableModel:
    """The feature blocks of a loaded model file without text columns: its table
    columns read as they are (the interface of
    :class:`nbcli.workflows.text_features.TextModel`)."""

    def __init__(self, mf):
        self.input_columns: list[str] = list(mf.feature_names)
        self.kinds: dict[str, str] = {}
        self.text_columns: tuple[str, ...] = ()

    def matrix(self, X: np.ndarray, words: dict) -> SimpleNamespace:
        """``X`` itself, no word left out."""
        return SimpleNamespace(X=X, unseen_tokens=0)


def model_blocks(mf):
    """The feature blocks of the model file ``mf``: what a data file must hold
    (``input_columns``, reader ``kinds``), the text columns (``text_columns``)
    and ``matrix(X, words)``, a chunk as the model reads it. The tokeniser
    loads only for a model with text columns.
    """
    if getattr(mf, "text", None) is None:
        return TableModel(mf)
    from nbcli.workflows.text_features import TextModel

    return TextModel(mf)
