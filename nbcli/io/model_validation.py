"""Validation of a model file's metadata and arrays (see :mod:`nbcli.io.modelfile`).

A model file is untrusted input. The metadata must have the documented
fields with the right types; the members must be exactly those the
metadata declares, with the shapes the model type's statistics class
declares (``shapes``, in units of n_classes and n_features); after reading,
the statistics must be ones some data set could give, and the rebuilt
model must have defined parameters and score its own class means. Every
refusal is one :class:`~nbcli.errors.NbcliError` naming the file.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbcli import __version__
from nbcli.io.limits import MAX_NAME_CHARS
from nbcli.io.safe_npz import refuse
from nbcli.models import registry
from nbcli.models.mixed import MixedNB

FORMAT = "nbcli-model"
#: The version this nbcli writes; it reads every version from 1 up to it.
FORMAT_VERSION = 2
METADATA_LIMIT = 64 * 1024 * 1024
#: Characters of one text of the metadata other than a class label or a
#: name (a path, a setting).
MAX_METADATA_CHARS = 1_000_000
#: Largest size of an extra statistics dimension (``stats.dims``): 2**24 categories.
MAX_DIMENSION = 1 << 24
#: Types a feature column can have in ``columns`` (format version 2).
COLUMN_TYPES = ("numeric", *MixedNB.feature_kinds, "text")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _names(value) -> bool:
    """A list of distinct strings."""
    return (
        isinstance(value, list)
        and all(isinstance(v, str) for v in value)
        and len(set(value)) == len(value)
    )


def _check_label_list(path, classes) -> None:
    kinds = {type(c) for c in classes}
    if not classes or len(kinds) != 1 or not kinds <= {int, str, bool, float}:
        refuse(path, "classes must be a non-empty list of labels of one type; the file is corrupt")
    if kinds == {int} and not all(-(2**63) <= c < 2**64 for c in classes):
        refuse(path, "classes hold integers too large for a label; the file is corrupt")
    if kinds == {float} and not all(np.isfinite(c) for c in classes):
        refuse(path, "classes hold a value that is not finite; the file is corrupt")
    if len({str(c) for c in classes}) != len(classes):
        refuse(path, "classes are not distinct; the file is corrupt")
    if classes != sorted(classes):
        # A fit sorts its classes; statistics are stored in that order, so
        # labels in another order would name every class's scores wrongly.
        refuse(path, "classes are not in sorted order; the file is corrupt")


def _long_text(value, where: str = "") -> tuple[str, int] | None:
    """The first text of ``value`` (nested lists and dicts, class labels
    left out: they are data) longer than its limit, as (where, length)."""
    if isinstance(value, str):
        name = where.split(".")[0].split("[")[0]
        limit = MAX_NAME_CHARS if name in ("target", "feature_names") else MAX_METADATA_CHARS
        return (where, len(value)) if len(value) > limit else None
    if isinstance(value, dict):
        for k, v in value.items():
            if not where and k == "classes":
                continue
            if isinstance(k, str) and len(k) > MAX_METADATA_CHARS:
                return (f"{where} (a key)", len(k))
            found = _long_text(v, f"{where}.{k}" if where else str(k))
            if found:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = _long_text(v, f"{where}[{i}]")
            if found:
                return found
    return None


def check_metadata(path, meta) -> None:
    """Refuse metadata without the documented fields, of a newer version, or inconsistent.

    Texts are bounded: names at :data:`~nbcli.io.limits.MAX_NAME_CHARS`,
    other texts (paths, settings) at :data:`MAX_METADATA_CHARS` characters.
    """
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        refuse(path, "is not an nbcli model file (no nbcli-model metadata)")
    long = _long_text(meta)
    if long is not None:
        where, n = long
        refuse(
            path,
            f"holds a text of {n:,} characters in {where[:80]!r} of its metadata, longer than "
            "nbcli writes; the file is corrupt",
        )
    version = meta.get("format_version")
    if not _is_int(version):
        refuse(path, "has no valid format_version; the file is corrupt")
    if version > FORMAT_VERSION:
        written_by = meta.get("nbcli_version")
        written_by = written_by if isinstance(written_by, str) else "?"
        refuse(
            path,
            f"was written by a newer nbcli (model format version {version}, from nbcli "
            f"{written_by[:40]}); this nbcli {__version__} reads up to version "
            f"{FORMAT_VERSION}: upgrade nbcli",
        )
    if version < 1:
        refuse(path, f"has an invalid format_version {version}")
    required = {
        "model": str,
        "hyperparameters": dict,
        "classes": list,
        "feature_names": list,
        "n_features": int,
        "training": dict,
        "stats": dict,
    }
    for key, typ in required.items():
        if not isinstance(meta.get(key), typ):
            refuse(
                path,
                f"metadata field {key!r} is missing or has the wrong type; the file is corrupt",
            )
    models = registry.model_classes()
    if meta["model"] not in models:
        refuse(path, f"unknown model type {meta['model'][:40]!r}; known: {', '.join(models)}")
    d = meta["n_features"]
    if isinstance(d, bool) or d < 1 or len(meta["feature_names"]) != d:
        refuse(path, "n_features does not match feature_names; the file is corrupt")
    if not _names(meta["feature_names"]):
        refuse(path, "feature_names must be distinct strings; the file is corrupt")
    _check_label_list(path, meta["classes"])
    target = meta.get("target")
    if target is not None and not isinstance(target, str):
        refuse(path, "metadata field 'target' must be a column name; the file is corrupt")
    cls = models[meta["model"]]
    st = meta["stats"]
    kinds = {s.__name__: s for s in cls.statistics}
    if (
        not isinstance(st.get("type"), str)
        or st["type"] not in kinds
        or not _names(st.get("arrays"))
    ):
        refuse(
            path,
            f"has statistics of an unknown type or of the wrong type for a "
            f"{meta['model']} model; the file is corrupt",
        )
    stats_cls = kinds[st["type"]]
    if not set(st["arrays"]) <= set(stats_cls.shapes):
        refuse(path, "lists statistics arrays the format does not define")
    missing = sorted(set(stats_cls.shapes) - set(stats_cls.optional) - set(st["arrays"]))
    if missing:
        refuse(path, f"lacks statistics {', '.join(missing)}; the file is corrupt")
    dims = st.get("dims", {})
    # Sizes of every dimension the listed arrays use (optional arrays absent
    # from older files need none).
    used = {u for n in st["arrays"] for u in stats_cls.shapes[n] if u in stats_cls.extra_dims}
    if (
        not isinstance(dims, dict)
        or not used <= set(dims) <= set(stats_cls.extra_dims)
        or not all(_is_int(v) and 0 <= v <= MAX_DIMENSION for v in dims.values())
    ):
        refuse(
            path,
            f"statistics dims must give sizes of {', '.join(stats_cls.extra_dims) or 'nothing'}"
            "; the file is corrupt",
        )
    specs = {s.name: s for s in cls.hyperparameters}
    unknown = sorted(set(meta["hyperparameters"]) - set(specs))
    if unknown:
        refuse(path, f"has unknown hyperparameters {unknown} for model {meta['model']!r}")
    for name, value in meta["hyperparameters"].items():
        if not specs[name].is_valid(value):
            refuse(
                path,
                f"has an invalid hyperparameter {name} = {str(value)[:40]} (it must be "
                f"{specs[name].describe()}); the file is corrupt",
            )
    calib = meta.get("calibration")
    if calib is not None and not (isinstance(calib, dict) and _names(calib.get("arrays"))):
        refuse(path, "has invalid calibration metadata")
    check_version_2(path, meta)


def check_version_2(path, meta) -> None:
    """Check the members format version 2 added; each is optional.

    ``texts`` (names of text arrays), ``columns`` (feature columns with their
    type and, for categorical ones, the text array of their categories),
    ``vocabularies`` (``{column: text array}``), ``training.fingerprint``
    (``{"algorithm", "value"}``), ``training.read_as_missing``
    (``{column: list of str}``) and ``search`` (an object).
    """
    texts = meta.get("texts", [])
    if not _names(texts):
        refuse(path, "metadata field 'texts' must be distinct names; the file is corrupt")
    referenced = []
    columns = meta.get("columns")
    if columns is not None:
        if not isinstance(columns, list) or not all(isinstance(c, dict) for c in columns):
            refuse(path, "metadata field 'columns' must be a list of objects; the file is corrupt")
        if not _names([c.get("name") for c in columns]):
            refuse(path, "columns must have distinct string names; the file is corrupt")
        for c in columns:
            if c.get("type") not in COLUMN_TYPES:
                refuse(
                    path,
                    f"column {str(c.get('name'))[:40]!r} has an unknown type "
                    f"{str(c.get('type'))[:40]!r} (known: {', '.join(COLUMN_TYPES)})",
                )
            if "categories" in c:
                referenced.append(c["categories"])
    vocabularies = meta.get("vocabularies")
    if vocabularies is not None:
        if not isinstance(vocabularies, dict):
            refuse(path, "metadata field 'vocabularies' must be an object; the file is corrupt")
        referenced.extend(vocabularies.values())
    unknown = [r for r in referenced if not isinstance(r, str) or r not in texts]
    if unknown:
        refuse(path, f"refers to text arrays it does not list: {str(unknown[0])[:40]!r}")
    fingerprint = meta["training"].get("fingerprint")
    if fingerprint is not None and not (
        isinstance(fingerprint, dict)
        and isinstance(fingerprint.get("algorithm"), str)
        and isinstance(fingerprint.get("value"), str)
    ):
        refuse(
            path,
            "training.fingerprint must hold an algorithm name and a value; the file is corrupt",
        )
    training = meta["training"]
    for key, allowed in (("missing", ("error", "ignore", "drop")), ("unseen", ("error", "ignore"))):
        if training.get(key) is not None and training[key] not in allowed:
            refuse(
                path,
                f"training.{key} is {str(training[key])[:40]!r}, not one of "
                f"{', '.join(allowed)}; the file is corrupt",
            )
    na = training.get("na_values")
    if na is not None and not (isinstance(na, list) and all(isinstance(v, str) for v in na)):
        refuse(path, "training.na_values must be a list of texts; the file is corrupt")
    stray = meta["training"].get("read_as_missing")
    if stray is not None and not (
        isinstance(stray, dict)
        and all(
            isinstance(c, str) and isinstance(t, list) and all(isinstance(v, str) for v in t)
            for c, t in stray.items()
        )
    ):
        refuse(
            path,
            "training.read_as_missing must map column names to lists of texts; the file is corrupt",
        )
    search = meta.get("search")
    if search is not None and not isinstance(search, dict):
        refuse(path, "metadata field 'search' must be an object; the file is corrupt")
    projection = meta.get("projection")
    if projection is not None:
        arrays: Any = projection.get("arrays") if isinstance(projection, dict) else None
        q: Any = projection.get("n_components") if isinstance(projection, dict) else None
        known = {"centre", "scale", "components", "explained_variance", "total_variance"}
        if (
            not _names(arrays)
            or not set(arrays) <= known
            or not {"centre", "scale", "total_variance"} <= set(arrays)
            or ("components" in arrays) != ("explained_variance" in arrays)
            or not _is_int(q)
            or not 1 <= q <= meta["n_features"]
        ):
            refuse(path, "has invalid projection metadata; the file is corrupt")
    if meta.get("text") is not None and vocabularies is None:
        refuse(path, "has text settings but no vocabularies; the file is corrupt")


def check_text(path, meta, vocabularies: dict | None):
    """The text settings of a model file whose vocabularies are read, checked.

    Refuses settings that are not valid, vocabularies that are not exactly
    the text columns', a vocabulary that is not distinct terms in code-point
    order, and feature names that are not ``column:term`` for every term of
    every vocabulary, after the numeric features.

    Returns
    -------
    nbcli.text.settings.TextSettings
    """
    # Loaded here only: a model without text never imports the tokeniser.
    from nbcli.text.settings import TextSettings, feature_name
    from nbcli.text.vocabulary import Vocabulary

    try:
        settings = TextSettings.from_metadata(meta["text"])
    except (ValueError, TypeError) as exc:
        refuse(path, f"has invalid text settings ({str(exc)[:120]}); the file is corrupt")
    vocabularies = vocabularies or {}
    # Metadata keys are written sorted: the settings keep the column order.
    if set(vocabularies) != set(settings.columns):
        refuse(path, "has vocabularies that are not those of its text columns; the file is corrupt")
    names: list[str] = []
    for column in settings.columns:
        terms = vocabularies[column]
        try:
            Vocabulary(terms)
        except ValueError as exc:
            refuse(path, f"holds a damaged vocabulary of column {column[:40]!r} ({exc})")
        if not terms:
            refuse(
                path, f"holds an empty vocabulary of column {column[:40]!r}; the file is corrupt"
            )
        names.extend(feature_name(column, t) for t in terms)
    if (
        len(names) > meta["n_features"]
        or meta["feature_names"][len(meta["feature_names"]) - len(names) :] != names
    ):
        refuse(
            path,
            "has feature names that do not match its vocabularies; the file is corrupt",
        )
    dfs = settings.document_frequencies
    if dfs is not None:
        for column, df in zip(settings.columns, dfs):
            if len(df) != len(vocabularies[column]):
                refuse(
                    path,
                    f"has document frequencies of column {column[:40]!r} that do not match "
                    "its vocabulary; the file is corrupt",
                )
    return settings


def check_text_term(path, model, settings, vocabularies: dict | None) -> None:
    """A model whose text columns are terms of its own (mixed: ``vocabulary_sizes``)
    must give them the lengths of the stored vocabularies, in column order."""
    if getattr(type(model), "text_term", None) is None:
        return
    sizes = list(getattr(model, "vocabulary_sizes", None) or [])
    want = [] if settings is None else [len((vocabularies or {})[c]) for c in settings.columns]
    if sizes != want:
        refuse(
            path,
            "has vocabulary_sizes that do not match its text columns' vocabularies; "
            "the file is corrupt",
        )


def expected_members(meta) -> dict[str, tuple | str | None]:
    """Every member the metadata declares, with its shape.

    Statistics get the shape their class declares; calibration arrays
    ``None`` (the calibrator checks them); text arrays ``"text"``.
    """
    cls = registry.get(meta["model"])
    stats_cls = {s.__name__: s for s in cls.statistics}[meta["stats"]["type"]]
    shapes = stats_cls.array_shapes(
        len(meta["classes"]), meta["n_features"], meta["stats"].get("dims")
    )
    expected: dict[str, tuple | str | None] = {
        f"stats.{n}": shapes[n] for n in meta["stats"]["arrays"]
    }
    calib = meta.get("calibration")
    if calib is not None:
        for n in calib["arrays"]:
            expected[f"calibration.{n}"] = None
    projection = meta.get("projection")
    if projection is not None:
        d, q = meta["n_features"], projection["n_components"]
        shapes = {
            "centre": (d,),
            "scale": (d,),
            "components": (d, q),
            "explained_variance": (q,),
            "total_variance": (1,),
        }
        for n in projection["arrays"]:
            expected[f"projection.{n}"] = shapes[n]
    for name in meta.get("texts", []):
        expected[f"text.{name}.data"] = "text"
        expected[f"text.{name}.offsets"] = "text"
    return expected


def check_members(path, headers: dict, expected: dict) -> None:
    """Refuse members the metadata does not declare, missing ones, and wrong dtypes or shapes."""
    unexpected = sorted(set(headers) - set(expected) - {"metadata"})
    if unexpected:
        refuse(path, f"holds members the format does not define: {', '.join(unexpected)}")
    missing = sorted(set(expected) - set(headers))
    if missing:
        refuse(path, f"lacks members {', '.join(missing)}; the file is corrupt")
    for name, shape in expected.items():
        dt, sh = headers[name]
        if shape == "text":
            want = np.uint8 if name.endswith(".data") else np.int64
            if dt != want or len(sh) != 1:
                refuse(path, f"member {name!r} must be a 1-D {np.dtype(want)} array")
            continue
        if dt != np.float64:
            refuse(path, f"member {name!r} has dtype {dt}, expected float64")
        if shape is not None and sh != shape:
            refuse(path, f"member {name!r} has shape {sh}, expected {shape} from the metadata")
        if shape is None and (len(sh) != 1 or sh[0] > 16 * 1024 * 1024):
            refuse(path, f"member {name!r} has an invalid shape {sh}")


def check_stats(path, stats) -> None:
    """Refuse statistics no data set could have produced (each statistics
    class says what that is: ``implausible``). Subtler damage shows in the
    rebuilt model, see :func:`check_rebuilt`."""
    why = stats.implausible()
    if why is not None:
        refuse(path, f"holds {why}; the file is corrupt")


def check_counts(path, stats, training: dict) -> None:
    """Refuse statistics whose class counts are not the ones the metadata
    records (``training.class_counts``, written from the same statistics):
    one of the two was edited. The counts round-trip through JSON exactly;
    the tolerance only keeps a count written by another platform's ``repr``
    from failing."""
    recorded = training.get("class_counts")
    if not isinstance(recorded, list) or not all(
        isinstance(c, int | float) and not isinstance(c, bool) for c in recorded
    ):
        return
    counts = np.asarray(stats.class_counts, dtype=np.float64)
    if len(recorded) != counts.size or not np.allclose(
        counts, np.asarray(recorded, dtype=np.float64), rtol=1e-12, atol=0.0
    ):
        refuse(
            path,
            "holds class counts that disagree with the ones its metadata records "
            "(training.class_counts); the file was edited or is corrupt",
        )


def check_rebuilt(path, model) -> None:
    """Refuse a model that cannot score: a scoring parameter that is not a
    number (NaN) or infinitely favourable (+inf; -inf is legitimate, the log
    of a zero prior), or, for the models with class means, posteriors at its
    own class means that are not finite."""
    name = model.undefined_parameter()
    if name is not None:
        refuse(
            path,
            f"holds statistics that give the {model.name} model an "
            f"undefined parameter ({name}); the file is corrupt",
        )
    stats = model.stats_
    if hasattr(stats, "mean"):
        with np.errstate(all="ignore"):
            logp = model.predict_log_proba(stats.mean[stats.class_counts > 0])
        if np.isnan(logp).any() or not np.isfinite(logp.max(axis=1)).all():
            refuse(
                path,
                f"holds statistics with which the {model.name} model cannot "
                "score even its own class means; the file is corrupt",
            )
