"""``nbcli split``: train, test and calibration files from one data file."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from nbcli.cli import common, table_options
from nbcli.errors import NbcliError

SIZE_HELP = "a fraction in (0, 1) of the rows (rounded up) or a row count"


def _size(text: str | None, option: str):
    from nbcli.resampling import parse_size

    if text is None:
        return 0
    try:
        size = parse_size(text)
    except ValueError:
        size = 0  # one wording for every size that is not one
    if isinstance(size, int) and size < 1:
        raise NbcliError(f"{option} must be {SIZE_HELP}; got {text!r}")
    return size


def split(
    data_files: Annotated[
        list[str], typer.Option("--data", "-d", help="Labelled data file to split.")
    ],
    test: Annotated[
        str, typer.Option("--test", metavar="SIZE", help=f"Size of the test part: {SIZE_HELP}.")
    ],
    output_dir: Annotated[
        str,
        typer.Option(
            "--output-dir",
            help="Folder for <stem>.train/.test/.calib.<ext> (made if it does not exist).",
        ),
    ],
    calib: Annotated[
        str | None,
        typer.Option(
            "--calib",
            metavar="SIZE",
            help=f"Size of a calibration part: {SIZE_HELP}. Default: none.",
        ),
    ] = None,
    stratify: Annotated[
        bool,
        typer.Option(
            "--stratify/--no-stratify",
            help="Keep each class's share in every part (the split is by the target column).",
        ),
    ] = True,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the shuffle.")] = 0,
    target: Annotated[str | None, common.TARGET] = None,
    delimiter: Annotated[str | None, common.DELIMITER] = None,
    x_key: Annotated[str, common.X_KEY] = "X",
    y_key: Annotated[str, common.Y_KEY] = "y",
    quiet: Annotated[bool, common.QUIET] = False,
    na_labels: Annotated[list[str] | None, table_options.NA_LABELS] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Replace existing outputs even when they are not earlier splits of data "
            "with the input's format and columns, and remove a part of an earlier split "
            "that this split does not write.",
        ),
    ] = False,
):
    """Split a data file into train, test and calibration files of exact sizes.

    Rows are drawn at random (seeded), stratified by the target; each output
    has the input's format (CSV rows copied byte for byte, with the header,
    delimiter and gzip kept; Parquet and NPZ alike). The file is read twice:
    once for the target column, once to copy the rows. An existing output is
    replaced only when it is empty or holds data of the input's format and
    columns (an earlier split); anything else needs --force. A calibration
    part of an earlier split that this one does not write is refused, or with
    --force removed.
    Example: nbcli split -d penguins.csv --test 0.2 --calib 0.1 --output-dir splits
    """
    data = common.one_data_file(data_files)
    common.check_output_dir(output_dir)
    from nbcli.cli.requests import data_request
    from nbcli.workflows.split import split as run_split

    report = run_split(
        data_request(locals()).reading(data=(data,)),
        test=_size(test, "--test"),
        calib=_size(calib, "--calib"),
        stratify=stratify,
        seed=seed,
        output_dir=output_dir,
        force=force,
    )
    from nbcli.cli.console import info, warn

    if stratify:
        info(f"stratified by column '{report.target}' ({report.target_note})", quiet)
    for message in report.warnings:
        warn(message)
    if not quiet:
        for part, path in report.outputs.items():
            n = report.n_samples[part]
            sys.stderr.write(f"wrote {path} ({n:,} row{'' if n == 1 else 's'})\n")
        for path in report.removed:
            sys.stderr.write(f"removed {path} (a part of an earlier split)\n")
    return 0
