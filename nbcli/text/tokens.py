"""Tokenising text into word n-gram counts, as scikit-learn's ``CountVectorizer`` does.

A document is lowercased (``str.lower``), split into tokens by the regular
expression ``(?u)\\b\\w\\w+\\b`` (two or more word characters, Unicode-aware),
stripped of stop words, and turned into word n-grams joined by one space.
Each step is scikit-learn's (``sklearn/feature_extraction/text.py``:
``_VectorizerMixin.build_analyzer`` and ``_word_ngrams``), so the terms and
counts are the same.

Two engines give the same counts:

* ``"python"``: Python's ``re``, one document at a time.
* ``"polars"``: the whole chunk at once in polars (Rust's ``regex`` crate),
  two to three times as fast on short documents.

Rust's ``\\w`` is not Python's. Python's is ``str.isalnum()`` plus ``_``
(letters L*, numbers N*); Rust's is Unicode's Alphabetic, marks, decimal
digits, connector punctuation and the joiners (UTS #18, annex C). Over
every code point, with Python 3.11 (Unicode 14.0) and polars 2.1:

==================  ==========  ==================================================
characters          word to     examples
==================  ==========  ==================================================
No (895)            Python      superscripts U+00B2, fractions U+00BD, circled
                                digits U+2460
Mn (1950)           Rust        combining accents U+0300-U+036F, so a decomposed
                                ``cafe`` + U+0301 is one Rust token and ``cafe``
                                (then the mark ends it) in Python; also the
                                U+0307 that ``"İ".lower()`` leaves
Mc (445), Me (13)   Rust        Devanagari vowel signs U+093E, U+20DD
Pc (9)              Rust        U+203F-U+2040, U+2054, U+FE33-U+FE34,
                                U+FE4D-U+FE4F, U+FF3F (``_`` is a word
                                character to both)
Cf (2)              Rust        the joiners U+200C and U+200D
So (130)            Rust        circled and squared letters U+24B6-U+24E9,
                                U+1F130-U+1F149, U+1F150-U+1F169,
                                U+1F170-U+1F189 (Other_Alphabetic)
Cn (9465)           Rust        unassigned in Unicode 14.0, letters or marks in
                                Rust's newer tables (U+0897, U+1C89, ...)
==================  ==========  ==================================================

and polars lowercases 55 characters differently (case pairs added after
Unicode 14.0, such as U+1C89 and U+A7CB); Greek capital sigma lowercases
by context, the same way in both. So that no difference reaches the
counts, the distinct non-ASCII characters of each chunk are classified by
both engines (one vectorised call, cached), and the documents holding a
character on which they disagree, as a word character or in lowercasing,
are tokenised with Python's ``re``. The counts therefore equal the
``"python"`` engine's, and scikit-learn's, on every input (tested on every
seventh code point and on hand-picked texts, ``tests/test_text.py``);
documents in scripts with combining marks (Devanagari, decomposed accents)
pay Python's speed.

``"auto"`` uses polars when it is installed and the token pattern is the
default one, else Python.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_TOKEN_PATTERN = r"(?u)\b\w\w+\b"
ENGINES = ("auto", "python", "polars")


@dataclass(frozen=True)
class TokenOptions:
    """How documents become terms.

    Parameters
    ----------
    lowercase : bool, default=True
        Lowercase with ``str.lower`` before tokenising.
    ngram_range : tuple (min_n, max_n), default=(1, 1)
        Word n-grams of every length from ``min_n`` to ``max_n``, made after
        stop words are removed (so an n-gram can span a removed word).
    stop_words : frozenset of str or None
        Tokens to drop, compared after lowercasing.
    token_pattern : str
        Regular expression (Python syntax) whose matches are the tokens; with
        one capturing group, the group is the token.

    Raises
    ------
    ValueError
        For an n-gram range that is not ``1 <= min_n <= max_n`` or a pattern
        with more than one capturing group.
    """

    lowercase: bool = True
    ngram_range: tuple[int, int] = (1, 1)
    stop_words: frozenset[str] | None = None
    token_pattern: str = DEFAULT_TOKEN_PATTERN

    def __post_init__(self):
        lo, hi = self.ngram_range
        if (
            isinstance(lo, bool)
            or isinstance(hi, bool)
            or not isinstance(lo, (int, np.integer))
            or not isinstance(hi, (int, np.integer))
            or not 1 <= lo <= hi
        ):
            raise ValueError(
                f"ngram_range must be two integers 1 <= min_n <= max_n, got {self.ngram_range!r}"
            )
        try:
            groups = re.compile(self.token_pattern).groups
        except re.error as exc:
            raise ValueError(f"token_pattern is not a valid regular expression ({exc})") from None
        if groups > 1:
            raise ValueError(
                "token_pattern has more than one capturing group; use at most one "
                "(its match is the token)"
            )
        if self.stop_words is not None:
            object.__setattr__(self, "stop_words", frozenset(self.stop_words))

    def analyzer(self):
        """The function ``document -> list of terms`` (Python's ``re``)."""
        return functools.partial(_analyze, regex=re.compile(self.token_pattern), options=self)


def _analyze(doc: str, *, regex, options: TokenOptions) -> list[str]:
    if options.lowercase:
        doc = doc.lower()
    tokens = regex.findall(doc)
    return word_ngrams(tokens, options)


def word_ngrams(tokens: list[str], options: TokenOptions) -> list[str]:
    """Stop words removed, then n-grams: the order scikit-learn's ``_word_ngrams`` yields."""
    stop = options.stop_words
    if stop:
        tokens = [t for t in tokens if t not in stop]
    lo, hi = options.ngram_range
    if hi == 1:
        return tokens
    out = list(tokens) if lo == 1 else []
    lo = max(lo, 2)
    n_tokens = len(tokens)
    join = " ".join
    for n in range(lo, min(hi, n_tokens) + 1):
        out.extend(join(tokens[i : i + n]) for i in range(n_tokens - n + 1))
    return out


@dataclass
class DocTermCounts:
    """Term counts of a chunk of documents, in coordinate form.

    Attributes
    ----------
    n_docs : int
    terms : ndarray of str, shape (n_terms,)
        The chunk's distinct terms, sorted by code point (Python's order).
    doc : ndarray of int64, shape (n_entries,)
        Document (row in the chunk) of each entry.
    term : ndarray of int64, shape (n_entries,)
        Index into ``terms`` of each entry; ``(doc, term)`` pairs are unique.
    count : ndarray of int64, shape (n_entries,)
        Occurrences of the term in the document (at least 1).
    """

    n_docs: int
    terms: np.ndarray
    doc: np.ndarray
    term: np.ndarray
    count: np.ndarray


def _as_documents(texts) -> list:
    if isinstance(texts, str):
        raise ValueError("expected a sequence of documents, got a single string")
    if hasattr(texts, "to_list"):
        texts = texts.to_list()
    elif hasattr(texts, "tolist"):
        texts = texts.tolist()
    docs = list(texts)
    if set(map(type, docs)) <= {str}:
        return docs
    for i, d in enumerate(docs):
        if d is None or (isinstance(d, float) and d != d):
            docs[i] = ""
        elif not isinstance(d, str):
            raise TypeError(f"document {i} is a {type(d).__name__}, not text")
    return docs


def _as_series(texts):
    """The documents as a polars String Series (nulls are empty documents)."""
    import polars as pl

    if isinstance(texts, pl.Series) and texts.dtype == pl.String:
        return texts
    return pl.Series("text", _as_documents(texts), dtype=pl.String)


def _count_python(docs: Sequence[str], options: TokenOptions):
    """Entries ``(doc, term, count)`` of ``docs`` with terms as strings (Python's ``re``)."""
    analyze = options.analyzer()
    index: dict[str, int] = {}
    doc_ids: list[int] = []
    term_ids: list[int] = []
    counts: list[int] = []
    for i, text in enumerate(docs):
        seen: dict[int, int] = {}
        for t in analyze(text):
            j = index.setdefault(t, len(index))
            seen[j] = seen.get(j, 0) + 1
        doc_ids.extend([i] * len(seen))
        term_ids.extend(seen.keys())
        counts.extend(seen.values())
    doc_arr = np.asarray(doc_ids, dtype=np.int64)
    terms = np.array(list(index), dtype=object)
    return doc_arr, terms, np.asarray(term_ids, dtype=np.int64), np.asarray(counts, dtype=np.int64)


def _sorted_counts(n_docs, doc, terms, term, count) -> DocTermCounts:
    """Relabel terms in sorted order and sort entries by (doc, term)."""
    order = np.argsort(terms, kind="stable") if terms.size else np.zeros(0, dtype=np.int64)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    term = rank[term] if term.size else term
    entry = np.lexsort((term, doc))
    return DocTermCounts(n_docs, terms[order], doc[entry], term[entry], count[entry])


def count_terms(texts: Iterable, options: TokenOptions, engine: str = "auto") -> DocTermCounts:
    """Count the terms of each document of a chunk.

    Parameters
    ----------
    texts : sequence of str (list, NumPy array, pandas or polars Series)
        One document per element; ``None`` and NaN are empty documents.
    options : TokenOptions
    engine : {"auto", "python", "polars"}
        See the module notes; every engine gives the same counts.

    Returns
    -------
    DocTermCounts

    Raises
    ------
    ValueError, TypeError
        For a single string instead of a sequence, a non-text document, or an
        unknown engine (``ImportError`` for ``"polars"`` without polars).
    """
    if choose_engine(engine, options) == "polars":
        return _count_polars(_as_series(texts), options)
    docs = _as_documents(texts)
    doc, terms, term, count = _count_python(docs, options)
    return _sorted_counts(len(docs), doc, terms, term, count)


def choose_engine(engine: str, options: TokenOptions) -> str:
    """``"python"`` or ``"polars"``: the engine ``engine`` names (``"auto"`` resolved).

    Raises
    ------
    ValueError
        For an unknown engine.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if engine == "auto":
        return "polars" if _polars_usable(options) else "python"
    return engine


def _polars_usable(options: TokenOptions) -> bool:
    if options.token_pattern != DEFAULT_TOKEN_PATTERN:
        return False
    try:
        import polars  # noqa: F401
    except ImportError:
        return False
    return True


# -- the polars engine ------------------------------------------------------------

_WORD = re.compile(r"\w")


_VERDICTS: dict[tuple[str, bool], bool] = {}


def _disputed(chars: list[str], lowercase: bool) -> list[str]:
    """The characters on which Python and polars could tokenise differently.

    A character is disputed when the two lowercase it differently, or when
    it or its lowercase holds a character that one takes as a word character
    (``\\w``) and the other does not; Greek capital sigma always is, its
    lowercase depending on context. Verdicts are cached per process.
    """
    import polars as pl

    new = [c for c in chars if (c, lowercase) not in _VERDICTS]
    if new:
        lower = [c.lower() for c in new] if lowercase else new
        if lowercase:
            theirs = pl.Series(new, dtype=pl.String).str.to_lowercase().to_list()
            moved = [a != b or c == "\u03a3" for c, a, b in zip(new, lower, theirs)]
        else:
            moved = [False] * len(new)
        pieces = sorted({p for c, low in zip(new, lower) for p in c + low})
        rust = pl.Series(pieces, dtype=pl.String).str.contains(r"^\w$").to_list()
        differs = {p for p, r in zip(pieces, rust) if bool(_WORD.fullmatch(p)) != r}
        for c, low, m in zip(new, lower, moved):
            _VERDICTS[c, lowercase] = m or any(p in differs for p in c + low)
    return [c for c in chars if _VERDICTS[c, lowercase]]


def token_frame(text, options: TokenOptions):
    """Every term occurrence of a chunk, as a polars frame ``(doc, t)``.

    Parameters
    ----------
    text : polars.Series of String, shape (n_docs,)
        The documents (null: an empty document).
    options : TokenOptions
        With the default token pattern.

    Returns
    -------
    polars.DataFrame
        Columns ``doc`` (UInt32, the document's row) and ``t`` (String, the
        term), one row per occurrence; the occurrences of each document are
        consecutive rows, in the document's order.

    Notes
    -----
    Documents holding a character on which Python and polars disagree
    (:func:`_disputed`) are tokenised with Python's ``re``; stop words and
    n-grams are then made from both engines' tokens alike.
    """
    import polars as pl

    frame = pl.DataFrame({"text": text}).with_row_index("doc")
    bad = sorted(_disputed(_non_ascii_chars(text), options.lowercase))
    python_rows = None
    if bad:
        cls = "[" + "".join(re.escape(c) for c in bad) + "]"
        slow = text.str.contains(cls).fill_null(False)
        if slow.any():
            regex = re.compile(options.token_pattern)
            rows = np.flatnonzero(slow.to_numpy())
            docs = text.gather(rows).to_list()
            found = [regex.findall(d.lower() if options.lowercase else d) for d in docs]
            python_rows = pl.DataFrame(
                {
                    "doc": np.repeat(rows, [len(f) for f in found]).astype(np.uint32),
                    "t": [t for f in found for t in f],
                },
                schema={"doc": pl.UInt32, "t": pl.String},
            )
            frame = frame.with_columns(
                pl.when(slow).then(None).otherwise(pl.col("text")).alias("text")
            )
    body = pl.col("text").str.to_lowercase() if options.lowercase else pl.col("text")
    tokens = (
        frame.lazy()
        .select("doc", body.str.extract_all(options.token_pattern).alias("t"))
        .explode("t")
        .drop_nulls("t")
        .collect()
    )
    if python_rows is not None:
        tokens = pl.concat([tokens, python_rows])
    if options.stop_words:
        tokens = tokens.filter(~pl.col("t").is_in(sorted(options.stop_words)))
    lo, hi = options.ngram_range
    if hi == 1:
        return tokens
    parts = [tokens] if lo == 1 else []
    parts.extend(_ngram(tokens, n) for n in range(max(lo, 2), hi + 1))
    return pl.concat(parts)


def _count_polars(text, options: TokenOptions) -> DocTermCounts:
    import polars as pl

    n_docs = text.len()
    tokens = token_frame(text, options)
    # Terms become integer codes through an Enum of the sorted distinct
    # terms (a hash lookup), so the counting below sorts integers, not strings;
    # the Enum's codes are positions in the sorted list.
    uniq = tokens.get_column("t").unique().sort()
    if uniq.len() == 0:
        empty = np.zeros(0, dtype=np.int64)
        return DocTermCounts(n_docs, np.zeros(0, dtype=object), empty, empty, empty)
    codes = tokens.get_column("t").cast(pl.Enum(uniq)).to_physical().to_numpy()
    doc, term, count = unique_entries(tokens.get_column("doc").to_numpy(), codes, uniq.len())
    return DocTermCounts(n_docs, uniq.to_numpy().astype(object), doc, term, count)


def unique_entries(doc: np.ndarray, term: np.ndarray, n_terms: int):
    """Distinct ``(doc, term)`` pairs of occurrences and how often each occurs.

    Returns ``(doc, term, count)``, int64, sorted by document then term.
    """
    key = doc.astype(np.int64) * n_terms + term
    # Occurrences come mostly in runs by document, which a stable sort
    # (timsort, merging runs) takes faster than the default one.
    key.sort(kind="stable")
    first = np.empty(key.size, dtype=bool)
    first[:1] = True
    np.not_equal(key[1:], key[:-1], out=first[1:])
    at = np.flatnonzero(first)
    count = np.diff(np.append(at, key.size)).astype(np.int64)
    key = key[at]
    return key // n_terms, key % n_terms, count


def _non_ascii_chars(text) -> list[str]:
    """The distinct non-ASCII characters of a polars String Series.

    Taken slice by slice, so that text in a non-Latin script (every
    character non-ASCII) never explodes into one row per character at once.
    """
    # A document is ASCII when its bytes are as many as its characters, a
    # test far cheaper than a regular expression.
    wide = text.filter((text.str.len_bytes() != text.str.len_chars()).fill_null(False))
    found: set[str] = set()
    step = 4096
    for lo in range(0, wide.len(), step):
        part = wide.slice(lo, step).str.extract_all(r"[^\x00-\x7F]").explode().drop_nulls()
        found.update(part.unique().to_list())
    return sorted(found)


def _ngram(tokens_df, n: int):
    """The word n-grams of length ``n`` of exploded tokens (consecutive rows per document)."""
    import polars as pl

    same_doc = pl.col("doc").shift(-(n - 1)) == pl.col("doc")
    gram = pl.concat_str([pl.col("t").shift(-i) for i in range(n)], separator=" ")
    return (
        tokens_df.with_columns(gram.alias("g"), same_doc.alias("keep"))
        .filter(pl.col("keep"))
        .select("doc", pl.col("g").alias("t"))
    )
