"""Measuring how well a model's posteriors are calibrated, and fitting a repair."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from nbcli.errors import NbcliError

if TYPE_CHECKING:
    from nbcli.calibration import Calibrator
    from nbcli.io.request import DataRequest
from nbcli.workflows.engine import Engine, Reporter
from nbcli.workflows.inputs import inputs_of
from nbcli.workflows.scoring import score
from nbcli.workflows.settings import ScoreSettings

#: Temperatures beyond these are worth a word even off the search bounds.
_HOT, _COLD = 100.0, 0.01

METHODS = ("temperature", "isotonic", "none")


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
    """

    report: Any
    model: Any
    fitted: bool
    certain: bool


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
    method: str = "temperature",
    allow_training_data: bool = False,
    reporter: Reporter | None = None,
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
        ``allow_training_data``) and how to read it.
    scoring : ScoreSettings, optional
        ``bootstrap``, ``confidence`` and ``seed`` of the intervals;
        ``bins``: number of confidence bins (at most the rows with labels
        the model knows), or their edges in [0, 1] (default: 10, or one per
        row when there are fewer); ``strategy``: equal-width bins
        (``uniform``) or equal counts (``quantile``).
    method : {"temperature", "isotonic", "none"}
        The repair; ``none`` only measures.

    Returns
    -------
    CalibrationResult

    Raises
    ------
    NbcliError
        For the model's training rows (without ``allow_training_data``), no
        label the model knows, fewer than 2 such rows, or data the
        calibrator cannot be fitted on.
    """
    from nbcli.io.modelfile import load_model
    from nbcli.reports.reliability import RecalibrationReport, build_calibration
    from nbcli.workflows.evaluate import left_out_warning, note_missing_spellings

    figures = scoring or ScoreSettings()
    data, read, bins, strategy = request.path, request, figures.bins, figures.strategy
    bootstrap, confidence, seed = figures.bootstrap, figures.confidence, figures.seed
    if method not in METHODS:
        raise NbcliError(f"unknown calibration method {method!r}; choose one of {METHODS}")
    reporter = reporter or Reporter()
    mf = load_model(model)
    current = cast("Calibrator | None", mf.calibrator)
    if current is not None and method != "none":
        reporter.warn(
            f"{model} already carries a {current.kind} calibrator, which the new one replaces; "
            "'before' shows the model with its old calibrator, 'after' applies the new "
            "calibrator to the model's own posteriors"
        )
    # Score once without any calibrator the file carries: a new calibrator is
    # fitted on the model's own posteriors and replaces the old one, while
    # "before" shows the model as it stands (old calibrator applied).
    mf.calibrator = None
    scores = score(mf, data, read=read, reporter=reporter, missing_option=True)
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
        raise NbcliError(
            f"none of the {len(y_true)} labels in {data} are classes of the model "
            f"({', '.join(str(c) for c in mf.classes.tolist()[:10])}"
            f"{', ...' if len(mf.classes) > 10 else ''}); check --target"
        )
    if method == "isotonic":
        absent = np.flatnonzero(np.bincount(y_idx, minlength=len(mf.classes)) == 0)
        if absent.size:
            names = ", ".join(repr(str(mf.classes[i])) for i in absent[:10])
            more = f" and {absent.size - 10} more" if absent.size > 10 else ""
            one = absent.size == 1
            raise NbcliError(
                f"{data}: no calibration row has the class{'' if one else 'es'} {names}{more}; "
                f"isotonic calibration would give {'it' if one else 'them'} probability 0 on "
                "every row. Calibrate on rows of every class, or use --method temperature"
            )
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
    inputs = inputs_of(model=model, data=data)

    def measure(log_proba):
        try:
            report = build_calibration(
                mf.classes,
                y_true,
                np.exp(log_proba),
                bins=bins,
                strategy=strategy,
                n_resamples=bootstrap,
                confidence=confidence,
                seed=seed,
                inputs=inputs,
                settings=settings,
            )
        except ValueError as exc:
            raise NbcliError(f"{data}: {exc}") from None
        if scores.n_left_out:
            report.warnings.append(left_out_warning(scores.n_left_out, len(y_true)))
        note_missing_spellings(report, data)
        return report

    before = measure(raw_logp if current is None else current.transform(raw_logp))
    if method == "none":
        return CalibrationResult(report=before, model=mf, fitted=False, certain=False)

    from nbcli.calibration import CALIBRATORS, TemperatureScaling

    if rows.size < 2:
        raise NbcliError(
            f"{data}: too few rows with labels the model knows ({rows.size}) to fit a calibrator"
        )
    calibrator = CALIBRATORS[method]()
    try:
        calibrator.fit(raw_logp[rows], y_idx)
    except ValueError as exc:
        raise NbcliError(
            f"{data}: cannot fit the {method} calibrator: {_data_rows(str(exc), rows)}"
        ) from None
    certain = isinstance(calibrator, TemperatureScaling) and _warn_about_temperature(
        calibrator, raw_logp[rows], reporter
    )
    after = measure(calibrator.transform(raw_logp))
    info: dict[str, Any] = {
        "method": method,
        "fitted_on": inputs["data"],
        "n_samples": int(rows.size),
        **calibrator.describe(),
    }
    report = RecalibrationReport(
        before=before, after=after, calibrator=info, inputs=inputs, settings=settings
    )
    reporter.advise(
        "the 'after' figures are measured on the rows the calibrator was fitted on; "
        "check the calibrated model on a third, untouched split with nbcli evaluate"
    )
    mf.calibrator, mf.calibration_info = calibrator, info
    return CalibrationResult(report=report, model=mf, fitted=True, certain=certain)


def _data_rows(message: str, rows) -> str:
    """A calibrator's message with its rows (counted from 1 among the rows
    it was given, those with known labels) as data rows of the file."""
    import re

    def data_row(match):
        i = int(match.group(1)) - 1
        return f"data row {int(rows[i]) + 1}" if 0 <= i < len(rows) else match.group(0)

    return re.sub(r"\brow (\d+)", data_row, message)


def _warn_about_temperature(calibrator, log_proba, reporter: Reporter) -> bool:
    """Warn when the fitted temperature is extreme or on its search bound.

    Returns True when the optimum ran to the lower bound: every calibration
    row is predicted correctly, so the negative log-likelihood keeps falling
    as ``T`` goes to 0 and the calibrated probabilities would all be 0 or 1.
    """
    t = float(calibrator.temperature_)
    side = None
    if getattr(calibrator, "at_bound_", False):
        # The search covers [spread / 1e8, spread * 1e8] around the largest
        # gap between a row's top log posterior and another finite one.
        z = log_proba - log_proba.max(axis=1, keepdims=True)
        finite = z[np.isfinite(z)]
        spread = float(-finite.min()) if finite.size else 1.0
        side = "lower" if t < spread else "upper"
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
