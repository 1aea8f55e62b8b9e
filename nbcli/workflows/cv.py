"""Cross-validation from per-fold sufficient statistics: ``nbcli cv``.

A model's statistics are sums over rows, so k-fold cross-validation needs no
refit: one pass gathers the statistics of every fold (``accumulate`` on the
fold's rows of each chunk, merged over chunks), the model of fold ``f`` is
the merge of all other folds' statistics turned into a model
(``from_stats``), and a last pass scores each fold's rows with its model.
:class:`FoldStatistics` holds the statistics, so that ``nbcli tune``
(:mod:`nbcli.workflows.tune`, on :mod:`nbcli.workflows.folds`) scores any number of hyperparameter values on
them (``with_params``-style re-finalisation, no re-reading of statistics).

Where the feature values fit in ``memory_budget`` they are parsed once and
kept; otherwise the file is read again for the statistics and once more for
the scores (the first pass reads the labels the folds are planned from; with
a fold column it gathers the statistics too, so two passes do). The report
says how many passes it took.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from nbcli.workflows.engine import Reporter
from nbcli.workflows.folds import MEMORY_BUDGET, FoldStatistics, collect_fold_statistics
from nbcli.workflows.inputs import ReadOptions, inputs_of

if TYPE_CHECKING:
    from nbcli.models import BayesClassifier
    from nbcli.reports.cross_validation import CrossValidationReport

__all__ = ["MEMORY_BUDGET", "FoldStatistics", "collect_fold_statistics", "cross_validate"]


def cross_validate(
    estimator: BayesClassifier,
    data: str,
    *,
    read: ReadOptions | None = None,
    features=None,
    drop=None,
    n_folds: int = 10,
    fold_column: str | None = None,
    group_column: str | None = None,
    n_repeats: int = 1,
    seed: int = 0,
    priors_by_label: dict | None = None,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    bins: int = 10,
    oof_output: str | None = None,
    digits: int | None = None,
    memory_budget: int = MEMORY_BUDGET,
    tables: dict | None = None,
    text=None,
    hash_inputs: bool = True,
    reporter: Reporter | None = None,
) -> CrossValidationReport:
    """k-fold cross-validation of ``estimator`` on ``data`` without refitting.

    Parameters are those of :func:`collect_fold_statistics`, and
    ``bootstrap``, ``confidence``, ``bins`` as for
    :func:`nbcli.workflows.evaluate.evaluate` (the same ``seed`` drives the
    fold plan and the bootstrap); ``oof_output`` writes the out-of-fold
    predictions as ``nbcli predict --proba`` does (with ``fold`` and, with
    repeats, ``repeat`` columns first), ``digits`` rounds them;
    ``tables`` holds the ``missing``, ``unseen``, ``na_values`` and
    ``column_types`` keywords of :func:`collect_fold_statistics` (read as
    ``nbcli fit`` reads them); ``text``, a
    :class:`~nbcli.text.settings.TextSettings`, makes text columns features
    (count models; each fold model chooses its vocabulary from the other
    folds' rows, see :mod:`nbcli.workflows.fold_text`); ``hash_inputs``
    False leaves the SHA-256 of ``data`` out of the report's ``inputs`` (it
    reads the file once more).

    Returns
    -------
    nbcli.reports.cross_validation.CrossValidationReport
    """
    from nbcli.reports.cross_validation import build_cross_validation
    from nbcli.workflows.train import _jsonable

    fs = collect_fold_statistics(
        estimator,
        data,
        read=read,
        features=features,
        drop=drop,
        n_folds=n_folds,
        fold_column=fold_column,
        group_column=group_column,
        n_repeats=n_repeats,
        seed=seed,
        priors_by_label=priors_by_label,
        memory_budget=memory_budget,
        reporter=reporter,
        # No model file is written: no fingerprint of the rows.
        fingerprint=False,
        text=text,
        **(tables or {}),
    )
    (log_proba,) = fs.out_of_fold([{}])
    if oof_output is not None:
        write_out_of_fold(fs, log_proba, oof_output, digits=digits)
    return build_cross_validation(
        fs.classes,
        np.tile(fs.labels, fs.n_repeats),
        np.exp(log_proba, out=log_proba),
        fs.folds,
        fold_values=fs.fold_values,
        n_train=fs.train_counts(),
        model_type=estimator.name,
        hyperparameters={k: _jsonable(v) for k, v in estimator.get_params().items()},
        plan=fs.plan,
        n_resamples=bootstrap,
        confidence=confidence,
        seed=seed,
        bins=bins,
        inputs=inputs_of(data=data, sha256=hash_inputs),
        settings={
            "memory_budget": int(memory_budget),
            **({} if text is None else {"text": text.to_metadata()}),
        },
        warnings=[*fs.warnings, *fs.model_warnings()],
    )


def write_out_of_fold(fs: FoldStatistics, log_proba: np.ndarray, path: str, *, digits=None):
    """Write out-of-fold predictions to ``path`` (CSV, or Parquet for ``.parquet``;
    ``-`` for stdout), one row per data row and repeat."""
    import sys

    from nbcli.io.predictions import PredictionWriter

    n = fs.codes.size
    writer = PredictionWriter.for_path(path, fs.classes, proba=True, digits=digits)

    def write(f):
        for r in range(fs.n_repeats):
            kept = {"fold": fs.fold_values[fs.folds[r]]}
            if fs.n_repeats > 1:
                kept = {"repeat": np.full(n, r), **kept}
            writer.write(f, kept, log_proba[r * n : (r + 1) * n])
        writer.close(f)

    if path == "-":
        write(sys.stdout)
        sys.stdout.flush()
        return
    with writer.opened(path) as f:
        write(f)
