"""A word-count vectoriser with scikit-learn's ``CountVectorizer`` defaults, fitted in chunks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from nbcli.text.tally import TermTally
from nbcli.text.tokens import DEFAULT_TOKEN_PATTERN, TokenOptions, count_terms
from nbcli.text.vocabulary import TermStats, Transformed, Vocabulary, _doc_bound, to_csr

if TYPE_CHECKING:
    import scipy.sparse as sp


class TextVectorizer:
    """Documents to a CSR matrix of word n-gram counts over a fitted vocabulary.

    With its defaults the vocabulary and the matrix equal those of
    ``sklearn.feature_extraction.text.CountVectorizer()``: lowercase, tokens
    of two or more word characters (``(?u)\\b\\w\\w+\\b``), no accent
    stripping, terms in code-point order (``get_feature_names_out()``).

    Parameters
    ----------
    lowercase : bool, default=True
    ngram_range : tuple (min_n, max_n), default=(1, 1)
    min_df : int or float, default=1
        Drop terms in fewer documents than this (a float in [0, 1] is a
        fraction of the documents).
    max_df : int or float, default=1.0
        Drop terms in more documents than this.
    max_features : int or None, default=None
        Keep only this many terms, those most frequent over the corpus (ties
        broken as scikit-learn breaks them).
    stop_words : iterable of str or None, default=None
        Tokens removed before n-grams are made.
    token_pattern : str, default ``r"(?u)\\b\\w\\w+\\b"``
    engine : {"auto", "python", "polars"}, default="auto"
        Tokeniser (see :mod:`nbcli.text.tokens`); all give the same counts.

    Attributes
    ----------
    vocabulary_ : Vocabulary
        The kept terms, in column order.
    stats_ : TermStats
        Statistics of every term seen in fitting (before pruning), when
        fitted with labels.

    Raises
    ------
    ValueError
        For invalid options (on ``fit``), or when no term is left.

    Examples
    --------
    >>> from nbcli.text import TextVectorizer
    >>> vectorizer = TextVectorizer().fit(["free money now", "meeting at noon", "free lunch"])
    >>> vectorizer.transform(["free free lunch"]).toarray().tolist()
    [[0, 2, 1, 0, 0, 0, 0]]
    """

    def __init__(
        self,
        *,
        lowercase: bool = True,
        ngram_range: tuple[int, int] = (1, 1),
        min_df=1,
        max_df=1.0,
        max_features: int | None = None,
        stop_words: Iterable[str] | None = None,
        token_pattern: str = DEFAULT_TOKEN_PATTERN,
        engine: str = "auto",
    ):
        self.lowercase = lowercase
        self.ngram_range = ngram_range
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.stop_words = stop_words
        self.token_pattern = token_pattern
        self.engine = engine

    def _options(self) -> TokenOptions:
        _doc_bound(self.min_df, "min_df")
        _doc_bound(self.max_df, "max_df")
        if not isinstance(self.lowercase, (bool, np.bool_)):
            raise ValueError(f"lowercase must be True or False, got {self.lowercase!r}")
        stop = None if self.stop_words is None else frozenset(self.stop_words)
        if isinstance(self.stop_words, str):
            raise ValueError("stop_words must be a list of words, not one string")
        return TokenOptions(
            lowercase=bool(self.lowercase),
            ngram_range=tuple(self.ngram_range),  # type: ignore[arg-type]
            stop_words=stop,
            token_pattern=self.token_pattern,
        )

    def accumulate(self, texts, y_idx, n_classes: int, sample_weight=None) -> TermStats:
        """Term statistics of one chunk of labelled documents (no state is changed).

        ``y_idx`` holds class indices 0 .. ``n_classes - 1``. Merge the
        results of all chunks with :meth:`TermStats.merge`, then call
        :meth:`finalize`.
        """
        counts = count_terms(texts, self._options(), self.engine)
        return TermStats.from_counts(counts, y_idx, n_classes, sample_weight)

    def finalize(self, stats: TermStats) -> np.ndarray:
        """Choose the vocabulary from merged statistics; returns the kept term indices.

        Sets ``vocabulary_`` and ``stats_``. The class statistics of a count
        model over the vocabulary are then ``stats.class_counts(kept, kind)``.
        """
        self._options()
        kept = stats.select(self.min_df, self.max_df, self.max_features)
        self.stats_ = stats
        self.vocabulary_ = Vocabulary(stats.terms[kept])
        return kept

    def fit(self, texts, y=None) -> TextVectorizer:
        """Learn the vocabulary of ``texts`` (labels ``y`` are optional and only kept in ``stats_``)."""
        self._fit_counts(texts, y)
        return self

    def _fit_counts(self, texts, y):
        counts = count_terms(texts, self._options(), self.engine)
        if y is None:
            y_idx = np.zeros(counts.n_docs, dtype=np.int64)
        else:
            _, y_idx = np.unique(np.asarray(y), return_inverse=True)
        n_classes = int(y_idx.max()) + 1 if y_idx.size else 1
        self.finalize(TermStats.from_counts(counts, y_idx, n_classes))
        return counts

    def fit_chunks(self, chunks: Iterable, n_classes: int = 1) -> TextVectorizer:
        """Fit from ``(texts, y_idx)`` chunks; equals :meth:`fit` on their concatenation.

        The chunks' terms are tallied as they come (:class:`nbcli.text.TermTally`).
        """
        tally = TermTally(self._options(), self.engine)
        labels = np.arange(n_classes)
        empty = True
        for texts, y_idx in chunks:
            tally.add(texts, labels, y_idx)
            empty = False
        if empty:
            raise ValueError("no training data: the chunks were empty")
        self.finalize(tally.stats(labels))
        return self

    def transform_counts(self, texts) -> Transformed:
        """Counts over the fitted vocabulary, with the number of unseen tokens and terms."""
        if not hasattr(self, "vocabulary_"):
            raise ValueError("this TextVectorizer is not fitted yet; call fit first")
        return self.vocabulary_.transform(texts, self._options(), self.engine)

    def transform(self, texts) -> sp.csr_array:
        """Document-term counts, shape (n_docs, n_terms), int64; unseen terms are ignored."""
        return self.transform_counts(texts).X

    def fit_transform(self, texts, y=None) -> sp.csr_array:
        """:meth:`fit` then :meth:`transform` (tokenising once)."""
        return to_csr(self._fit_counts(texts, y), self.vocabulary_).X

    def get_feature_names_out(self) -> np.ndarray:
        """The terms, in column order (object array of str)."""
        return self.vocabulary_.terms.copy()
