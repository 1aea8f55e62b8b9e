"""``nbcli calibrate``: measure and repair over-confident posteriors."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from nbcli.cli import common
from nbcli.cli.evaluate_cmd import BOOTSTRAP, CONFIDENCE, FAIL_OVER, FAIL_UNDER, SEED
from nbcli.errors import NbcliError


class Method(str, Enum):
    temperature = "temperature"
    isotonic = "isotonic"
    none = "none"


class Strategy(str, Enum):
    uniform = "uniform"
    quantile = "quantile"


def parse_bins(text: str):
    """``"10"`` -> 10 bins; ``"0,0.9,0.99,1"`` -> explicit edges."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    try:
        if len(parts) == 1:
            n = int(parts[0])
            if n < 1:
                raise ValueError
            return n
        return [float(p) for p in parts]
    except ValueError:
        raise NbcliError(
            f"--bins must be a number of bins (e.g. 10) or increasing edges in [0, 1] "
            f"(e.g. 0,0.9,0.99,0.999,1); got {text!r}"
        ) from None


def known_rows(classes, y_true):
    """Indices of rows whose label the model knows, and those labels' class indices."""
    import numpy as np

    position = {str(c): i for i, c in enumerate(classes.tolist())}
    idx = np.array([position.get(str(v), -1) for v in np.asarray(y_true).tolist()], dtype=np.intp)
    rows = np.flatnonzero(idx >= 0)
    return rows, idx[rows]


def calibrate(
    model: Annotated[str, common.MODEL],
    data: Annotated[
        str, typer.Option("--data", "-d", help="Held-out labelled data (not the training data).")
    ],
    target: Annotated[str | None, common.TARGET] = None,
    method: Annotated[
        Method,
        typer.Option(
            "--method",
            help="Repair: temperature scaling (one T > 0), isotonic (one-vs-rest maps), or none (measure only).",
            case_sensitive=False,
        ),
    ] = Method.temperature,
    output: Annotated[
        str | None,
        typer.Option(
            "--output", "-o", help="Write a model file that carries the fitted calibrator."
        ),
    ] = None,
    bins: Annotated[
        str,
        typer.Option(
            "--bins",
            help="Number of confidence bins, or explicit edges such as 0,0.9,0.99,0.999,1.",
        ),
    ] = "10",
    strategy: Annotated[
        Strategy,
        typer.Option(
            "--strategy",
            help="uniform: equal-width bins; quantile: equal counts.",
            case_sensitive=False,
        ),
    ] = Strategy.uniform,
    plot: Annotated[
        str | None,
        typer.Option(
            "--plot",
            help="Also draw the reliability diagram to FILE.png or FILE.svg (needs matplotlib).",
        ),
    ] = None,
    allow_training_data: Annotated[
        bool,
        typer.Option(
            "--allow-training-data", help="Calibrate even on the rows the model was trained on."
        ),
    ] = False,
    bootstrap: Annotated[int, BOOTSTRAP] = 1000,
    confidence: Annotated[float, CONFIDENCE] = 0.95,
    seed: Annotated[int, SEED] = 0,
    json_out: Annotated[str | None, common.JSON] = None,
    fail_under: Annotated[list[str] | None, FAIL_UNDER] = None,
    fail_over: Annotated[list[str] | None, FAIL_OVER] = None,
    delimiter: Annotated[str | None, common.DELIMITER] = None,
    chunk_size: Annotated[int | None, common.CHUNK_SIZE] = None,
    x_key: Annotated[str, common.X_KEY] = "X",
    y_key: Annotated[str, common.Y_KEY] = "y",
    quiet: Annotated[bool, common.QUIET] = False,
):
    """Reliability of the model's posteriors on held-out data, and a repair.

    Prints the reliability table (confidence bins: count, claimed confidence,
    achieved accuracy, gap), ECE, MCE, Brier score and log-loss, then fits the
    calibrator and shows the same after it. With --output, writes a model file
    that carries the calibrator; predict --proba, evaluate and calibrate apply it.
    Example: nbcli calibrate -m digits.npz -d sample_data/digits_calib.csv -o digits-cal.npz
    """
    import numpy as np

    from nbcli.cli.console import warn
    from nbcli.cli.evaluate_cmd import _enforce, _parse_thresholds, collect_scores, inputs_of
    from nbcli.reports.reliability import RecalibrationReport, build_calibration
    from nbcli.reports.thresholds import CALIBRATION_METRICS

    edges_or_n = parse_bins(bins)
    if isinstance(edges_or_n, list) and strategy is Strategy.quantile:
        raise NbcliError("--strategy quantile makes its own edges; give --bins as a number with it")
    thresholds = _parse_thresholds(fail_under, fail_over, CALIBRATION_METRICS)
    if output is not None and method is Method.none:
        raise NbcliError("--output needs a calibrator; choose --method temperature or isotonic")
    from nbcli.io.atomic import check_outputs

    check_outputs(
        [("--output", output), ("--json", json_out), ("--plot", plot)],
        [("--model", model), ("--data", data)],
        models=["--output"],
    )
    if plot is not None:
        check_plot(plot)

    from nbcli.io.modelfile import load_model, save_model

    mf = load_model(model)
    current = mf.calibrator
    if current is not None and method is not Method.none:
        warn(
            f"{model} already carries a {current.kind} calibrator, which the new one replaces; "
            "'before' shows the model with its old calibrator, 'after' applies the new "
            "calibrator to the model's own posteriors"
        )
    # Score once without any calibrator the file carries: a new calibrator is
    # fitted on the model's own posteriors and replaces the old one, while
    # "before" shows the model as it stands (old calibrator applied).
    mf.calibrator = None
    raw_logp, y_true, match = collect_scores(
        mf,
        data,
        target=target,
        delimiter=delimiter,
        chunk_size=chunk_size,
        x_key=x_key,
        y_key=y_key,
        quiet=quiet,
    )
    mf.calibrator = current
    if match and not allow_training_data:
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
    settings = {
        "bootstrap_resamples": bootstrap,
        "confidence": confidence,
        "seed": seed,
        "bins": edges_or_n,
        "strategy": strategy.value,
        "method": method.value,
    }
    inputs = inputs_of(model=model, data=data)

    def measure(log_proba):
        try:
            return build_calibration(
                mf.classes,
                y_true,
                np.exp(log_proba),
                bins=edges_or_n,
                strategy=strategy.value,
                n_resamples=bootstrap,
                confidence=confidence,
                seed=seed,
                inputs=inputs,
                settings=settings,
            )
        except ValueError as exc:
            raise NbcliError(f"{data}: {exc}") from None

    before = measure(raw_logp if current is None else current.transform_log(raw_logp))
    fitted = None
    certain = False  # temperature scaling ran to T -> 0: every prediction would be 0/1
    if method is Method.none:
        report = before
    else:
        from nbcli.calibration import CALIBRATORS

        if rows.size < 2:
            raise NbcliError(
                f"{data}: too few rows with labels the model knows ({rows.size}) to fit a calibrator"
            )
        calibrator = CALIBRATORS[method.value]()
        try:
            if method is Method.temperature:
                calibrator.fit(raw_logp[rows], y_idx)
            else:
                calibrator.fit_log(raw_logp[rows], y_idx)
        except ValueError as exc:
            raise NbcliError(f"{data}: cannot fit the {method.value} calibrator: {exc}") from None
        if method is Method.temperature:
            certain = _warn_about_temperature(calibrator, raw_logp[rows])
        after = measure(calibrator.transform_log(raw_logp))
        info = {"method": method.value, "fitted_on": inputs["data"], "n_samples": int(rows.size)}
        if method is Method.temperature:
            info["temperature"] = float(calibrator.temperature_)
        report = RecalibrationReport(
            before=before, after=after, calibrator=info, inputs=inputs, settings=settings
        )
        fitted = (calibrator, info)
        if not quiet:
            warn(
                "the 'after' figures are measured on the rows the calibrator was fitted on; "
                "check the calibrated model on a third, untouched split with nbcli evaluate"
            )

    for w in report.warnings:
        warn(w)
    if certain and output is not None:
        # Show what was measured, write nothing, and say why.
        common.emit_report(report, None, quiet=quiet, stdout_has_data=json_out == "-")
        raise NbcliError(
            f"{data}: the calibration data has no errors, so temperature scaling would make "
            "every prediction certain; use more or harder held-out data (nothing was written)"
        )
    diagram = None
    if plot is not None:
        # Drawn before anything is written, so that a failure leaves no output behind.
        from pathlib import Path

        from nbcli.render.plot import reliability_image

        bins_after = None if fitted is None else report.after.diagram.to_dict()["bins"]
        diagram = reliability_image(before.diagram.to_dict()["bins"], bins_after, Path(plot).suffix)
    if fitted is not None and output is not None:
        mf.calibrator, mf.calibration_info = fitted
        save_model(mf, output)
    common.emit_report(report, json_out, quiet=quiet)
    if diagram is not None:
        from nbcli.io.atomic import atomic_write

        with atomic_write(plot, "wb") as f:
            f.write(diagram)
    if output is not None and not quiet and json_out != "-":
        import sys

        sys.stderr.write(f"wrote {output}\n")
    _enforce(report.threshold_values(), thresholds)
    return 0


#: Temperatures beyond these are worth a word even off the search bounds.
_HOT, _COLD = 100.0, 0.01


def _warn_about_temperature(calibrator, log_proba) -> bool:
    """Warn when the fitted temperature is extreme or on its search bound.

    Returns True when the optimum ran to the lower bound: every calibration
    row is predicted correctly, so the negative log-likelihood keeps falling
    as ``T`` goes to 0 and the calibrated probabilities would all be 0 or 1.
    """
    import numpy as np

    from nbcli.cli.console import warn

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
        warn(
            f"the fitted temperature is T = {t:.4g}{' (the search bound)' if side else ''}: the "
            "model's log-likelihoods are extreme, and temperature scaling flattens them to "
            "near-uniform probabilities (as with Gaussian naive Bayes and a tiny "
            "--var-smoothing); refit with a larger --var-smoothing, or use --method isotonic"
        )
    elif side == "lower" or t < _COLD:
        warn(
            f"the fitted temperature is T = {t:.4g}{' (the search bound)' if side else ''}: "
            + (
                "every calibration row is already predicted correctly, so the NLL-optimal "
                "temperature runs to 0 and gives 0/1 probabilities"
                if side
                else "temperature scaling makes the probabilities nearly 0 or 1"
            )
        )
    return side == "lower"


def check_plot(path: str) -> None:
    """Refuse, before any work, a ``--plot`` path nbcli cannot draw to.

    Raises
    ------
    NbcliError
        For an extension other than .png or .svg, or when matplotlib is not
        installed.
    """
    import importlib.util
    from pathlib import Path

    suffix = Path(path).suffix
    if suffix.lower() not in (".png", ".svg"):
        raise NbcliError(
            f"--plot {path}: cannot draw a plot with extension {suffix!r}; use .png or .svg"
        )
    try:
        found = importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise NbcliError(f"--plot {path}: drawing needs matplotlib: pip install 'nbcli[plot]'")
