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

from nbcli.errors import NbcliError
from nbcli.workflows.engine import Engine, Reporter
from nbcli.workflows.folds import FoldStatistics, collect_fold_statistics
from nbcli.workflows.inputs import request_inputs
from nbcli.workflows.settings import MEMORY_BUDGET, FoldSettings, ScoreSettings

if TYPE_CHECKING:
    from nbcli.io.request import DataRequest
    from nbcli.models import BayesClassifier
    from nbcli.reports.cross_validation import CrossValidationReport

__all__ = ["MEMORY_BUDGET", "FoldStatistics", "collect_fold_statistics", "cross_validate"]


def cross_validate(
    estimator: BayesClassifier,
    request: DataRequest,
    folds: FoldSettings | None = None,
    scoring: ScoreSettings | None = None,
    *,
    priors_by_label: dict | None = None,
    oof_output: str | None = None,
    reporter: Reporter | None = None,
    engine: Engine | None = None,
) -> CrossValidationReport:
    """k-fold cross-validation of ``estimator`` on the data of ``request`` without refitting.

    Parameters
    ----------
    estimator : BayesClassifier
        Unfitted, with its hyperparameters set.
    request : DataRequest
        The labelled data, read as ``nbcli fit`` reads it (``sha256`` False
        leaves its SHA-256 out of the report's ``inputs``); with a text block
        each fold model chooses its vocabulary from the other folds' rows
        (see :mod:`nbcli.workflows.fold_statistics`).
    folds : FoldSettings, optional
        The fold plan; its ``seed`` drives the bootstrap too.
    scoring : ScoreSettings, optional
        ``bootstrap``, ``confidence`` and ``bins`` as for
        :func:`nbcli.workflows.evaluate.evaluate` (``bins`` None: 10).
    priors_by_label : dict, optional
        As for :func:`collect_fold_statistics`.
    oof_output : str, optional
        Write the out-of-fold predictions here, as ``nbcli predict --proba``
        does (with ``fold`` and, with repeats, ``repeat`` columns first).
    reporter : Reporter, optional
        Progress and warnings.
    engine : nbcli.engines.Engine, optional
        Read ``request``'s data as parts on this engine (see
        :mod:`nbcli.workflows.fold_parts`); None: one file, in this process.

    Returns
    -------
    nbcli.reports.cross_validation.CrossValidationReport

    Examples
    --------
    >>> from nbcli.io.request import DataRequest
    >>> from nbcli.models import GaussianNB
    >>> from nbcli.workflows.cv import cross_validate
    >>> from nbcli.workflows.settings import FoldSettings, ScoreSettings
    >>> report = cross_validate(GaussianNB(), DataRequest.of("sample_data/iris_train.csv"),
    ...                         FoldSettings(n_folds=5), ScoreSettings(bootstrap=0))
    >>> report.to_dict()["schema"], len(report.folds)
    ('nbcli.cross_validation', 5)
    """
    from nbcli.reports.cross_validation import build_cross_validation
    from nbcli.workflows.train import _jsonable

    folds = folds or FoldSettings()
    scores = scoring or ScoreSettings()
    data, seed = request.path, folds.seed
    if engine is None:
        fs = collect_fold_statistics(
            estimator,
            request,
            folds,
            priors_by_label=priors_by_label,
            reporter=reporter,
            # No model file is written: no fingerprint of the rows.
            fingerprint=False,
        )
    else:
        # Parts (and their engine) only when the data come in parts.
        from nbcli.workflows.fold_parts import collect_part_fold_statistics

        fs = collect_part_fold_statistics(estimator, request, folds, engine, priors_by_label)
    from nbcli.workflows.evaluate import check_pos_label

    check_pos_label(fs.classes, scores.pos_label, data)
    if oof_output is not None:
        _out_of_fold_columns(fs)  # refused before the folds are scored
    (log_proba,) = fs.out_of_fold([{}])
    if oof_output is not None:
        write_out_of_fold(fs, log_proba, oof_output)
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
        n_resamples=scores.bootstrap,
        confidence=scores.confidence,
        seed=0 if seed is None else seed,
        bins=10 if scores.bins is None else int(scores.bins),  # type: ignore[arg-type]
        pos_label=scores.pos_label,
        inputs=request_inputs(request, engine),
        settings={
            "memory_budget": int(folds.memory_budget),
            **({} if engine is None else {"engine": engine.name}),
            **request.text_record(),
        },
        # fit's warnings of the model of all rows, once, then the fold models'.
        warnings=[*fs.warnings, *fs.fit_warnings(), *fs.model_warnings()],
    )


def _out_of_fold_columns(fs: FoldStatistics) -> str:
    """The name of the true label's column of the out-of-fold predictions,
    once no carried column takes one of their own names."""
    label = fs.target if fs.target is not None else "label"
    own = ["row", label, "repeat", "fold", "prediction", *(f"proba_{c}" for c in fs.classes)]
    taken = [c for c in fs.carried if c in own]
    if taken:
        raise NbcliError(
            f"--keep {taken[0]}: the out-of-fold predictions have a column {taken[0]!r} of "
            "their own; keep another column"
        )
    return label


def write_out_of_fold(fs: FoldStatistics, log_proba: np.ndarray, path: str, *, digits=None):
    """Write out-of-fold predictions to ``path`` (CSV, or Parquet for ``.parquet``;
    ``-`` for stdout), one row per data row used and repeat.

    Columns: ``row`` (the data row of the file, counted from 1 as messages
    count them; not for parts), the carried columns (``FoldSettings.carry``),
    the true label (named as the target column), ``repeat`` (with repeats),
    ``fold``, then ``prediction`` and the posteriors as ``predict --proba``
    writes them. Rows left out of the folds (no label, or dropped for a
    missing cell) have no line: ``row`` or a carried ID joins the lines to
    the input.

    Raises
    ------
    NbcliError
        When a carried column's name is one the file gives another meaning.
    """
    import sys

    from nbcli.io.predictions import PredictionWriter

    n = fs.codes.size
    writer = PredictionWriter.for_path(path, fs.classes, proba=True, digits=digits)
    label = _out_of_fold_columns(fs)
    lead: dict = {} if fs.file_rows is None else {"row": fs.file_rows + 1}
    lead.update(fs.carried)
    lead[label] = fs.labels

    def write(f):
        for r in range(fs.n_repeats):
            kept = dict(lead)
            if fs.n_repeats > 1:
                kept["repeat"] = np.full(n, r)
            kept["fold"] = fs.fold_values[fs.folds[r]]
            writer.write(f, kept, log_proba[r * n : (r + 1) * n])
        writer.close(f)

    if path == "-":
        write(sys.stdout)
        sys.stdout.flush()
        return
    with writer.opened(path) as f:
        write(f)
