"""``nbcli cv``: k-fold cross-validation from per-fold statistics (no refit)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

import typer

from nbcli.cli import common, table_options
from nbcli.cli import text_options as text_opts
from nbcli.cli.evaluate_cmd import BOOTSTRAP, CONFIDENCE, FAIL_OVER, FAIL_UNDER
from nbcli.cli.fit_cmd import _MODEL_TYPES, _with_hyperparameter_options
from nbcli.io.limits import MAX_REPEATS

FOLDS = typer.Option(
    "--folds",
    "-k",
    min=2,
    help="Number of stratified folds (default 10; not with --fold-column, whose values are "
    "the folds).",
)
FOLD_COLUMN = typer.Option(
    "--fold-column", help="Column whose values are the folds (one fold per distinct value)."
)
GROUP_COLUMN = typer.Option(
    "--group-column", help="Column of groups: the rows of a group stay in one fold."
)
REPEATS = typer.Option(
    "--repeats",
    min=1,
    max=MAX_REPEATS,
    help=f"Independent fold plans (repeated k-fold), 1 to {MAX_REPEATS}.",
)
SEED = typer.Option(
    "--seed", min=0, help="Seed of the fold plan and the bootstrap: same seed, same folds."
)
DATA = typer.Option(
    "--data",
    "-d",
    help="Labelled data (CSV, NPZ, Parquet, - for stdin); a folder, a quoted glob or several "
    "--data files of CSV/Parquet parts are one data set.",
)
MODEL_TYPE = typer.Option(
    "--model", "-m", help="Model type (or 'model' in --config).", case_sensitive=False
)
CONFIG = typer.Option(
    "--config",
    "-c",
    help="TOML file with model, [hyperparameters], [data] and [text]; flags override it.",
)


POS_LABEL = common.pos_label_option(
    "every fold's and the pooled average precision, and the pooled binary precision, "
    "recall and F1, are of it"
)


@dataclass(frozen=True)
class FoldOptions:
    """The fold options of ``cv`` and ``tune``: ``--folds``, ``--fold-column``,
    ``--group-column``, ``--repeats``, ``--seed``."""

    option_group: ClassVar[bool] = True
    folds: int | None = None
    fold_column: str | None = None
    group_column: str | None = None
    repeats: int = 1
    seed: int = 0

    def settings(self):
        """The :class:`~nbcli.workflows.settings.FoldSettings` of these options.

        Raises
        ------
        NbcliError
            For ``--folds`` with ``--fold-column``: a count the folds of the
            column would not follow.
        """
        from nbcli.errors import NbcliError
        from nbcli.workflows.settings import FoldSettings

        if self.folds is not None and self.fold_column is not None:
            raise NbcliError(
                f"give --folds or --fold-column, not both: the folds of --fold-column "
                f"{self.fold_column} are its values, so --folds {self.folds} would not be used"
            )
        return FoldSettings(
            10 if self.folds is None else self.folds,
            self.fold_column,
            self.group_column,
            self.repeats,
            self.seed,
        )


#: The fold options of a command that gives none.
TEN_FOLDS = FoldOptions()

#: The fold options in place of a command's ``folds`` parameter (one :class:`FoldOptions`).
with_fold_options = common.option_group(
    "folds",
    FoldOptions,
    (
        ("folds", int | None, FOLDS, None),
        ("fold_column", str | None, FOLD_COLUMN, None),
        ("group_column", str | None, GROUP_COLUMN, None),
        ("repeats", int, REPEATS, 1),
        ("seed", int, SEED, 0),
    ),
)


def with_search_options(command):
    """The option groups ``cv`` and ``tune`` share: engine, reading, text
    columns, column selection and folds (in that order in their help)."""
    for group in (
        with_fold_options,
        table_options.with_column_options,
        text_opts.with_text_options,
        common.with_read_options,
        common.with_engine_options,
    ):
        command = group(command)
    return command


@with_search_options
def cv(
    data_files: Annotated[list[str], DATA],
    model: Annotated[_MODEL_TYPES | None, MODEL_TYPE] = None,  # type: ignore[valid-type]
    folds: FoldOptions = TEN_FOLDS,
    columns: table_options.ColumnOptions = table_options.ALL_COLUMNS,
    config: Annotated[str | None, CONFIG] = None,
    bootstrap: Annotated[int, BOOTSTRAP] = 1000,
    confidence: Annotated[float, CONFIDENCE] = 0.95,
    bins: Annotated[
        int,
        typer.Option(
            "--bins", min=1, help="Equal-width confidence bins of the calibration summary."
        ),
    ] = 10,
    oof_output: Annotated[
        str | None,
        typer.Option(
            "--oof-output",
            help=(
                "Write the out-of-fold predictions here: the data row (from 1), --keep columns, "
                "the true label, the fold, then as predict --proba."
            ),
        ),
    ] = None,
    keep: Annotated[
        list[str] | None,
        typer.Option(
            "--keep",
            help="Input column(s) to copy next to the out-of-fold predictions, e.g. an ID.",
        ),
    ] = None,
    json_out: Annotated[str | None, common.JSON] = None,
    force: Annotated[bool, common.FORCE] = False,
    pos_label: Annotated[str | None, POS_LABEL] = None,
    fail_under: Annotated[list[str] | None, FAIL_UNDER] = None,
    fail_over: Annotated[list[str] | None, FAIL_OVER] = None,
    read: common.ReadOptions = common.READING,
    quiet: Annotated[bool, common.QUIET] = False,
    engine: common.EngineOptions = common.LOCAL,
    text: text_opts.TextOptions = text_opts.NO_TEXT,
    **hyperparameter_flags,
):
    """Cross-validate a model type: per-fold and pooled out-of-fold metrics with bootstrap
    intervals, confusion matrix, per-class table and calibration summary.

    Every fold's model is the merge of the other folds' statistics, gathered in one
    pass: no refit. Exit codes: 0 ok, 2 bad command or input, 3 a threshold missed.
    Example: nbcli cv --model gaussian --data sample_data/iris_train.csv --folds 5;
    with text: nbcli cv -m multinomial -d sample_data/austen_train.csv --text text --min-df 2.
    A folder or glob of parts, or --engine dask, is read part by part: the same folds and
    per-fold figures as the parts joined into one file.
    """
    data_list = list(data_files)
    data = common.data_name(data_list)
    from dataclasses import replace

    from nbcli.cli.fit_cmd import _estimator
    from nbcli.cli.options import read_config, split_list
    from nbcli.cli.progress import ConsoleReporter
    from nbcli.cli.requests import data_request
    from nbcli.errors import NbcliError
    from nbcli.io.atomic import check_outputs, writes_to_stdout
    from nbcli.reports.thresholds import EVALUATION_METRICS
    from nbcli.workflows.cv import cross_validate
    from nbcli.workflows.settings import ScoreSettings

    thresholds = common.parse_thresholds(fail_under, fail_over, EVALUATION_METRICS, bootstrap)
    carry = tuple(split_list(keep) or ())
    if carry and oof_output is None:
        raise NbcliError(
            "--keep copies columns into the out-of-fold predictions; give --oof-output"
        )
    if writes_to_stdout(json_out) and writes_to_stdout(oof_output):
        raise NbcliError("--json and --oof-output cannot both go to stdout; send one to a file")
    check_outputs(
        [("--json", json_out), ("--oof-output", oof_output)],
        [*(("--data", d) for d in data_list), ("--config", config)],
        kinds={"--oof-output": "predictions"},
        force=force,
    )
    cfg = read_config(config)
    estimator, params = _estimator(model, cfg, config, hyperparameter_flags)
    request = data_request(locals(), cfg, config, params)
    prior = params.get(estimator.prior_param)
    with common.engine_for(data_list, engine) as eng:
        report = cross_validate(
            estimator,
            request if eng is not None else request.reading(data=(data,)),
            replace(folds.settings(), carry=carry),
            ScoreSettings(bootstrap, confidence, folds.seed, bins, pos_label=pos_label),
            priors_by_label=prior if isinstance(prior, dict) else None,
            oof_output=oof_output,
            reporter=ConsoleReporter(quiet),
            engine=eng,
        )
    common.show_warnings(report.warnings)
    common.record_thresholds(report, thresholds)
    common.emit_report(report, json_out, quiet=quiet, stdout_has_data=oof_output == "-")
    common.enforce_thresholds(report.threshold_values(), thresholds)
    return 0


cv = _with_hyperparameter_options(cv)
