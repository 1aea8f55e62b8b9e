"""Text columns as features of the count models: fit statistics and count matrices.

A model with text columns has as features its numeric columns (first, in
file order) and then, per text column, one count per vocabulary term, named
``column:term`` (:func:`nbcli.text.settings.feature_name`). Fitting streams:

1. :func:`accumulate_text` turns one chunk into :class:`TextChunkStats`: the
   estimator's statistics of the numeric columns, and per text column the
   per-class statistics of every term seen (:class:`nbcli.text.TermStats`);
2. chunks :meth:`~TextChunkStats.merge` exactly (sums of counts; classes
   found in later chunks are added), in any order;
3. :func:`finalize_text` chooses each column's vocabulary from the totals,
   as ``CountVectorizer`` does after seeing every document, and gives the
   estimator its statistics over the kept terms (not finalized, so priors
   and labels can still be set).

Scoring, :func:`text_matrix`: a chunk's counts over the model's vocabularies
as one SciPy CSR matrix (numeric columns beside them), terms unseen in
training left out and counted. Cross-validation reuses both halves: fold
statistics from :func:`accumulate_text`, held-out rows through
:func:`text_matrix`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from nbcli.errors import NbcliError
from nbcli.models import ClassCounts
from nbcli.text.settings import TextSettings, feature_name
from nbcli.text.tally import TermTally
from nbcli.text.tokens import count_terms
from nbcli.text.vocabulary import TermStats, Vocabulary

__all__ = [
    "TextChunkStats",
    "TextMatrix",
    "TextModel",
    "accumulate_text",
    "check_text_model",
    "finalize_text",
    "indicative_words",
    "tally_text_chunks",
    "text_matrix",
]


def _text_term(estimator) -> bool:
    """Whether text columns are terms of ``estimator`` beside its table (mixed)."""
    return getattr(type(estimator), "text_term", None) is not None


def check_text_model(estimator) -> str:
    """The term statistic ``estimator`` needs: what its class declares as
    ``text_statistic`` (the mixed model takes each text column as a
    multinomial term of its own, see :mod:`nbcli.models._text_term`).

    Raises
    ------
    NbcliError
        For a model that cannot take word counts or sparse input
        (``sklearn_tags["sparse"]``), or a Bernoulli model whose threshold
        is not 0 (word presence).
    """
    kind = type(estimator).text_statistic
    if kind is None:
        from nbcli.models import MODELS

        takers = [name for name, cls in MODELS.items() if cls.text_statistic is not None]
        raise NbcliError(
            f"--text needs a model of word counts: {', '.join(takers)} "
            f"(the {estimator.name} model does not take text columns)"
        )
    if not (_text_term(estimator) or type(estimator).sklearn_tags.get("sparse", False)):
        # Counts reach the scorer as a sparse matrix (see nbcli.models._sparse).
        raise NbcliError(f"the {estimator.name} model does not take sparse word counts yet")
    if kind == "bernoulli" and getattr(estimator, "binarize", None) != 0:
        raise NbcliError(
            "--text with the bernoulli model needs --binarize 0 (a word is present "
            "or not in a document)"
        )
    return kind


@dataclass
class TextChunkStats:
    """Fit statistics of some rows of a file with text columns.

    Attributes
    ----------
    classes : ndarray of shape (n_classes,)
        Sorted labels; row ``k`` of every statistic is class ``classes[k]``.
    numeric : ClassCounts, MixedStats or None
        The estimator's statistics of the numeric columns (None without any).
    terms : dict of str to TermStats
        Per text column, the statistics of every term seen.
    """

    classes: np.ndarray
    numeric: Any
    terms: dict[str, TermStats]

    def reindex(self, classes: np.ndarray) -> TextChunkStats:
        """The same statistics over ``classes`` (sorted, a superset of this object's)."""
        where = np.searchsorted(classes, self.classes)
        k = len(classes)
        return TextChunkStats(
            classes=classes,
            numeric=None if self.numeric is None else self.numeric.reindex(where, k),
            terms={c: t.reindex(where, k) for c, t in self.terms.items()},
        )

    def merge(self, other: TextChunkStats) -> TextChunkStats:
        """Statistics of both objects' rows (exact: counts add)."""
        classes = np.union1d(self.classes, other.classes)
        a, b = self.reindex(classes), other.reindex(classes)
        return TextChunkStats(
            classes=classes,
            numeric=None if a.numeric is None else a.numeric.merge(b.numeric),
            terms={c: a.terms[c].merge(b.terms[c]) for c in a.terms},
        )


def accumulate_text(
    estimator, settings: TextSettings, X: np.ndarray, words: dict, y, sample_weight=None
) -> TextChunkStats:
    """Fit statistics of one chunk; ``estimator`` is not changed.

    Parameters
    ----------
    estimator : BayesClassifier
        A count model (:func:`check_text_model`) with its hyperparameters set.
    settings : TextSettings
    X : ndarray of shape (n_rows, n_numeric)
        The numeric columns (may have none).
    words : dict of str to sequence of str
        Each text column's documents (``settings.columns``), ``n_rows`` each.
    y : array-like of shape (n_rows,)
        Class labels.
    sample_weight : array-like of shape (n_rows,), optional

    Raises
    ------
    ValueError
        From the estimator, for numeric values it refuses.
    """
    y = np.asarray(y)
    classes, y_idx = np.unique(y, return_inverse=True)
    numeric = _numeric_stats(estimator, X, y, sample_weight)
    options = settings.options()
    terms = {
        c: TermStats.from_counts(count_terms(words[c], options), y_idx, len(classes), sample_weight)
        for c in settings.columns
    }
    return TextChunkStats(classes=classes, numeric=numeric, terms=terms)


def _numeric_stats(estimator, X: np.ndarray, y: np.ndarray, sample_weight=None):
    """The estimator's statistics of the numeric columns of a chunk (None without any)."""
    if not X.shape[1]:
        return None
    params = estimator.get_params()
    if _text_term(estimator):
        # The table's own statistics; the word counts are added once the
        # vocabularies are chosen (finalize_text).
        params["vocabulary_sizes"] = None
    clone = type(estimator)(**params)
    chunk = [(X, y) if sample_weight is None else (X, y, sample_weight)]
    return clone.fit_chunks(chunk, finalize=False).stats_


def finalize_text(
    estimator,
    settings: TextSettings,
    stats: TextChunkStats,
    numeric_names: list[str],
    frequencies: dict | None = None,
) -> dict[str, list[str]]:
    """Choose the vocabularies and give ``estimator`` its statistics over them.

    Sets ``estimator.classes_``, ``n_features_in_`` and ``stats_`` (the
    caller calls ``finalize``, after relabelling or setting priors). With
    ``frequencies`` (a dict), fills it with the documents seen
    (``"n_documents"``) and, per text column, the document frequencies of
    its vocabulary's terms (what TF-IDF weighting needs).

    Returns
    -------
    dict of str to list of str
        Each text column's vocabulary, in column order.

    Raises
    ------
    NbcliError
        When a column keeps no term (only stop words, or pruned away).
    """
    kind = check_text_model(estimator)
    vocabularies: dict[str, list[str]] = {}
    table = stats.numeric is not None and not _text_term(estimator)
    blocks = [stats.numeric.feature_count] if table else []
    class_count = None if stats.numeric is None else stats.numeric.class_count
    for column in settings.columns:
        term_stats = stats.terms[column]
        if term_stats.terms.size == 0 and not settings.stop_words:
            raise NbcliError(
                f"text column {column!r} has no word in any row (every cell is empty or "
                "holds no token); leave it out of --text"
            )
        try:
            kept = term_stats.select(settings.min_df, settings.max_df, settings.max_features)
        except ValueError as exc:
            raise NbcliError(f"text column {column!r}: {exc}") from None
        counts = term_stats.class_counts(kept, kind)
        blocks.append(counts.feature_count)
        class_count = counts.class_count if class_count is None else class_count
        vocabularies[column] = term_stats.terms[kept].tolist()
        if frequencies is not None:
            frequencies[column] = term_stats.df[kept].tolist()
            frequencies["n_documents"] = int(term_stats.n_docs)
    names = list(numeric_names) + [
        feature_name(c, t) for c, terms in vocabularies.items() for t in terms
    ]
    clash = sorted(set(numeric_names) & set(names[len(numeric_names) :]))
    if clash:
        raise NbcliError(f"column {clash[0]!r} has the name of a word feature; rename the column")
    assert class_count is not None  # settings name at least one text column
    estimator.classes_ = stats.classes
    estimator.n_features_in_ = len(names)
    if _text_term(estimator):
        estimator.set_params(vocabulary_sizes=[len(v) for v in vocabularies.values()])
        estimator.stats_ = _mixed_stats(stats.numeric, class_count, np.hstack(blocks))
    else:
        estimator.stats_ = ClassCounts(class_count=class_count, feature_count=np.hstack(blocks))
    estimator.feature_names_in_ = np.asarray(names, dtype=object)
    return vocabularies


def _mixed_stats(table, class_count: np.ndarray, words: np.ndarray):
    """The mixed model's statistics: the table's (None: no table columns) with the
    per-class word counts after its multinomial sums (see :mod:`nbcli.models._text_term`)."""
    from nbcli.models import MixedNB
    from nbcli.models._table_stats import MixedStats
    from nbcli.models.mixed import resolve_column_types

    if table is None:
        k = class_count.shape[0]
        none = resolve_column_types(None, 0)
        table = MixedStats.from_data(np.zeros((0, 0)), np.zeros(0, np.intp), None, k, none)
        table.class_count = class_count.copy()
    assert isinstance(table, MixedStats) and MixedNB.text_term
    table.multinomial_count = np.hstack([table.multinomial_count, words])
    return table


def fit_text_chunks(
    estimator,
    settings: TextSettings,
    chunks,
    numeric_names,
    source: str | None = None,
    frequencies: dict | None = None,
) -> dict:
    """Stream ``(X, y, words)`` chunks into ``estimator``'s statistics (not finalized).

    The statistics equal :func:`accumulate_text` per chunk, merged, then
    :func:`finalize_text`, but the terms are tallied as they come
    (:class:`nbcli.text.TermTally`), so a chunk costs its own terms rather
    than the vocabulary so far; returns the vocabularies. Raises ValueError
    from the estimator for bad numeric values and "no training data" for
    no chunks, and NbcliError from :func:`finalize_text`, its message
    starting with ``source`` (the data file) when given.
    """
    total = tally_text_chunks(estimator, settings, chunks)
    try:
        return finalize_text(estimator, settings, total, numeric_names, frequencies)
    except NbcliError as exc:
        if source is None:
            raise
        raise NbcliError(f"{source}: {exc}") from None


def tally_text_chunks(estimator, settings: TextSettings, chunks) -> TextChunkStats:
    """The :class:`TextChunkStats` of a stream of ``(X, y, words)`` chunks.

    The first half of :func:`fit_text_chunks`, before any vocabulary is
    chosen: a part of a data set gives these statistics, the parts'
    statistics merge (:meth:`TextChunkStats.merge`), and
    :func:`finalize_text` chooses the vocabularies once from the total.
    ``estimator`` is not changed. Raises ValueError as :func:`fit_text_chunks`.
    """
    check_text_model(estimator)
    options = settings.options()
    tallies = {c: TermTally(options) for c in settings.columns}
    total: TextChunkStats | None = None
    for X, y, words in chunks:
        y = np.asarray(y)
        classes, y_idx = np.unique(y, return_inverse=True)
        part = TextChunkStats(classes, _numeric_stats(estimator, X, y), terms={})
        total = part if total is None else total.merge(part)
        for c in settings.columns:
            tallies[c].add(words[c], classes, y_idx)
    if total is None:
        raise ValueError("no training data: the chunks were empty")
    total.terms = {c: t.stats(total.classes) for c, t in tallies.items()}
    return total


@dataclass
class TextMatrix:
    """A chunk's features as the model sees them.

    Attributes
    ----------
    X : scipy.sparse.csr_array of float64, shape (n_rows, n_features)
        Numeric columns first, then each text column's term counts.
    unseen_tokens : int
        Word occurrences left out because training never kept the term.
    """

    X: object
    unseen_tokens: int


def text_matrix(
    X: np.ndarray, words: dict, settings: TextSettings, vocabularies: dict[str, Vocabulary]
) -> TextMatrix:
    """Counts of a chunk over the model's vocabularies, beside its numeric columns.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_numeric)
    words : dict of str to sequence of str
        Each text column's documents.
    settings : TextSettings
    vocabularies : dict of str to Vocabulary
        The model's (see :class:`TextModel`).

    Returns
    -------
    TextMatrix
    """
    import scipy.sparse as sp

    options = settings.options()
    parts = [sp.csr_array(X)] if X.shape[1] else []
    unseen = 0
    for j, column in enumerate(settings.columns):
        t = vocabularies[column].transform(words[column], options)
        # TF-IDF settings weight the counts (nbcli.text.weighting).
        parts.append(t.X if settings.weighting is None else settings.weighting.transform(t.X, j))
        unseen += t.unseen_tokens
    matrix = parts[0] if len(parts) == 1 else sp.hstack(parts, format="csr")
    return TextMatrix(X=sp.csr_array(matrix, dtype=np.float64), unseen_tokens=unseen)


class TextModel:
    """The text side of a loaded model file: settings, vocabularies and input columns.

    Parameters
    ----------
    mf : nbcli.io.modelfile.ModelFile
        With ``text`` settings and ``vocabularies`` (see :meth:`of`).
    """

    def __init__(self, mf):
        self.settings: TextSettings = mf.text
        self.vocabularies = {c: Vocabulary(mf.vocabularies[c]) for c in self.settings.columns}
        n_text = sum(len(v) for v in self.vocabularies.values())
        self.numeric: list[str] = list(mf.feature_names[: len(mf.feature_names) - n_text])

    @classmethod
    def of(cls, mf) -> TextModel | None:
        """The text side of ``mf``, or None for a model without text columns."""
        return None if getattr(mf, "text", None) is None else cls(mf)

    @property
    def text_columns(self) -> tuple[str, ...]:
        return tuple(self.settings.columns)

    @property
    def input_columns(self) -> list[str]:
        """The columns a data file must have: numeric ones, then the text ones."""
        return self.numeric + list(self.settings.columns)

    @property
    def kinds(self) -> dict[str, str]:
        """Reader kinds of the text columns (``{column: "words"}``)."""
        from nbcli.io.plan import WORDS

        return {c: WORDS for c in self.settings.columns}

    def matrix(self, X: np.ndarray, words: dict) -> TextMatrix:
        """:func:`text_matrix` over this model's vocabularies."""
        return text_matrix(X, words, self.settings, self.vocabularies)


def indicative_words(mf, n: int = 10) -> dict[str, list[tuple[str, str, float]]]:
    """The words that most favour each class: largest ``log p(w | k) - max_{j != k} log p(w | j)``.

    Parameters
    ----------
    mf : nbcli.io.modelfile.ModelFile
        A model with text columns and ``feature_log_prob_`` (multinomial, Bernoulli).
    n : int
        Words per class.

    Returns
    -------
    dict of str to list of (column, word, log ratio)
        Per class label (as text), best first; the ratio in nats.
    """
    text = TextModel(mf)
    logp = np.asarray(mf.model.feature_log_prob_)
    start = len(text.numeric)
    words = [(c, t) for c in text.settings.columns for t in text.vocabularies[c].terms.tolist()]
    block = logp[:, start:]
    out = {}
    for k, label in enumerate(mf.model.classes_.tolist()):
        others = np.delete(block, k, axis=0)
        ratio = block[k] - (others.max(axis=0) if others.size else 0.0)
        best = np.argsort(-ratio, kind="stable")[:n]
        out[str(label)] = [(words[j][0], words[j][1], float(ratio[j])) for j in best]
    return out


def check_weighting(estimator, settings: TextSettings | None, path: str) -> None:
    """Refuse TF-IDF weighting where it cannot be fitted: a model of word
    presence (Bernoulli), or data read from stdin (a weighted fit reads its
    data twice, see :mod:`nbcli.text.weighting`)."""
    if settings is None or settings.weighting is None:
        return
    if type(estimator).text_statistic == "bernoulli":
        raise NbcliError(
            "--tfidf weights word counts; the bernoulli model takes word presence: use "
            "--model multinomial, complement or mixed"
        )
    if path == "-":
        raise NbcliError(
            "--tfidf reads the training data twice (the row norms need the idf, known only "
            "after every row); give a file rather than stdin"
        )


def learnt_frequencies(settings: TextSettings, frequencies: dict) -> TextSettings:
    """``settings`` with the document frequencies of each column's vocabulary
    that a fit found (see :func:`finalize_text`), and, for a weighted fit,
    its weighting learnt from them (:func:`learnt_weighting`)."""
    if settings.weighting is not None:
        settings = learnt_weighting(settings, frequencies)
    return settings.learnt([frequencies[c] for c in settings.columns])


def learnt_weighting(settings: TextSettings, frequencies: dict) -> TextSettings:
    """``settings`` with the document frequencies a fit found (see :func:`finalize_text`)."""
    from dataclasses import replace

    assert settings.weighting is not None
    dfs = [frequencies[c] for c in settings.columns]
    weighting = settings.weighting.learnt(frequencies["n_documents"], dfs)
    return replace(settings, weighting=weighting)


def refit_weighted_words(estimator, settings: TextSettings, vocabularies: dict, chunks) -> None:
    """Replace the word counts in ``estimator.stats_`` by the per-class sums of
    the TF-IDF weighted rows of ``chunks`` (``(X, y, words)``, the training
    rows again): the second pass of a weighted fit. Classes are those the
    first pass set (``estimator.classes_``, labels as read)."""
    set_word_sums(estimator, weighted_word_sums(estimator.classes_, settings, vocabularies, chunks))


def set_word_sums(estimator, sums: np.ndarray) -> None:
    """Put ``sums`` (n_classes, n_words) in place of the word counts of ``estimator.stats_``."""
    st = estimator.stats_
    n_words = sums.shape[1]
    if _text_term(estimator):
        st.multinomial_count[:, st.multinomial_count.shape[1] - n_words :] = sums
    else:
        st.feature_count[:, st.feature_count.shape[1] - n_words :] = sums


def weighted_word_sums(classes, settings: TextSettings, vocabularies: dict, chunks) -> np.ndarray:
    """Per class (``classes``, sorted labels as read), the sums of the TF-IDF
    weighted rows of ``chunks`` (``(X, y, words)``) over ``vocabularies``,
    shape (n_classes, n_words): what a part adds in the second pass."""
    vocab = {c: Vocabulary(v) for c, v in vocabularies.items()}
    k = len(classes)
    n_words = sum(len(v) for v in vocabularies.values())
    sums = np.zeros((k, n_words))
    for _, y, words in chunks:
        y_idx = np.searchsorted(classes, np.asarray(y))
        m: Any = text_matrix(np.zeros((len(y_idx), 0)), words, settings, vocab).X
        onehot = np.zeros((k, len(y_idx)))
        onehot[y_idx, np.arange(len(y_idx))] = 1.0
        sums += np.asarray((m.T @ onehot.T).T)
    return sums
