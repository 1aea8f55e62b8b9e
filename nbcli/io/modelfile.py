"""The model file: one ``.npz`` archive with a JSON metadata member and float64 arrays.

Layout (format version 1):

* ``metadata`` - uint8 array holding UTF-8 JSON: ``format`` ("nbcli-model"),
  ``format_version``, ``nbcli_version``, ``model`` (type), ``hyperparameters``,
  ``classes``, ``feature_names``, ``n_features``, ``target``, ``training``
  (``n_samples``, ``class_counts``, ``data_sha256``), ``stats`` (which
  statistics type and arrays follow) and ``calibration`` (null, or the
  calibrator kind and its arrays).
* ``stats.<name>`` - the model's sufficient statistics (float64). The
  scoring parameters are derived from them at load time, deterministically,
  so a loaded model predicts bit for bit as the saved one did, and two model
  files can be merged.
* ``calibration.<name>`` - the calibrator's parameters (float64), if any.

A model file is untrusted input: before any array is read, the member list,
every array header (dtype, shape) and the sizes are checked against the
metadata, so a file that declares absurd shapes is refused before memory is
allocated for it, and nothing is ever unpickled (``allow_pickle=False``).
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field

import numpy as np

from nbcli import __version__
from nbcli.errors import NbcliError
from nbcli.io.atomic import atomic_write
from nbcli.models import MODELS, BayesClassifier
from nbcli.models._stats import STATS_TYPES

FORMAT = "nbcli-model"
FORMAT_VERSION = 1
_METADATA_LIMIT = 64 * 1024 * 1024


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
        ``n_samples``, ``class_counts``, ``data_sha256`` and where the data came from.
    calibrator : object or None
        A calibrator from :mod:`nbcli.calibration`, applied on top of the model's
        posteriors by :meth:`predict_log_proba`.
    metadata : dict
        The raw metadata as read (or as it will be written).
    """

    model: BayesClassifier
    feature_names: list
    target: str | None = None
    training: dict = field(default_factory=dict)
    calibrator: object | None = None
    calibration_info: dict | None = None
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
    return v


def build_metadata(mf: ModelFile) -> dict:
    model = mf.model
    stats = model.stats_
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "nbcli_version": __version__,
        "model": model.model_type,
        "hyperparameters": {k: _json_param(v) for k, v in model.get_params().items()},
        "classes": [_json_label(c) for c in model.classes_.tolist()],
        "feature_names": [str(f) for f in mf.feature_names],
        "n_features": int(model.n_features_in_),
        "target": mf.target,
        "training": mf.training,
        "stats": {"type": type(stats).__name__, "arrays": sorted(stats.arrays())},
        "calibration": None,
    }
    if mf.calibrator is not None:
        info = dict(mf.calibration_info or {})
        info.update(method=mf.calibrator.kind, arrays=sorted(mf.calibrator.to_arrays()))
        meta["calibration"] = info
    return meta


def save_model(mf: ModelFile, path) -> None:
    """Write ``mf`` to ``path`` atomically (temporary file, fsync, rename).

    Raises
    ------
    NbcliError
        When the path cannot be written; an existing file there is left intact.
    """
    meta = build_metadata(mf)
    arrays = {"metadata": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)}
    for name, arr in mf.model.stats_.arrays().items():
        arrays[f"stats.{name}"] = np.ascontiguousarray(arr, dtype=np.float64)
    if mf.calibrator is not None:
        for name, arr in mf.calibrator.to_arrays().items():
            arrays[f"calibration.{name}"] = np.ascontiguousarray(arr, dtype=np.float64)
    with atomic_write(path, "wb") as f:
        np.savez(f, **arrays)
    mf.metadata = meta


# -- loading ----------------------------------------------------------------------------


def _refuse(path, why: str):
    raise NbcliError(f"{path}: {why}")


def _read_headers(path, zf: zipfile.ZipFile) -> dict[str, tuple]:
    """Dtype, shape and data size of every member, read from the .npy headers only."""
    headers = {}
    for info in zf.infolist():
        if not info.filename.endswith(".npy"):
            _refuse(path, f"member {info.filename!r} is not a NumPy array; not an nbcli model file")
        name = info.filename[:-4]
        if info.compress_type != zipfile.ZIP_STORED:
            _refuse(path, f"member {name!r} is compressed; nbcli model files store arrays uncompressed")
        with zf.open(info) as fp:
            try:
                version = np.lib.format.read_magic(fp)
                if version == (1, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
                elif version == (2, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp)
                else:
                    raise ValueError(f"unsupported .npy version {version}")
            except ValueError as exc:
                _refuse(path, f"member {name!r} has an invalid array header ({exc})")
            header_len = fp.tell()
        if dtype.hasobject:
            _refuse(path, f"member {name!r} holds object arrays (pickled data), which nbcli refuses to load")
        nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if nbytes != info.file_size - header_len:
            _refuse(
                path,
                f"member {name!r} declares shape {shape} ({nbytes} bytes) but holds "
                f"{info.file_size - header_len} bytes; the file is corrupt",
            )
        headers[name] = (dtype, tuple(shape))
    return headers


# Shape of each statistics array in units of (n_classes "K", n_features "d").
_STAT_SHAPES = {
    "count": "K", "class_count": "K",
    "shift": "Kd", "offset": "Kd", "m2": "Kd", "feature_count": "Kd",
    "scatter": "Kdd", "third": "Kdd", "fourth": "Kdd",
}


def _expected_shapes(meta: dict) -> dict[str, tuple]:
    size = {"K": len(meta["classes"]), "d": meta["n_features"]}
    return {
        f"stats.{n}": tuple(size[c] for c in _STAT_SHAPES[n]) for n in meta["stats"]["arrays"]
    }


def _check_metadata(path, meta) -> None:
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        _refuse(path, "is not an nbcli model file (no nbcli-model metadata)")
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        _refuse(path, "has no valid format_version; the file is corrupt")
    if version > FORMAT_VERSION:
        _refuse(
            path,
            f"was written by a newer nbcli (model format version {version}, from nbcli "
            f"{meta.get('nbcli_version', '?')}); this nbcli {__version__} reads up to version "
            f"{FORMAT_VERSION}: upgrade nbcli",
        )
    if version < 1:
        _refuse(path, f"has an invalid format_version {version}")
    required = {
        "model": str, "hyperparameters": dict, "classes": list, "feature_names": list,
        "n_features": int, "training": dict, "stats": dict,
    }
    for key, typ in required.items():
        if not isinstance(meta.get(key), typ):
            _refuse(path, f"metadata field {key!r} is missing or has the wrong type; the file is corrupt")
    if meta["model"] not in MODELS:
        _refuse(path, f"unknown model type {meta['model']!r}; known: {', '.join(MODELS)}")
    d = meta["n_features"]
    if isinstance(d, bool) or d < 1 or len(meta["feature_names"]) != d:
        _refuse(path, "n_features does not match feature_names; the file is corrupt")
    if not all(isinstance(f, str) for f in meta["feature_names"]) or len(set(meta["feature_names"])) != d:
        _refuse(path, "feature_names must be distinct strings; the file is corrupt")
    classes = meta["classes"]
    kinds = {type(c) for c in classes}
    if not classes or len(kinds) != 1 or not kinds <= {int, str, bool, float}:
        _refuse(path, "classes must be a non-empty list of labels of one type; the file is corrupt")
    if len({str(c) for c in classes}) != len(classes):
        _refuse(path, "classes are not distinct; the file is corrupt")
    st = meta["stats"]
    if st.get("type") not in STATS_TYPES or not isinstance(st.get("arrays"), list):
        _refuse(path, "unknown statistics type; the file is corrupt")


def load_model(path) -> ModelFile:
    """Read and validate a model file.

    Raises
    ------
    NbcliError
        For a missing or unreadable file, a file that is not an nbcli model,
        a newer format version, a corrupt or truncated archive, object
        (pickled) arrays, members the format does not define, or arrays whose
        headers disagree with the metadata. Nothing is unpickled and no array
        larger than its metadata allows is read.
    """
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        _refuse(path, "no such model file")
    except IsADirectoryError:
        _refuse(path, "is a folder, not a model file")
    except OSError as exc:
        _refuse(path, f"cannot read the model file ({exc.strerror or exc})")
    if not raw.startswith(b"PK"):
        _refuse(path, "is not an nbcli model file (not an .npz archive)")
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw))
        with zf:
            headers = _read_headers(path, zf)
            return _load_members(path, zf, headers)
    except NbcliError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, KeyError) as exc:
        _refuse(path, f"is not a valid .npz archive or is truncated ({type(exc).__name__}: {exc})")


def _read_member(zf, name):
    with zf.open(name + ".npy") as fp:
        return np.lib.format.read_array(fp, allow_pickle=False)


def _load_members(path, zf, headers) -> ModelFile:
    if "metadata" not in headers:
        _refuse(path, "is not an nbcli model file (no metadata member)")
    dtype, shape = headers["metadata"]
    if dtype != np.uint8 or len(shape) != 1 or shape[0] > _METADATA_LIMIT:
        _refuse(path, "has an invalid metadata member")
    try:
        meta = json.loads(_read_member(zf, "metadata").tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        _refuse(path, "has metadata that is not valid JSON; the file is corrupt")
    _check_metadata(path, meta)

    stats_cls = STATS_TYPES[meta["stats"]["type"]]
    if not set(meta["stats"]["arrays"]) <= set(_STAT_SHAPES):
        _refuse(path, "lists statistics arrays the format does not define")
    expected = _expected_shapes(meta)
    calib = meta.get("calibration")
    if calib is not None:
        if not isinstance(calib, dict) or not isinstance(calib.get("arrays"), list):
            _refuse(path, "has invalid calibration metadata")
        for n in calib["arrays"]:
            expected[f"calibration.{n}"] = None  # shape validated by the calibrator
    unexpected = sorted(set(headers) - set(expected) - {"metadata"})
    if unexpected:
        _refuse(path, f"holds members the format does not define: {', '.join(unexpected)}")
    missing = sorted(set(expected) - set(headers))
    if missing:
        _refuse(path, f"lacks members {', '.join(missing)}; the file is corrupt")
    for name, shape in expected.items():
        dt, sh = headers[name]
        if dt != np.float64:
            _refuse(path, f"member {name!r} has dtype {dt}, expected float64")
        if shape is not None and sh != shape:
            _refuse(path, f"member {name!r} has shape {sh}, expected {shape} from the metadata")
        if shape is None and (len(sh) != 1 or sh[0] > 16 * 1024 * 1024):
            _refuse(path, f"member {name!r} has an invalid shape {sh}")

    arrays = {name: _read_member(zf, name) for name in expected}
    stats_arrays = {n: arrays[f"stats.{n}"] for n in meta["stats"]["arrays"]}
    if not all(np.all(np.isfinite(a)) for a in stats_arrays.values()):
        _refuse(path, "holds non-finite statistics; the file is corrupt")
    try:
        stats = stats_cls(**stats_arrays)
    except TypeError:
        _refuse(path, "has statistics that do not fit its model type; the file is corrupt")

    cls = MODELS[meta["model"]]
    params = meta["hyperparameters"]
    unknown = set(params) - set(cls._get_param_names())
    if unknown:
        _refuse(path, f"has unknown hyperparameters {sorted(unknown)} for model {meta['model']!r}")
    classes = np.asarray(meta["classes"])
    try:
        model = cls.from_stats(stats, classes, params, meta["n_features"])
    except (ValueError, TypeError) as exc:
        _refuse(path, f"holds a model that cannot be rebuilt: {exc}")
    model.feature_names_in_ = np.asarray(meta["feature_names"], dtype=object)

    calibrator = None
    if calib is not None:
        from nbcli.calibration import CALIBRATORS

        kind = calib.get("method")
        if kind not in CALIBRATORS:
            _refuse(path, f"has an unknown calibration method {kind!r}")
        try:
            calibrator = CALIBRATORS[kind].from_arrays(
                {n: arrays[f"calibration.{n}"] for n in calib["arrays"]}
            )
        except ValueError as exc:
            _refuse(path, f"has invalid calibration parameters: {exc}")
        if getattr(calibrator, "n_classes", len(classes)) not in (None, len(classes)):
            _refuse(path, "has a calibrator for a different number of classes")
    return ModelFile(
        model=model,
        feature_names=list(meta["feature_names"]),
        target=meta.get("target"),
        training=meta["training"],
        calibrator=calibrator,
        calibration_info=calib,
        metadata=meta,
    )
