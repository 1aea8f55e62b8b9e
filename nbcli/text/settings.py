"""The tokenisation settings of a model's text columns, as a model file stores them.

Every text column of a model is tokenised with the same settings
(:class:`TextSettings`), and each gets its own vocabulary, chosen by
``min_df``, ``max_df`` and ``max_features`` over that column's terms.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

from nbcli.text.tokens import DEFAULT_TOKEN_PATTERN, TokenOptions
from nbcli.text.vectorizer import TextVectorizer
from nbcli.text.vocabulary import _doc_bound
from nbcli.text.weighting import TfidfWeighting

__all__ = ["TextSettings", "feature_name"]


def feature_name(column: str, term: str) -> str:
    """The feature name of ``term`` in text column ``column``: ``"column:term"``."""
    return f"{column}:{term}"


@dataclass(frozen=True)
class TextSettings:
    """Which columns are text and how their documents become counts.

    Parameters
    ----------
    columns : tuple of str
        The text columns, in the order their terms follow the numeric features.
    lowercase : bool, default=True
    ngram_range : tuple (min_n, max_n), default=(1, 1)
    min_df, max_df : int or float
        Document-frequency bounds of a kept term (an int counts documents, a
        float in [0, 1] is a fraction of them), as ``CountVectorizer``'s.
    max_features : int or None
        Keep the most frequent terms only, per column.
    stop_words : tuple of str or None
        Tokens removed (after lowercasing) before n-grams are made.
    weighting : TfidfWeighting or None
        TF-IDF weighting of the counts (:mod:`nbcli.text.weighting`); None:
        raw counts.
    document_frequencies : tuple of tuple of int, or None
        Learnt at fit: per column, the number of training documents holding
        each term of its vocabulary (unweighted, as ``min_df`` counts them),
        in vocabulary order; what ``nbcli inspect`` shows and floors by.
        None: not known (files written before they were stored).

    Raises
    ------
    ValueError
        For invalid settings (the message names the setting).
    """

    columns: tuple[str, ...]
    lowercase: bool = True
    ngram_range: tuple[int, int] = (1, 1)
    min_df: int | float = 1
    max_df: int | float = 1.0
    max_features: int | None = None
    stop_words: tuple[str, ...] | None = None
    weighting: TfidfWeighting | None = None
    document_frequencies: tuple[tuple[int, ...], ...] | None = None

    def __post_init__(self):
        if not self.columns or not all(isinstance(c, str) and c for c in self.columns):
            raise ValueError("text columns must be a non-empty list of column names")
        if len(set(self.columns)) != len(self.columns):
            raise ValueError("a text column is named more than once")
        if not isinstance(self.lowercase, bool):
            raise ValueError(f"lowercase must be true or false, got {self.lowercase!r}")
        _doc_bound(self.min_df, "min_df")
        _doc_bound(self.max_df, "max_df")
        m = self.max_features
        if m is not None and (isinstance(m, bool) or not isinstance(m, Integral) or m < 1):
            raise ValueError(f"max_features must be a positive integer, got {m!r}")
        if self.stop_words is not None and not all(isinstance(w, str) for w in self.stop_words):
            raise ValueError("stop words must be strings")
        self.options()  # checks the n-gram range
        if self.weighting is not None and not isinstance(self.weighting, TfidfWeighting):
            raise ValueError("the text weighting must be a TfidfWeighting")
        dfs = self.document_frequencies
        if dfs is not None:
            if len(dfs) != len(self.columns):
                raise ValueError("document_frequencies must hold one list per text column")
            for df in dfs:
                if not all(
                    isinstance(v, Integral) and not isinstance(v, bool) and v >= 0 for v in df
                ):
                    raise ValueError("document frequencies must be whole numbers >= 0")

    def learnt(self, document_frequencies) -> TextSettings:
        """These settings with the document frequencies a fit found (one
        sequence of counts per column, in vocabulary order)."""
        from dataclasses import replace

        dfs = tuple(tuple(int(v) for v in df) for df in document_frequencies)
        return replace(self, document_frequencies=dfs)

    def options(self) -> TokenOptions:
        """The :class:`TokenOptions` of these settings."""
        return TokenOptions(
            lowercase=self.lowercase,
            ngram_range=tuple(self.ngram_range),  # type: ignore[arg-type]
            stop_words=None if self.stop_words is None else frozenset(self.stop_words),
            token_pattern=DEFAULT_TOKEN_PATTERN,
        )

    def vectorizer(self) -> TextVectorizer:
        """An unfitted :class:`TextVectorizer` with these settings (one per column)."""
        return TextVectorizer(
            lowercase=self.lowercase,
            ngram_range=tuple(self.ngram_range),  # type: ignore[arg-type]
            min_df=self.min_df,
            max_df=self.max_df,
            max_features=self.max_features,
            stop_words=self.stop_words,
        )

    def to_metadata(self) -> dict:
        """A JSON-ready dict (the model file's ``text`` metadata; ``weighting``
        only for weighted counts, so files of raw counts are as before)."""
        out = {
            "columns": list(self.columns),
            "lowercase": self.lowercase,
            "ngram_range": list(self.ngram_range),
            "min_df": self.min_df,
            "max_df": self.max_df,
            "max_features": self.max_features,
            "stop_words": None if self.stop_words is None else sorted(self.stop_words),
            "token_pattern": DEFAULT_TOKEN_PATTERN,
        }
        if self.weighting is not None:
            out["weighting"] = self.weighting.to_metadata()
        if self.document_frequencies is not None:
            out["document_frequencies"] = [list(df) for df in self.document_frequencies]
        return out

    @classmethod
    def from_metadata(cls, meta) -> TextSettings:
        """Inverse of :meth:`to_metadata`.

        Raises
        ------
        ValueError
            For a field that is missing, of the wrong type, or invalid.
        """
        if not isinstance(meta, dict):
            raise ValueError("the text settings are not an object")
        expected = {
            "columns",
            "lowercase",
            "ngram_range",
            "min_df",
            "max_df",
            "max_features",
            "stop_words",
            "token_pattern",
        }
        if set(meta) - {"weighting", "document_frequencies"} != expected:
            raise ValueError(f"the text settings must have exactly the fields {sorted(expected)}")
        if meta["token_pattern"] != DEFAULT_TOKEN_PATTERN:
            raise ValueError("the text settings name a token pattern this nbcli does not use")
        columns, ngram, stop = meta["columns"], meta["ngram_range"], meta["stop_words"]
        if not isinstance(columns, list) or not isinstance(ngram, list) or len(ngram) != 2:
            raise ValueError("text columns and ngram_range must be lists")
        if stop is not None and not isinstance(stop, list):
            raise ValueError("stop_words must be a list or null")
        for key in ("min_df", "max_df"):
            if isinstance(meta[key], bool) or not isinstance(meta[key], Real):
                raise ValueError(f"{key} must be a number")
        dfs = meta.get("document_frequencies")
        if dfs is not None and not (
            isinstance(dfs, list) and all(isinstance(df, list) for df in dfs)
        ):
            raise ValueError("document_frequencies must be a list of lists")
        return cls(
            columns=tuple(columns),
            lowercase=meta["lowercase"],
            ngram_range=(ngram[0], ngram[1]),
            min_df=meta["min_df"],
            max_df=meta["max_df"],
            max_features=meta["max_features"],
            stop_words=None if stop is None else tuple(stop),
            weighting=None
            if meta.get("weighting") is None
            else TfidfWeighting.from_metadata(meta["weighting"]),
            document_frequencies=None if dfs is None else tuple(tuple(df) for df in dfs),
        )
