"""Fuzzing the readers and the model loader with generated and mutated files.

Whatever the bytes, :func:`nbcli.io.data.read_dataset` and
:func:`nbcli.io.modelfile.load_model` either return something that keeps
their promises (finite float64 features, labels for every row; a model that
scores) or raise :class:`~nbcli.errors.NbcliError` with a one-line message
naming the file. Any other exception is a bug. Inputs are random bytes and
structured mutations of valid files: byte flips, cuts, inserted tokens,
edited JSON metadata and replaced arrays inside a well-formed archive.
"""

from __future__ import annotations

import copy
import gzip
import io
import json
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from nbcli.errors import NbcliError
from nbcli.io.data import iter_dataset, read_dataset
from nbcli.io.modelfile import ModelFile, load_model, save_model
from nbcli.models import MODELS
from tests.conftest import SAMPLE, blobs, npy_bytes, zip_bytes, zip_members
from tests.declared import as_declared, leaves_missing_cells_out, non_default_params

# Each test stays around a second or two; the whole file well under 30 s.
# Derandomised, so a run is reproducible; for a longer search, raise
# max_examples and drop derandomize (every test here passed 3000 random examples).
FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

BASE_CSV = b"".join((SAMPLE / "iris_train.csv").read_bytes().splitlines(keepends=True)[:9])

# Bytes that mean something to a CSV reader or a number parser.
TOKENS = [
    b",",
    b";",
    b"\t",
    b"|",
    b"\n",
    b"\r\n",
    b"\r",
    b'"',
    b'""',
    b"nan",
    b"NA",
    b"inf",
    b"-inf",
    b"1e999",
    b"1e308",
    b"-0",
    b"5e-324",
    b"\xef\xbb\xbf",
    b"\x00",
    b"\xff",
    b"label",
    b"True",
    b" ",
    b"1,5",
    b"\xe2\x80\xa8",
    b"#",
    b"0x1F",
    b"\xd9\xa1",
]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@st.composite
def mutated(draw, base: bytes) -> bytes:
    """``base`` after one to six flips, cuts, insertions, deletions or repeats."""
    data = bytearray(base)
    for op in draw(
        st.lists(
            st.sampled_from(["flip", "cut", "insert", "delete", "repeat"]), min_size=1, max_size=6
        )
    ):
        n = len(data)
        at = draw(st.integers(0, max(n - 1, 0)))
        if op == "flip" and n:
            data[at] = draw(st.integers(0, 255))
        elif op == "cut":
            del data[at:]
        elif op == "insert":
            data[at:at] = draw(st.sampled_from(TOKENS) | st.binary(min_size=1, max_size=4))
        elif op == "delete":
            del data[at : at + draw(st.integers(1, 8))]
        elif op == "repeat" and n:
            data[at:at] = data[at : at + draw(st.integers(1, 40))]
    return bytes(data)


def _read(path, **options):
    """read_dataset, held to its contract."""
    try:
        ds = read_dataset(path, **options)
    except NbcliError as exc:
        message = str(exc)
        assert message.startswith(f"{path}: ") and "\n" not in message, message
        return None
    assert ds.X.dtype == np.float64 and ds.X.ndim == 2 and ds.X.shape[0] >= 1
    assert np.all(np.isfinite(ds.X))
    assert len(ds.feature_names) == ds.X.shape[1] == len(set(ds.feature_names))
    if ds.y is not None:
        assert ds.y.shape == (ds.X.shape[0],) and ds.y.dtype.kind in "biuUO"
    return ds


def _stream(path, chunk_size, **options):
    """iter_dataset in small chunks, held to the same contract."""
    try:
        rows = sum(
            chunk.X.shape[0] for chunk in iter_dataset(path, chunk_size=chunk_size, **options)
        )
    except NbcliError as exc:
        assert str(exc).startswith(f"{path}: ") and "\n" not in str(exc)
        return None
    return rows


def _load(path):
    """load_model, held to its contract: a loaded model scores its own class
    means (the models with means) or rows of zeros and ones (the count models)."""
    try:
        mf = load_model(path)
    except NbcliError as exc:
        message = str(exc)
        assert message.startswith(f"{path}: ") and "\n" not in message, message
        return None
    stats = mf.model.stats_
    if hasattr(stats, "mean"):
        probe = stats.mean[stats.count > 0]
    else:
        probe = np.vstack([np.zeros(mf.model.n_features_in_), np.ones(mf.model.n_features_in_)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        logp = mf.predict_log_proba(probe)
    assert logp.shape == (len(probe), len(mf.classes))
    assert not np.isnan(logp).any()
    return mf


# ---------------------------------------------------------------------------
# Data files


OPTIONS = st.sampled_from(
    [
        {},
        {"need_target": False},
        {"target": "label"},
        {"delimiter": ";"},
        {"model_features": ["sepal_length_cm", "petal_width_cm"], "need_target": False},
        {"keep": ["label"], "need_target": False},
        {"drop": ["sepal_width_cm"]},
    ]
)


@FUZZ
@given(raw=st.binary(max_size=600), options=OPTIONS)
def test_random_bytes_as_a_data_file(work, raw, options):
    for name, content in (
        ("r.csv", raw),
        ("r.csv.gz", gzip.compress(raw)),
        ("r.npz", raw),
        ("rz.csv.gz", raw),
    ):
        (work / name).write_bytes(content)
        _read(work / name, **options)


@FUZZ
@given(raw=mutated(BASE_CSV), options=OPTIONS, chunk=st.integers(1, 4))
def test_mutated_csv(work, raw, options, chunk):
    path = work / "m.csv"
    path.write_bytes(raw)
    whole = _read(path, **options)
    rows = _stream(path, chunk, **options)
    if whole is not None:
        # Read whole or in chunks, the same rows come out.
        assert rows == whole.X.shape[0]
    gz = work / "m.csv.gz"
    gz.write_bytes(gzip.compress(raw))
    again = _read(gz, **options)
    assert (again is None) == (whole is None)
    if whole is not None:
        np.testing.assert_array_equal(again.X, whole.X)


@FUZZ
@given(raw=mutated(gzip.compress(BASE_CSV)))
def test_damaged_gzip(work, raw):
    path = work / "d.csv.gz"
    path.write_bytes(raw)
    _read(path)
    _stream(path, 3)


ARRAY_DTYPES = st.sampled_from(
    ["<f8", "<f4", ">f8", "<i8", "|u1", "|b1", "<U3", "|S2", "<c16", "<M8[s]", "<m8[s]", "<f2"]
)


def _array(draw_dtype, shape_dims):
    return hnp.arrays(
        dtype=draw_dtype,
        shape=hnp.array_shapes(min_dims=0, max_dims=shape_dims, min_side=0, max_side=4),
    )


@st.composite
def data_archives(draw) -> bytes:
    """An .npz data file: mostly well-formed X, y and feature_names, sometimes
    with a member replaced by an array of any shape and dtype."""
    n, d = draw(st.integers(1, 5)), draw(st.integers(1, 3))
    members = {
        "X": draw(
            hnp.arrays(np.float64, (n, d), elements=st.floats(-1e300, 1e300) | st.just(np.nan))
        ),
        "y": np.arange(n) % 2,
        "feature_names": np.array([f"f{j}" for j in range(d)]),
    }
    for key in draw(st.lists(st.sampled_from(["X", "y", "feature_names", "label"]), max_size=2)):
        if draw(st.booleans()):
            members[key] = draw(_array(ARRAY_DTYPES, 3))
        else:
            members.pop(key, None)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (np.savez_compressed if draw(st.booleans()) else np.savez)(buf, **members)
    return buf.getvalue()


@FUZZ
@given(
    raw=data_archives(),
    options=st.sampled_from(
        [
            {},
            {"need_target": False},
            {"target": "label"},
            {"features": ["f0"]},
            {"model_features": ["f0"], "need_target": False},
            {"keep": ["y"]},
        ]
    ),
)
def test_structured_npz_data(work, raw, options):
    path = work / "s.npz"
    path.write_bytes(raw)
    _read(path, **options)


@pytest.mark.parametrize(
    "arrays, what",
    [
        ({"y": np.array([b"\x80a", b"b"])}, "labels in y"),
        ({"feature_names": np.array([b"caf\xe9"])}, "feature_names"),
    ],
)
def test_npz_bytes_that_are_not_utf8(work, arrays, what):
    """Byte strings (dtype S) are decoded as UTF-8, not ASCII; others are refused
    (found by the fuzzer: NumPy's own conversion raised UnicodeDecodeError)."""
    path = work / "bytes.npz"
    np.savez(path, X=np.ones((2, 1)), **{"y": np.array([1, 2]), **arrays})
    with pytest.raises(NbcliError, match=f"{what} are bytes that are not UTF-8"):
        read_dataset(path)
    np.savez(
        path,
        X=np.ones((2, 1)),
        y=np.array(["café".encode(), b"b"]),
        feature_names=np.array(["été".encode()]),
    )
    ds = read_dataset(path)
    assert ds.y.tolist() == ["café", "b"] and ds.feature_names == ["été"]


# ---------------------------------------------------------------------------
# Model files


def _model_file(name: str) -> ModelFile:
    # Rows of the kinds the class declares, every setting it declares other
    # than its default (so the metadata holds each), and missing cells where
    # those settings leave them out.
    cls = MODELS[name]
    X, y = blobs(n_per_class=12, d=3, seed=4)
    X = as_declared(cls, X)
    params = non_default_params(cls, X.shape[1], n_classes=2)
    if leaves_missing_cells_out(params, cls):
        X[::5, 1] = np.nan
    model = cls(**params).fit(X, y)
    return ModelFile(
        model=model, feature_names=["f1", "f2", "f3"], target="label", training={"n_samples": 24}
    )


@pytest.fixture(scope="module")
def models(work) -> dict[str, bytes]:
    out = {}
    for name in MODELS:
        path = work / f"base_{name}.npz"
        save_model(_model_file(name), path)
        out[name] = path.read_bytes()
    return out


MODEL_NAMES = st.sampled_from(list(MODELS))


@FUZZ
@given(raw=st.binary(max_size=400))
def test_random_bytes_as_a_model(work, raw):
    path = work / "r_model.npz"
    path.write_bytes(raw)
    _load(path)
    path.write_bytes(b"PK\x03\x04" + raw)
    _load(path)


@FUZZ
@given(data=st.data(), name=MODEL_NAMES)
def test_mutated_model_bytes(work, models, data, name):
    path = work / "b_model.npz"
    path.write_bytes(data.draw(mutated(models[name])))
    _load(path)


JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
    | st.sampled_from(
        [
            "gaussian",
            "qda",
            "ClassScatter",
            "ClassCounts",
            "ClassMoments",
            "isotonic",
            "temperature",
            "auto",
            "count",
            "m2",
            "scatter",
            "fourth",
            "feature_count",
        ]
    )
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def _paths(obj, prefix=()):
    """Every key path into a JSON document."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


def _rezip(members: dict, meta: dict | None = None, text: str | None = None) -> bytes:
    if meta is not None or text is not None:
        text = json.dumps(meta) if text is None else text
        members = {**members, "metadata.npy": npy_bytes(np.frombuffer(text.encode(), np.uint8))}
    return zip_bytes(members)


def _meta(raw: bytes) -> dict:
    members = zip_members(io.BytesIO(raw))
    return json.loads(np.load(io.BytesIO(members["metadata.npy"])).tobytes())


@FUZZ
@given(data=st.data(), name=MODEL_NAMES)
def test_model_metadata_edits(work, models, data, name):
    """Valid archives (every CRC right) whose JSON metadata was edited."""
    members = zip_members(io.BytesIO(models[name]))
    meta = _meta(models[name])
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [p for p in _paths(meta) if p]
        where = data.draw(st.sampled_from(paths))
        parent = meta
        for key in where[:-1]:
            parent = parent[key]
        if data.draw(st.integers(0, 4)) == 0 and isinstance(parent, dict):
            del parent[where[-1]]
        else:
            parent[where[-1]] = data.draw(JSON_VALUES)
    text = json.dumps(meta)
    if data.draw(st.integers(0, 9)) == 0:
        text = text[: data.draw(st.integers(0, len(text)))]
    path = work / "j_model.npz"
    path.write_bytes(_rezip(members, text=text))
    _load(path)


EXTREMES = st.sampled_from(
    [0.0, -0.0, -1.0, 1.0, 1e308, -1e308, 1e-320, 1e154, -1e154, np.inf, -np.inf, np.nan, 2.0**53]
)


@FUZZ
@given(data=st.data(), name=MODEL_NAMES)
def test_model_array_edits(work, models, data, name):
    """Valid archives whose statistics arrays were changed: extreme entries,
    other dtypes or shapes, Fortran order, dropped or added members."""
    members = zip_members(io.BytesIO(models[name]))
    stats = sorted(k for k in members if k != "metadata.npy")
    for _ in range(data.draw(st.integers(1, 3))):
        key = data.draw(st.sampled_from(stats + ["extra.npy"]))
        how = data.draw(st.sampled_from(["entry", "entry", "dtype", "shape", "fortran", "drop"]))
        if key not in members:
            members[key] = npy_bytes(np.zeros(2))
            continue
        array = np.load(io.BytesIO(members[key]))
        if how == "entry" and array.size and array.dtype.kind == "f":
            array = array.copy()
            with np.errstate(over="ignore"):  # 1e308 becomes inf in a float32 array
                array.flat[data.draw(st.integers(0, array.size - 1))] = data.draw(EXTREMES)
        elif how == "dtype":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                array = array.astype(
                    data.draw(st.sampled_from(["<f4", ">f8", "<i8", "|u1", "<c16"]))
                )
        elif how == "shape":
            array = data.draw(_array(st.just("<f8"), 3))
        elif how == "fortran" and array.ndim >= 2:
            array = np.asfortranarray(array.T)
        elif how == "drop":
            members.pop(key)
            continue
        members[key] = npy_bytes(array)
    path = work / "a_model.npz"
    path.write_bytes(zip_bytes(members))
    _load(path)


def test_the_base_models_load_and_score(work, models):
    """The fuzzers start from files that load: their refusals come from the mutations."""
    for name, raw in models.items():
        path = work / f"ok_{name}.npz"
        path.write_bytes(raw)
        mf = _load(path)
        assert mf is not None and mf.model.model_type == name
    members = zip_members(io.BytesIO(models["gaussian"]))
    path = work / "rezipped.npz"
    path.write_bytes(_rezip(members, meta=copy.deepcopy(_meta(models["gaussian"]))))
    assert _load(path) is not None
