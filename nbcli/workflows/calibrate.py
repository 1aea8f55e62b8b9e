"""Measuring how well a model's posteriors are calibrated, and fitting a repair."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from nbcli.errors import NbcliError

if TYPE_CHECKING:
    from nbcli.calibration import Calibrator
    from nbcli.io.request import DataRequest
    from nbcli.reports.reliability import RowReliability
from nbcli.workflows.engine import Engine, Reporter
from nbcli.workflows.inputs import inputs_of, request_inputs
from nbcli.workflows.scoring import score, score_parts
from nbcli.workflows.settings import CalibrationChecks, ScoreSettings

#: Temperatures beyond these are worth a word even off the search bounds.
_HOT, _COLD = 100.0, 0.01

#: The calibrators --method auto chooses among, in the order they are tried.
FITTED = ("temperature", "sigmoid", "isotonic")
METHODS = ("auto", *FITTED, "none")

#: Folds of the cross-fitting that judges a calibrator, by default.
FOLDS = CalibrationChecks().folds

# Methods that fit one map per class: a class with no calibration row would
# get a constant map, the floor, whatever the model says.
_ONE_VS_REST = ("sigmoid", "isotonic")

#: From this many calibration rows on, the verdict's fold sigmoids and
#: isotonic maps are fitted on binned scores
#: (:func:`nbcli.calibration.binned_cross_fit`), and those methods' fit on
#: every row is made only for the calibrator reported and written; below
#: it, every fit is on the rows.
BINNED_FROM = 100_000


@dataclass
class CalibrationResult:
    """What :func:`calibrate` measured and fitted.

    Attributes
    ----------
    report : CalibrationReport or RecalibrationReport
        The reliability of the posteriors as the model stands, and with
        method other than ``none``, before and after the new calibrator.
    model : nbcli.io.modelfile.ModelFile
        The model; with a fitted calibrator, carrying it (ready to save).
    fitted : bool
        True when a calibrator was fitted.
    certain : bool
        True when temperature scaling ran to ``T -> 0`` (every calibration
        row predicted correctly): the calibrated model would predict every
        row with probability 0 or 1 and should not be written.
    accepted : bool
        True when the calibrator the model carries passed the verdict's rule
        (:func:`nbcli.reports.reliability.accepts`); otherwise it is the
        candidate with the lowest cross-fitted log-loss, for ``--allow-worse``.
    refusal : str or None
        The report's warning of a verdict that accepts no calibrator (None
        when one is accepted), for a caller that says the same in its error.
    """

    report: Any
    model: Any
    fitted: bool
    certain: bool
    accepted: bool = False
    refusal: str | None = None


def known_rows(classes, y_true) -> tuple[np.ndarray, np.ndarray]:
    """Indices of rows whose label the model knows, and those labels' class indices."""
    from nbcli.reports.metrics import encode_labels

    # Coded as evaluate codes them (by string form), without a Python step per row.
    coding = encode_labels(classes, y_true)
    rows = np.flatnonzero(coding.known)
    return rows, coding.codes[rows].astype(np.intp, copy=False)


def calibrate(
    model: str,
    request: DataRequest,
    scoring: ScoreSettings | None = None,
    *,
    method: str = "auto",
    allow_training_data: bool = False,
    reporter: Reporter | None = None,
    checks: CalibrationChecks | None = None,
    engine: Engine | None = None,
) -> CalibrationResult:
    """Reliability of ``model``'s posteriors on held-out ``data``, and a calibrator fitted on it.

    Parameters
    ----------
    model : str
        Path of a model file. A calibrator it carries is applied to the
        "before" figures; a new one is fitted on the model's own posteriors
        and replaces it.
    request : DataRequest
        Held-out labelled data (not the training data, unless
        ``allow_training_data``) and how to read it. Its ``sha256``: give
        the SHA-256 of ``model`` and the data in the report's ``inputs`` and
        the calibrator's ``fitted_on``; False gives their paths alone
        (hashing reads every input once more).
    scoring : ScoreSettings, optional
        ``bootstrap``, ``confidence`` and ``seed`` of the intervals;
        ``bins``: number of confidence bins (at most the rows with labels
        the model knows), or their edges in [0, 1] (default: 10, or one per
        row when there are fewer); ``strategy``: equal-width bins
        (``uniform``) or equal counts (``quantile``; ECE and MCE only: the
        verdict does not depend on the bins).
    method : {"auto", "temperature", "sigmoid", "isotonic", "none"}
        The repair; ``auto`` takes the candidate with the lowest
        cross-fitted log-loss among those the verdict accepts; ``none``
        only measures.
    checks : CalibrationChecks, optional
        ``folds`` of the cross-fitting (stratified, seeded by ``seed``): each
        row's "after" posterior comes from a calibrator fitted on the other
        folds; reduced, with a warning, to the number of rows when there
        are fewer. ``allow_worse``: whether the calibrated model is written
        even when the verdict accepts no calibrator (``--allow-worse``);
        only the warning of such a verdict depends on it.
    engine : nbcli.engines.Engine, optional
        Score the parts of ``request`` (a folder, a glob, several files) on
        this engine (:func:`nbcli.workflows.scoring.score_parts`): the
        posteriors and labels of every row come back, in row order, and the
        calibrators, the cross-fitting and the verdict are those of the parts
        joined into one file, for every method. None: one file.

    Notes
    -----
    The verdict: each candidate's mean per-row log-loss and Brier score
    differences (cross-fitted minus before) get paired intervals at
    ``confidence`` (``bootstrap`` resamples; the normal interval with 0);
    the rule is :data:`nbcli.reports.reliability.VERDICT_RULE`.

    Returns
    -------
    CalibrationResult

    Raises
    ------
    NbcliError
        For the model's training rows (without ``allow_training_data``), no
        label the model knows, fewer than 2 such rows, or data the
        calibrator cannot be fitted on.

    Examples
    --------
    >>> from nbcli.io.modelfile import save_model
    >>> from nbcli.io.request import DataRequest
    >>> from nbcli.models import GaussianNB
    >>> from nbcli.workflows.calibrate import calibrate
    >>> from nbcli.workflows.settings import ScoreSettings
    >>> from nbcli.workflows.train import train
    >>> save_model(train(GaussianNB(), DataRequest.of("sample_data/iris_train.csv")).model_file, "iris.npz")
    >>> result = calibrate("iris.npz", DataRequest.of("sample_data/iris_calib.csv"), ScoreSettings(bootstrap=0),
    ...                    method="temperature")
    >>> result.report.to_dict()["schema"]
    'nbcli.recalibration'
    """
    from nbcli.io.modelfile import load_model
    from nbcli.reports.reliability import RecalibrationReport, build_calibration, row_reliability
    from nbcli.workflows.evaluate import (
        check_labels_known,
        inputs_later,
        left_out_warning,
        note_missing_spellings,
    )

    figures = scoring or ScoreSettings()
    checks = checks or CalibrationChecks()
    folds, allow_worse = checks.folds, checks.allow_worse
    data, read, bins, strategy = request.path, request, figures.bins, figures.strategy
    bootstrap, confidence, seed = figures.bootstrap, figures.confidence, figures.seed
    if method not in METHODS:
        raise NbcliError(f"unknown calibration method {method!r}; choose one of {METHODS}")
    reporter = reporter or Reporter()
    mf = load_model(model)
    _check_edges_cover(bins, len(mf.classes))
    current = cast("Calibrator | None", mf.calibrator)
    if current is not None and method != "none":
        reporter.warn(
            f"{model} already carries {_article(current.kind)} {current.kind} calibrator, "
            "which the new one replaces; "
            "'before' shows the model with its old calibrator, 'after' applies the new "
            "calibrator to the model's own posteriors"
        )
    # Score once without any calibrator the file carries: a new calibrator is
    # fitted on the model's own posteriors and replaces the old one, while
    # "before" shows the model as it stands (old calibrator applied).
    mf.calibrator = None
    if engine is None:
        # Hashed, when asked for, on a thread while the rows are scored.
        later = inputs_later(model=model, data=data, sha256=request.sha256)
        scores = score(mf, data, read=read, reporter=reporter, missing_option=True)
    else:
        scores = score_parts(mf, read, engine, missing_option=True)
    mf.calibrator = current
    raw_logp, y_true = scores.log_proba, scores.y_true
    assert raw_logp is not None
    if scores.training_match and not allow_training_data:
        raise NbcliError(
            f"{data}: these are the rows {model} was trained on; calibrating on them hides the "
            "over-confidence you want to repair. Use held-out data, or --allow-training-data"
        )
    rows, y_idx = known_rows(mf.classes, y_true)
    if rows.size == 0:
        # As evaluate says it: the labels found, the classes known, and the usual causes.
        check_labels_known(mf.classes, y_true, model, data)
        raise NbcliError(f"{data}: no labelled rows to calibrate on")
    if bins is None:
        bins = max(1, min(10, int(rows.size)))
    elif isinstance(bins, (int, np.integer)) and bins > rows.size:
        raise NbcliError(
            f"--bins {bins:,}: more bins than the {rows.size:,} rows with labels the model "
            f"knows in {data}; give at most {rows.size:,}"
        )
    settings = {
        "bootstrap_resamples": bootstrap,
        "confidence": confidence,
        "seed": seed,
        "bins": bins,
        "strategy": strategy,
        "method": method,
    }
    if engine is None:
        inputs = later()
    else:
        inputs = {
            **inputs_of(model=model, sha256=request.sha256),
            **request_inputs(request, engine),
        }

    def measure(proba, per_row=None):
        try:
            report = build_calibration(
                mf.classes,
                y_true,
                proba,
                bins=bins,
                strategy=strategy,
                n_resamples=bootstrap,
                confidence=confidence,
                seed=seed,
                inputs=inputs,
                settings=settings,
                per_row=per_row,
            )
        except ValueError as exc:
            raise NbcliError(f"{data}: {exc}") from None
        if scores.n_left_out:
            report.warnings.append(left_out_warning(scores.n_left_out, len(y_true)))
        note_missing_spellings(report, data)
        return report

    before_logp = raw_logp if current is None else current.transform(raw_logp)
    proba = np.exp(before_logp)
    # The rows with known labels' figures, taken once for the report and the verdict.
    before_rows = row_reliability(proba[rows], y_idx)
    before = measure(proba, before_rows)
    if method == "none":
        return CalibrationResult(report=before, model=mf, fitted=False, certain=False)

    if rows.size < 3:
        raise NbcliError(
            f"{data}: too few rows with labels the model knows ({rows.size}) to fit and "
            "cross-check a calibrator; at least 3 are needed"
        )
    if folds < 2:
        raise NbcliError(f"--folds {folds}: cross-fitting needs at least 2 folds")
    if folds > rows.size:
        reporter.warn(
            f"--folds {folds}: only {rows.size} rows with labels the model knows in {data}; "
            f"cross-fitting with {rows.size} folds (one row each)"
        )
        folds = int(rows.size)
    settings["folds"] = folds
    before.settings["folds"] = folds
    verdict, best = _judge(
        mf,
        (raw_logp, before_rows, rows, y_idx),
        methods=FITTED if method == "auto" else (method,),
        explicit=method != "auto",
        folds=folds,
        data=data,
        settings=settings,
        reporter=reporter,
    )
    if best is None:
        notes = "; ".join(f"{c.method}: {c.note}" for c in verdict.candidates)
        raise NbcliError(f"{data}: no calibrator can be fitted ({notes})")
    chosen = verdict.chosen or best.method
    calibrator = best.calibrator
    certain = best.certain
    if chosen == "temperature":
        certain = _warn_about_temperature(calibrator, raw_logp[rows], reporter) or certain
    # The report "before" keeps no posteriors: they become "after"'s in place.
    proba[rows] = np.exp(best.cross_fitted)
    after = measure(proba, best.per_row)
    info: dict[str, Any] = {
        "method": chosen,
        "fitted_on": inputs["data"],
        "n_samples": int(rows.size),
        "folds": folds,
        "cross_fitted_log_loss": {
            "before": verdict.before["log_loss"],
            "after": next(c.log_loss for c in verdict.candidates if c.method == chosen),
        },
        **calibrator.describe(),
    }
    report = RecalibrationReport(
        before=before,
        after=after,
        calibrator=info,
        inputs=inputs,
        settings=settings,
        verdict=verdict,
    )
    refused = None if verdict.chosen is not None else _refusal(verdict, method, allow_worse)
    report.applied = verdict.chosen is not None or allow_worse
    if refused is not None:
        report.after.warnings.append(refused)
    reporter.advise(
        f"'after' is cross-fitted: each row calibrated by a calibrator fitted on the other "
        f"{folds - 1} of {folds} folds of these rows; check the calibrated model on a third, "
        "untouched split with nbcli evaluate"
    )
    mf.calibrator, mf.calibration_info = calibrator, info
    return CalibrationResult(
        report=report,
        model=mf,
        fitted=True,
        certain=certain,
        accepted=verdict.chosen is not None,
        refusal=refused,
    )


@dataclass
class _Fit:
    """A candidate fitted on every row, with its cross-fitted posteriors."""

    method: str
    calibrator: Any
    cross_fitted: np.ndarray
    certain: bool
    #: The figures of each row of ``cross_fitted``.
    per_row: RowReliability | None = None


def _judge(mf, scored: tuple, *, methods, explicit, folds, data, settings, reporter):
    """The verdict on each method of ``methods``, and the fit with the lowest
    cross-fitted log-loss (the chosen one when any is accepted); ``scored`` is
    ``(raw_logp, before, rows, y_idx)``: the scores, the ``row_reliability`` of
    the rows with known labels as they stand, those rows and their labels."""
    raw_logp, before, rows, y_idx = scored
    from nbcli.calibration import (
        BINNED,
        CALIBRATORS,
        SCORE_BINS,
        SigmoidCalibration,
        TemperatureScaling,
        binned_cross_fit,
        check_log_proba,
        cross_fit,
        log_odds,
    )
    from nbcli.reports.reliability import (
        CERTAIN_TEMPERATURE,
        CalibrationVerdict,
        CalibratorCandidate,
        paired_differences,
        rejection,
        reliability_diagram,
        row_reliability,
    )
    from nbcli.resampling import stratified_folds

    z = raw_logp[rows]
    plan = stratified_folds(y_idx, folds, seed=settings["seed"])
    binned = rows.size >= BINNED_FROM
    scores, starts = None, {}
    if binned and any(m in BINNED for m in methods):
        settings["fold_score_bins"] = SCORE_BINS

    def losses(values):
        diagram = reliability_diagram(
            values.confidence, values.correct, settings["bins"], settings["strategy"]
        )
        per_row = {"log_loss": values.log_loss, "brier": values.brier}
        return per_row, {
            "log_loss": float(per_row["log_loss"].mean()),
            "brier": float(per_row["brier"].mean()),
            "ece": diagram.ece,
            "mce": diagram.mce,
        }

    before_rows, before_values = losses(before)
    candidates, fits = [], {}
    nan = float("nan")
    for method in methods:
        note = _cannot_fit(method, mf, y_idx, data)
        if note is None:
            try:
                if binned and method in BINNED:
                    # Fitted on every row only if it is the one reported.
                    calibrator = None
                    if scores is None:
                        scores = log_odds(check_log_proba(z, min_samples=2, min_classes=2))
                    cross_fitted, binned_fits = binned_cross_fit(
                        method, z, y_idx, plan, scores=scores, full=True
                    )
                    starts[method] = binned_fits[-1]
                else:
                    calibrator = CALIBRATORS[method]().fit(z, y_idx)
                    cross_fitted = cross_fit(method, z, y_idx, plan, init=calibrator)
            except ValueError as exc:
                note = f"cannot fit the {method} calibrator: {_data_rows(str(exc), rows)}"
        if note is not None:
            if explicit:
                raise NbcliError(f"{data}: {note}")
            # auto fits temperature itself: its notes do not point to it.
            note = note.replace(_TEMPERATURE_WAY, "")
            reporter.warn(f"--method auto leaves out {method}: {note}")
            candidates.append(CalibratorCandidate(method, nan, nan, nan, nan, {}, False, note))
            continue
        certain = (
            isinstance(calibrator, TemperatureScaling)
            and _temperature_bound(calibrator, z) == "lower"
        )
        figures = row_reliability(np.exp(cross_fitted), y_idx)
        per_row, values = losses(figures)
        differences = paired_differences(
            before_rows,
            per_row,
            n_resamples=settings["bootstrap_resamples"],
            confidence=settings["confidence"],
            seed=settings["seed"],
        )
        # Checked before the rule, so that such a temperature is never "chosen".
        note = CERTAIN_TEMPERATURE if certain else rejection(differences)
        ok = note is None
        candidates.append(CalibratorCandidate(method, **values, differences=differences,
                                              accepted=ok, note=note))  # fmt: skip
        fits[method] = _Fit(method, calibrator, cross_fitted, certain, figures)
    # Under auto, a certain temperature is never the one to write.
    fitted = [
        c for c in candidates if c.method in fits and (explicit or not fits[c.method].certain)
    ]
    accepted = [c for c in fitted if c.accepted]
    pool = accepted or fitted
    best = min(pool, key=lambda c: (c.log_loss, c.brier)) if pool else None
    verdict = CalibrationVerdict(
        folds=folds,
        confidence=settings["confidence"],
        interval_method="bootstrap" if settings["bootstrap_resamples"] > 0 else "normal",
        before=before_values,
        candidates=candidates,
        chosen=best.method if accepted and best is not None else None,
    )
    chosen = fits[best.method] if best is not None else None
    if chosen is not None and chosen.calibrator is None:
        try:
            if chosen.method == "sigmoid" and scores is not None:
                # The rows passed the checks of the binned fits; the search
                # starts at the sigmoids on every row's bins.
                chosen.calibrator = SigmoidCalibration()._fit_scores(
                    scores, y_idx, starts["sigmoid"]
                )
            else:
                chosen.calibrator = CALIBRATORS[chosen.method]().fit(z, y_idx)
        except ValueError as exc:
            note = f"cannot fit the {chosen.method} calibrator: {_data_rows(str(exc), rows)}"
            raise NbcliError(f"{data}: {note}") from None
    return verdict, chosen


def _check_edges_cover(bins, n_classes: int) -> None:
    """Refuse ``--bins`` edges that leave out confidences a calibrated model
    can give: a row's top-class confidence is at least ``1 / n_classes``, and
    the calibrated posteriors are known only once fitted, so the edges must
    run from at most that to 1 (``evaluate`` checks its edges on the rows)."""
    if bins is None or isinstance(bins, (int, np.integer)):
        return
    edges = [float(e) for e in bins]
    least = 1.0 / max(n_classes, 1)
    if edges and (edges[0] > least or edges[-1] < 1.0):
        shown = ",".join(format(e, "g") for e in edges)
        raise NbcliError(
            f"--bins {shown}: calibrate's edges must run from at most 1/{n_classes} "
            f"({least:.4g}), the least top-class confidence of {n_classes} classes, to 1, "
            "so that every calibrated row falls in a bin (e.g. 0,0.5,0.9,1)"
        )


def _cannot_fit(method: str, mf, y_idx, data: str) -> str | None:
    """Why ``method`` cannot be fitted on these rows, or None."""
    if method not in _ONE_VS_REST:
        return None
    absent = np.flatnonzero(np.bincount(y_idx, minlength=len(mf.classes)) == 0)
    if not absent.size:
        return None
    names = ", ".join(repr(str(mf.classes[i])) for i in absent[:10])
    more = f" and {absent.size - 10} more" if absent.size > 10 else ""
    one = absent.size == 1
    return (
        f"no calibration row has the class{'' if one else 'es'} {names}{more}; {method} "
        f"calibration would give {'it' if one else 'them'} one fixed small probability on "
        f"every row. Calibrate on rows of every class{_TEMPERATURE_WAY}"
    )


#: The way on that :func:`_cannot_fit` offers, left out where temperature fails too.
_TEMPERATURE_WAY = ", or use --method temperature"


def shortfall(method: str, candidates, writable: bool = False) -> str:
    """The lead of a refusal: which criterion of the verdict's rule the fitted
    ``candidates`` miss (:func:`nbcli.reports.reliability.rejection`), for
    ``method`` (one, or ``"auto"``); ``writable``: among the calibrators that
    can be written."""
    from nbcli.reports.reliability import BRIER_WORSE

    notes = {c.note for c in candidates}
    none = "no calibrator that can be written" if writable else "no calibrator"
    if notes and notes <= {BRIER_WORSE}:
        # The log-loss did improve: the Brier score is what the rule refused.
        if method != "auto":
            return f"the {method} calibrator is not accepted: its Brier score is worse beyond the margin"
        return f"{none} is accepted: the Brier score of each is worse beyond the margin"
    if BRIER_WORSE in notes:
        return (
            f"{none} is accepted: each has a cross-fitted log-loss not lower, or a Brier "
            "score worse, beyond the margin"
        )
    lead = f"the {method} calibrator does not improve" if method != "auto" else f"{none} improves"
    return lead + " the cross-fitted log-loss beyond its margin"


def _refusal(verdict, method: str, allow_worse: bool = False) -> str:
    """The warning of a verdict that accepts no calibrator, saying why each
    fitted candidate is not taken; with ``allow_worse`` it says that the
    calibrated model is written anyway."""
    from nbcli.reports.reliability import BRIER_WORSE

    shown = []
    for c in verdict.candidates:
        if c.differences:
            d = c.differences["log_loss"]
            brier = ""
            if c.note == BRIER_WORSE:
                b = c.differences["brier"]
                brier = f", Brier score difference {b.value:+.3g}, interval from {b.lower:+.3g}"
            shown.append(
                f"{c.method} log-loss {verdict.before['log_loss']:.4g} -> {c.log_loss:.4g} "
                f"(difference {d.value:+.3g}, interval up to {d.upper:+.3g}{brier}): {c.note}"
            )
    if any(c.differences and c.never_written for c in verdict.candidates):
        which = (
            "no calibrator is taken"
            if method == "auto"
            else f"the {method} calibrator is not taken"
        )
    else:
        which = shortfall(method, [c for c in verdict.candidates if c.differences])
    if not allow_worse:
        written = "; a calibrated model would not be written"
    elif any(not c.never_written for c in verdict.candidates):
        written = "; the calibrated model is written anyway, because of --allow-worse"
    else:
        # Only a temperature run to 0 was fitted: not even --allow-worse writes it.
        written = "; no calibrated model is written, even with --allow-worse"
    return which + (f" ({'; '.join(shown)})" if shown else "") + written


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _data_rows(message: str, rows) -> str:
    """A calibrator's message with its rows (counted from 1 among the rows
    it was given, those with known labels) as data rows of the file."""
    import re

    def data_row(match):
        i = int(match.group(1)) - 1
        return f"data row {int(rows[i]) + 1}" if 0 <= i < len(rows) else match.group(0)

    return re.sub(r"\brow (\d+)", data_row, message)


def _temperature_bound(calibrator, log_proba) -> str | None:
    """``"lower"`` or ``"upper"``: the end of its search range a fitted
    temperature stopped at; None inside it."""
    if not getattr(calibrator, "at_bound_", False):
        return None
    # The search covers [spread / 1e8, spread * 1e8] around the largest
    # gap between a row's top log posterior and another finite one.
    z = log_proba - log_proba.max(axis=1, keepdims=True)
    finite = z[np.isfinite(z)]
    spread = float(-finite.min()) if finite.size else 1.0
    return "lower" if calibrator.temperature_ < spread else "upper"


def _warn_about_temperature(calibrator, log_proba, reporter: Reporter) -> bool:
    """Warn when the fitted temperature is extreme or on its search bound.

    Returns True when the optimum ran to the lower bound: every calibration
    row is predicted correctly, so the negative log-likelihood keeps falling
    as ``T`` goes to 0 and the calibrated probabilities would all be 0 or 1.
    """
    t = float(calibrator.temperature_)
    side = _temperature_bound(calibrator, log_proba)
    if side == "upper" or (side is None and t > _HOT):
        reporter.warn(
            f"the fitted temperature is T = {t:.4g}{' (the search bound)' if side else ''}: the "
            "model's log-likelihoods are extreme, and temperature scaling flattens them to "
            "near-uniform probabilities (as with Gaussian naive Bayes and a tiny "
            "--var-smoothing); refit with a larger --var-smoothing, or use --method isotonic"
        )
    elif side == "lower" or t < _COLD:
        reporter.warn(
            f"the fitted temperature is T = {t:.4g}{' (the search bound)' if side else ''}: "
            + (
                "every calibration row is already predicted correctly, so the NLL-optimal "
                "temperature runs to 0 and gives 0/1 probabilities"
                if side
                else "temperature scaling makes the probabilities nearly 0 or 1"
            )
        )
    return side == "lower"
