"""The generated reference: Markdown pages rendered from the code itself.

Every page comes from what the code declares, never from text kept by hand:

* ``reference/commands.md``: every command of the Typer app and every option,
  from the click commands Typer builds (names, value, default, help);
* ``reference/models.md``: every model type of the registry and every
  hyperparameter of its class's specs;
* ``reference/schemas.md``: every JSON report schema, with its JSON Schema
  where the code defines one (:data:`SCHEMAS`);
* ``reference/api.md``: the Python API, rendered from the docstrings by
  mkdocstrings (numpydoc style).

The pages are committed under ``docs/reference/`` (so that links to them work
when the repository is read as it is) and written by running this file:
``python docs/reference_pages.py``. ``tests/test_docs.py`` fails when a
committed page differs from what the code gives now, and checks that each
lists everything the code has; ``docs/hooks.py`` builds the site from the
code too, so a site is never older than its code.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

#: The folder the page paths of :func:`pages` are relative to.
DOCS = Path(__file__).resolve().parent

#: Every JSON report schema: ``name -> (module, attribute of its JSON Schema or
#: None, the command that writes it, attribute of its version)``. A report
#: whose schema name is not listed here fails ``tests/test_docs.py``.
SCHEMAS: dict[str, tuple[str, str | None, str, str]] = {
    "nbcli.training": (
        "nbcli.reports.runs",
        None,
        "fit --json",
        "TrainingReport.schema_version",
    ),
    "nbcli.prediction": (
        "nbcli.workflows.summary",
        None,
        "predict --json",
        "PredictionSummary.schema_version",
    ),
    "nbcli.batch": (
        "nbcli.reports.runs",
        None,
        "predict --output-dir --json",
        "BatchReport.schema_version",
    ),
    "nbcli.evaluation": (
        "nbcli.reports.evaluation",
        "EVALUATION_SCHEMA",
        "evaluate --json",
        "SCHEMA_VERSION",
    ),
    "nbcli.comparison": (
        "nbcli.reports.comparison",
        "COMPARISON_SCHEMA",
        "compare --json",
        "SCHEMA_VERSION",
    ),
    "nbcli.calibration": (
        "nbcli.reports.reliability",
        "CALIBRATION_SCHEMA",
        "calibrate --method none --json",
        "SCHEMA_VERSION",
    ),
    "nbcli.recalibration": (
        "nbcli.reports.reliability",
        "RECALIBRATION_SCHEMA",
        "calibrate --json",
        "RECALIBRATION_SCHEMA_VERSION",
    ),
    "nbcli.cross_validation": (
        "nbcli.reports.cross_validation",
        "CROSS_VALIDATION_SCHEMA",
        "cv --json",
        "SCHEMA_VERSION",
    ),
    "nbcli.tuning": ("nbcli.reports.tuning", "TUNING_SCHEMA", "tune --json", "SCHEMA_VERSION"),
    "nbcli.model": ("nbcli.reports.model", "MODEL_SCHEMA", "inspect --json", "SCHEMA_VERSION"),
}


def schema_version(name: str) -> int:
    """The ``schema_version`` the code writes in reports of schema ``name``."""
    module, _, _, attribute = SCHEMAS[name]
    value: object = importlib.import_module(module)
    for part in attribute.split("."):
        value = getattr(value, part)
    return int(value)  # type: ignore[call-overload]


#: The Python API page: the public estimators, workflows and readers.
API_OBJECTS: dict[str, list[str]] = {
    "Estimators": [],  # filled from the registry: every model class
    "Workflows": [
        "nbcli.workflows.train.train",
        "nbcli.workflows.parts.train_parts",
        "nbcli.workflows.predict.predict",
        "nbcli.workflows.predict.predict_batch",
        "nbcli.workflows.evaluate.evaluate",
        "nbcli.workflows.evaluate_parts.evaluate_parts",
        "nbcli.workflows.evaluate.compare",
        "nbcli.workflows.calibrate.calibrate",
        "nbcli.workflows.cv.cross_validate",
        "nbcli.workflows.tune.tune",
        "nbcli.workflows.split.split",
        "nbcli.workflows.inspect.inspect_model",
    ],
    "Reading data and model files": [
        "nbcli.io.request.DataRequest",
        "nbcli.io.modelfile",
        "nbcli.text.TextVectorizer",
        "nbcli.engines.open_engine",
    ],
}


def _cell(text: object) -> str:
    """Text for one Markdown table cell."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    # "[default: 0.0]" would read as a Markdown reference link.
    return text.replace("[", "\\[").replace("]", "\\]")


def _click_app():
    from nbcli.cli import app as app_module

    app_module.register_commands(None)
    return app_module.command()  # with the metavars --help shows


def command_options() -> dict[str, list]:
    """``{command: [click parameters]}`` in the app's order (root options as ``""``)."""
    group = _click_app()
    out: dict[str, list] = {"": list(group.params)}
    for name in group.list_commands(None):  # type: ignore[arg-type]
        out[name] = list(group.get_command(None, name).params)  # type: ignore[arg-type,union-attr]
    return out


def _option_names(param) -> str:
    names = [*param.opts, *getattr(param, "secondary_opts", [])]
    return ", ".join(f"`{n}`" for n in names) if names else f"`{param.name.upper()}`"


def _default(param) -> str:
    if getattr(param, "is_flag", False) and not getattr(param, "secondary_opts", None):
        return "off" if not param.default else "on"
    default = param.default
    if default is None or default == () or callable(default):
        return ""
    if isinstance(default, (list, tuple)):
        return ", ".join(str(d) for d in default)
    return str(default)


def commands_page() -> str:
    from nbcli.cli.app import COMMANDS

    options = command_options()
    lines = [
        "# Commands",
        "",
        "Generated from the command-line app: every command and every option, as",
        "`nbcli COMMAND --help` shows them. The [user guide](../guide/commands.md)",
        "explains what they do.",
        "",
        "## nbcli",
        "",
        "Options of `nbcli` itself, given before or after the command:",
        "",
    ]
    lines += _options_table(options[""])
    for name, params in options.items():
        if not name:
            continue
        lines += ["", f"## nbcli {name}", "", COMMANDS[name][2], ""]
        lines += _options_table(params)
    return "\n".join(lines) + "\n"


def _options_table(params) -> list[str]:
    lines = ["| option | value | default | meaning |", "| --- | --- | --- | --- |"]
    for p in params:
        if getattr(p, "hidden", False):
            continue
        value = "" if getattr(p, "is_flag", False) else _cell(_metavar(p))
        lines.append(
            f"| {_option_names(p)} | {value} | {_cell(_default(p))} | {_cell(p.help or '')} |"
        )
    return lines


def _metavar(param) -> str:
    import click

    if param.metavar:
        return param.metavar
    if isinstance(param.type, click.Choice):
        return "|".join(str(c) for c in param.type.choices)
    shown = param.make_metavar(click.Context(click.Command("nbcli"))).strip("<>[]")
    return shown if "|" in shown else shown.upper()


def models_page() -> str:
    from nbcli.models import registry

    lines = [
        "# Models and hyperparameters",
        "",
        "Generated from the model classes: every model type the registry finds,",
        "and every hyperparameter its class declares (`hyperparameters`, see",
        "`nbcli.models.hyperparameters.Hyperparameter`). Flags are those of",
        "`nbcli fit`, `nbcli cv` and `nbcli tune`; a hyperparameter without a flag",
        "is set in a config file's `[hyperparameters]` table or from Python.",
        "",
        "## Every flag",
        "",
        registry.hyperparameter_table().rstrip("\n"),
    ]
    for name, cls in registry.model_classes().items():
        doc = (cls.__doc__ or "").strip().split("\n\n")[0]
        lines += [
            "",
            f"## {name}",
            "",
            f"`nbcli.models.{cls.__name__}`: {_cell(doc)}",
            "",
            "| hyperparameter | kind | flag | default (Python) | meaning |",
            "| --- | --- | --- | --- | --- |",
        ]
        for spec in cls.hyperparameters:
            flag = f"`{spec.flag}`" if spec.flag else "(config file, Python)"
            lines.append(
                f"| `{spec.name}` | {spec.kind} | {flag} | `{spec.default!r}` | {_cell(spec.help)} |"
            )
    return "\n".join(lines) + "\n"


def schemas_page() -> str:
    lines = [
        "# JSON report schemas",
        "",
        "Generated from the report definitions: every schema a command writes",
        "with `--json`, its version, and its JSON Schema (draft 2020-12) where the",
        "code defines one. The [guide](../guide/outputs.md#json-reports) describes",
        "the members of each.",
    ]
    for name, (module, attribute, command, _) in SCHEMAS.items():
        lines += ["", f"## {name}", "", f"Written by `nbcli {command}`.", ""]
        version = schema_version(name)
        if attribute is None:
            lines.append(
                f"Schema version {version}. No JSON Schema is defined in the code for this "
                "report yet; its members are listed in the "
                "[guide](../guide/outputs.md#json-reports)."
            )
            continue
        schema = getattr(importlib.import_module(module), attribute)
        assert schema["properties"]["schema_version"]["const"] == version, name
        lines += [
            f"Schema version {version}; `{module}.{attribute}`:",
            "",
            '??? note "JSON Schema"',
            "",
            "    ```json",
            *("    " + line for line in json.dumps(schema, indent=2).splitlines()),
            "    ```",
        ]
    return "\n".join(lines) + "\n"


def api_objects() -> dict[str, list[str]]:
    """:data:`API_OBJECTS` with the estimators filled in from the registry."""
    from nbcli.models import registry

    out = dict(API_OBJECTS)
    out["Estimators"] = [
        f"nbcli.models.{cls.__name__}" for cls in registry.model_classes().values()
    ]
    return out


def api_page() -> str:
    lines = [
        "# Python API",
        "",
        "Rendered from the docstrings (numpydoc style). The estimators follow",
        "scikit-learn's estimator conventions; each workflow is what one command",
        "does, as a function that returns the report the command renders.",
    ]
    for section, objects in api_objects().items():
        lines += ["", f"## {section}", ""]
        for path in objects:
            lines += [f"::: {path}", ""]
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """``{path under docs/: Markdown}`` of every generated page."""
    return {
        "reference/commands.md": commands_page(),
        "reference/models.md": models_page(),
        "reference/schemas.md": schemas_page(),
        "reference/api.md": api_page(),
    }


def write(docs: Path = DOCS) -> list[Path]:
    """Write every page of :func:`pages` under ``docs``; the paths changed."""
    changed = []
    for name, text in pages().items():
        path = docs / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8", newline="\n")
            changed.append(path)
    return changed


if __name__ == "__main__":
    sys.path.insert(0, str(DOCS.parent))
    for path in write():
        print(f"wrote {path.relative_to(DOCS.parent)}")
