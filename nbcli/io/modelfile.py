"""The model file: one ``.npz`` archive with a JSON metadata member and plain arrays.

Layout (format version 2; version 1 files, which lack the members marked
*v2*, load as before):

* ``metadata`` - uint8 array holding UTF-8 JSON: ``format`` ("nbcli-model"),
  ``format_version``, ``nbcli_version``, ``model`` (type), ``hyperparameters``,
  ``classes``, ``feature_names``, ``n_features``, ``target``, ``training``
  (``n_samples``, ``class_counts``, ``data_sha256`` in *v1*; *v2*, optional:
  ``fingerprint`` = ``{"algorithm", "value"}``, the chunk-independent
  training-data fingerprint), ``stats`` (which statistics type and arrays
  follow), ``calibration`` (null, or the calibrator kind and its arrays)
  and, *v2*, optional: ``texts`` (names of the text arrays), ``columns``
  (per feature column ``name``, ``type`` and, for a categorical column,
  ``categories``: the name of the text array of its category values),
  ``vocabularies`` (``{text column: text array name}``), ``text`` (the
  tokenisation settings of the text columns, see
  :class:`nbcli.text.settings.TextSettings`; a model with text columns has
  their terms as its last features, named ``column:term`` in vocabulary
  order) and ``search`` (a hyperparameter search summary, JSON).
* ``stats.<name>`` - the model's sufficient statistics (float64). The
  scoring parameters are derived from them at load time, deterministically,
  so a loaded model predicts bit for bit as the saved one did, and two model
  files can be merged.
* ``calibration.<name>`` - the calibrator's parameters (float64), if any.
* *v2*, optional: ``projection.<name>`` - with ``pca`` or ``standardize``,
  the projection applied to raw rows (:class:`nbcli.models._projection.Projection`):
  ``centre`` and ``scale`` (n_features,), ``components`` (n_features,
  n_components) and ``explained_variance`` (n_components,) with ``pca``,
  ``total_variance`` (1,); the metadata's ``projection`` lists them
  (``arrays``) with ``n_components``.
* *v2*: ``text.<name>.data`` (uint8, the UTF-8 bytes of every string one
  after another) and ``text.<name>.offsets`` (int64, n + 1 offsets) for
  each name in ``texts`` (see :mod:`nbcli.io.text_arrays`).

Reading is split by concern: :mod:`nbcli.io.safe_npz` opens the archive and
checks every member header before anything is allocated (never unpickling);
:mod:`nbcli.io.model_validation` checks metadata, member shapes (from the
statistics classes' declarations), statistics and the rebuilt model.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nbcli import __version__
from nbcli.errors import NbcliError
from nbcli.io import model_validation as check
from nbcli.io.atomic import atomic_write
from nbcli.io.cells import text_array
from nbcli.io.model_validation import FORMAT, FORMAT_VERSION, METADATA_LIMIT
from nbcli.io.safe_npz import NpzArchive, open_npz, refuse
from nbcli.io.text_arrays import decode_texts, encode_texts
from nbcli.models import BayesClassifier, registry
from nbcli.models.hyperparameters import SAME

__all__ = ["FORMAT", "FORMAT_VERSION", "ModelFile", "build_metadata", "load_model", "save_model"]


@dataclass
class ModelFile:
    """A fitted model with what the file says about it.

    Attributes
    ----------
    model : BayesClassifier
    feature_names : list of str, length n_features
    target : str or None
        Name of the training target column.
    training : dict
        ``n_samples``, ``class_counts``, ``data_sha256`` and where the data
        came from; optionally ``fingerprint`` (``{"algorithm", "value"}``).
    calibrator : object or None
        A calibrator from :mod:`nbcli.calibration`, applied on top of the model's
        posteriors by :meth:`predict_log_proba`.
    columns : list of dict or None
        Format version 2: per feature column ``{"name", "type"}`` and, for a
        categorical column, ``"categories"``: its category values (list of str).
    vocabularies : dict or None
        Format version 2: ``{text column name: list of str}``.
    search : dict or None
        Format version 2: the summary of the hyperparameter search that chose the model.
    text : TextSettings or None
        Format version 2: how the text columns (the keys of ``vocabularies``)
        are tokenised; None for a model without text columns.
    metadata : dict
        The raw metadata as read (or as it will be written).
    """

    model: BayesClassifier
    feature_names: list
    target: str | None = None
    training: dict = field(default_factory=dict)
    calibrator: Any = None
    calibration_info: dict | None = None
    columns: list | None = None
    vocabularies: dict | None = None
    search: dict | None = None
    text: Any = None
    metadata: dict = field(default_factory=dict)

    @property
    def classes(self) -> np.ndarray:
        return self.model.classes_

    def predict_log_proba(self, X) -> np.ndarray:
        """Log posteriors, shape (n_samples, n_classes), calibrated if a calibrator is attached."""
        logp = self.model.predict_log_proba(X)
        if self.calibrator is not None:
            logp = self.calibrator.transform_log(logp)
        return logp

    def predict_proba(self, X) -> np.ndarray:
        """Posteriors, shape (n_samples, n_classes), calibrated if a calibrator is attached."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X) -> np.ndarray:
        """Labels, shape (n_samples,). Calibration never changes them for temperature
        scaling; isotonic maps can, so the argmax is taken after calibration."""
        return self.classes[np.argmax(self.predict_log_proba(X), axis=1)]


def _json_label(v):
    if isinstance(v, np.generic):
        return v.item()
    return v


def _json_param(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple)):
        return [_json_param(x) for x in v]
    if isinstance(v, dict):
        return {k: _json_param(x) for k, x in v.items()}
    if v is not None and not isinstance(v, (str, int, float, bool)):
        # A Python-only hyperparameter such as a covariance estimator object.
        raise ValueError(
            f"a hyperparameter set to a {type(v).__name__} object cannot be stored in a model "
            "file; use the equivalent number (LDA/QDA: shrinkage) instead"
        )
    return v


def _text_arrays(mf: ModelFile) -> tuple[dict, list | None, dict | None]:
    """``{name: list of str}`` of every text array, and ``columns`` and
    ``vocabularies`` as the metadata holds them (text replaced by names)."""
    texts: dict[str, list] = {}
    columns = None
    if mf.columns is not None:
        columns = []
        for j, column in enumerate(mf.columns):
            entry = {k: v for k, v in column.items() if k != "categories"}
            if column.get("categories") is not None:
                texts[f"columns.{j}.categories"] = list(column["categories"])
                entry["categories"] = f"columns.{j}.categories"
            columns.append(entry)
    vocabularies = None
    if mf.vocabularies is not None:
        vocabularies = {}
        for j, (column, words) in enumerate(mf.vocabularies.items()):
            texts[f"vocabularies.{j}"] = list(words)
            vocabularies[column] = f"vocabularies.{j}"
    return texts, columns, vocabularies


def _stats_metadata(stats) -> dict:
    """``{"type", "arrays"}`` of the statistics, and ``dims`` where their shapes need sizes
    besides classes and features (the number of categories)."""
    out: dict = {"type": type(stats).__name__, "arrays": sorted(stats.arrays())}
    dims = stats.dimensions()
    if dims:
        out["dims"] = dims
    return out


def build_metadata(mf: ModelFile) -> dict:
    """The metadata ``save_model`` writes for ``mf`` (a JSON-ready dict)."""
    model = mf.model
    stats = model.stats_
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "nbcli_version": __version__,
        "model": model.name,
        "hyperparameters": {k: _json_param(v) for k, v in model.get_params().items()},
        "classes": [_json_label(c) for c in model.classes_.tolist()],
        "feature_names": [str(f) for f in mf.feature_names],
        "n_features": int(model.n_features_in_),
        "target": mf.target,
        "training": mf.training,
        "stats": _stats_metadata(stats),
        "calibration": None,
    }
    if mf.calibrator is not None:
        info = dict(mf.calibration_info or {})
        info.update(method=mf.calibrator.kind, arrays=sorted(mf.calibrator.to_arrays()))
        meta["calibration"] = info
    texts, columns, vocabularies = _text_arrays(mf)
    if texts:
        meta["texts"] = sorted(texts)
    if columns is not None:
        meta["columns"] = columns
    if vocabularies is not None:
        meta["vocabularies"] = vocabularies
    if mf.search is not None:
        meta["search"] = mf.search
    if mf.text is not None:
        meta["text"] = mf.text.to_metadata()
    projection = getattr(model, "projection_", None)
    if projection is not None:
        meta["projection"] = {
            "arrays": sorted(projection.arrays()),
            "n_components": int(projection.n_components),
        }
    return meta


def save_model(mf: ModelFile, path) -> None:
    """Write ``mf`` to ``path`` atomically (temporary file, fsync, rename).

    Raises
    ------
    ValueError
        For a model that is not fitted, or ``feature_names`` that are not one
        distinct name per feature of the model (the file could not be read).
    NbcliError
        When the path cannot be written; an existing file there is left intact.
    """
    if not hasattr(mf.model, "stats_"):
        raise ValueError(f"the {type(mf.model).__name__} is not fitted; fit it before saving it")
    n = int(getattr(mf.model, "n_features_in_", len(mf.feature_names)))
    names = list(mf.feature_names)
    if len(names) != n or len(set(map(str, names))) != n:
        raise ValueError(
            f"feature_names has {len(names)} names ({len(set(map(str, names)))} distinct) for a "
            f"model of {n} features: give one distinct name per feature, in the order of X's "
            "columns"
        )
    meta = build_metadata(mf)
    arrays = {"metadata": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)}
    for name, arr in mf.model.stats_.arrays().items():
        arrays[f"stats.{name}"] = np.ascontiguousarray(arr, dtype=np.float64)
    projection = getattr(mf.model, "projection_", None)
    if projection is not None:
        for name, arr in projection.arrays().items():
            arrays[f"projection.{name}"] = np.ascontiguousarray(arr, dtype=np.float64)
    if mf.calibrator is not None:
        for name, arr in mf.calibrator.to_arrays().items():
            arrays[f"calibration.{name}"] = np.ascontiguousarray(arr, dtype=np.float64)
    for name, texts in _text_arrays(mf)[0].items():
        arrays[f"text.{name}.data"], arrays[f"text.{name}.offsets"] = encode_texts(texts)
    with atomic_write(path, "wb") as f:
        np.savez(f, **arrays)  # type: ignore[arg-type]
    mf.metadata = meta


# -- loading ----------------------------------------------------------------------------


def load_model(path) -> ModelFile:
    """Read and validate a model file (format version 1 or 2).

    Raises
    ------
    NbcliError
        For a missing or unreadable file, a file that is not an nbcli model,
        a newer format version, a corrupt or truncated archive, object
        (pickled) arrays, members the format does not define, or arrays whose
        headers disagree with the metadata. Nothing is unpickled and no array
        larger than its metadata allows is read. Only damage to the file is
        reported so: an error in nbcli itself propagates as it is.

    Examples
    --------
    >>> from nbcli.io.modelfile import load_model, save_model
    >>> from nbcli.io.request import DataRequest
    >>> from nbcli.models import GaussianNB
    >>> from nbcli.workflows.train import train
    >>> save_model(train(GaussianNB(), DataRequest.of("sample_data/iris_train.csv")).model_file, "iris.npz")
    >>> model_file = load_model("iris.npz")
    >>> model_file.model.predict([[5.0, 3.4, 1.5, 0.2]]).tolist()
    ['setosa']
    """
    if str(path) == "-":
        # "-" is stdin for data; a model file is a seekable archive, read from a path.
        raise NbcliError(
            "a model is read from its file, not from stdin (-): give the model file's path"
        )
    with open_npz(path, what="an nbcli model file", noun="model file") as archive:
        return _load_members(path, archive)


def _no_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def _read_metadata(path, archive: NpzArchive) -> dict:
    if "metadata" not in archive.headers:
        refuse(path, "is not an nbcli model file (no metadata member)")
    dtype, shape = archive.headers["metadata"]
    if dtype != np.uint8 or len(shape) != 1 or shape[0] > METADATA_LIMIT:
        refuse(path, "has an invalid metadata member")
    try:
        meta = json.loads(
            archive.read("metadata").tobytes().decode("utf-8"), parse_constant=_no_constant
        )
    except (ValueError, RecursionError):  # bad UTF-8 or JSON, NaN, overlong numbers
        refuse(path, "has metadata that is not valid JSON; the file is corrupt")
    check.check_metadata(path, meta)
    return meta


def _read_texts(path, archive: NpzArchive, meta: dict) -> dict[str, list[str]]:
    texts = {}
    for name in meta.get("texts", []):
        try:
            texts[name] = decode_texts(
                archive.read(f"text.{name}.data"), archive.read(f"text.{name}.offsets")
            )
        except ValueError as exc:
            refuse(path, f"holds a damaged text array {name[:40]!r} ({exc}); the file is corrupt")
    return texts


def _load_members(path, archive: NpzArchive) -> ModelFile:
    meta = _read_metadata(path, archive)
    expected = check.expected_members(meta)
    check.check_members(path, archive.headers, expected)
    arrays = {name: archive.read(name) for name in expected if expected[name] != "text"}
    texts = _read_texts(path, archive, meta)

    cls = registry.get(meta["model"])
    stats_cls = {s.__name__: s for s in cls.statistics}[meta["stats"]["type"]]
    stats = stats_cls(**{n: arrays[f"stats.{n}"] for n in meta["stats"]["arrays"]})
    check.check_stats(path, stats)
    check.check_counts(path, stats, meta["training"])
    if meta["classes"] and all(isinstance(c, str) for c in meta["classes"]):
        # One reference per class (not the longest label's width for each):
        # predictions index this array row by row.
        classes = text_array(meta["classes"])
    else:
        classes = np.asarray(meta["classes"])
    params = dict(meta["hyperparameters"])
    # A file written before a hyperparameter existed behaved as the spec
    # says such files did (var_smoothing_scale: global), else as the command
    # line's default for it still does (force_alpha: the 1e-10 floor).
    for spec in cls.hyperparameters:
        if spec.name in params:
            continue
        if spec.file_default is not SAME:
            params[spec.name] = spec.file_default
        elif spec.cli_default is not SAME:
            params[spec.name] = spec.cli_default
    try:
        # Warnings the rebuild raises (collinear directions dropped, ...) were
        # reported once, with the real feature names, when the model was fit.
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = cls.from_stats(stats, classes, params, meta["n_features"], finalize=False)
            if meta.get("projection") is not None:
                # The stored projection, not one computed again: the file
                # scores the same under any BLAS (eigenvectors are not unique
                # to the last bit).
                from nbcli.models._projection import Projection

                model._stored_projection = Projection.from_arrays(
                    {n: arrays[f"projection.{n}"] for n in meta["projection"]["arrays"]}
                )
            model.finalize()
    except (ValueError, ArithmeticError) as exc:
        refuse(path, f"holds a model that cannot be rebuilt: {' '.join(str(exc).split())[:200]}")
    check.check_rebuilt(path, model)
    model.feature_names_in_ = np.asarray(meta["feature_names"], dtype=object)

    calib = meta.get("calibration")
    calibrator = None
    if calib is not None:
        calibrator = _calibrator(path, calib, arrays, len(classes))
    columns = None
    if meta.get("columns") is not None:
        columns = [
            {**c, "categories": texts[c["categories"]]} if "categories" in c else dict(c)
            for c in meta["columns"]
        ]
    vocabularies = None
    if meta.get("vocabularies") is not None:
        vocabularies = {column: texts[name] for column, name in meta["vocabularies"].items()}
    text = None
    if meta.get("text") is not None:
        text = check.check_text(path, meta, vocabularies)
        vocabularies = {c: vocabularies[c] for c in text.columns}  # type: ignore[index]
    check.check_text_term(path, model, text, vocabularies)
    return ModelFile(
        model=model,
        feature_names=list(meta["feature_names"]),
        target=meta.get("target"),
        training=meta["training"],
        calibrator=calibrator,
        calibration_info=calib,
        columns=columns,
        vocabularies=vocabularies,
        search=meta.get("search"),
        text=text,
        metadata=meta,
    )


def _calibrator(path, calib: dict, arrays: dict, n_classes: int):
    from nbcli.calibration import CALIBRATORS

    kind: Any = calib.get("method")
    if not isinstance(kind, str) or kind not in CALIBRATORS:
        refuse(path, f"has an unknown calibration method {str(kind)[:40]!r}")
    try:
        calibrator = CALIBRATORS[kind].from_arrays(
            {n: arrays[f"calibration.{n}"] for n in calib["arrays"]}
        )
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        refuse(path, f"has invalid calibration parameters: {' '.join(str(exc).split())[:200]}")
    calibrated_classes = getattr(calibrator, "n_classes_", n_classes)
    if calibrated_classes not in (None, n_classes):
        refuse(
            path,
            f"has a calibrator for {calibrated_classes} classes but the model "
            f"has {n_classes}; the file is corrupt",
        )
    return calibrator
