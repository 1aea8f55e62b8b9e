"""``cv`` and ``tune`` over a data set in parts, on an engine: per-fold sums that merge.

A folder, a glob or several ``--data`` files are one data set, its rows
those of the parts joined in order. Three passes over the parts, each a
task per part on the engine (this process, or Dask workers):

1. **rows**: each part's labels (and fold or group column), the categories
   it meets and its column plan. At the client the labels of all rows, in
   order, are typed and the folds planned by the very code a one-file run
   uses (:func:`nbcli.workflows.folds.fold_layout`: stratified under the
   seed, grouped, or from ``--fold-column``). The plan depends on the rows
   and their order only, never on how they are cut into parts or chunks, and
   it is the one-file plan: part-wise and Dask cross-validation give the
   one-file folds, hence its per-fold figures.
2. **statistics**: each part, read with the categories of all parts known
   (so its category codes are those of a one-file read), takes the slice of
   the fold plan for its rows (the plan travels once, one byte or two per
   row and repeat) and gives every fold's sufficient statistics of its rows,
   with text columns their term statistics; these merge exactly as a
   part-wise fit's do, and the fold models are built from the totals at the
   client (:class:`~nbcli.workflows.fold_statistics.FoldStatistics`).
3. **scores**: the fold models (every hyperparameter set of ``tune``) go to
   the parts, each part scores its rows of fold ``f`` with fold ``f``'s
   model, and the out-of-fold posteriors come back in row order.

The client holds the labels and the out-of-fold posteriors of every row,
as a one-file run does (the report's per-row metrics need them); the
feature values stay in the parts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

from nbcli.errors import NbcliError
from nbcli.workflows.fold_statistics import FoldStatistics, TextFoldStatistics
from nbcli.workflows.parts import PartFit, PartTraining

if TYPE_CHECKING:
    from nbcli.io.request import DataRequest
    from nbcli.workflows.engine import Engine
    from nbcli.workflows.settings import FoldSettings

__all__ = ["PartFoldStatistics", "collect_part_fold_statistics"]


@dataclass
class _PartRows:
    """Pass 1 of one or more consecutive parts: checks and categories (``fit``,
    without statistics), the labels and kept columns per chunk, rows per part."""

    fit: PartFit
    ys: list
    kept: list
    counts: list

    def merge(self, other: _PartRows) -> _PartRows:
        return _PartRows(
            self.fit.merge(other.fit),
            self.ys + other.ys,
            self.kept + other.kept,
            self.counts + other.counts,
        )


def _open(part: str, spec: PartTraining):
    """The stream of ``part``, its estimator (with the mixed model's column types
    from the part's plan, as a one-file read sets them) and the text columns."""
    from nbcli.workflows.blocks import check_text_columns
    from nbcli.workflows.tables import apply_column_types

    stream = spec.stream(part)
    check_text_columns(part, spec.request.text_columns, stream)
    est = type(spec.estimator)(**spec.estimator.get_params())
    apply_column_types(est, stream.plan, spec.column_types, spec.missing, spec.unseen)
    return stream, est


def _rows(stream, spec: PartTraining, counts):
    """The chunks of ``stream`` without the rows a fit skips, each with its documents."""
    for ds in stream:
        ds = counts.filter(ds, spec.missing)
        if ds.X.shape[0]:
            yield ds


@dataclass(frozen=True)
class _RowsPass:
    spec: PartTraining
    fold_column: str | None


def rows_part(index: int, part: str, shared: _RowsPass) -> _PartRows:
    """Pass 1 of one part: labels, kept (fold, group) columns, categories, plan."""
    from dataclasses import replace

    from nbcli.workflows.folds import refuse_empty_folds
    from nbcli.workflows.tables import RowCounts

    spec, fold_column = shared.spec, shared.fold_column
    stream, est = _open(part, spec)
    keep = spec.request.keep or ()
    counts = RowCounts()
    ys, kept, chunks = [], [], 0
    for ds in stream:
        chunks += 1
        if fold_column is not None:
            refuse_empty_folds(ds.kept[fold_column], fold_column, part, counts.read)
        ds = counts.filter(ds, spec.missing)
        if ds.X.shape[0]:
            ys.append(np.asarray(ds.y))
            kept.append({c: np.asarray(ds.kept[c]) for c in keep})
    types = est.get_params().get("column_types")
    fit = PartFit(
        part,
        None,
        [],
        stream.target,
        tuple(stream.feature_names),
        [stream.note] if stream.note else [],
        chunks,
        replace(stream.plan, profiles={}),
        counts.used,
        counts.warnings(part, spec.missing),
        {c: list(v) for c, v in stream.categories.items()},
        None if types is None else tuple(types),
    )
    return _PartRows(fit, ys, kept, [counts.used])


@dataclass(frozen=True)
class _FoldPass:
    """What every part's statistics and scoring tasks share."""

    spec: PartTraining
    #: Class index of each label as read.
    code_of: dict
    n_classes: int
    #: Fold of every row in every repeat, shape (n_repeats, n_rows).
    folds: np.ndarray
    #: First row of each part.
    offsets: tuple
    n_folds: int


@dataclass
class _FoldSums:
    """Pass 2 of consecutive parts: ``stats[r][f]`` (table columns) and
    ``terms[r][f]`` (``{column: TermStats}``, with text), and the fingerprint."""

    stats: list
    terms: list | None
    fingerprint: Any

    def merge(self, other: _FoldSums) -> _FoldSums:
        def both(a, b):
            return a if b is None else b if a is None else a.merge(b)

        def text(a, b):
            if a is None or b is None:
                return a if b is None else b
            return {c: a[c].merge(b[c]) for c in a}

        stats = [[both(a, b) for a, b in zip(x, y)] for x, y in zip(self.stats, other.stats)]
        terms = None
        if self.terms is not None and other.terms is not None:
            terms = [[text(a, b) for a, b in zip(x, y)] for x, y in zip(self.terms, other.terms)]
        return _FoldSums(stats, terms, self.fingerprint.combine(other.fingerprint))


def _fold_chunks(index: int, part: str, shared: _FoldPass):
    """Yield ``(ds, X, codes, folds)`` per chunk of ``part``: its rows, validated
    table columns, class codes and the plan's slice ``(n_repeats, n_rows)``."""
    from nbcli.workflows.data_errors import data_error
    from nbcli.workflows.tables import RowCounts

    spec = shared.spec
    stream, est = _open(part, spec)
    counts = RowCounts()
    start = stop = shared.offsets[index]
    names = list(stream.feature_names)
    # Models that lay out their columns by type (mixed) read the width from here.
    est.n_features_in_ = len(names)
    for ds in _rows(stream, spec, counts):
        n = ds.X.shape[0]
        start, stop = stop, stop + n
        if stop > shared.folds.shape[1] or (
            index + 1 < len(shared.offsets) and stop > shared.offsets[index + 1]
        ):
            raise NbcliError(f"{part}: the part changed while it was read; run again")
        code_of = shared.code_of
        labels = np.asarray(ds.y).tolist()
        if labels and not isinstance(labels[0], str) and isinstance(next(iter(code_of)), str):
            # Parts of different formats joined their labels as text (aligned_labels).
            labels = [str(v) for v in labels]
        codes = np.fromiter((code_of[v] for v in labels), dtype=np.intp, count=n)
        X = ds.X
        if names and X.shape[1]:
            try:
                X = est.validated_rows(ds.X)
            except ValueError as exc:
                raise data_error(part, exc, names, 0, rows=counts.kept_rows) from None
        yield ds, X, codes, shared.folds[:, start:stop], SimpleNamespace(est=est, names=names)


def _words(ds, column: str, at: np.ndarray):
    return np.asarray(ds.words[column], dtype=object)[at]


def fold_stats_part(index: int, part: str, shared: _FoldPass) -> _FoldSums:
    """Pass 2 of one part: every fold's statistics of its rows (see the module notes)."""
    from nbcli.io.fingerprint import RowHashFingerprint
    from nbcli.workflows.blocks import fingerprint_columns
    from nbcli.workflows.data_errors import data_error

    spec, k = shared.spec, shared.n_classes
    text = spec.text
    n_repeats, n_folds = shared.folds.shape[0], shared.n_folds
    stats: list = [[None] * n_folds for _ in range(n_repeats)]
    terms: list | None = None if text is None else [[None] * n_folds for _ in range(n_repeats)]
    fp = RowHashFingerprint()
    words_of = spec.request.text_columns
    for ds, X, codes, folds, read in _fold_chunks(index, part, shared):
        fp.update(fingerprint_columns(ds.X, ds.words, words_of), ds.y)
        for r in range(n_repeats):
            for f in np.unique(folds[r]).tolist():
                at = np.flatnonzero(folds[r] == f)
                if X.shape[1]:
                    try:
                        with np.errstate(over="ignore", invalid="ignore"):
                            s = read.est.accumulate(X[at], codes[at], None, k)
                    except ValueError as exc:
                        raise data_error(part, exc, read.names, 0) from None
                    old = stats[r][f]
                    stats[r][f] = s if old is None else old.merge(s)
                if terms is not None:
                    from nbcli.text.tokens import count_terms
                    from nbcli.text.vocabulary import TermStats

                    options = text.options()
                    got = {
                        c: TermStats.from_counts(
                            count_terms(_words(ds, c, at), options), codes[at], k
                        )
                        for c in text.columns
                    }
                    old = terms[r][f]
                    terms[r][f] = got if old is None else {c: old[c].merge(got[c]) for c in got}
    return _FoldSums(stats, terms, fp)


@dataclass(frozen=True)
class _ScorePass:
    fold: _FoldPass
    #: Per hyperparameter set, ``models[r][f]`` (None: a set whose models failed).
    models: list
    #: With text, each fold model's vocabularies, ``[r][f]``.
    vocabularies: list | None


@dataclass
class _Scores:
    """Out-of-fold log posteriors of consecutive parts, per hyperparameter set,
    shape (n_repeats, n_rows, n_classes)."""

    log_proba: list

    def merge(self, other: _Scores) -> _Scores:
        return _Scores(
            [np.concatenate([a, b], axis=1) for a, b in zip(self.log_proba, other.log_proba)]
        )


def score_fold_part(index: int, part: str, shared: _ScorePass) -> _Scores:
    """Pass 3 of one part: its rows of fold ``f`` scored by fold ``f``'s model."""
    from nbcli.workflows.blocks import model_rows

    fold = shared.fold
    n_repeats, k = fold.folds.shape[0], fold.n_classes
    text = fold.spec.text
    pieces: list[list] = [[] for _ in shared.models]
    for ds, X, _codes, folds, _read in _fold_chunks(index, part, fold):
        n = X.shape[0]
        out = [np.full((n_repeats, n, k), np.nan) for _ in shared.models]
        for r in range(n_repeats):
            for f in np.unique(folds[r]).tolist():
                at = np.flatnonzero(folds[r] == f)
                rows = X[at]
                if text is not None and shared.vocabularies is not None:
                    words = {c: _words(ds, c, at) for c in text.columns}
                    seen = SimpleNamespace(X=rows, words=words, y=None)
                    rows = model_rows(seen, text, shared.vocabularies[r][f]).X
                for p, models in enumerate(shared.models):
                    if models is not None:
                        with np.errstate(over="ignore", invalid="ignore"):
                            out[p][r, at] = models[r][f].predict_log_proba(rows)
        for p in range(len(out)):
            pieces[p].append(out[p])
    return _Scores(
        [np.concatenate(p, axis=1) if p else np.zeros((n_repeats, 0, k)) for p in pieces]
    )


@dataclass
class PartFoldStatistics(FoldStatistics):
    """:class:`FoldStatistics` of a data set in parts: the statistics gathered on
    the engine (pass 2), the out-of-fold rows scored there (pass 3)."""

    _engine: Any = None
    _parts: list = field(default_factory=list)
    _pass: Any = None

    def hold_by_fold(self) -> None:
        """The rows stay in the parts."""

    def accumulate_folds(self) -> None:
        """Gathered on the engine already."""

    def _vocabularies(self) -> list | None:
        return None

    def _out_of_fold(self, param_sets: list[dict], failed: dict | None) -> list[np.ndarray]:
        n, k = self.codes.size, self.classes.size
        models = self.fold_models(param_sets, failed)
        if all(m is None for m in models):
            return [np.full((self.n_repeats * n, k), np.nan) for _ in models]
        scores: _Scores = self._engine.sum_over_parts(
            list(self._parts),
            score_fold_part,
            _ScorePass(self._pass, models, self._vocabularies()),
        )
        self.plan["passes"] += 1
        return [p.reshape(self.n_repeats * n, k) for p in scores.log_proba]


@dataclass
class PartTextFoldStatistics(PartFoldStatistics, TextFoldStatistics):
    """:class:`TextFoldStatistics` of a data set in parts: each fold's term
    statistics merged over the parts; each fold model chooses its vocabulary
    from the other folds', by the one-file code."""

    _fold_terms: list = field(default_factory=list)

    def _term_stats(self, repeat: int, leave_out: int | None, column: str):
        total = None
        for f, terms in enumerate(self._fold_terms[repeat]):
            if f == leave_out or terms is None:
                continue
            total = terms[column] if total is None else total.merge(terms[column])
        if total is None:
            raise NbcliError(f"{self.path}: no rows outside fold {self._name(leave_out or 0)}")
        return total, np.arange(total.terms.size)

    def with_text(self, settings):
        """Refused: the parts' documents are not held here, only their term sums."""
        raise NbcliError(
            "grids of --ngram, --min-df or --max-df are searched on the counts of one file; "
            "join the parts into one file, or give one value of each"
        )

    def _vocabularies(self) -> list | None:
        return [
            [self.fold_text(r, f).vocabularies for f in range(self.n_folds)]
            for r in range(self.n_repeats)
        ]


def collect_part_fold_statistics(
    estimator, request: DataRequest, folds: FoldSettings, engine: Engine, priors_by_label=None
) -> FoldStatistics:
    """:func:`nbcli.workflows.folds.collect_fold_statistics` over the parts of
    ``request`` on ``engine`` (see the module notes).

    Raises
    ------
    NbcliError
        As a one-file run (naming the part and its row), for parts whose
        columns differ, or stdin on an engine other than the local one.
    """
    from nbcli.io.fingerprint import ROWHASH_ALGORITHM
    from nbcli.workflows.blocks import check_blocks
    from nbcli.workflows.folds import FoldRows, _check_text_folds, check_folds, fold_layout
    from nbcli.workflows.parts import _Plan, at_client, check_parts, expand_parts, plan_part
    from nbcli.workflows.tables import (
        RowCounts,
        apply_column_types,
        check_column_types,
        fold_missing,
        missing_remedies,
    )
    from nbcli.workflows.train import TableFacts

    folds.check()
    if request.na_labels:
        raise NbcliError(
            "--na-labels is not read part by part yet (a folder, a glob, several --data "
            "files or --engine dask); blank those labels, or join the parts into one file"
        )
    text = request.text
    if text is not None and text.weighting is not None:
        raise NbcliError(
            "--tfidf is not cross-validated part by part yet (a folder, a glob, several "
            "--data files or --engine dask); join the parts into one file"
        )
    kind = "" if text is None else _check_text_folds(estimator, request, folds)
    check_blocks(estimator, request)
    data = request.path
    parts = expand_parts(request.data)
    check_parts(parts, engine)
    parts = [at_client(p, engine) for p in parts]
    missing = fold_missing(estimator, request.missing)
    unseen = request.unseen or "error"
    check_column_types(estimator, dict(request.column_types))
    read = request.reading(
        missing=missing,
        missing_remedies=missing_remedies(estimator),
        keep=folds.keep or None,
        keep_for=folds.keep_for,
    )
    spec = PartTraining(type(estimator)(**estimator.get_params()), read)
    try:
        if "categorical" in type(estimator).feature_kinds and text is None:
            first: _Plan = engine.sum_over_parts(list(parts), plan_part, spec)
            spec = spec.deciding(first.kinds, first.column_types)
        rows: _PartRows = engine.sum_over_parts(
            list(parts), rows_part, _RowsPass(spec, folds.fold_column)
        )
    except ValueError as exc:
        raise NbcliError(f"{data}: {exc}") from None
    total = rows.fit
    if not rows.ys:
        raise NbcliError(f"{data}: no data rows in any of its {len(parts)} parts")
    apply_column_types(estimator, total.plan, spec.column_types, missing, unseen)
    names = list(total.feature_names)
    estimator.n_features_in_ = len(names)
    stream = SimpleNamespace(target=total.target, plan=total.plan)
    common, raw_classes, position = fold_layout(
        estimator,
        stream,
        FoldRows(data, rows.ys, rows.kept, names, None, total.warnings),
        folds,
        priors_by_label,
    )
    code_of = dict(zip(raw_classes.tolist(), position.tolist()))
    plan = common["folds"]
    small = np.min_scalar_type(max(0, int(common["fold_values"].size) - 1))
    offsets = tuple(int(v) for v in np.concatenate(([0], np.cumsum(rows.counts)[:-1])))
    shared = _FoldPass(
        spec.knowing(dict(total.categories)),
        code_of,
        int(common["classes"].size),
        plan.astype(small),
        offsets,
        int(common["fold_values"].size),
    )
    sums: _FoldSums = engine.sum_over_parts(list(parts), fold_stats_part, shared)
    common["stats"] = sums.stats
    common["training"].update(
        {"fingerprint": {"algorithm": ROWHASH_ALGORITHM, "value": sums.fingerprint.value}}
    )
    # The reads so far: the column plan's first rows (categories), the rows, the statistics.
    common["plan"]["passes"] = 2 + ("categorical" in type(estimator).feature_kinds and text is None)
    extra: dict[str, Any] = {"_engine": engine, "_parts": parts, "_pass": shared}
    fs: FoldStatistics
    if text is not None:
        used = RowCounts()
        used.used = used.read = int(common["codes"].size)
        fs = PartTextFoldStatistics(
            **common,
            **extra,
            text=text,
            kind=kind,
            numeric=np.zeros((0, len(names))),
            tables=TableFacts.of(total.plan, total.categories, request, (missing, unseen), used),
            _fold_terms=sums.terms or [],
        )
    else:
        tables = TableFacts.of(total.plan, total.categories, request, (missing, unseen))
        fs = PartFoldStatistics(**common, **extra, tables=tables)
        if request.na_labels:
            fs.training["na_labels"] = [str(v) for v in request.na_labels]
    check_folds(fs, estimator.min_samples_per_class)
    # No file row: the rows are the parts' (in the order of the parts).
    fs.carried = {c: np.concatenate([k[c] for k in rows.kept]) for c in folds.carry}
    fs.checked(total.categories)
    return fs
