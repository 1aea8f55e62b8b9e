"""TF-IDF weighting of a text column's counts, as scikit-learn's ``TfidfTransformer``.

For a document's count ``tf_w`` of term ``w`` (Salton and Buckley,
"Term-weighting approaches in automatic text retrieval", 1988; scikit-learn's
``TfidfTransformer``)::

    tf'_w   = 1 + log(tf_w) if sublinear_tf (tf_w > 0), else tf_w
    idf_w   = log((1 + n) / (1 + df_w)) + 1 if smooth_idf, else log(n / df_w) + 1
    x_w     = tf'_w idf_w, then the row divided by its l2 (or l1) norm

with ``n`` the training documents and ``df_w`` the number of them holding
``w`` (the document frequencies of the kept vocabulary, counted unweighted,
as ``CountVectorizer`` counts them). The document frequencies are counts
that merge across chunks; the norm of a training row needs the idf, which is
known only after every row was seen, so a weighted fit reads its data twice.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

__all__ = ["NORMS", "TfidfWeighting"]

#: Row norms (``None``: rows are not normalised).
NORMS = ("l2", "l1", None)


@dataclass(frozen=True)
class TfidfWeighting:
    """How a text column's counts are weighted, and the document frequencies learnt.

    Parameters
    ----------
    smooth_idf, sublinear_tf : bool
        As scikit-learn's ``TfidfTransformer`` (defaults True and False).
    norm : {"l2", "l1", None}
    n_documents : int or None
        Training documents (None before the fit).
    document_frequencies : tuple of tuple of int, or None
        Per text column (the settings' order), the document frequency of
        each vocabulary term (None before the fit).

    Raises
    ------
    ValueError
        For an invalid setting.
    """

    smooth_idf: bool = True
    sublinear_tf: bool = False
    norm: str | None = "l2"
    n_documents: int | None = None
    document_frequencies: tuple[tuple[int, ...], ...] | None = None

    def __post_init__(self):
        for name in ("smooth_idf", "sublinear_tf"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if self.norm not in NORMS:
            raise ValueError(f"norm must be l2, l1 or none, got {self.norm!r}")
        n = self.n_documents
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise ValueError(f"n_documents must be a positive integer, got {n!r}")
        if self.document_frequencies is not None:
            for df in self.document_frequencies:
                if not all(isinstance(v, int) and not isinstance(v, bool) for v in df) or any(
                    v < 0 or (n is not None and v > n) for v in df
                ):
                    raise ValueError(
                        "document frequencies must be whole numbers between 0 and n_documents"
                    )

    def learnt(self, n_documents: int, document_frequencies) -> TfidfWeighting:
        """These settings with what a fit learnt."""
        return replace(
            self,
            n_documents=int(n_documents),
            document_frequencies=tuple(tuple(int(v) for v in df) for df in document_frequencies),
        )

    def idf(self, column: int) -> np.ndarray:
        """``idf_w`` of text column number ``column`` (its vocabulary's order)."""
        if self.n_documents is None or self.document_frequencies is None:
            raise ValueError("the weighting has no document frequencies yet (not fitted)")
        df = np.asarray(self.document_frequencies[column], dtype=np.float64)
        n = float(self.n_documents)
        if self.smooth_idf:
            return np.log((1.0 + n) / (1.0 + df)) + 1.0
        with np.errstate(divide="ignore"):
            return np.log(n / df) + 1.0

    def transform(self, counts, column: int):
        """The weighted rows of one text column's counts.

        Parameters
        ----------
        counts : scipy.sparse.csr_array of shape (n_rows, V)
        column : int
            The column's number among the text columns.

        Returns
        -------
        scipy.sparse.csr_array of float64, shape (n_rows, V)
        """
        import scipy.sparse as sp

        X = sp.csr_array(counts, dtype=np.float64, copy=True)
        X.sum_duplicates()
        if self.sublinear_tf:
            X.data = np.log(X.data) + 1.0
        X.data *= self.idf(column)[X.indices]
        if self.norm is not None:
            sq = X.data**2 if self.norm == "l2" else np.abs(X.data)
            rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
            norms = np.bincount(rows, weights=sq, minlength=X.shape[0])
            if self.norm == "l2":
                norms = np.sqrt(norms)
            norms[norms == 0.0] = 1.0
            X.data /= norms[rows]
        return X

    def to_metadata(self) -> dict:
        """A JSON-ready dict (the ``weighting`` of the model file's ``text`` metadata)."""
        return {
            "scheme": "tfidf",
            "smooth_idf": self.smooth_idf,
            "sublinear_tf": self.sublinear_tf,
            "norm": self.norm,
            "n_documents": self.n_documents,
            "document_frequencies": None
            if self.document_frequencies is None
            else [list(df) for df in self.document_frequencies],
        }

    @classmethod
    def from_metadata(cls, meta) -> TfidfWeighting:
        """Inverse of :meth:`to_metadata`.

        Raises
        ------
        ValueError
            For a field that is missing, of the wrong type, or invalid.
        """
        keys = {
            "scheme",
            "smooth_idf",
            "sublinear_tf",
            "norm",
            "n_documents",
            "document_frequencies",
        }
        if not isinstance(meta, dict) or set(meta) != keys or meta["scheme"] != "tfidf":
            raise ValueError(f"the text weighting must be tfidf with the fields {sorted(keys)}")
        dfs = meta["document_frequencies"]
        if dfs is not None and not (
            isinstance(dfs, list) and all(isinstance(df, list) for df in dfs)
        ):
            raise ValueError("document_frequencies must be a list of lists")
        return cls(
            smooth_idf=meta["smooth_idf"],
            sublinear_tf=meta["sublinear_tf"],
            norm=meta["norm"],
            n_documents=meta["n_documents"],
            document_frequencies=None if dfs is None else tuple(tuple(df) for df in dfs),
        )
