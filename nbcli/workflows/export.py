"""``nbcli export``: a model file written out for another runtime (ONNX)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from nbcli.errors import NbcliError

__all__ = ["EXPORT_FORMATS", "ExportReport", "export_model"]

EXPORT_FORMATS = ("onnx",)


@dataclass
class ExportReport:
    """What was exported: the model type, its features and classes, and where."""

    model_type: str
    output: str
    format: str
    n_features: int
    n_classes: int
    n_bytes: int


def export_model(
    model_path: str, output: str, fmt: str = "onnx", force: bool = False
) -> ExportReport:
    """Write the model file at ``model_path`` as a ``fmt`` file at ``output``.

    Parameters
    ----------
    model_path : str
        A model file (a path or URL).
    output : str
        Where the exported model goes (a path or URL); written atomically.
    fmt : {"onnx"}
        The format (see :mod:`nbcli.export.onnx_graph`).
    force : bool
        Replace a file of another kind at ``output``.

    Raises
    ------
    NbcliError
        For an unknown format, an unreadable model file, a model that cannot
        be exported, or an output that cannot be written.
    """
    from nbcli.export.onnx_graph import model_to_onnx
    from nbcli.io.atomic import atomic_write, check_outputs
    from nbcli.io.modelfile import load_model

    if fmt not in EXPORT_FORMATS:
        raise NbcliError(f"--format {fmt!r}: choose one of {', '.join(EXPORT_FORMATS)}")
    if output == "-":
        # check_outputs lets "-" through as stdout: a graph would go there as
        # a file named "-".
        raise NbcliError(
            "--output -: an ONNX graph is binary and is not written to stdout; give a file path"
        )
    if not force and os.fspath(output).lower().endswith(".npz"):
        # The mirror of fit's refusal of -o model.onnx: the next command that
        # reads it as a model file would refuse it as no nbcli model.
        raise NbcliError(
            f"--output {output}: an ONNX graph is not a model file (.npz); give a name ending "
            "in .onnx (--force writes the graph under this name all the same)"
        )
    check_outputs(
        [("--output", output)], [("MODEL", model_path)], kinds={"--output": "onnx"}, force=force
    )
    mf = load_model(model_path)
    try:
        data = model_to_onnx(mf)
    except NbcliError as exc:
        raise NbcliError(f"{model_path}: {exc}") from None
    with atomic_write(output, "wb") as f:
        f.write(data)
    return ExportReport(
        model_type=mf.model.name,
        output=output,
        format=fmt,
        n_features=len(mf.feature_names),
        n_classes=len(mf.classes),
        n_bytes=len(data),
    )
