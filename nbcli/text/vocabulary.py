"""Mergeable term statistics, vocabulary selection and document-term matrices.

Fitting on text needs two passes in scikit-learn's design: the vocabulary
(after ``min_df``, ``max_df`` and ``max_features``) is known only once every
document has been seen, and only then can the class statistics be counted
over it. :class:`TermStats` avoids the second pass: per chunk, it keeps for
every term seen its per-class count and per-class document frequency, and
these merge by addition across chunks. Once all chunks are in, the
vocabulary is chosen from the totals exactly as ``CountVectorizer`` chooses
it, and the statistics of the multinomial and complement models (term
counts per class) and of the Bernoulli model with ``binarize=0`` (documents
per class holding the term) are columns of the kept terms.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np

from nbcli.models import ClassCounts
from nbcli.text.tokens import (
    DocTermCounts,
    TokenOptions,
    _as_series,
    choose_engine,
    count_terms,
    token_frame,
    unique_entries,
)

if TYPE_CHECKING:
    import scipy.sparse as sp


def _union_index(a: np.ndarray, b: np.ndarray):
    """Sorted union of two sorted term arrays, and where each input's terms land in it.

    The concatenation is two sorted runs, which Python's timsort merges in
    linear time (``np.unique`` would sort it from scratch, several times
    slower on object arrays).
    """
    both = np.concatenate([a, b]).astype(object)
    order = np.array(sorted(range(both.size), key=both.__getitem__), dtype=np.int64)
    merged = both[order]
    first = np.ones(merged.size, dtype=bool)
    first[1:] = merged[1:] != merged[:-1]
    inverse = np.empty(both.size, dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    return merged[first], inverse[: a.size], inverse[a.size :]


@dataclass
class TermStats:
    """Per-class statistics of every term seen, for choosing a vocabulary after all chunks.

    Attributes
    ----------
    terms : ndarray of str, shape (n_terms,)
        Every term seen, sorted by code point.
    n_docs : int
        Documents seen (unweighted): the base of fractional ``min_df``/``max_df``.
    class_count : ndarray of float64, shape (n_classes,)
        Sum of sample weights (documents) per class.
    term_count : ndarray of float64, shape (n_classes, n_terms)
        Weighted occurrences of each term in each class's documents.
    doc_count : ndarray of float64, shape (n_classes, n_terms)
        Weighted number of each class's documents holding the term.
    tf, df : ndarray of int64, shape (n_terms,)
        Unweighted total occurrences and document frequency (what
        ``CountVectorizer`` prunes and ranks by).
    """

    terms: np.ndarray
    n_docs: int
    class_count: np.ndarray
    term_count: np.ndarray
    doc_count: np.ndarray
    tf: np.ndarray
    df: np.ndarray

    @classmethod
    def from_counts(
        cls, counts: DocTermCounts, y_idx, n_classes: int, sample_weight=None
    ) -> TermStats:
        """Statistics of one chunk.

        Parameters
        ----------
        counts : DocTermCounts
            From :func:`nbcli.text.count_terms`.
        y_idx : array-like of int, shape (n_docs,)
            Class index (0 .. n_classes - 1) of each document.
        n_classes : int
        sample_weight : array-like of shape (n_docs,), optional
            Non-negative weights; they scale the class statistics, not ``tf``/``df``.
        """
        y_idx = np.asarray(y_idx, dtype=np.int64)
        if y_idx.shape != (counts.n_docs,):
            raise ValueError(
                f"got {y_idx.shape[0]} labels for {counts.n_docs} documents; need one per document"
            )
        w = (
            np.ones(counts.n_docs)
            if sample_weight is None
            else np.asarray(sample_weight, dtype=np.float64)
        )
        n_terms = counts.terms.size
        cell = y_idx[counts.doc] * n_terms + counts.term
        size = n_classes * n_terms
        wd = w[counts.doc]
        return cls(
            terms=counts.terms,
            n_docs=counts.n_docs,
            class_count=np.bincount(y_idx, weights=w, minlength=n_classes).astype(np.float64),
            term_count=np.bincount(cell, weights=wd * counts.count, minlength=size).reshape(
                n_classes, n_terms
            ),
            doc_count=np.bincount(cell, weights=wd, minlength=size).reshape(n_classes, n_terms),
            tf=np.bincount(counts.term, weights=counts.count, minlength=n_terms).astype(np.int64),
            df=np.bincount(counts.term, minlength=n_terms).astype(np.int64),
        )

    def merge(self, other: TermStats) -> TermStats:
        """Statistics of both chunks' documents (classes in the same order in both)."""
        if self.class_count.shape != other.class_count.shape:
            raise ValueError("cannot merge term statistics over different classes; reindex first")
        terms, ia, ib = _union_index(self.terms, other.terms)
        k, n = self.class_count.size, terms.size

        def add(a, b, shape, dtype):
            out = np.zeros(shape, dtype=dtype)
            out[..., ia] += a
            out[..., ib] += b
            return out

        return TermStats(
            terms=terms,
            n_docs=self.n_docs + other.n_docs,
            class_count=self.class_count + other.class_count,
            term_count=add(self.term_count, other.term_count, (k, n), np.float64),
            doc_count=add(self.doc_count, other.doc_count, (k, n), np.float64),
            tf=add(self.tf, other.tf, n, np.int64),
            df=add(self.df, other.df, n, np.int64),
        )

    def reindex(self, new_index, n_classes: int) -> TermStats:
        """Copy with this object's class ``i`` moved to ``new_index[i]`` of ``n_classes``."""
        new_index = np.asarray(new_index)

        def move(a):
            out = np.zeros((n_classes,) + a.shape[1:], dtype=a.dtype)
            out[new_index] = a
            return out

        return TermStats(
            terms=self.terms,
            n_docs=self.n_docs,
            class_count=move(self.class_count),
            term_count=move(self.term_count),
            doc_count=move(self.doc_count),
            tf=self.tf.copy(),
            df=self.df.copy(),
        )

    def select(self, min_df=1, max_df=1.0, max_features=None) -> np.ndarray:
        """Indices (sorted) of the terms ``CountVectorizer`` would keep.

        A term is kept when ``min_df <= df <= max_df`` (integers are document
        counts, floats in [0, 1] fractions of ``n_docs``); of those, with
        ``max_features``, the ``max_features`` with the largest total count,
        ties broken by the very call scikit-learn makes (``argsort`` of the
        negated counts in term order), so the same terms are kept.

        Raises
        ------
        ValueError
            For out-of-range options, when ``max_df`` is below ``min_df`` in
            documents, or when no term is left (scikit-learn's messages).
        """
        max_doc = _doc_bound(max_df, "max_df")
        min_doc = _doc_bound(min_df, "min_df")
        if max_features is not None and (
            isinstance(max_features, bool)
            or not isinstance(max_features, Integral)
            or max_features < 1
        ):
            raise ValueError(
                f"max_features must be a positive integer or None, got {max_features!r}"
            )
        if self.terms.size == 0:
            raise ValueError("empty vocabulary; perhaps the documents only contain stop words")
        high = max_doc if isinstance(max_df, Integral) else max_doc * self.n_docs
        low = min_doc if isinstance(min_df, Integral) else min_doc * self.n_docs
        if high < low:
            raise ValueError(
                "max_df corresponds to < documents than min_df: min_df asks for at least "
                f"{low:g} documents of {self.n_docs} and max_df allows at most {high:g}; "
                "lower min_df or raise max_df"
            )
        mask = (self.df <= high) & (self.df >= low)
        if max_features is not None and mask.sum() > max_features:
            ranked = (-self.tf[mask]).argsort()[:max_features]
            keep = np.zeros(mask.size, dtype=bool)
            keep[np.flatnonzero(mask)[ranked]] = True
            mask = keep
        kept = np.flatnonzero(mask)
        if kept.size == 0:
            raise ValueError(
                "After pruning, no terms remain. Try a lower min_df or a higher max_df."
            )
        return kept

    def class_counts(self, kept, kind: str = "multinomial") -> ClassCounts:
        """Sufficient statistics of a count model over the kept terms.

        Parameters
        ----------
        kept : ndarray of int
            From :meth:`select`.
        kind : {"multinomial", "complement", "bernoulli"}
            ``"multinomial"`` and ``"complement"``: term counts per class;
            ``"bernoulli"``: documents per class holding the term, the
            statistics of ``BernoulliNB(binarize=0)`` on the counts.
        """
        if kind in ("multinomial", "complement"):
            fc = self.term_count[:, kept]
        elif kind == "bernoulli":
            fc = self.doc_count[:, kept]
        else:
            raise ValueError(f"kind must be multinomial, complement or bernoulli, got {kind!r}")
        return ClassCounts(class_count=self.class_count.copy(), feature_count=np.array(fc))


def _doc_bound(value, name):
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be an integer >= 0 or a float in [0, 1], got {value!r}")
    if isinstance(value, Integral):
        if value < 0:
            raise ValueError(f"{name} must be an integer >= 0 or a float in [0, 1], got {value!r}")
        return int(value)
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be an integer >= 0 or a float in [0, 1], got {value!r}")
    return float(value)


class Vocabulary:
    """A fixed, sorted list of terms and the map from each to its column.

    Parameters
    ----------
    terms : sequence of str
        Distinct terms in strictly increasing code-point order (the order
        of ``CountVectorizer.get_feature_names_out()``).

    Raises
    ------
    ValueError
        When the terms are not strictly increasing (unsorted or repeated).
    """

    def __init__(self, terms):
        terms = np.asarray(list(terms), dtype=object)
        values = terms.tolist()
        if not set(map(type, values)) <= {str} and not all(isinstance(t, str) for t in values):
            raise ValueError("vocabulary terms must be strings")
        if terms.size > 1 and not np.all(terms[:-1] < terms[1:]):
            raise ValueError("vocabulary terms must be distinct and sorted by code point")
        self.terms = terms

    def __len__(self) -> int:
        return int(self.terms.size)

    @functools.cached_property
    def index(self) -> dict[str, int]:
        """``{term: column}``."""
        return {t: i for i, t in enumerate(self.terms.tolist())}

    @functools.cached_property
    def _enum(self):
        # A polars Enum's codes are the positions of its categories: the columns.
        import polars as pl

        return pl.Enum(pl.Series(self.terms.tolist(), dtype=pl.String))

    def columns_of(self, terms: np.ndarray) -> np.ndarray:
        """Column of each term, ``-1`` where it is not in the vocabulary."""
        get = self.index.get
        return np.fromiter((get(t, -1) for t in terms.tolist()), dtype=np.int64, count=terms.size)

    def transform(self, texts, options: TokenOptions, engine: str = "auto") -> Transformed:
        """Counts of ``texts`` over this vocabulary, with the occurrences left out.

        Parameters
        ----------
        texts : sequence of str (list, NumPy array, pandas or polars Series)
        options : TokenOptions
        engine : {"auto", "python", "polars"}
            As for :func:`nbcli.text.count_terms`; all give the same counts.

        Returns
        -------
        Transformed
            ``X`` of shape (n_docs, len(self)), terms not in the vocabulary
            ignored and counted.
        """
        if choose_engine(engine, options) != "polars":
            return to_csr(count_terms(texts, options, engine), self)
        text = _as_series(texts)
        tokens = token_frame(text, options)
        terms = tokens.get_column("t")
        # Occurrences go straight to columns: no sort of the chunk's terms.
        codes = terms.cast(self._enum, strict=False).to_physical() if len(self) else None
        unseen = terms.is_not_null() if codes is None else codes.is_null()
        n_unseen = int(unseen.sum())
        unseen_terms = terms.filter(unseen).n_unique() if n_unseen else 0
        if codes is None:
            doc = col = np.zeros(0, dtype=np.int64)
        else:
            inside = ~unseen
            doc = tokens.get_column("doc").filter(inside).to_numpy()
            col = codes.filter(inside).to_numpy()
        doc, col, count = unique_entries(doc, col, max(len(self), 1))
        X = _csr(doc, col, count, text.len(), len(self))
        return Transformed(X, n_unseen, int(unseen_terms))

    def to_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The terms as UTF-8 bytes (uint8) and int64 offsets of length ``n_terms + 1``.

        Term ``i`` is ``bytes[offsets[i]:offsets[i + 1]]``; this is the
        model file's layout for arrays of text.
        """
        return encode_text_array(self.terms.tolist())

    @classmethod
    def from_arrays(cls, data, offsets) -> Vocabulary:
        """Inverse of :meth:`to_arrays`; raises ``ValueError`` on a corrupted pair."""
        return cls(decode_text_array(data, offsets))


def encode_text_array(strings) -> tuple[np.ndarray, np.ndarray]:
    """Strings as one uint8 array of UTF-8 bytes and int64 offsets (length n + 1, from 0)."""
    encoded = [s.encode("utf-8") for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(), offsets


def decode_text_array(data, offsets) -> list[str]:
    """Inverse of :func:`encode_text_array`.

    Raises
    ------
    ValueError
        For a wrong dtype or shape, offsets that do not start at 0, decrease
        or end elsewhere than the end of ``data``, or bytes that are not UTF-8.
    """
    data = np.asarray(data)
    offsets = np.asarray(offsets)
    if data.dtype != np.uint8 or data.ndim != 1:
        raise ValueError("text bytes must be a 1-D uint8 array")
    if offsets.dtype != np.int64 or offsets.ndim != 1 or offsets.size < 1:
        raise ValueError("text offsets must be a non-empty 1-D int64 array")
    if offsets[0] != 0 or offsets[-1] != data.size or np.any(np.diff(offsets) < 0):
        raise ValueError("text offsets must rise from 0 to the number of bytes")
    raw = data.tobytes()
    try:
        return [
            raw[a:b].decode("utf-8") for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())
        ]
    except UnicodeDecodeError as exc:
        raise ValueError(f"text bytes are not valid UTF-8 ({exc.reason})") from None


@dataclass
class Transformed:
    """A document-term matrix and what fell outside the vocabulary.

    Attributes
    ----------
    X : scipy.sparse.csr_array of int64, shape (n_docs, n_terms)
    unseen_tokens : int
        Occurrences of terms not in the vocabulary (ignored in ``X``).
    unseen_terms : int
        Distinct such terms.
    """

    X: sp.csr_array
    unseen_tokens: int
    unseen_terms: int


def to_csr(counts: DocTermCounts, vocabulary: Vocabulary) -> Transformed:
    """The chunk's counts over a fixed vocabulary, as CSR with sorted indices."""
    cols = vocabulary.columns_of(counts.terms)
    col = cols[counts.term] if counts.term.size else counts.term
    inside = col >= 0
    unseen_tokens = int(counts.count[~inside].sum())
    unseen_terms = int(np.count_nonzero(cols < 0))
    doc, col, value = counts.doc[inside], col[inside], counts.count[inside]
    order = np.lexsort((col, doc))
    X = _csr(doc[order], col[order], value[order], counts.n_docs, len(vocabulary))
    return Transformed(X, unseen_tokens, unseen_terms)


def _csr(doc, col, count, n_docs: int, n_cols: int) -> sp.csr_array:
    """CSR of entries sorted by (doc, col), pairs distinct."""
    import scipy.sparse as sp

    # 32-bit indices when they fit, as scipy would choose them itself.
    small = max(n_cols, doc.size) < 2**31 - 1
    index = np.int32 if small else np.int64
    indptr = np.zeros(n_docs + 1, dtype=index)
    np.cumsum(np.bincount(doc, minlength=n_docs), out=indptr[1:])
    X = sp.csr_array(
        (np.asarray(count, dtype=np.int64), col.astype(index), indptr),
        shape=(n_docs, n_cols),
        dtype=np.int64,
    )
    X.has_sorted_indices = True
    return X
