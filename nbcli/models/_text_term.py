"""Text columns of a mixed naive Bayes: one multinomial term per column's vocabulary.

A text column ``t`` with vocabulary ``V_t`` adds to the joint log-likelihood
of :class:`nbcli.models.MixedNB` the term of a multinomial naive Bayes over
its word counts ``n_tw`` (McCallum and Nigam, AAAI-98 workshop on text
categorisation, 1998; scikit-learn's ``MultinomialNB``, without the
multinomial coefficient, which is the same for every class)::

    sum_w n_tw log theta_ctw,   theta_ctw = (N_ctw + alpha) / (N_ct + alpha |V_t|)

with ``N_ctw`` the weighted count of word ``w`` in class ``c``'s documents
and ``N_ct`` its sum over the column's vocabulary. Each column is normalised
over its own vocabulary, so two text columns are two independent
multinomials, and neither shares its normalisation with the table's
multinomial columns.

Layout: the model's features are the table's columns first, then each text
column's word counts, vocabulary after vocabulary (``vocabulary_sizes``
gives their lengths). The statistics are the per-class word counts, stored
after the table's multinomial sums in ``MixedStats.multinomial_count``, so
they merge by addition like every other count and a model file needs no new
member.

Word counts reach the model as a SciPy CSR matrix (or dense columns); the
table's columns are made dense, the words never are: :class:`TextRows`
keeps the two apart through validation and scoring.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import TYPE_CHECKING

import numpy as np

from nbcli.models import _sparse
from nbcli.models._blocks import _BLOCK_ELEMENTS
from nbcli.models._missing import check_no_infinity
from nbcli.models._sparse import is_sparse
from nbcli.models._validation import (
    DataValueError,
    check_array,
    check_labels,
    check_sample_weight,
)

if TYPE_CHECKING:
    from nbcli.models._base import BayesClassifier as _Base
else:
    _Base = object


def check_vocabulary_sizes(value) -> tuple[int, ...]:
    """``vocabulary_sizes`` as a tuple of positive ints (empty for None).

    Raises
    ------
    ValueError
        For anything but None or a sequence of positive integers.
    """
    if value is None:
        return ()
    try:
        sizes = list(value)
    except TypeError:
        sizes = None
    if sizes is None or not all(
        isinstance(s, Integral) and not isinstance(s, bool) and int(s) >= 1 for s in sizes
    ):
        raise ValueError(
            f"vocabulary_sizes must be None or a list of positive integers (the length of each "
            f"text column's vocabulary); got {value!r}"
        )
    return tuple(int(s) for s in sizes)


@dataclass
class TextRows:
    """Validated rows of a mixed model with text columns: table and word counts apart.

    Attributes
    ----------
    table : ndarray of float64, shape (n_rows, n_table)
        The table's columns (NaN where missing, when the policy allows).
    words : scipy.sparse.csr_array of float64, shape (n_rows, sum(vocabulary_sizes))
        Non-negative, finite word counts of every text column, side by side.
    """

    table: np.ndarray
    words: object

    @property
    def shape(self) -> tuple[int, int]:
        return (self.table.shape[0], self.table.shape[1] + self.words.shape[1])  # type: ignore[attr-defined]

    def rows(self, keep: np.ndarray) -> TextRows:
        """The rows where boolean ``keep`` is True."""
        return TextRows(self.table[keep], self.words[keep])  # type: ignore[index]


def text_rows(X, n_words: int, *, finite: bool) -> TextRows:
    """``X`` (sparse or dense, table columns then word counts) split into :class:`TextRows`.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_rows, n_table + n_words)
    n_words : int
        Total length of the vocabularies (the trailing columns).
    finite : bool
        Whether NaN in the table's columns is refused here (``missing="error"``).

    Raises
    ------
    ValueError
        For fewer columns than ``n_words``, a NaN, infinite or negative word
        count (:class:`DataValueError` naming row and column, 0-based), or
        the table values ``check_array`` refuses.
    """
    import scipy.sparse as sp

    if _sparse.is_sparse(X):
        if X.ndim != 2:
            raise ValueError(f"expected a 2-D sparse matrix for X, got {X.ndim}-D")
        csr = sp.csr_array(X, dtype=np.float64)
    else:
        dense = check_array(X, finite=False)
        csr = None
    n_cols = (csr if csr is not None else dense).shape[1]
    n_table = n_cols - n_words
    if n_table < 0:
        raise ValueError(
            f"X has {n_cols} features, fewer than the {n_words} word counts of the text columns"
        )
    if csr is not None:
        table = csr[:, :n_table].toarray()
        words = csr[:, n_table:]
    else:
        table = dense[:, :n_table]
        words = sp.csr_array(np.where(np.isnan(dense[:, n_table:]), np.inf, dense[:, n_table:]))
    table = check_array(table, finite=finite) if n_table else table
    words = sp.csr_array(words, dtype=np.float64)
    if not words.has_sorted_indices:
        words = words.sorted_indices()
    bad = ~np.isfinite(words.data) | (words.data < 0)
    if bad.any():
        i, j, v = _sparse.first_entry(words, bad)
        what = "negative" if v < 0 else "not a finite number"
        raise DataValueError(
            f"X has a word count that is {what} at row {i}, column {j + n_table}; "
            "the word counts of text columns are non-negative",
            i,
            j + n_table,
            f"a word count that is {what}",
        )
    return TextRows(table=np.ascontiguousarray(table), words=words)


def class_word_counts(words, y_idx: np.ndarray, w, n_classes: int) -> np.ndarray:
    """Weighted per-class word counts ``N_cw``, dense (n_classes, n_words)."""
    return _sparse.class_sums(words, y_idx, w, n_classes)


def text_log_prob(counts: np.ndarray, sizes: tuple[int, ...], alpha: float) -> np.ndarray:
    """``log theta_ctw`` of every text column, side by side, shape (n_classes, sum(sizes)).

    Parameters
    ----------
    counts : ndarray of shape (n_classes, sum(sizes))
        ``N_ctw``, vocabulary after vocabulary.
    sizes : tuple of int
        Length of each column's vocabulary.
    alpha : float
        Lidstone smoothing (already floored).
    """
    out = np.empty_like(counts)
    start = 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for size in sizes:
            smoothed = counts[:, start : start + size] + alpha
            total = smoothed.sum(axis=1, keepdims=True)
            out[:, start : start + size] = np.log(smoothed) - np.log(total)
            start += size
    return out


def text_scores(log_prob: np.ndarray, words) -> np.ndarray:
    """``sum_w n_tw log theta_ctw`` over every text column, class-major (n_classes, n_rows)."""
    return _sparse.scores(log_prob, words)


class TextColumns(_Base):
    """Validation and scoring of rows with word counts, mixed into :class:`nbcli.models.MixedNB`.

    Without ``vocabulary_sizes`` every method defers to the base class; with
    them, rows travel as :class:`TextRows` and each block's score is the
    table's terms (the base class's checks and missing-cell rules) plus
    :func:`text_scores`.
    """

    vocabulary_sizes: object
    text_log_prob_: np.ndarray

    def _n_words(self) -> int:
        return sum(check_vocabulary_sizes(self.vocabulary_sizes))

    def _check_training(self, X, y, sample_weight):
        if not (self.vocabulary_sizes or is_sparse(X)):
            return super()._check_training(X, y, sample_weight)
        if not self.vocabulary_sizes:
            raise ValueError(
                "the mixed model takes sparse input only for the word counts of text columns; "
                "set vocabulary_sizes"
            )
        names = getattr(X, "columns", None)
        rows = text_rows(X, self._n_words(), finite=self.missing_policy == "error")
        check_no_infinity(rows.table)
        self._check_values(rows.table)
        y = check_labels(y, rows.shape[0])
        w = check_sample_weight(sample_weight, rows.shape[0])
        n_dropped = 0
        if self.missing_policy == "drop":
            complete = ~np.isnan(rows.table).any(axis=1)
            n_dropped = int(complete.size - complete.sum())
            if n_dropped:
                rows, y = rows.rows(complete), y[complete]
                w = None if w is None else w[complete]
        return rows, y, w, names, n_dropped

    def _check_predict_input(self, X):
        if not self.vocabulary_sizes:
            return super()._check_predict_input(X)
        self._check_fitted()
        names = getattr(X, "columns", None)
        rows = text_rows(X, self._n_words(), finite=False)
        self._check_n_features(rows)
        self._set_feature_names(names, reset=False)
        return rows

    def _block_step(self) -> int:
        if not self.vocabulary_sizes:
            return super()._block_step()
        # A block of word counts costs its non-zeros: blocks are sized by the
        # dense table block and the scores they produce.
        width = max(1, self.n_features_in_ - self._n_words(), len(self.classes_))
        return max(64, _BLOCK_ELEMENTS // width)

    def _score_block(self, X, lo, hi):
        if not isinstance(X, TextRows):
            return super()._score_block(X, lo, hi)
        # The table's terms with the usual checks and missing-cell rules (a
        # row dropped for a missing cell stays NaN), then the words'.
        jll = super()._score_block(X.table, lo, hi)
        jll += text_scores(self.text_log_prob_, X.words[lo:hi])  # type: ignore[index]
        return jll
