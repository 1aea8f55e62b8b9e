"""The model file: exact round trips, its metadata, deterministic bytes,
atomic saves, and loading that never unpickles nor allocates what the file
does not hold."""

from __future__ import annotations

import errno
import io
import json
import pickle
import zipfile

import numpy as np
import pytest

from nbcli.errors import NbcliError
from nbcli.io.modelfile import FORMAT_VERSION, ModelFile, load_model, save_model
from nbcli.models import MODELS
from tests.conftest import (
    SMALL_CSV,
    blobs,
    fitted_model_file,
    lying_archive,
    npy_header,
    zip_bytes,
    zip_members,
)
from tests.declared import as_declared, leaves_missing_cells_out, non_default_params

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical


def _settings(name, missing=None) -> dict:
    # Non-default settings, so that a parameter lost on the way would show;
    # the missing-cell policy (which decides the statistics) as given.
    params = non_default_params(MODELS[name], n_features=4)
    params.pop("missing", None)
    if missing is not None:
        params["missing"] = missing
    return params


def _data(name, seed=0, missing=None):
    """Rows model ``name`` takes (from its declared feature kinds), with missing
    cells where its settings leave them out."""
    X, y = blobs(n_per_class=25, d=4, seed=seed)
    X = as_declared(MODELS[name], X)
    if leaves_missing_cells_out(_settings(name, missing), MODELS[name]):
        X[::5, 0] = np.nan
        X[1::6, 1:] = np.nan
    return X, y


def _model_file(name, y=None, seed=0, missing=None) -> ModelFile:
    X, y_default = _data(name, seed, missing)
    y = y_default if y is None else y
    model = MODELS[name](**_settings(name, missing)).fit(X, y)
    return ModelFile(
        model=model,
        feature_names=["f1", "f2", "f3", "f4"],
        target="label",
        training={"n_samples": len(y), "class_counts": [25, 25], "data_sha256": "0" * 64},
    )


def _arrays(path) -> dict:
    with zipfile.ZipFile(path) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def _metadata(path) -> dict:
    return json.loads(np.load(io.BytesIO(_arrays(path)["metadata.npy"])).tobytes())


def _rewrite(path, metadata=None, **members):
    """Rewrite a model file with changed metadata and/or member bytes."""
    contents = _arrays(path)
    if metadata is not None:
        buf = io.BytesIO()
        np.save(buf, np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8))
        contents["metadata.npy"] = buf.getvalue()
    for name, array in members.items():
        buf = io.BytesIO()
        np.save(buf, array)
        contents[name.replace("__", ".") + ".npy"] = buf.getvalue()
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in contents.items():
            zf.writestr(name, data)


# ---------------------------------------------------------------------------
# Round trips


@pytest.mark.parametrize(
    "name, missing",
    [
        (name, option)
        for name, cls in MODELS.items()
        for spec in cls.hyperparameters
        if spec.name == "missing"
        for option in spec.options
    ],
)
def test_round_trip_is_bit_for_bit(tmp_path, name, missing):
    mf = _model_file(name, missing=missing)
    path = tmp_path / "m.npz"
    save_model(mf, path)
    back = load_model(path)
    saved, loaded = mf.model.stats_.arrays(), back.model.stats_.arrays()
    assert sorted(saved) == sorted(loaded)
    for key in saved:
        assert loaded[key].dtype == np.float64
        np.testing.assert_array_equal(loaded[key], saved[key], err_msg=key)
    assert back.model.get_params() == mf.model.get_params()
    # The sizes the data decided (categories, columns of each type) are stored.
    assert _metadata(path)["stats"].get("dims", {}) == mf.model.stats_.dimensions()
    X, _ = _data(name, seed=5, missing=missing)
    assert np.all(back.model.predict_proba(X) == mf.model.predict_proba(X))
    assert np.all(back.predict_proba(X) == mf.predict_proba(X))
    assert np.all(back.model.joint_log_likelihood(X) == mf.model.joint_log_likelihood(X))
    assert np.array_equal(back.predict(X), mf.model.predict(X))
    assert back.feature_names == ["f1", "f2", "f3", "f4"] and back.target == "label"
    assert list(back.model.feature_names_in_) == back.feature_names


@pytest.mark.parametrize(
    "labels, kind, python_type",
    [
        (np.array([3, 11]), "i", int),
        (np.array(["spam", "ham"]), "O", str),
        (np.array([True, False]), "b", bool),
    ],
)
def test_labels_keep_their_type(tmp_path, labels, kind, python_type):
    y = np.repeat(labels, 25)
    mf = _model_file("gaussian", y=y)
    save_model(mf, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    assert back.classes.dtype.kind == kind
    assert [type(c) for c in _metadata(tmp_path / "m.npz")["classes"]] == [python_type] * 2
    np.testing.assert_array_equal(back.classes, np.sort(labels))
    X, _ = _data("gaussian", seed=3)
    prediction = back.predict(X)
    assert prediction.dtype.kind == kind
    assert set(prediction.tolist()) <= set(labels.tolist())


def test_csv_integer_labels_come_back_as_integers(tmp_path):
    mf = fitted_model_file(
        tmp_path / "m.npz", csv_text=SMALL_CSV.replace(",x", ",10").replace(",y", ",-2")
    )
    back = load_model(tmp_path / "m.npz")
    assert back.classes.tolist() == [-2, 10] and back.classes.dtype.kind == "i"
    assert mf.classes.tolist() == [-2, 10]


def test_metadata_holds_the_documented_fields(tmp_path):
    fitted_model_file(
        tmp_path / "m.npz", "bernoulli", csv_text="a,b,label\n1,0,x\n0,1,x\n1,1,y\n0,1,y\n"
    )
    meta = _metadata(tmp_path / "m.npz")
    assert meta["format"] == "nbcli-model"
    assert meta["format_version"] == FORMAT_VERSION and isinstance(meta["format_version"], int)
    from nbcli import __version__

    assert meta["nbcli_version"] == __version__
    assert meta["model"] == "bernoulli"
    assert meta["hyperparameters"] == {
        "alpha": 1.0,
        "binarize": 0.0,
        "class_prior": None,
        "fit_prior": True,
        "missing": "error",
        "force_alpha": True,
    }
    assert meta["classes"] == ["x", "y"]
    assert meta["feature_names"] == ["a", "b"] and meta["n_features"] == 2
    assert meta["target"] == "label"
    training = meta["training"]
    assert training["n_samples"] == 4 and training["class_counts"] == [2, 2]
    fp = training["fingerprint"]
    assert fp["algorithm"] == "rowhash64-v1" and int(fp["value"], 16) > 0
    assert meta["calibration"] is None
    members = sorted(_arrays(tmp_path / "m.npz"))
    assert members == ["metadata.npy", "stats.class_count.npy", "stats.feature_count.npy"]


@pytest.mark.parametrize("name", list(MODELS))
def test_saving_twice_gives_identical_bytes(tmp_path, name):
    mf = _model_file(name)
    save_model(mf, tmp_path / "a.npz")
    # A model rebuilt from the file saves to the same bytes as well.
    save_model(load_model(tmp_path / "a.npz"), tmp_path / "b.npz")
    save_model(_model_file(name), tmp_path / "c.npz")
    first = (tmp_path / "a.npz").read_bytes()
    assert (tmp_path / "b.npz").read_bytes() == first
    assert (tmp_path / "c.npz").read_bytes() == first
    with zipfile.ZipFile(tmp_path / "a.npz") as zf:
        # No clock in the file: every member carries the zip epoch.
        assert {info.date_time for info in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_loading_never_unpickles(tmp_path, monkeypatch):
    paths = []
    for name in MODELS:
        paths.append(tmp_path / f"{name}.npz")
        save_model(_model_file(name), paths[-1])

    def forbidden(*args, **kwargs):
        raise AssertionError("pickle was used while loading a model file")

    monkeypatch.setattr(pickle, "loads", forbidden)
    monkeypatch.setattr(pickle, "load", forbidden)
    monkeypatch.setattr(pickle, "Unpickler", forbidden)
    for path in paths:
        assert load_model(path).model.stats_ is not None


# ---------------------------------------------------------------------------
# Atomic saves


class _DiskFull(Exception):
    pass


@pytest.mark.parametrize(
    "failure, expected",
    [
        (OSError(errno.ENOSPC, "No space left on device"), NbcliError),
        (_DiskFull("simulated"), _DiskFull),
        (KeyboardInterrupt(), KeyboardInterrupt),
    ],
)
def test_interrupted_save_keeps_the_old_file_and_leaves_no_temp_file(
    tmp_path, monkeypatch, failure, expected
):
    path = tmp_path / "model.npz"
    save_model(_model_file("gaussian"), path)
    before = path.read_bytes()
    written = []

    def partial_savez(file, **arrays):
        file.write(b"PK\x03\x04 half of a model")
        file.flush()
        written.append(file.name)
        raise failure

    monkeypatch.setattr(np, "savez", partial_savez)
    with pytest.raises(expected) as info:
        save_model(_model_file("qda"), path)
    if expected is NbcliError:
        assert str(path) in str(info.value) and "No space left" in str(info.value)
    assert written and written[0] != str(path)  # it was writing elsewhere
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.npz"]
    monkeypatch.undo()
    assert load_model(path).model.model_type == "gaussian"


# ---------------------------------------------------------------------------
# Refusals decided by the metadata and the array headers


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "m.npz"
    save_model(_model_file("gaussian"), path)
    return path


def _refusal(path, *fragments):
    with pytest.raises(NbcliError) as info:
        load_model(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_huge_declared_shapes_are_refused_before_any_array_is_read(tmp_path, monkeypatch):
    """Nothing of the archive is read as an array, not even the metadata,
    when a header or the zip directory promises more data than the file holds."""
    lying = tmp_path / "lying.npz"
    lying.write_bytes(lying_archive())
    saved = tmp_path / "m.npz"
    save_model(_model_file("gaussian"), saved)
    huge = tmp_path / "huge.npz"
    huge.write_bytes(
        zip_bytes({**zip_members(saved), "stats.m2.npy": npy_header((10**12, 4)) + bytes(64)})
    )

    def no_reading(*args, **kwargs):
        raise AssertionError("an array was read")

    monkeypatch.setattr(np.lib.format, "read_array", no_reading)
    _refusal(lying, "'stats.scatter'", "more than the file holds")
    _refusal(huge, "'stats.m2'", "(1000000000000, 4)")


@pytest.mark.parametrize(
    "change, fragments",
    [
        ({"stats": {"type": ["ClassMoments"], "arrays": ["count"]}}, ["statistics"]),
        (
            {"stats": {"type": "ClassCounts", "arrays": ["class_count", "feature_count"]}},
            ["wrong type for a gaussian model"],
        ),
        ({"calibration": {"method": ["x"], "arrays": []}}, ["calibration method"]),
        ({"calibration": {"method": "isotonic", "arrays": {"x": 1}}}, ["calibration metadata"]),
        ({"classes": ["x", 1]}, ["classes"]),
        ({"classes": [2**70, 1]}, ["too large"]),
        ({"target": ["label"]}, ["'target'"]),
        ({"format_version": FORMAT_VERSION + 1, "nbcli_version": ["9"]}, ["upgrade nbcli"]),
        ({"feature_names": ["f1", "f1", "f3", "f4"]}, ["distinct"]),
    ],
)
def test_malformed_metadata_is_refused(saved, change, fragments):
    meta = _metadata(saved)
    meta.update(change)
    _rewrite(saved, metadata=meta)
    _refusal(saved, *fragments)


def test_json_constants_are_refused(saved):
    meta = _metadata(saved)
    meta["hyperparameters"]["var_smoothing"] = float("nan")  # json writes NaN
    _rewrite(saved, metadata=meta)
    _refusal(saved, "not valid JSON")


@pytest.mark.parametrize(
    "name, member, value, fragment",
    [
        ("gaussian", "stats__count", np.array([-5.0, 30.0]), "negative"),
        ("gaussian", "stats__m2", -np.ones((2, 4)), "negative sums of squares"),
        ("multinomial", "stats__feature_count", -np.ones((2, 4)), "negative feature counts"),
        # Finite, but the pooled variance overflows.
        (
            "gaussian",
            "stats__offset",
            np.array([[-1e308, 0, 0, 0], [1e308, 0, 0, 0.0]]),
            "undefined parameter",
        ),
    ],
)
def test_statistics_no_data_could_give_are_refused(tmp_path, name, member, value, fragment):
    path = tmp_path / "m.npz"
    save_model(_model_file(name), path)
    _rewrite(path, **{member: value})
    _refusal(path, fragment, "the file is corrupt")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_class_counts_that_disagree_with_the_metadata_are_refused(tmp_path, name):
    # Plausible statistics, edited: one more row in the first class than
    # training.class_counts records (or the record edited instead).
    path = tmp_path / "m.npz"
    save_model(_model_file(name), path)
    meta = _metadata(path)
    recorded = meta["training"]["class_counts"]
    assert recorded == load_model(path).model.stats_.class_counts.tolist()
    meta["training"]["class_counts"] = [recorded[0] + 1, *recorded[1:]]
    _rewrite(path, metadata=meta)
    _refusal(path, "class counts that disagree", "training.class_counts")


def test_an_edited_class_count_member_is_refused(tmp_path):
    path = tmp_path / "m.npz"
    save_model(_model_file("gaussian"), path)
    count = load_model(path).model.stats_.count.copy()
    count[0] += 1
    _rewrite(path, stats__count=count)
    _refusal(path, "class counts that disagree", "edited or is corrupt")


def test_a_model_that_cannot_score_its_own_class_means_is_refused(
    tmp_path, sample_dir, monkeypatch
):
    """Finite statistics and parameters whose scores are still NaN are refused.

    The fuzz tests found such a file (one QDA class mean near -1e308, where
    triangular solves overflowed into inf - inf); QDA now scores that file
    finitely, so the scores are made NaN here to keep the guard tested."""
    fitted_model_file(tmp_path / "m.npz", "qda", (sample_dir / "iris_train.csv").read_text())
    offset = load_model(tmp_path / "m.npz").model.stats_.offset.copy()
    offset[0, 0] = -1e308
    _rewrite(tmp_path / "m.npz", stats__offset=offset)
    assert np.isfinite(load_model(tmp_path / "m.npz").model.means_).all()
    qda = MODELS["qda"]
    real = qda.joint_log_likelihood_block

    def overflowing(self, X):
        out = real(self, X)
        out[0] = np.nan
        return out

    monkeypatch.setattr(qda, "joint_log_likelihood_block", overflowing)
    _refusal(tmp_path / "m.npz", "cannot score even its own class means")


def test_a_calibrator_for_another_number_of_classes_is_refused(tmp_path):
    from nbcli.calibration import IsotonicCalibration

    rng = np.random.default_rng(0)
    proba = rng.dirichlet(np.ones(3), size=40)
    calibrator = IsotonicCalibration().fit(np.log(proba), rng.integers(0, 3, size=40))
    mf = _model_file("gaussian")  # two classes
    mf.calibrator, mf.calibration_info = calibrator, {"data": "calib.csv"}
    save_model(mf, tmp_path / "m.npz")
    _refusal(tmp_path / "m.npz", "calibrator for 3 classes", "model has 2")


def test_encrypted_members_are_refused(saved):
    raw = bytearray(saved.read_bytes())
    # The "encrypted" flag of the first entry in the central directory.
    central = raw.index(b"PK\x01\x02")
    raw[central + 8] |= 0x01
    saved.write_bytes(bytes(raw))
    _refusal(saved, "encrypted")


def test_zip_features_no_reader_knows_are_refused(saved):
    raw = bytearray(saved.read_bytes())
    central = raw.index(b"PK\x01\x02")
    raw[central + 6] = 0x99  # "version needed to extract": 15.3
    saved.write_bytes(bytes(raw))
    _refusal(saved, "is not a valid .npz archive", "zip file version")


def test_duplicate_members_are_refused(saved):
    contents = _arrays(saved)
    with pytest.warns(UserWarning, match="Duplicate name"):
        with zipfile.ZipFile(saved, "a") as zf:
            zf.writestr("stats.m2.npy", contents["stats.m2.npy"])
    _refusal(saved, "twice")


def test_a_file_from_before_force_alpha_keeps_the_alpha_floor(tmp_path):
    from nbcli.models import MultinomialNB

    X = np.array([[1.0, 0.0], [1.0, 1.0]])
    y = np.array([0, 1])
    floored = MultinomialNB(alpha=0.0, force_alpha=False)
    with pytest.warns(UserWarning, match="alpha too small"):
        floored.fit(X, y)
    path = tmp_path / "old.npz"
    save_model(ModelFile(model=floored, feature_names=["a", "b"]), path)
    meta = _metadata(path)
    del meta["hyperparameters"]["force_alpha"]  # as files written before it existed
    _rewrite(path, metadata=meta)
    loaded = load_model(path).model
    assert loaded.force_alpha is False
    np.testing.assert_array_equal(loaded.feature_log_prob_, floored.feature_log_prob_)
    assert np.all(np.isfinite(loaded.feature_log_prob_))


def test_save_model_refuses_what_load_model_could_not_read(tmp_path):
    mf = _model_file("gaussian")
    for names in ([], ["f1", "f2"], ["f1", "f1", "f2", "f3"]):
        with pytest.raises(ValueError, match="give one distinct name per feature"):
            save_model(ModelFile(mf.model, feature_names=names), tmp_path / "m.npz")
    with pytest.raises(ValueError, match="is not fitted"):
        save_model(ModelFile(MODELS["gaussian"](), feature_names=["f1"]), tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize(
    "edit, fragment",
    [
        (lambda m: m.update(classes=m["classes"][::-1]), "classes are not in sorted order"),
        (lambda m: m["training"].update(missing="bogus"), "training.missing is 'bogus'"),
        (lambda m: m["training"].update(unseen="maybe"), "training.unseen is 'maybe'"),
        (lambda m: m["training"].update(na_values=5), "training.na_values must be a list"),
    ],
)
def test_metadata_no_fit_writes_is_refused(tmp_path, edit, fragment):
    # Reversed classes would name every class's scores wrongly; policies
    # outside their choices would reach predict as if they were options.
    path = tmp_path / "m.npz"
    save_model(_model_file("gaussian"), path)
    meta = _metadata(path)
    edit(meta)
    _rewrite(path, metadata=meta)
    _refusal(path, fragment, "the file is corrupt")
