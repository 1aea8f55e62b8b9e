"""Term statistics of a stream of chunks, added one chunk at a time.

Merging each chunk's :class:`~nbcli.text.TermStats` into a running total
(:meth:`TermStats.merge`) costs the vocabulary so far at every chunk: a
sorted union of the term lists. A :class:`TermTally` instead numbers each
term when it is first seen and adds each chunk's statistics into columns
of arrays that grow as terms arrive, so a chunk costs its own occurrences;
the terms are sorted once, when :meth:`TermTally.stats` is called.

Numbering goes through a polars ``Categorical`` with a private
``pl.Categories`` mapping (string to 32-bit code, in Rust, codes given in
the order strings first appear): the occurrences of a chunk become codes
in one pass, with no per-chunk sort of its terms and no Python loop over
them. polars calls that mapping unstable, so when it is missing or fails
(or without polars, or with the ``"python"`` engine) a Python dictionary
numbers the chunk's distinct terms instead; both give the same statistics.
"""

from __future__ import annotations

import itertools

import numpy as np

from nbcli.text.tokens import (
    TokenOptions,
    _as_series,
    choose_engine,
    count_terms,
    token_frame,
    unique_entries,
)
from nbcli.text.vocabulary import TermStats

__all__ = ["TermTally"]


def _categories():
    """A private polars Categorical dtype, its mapping, and a Series keeping the
    mapping alive (polars drops a mapping no data uses); None when unavailable."""
    try:
        import polars as pl

        # A mapping must number strings densely from 0 in order of arrival.
        probe = pl.Series(["b", "a", "b"]).cast(pl.Categorical(pl.Categories.random()))
        if probe.to_physical().to_list() != [0, 1, 0]:
            return None
        cats = pl.Categories.random()
        dtype = pl.Categorical(cats)
        return dtype, cats, pl.Series("keep", [], dtype=dtype)
    except Exception:  # an unstable polars API: any failure means the dictionary
        return None


class TermTally:
    """Running per-class statistics of every term of a stream of chunks.

    Parameters
    ----------
    options : TokenOptions
    engine : {"auto", "python", "polars"}
        Tokeniser, as for :func:`nbcli.text.count_terms`.

    Attributes
    ----------
    n_docs : int
        Documents added so far.

    Notes
    -----
    Every cell of the result adds the chunks' values in the order the
    chunks came, as merging their :class:`TermStats` does, so the two are
    equal (bit for bit with integer weights).
    """

    def __init__(self, options: TokenOptions, engine: str = "auto"):
        self.options = options
        self.engine = choose_engine(engine, options)
        self._cats = _categories() if self.engine == "polars" else None
        self._n_codes = 0
        self._index: dict[str, int] = {}
        self._rows: dict = {}
        self.n_docs = 0
        self._class_count = np.zeros(0)
        self._term_count = np.zeros((0, 0))
        self._doc_count = np.zeros((0, 0))
        self._tf = np.zeros(0, dtype=np.int64)
        self._df = np.zeros(0, dtype=np.int64)

    def add(self, texts, labels, y_idx, sample_weight=None) -> None:
        """Tokenise and add one chunk of labelled documents.

        Parameters
        ----------
        texts : sequence of str (list, NumPy array, pandas or polars Series)
            The chunk's documents (``None`` and NaN are empty).
        labels : array-like of shape (n_chunk_classes,)
            The labels ``y_idx`` indexes; a label is the same class in every
            chunk (any hashable values).
        y_idx : array-like of int, shape (n_docs,)
        sample_weight : array-like of shape (n_docs,), optional
            Non-negative weights of the class statistics (not of ``tf``/``df``).

        Raises
        ------
        ValueError, TypeError
            As :func:`nbcli.text.count_terms`, and for labels that do not
            match the documents.
        """
        rows = np.array(
            [self._rows.setdefault(c, len(self._rows)) for c in np.asarray(labels).tolist()],
            dtype=np.intp,
        )
        if self._cats is None:
            self._add_counts(
                count_terms(texts, self.options, self.engine), rows, y_idx, sample_weight
            )
            return
        text = _as_series(texts)
        y_idx = np.asarray(y_idx, dtype=np.int64)
        if y_idx.shape != (text.len(),):
            raise ValueError(
                f"got {y_idx.shape[0]} labels for {text.len()} documents; need one per document"
            )
        tokens = token_frame(text, self.options)
        codes = tokens.get_column("t").cast(self._cats[0]).to_physical().to_numpy()
        if codes.size:
            self._n_codes = max(self._n_codes, int(codes.max()) + 1)
        n_terms = self._n_codes
        doc, term, count = unique_entries(
            tokens.get_column("doc").to_numpy(), codes, max(n_terms, 1)
        )
        self._grow(len(self._rows), n_terms)
        self.n_docs += text.len()
        w = np.ones(text.len()) if sample_weight is None else np.asarray(sample_weight, float)
        self._class_count[rows] += np.bincount(y_idx, weights=w, minlength=rows.size)
        if n_terms > 4 * max(term.size, 1024):
            # A vocabulary far larger than the chunk: add only the chunk's terms.
            ids, term = np.unique(term, return_inverse=True)
        else:
            ids = np.arange(n_terms)
        n = ids.size
        cell = y_idx[doc] * n + term
        wd = w[doc]
        size = rows.size * n
        cells = np.ix_(rows, ids)
        self._term_count[cells] += np.bincount(cell, wd * count, size).reshape(rows.size, n)
        self._doc_count[cells] += np.bincount(cell, wd, size).reshape(rows.size, n)
        self._tf[ids] += np.bincount(term, count, n).astype(np.int64)
        self._df[ids] += np.bincount(term, minlength=n)

    def _add_counts(self, counts, rows, y_idx, sample_weight) -> None:
        part = TermStats.from_counts(counts, y_idx, rows.size, sample_weight)
        index = self._index
        terms = part.terms.tolist()
        # Numbers follow no order (stats() sorts the terms), so new terms are
        # found and numbered by set and dict operations, without a Python loop.
        new = set(terms).difference(index)
        index.update(zip(new, itertools.count(len(index))))
        ids = np.fromiter(map(index.__getitem__, terms), dtype=np.intp, count=len(terms))
        self._grow(len(self._rows), len(index))
        self.n_docs += part.n_docs
        self._class_count[rows] += part.class_count
        # Rows and ids are distinct, so fancy-indexed += adds every cell once.
        cells = np.ix_(rows, ids)
        self._term_count[cells] += part.term_count
        self._doc_count[cells] += part.doc_count
        self._tf[ids] += part.tf
        self._df[ids] += part.df

    def _grow(self, n_rows: int, n_terms: int) -> None:
        rows, cap = self._term_count.shape
        if n_rows <= rows and n_terms <= cap:
            return
        # Capacity doubles, so copies cost O(terms) over the whole stream.
        new_cap = max(cap, 1024)
        while new_cap < n_terms:
            new_cap *= 2
        new_rows = max(rows, n_rows)

        def grown(a, shape):
            out = np.zeros(shape, dtype=a.dtype)
            out[tuple(slice(0, n) for n in a.shape)] = a
            return out

        self._class_count = grown(self._class_count, (new_rows,))
        self._term_count = grown(self._term_count, (new_rows, new_cap))
        self._doc_count = grown(self._doc_count, (new_rows, new_cap))
        self._tf = grown(self._tf, (new_cap,))
        self._df = grown(self._df, (new_cap,))

    def _sorted_terms(self) -> tuple[np.ndarray, np.ndarray]:
        """Every term seen, sorted by code point, and the term numbers in that order."""
        if self._cats is None:
            terms = np.array(list(self._index), dtype=object)
            order = np.array(sorted(range(terms.size), key=terms.__getitem__), dtype=np.int64)
            return terms[order], order
        series = self._cats[1].to_series()
        if series.len() != self._n_codes or series.null_count():
            raise RuntimeError("the polars term mapping does not hold exactly the terms seen")
        # UTF-8 bytes sort in code-point order, which is how polars sorts text.
        order = series.arg_sort()
        return series.gather(order).to_numpy().astype(object), order.to_numpy().astype(np.int64)

    def stats(self, classes) -> TermStats:
        """The statistics of every chunk added, rows in the order of ``classes``.

        Parameters
        ----------
        classes : array-like
            Every label added (a class never added gets rows of zeros).

        Raises
        ------
        ValueError
            When a label added is not in ``classes``.
        """
        classes = np.asarray(classes).tolist()
        missing = set(self._rows) - set(classes)
        if missing:
            raise ValueError(f"label {sorted(map(str, missing))[0]!r} is not among the classes")
        terms, order = self._sorted_terms()
        k, n = len(classes), terms.size
        term_count, doc_count, class_count = np.zeros((k, n)), np.zeros((k, n)), np.zeros(k)
        for i, c in enumerate(classes):
            r = self._rows.get(c)
            if r is not None:
                class_count[i] = self._class_count[r]
                term_count[i] = self._term_count[r, order]
                doc_count[i] = self._doc_count[r, order]
        return TermStats(
            terms=terms,
            n_docs=self.n_docs,
            class_count=class_count,
            term_count=term_count,
            doc_count=doc_count,
            tf=self._tf[order],
            df=self._df[order],
        )
