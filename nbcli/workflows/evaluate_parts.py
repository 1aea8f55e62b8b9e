"""``evaluate`` over a data set in parts: sums on the engine, the report from the sums.

Each part is scored where its task runs and reduced to the sums of
:mod:`nbcli.engines.sums` (confusion counts, summed losses, calibration bin
sums, the losses by bin of neighbouring values); only those travel and
add. The report is that of a local evaluation of the parts joined into
one file, with the same intervals under the same seed (to rounding,
1e-12), because a one-file evaluation's bootstrap needs no more than such
sums once rows x resamples exceed
:data:`~nbcli.reports.means.EXACT_VALUES`: the confusion-matrix metrics
resample the cells of the confusion matrix, and the log-loss and Brier
score resample groups of neighbouring values
(:func:`~nbcli.reports.means.bootstrap_binned_means`). Up to that size a
one-file evaluation resamples rows, so the parts' posteriors and labels
are gathered (at most 20,000 rows at 1,000 resamples) and evaluated as one
file. The ranking metrics (ROC AUC, weighted ROC AUC, average precision)
come from a second pass over the parts (:mod:`nbcli.engines.ranking_sums`),
with DeLong's interval for ROC AUC as a one-file evaluation of that size
has it (see :func:`_ranking`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from nbcli.errors import NbcliError
from nbcli.io.fingerprint import rowhash_matches

#: The ranking metrics, which a part-wise evaluation takes from bucket and level
#: counts (:mod:`nbcli.engines.ranking_sums`) in a second pass over the parts.
RANKING_ON_PARTS = ("roc_auc", "roc_auc_weighted", "average_precision")


#: Without resamples, the rows of a data set of at most this many rows are
#: gathered too, so that its default bins are those of a one-file evaluation.
FEW_ROWS = 1_000


@dataclass(frozen=True)
class PartScoring:
    """What every part's scoring task needs, sent once to every worker."""

    model_file: Any
    read: Any  # DataRequest
    edges: np.ndarray
    #: The most rows of known labels whose posteriors are gathered (see _Rows).
    keep_rows: int = 0


@dataclass
class _Rows:
    """Posteriors, predicted columns and labels of consecutive parts, gathered while
    their rows of known labels are at most ``limit``; None beyond."""

    proba: list
    predicted: list
    ys: list
    n_known: int
    limit: int

    def merge(self, other: _Rows | None) -> _Rows | None:
        if other is None or self.n_known + other.n_known > self.limit:
            return None
        return _Rows(
            self.proba + other.proba,
            self.predicted + other.predicted,
            self.ys + other.ys,
            self.n_known + other.n_known,
            self.limit,
        )


@dataclass
class PartEvaluation:
    """Evaluation sums of one or more consecutive parts, with their unseen labels.

    ``unseen`` maps the text of each test label the model never saw to the
    label itself; ``sums`` codes them after the model's classes, in the
    order of ``unseen``'s keys (sorted).
    """

    sums: Any  # EvaluationSums
    unseen: dict
    fingerprint: Any  # RowHashFingerprint
    n_classes: int
    #: Per class, rows of known labels by bucket of their posterior (BucketCounts).
    buckets: Any = None
    #: The rows themselves, while few (see :data:`PartScoring.keep_rows`).
    rows: _Rows | None = None

    def merge(self, other: PartEvaluation) -> PartEvaluation:
        unseen = {**self.unseen, **other.unseen}
        keys = sorted(unseen)
        a = _recode(self.sums, list(self.unseen), keys, self.n_classes)
        b = _recode(other.sums, list(other.unseen), keys, self.n_classes)
        return PartEvaluation(
            a.merge(b),
            {k: unseen[k] for k in keys},
            self.fingerprint.combine(other.fingerprint),
            self.n_classes,
            self.buckets.merge(other.buckets),
            None if self.rows is None else self.rows.merge(other.rows),
        )


def _recode(sums, old: list, new: list, n_classes: int):
    """``sums`` with its unseen labels ``old`` moved to their places in ``new``."""
    if old == new:
        return sums
    from dataclasses import replace

    where = np.concatenate([np.arange(n_classes), n_classes + np.searchsorted(new, old)]).astype(
        np.intp
    )
    size = n_classes + len(new)
    confusion = np.zeros((size, size), dtype=sums.confusion.dtype)
    confusion[np.ix_(where, where)] = sums.confusion
    return replace(sums, confusion=confusion)


def _distinct_labels(y: np.ndarray):
    """The distinct labels of ``y`` (each once, as objects) and the index of each
    row's among them, shape (n,)."""
    try:
        values, inverse = np.unique(y, return_inverse=True)
        return values.astype(object), inverse.reshape(-1)
    except TypeError:  # labels of several types, which do not sort together
        index: dict = {}
        inverse = np.fromiter(
            (index.setdefault(v, len(index)) for v in y.astype(object)), np.intp, count=len(y)
        )
        return np.array(list(index), dtype=object), inverse


def score_part(index: int, part: str, spec: PartScoring) -> PartEvaluation:
    """The evaluation sums of one labelled part, scored where this task runs.

    Raises
    ------
    NbcliError
        As a one-file evaluation of ``part`` (bad cells, missing columns,
        values the model refuses), naming the part and its row.
    """
    return _scored_part(part, spec, keep=False).evaluation


@dataclass
class KeptPart:
    """A part's evaluation sums with its rows of known labels: their true class
    codes (n,) and posteriors (n, k), for the later passes over the part."""

    evaluation: PartEvaluation
    codes: np.ndarray
    proba: np.ndarray


def keep_part(index: int, part: str, spec: PartScoring) -> KeptPart:
    """:func:`score_part`, keeping the part's scored rows of known labels (on the
    worker, where the later passes read them)."""
    return _scored_part(part, spec, keep=True)


def _evaluation_of(index: int, kept: KeptPart, shared) -> PartEvaluation:
    return kept.evaluation


def _scored_part(part: str, spec: PartScoring, keep: bool) -> KeptPart:
    from nbcli.engines.sums import evaluation_sums
    from nbcli.io.fingerprint import RowHashFingerprint
    from nbcli.reports.metrics import label_key
    from nbcli.workflows.scoring import iter_scores
    from nbcli.workflows.tables import missing_wording

    mf = spec.model_file
    classes = [label_key(c) for c in np.asarray(mf.classes, dtype=object)]
    index_of = {key: i for i, key in enumerate(classes)}
    k = len(classes)
    known_codes: list[np.ndarray] = []
    known_proba: list[np.ndarray] = []

    def sums(proba, y, codes, unseen: dict, fp) -> PartEvaluation:
        from nbcli.engines.ranking_sums import BucketCounts

        known = codes < k
        total = evaluation_sums(proba, codes, k + len(unseen), edges=spec.edges)
        buckets = BucketCounts.of(codes[known], proba[known])
        if keep:
            everything = bool(known.all())
            known_codes.append(codes if everything else codes[known])
            known_proba.append(proba if everything else proba[known])
        kept = None
        if spec.keep_rows and total.n_scored <= spec.keep_rows:
            # As a one-file evaluation takes them (nbcli.workflows.scoring.score).
            kept = _Rows([proba], [np.argmax(proba, axis=1)], [y], total.n_scored, spec.keep_rows)
        return PartEvaluation(total, unseen, fp, k, buckets, kept)

    # Chunk by chunk, so that memory holds one chunk's posteriors; a chunk's
    # unseen labels are coded after the classes and recoded as they merge.
    result = sums(np.zeros((0, k)), None, np.zeros(0, np.intp), {}, RowHashFingerprint())
    if result.rows is not None:
        result.rows = _Rows([], [], [], 0, spec.keep_rows)
    rows = 0
    for chunk in iter_scores(mf, part, read=spec.read, need_target=True):
        if chunk.scored is not None and not chunk.scored.all():
            # As a one-file evaluation: a row the model cannot score is named.
            row = rows + int(np.argmin(chunk.scored)) + 1
            raise NbcliError(
                f"{part}: row {row} has a missing value, which the {mf.model.name} model "
                f"cannot score ({missing_wording(mf.model, mf.training.get('missing', 'drop'))}); fill the "
                "value in or remove the row"
            )
        fp = RowHashFingerprint()
        fp.update(chunk.X, chunk.y)
        y = np.asarray(chunk.y)
        # Each distinct label is keyed once: its code, or its place among the
        # chunk's unseen labels (sorted by key, after the classes).
        values, inverse = _distinct_labels(y)
        keys = [label_key(v) for v in values]
        unseen = {}
        for key, value in zip(keys, values):
            if key not in index_of and key not in unseen:
                unseen[key] = value
        order = sorted(unseen)
        codes_of = {**index_of, **{key: k + i for i, key in enumerate(order)}}
        codes = np.fromiter((codes_of[key] for key in keys), np.intp, count=len(keys))[inverse]
        unseen = {key: unseen[key] for key in order}
        result = result.merge(sums(np.exp(chunk.log_proba), y, codes, unseen, fp))
        rows += chunk.n_rows
    if not keep:
        return KeptPart(result, np.zeros(0, np.intp), np.zeros((0, k)))
    codes = np.concatenate(known_codes) if known_codes else np.zeros(0, np.intp)
    proba = np.concatenate(known_proba) if known_proba else np.zeros((0, k))
    return KeptPart(result, codes, proba)


def _known_rows(part, spec: PartScoring):
    """Each chunk's true class codes and posteriors, rows of labels the model knows:
    those of a :class:`KeptPart`, or read from the part's file."""
    from nbcli.reports.metrics import label_key
    from nbcli.workflows.scoring import iter_scores

    if isinstance(part, KeptPart):
        yield part.codes, part.proba
        return
    mf = spec.model_file
    index_of = {label_key(c): i for i, c in enumerate(np.asarray(mf.classes, dtype=object))}
    for chunk in iter_scores(mf, part, read=spec.read, need_target=True):
        values, inverse = _distinct_labels(np.asarray(chunk.y))
        codes = np.fromiter(
            (index_of.get(label_key(v), -1) for v in values), np.intp, count=len(values)
        )[inverse]
        known = codes >= 0
        yield codes[known], np.exp(chunk.log_proba)[known]


@dataclass(frozen=True)
class _LevelPass:
    spec: PartScoring
    shared: np.ndarray  # bool (k, N_BUCKETS): buckets holding a positive


def level_part(index: int, part: str, shared: _LevelPass):
    """The second pass of a part: the distinct scores of the buckets that hold a positive."""
    from nbcli.engines.ranking_sums import LevelCounts

    k = shared.shared.shape[0]
    total = LevelCounts.of(np.zeros(0, np.intp), np.zeros((0, k)), shared.shared)
    for codes, proba in _known_rows(part, shared.spec):
        total = total.merge(LevelCounts.of(codes, proba, shared.shared))
    return total


@dataclass(frozen=True)
class _CovariancePass:
    spec: PartScoring
    contributions: Any  # nbcli.engines.ranking_sums.Contributions


class _Cross:
    """Sums of products of the rows' AUC contributions, shape (k, k); they add."""

    def __init__(self, total: np.ndarray) -> None:
        self.total = total

    def merge(self, other: _Cross) -> _Cross:
        return _Cross(self.total + other.total)


def cross_part(index: int, part: str, shared: _CovariancePass) -> _Cross:
    """The third pass of a part (three or more classes): its rows' sums of
    products of AUC contributions, for DeLong's covariance of the class AUCs."""
    k = shared.contributions.defined.size
    total = np.zeros((k, k))
    for codes, proba in _known_rows(part, shared.spec):
        total += shared.contributions.of(codes, proba)
    return _Cross(total)


def _ranking(parts, engine, spec: PartScoring, buckets, confidence: float, n_resamples: int):
    """ROC AUC (macro and weighted) and average precision over the parts, with
    the per-class ROC AUC and the warnings of classes left out of an average.

    Intervals (method ``DeLong``, as a one-file evaluation takes for large
    data): DeLong's for ROC AUC, its variance from the runs; with three or
    more classes the covariance of the class AUCs from a third pass that
    sums the products of each row's contributions
    (:func:`nbcli.reports.delong.averaged_auc_interval`); none without
    resamples (``n_resamples`` 0), as in a one-file evaluation. Average precision
    has no closed-form interval and gets none; beyond
    :data:`~nbcli.reports.ranking_summary.MAX_CURVE_CLASSES` classes, point
    figures only, as in a one-file evaluation.
    """
    import warnings as python_warnings

    from nbcli.engines.ranking_sums import column_figures, runs
    from nbcli.reports.bootstrap import no_interval
    from nbcli.reports.delong import wald_interval
    from nbcli.reports.ranking import ExcludedClassWarning, class_average
    from nbcli.reports.ranking_summary import MAX_CURVE_CLASSES, RANKING_KEYS

    k = buckets.positive.shape[0]
    from nbcli.engines.ranking_sums import LevelCounts, class_figures

    level_pass = _LevelPass(spec, buckets.positive > 0)
    # DeLong's covariance of three or more class AUCs needs every level's contribution.
    cross = bool(n_resamples) and 2 < k <= MAX_CURVE_CLASSES
    if cross:
        # Levels barely shrink as they merge: each part's are gathered and merged once.
        levels = LevelCounts.joined(engine.gather_parts(list(parts), level_part, level_pass))
        figures = [column_figures(*runs(buckets, levels, c)) for c in range(k)]
    else:
        # Each range of classes merges its levels where they are: only figures travel.
        figures = engine.gather_columns(
            list(parts), level_part, level_pass, k, class_figures, buckets
        )
    areas = np.array([f.auc for f in figures])
    precisions = np.array([f.average_precision for f in figures])
    sizes = buckets.positive.sum(axis=1).astype(np.float64)
    with python_warnings.catch_warnings(record=True) as caught:
        python_warnings.simplefilter("always")
        macro = class_average(areas, np.ones(k), "ROC AUC")
        weighted = macro if k == 2 else class_average(areas, sizes, "ROC AUC")
        ap = class_average(precisions, np.ones(k), "average precision")
        if not n_resamples:
            metrics = {"roc_auc": no_interval(macro), "roc_auc_weighted": no_interval(weighted)}
        elif k == 2:
            auc = wald_interval(macro, figures[1].variance, confidence=confidence)
            metrics = {"roc_auc": auc, "roc_auc_weighted": auc}
        elif k > MAX_CURVE_CLASSES:
            metrics = {"roc_auc": no_interval(macro), "roc_auc_weighted": no_interval(weighted)}
        else:
            from nbcli.engines.ranking_sums import contributions
            from nbcli.reports.delong import averaged_auc_interval

            shared = _CovariancePass(spec, contributions(buckets, levels))
            covariance = engine.sum_over_parts(list(parts), cross_part, shared).total
            # DeLong's small-sample corrected variances on the diagonal, as one file has them.
            covariance[np.diag_indices(k)] = [f.variance for f in figures]
            covariance[~np.isfinite(areas), :] = np.nan
            covariance[:, ~np.isfinite(areas)] = np.nan
            metrics = {
                "roc_auc": averaged_auc_interval(areas, covariance, confidence=confidence),
                "roc_auc_weighted": averaged_auc_interval(
                    areas, covariance, sizes, confidence=confidence
                ),
            }
    metrics["average_precision"] = no_interval(ap)
    labels = [str(c) for c in np.asarray(spec.model_file.classes, dtype=object)]
    notes = [
        w.message.text(labels) if isinstance(w.message, ExcludedClassWarning) else str(w.message)
        for w in caught
    ]
    return {key: metrics[key] for key in RANKING_KEYS}, areas, list(dict.fromkeys(notes))


def evaluate_parts(model: str, request, engine, scoring=None):
    """Score the model file ``model`` on the labelled parts of ``request`` (in order) on ``engine``.

    Parameters
    ----------
    model : str
        Model file path.
    request : DataRequest
        Its ``data`` names the parts of one labelled data set (see
        :func:`nbcli.workflows.parts.expand_parts`); read as
        :func:`nbcli.workflows.evaluate.evaluate` reads a file.
    engine : nbcli.engines.Engine
    scoring : ScoreSettings, optional
        As for :func:`nbcli.workflows.evaluate.evaluate`.

    Returns
    -------
    nbcli.reports.evaluation.EvaluationReport
        The report of :func:`~nbcli.workflows.evaluate.evaluate` on the
        parts joined into one file: the same figures and, under the same
        seed, the same intervals (to rounding); without the curves.

    Raises
    ------
    NbcliError
        For the lowest-indexed bad part, a data set without rows, none of
        whose labels is a class of the model, or more ``bins`` than rows.

    Examples
    --------
    >>> import os, shutil
    >>> from nbcli.engines import open_engine
    >>> from nbcli.io.modelfile import save_model
    >>> from nbcli.io.request import DataRequest
    >>> from nbcli.models import GaussianNB
    >>> from nbcli.workflows.evaluate_parts import evaluate_parts
    >>> from nbcli.workflows.settings import ScoreSettings
    >>> from nbcli.workflows.train import train
    >>> save_model(train(GaussianNB(), DataRequest.of("sample_data/iris_train.csv")).model_file, "iris.npz")
    >>> os.makedirs("parts", exist_ok=True)
    >>> _ = shutil.copy("sample_data/iris_test.csv", "parts/a.csv")
    >>> _ = shutil.copy("sample_data/iris_calib.csv", "parts/b.csv")
    >>> with open_engine("local") as engine:
    ...     report = evaluate_parts("iris.npz", DataRequest.of("parts"), engine, ScoreSettings(bootstrap=0))
    >>> report.n_samples, round(report.metrics["accuracy"].value, 3)
    (60, 0.967)
    """
    from nbcli.io.modelfile import load_model
    from nbcli.reports.means import EXACT_VALUES
    from nbcli.reports.reliability import UNIFORM, bin_edges
    from nbcli.workflows.evaluate import check_labels_known, note_missing_spellings
    from nbcli.workflows.parts import at_client, check_parts, expand_parts
    from nbcli.workflows.settings import ScoreSettings

    scores = scoring or ScoreSettings()
    data, parts = request.path, expand_parts(request.data)
    bootstrap, confidence, seed = int(scores.bootstrap), scores.confidence, scores.seed
    if scores.bins is not None and not isinstance(scores.bins, int):
        raise NbcliError("evaluate takes a number of --bins")
    check_parts(parts, engine)
    named = list(parts)
    parts = [at_client(p, engine) for p in parts]
    # The rows are counted only once scored: the sums' calibration bins are
    # the default ten (fewer rows than that are gathered, and binned as one file).
    bins = 10 if scores.bins is None else scores.bins
    mf = load_model(model)
    # While a one-file evaluation resamples rows (EXACT_VALUES), the rows are gathered.
    keep = EXACT_VALUES // bootstrap if bootstrap else FEW_ROWS
    spec = PartScoring(mf, request, bin_edges(np.zeros(0), bins, UNIFORM), keep)
    keep_parts = getattr(engine, "keep_parts", None)
    kept = None if keep_parts is None else keep_parts(list(parts), keep_part, spec)
    if kept is None:  # the engine reads the parts again for the ranking's passes
        total: PartEvaluation = engine.sum_over_parts(list(parts), score_part, spec)
    else:
        total = engine.sum_over_parts(kept, _evaluation_of)
        if total.rows is not None:
            kept = None  # the rows are here: no more passes over the parts
    n_rows = total.sums.n_rows
    if n_rows == 0:
        raise NbcliError(f"{data}: no data rows in any of its {len(parts)} parts")
    if not total.sums.n_scored:
        check_labels_known(mf.classes, np.array(list(total.unseen.values()), object), model, data)
    if scores.bins is None and total.rows is not None:
        bins = max(1, min(10, n_rows))
    elif bins > n_rows:
        raise NbcliError(
            f"--bins {bins:,}: more bins than the {n_rows:,} rows scored in {data}; "
            f"give at most {n_rows:,}"
        )
    training_match = rowhash_matches(mf.training, total.fingerprint)
    settings = {
        "bootstrap_resamples": bootstrap,
        "confidence": float(confidence),
        "seed": seed,
        "bins": int(bins),
    }
    inputs = {"model": _input(model), "data": {"path": data, "parts": named}}
    if total.rows is not None:
        figures = ScoreSettings(bootstrap, confidence, seed, bins)
        report = _report_from_rows(mf, total.rows, figures, training_match, settings)
    else:
        from nbcli.reports.bootstrap import method_summary

        report = report_from_sums(
            mf.classes,
            total,
            confidence=confidence,
            training_match=training_match,
            ranking=_ranking(kept or parts, engine, spec, total.buckets, confidence, bootstrap),
            n_resamples=bootstrap,
            seed=seed,
        )
        report.settings = {**settings, "bootstrap_method": method_summary(report.metrics)}
    report.inputs = inputs
    report.settings["engine"] = engine.name
    note_missing_spellings(report, data)
    return report


def _report_from_rows(mf, rows: _Rows, figures, training_match: bool, settings: dict):
    """The one-file report of the gathered rows (:func:`~nbcli.workflows.evaluate.evaluate`'s)."""
    from nbcli.reports.evaluation import build_evaluation
    from nbcli.reports.metrics import encode_labels
    from nbcli.workflows.scoring import _joined_labels

    y = _joined_labels(rows.ys)
    # Column-major, as nbcli.workflows.scoring.score gives them.
    proba = np.empty((len(y), len(mf.classes)), order="F")
    lo = 0
    for chunk in rows.proba:
        proba[lo : lo + len(chunk)] = chunk
        lo += len(chunk)
    return build_evaluation(
        mf.classes,
        y,
        proba,
        predicted=np.concatenate(rows.predicted),
        n_resamples=figures.bootstrap,
        confidence=figures.confidence,
        seed=figures.seed,
        bins=figures.bins,
        training_match=training_match,
        settings=settings,
        coding=encode_labels(mf.classes, y),
    )


def _input(path: str) -> dict:
    from nbcli.io.data import file_sha256

    return {"path": path, "sha256": file_sha256(path)}


def report_from_sums(
    classes,
    total: PartEvaluation,
    *,
    confidence: float,
    training_match: bool,
    ranking=None,
    n_resamples: int = 0,
    seed=0,
):
    """An :class:`~nbcli.reports.evaluation.EvaluationReport` from summed evaluation sums,
    with ``ranking`` (what :func:`_ranking` gives) for the ranking metrics, else none.

    The intervals are a one-file evaluation's of more than
    :data:`~nbcli.reports.means.EXACT_VALUES` rows x ``n_resamples``, drawn
    as it draws them from ``seed``: the confusion-matrix metrics by
    :func:`~nbcli.reports.bootstrap.bootstrap_confusion_metrics`, the
    log-loss and Brier score by
    :func:`~nbcli.reports.means.bootstrap_binned_means`.

    Raises
    ------
    ValueError
        For resamples of fewer rows, which a one-file evaluation resamples
        row by row (gather the rows instead).
    """
    from nbcli.reports.bootstrap import bootstrap_confusion_metrics
    from nbcli.reports.evaluation import (
        METRIC_KEYS,
        TRAINING_DATA_WARNING,
        CalibrationSummary,
        EvaluationReport,
    )
    from nbcli.reports.means import bootstrap_binned_means, means_generator
    from nbcli.reports.metrics import (
        MARGIN_METRICS,
        _label_order,
        json_label,
        most_confused,
        per_class_scores,
    )
    from nbcli.reports.reliability import ReliabilityBin, ReliabilityDiagram, unseen_warning

    s = total.sums
    k = total.n_classes
    # Unseen labels in the order a one-file evaluation lists them.
    values = [json_label(v) for v in total.unseen.values()]
    order = sorted(range(len(values)), key=lambda i: _label_order(values[i]))
    perm = np.concatenate([np.arange(k), k + np.asarray(order, dtype=np.intp)]).astype(np.intp)
    confusion = s.confusion[np.ix_(perm, perm)]
    unseen_labels = [values[i] for i in order]
    labels = [json_label(c) for c in np.asarray(classes, dtype=object)] + unseen_labels

    # The draws of a one-file evaluation (nbcli.reports.evaluation._other_figures).
    metrics = bootstrap_confusion_metrics(
        confusion,
        MARGIN_METRICS,
        n_resamples=n_resamples,
        confidence=confidence,
        rng=np.random.default_rng(seed),
    )
    metrics.update(
        bootstrap_binned_means(
            {"log_loss": s.log_loss_bins, "brier": s.brier_bins},
            n_resamples=n_resamples,
            confidence=confidence,
            rng=means_generator(seed),
        )
    )
    from nbcli.reports.bootstrap import no_interval

    areas = np.full(k, np.nan)
    ranking_notes: list[str] = []
    if ranking is not None:
        ranked, areas, ranking_notes = ranking
        metrics.update(ranked)
    metrics = {key: metrics.get(key, no_interval(float("nan"))) for key in METRIC_KEYS}

    count = s.bin_count
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_conf = np.where(count > 0, s.bin_confidence / count, np.nan)
        acc = np.where(count > 0, s.bin_hits / count, np.nan)
    gaps = np.abs(acc - mean_conf)
    filled = count > 0
    n = int(s.n_scored)
    edges = _edges(len(count))
    diagram = ReliabilityDiagram(
        [
            ReliabilityBin(
                float(edges[b]),
                float(edges[b + 1]),
                int(count[b]),
                float(mean_conf[b]),
                float(acc[b]),
            )
            for b in range(len(count))
        ],
        edges,
        "uniform",
        n,
        float(np.sum(count[filled] / n * gaps[filled])) if n else float("nan"),
        float(np.max(gaps[filled])) if n and filled.any() else float("nan"),
    )
    calibration = CalibrationSummary(
        mean_confidence=float(s.bin_confidence.sum() / n) if n else float("nan"),
        accuracy=float(s.bin_hits.sum() / n) if n else float("nan"),
        diagram=diagram,
    )
    rows, averages = per_class_scores(confusion, labels)
    from dataclasses import replace

    rows = [
        replace(r, roc_auc=float(areas[i]) if i < k else float("nan")) for i, r in enumerate(rows)
    ]
    n_unseen = int(s.n_rows - s.n_scored)
    warnings = list(ranking_notes)
    if n_unseen:
        warnings.append(unseen_warning(unseen_labels, n_unseen))
    if training_match:
        warnings.append(TRAINING_DATA_WARNING)
    return EvaluationReport(
        metrics=metrics,
        labels=labels,
        confusion=confusion,
        most_confused=most_confused(confusion, labels, 10),
        per_class=rows,
        averages=averages,
        calibration=calibration,
        warnings=warnings,
        n_samples=int(s.n_rows),
        n_unseen=n_unseen,
        unseen_labels=unseen_labels,
        inputs={},
        settings={},
    )


def _edges(n_bins: int) -> np.ndarray:
    from nbcli.reports.reliability import UNIFORM, bin_edges

    return bin_edges(np.zeros(0), n_bins, UNIFORM)
