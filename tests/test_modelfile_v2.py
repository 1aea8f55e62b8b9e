"""Format version 2: text arrays, column types and categories, vocabularies,
the fingerprint and search summaries; damaged members are refused in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbcli.errors import NbcliError
from nbcli.io.modelfile import FORMAT_VERSION, ModelFile, load_model, save_model
from nbcli.io.text_arrays import decode_texts, encode_texts
from nbcli.models import GaussianNB
from tests.conftest import (
    assert_one_error_line,
    blobs,
    nbcli_in_process,
    npy_bytes,
    zip_bytes,
    zip_members,
)

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical


@given(st.lists(st.text()))
def test_text_arrays_round_trip(texts):
    data, offsets = encode_texts(texts)
    assert data.dtype == np.uint8 and offsets.dtype == np.int64
    assert offsets.shape == (len(texts) + 1,) and offsets[-1] == data.size
    assert decode_texts(data, offsets) == texts


def test_text_array_layout_is_bytes_and_offsets():
    data, offsets = encode_texts(["a", "", "bé"])
    assert data.tobytes() == "abé".encode()
    assert offsets.tolist() == [0, 1, 1, 4]


@pytest.mark.parametrize(
    "data, offsets, message",
    [
        (b"abc", [0, 2, 1, 3], "decrease at string 1"),
        (b"abc", [1, 3], "from 0 to the 3 bytes"),
        (b"abc", [0, 2], "from 0 to the 3 bytes"),
        (b"abc", [0, 4], "from 0 to the 3 bytes"),
        (b"a\xffc", [0, 1, 3], "text 1 is not valid UTF-8"),
        (b"", [], "non-empty 1-D int64"),
    ],
)
def test_damaged_text_arrays_are_refused(data, offsets, message):
    with pytest.raises(ValueError, match=message):
        decode_texts(np.frombuffer(data, dtype=np.uint8), np.asarray(offsets, dtype=np.int64))


def test_text_arrays_need_their_dtypes():
    with pytest.raises(ValueError, match="uint8"):
        decode_texts(np.zeros(2), np.array([0, 2]))
    with pytest.raises(ValueError, match="int64"):
        decode_texts(np.zeros(2, dtype=np.uint8), np.array([0, 2], dtype=np.int32))
    with pytest.raises(TypeError, match="strings"):
        encode_texts(["a", 1])


def _v2_file() -> ModelFile:
    X, y = blobs(n_per_class=15, d=3)
    return ModelFile(
        model=GaussianNB().fit(X, y),
        feature_names=["a", "island", "notes"],
        target="label",
        training={
            "n_samples": 30,
            "class_counts": [15, 15],
            "data_sha256": "0" * 64,
            "fingerprint": {"algorithm": "xxh3-rows", "value": "00ff"},
        },
        columns=[
            {"name": "a", "type": "gaussian"},
            {"name": "island", "type": "categorical", "categories": ["Biscoe", "Dream", "Ø"]},
            {"name": "notes", "type": "text"},
        ],
        vocabularies={"notes": ["penguin", "bird", "ice"]},
        search={"metric": "accuracy", "results": [{"params": {"var_smoothing": 1e-9}}]},
    )


def test_version_2_members_round_trip(tmp_path):
    path = tmp_path / "m.npz"
    mf = _v2_file()
    save_model(mf, path)
    back = load_model(path)
    assert back.metadata["format_version"] == FORMAT_VERSION == 2
    assert back.columns == mf.columns
    assert back.vocabularies == mf.vocabularies
    assert back.search == mf.search
    assert back.training["fingerprint"] == {"algorithm": "xxh3-rows", "value": "00ff"}
    members = zip_members(path)
    assert {"text.columns.1.categories.data.npy", "text.vocabularies.0.offsets.npy"} <= set(members)
    assert back.metadata["columns"][1]["categories"] == "columns.1.categories"


def test_a_model_without_version_2_members_has_none_of_them(tmp_path):
    X, y = blobs()
    save_model(
        ModelFile(model=GaussianNB().fit(X, y), feature_names=["a", "b", "c"]), tmp_path / "m.npz"
    )
    back = load_model(tmp_path / "m.npz")
    assert back.columns is None and back.vocabularies is None and back.search is None
    assert not {"texts", "columns", "vocabularies", "search"} & set(back.metadata)


def _damaged(tmp_path, member: str, array) -> str:
    good = tmp_path / "good.npz"
    save_model(_v2_file(), good)
    members = zip_members(good)
    members[member + ".npy"] = npy_bytes(array)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(zip_bytes(members))
    return str(bad)


@pytest.mark.parametrize(
    "member, array, fragment",
    [
        ("text.columns.1.categories.offsets", np.array([0, 9, 3, 13]), "decrease"),
        ("text.columns.1.categories.offsets", np.array([0, 6, 11, 99]), "from 0 to the"),
        ("text.vocabularies.0.data", np.frombuffer(b"\xff" * 14, np.uint8), "not valid UTF-8"),
        ("text.vocabularies.0.data", np.zeros(14), "1-D uint8"),
    ],
)
def test_a_damaged_text_member_is_refused_in_one_line(tmp_path, member, array, fragment):
    bad = _damaged(tmp_path, member, array)
    with pytest.raises(NbcliError, match=fragment):
        load_model(bad)
    data = tmp_path / "x.csv"
    data.write_text("a,island,notes\n1,2,3\n", encoding="utf-8")
    run = nbcli_in_process("predict", "-m", bad, "-d", data)
    assert_one_error_line(run, bad, fragment)


def _with_metadata(tmp_path, **changes) -> str:
    good = tmp_path / "good.npz"
    save_model(_v2_file(), good)
    members = zip_members(good)
    meta = dict(load_model(good).metadata)
    meta.update(changes)
    members["metadata.npy"] = npy_bytes(np.frombuffer(json.dumps(meta).encode(), np.uint8))
    bad = tmp_path / "bad.npz"
    bad.write_bytes(zip_bytes(members))
    return str(bad)


@pytest.mark.parametrize(
    "changes, fragment",
    [
        ({"columns": [{"name": "a", "type": "fancy"}]}, "unknown type 'fancy'"),
        ({"columns": [{"name": "a", "type": "categorical", "categories": "nope"}]}, "'nope'"),
        ({"columns": {"a": 1}}, "'columns' must be a list"),
        ({"vocabularies": {"notes": "missing"}}, "'missing'"),
        ({"texts": ["x", "x"]}, "'texts'"),
        ({"search": [1]}, "'search' must be an object"),
        ({"texts": ["columns.1.categories", "vocabularies.0", "extra"]}, "lacks members"),
    ],
)
def test_malformed_version_2_metadata_is_refused(tmp_path, changes, fragment):
    with pytest.raises(NbcliError, match=fragment):
        load_model(_with_metadata(tmp_path, **changes))


def test_a_malformed_fingerprint_is_refused(tmp_path):
    training = dict(_v2_file().training, fingerprint={"algorithm": 3})
    with pytest.raises(NbcliError, match="training.fingerprint"):
        load_model(_with_metadata(tmp_path, training=training))


def test_a_programming_error_is_not_reported_as_a_corrupt_file(tmp_path, monkeypatch):
    path = tmp_path / "m.npz"
    save_model(_v2_file(), path)

    def broken(*args, **kwargs):
        raise TypeError("a bug in nbcli")

    monkeypatch.setattr(GaussianNB, "finalize", broken)
    with pytest.raises(TypeError, match="a bug in nbcli"):
        load_model(path)
