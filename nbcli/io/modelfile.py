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
metadata and against the bytes the file really holds, so a file that
declares absurd shapes is refused before memory is allocated for it, and
nothing is ever unpickled (``allow_pickle=False``). After reading, the
statistics must be ones some data set could give, and the rebuilt model
must have defined parameters and score its own class means.
"""

from __future__ import annotations

import json
import os
import struct
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


def _read_headers(path, zf: zipfile.ZipFile, archive_size: int) -> dict[str, tuple]:
    """Dtype and shape of every member, read from the .npy headers only.

    Every size is checked against the bytes the archive really holds, so a
    member whose header (or zip directory entry) declares more data than
    the file contains is refused before anything is allocated for it.
    """
    headers = {}
    for info in zf.infolist():
        if not info.filename.endswith(".npy"):
            _refuse(path, f"member {info.filename!r} is not a NumPy array; not an nbcli model file")
        name = info.filename[:-4]
        if name in headers:
            _refuse(path, f"holds member {name!r} twice; the file is corrupt")
        if info.flag_bits & 0x1:
            _refuse(path, f"member {name!r} is encrypted; nbcli model files are not")
        if info.compress_type != zipfile.ZIP_STORED:
            _refuse(
                path, f"member {name!r} is compressed; nbcli model files store arrays uncompressed"
            )
        if (
            info.file_size != info.compress_size
            or info.header_offset + info.compress_size > archive_size
        ):
            _refuse(
                path,
                f"member {name!r} declares {info.file_size} bytes, more than the file "
                "holds; the file is truncated or corrupt",
            )
        with zf.open(info) as fp:
            try:
                version = np.lib.format.read_magic(fp)
                if version == (1, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
                elif version == (2, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp)
                else:
                    raise ValueError(f"unsupported .npy version {version}")
            except (ValueError, TypeError, SyntaxError, RecursionError) as exc:
                reason = " ".join(str(exc).split())[:200]
                _refuse(path, f"member {name!r} has an invalid array header ({reason})")
            header_len = fp.tell()
        if dtype.hasobject:
            _refuse(
                path,
                f"member {name!r} holds object arrays (pickled data), which nbcli refuses to load",
            )
        nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if any(n < 0 for n in shape) or nbytes != info.file_size - header_len:
            _refuse(
                path,
                f"member {name!r} declares shape {shape} ({nbytes} bytes) but holds "
                f"{info.file_size - header_len} bytes; the file is corrupt",
            )
        headers[name] = (dtype, tuple(shape))
    return headers


# Shape of each statistics array in units of (n_classes "K", n_features "d").
_STAT_SHAPES = {
    "count": "K",
    "class_count": "K",
    "shift": "Kd",
    "offset": "Kd",
    "m2": "Kd",
    "feature_count": "Kd",
    "scatter": "Kdd",
    "third": "Kdd",
    "fourth": "Kdd",
    "within": "dd",
}


def _expected_shapes(meta: dict) -> dict[str, tuple]:
    size = {"K": len(meta["classes"]), "d": meta["n_features"]}
    return {f"stats.{n}": tuple(size[c] for c in _STAT_SHAPES[n]) for n in meta["stats"]["arrays"]}


# The statistics each model type is fitted from.
_STATS_OF_MODEL = {
    "gaussian": ("ClassMoments",),
    "multinomial": ("ClassCounts",),
    "bernoulli": ("ClassCounts",),
    "lda": ("PooledScatter", "ClassScatter"),  # the latter for shrinkage="auto"
    "qda": ("ClassScatter",),
}


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
        _refuse(path, "classes must be a non-empty list of labels of one type; the file is corrupt")
    if kinds == {int} and not all(-(2**63) <= c < 2**64 for c in classes):
        _refuse(path, "classes hold integers too large for a label; the file is corrupt")
    if kinds == {float} and not all(np.isfinite(c) for c in classes):
        _refuse(path, "classes hold a value that is not finite; the file is corrupt")
    if len({str(c) for c in classes}) != len(classes):
        _refuse(path, "classes are not distinct; the file is corrupt")


def _check_metadata(path, meta) -> None:
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        _refuse(path, "is not an nbcli model file (no nbcli-model metadata)")
    version = meta.get("format_version")
    if not _is_int(version):
        _refuse(path, "has no valid format_version; the file is corrupt")
    if version > FORMAT_VERSION:
        written_by = meta.get("nbcli_version")
        written_by = written_by if isinstance(written_by, str) else "?"
        _refuse(
            path,
            f"was written by a newer nbcli (model format version {version}, from nbcli "
            f"{written_by[:40]}); this nbcli {__version__} reads up to version "
            f"{FORMAT_VERSION}: upgrade nbcli",
        )
    if version < 1:
        _refuse(path, f"has an invalid format_version {version}")
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
            _refuse(
                path,
                f"metadata field {key!r} is missing or has the wrong type; the file is corrupt",
            )
    if meta["model"] not in MODELS:
        _refuse(path, f"unknown model type {meta['model'][:40]!r}; known: {', '.join(MODELS)}")
    d = meta["n_features"]
    if isinstance(d, bool) or d < 1 or len(meta["feature_names"]) != d:
        _refuse(path, "n_features does not match feature_names; the file is corrupt")
    if not _names(meta["feature_names"]):
        _refuse(path, "feature_names must be distinct strings; the file is corrupt")
    _check_label_list(path, meta["classes"])
    target = meta.get("target")
    if target is not None and not isinstance(target, str):
        _refuse(path, "metadata field 'target' must be a column name; the file is corrupt")
    st = meta["stats"]
    if st.get("type") not in _STATS_OF_MODEL[meta["model"]] or not _names(st.get("arrays")):
        _refuse(
            path,
            f"has statistics of an unknown type or of the wrong type for a "
            f"{meta['model']} model; the file is corrupt",
        )
    if not set(st["arrays"]) <= set(_STAT_SHAPES):
        _refuse(path, "lists statistics arrays the format does not define")
    calib = meta.get("calibration")
    if calib is not None and not (isinstance(calib, dict) and _names(calib.get("arrays"))):
        _refuse(path, "has invalid calibration metadata")


def _check_stats(path, stats) -> None:
    """Refuse statistics no data set could have produced: negative counts,
    sums of squares or feature sums, or no sample at all. (Subtler damage
    shows in the rebuilt model, see :func:`_check_rebuilt`.)"""
    arrays = stats.arrays()
    counts = arrays.get("count", arrays.get("class_count"))
    if np.any(counts < 0) or not counts.sum() > 0:
        _refuse(path, "holds class counts that are negative or all zero; the file is corrupt")
    squares = arrays.get("m2")
    if squares is None and "scatter" in arrays:
        squares = np.diagonal(arrays["scatter"], axis1=1, axis2=2)
    if squares is None and "within" in arrays:
        squares = np.diagonal(arrays["within"])
    if squares is not None and np.any(squares < 0):
        _refuse(path, "holds negative sums of squares; the file is corrupt")
    if "feature_count" in arrays and np.any(arrays["feature_count"] < 0):
        _refuse(path, "holds negative feature counts; the file is corrupt")


def _check_rebuilt(path, model) -> None:
    """Refuse a model that cannot score: a scoring parameter that is not a
    number (NaN) or infinitely favourable (+inf; -inf is legitimate, the log
    of a zero prior), or, for the models with class means, posteriors at its
    own class means that are not finite."""
    for name, value in vars(model).items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            if np.any(np.isnan(value)) or np.any(value == np.inf):
                _refuse(
                    path,
                    f"holds statistics that give the {model.model_type} model an "
                    f"undefined parameter ({name.strip('_')}); the file is corrupt",
                )
    stats = model.stats_
    if hasattr(stats, "mean"):
        with np.errstate(all="ignore"):
            logp = model.predict_log_proba(stats.mean[stats.count > 0])
        if np.isnan(logp).any() or not np.isfinite(logp.max(axis=1)).all():
            _refuse(
                path,
                f"holds statistics with which the {model.model_type} model cannot "
                "score even its own class means; the file is corrupt",
            )


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
        handle = open(path, "rb")
    except FileNotFoundError:
        _refuse(path, "no such model file")
    except IsADirectoryError:
        _refuse(path, "is a folder, not a model file")
    except OSError as exc:
        _refuse(path, f"cannot read the model file ({exc.strerror or exc})")
    with handle:
        try:
            magic = handle.read(4)
            archive_size = os.fstat(handle.fileno()).st_size
        except OSError as exc:
            _refuse(path, f"cannot read the model file ({exc.strerror or exc})")
        if not magic.startswith(b"PK"):
            _refuse(path, "is not an nbcli model file (not an .npz archive)")
        try:
            handle.seek(0)
            with zipfile.ZipFile(handle) as zf:
                headers = _read_headers(path, zf, archive_size)
                return _load_members(path, zf, headers)
        except NbcliError:
            raise
        except _BROKEN_ARCHIVE as exc:
            reason = " ".join(str(exc).split())[:200]
            _refuse(
                path,
                f"is not a valid .npz archive or is truncated ({type(exc).__name__}: {reason})",
            )


# What a damaged archive makes zipfile and NumPy raise. Encrypted members and
# unknown zip versions raise RuntimeError and NotImplementedError.
_BROKEN_ARCHIVE = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    EOFError,
    OSError,
    ValueError,
    KeyError,
    NotImplementedError,
    RuntimeError,
    struct.error,
    OverflowError,
)


def _no_constant(name):
    raise ValueError(f"{name} is not a JSON number")


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
        meta = json.loads(
            _read_member(zf, "metadata").tobytes().decode("utf-8"), parse_constant=_no_constant
        )
    except (ValueError, RecursionError):  # bad UTF-8 or JSON, NaN, overlong numbers
        _refuse(path, "has metadata that is not valid JSON; the file is corrupt")
    _check_metadata(path, meta)

    stats_cls = STATS_TYPES[meta["stats"]["type"]]
    expected = _expected_shapes(meta)
    calib = meta.get("calibration")
    if calib is not None:
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
    _check_stats(path, stats)

    cls = MODELS[meta["model"]]
    params = meta["hyperparameters"]
    unknown = set(params) - set(cls._get_param_names())
    if unknown:
        _refuse(path, f"has unknown hyperparameters {sorted(unknown)} for model {meta['model']!r}")
    classes = np.asarray(meta["classes"])
    try:
        with np.errstate(all="ignore"):  # the result is checked just below
            model = cls.from_stats(stats, classes, params, meta["n_features"])
    except (ValueError, TypeError, ArithmeticError) as exc:
        _refuse(path, f"holds a model that cannot be rebuilt: {' '.join(str(exc).split())[:200]}")
    _check_rebuilt(path, model)
    model.feature_names_in_ = np.asarray(meta["feature_names"], dtype=object)

    calibrator = None
    if calib is not None:
        from nbcli.calibration import CALIBRATORS

        kind = calib.get("method")
        if not isinstance(kind, str) or kind not in CALIBRATORS:
            _refuse(path, f"has an unknown calibration method {str(kind)[:40]!r}")
        try:
            calibrator = CALIBRATORS[kind].from_arrays(
                {n: arrays[f"calibration.{n}"] for n in calib["arrays"]}
            )
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            _refuse(path, f"has invalid calibration parameters: {' '.join(str(exc).split())[:200]}")
        if getattr(calibrator, "n_classes_", len(classes)) not in (None, len(classes)):
            _refuse(
                path,
                f"has a calibrator for {calibrator.n_classes_} classes but the model "
                f"has {len(classes)}; the file is corrupt",
            )
    return ModelFile(
        model=model,
        feature_names=list(meta["feature_names"]),
        target=meta.get("target"),
        training=meta["training"],
        calibrator=calibrator,
        calibration_info=calib,
        metadata=meta,
    )
