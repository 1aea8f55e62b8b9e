"""Scoring models on labelled data: ``evaluate`` (one model) and ``compare`` (two)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from nbcli.errors import NbcliError
from nbcli.io.request import DataRequest
from nbcli.workflows.engine import Engine, Reporter
from nbcli.workflows.inputs import inputs_of
from nbcli.workflows.scoring import score
from nbcli.workflows.settings import ScoreSettings

if TYPE_CHECKING:
    from nbcli.reports.comparison import ComparisonReport
    from nbcli.reports.evaluation import EvaluationReport


def evaluate(
    model: str,
    request: DataRequest,
    scoring: ScoreSettings | None = None,
    *,
    reporter: Reporter | None = None,
    engine: Engine | None = None,
    pos_label: str | None = None,
) -> EvaluationReport:
    """Score the model file ``model`` on the labelled data of ``request``.

    Parameters
    ----------
    model : str
        Path of a model file written by ``nbcli fit``.
    request : DataRequest
        Labelled data (CSV, NPZ, Parquet, ``-`` for stdin) and how to read
        it. Its ``sha256``: give the SHA-256 of ``model`` and the data in
        the report's ``inputs``; False gives their paths alone (hashing
        reads every byte of the data once more: a third of a second for
        190 MB here).
    scoring : ScoreSettings, optional
        ``bootstrap`` resamples of the intervals (0: no intervals), their
        ``confidence`` level in (0, 1), the ``seed`` of the bootstrap, and
        ``bins``: equal-width confidence bins of the calibration summary, at
        most the number of rows (default: 10, or one per row when there are
        fewer).
    engine : Engine, optional
        Where the work runs; only the local engine exists so far.
    pos_label : str, optional
        The positive class of a two-class model (``--pos-label``): the one
        average precision and the ``binary`` precision, recall and F1 are of.

    Returns
    -------
    nbcli.reports.evaluation.EvaluationReport
        Its ``warnings`` say what the reader of the figures should know.

    Raises
    ------
    NbcliError
        For an unreadable model or data file.

    Examples
    --------
    >>> from nbcli.io.modelfile import save_model
    >>> from nbcli.io.request import DataRequest
    >>> from nbcli.models import GaussianNB
    >>> from nbcli.workflows.evaluate import evaluate
    >>> from nbcli.workflows.settings import ScoreSettings
    >>> from nbcli.workflows.train import train
    >>> save_model(train(GaussianNB(), DataRequest.of("sample_data/iris_train.csv")).model_file, "iris.npz")
    >>> report = evaluate("iris.npz", DataRequest.of("sample_data/iris_test.csv"), ScoreSettings(bootstrap=0))
    >>> round(report.metrics["accuracy"].value, 3), report.to_dict()["schema"]
    (0.967, 'nbcli.evaluation')
    """
    from nbcli.io.modelfile import load_model
    from nbcli.reports.evaluation import build_evaluation

    figures = scoring or ScoreSettings()
    data, read, bins = request.path, request, figures.bins
    bootstrap, confidence, seed = figures.bootstrap, figures.confidence, figures.seed
    mf = load_model(model)
    check_pos_label(mf.classes, pos_label, model)
    inputs = inputs_later(model=model, data=data, sha256=request.sha256)
    scores = score(mf, data, read=read, reporter=reporter, missing_option=True, posteriors=True)
    coding = check_labels_known(mf.classes, scores.y_true, model, data)
    n_rows = len(scores.y_true)
    if bins is None:
        bins = max(1, min(10, n_rows))
    elif not isinstance(bins, int):
        raise NbcliError("evaluate takes a number of --bins")
    elif bins > n_rows:
        raise NbcliError(
            f"--bins {bins:,}: more bins than the {n_rows:,} rows scored in {data}; "
            f"give at most {n_rows:,}"
        )
    settings = {
        "bootstrap_resamples": bootstrap,
        "confidence": confidence,
        "seed": seed,
        "bins": bins,
    }
    assert scores.proba is not None
    report = build_evaluation(
        mf.classes,
        scores.y_true,
        scores.proba,
        predicted=scores.predicted,
        n_resamples=bootstrap,
        confidence=confidence,
        seed=seed,
        bins=bins,
        training_match=scores.training_match,
        inputs=inputs(),
        settings=settings,
        coding=coding,
        pos_label=pos_label,
    )
    if scores.n_left_out:
        report.warnings.append(left_out_warning(scores.n_left_out, n_rows))
    note_missing_spellings(report, data)
    return report


def check_pos_label(classes, pos_label: str | None, model: str) -> None:
    """Refuse, before any row is read, a ``--pos-label`` that is not one of
    the two classes of the model file ``model``."""
    from nbcli.reports.evaluation import positive_column

    if pos_label is None:
        return
    try:
        positive_column(list(classes), pos_label)
    except ValueError as exc:
        raise NbcliError(f"--pos-label {pos_label}: {model}: {exc}") from None


def _score_named(mf, path: str, which: str, data: str, read, reporter):
    """:func:`score` of one of compare's models; its refusal names the model."""
    try:
        return score(mf, data, read=read, reporter=reporter, missing_option=True, posteriors=True)
    except NbcliError as exc:
        raise NbcliError(f"{exc} (model {which}, {path})", exc.exit_code) from None


def note_missing_spellings(report, data: str) -> None:
    """Warn when labels the model never saw are spelled as missing values (``NA``...)."""
    from nbcli.io.cells import missing_spelling_note

    note = missing_spelling_note(report.unseen_labels)
    if note:
        report.warnings.append(f"{data}: {note}")


def inputs_later(*, sha256: bool = True, **paths):
    """:func:`~nbcli.workflows.inputs.inputs_of` for ``paths``, hashed on a thread
    while the data is scored when every path is a regular file (hashlib releases
    the GIL); the returned function gives the inputs, or raises what hashing raised.

    Standard input, pipes and devices are hashed when the function is called,
    as before, from the bytes the reader kept. ``sha256=False`` gives the
    paths alone, at once.
    """
    import os

    if not sha256:
        names_only = inputs_of(sha256=False, **paths)
        return lambda: names_only
    names = [p for v in paths.values() for p in (v if isinstance(v, (list, tuple)) else [v])]
    if not all(p != "-" and os.path.isfile(p) for p in names):
        return lambda: inputs_of(**paths)
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nbcli-sha256")
    future = pool.submit(inputs_of, **paths)
    pool.shutdown(wait=False)
    return future.result


def left_out_warning(n_left_out: int, n_scored: int) -> str:
    """What the report says of the rows ``--missing drop`` left out of it."""
    rows = "row" if n_left_out == 1 else "rows"
    return (
        f"{n_left_out:,} {rows} with a missing value left out (--missing drop): "
        f"the figures are over the other {n_scored:,} rows"
    )


def check_labels_known(classes, y_true, model: str, data: str):
    """Refuse test data none of whose labels is a class of the model; return the
    labels' :class:`~nbcli.reports.metrics.LabelCoding`.

    Such a run would score every row as an error (accuracy 0): the labels
    are written differently (``1.0`` against integer classes) or the target
    column is the wrong one. When only some labels are unknown, the report
    warns instead.

    Raises
    ------
    NbcliError
        Naming the labels found and the classes the model knows.
    """
    from nbcli.reports.metrics import encode_labels, json_label

    coding = encode_labels(classes, y_true)
    if len(y_true) == 0 or coding.n_unseen < len(y_true):
        return coding
    from nbcli.terminal import shown_label

    def listed(labels) -> str:
        text = ", ".join(shown_label(json_label(x)) for x in list(labels)[:10])
        return text + (f" and {len(labels) - 10} more" if len(labels) > 10 else "")

    raise NbcliError(
        f"{data}: none of its labels ({listed(coding.unseen_labels)}) is a class of {model}, "
        f"which knows {listed(list(classes))}; check --target and that the labels are "
        "written as in the training data"
    )


def compare(
    models: Sequence[str],
    request: DataRequest,
    scoring: ScoreSettings | None = None,
    *,
    reporter: Reporter | None = None,
    engine: Engine | None = None,
) -> ComparisonReport:
    """Compare two model files, A then B, on the same labelled rows.

    Parameters
    ----------
    models : sequence of two str
        Paths of the model files A and B.
    request : DataRequest
        Labelled data scored by both, as for :func:`evaluate`.
    scoring : ScoreSettings, optional
        ``bootstrap``, ``confidence`` and ``seed`` as for :func:`evaluate`.

    Returns
    -------
    nbcli.reports.comparison.ComparisonReport

    Raises
    ------
    NbcliError
        Unless exactly two models are given; when the two models read
        different rows or labels from ``data``.

    Examples
    --------
    >>> from nbcli.io.modelfile import save_model
    >>> from nbcli.io.request import DataRequest
    >>> from nbcli.models import GaussianNB
    >>> from nbcli.workflows.evaluate import compare
    >>> from nbcli.workflows.settings import ScoreSettings
    >>> from nbcli.workflows.train import train
    >>> iris = DataRequest.of("sample_data/iris_train.csv")
    >>> save_model(train(GaussianNB(), iris).model_file, "a.npz")
    >>> save_model(train(GaussianNB(var_smoothing=0.1), iris).model_file, "b.npz")
    >>> report = compare(["a.npz", "b.npz"], DataRequest.of("sample_data/iris_test.csv"), ScoreSettings(bootstrap=0))
    >>> report.to_dict()["schema"], report.n_samples
    ('nbcli.comparison', 30)
    """
    from nbcli.io.modelfile import load_model
    from nbcli.reports.comparison import build_comparison

    if len(models) != 2:
        raise NbcliError(f"compare needs exactly two --model files (A and B), got {len(models)}")
    figures = scoring or ScoreSettings()
    data, read = request.path, request
    bootstrap, confidence, seed = figures.bootstrap, figures.confidence, figures.seed
    a, b = (load_model(m) for m in models)
    inputs = inputs_later(models=list(models), data=data, sha256=request.sha256)
    sa, sb = (
        _score_named(mf, path, which, data, read, reporter)
        for mf, path, which in ((a, models[0], "A"), (b, models[1], "B"))
    )
    assert sa.proba is not None and sb.proba is not None
    if len(sa.y_true) != len(sb.y_true) or any(
        str(p) != str(q) for p, q in zip(sa.y_true, sb.y_true)
    ):
        targets = (a.target, b.target)
        if sa.n_left_out or sb.n_left_out:
            why = " (under --missing drop each leaves out the rows missing one of its own features)"
        elif (read is None or read.target is None) and targets[0] != targets[1]:
            why = (
                f": model A was trained on the target {targets[0]!r} and model B on "
                f"{targets[1]!r}; compare models of one target"
            )
        else:
            why = " (check --target)"
        raise NbcliError(f"{data}: the two models read different rows or labels{why}")
    for path, mf, scores in ((models[0], a, sa), (models[1], b, sb)):
        check_labels_known(mf.classes, scores.y_true, path, data)
    settings = {"bootstrap_resamples": bootstrap, "confidence": confidence, "seed": seed}
    report = build_comparison(
        a.classes,
        sa.proba,
        b.classes,
        sb.proba,
        sa.y_true,
        n_resamples=bootstrap,
        confidence=confidence,
        seed=seed,
        inputs=inputs(),
        settings=settings,
    )
    if sa.n_left_out:
        report.warnings.append(left_out_warning(sa.n_left_out, len(sa.y_true)))
    trained = [w for w, s in (("A", sa), ("B", sb)) if s.training_match]
    if trained:
        # The model scored on its own training rows looks better than it is.
        who = "models A and B were" if len(trained) == 2 else f"model {trained[0]} was"
        report.warnings.append(
            f"{data}: these are the rows {who} trained on; a comparison on them favours "
            "the model that fits its training data more closely, not the one that does "
            "better on new data"
        )
    return report
