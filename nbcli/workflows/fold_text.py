"""Cross-validation of count models with text columns: per-fold vocabularies from one pass.

A fit on text chooses its vocabulary (``min_df``, ``max_df``,
``max_features``) from the document frequencies of the rows it is fitted
on, so the model of fold ``f`` must choose its own, from the other folds'
rows. The data are read once:

1. every document is tokenised as it comes and its term counts kept, one
   sparse row per document over every term seen in the file (SciPy CSR;
   memory grows with the non-zeros), numeric columns beside them;
2. once the folds are planned, the per-fold, per-class term counts and
   document frequencies are products of a sparse fold-and-class indicator
   with those rows (sums of integers: exact);
3. the model of fold ``f`` takes the totals minus fold ``f``'s statistics,
   restricted to the terms the other folds hold, and chooses its vocabulary
   from them with the very code ``nbcli fit`` uses
   (:func:`nbcli.workflows.text_features.finalize_text`); fold ``f``'s rows
   are scored on that vocabulary's columns, other words left out, as
   ``nbcli predict`` leaves out words training never kept.

So each fold's posteriors equal ``nbcli fit`` on the other folds then
``nbcli predict`` on the fold, and the model of all rows (``nbcli tune -o``)
is the model ``nbcli fit`` writes. A search over ``alpha`` re-finalises the
same per-fold statistics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from nbcli.errors import NbcliError
from nbcli.workflows.engine import Reporter
from nbcli.workflows.fold_text_statistics import TermRows, TextFoldStatistics

if TYPE_CHECKING:
    from nbcli.io.request import DataRequest
    from nbcli.workflows.settings import FoldSettings

__all__ = ["TermRows", "TextFoldStatistics", "collect_text_folds"]


def collect_text_folds(
    estimator,
    request: DataRequest,
    folds: FoldSettings,
    *,
    priors_by_label: dict | None = None,
    reporter: Reporter | None = None,
    fingerprint: bool = True,
) -> TextFoldStatistics:
    """:func:`nbcli.workflows.folds.collect_fold_statistics` for a file with text columns.

    The parameters are that function's; the request's text block holds the
    columns and their tokenisation (as ``nbcli fit --text`` takes them). Reads the file once, whatever its
    size: the rows' term counts are kept, sparse.

    Raises
    ------
    NbcliError
        As ``nbcli fit --text`` does for the model type and the columns, and
        as :func:`~nbcli.workflows.folds.collect_fold_statistics` for the folds.
    """
    from nbcli.io.fingerprint import TrainingFingerprint
    from nbcli.workflows.folds import (
        FoldRows,
        check_folds,
        fold_layout,
        fold_stream,
        refuse_empty_folds,
    )
    from nbcli.workflows.tables import (
        RowCounts,
        apply_column_types,
        check_column_types,
        choose_missing,
    )
    from nbcli.workflows.text_features import check_text_model, fingerprint_columns
    from nbcli.workflows.train import TableFacts, data_error

    if getattr(type(estimator), "text_term", None):
        # Its text terms sit beside table columns the fold statistics here do not hold.
        raise NbcliError(
            f"cv and tune do not take text columns under the {estimator.name} model yet; "
            "use --model multinomial, complement or bernoulli for the text, or nbcli fit"
        )
    reporter = reporter or Reporter()
    kind = check_text_model(estimator)
    data, text, target = request.path, request.text, request.target
    fold_column = folds.fold_column
    assert text is not None
    unseen, na_values = request.unseen or "error", request.na_values
    if target is not None and target in text.columns:
        raise NbcliError(
            f"{data}: --text {target}: the column is the target; a text column must be a feature"
        )
    keep = folds.keep
    clash = sorted(set(keep) & set(text.columns))
    if clash:
        raise NbcliError(f"{data}: --text {clash[0]}: the column also holds the folds or groups")
    column_types = dict(request.column_types)
    missing = choose_missing(estimator, request.missing)
    check_column_types(estimator, column_types)
    stream = fold_stream(estimator, request.reading(missing=missing), folds)
    outside = [c for c in text.columns if c not in stream.word_columns]
    if outside:
        raise NbcliError(
            f"{data}: --text {outside[0]}: the column is the target or left out of the "
            "features (--features, --drop); a text column must be a feature"
        )
    apply_column_types(estimator, stream.plan, column_types, missing, unseen)
    names = list(stream.feature_names)
    estimator.n_features_in_ = len(names)
    row_counts = RowCounts()
    fp = TrainingFingerprint(legacy=False) if fingerprint else None
    options = text.options()
    term_rows = {c: TermRows(options) for c in text.columns}
    ys, kept, numeric = [], [], []
    start = 0
    for ds in reporter.progress(stream, f"reading {data}"):
        if fold_column is not None:
            refuse_empty_folds(ds.kept[fold_column], fold_column, data, row_counts.read)
        before = row_counts.read
        ds = row_counts.filter(ds, missing)
        n = ds.X.shape[0]
        if n == 0:
            continue
        # Rows the filter dropped (no label) leave their documents too.
        at = row_counts.kept_rows - before
        words = {c: w if len(w) == n else np.asarray(w)[at] for c, w in ds.words.items()}
        if fp is not None:
            fp.update(fingerprint_columns(ds.X, words, text.columns), ds.y)
        ys.append(np.asarray(ds.y))
        kept.append({c: np.asarray(ds.kept[c]) for c in keep})
        if names:
            try:
                numeric.append(estimator.validated_rows(ds.X))
            except ValueError as exc:
                raise data_error(data, exc, names, start, rows=row_counts.kept_rows) from None
        for c in text.columns:
            term_rows[c].add(words[c])
        start += n
    common, _, _ = fold_layout(
        estimator,
        stream,
        FoldRows(data, ys, kept, names, fp, row_counts.warnings(data, missing)),
        folds,
        priors_by_label,
    )
    n_rows = common["codes"].size
    X_numeric = np.vstack(numeric) if numeric else np.zeros((n_rows, 0))
    fs = TextFoldStatistics(
        **common,
        text=text,
        kind=kind,
        numeric=X_numeric,
        terms={c: t.finish() for c, t in term_rows.items()},
        tables=TableFacts(
            plan=stream.plan,
            categories=stream.categories,
            missing=missing,
            unseen=unseen,
            na_values=na_values,
            row_counts=row_counts,
        ),
    )
    if names:
        _numeric_folds(fs)
    check_folds(fs, estimator.min_samples_per_class)
    # A vocabulary that leaves no term is an error of the data and options,
    # whatever the hyperparameters: found here, not once per combination.
    for r in range(fs.n_repeats):
        for f in range(fs.n_folds):
            fs.fold_text(r, f)
    return fs


def _numeric_folds(fs: TextFoldStatistics) -> None:
    """Each fold's statistics of the numeric columns, in ``fs.stats``."""
    from nbcli.workflows.train import data_error

    k = fs.classes.size
    for r in range(fs.n_repeats):
        for f in range(fs.n_folds):
            rows = np.flatnonzero(fs.folds[r] == f)
            if not rows.size:
                continue
            try:
                with np.errstate(over="ignore", invalid="ignore"):
                    fs.stats[r][f] = fs.estimator.accumulate(
                        fs.numeric[rows], fs.codes[rows], None, k
                    )
            except ValueError as exc:
                raise data_error(fs.path, exc, fs.feature_names, 0, rows=rows) from None
