"""``nbcli predict``: apply a model file to one file (to stdout or a file) or to many (in parallel)."""

from __future__ import annotations

import os
from typing import Annotated, Literal

import typer

from nbcli.cli import common, table_options
from nbcli.errors import PARTIAL_FAILURE, NbcliError


@common.with_engine_options
@common.with_read_options
def predict(
    model: Annotated[str, common.MODEL],
    data: Annotated[
        list[str],
        common.data_option(
            "Input file(s): repeat the option, give a quoted glob such as 'in/*.csv' or a folder "
            "of CSV/Parquet parts; - for stdin."
        ),
    ],
    output: Annotated[
        str | None,
        common.output_option("Write the predictions CSV here (one input). Default: stdout."),
    ] = None,
    output_dir: Annotated[
        str | None,
        typer.Option(
            "--output-dir",
            help="Batch mode: write <name>.pred.csv for each input into this folder.",
        ),
    ] = None,
    output_format: Annotated[
        Literal["csv", "parquet"] | None,
        typer.Option(
            "--output-format",
            help="Batch mode: write <name>.pred.csv (the default) or <name>.pred.parquet. "
            "With --output the format follows its name; a format that contradicts it is refused.",
            case_sensitive=False,
            show_default=False,
        ),
    ] = None,
    proba: Annotated[
        bool, typer.Option("--proba", help="Add one probability column per class (proba_<label>).")
    ] = False,
    keep: Annotated[
        list[str] | None,
        typer.Option("--keep", help="Input column(s) to copy next to the predictions, e.g. an ID."),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            "-t",
            help="Label column in the input to ignore (default: the model's training target, if present).",
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            help="Files scored in parallel in batch mode (at most one per core and per file). Default: all cores.",
        ),
    ] = None,
    digits: Annotated[
        int | None,
        typer.Option(
            "--digits",
            min=0,
            max=17,
            help="Round probabilities to N decimal places. Default: every digit needed to read them back exactly.",
        ),
    ] = None,
    missing: Annotated[str | None, table_options.MISSING] = None,
    unseen: Annotated[str | None, table_options.UNSEEN] = None,
    na_values: Annotated[list[str] | None, table_options.SCORING_NA_VALUES] = None,
    json_out: Annotated[
        str | None,
        typer.Option(
            "--json",
            help="Write the run's summary (rows scored, left empty, unseen categories; "
            "schema nbcli.prediction) as JSON to PATH; with several inputs, each file's "
            "output, rows and error (schema nbcli.batch).",
        ),
    ] = None,
    read: common.ReadOptions = common.READING,
    quiet: Annotated[bool, common.QUIET] = False,
    engine: common.EngineOptions = common.LOCAL,
    force: Annotated[bool, common.FORCE] = False,
):
    """Predict labels (and with --proba, posterior probabilities) for new data.

    Columns are matched to the model's features by name, in any order; extra
    columns are ignored. Example: nbcli predict -m iris.npz -d sample_data/iris_test.csv --proba
    Exit codes: 0 ok, 2 bad command or input, 4 a batch (--output-dir) in which some
    inputs failed (the others are written; the summary table names the failures).
    """

    from nbcli.cli.progress import ConsoleReporter
    from nbcli.io.part_paths import expand_parts

    common.check_model_file(model)
    common.data_name(list(data))  # refuses a --data value given twice
    common.check_output_dir(output_dir, list(data))
    inputs = expand_parts(data)
    dask = engine.name == "dask"
    if dask and output_dir is None:
        raise NbcliError("--engine dask writes one file per input: give --output-dir")
    if digits is not None and not proba:
        raise NbcliError(
            "--digits rounds the probabilities, which only --proba writes; add --proba"
        )
    keep_cols = common_list(keep)
    from nbcli.cli.requests import data_request
    from nbcli.workflows.settings import PredictionColumns

    request = data_request(locals())
    columns = PredictionColumns(proba, keep_cols, digits)
    if output_dir is None and len(inputs) == 1:
        engine.open()  # refuses Dask options
        from nbcli.io.predictions import is_parquet_path

        named = "parquet" if is_parquet_path(output) else "csv"
        if output_format is not None and output_format.lower() != named:
            # The name decides the format of --output; an explicit format that
            # says otherwise is a contradiction, never silently overruled.
            where = "stdout" if output in (None, "-") else f"--output {output}"
            raise NbcliError(
                f"--output-format {output_format.lower()} contradicts {where}, which is "
                f"written as {'Parquet' if named == 'parquet' else 'CSV'}: the format of "
                "--output follows its name (.parquet or .pq for Parquet, else CSV); "
                "drop --output-format or rename the output"
            )
        from nbcli.cli.console import info, warn
        from nbcli.io.atomic import check_outputs, writes_to_stdout
        from nbcli.io.modelfile import load_model
        from nbcli.workflows.predict import check_keep
        from nbcli.workflows.predict import predict as predict_file
        from nbcli.workflows.summary import PredictionSummary
        from nbcli.workflows.tables import missing_wording

        if json_out == "-" and (output in (None, "-") or writes_to_stdout(output)):
            raise NbcliError(
                "--json - and the predictions would both go to stdout; give -o FILE or --json PATH"
            )
        outputs = [("--output", output or "-")] + ([("--json", json_out)] if json_out else [])
        check_outputs(
            outputs,
            [("--model", model), ("--data", inputs[0])],
            kinds={"--output": "predictions"},
            force=force,
        )
        suffix = os.path.splitext(str(output or ""))[1].lower()
        if suffix and suffix not in (".csv", ".tsv", ".txt", ".gz", ".parquet", ".pq"):
            warn(
                f"--output {output}: written as CSV, whatever its name says "
                "(predict writes CSV, or Parquet for a name ending in .parquet)"
            )
        mf = load_model(model)
        check_keep(keep_cols, mf, proba)
        summary = PredictionSummary(model=model)
        predict_file(
            mf,
            request.reading(data=(inputs[0],)),
            output,
            columns,
            reporter=ConsoleReporter(quiet),
            summary=summary,
        )
        if summary.empty:
            given = request.missing or mf.training.get("missing") or summary.missing
            warn(
                f"{inputs[0]}: {summary.line()}: a row with a missing value cannot be scored "
                f"under {missing_wording(mf.model, given)}; its prediction is empty"
            )
        else:
            info(summary.line(), quiet)
        if json_out is not None:
            from nbcli.workflows.inputs import inputs_of

            summary.inputs = inputs_of(model=model, data=inputs[0])
            summary.settings = {"proba": proba, "digits": digits, "keep": list(keep_cols or [])}
            common.write_json(summary.to_dict(), json_out)
        if output not in (None, "-"):
            info(f"wrote {output}", quiet)
        return 0
    if output_dir is None:
        raise NbcliError(
            f"{len(inputs)} input files need --output-dir to write one predictions file each"
        )
    if output is not None:
        raise NbcliError(
            "--output is for one input; with --output-dir each input gets <name>.pred.csv"
            " (or .pred.parquet)"
        )
    if json_out is not None:
        from nbcli.io.atomic import check_outputs

        check_outputs(
            [("--json", json_out)],
            [("--model", model), *(("--data", path) for path in inputs)],
            force=force,
        )
    from nbcli.cli.console import error_line
    from nbcli.workflows.predict import BatchOutput, predict_batch

    if dask and jobs is not None:
        raise NbcliError("--jobs is for --engine local; the Dask cluster's workers run the files")
    with (
        common.ctrl_c_for_this_process_only(),
        engine.open() as eng,
    ):
        report = predict_batch(
            model,
            request.reading(data=inputs),
            BatchOutput(output_dir, (output_format or "csv").lower(), force),
            columns,
            jobs=jobs,
            reporter=ConsoleReporter(quiet),
            engine=eng,
        )
    for in_path, out_path, _, error in report.rows:
        if error is not None:
            stale = f"; {out_path} is left from an earlier run" if in_path in report.stale else ""
            error_line(f"{error} (file skipped{stale})")
    if json_out is not None:
        # Data files are named, not hashed: parts may be readable only by the workers.
        report.inputs = {**common.inputs_of(model=model), "data": {"parts": list(inputs)}}
        report.settings = {
            "output_dir": output_dir,
            "output_format": (output_format or "csv").lower(),
            "proba": proba,
            "digits": digits,
            "keep": list(keep_cols or []),
        }
    # The JSON report is written whatever failed: a CI job reads which file did.
    common.emit_report(report, json_out, quiet=quiet)
    failed = report.n_failed
    if failed == len(inputs):
        which = {1: "the input file", 2: "both input files"}.get(
            failed, f"all {failed} input files"
        )
        raise NbcliError(f"{which} failed (see above); no predictions were written")
    if failed:
        raise NbcliError(
            f"{failed} of {len(inputs)} input files failed (see above); the others were scored",
            PARTIAL_FAILURE,
        )
    return 0


def common_list(values):
    from nbcli.cli.options import split_list

    return split_list(values)
