"""Bad input, fed to the real ``nbcli`` executable.

Every refusal must end with exit code 2 and exactly one ``error:`` line on
stderr that names the file (and the column and first row where that
applies), with no traceback, and must leave the output file exactly as it
was. The refusals are listed in one table and run side by side, each in a
process of its own (start-up, about a second, dominates each run); inputs
that must work are checked against the plain CSV they encode.

A few cases that are about nbcli's own logic rather than the process around
it (they are named where they are chosen) call the console script's entry
point, ``nbcli.cli.app.main``, in this process instead, to keep the file
fast.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import pickle
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nbcli.io.modelfile import FORMAT_VERSION
from tests.conftest import (
    SMALL_CSV,
    assert_one_error_line,
    blobs,
    fitted_model_file,
    lying_archive,
    nbcli,
    nbcli_in_process,
    nbcli_many,
    npy_bytes,
    npy_header,
    posterior_tolerance,
    zip_bytes,
    zip_members,
)
from tests.declared import is_numeric_only, model_types_where

# ---------------------------------------------------------------------------
# Files the refusals are made of


def _npz_bytes(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _with_metadata(model: Path, **changes) -> bytes:
    members = zip_members(model)
    meta = json.loads(np.load(io.BytesIO(members["metadata.npy"])).tobytes())
    meta.update(changes)
    members["metadata.npy"] = npy_bytes(np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    return zip_bytes(members)


class MarkerBomb:
    """Unpickling this creates the file ``path``: proof that a loader unpickled."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _pickled_npz(marker, key) -> bytes:
    return _npz_bytes(**{key: np.array([MarkerBomb(marker)], dtype=object)})


def _flip_data_byte(model: Path) -> bytes:
    """The model with one byte of a statistics array changed (its CRC no longer matches)."""
    raw = bytearray(model.read_bytes())
    with zipfile.ZipFile(model) as zf:
        info = zf.getinfo("stats.m2.npy")
    # The member's bytes follow its local header (30 bytes, the name, the
    # extra field); the array's last values end them.
    with open(model, "rb") as f:
        f.seek(info.header_offset + 26)
        name_len, extra_len = np.frombuffer(f.read(4), dtype="<u2")
    end = info.header_offset + 30 + int(name_len) + int(extra_len) + info.compress_size
    raw[end - 3] ^= 0x40
    return bytes(raw)


# ---------------------------------------------------------------------------
# The table of refusals


@dataclass
class Refusal:
    """One command that must be refused.

    ``args`` may use ``{d}`` (the work folder) and ``{out}`` (this case's
    output file, made beforehand as a copy of a valid file, which must come
    through untouched). ``fragments`` must all be in the error line
    (``{d}`` allowed); ``guarded`` is the file that must not change.
    """

    args: list
    fragments: list
    files: dict = field(default_factory=dict)
    guarded: str = "{out}"
    marker: str | None = None  # a file that must not come to exist


# Models chosen by what their classes declare: those that need a spread per
# class, those with Gaussian columns, count columns or 0/1 columns, and
# those that take a class of one row (whose columns are not Gaussian).
NEED_SPREAD = model_types_where(lambda cls: cls.min_samples_per_class > 1)
GAUSSIAN_COLUMNS = model_types_where(lambda cls: "gaussian" in cls.feature_kinds)
COUNT_COLUMNS = model_types_where(lambda cls: cls.feature_kinds[0] in ("multinomial", "poisson"))
BINARY_COLUMNS = model_types_where(lambda cls: cls.feature_kinds == ("bernoulli",))
ONE_ROW_CLASSES = model_types_where(
    lambda cls: cls.min_samples_per_class == 1 and "gaussian" not in cls.feature_kinds
)


def _fit(data, *extra, model="gaussian"):
    return ["fit", "-m", model, "-d", data, "-o", "{out}", *extra]


def _predict(data, *extra, model="{d}/good.npz"):
    return ["predict", "-m", model, "-d", data, "-o", "{out}", *extra]


REFUSALS = {
    # -- data files at fit time ---------------------------------------------
    "empty_file": Refusal(_fit("{d}/empty.csv"), ["{d}/empty.csv", "is empty"], {"empty.csv": ""}),
    "header_only": Refusal(
        _fit("{d}/header.csv"), ["{d}/header.csv", "no data rows"], {"header.csv": "a,b,label\n"}
    ),
    "target_not_a_column": Refusal(
        _fit("{d}/good.csv", "--target", "species"),
        ["{d}/good.csv", "'species'", "the columns are: 'a', 'b', 'label'"],
    ),
    # A row without a label is skipped (and counted) by fit: here that leaves
    # class 'x' with a single row, which the Gaussian model refuses.
    "target_missing_value": Refusal(
        _fit("{d}/t.csv"),
        ["{d}/t.csv", "class 'x' has a single sample"],
        {"t.csv": "a,b,label\n1,2,x\n2,3,\n3,1,y\n5,6,y\n"},
    ),
    "nan_feature": Refusal(
        _fit("{d}/nan.csv", "--missing", "error"),
        ["{d}/nan.csv", "column 'b'", "missing value at row 3"],
        {"nan.csv": "a,b,label\n1,2,x\n2,3,x\n3,nan,y\n5,6,y\n"},
    ),
    "inf_feature": Refusal(
        _fit("{d}/inf.csv"),
        ["{d}/inf.csv", "column 'b'", "infinite value at row 2"],
        {"inf.csv": "a,b,label\n1,2,x\n2,-inf,x\n3,1,y\n5,6,y\n"},
    ),
    "empty_feature_cell": Refusal(
        _fit("{d}/gap.csv", "--missing", "error"),
        ["{d}/gap.csv", "column 'a'", "missing value at row 4"],
        {"gap.csv": "a,b,label\n1,2,x\n2,3,x\n3,1,y\n,6,y\n"},
    ),
    "non_numeric_feature": Refusal(
        _fit("{d}/text.csv"),
        ["{d}/text.csv", "column 'b'", "'abc'", "--drop b", "--model mixed"],
        {"text.csv": "a,b,label\n1,2,x\n2,3,x\n3,abc,y\n5,6,y\n"},
    ),
    "duplicate_columns": Refusal(
        _fit("{d}/dup.csv"),
        ["{d}/dup.csv", "repeated column names", "'a'"],
        {"dup.csv": "a,b,a,label\n1,2,3,x\n2,3,4,x\n3,1,5,y\n5,6,6,y\n"},
    ),
    "single_class": Refusal(
        _fit("{d}/one.csv"),
        ["{d}/one.csv", "single class", "'x'"],
        {"one.csv": "a,b,label\n1,2,x\n2,3,x\n3,1,x\n"},
    ),
    **{
        f"single_sample_class_{m}": Refusal(
            _fit("{d}/lonely.csv", model=m),
            ["{d}/lonely.csv", "class 'y'", "single sample", m],
            {"lonely.csv": "a,b,label\n1,2,x\n2,3,x\n3,1,x\n5,6,y\n"},
        )
        for m in NEED_SPREAD
    },
    "constant_everywhere_gaussian": Refusal(
        _fit("{d}/flat.csv"),
        ["{d}/flat.csv", "'a', 'b'", "single value in all rows"],
        {"flat.csv": "a,b,label\n1,5,x\n1,5,x\n1,5,y\n1,5,y\n"},
    ),
    "spread_underflows_gaussian": Refusal(
        _fit("{d}/tiny.csv"),
        ["{d}/tiny.csv", "'b'", "vary", "underflows", "rescale"],
        {"tiny.csv": "a,b,label\n1,1e-200,x\n1,3e-200,x\n1,2e-200,y\n1,5e-200,y\n"},
    ),
    "constant_in_class_without_smoothing": Refusal(
        _fit("{d}/cc.csv", "--var-smoothing", "0"),
        ["{d}/cc.csv", "column 'a'", "class 'x'", "--var-smoothing"],
        {"cc.csv": "a,b,label\n1,2,x\n1,3,x\n2,1,y\n3,6,y\n"},
    ),
    **{
        f"spread_overflows_{m}": Refusal(
            _fit("{d}/wide.csv", model=m),
            ["{d}/wide.csv", "column 'a'", "too far apart", "rescale"],
            {"wide.csv": "a,b,label\n1,2,x\n2,3,x\n1e200,1,y\n5,6,y\n3,3,y\n"},
        )
        for m in GAUSSIAN_COLUMNS
    },
    **{
        f"negative_count_{m}": Refusal(
            _fit("{d}/neg.csv", model=m),
            ["{d}/neg.csv", "column 'b'", "row 3", "negative"],
            {"neg.csv": "a,b,label\n1,2,x\n2,3,x\n3,-1,y\n5,6,y\n"},
        )
        for m in COUNT_COLUMNS
    },
    **{
        f"non_binary_{m}": Refusal(
            _fit("{d}/nb.csv", model=m),
            ["{d}/nb.csv", "column 'b'", "row 3", "--binarize"],
            {"nb.csv": "a,b,label\n1,0,x\n0,1,x\n1,2,y\n0,0,y\n"},
        )
        for m in BINARY_COLUMNS
    },
    "wrong_delimiter_given": Refusal(
        _fit("{d}/good.csv", "--delimiter", ";"), ["{d}/good.csv", "delimiter"]
    ),
    # -- data files at predict time -----------------------------------------
    "predict_missing_column": Refusal(
        _predict("{d}/only_a.csv"),
        ["{d}/only_a.csv", "missing column 'b'"],
        {"only_a.csv": "a,label\n1,x\n"},
    ),
    "predict_npz_feature_count": Refusal(
        _predict("{d}/three.npz"),
        ["{d}/three.npz", "has 3 features", "expects 2"],
        {"three.npz": _npz_bytes(X=np.ones((2, 3)))},
    ),
    "predict_npz_not_2d": Refusal(
        _predict("{d}/flat.npz"),
        ["{d}/flat.npz", "'X'", "2-D"],
        {"flat.npz": _npz_bytes(X=np.ones(4))},
    ),
    "predict_row_too_far_to_score": Refusal(
        _predict("{d}/far.csv"),
        ["{d}/far.csv", "row 2 cannot be scored", "column 'b' = 1e+200"],
        {"far.csv": "a,b\n1,2\n3,1e200\n"},
    ),
    "predict_row_whose_classes_cannot_be_told_apart": Refusal(
        # 1e17 spreads out, the two classes' scores (about -1e34) differ by
        # less than their rounding: not the 0.5 / 0.5 tie they round to.
        _predict("{d}/far17.csv"),
        ["{d}/far17.csv", "row 2 cannot be scored", "differ by less than their rounding"],
        {"far17.csv": "a,b\n1,2\n1e17,2\n"},
    ),
    "data_npz_with_pickled_object": Refusal(
        _predict("{d}/evil_data.npz"),
        ["{d}/evil_data.npz", "pickled"],
        {"evil_data.npz": lambda d: _pickled_npz(d / "UNPICKLED_DATA", "X")},
        marker="{d}/UNPICKLED_DATA",
    ),
    # -- model files ----------------------------------------------------------
    "model_truncated": Refusal(
        _predict("{d}/good.csv", model="{d}/trunc.npz"),
        ["{d}/trunc.npz", "truncated"],
        {"trunc.npz": lambda d: (d / "good.npz").read_bytes()[:700]},
    ),
    "model_corrupt_byte": Refusal(
        _predict("{d}/good.csv", model="{d}/flip.npz"),
        ["{d}/flip.npz", "CRC"],
        {"flip.npz": lambda d: _flip_data_byte(d / "good.npz")},
    ),
    "model_with_pickled_object": Refusal(
        _predict("{d}/good.csv", model="{d}/evil.npz"),
        ["{d}/evil.npz", "pickled"],
        {"evil.npz": lambda d: _pickled_npz(d / "UNPICKLED_MODEL", "metadata")},
        marker="{d}/UNPICKLED_MODEL",
    ),
    "model_with_unknown_member": Refusal(
        _predict("{d}/good.csv", model="{d}/extra.npz"),
        ["{d}/extra.npz", "members the format does not define", "notes"],
        {
            "extra.npz": lambda d: zip_bytes(
                {**zip_members(d / "good.npz"), "notes.npy": npy_bytes(np.zeros(3))}
            )
        },
    ),
    "model_header_declares_huge_shape": Refusal(
        _predict("{d}/good.csv", model="{d}/huge.npz"),
        ["{d}/huge.npz", "'stats.count'", "(1000000000000,)"],
        {
            "huge.npz": lambda d: zip_bytes(
                {
                    **zip_members(d / "good.npz"),
                    "stats.count.npy": npy_header((10**12,)) + b"\0" * 16,
                }
            )
        },
    ),
    "model_directory_claims_missing_bytes": Refusal(
        _predict("{d}/good.csv", model="{d}/lying.npz"),
        ["{d}/lying.npz", "'stats.scatter'", "more than the file holds"],
        {"lying.npz": lambda d: lying_archive()},
    ),
    "model_newer_format": Refusal(
        _predict("{d}/good.csv", model="{d}/newer.npz"),
        ["{d}/newer.npz", f"format version {FORMAT_VERSION + 1}", "upgrade nbcli"],
        {
            "newer.npz": lambda d: _with_metadata(
                d / "good.npz", format_version=FORMAT_VERSION + 1, nbcli_version="9.0"
            )
        },
    ),
    "model_is_a_csv": Refusal(
        _predict("{d}/good.csv", model="{d}/good.csv"), ["{d}/good.csv", "not an nbcli model"]
    ),
    "model_is_a_folder": Refusal(_predict("{d}/good.csv", model="{d}"), ["{d}", "folder"]),
    "fit_output_folder_missing": Refusal(
        ["fit", "-m", "gaussian", "-d", "{d}/good.csv", "-o", "{d}/no/such/m.npz"],
        ["{d}/no/such/m.npz", "does not exist"],
        guarded="{d}/good.csv",
    ),
    "fit_output_is_a_folder": Refusal(
        ["fit", "-m", "gaussian", "-d", "{d}/good.csv", "-o", "{d}"],
        ["{d}", "folder"],
        guarded="{d}/good.csv",
    ),
    "fit_output_under_a_file": Refusal(
        ["fit", "-m", "gaussian", "-d", "{d}/good.csv", "-o", "{d}/good.csv/m.npz"],
        ["{d}/good.csv/m.npz", "is a file, not a folder"],
        guarded="{d}/good.csv",
    ),
    "fit_output_is_the_input": Refusal(
        ["fit", "-m", "gaussian", "-d", "{d}/good.csv", "-o", "{d}/good.csv"],
        ["{d}/good.csv", "also an input"],
        guarded="{d}/good.csv",
    ),
    "predict_output_under_a_file": Refusal(
        ["predict", "-m", "{d}/good.npz", "-d", "{d}/good.csv", "-o", "{d}/good.csv/p.csv"],
        ["{d}/good.csv/p.csv", "is a file, not a folder"],
        guarded="{d}/good.csv",
    ),
    "predict_output_is_the_model": Refusal(
        ["predict", "-m", "{d}/good.npz", "-d", "{d}/good.csv", "-o", "{d}/good.npz"],
        ["{d}/good.npz", "also an input"],
        guarded="{d}/good.npz",
    ),
}


# Cases about nbcli's own checks rather than the process around them (exit
# code, the one stderr line and start-up are covered by all the others):
# these call the console script's main() in this process, which saves about
# a second of start-up each.
IN_PROCESS = {
    "constant_everywhere_gaussian",
    "constant_in_class_without_smoothing",
    "wrong_delimiter_given",
    # One model of a case in a process of its own, the others in this one.
    *(f"spread_overflows_{m}" for m in GAUSSIAN_COLUMNS[1:]),
    *(f"negative_count_{m}" for m in COUNT_COLUMNS[1:]),
    "fit_output_is_a_folder",
    "fit_output_is_the_input",
    "predict_output_under_a_file",
    "predict_output_is_the_model",
    "model_is_a_folder",
}


def _fill(text: str, d: Path, out: Path) -> str:
    return text.replace("{d}", str(d)).replace("{out}", str(out))


def _state(path: Path):
    stat = path.stat()
    return path.read_bytes(), stat.st_mtime_ns


@pytest.fixture(scope="module")
def refusals(tmp_path_factory):
    """Make every case's files, run all cases side by side, and return
    ``{case: (run, guarded path, state before, work folder)}``."""
    d = tmp_path_factory.mktemp("bad")
    (d / "good.csv").write_text(SMALL_CSV, encoding="utf-8")
    fitted_model_file(d / "good.npz")
    for case in REFUSALS.values():
        for name, content in case.files.items():
            content = content(d) if callable(content) else content
            target = d / name
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
    out_dir = d / "out"
    out_dir.mkdir()
    calls, guards = [], {}
    for name, case in REFUSALS.items():
        is_fit = case.args[0] == "fit"
        out = out_dir / (f"{name}.npz" if is_fit else f"{name}.csv")
        if is_fit:
            shutil.copyfile(d / "good.npz", out)
        else:  # an earlier predictions file, which a run may replace but a refusal must not
            out.write_text("id,prediction\n1,x\n2,y\n", encoding="utf-8")
        guarded = Path(_fill(case.guarded, d, out))
        guards[name] = (guarded, _state(guarded))
        calls.append(tuple(_fill(a, d, out) for a in case.args))
    names = list(REFUSALS)
    apart = [i for i, name in enumerate(names) if name not in IN_PROCESS]
    runs = dict(zip(apart, nbcli_many([calls[i] for i in apart])))
    for i, name in enumerate(names):
        if name in IN_PROCESS:
            runs[i] = nbcli_in_process(*calls[i])
    return {name: (runs[i], *guards[name], d) for i, name in enumerate(names)}


@pytest.mark.parametrize("name", list(REFUSALS))
def test_refused_with_one_clear_line_and_nothing_written(refusals, name):
    case = REFUSALS[name]
    run, guarded, before, d = refusals[name]
    fragments = [_fill(f, d, Path("?")) for f in case.fragments]
    assert_one_error_line(run, *fragments)
    assert run.stdout == ""
    assert _state(guarded) == before
    leftovers = [
        p.name for folder in (d, d / "out") for p in folder.iterdir() if p.name.endswith(".tmp")
    ]
    assert leftovers == []
    if case.marker is not None:
        assert not Path(_fill(case.marker, d, Path("?"))).exists()


def test_the_pickle_bombs_are_live(tmp_path):
    """The object arrays above would create their marker if unpickled, so
    the marker's absence in the refusals proves nothing was unpickled."""
    marker = tmp_path / "marker"
    raw = _pickled_npz(marker, "metadata")
    np.load(io.BytesIO(raw), allow_pickle=True)["metadata"]
    assert marker.exists()
    pickle.loads(pickle.dumps(MarkerBomb(tmp_path / "second")))
    assert (tmp_path / "second").exists()


def test_the_lying_archive_really_declares_its_size(tmp_path):
    """Guard for the case above: the zip directory of the crafted file does
    claim the whole 256 MB array, consistently with the .npy header, in a
    file of well under a megabyte."""
    raw = lying_archive()
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        info = zf.getinfo("stats.scatter.npy")
        assert (
            info.file_size
            == info.compress_size
            == len(npy_header((2, 4000, 4000))) + 2 * 4000**2 * 8
        )
    assert len(raw) < 1_000_000


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write into read-only folders"
)
def test_read_only_folder_is_refused(tmp_path):
    (tmp_path / "good.csv").write_text(SMALL_CSV, encoding="utf-8")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        run = nbcli("fit", "-m", "gaussian", "-d", tmp_path / "good.csv", "-o", locked / "m.npz")
    finally:
        locked.chmod(0o700)
    assert_one_error_line(run, str(locked / "m.npz"), "permission denied")
    assert list(locked.iterdir()) == []


# ---------------------------------------------------------------------------
# Inputs that must work


def _proba_frame(run) -> pd.DataFrame:
    assert run.returncode == 0, run.stderr
    assert "error:" not in run.stderr and "Traceback" not in run.stderr
    return pd.read_csv(io.StringIO(run.stdout))


def test_single_sample_class_is_a_warning_for_count_models(tmp_path):
    from nbcli.io.modelfile import load_model

    data = tmp_path / "lonely.csv"
    data.write_text("a,b,label\n1,0,x\n0,1,x\n1,1,x\n0,1,y\n", encoding="utf-8")
    runs = nbcli_many(
        [("fit", "-m", m, "-d", data, "-o", tmp_path / f"{m}.npz", "-q") for m in ONE_ROW_CLASSES]
    )
    assert ONE_ROW_CLASSES
    for m, run in zip(ONE_ROW_CLASSES, runs):
        assert run.returncode == 0, run.stderr
        warnings = [line for line in run.stderr_lines if line.startswith("warning:")]
        assert len(warnings) == 1 and "class 'y'" in warnings[0] and "single sample" in warnings[0]
        assert "error:" not in run.stderr
        assert load_model(tmp_path / f"{m}.npz").training["class_counts"] == [3, 1]


def test_constant_features_stay_finite_for_gaussian(tmp_path):
    # 'a' is constant overall, 'b' is constant within class x.
    data = tmp_path / "const.csv"
    data.write_text(
        "a,b,c,label\n1,4,0.5,x\n1,4,0.7,x\n1,4,0.1,x\n1,6,2.5,y\n1,9,2.9,y\n1,7,3.1,y\n",
        encoding="utf-8",
    )
    model = tmp_path / "m.npz"
    fit = nbcli("fit", "-m", "gaussian", "-d", data, "-o", model, "-q")
    # One warning names the class-feature pairs whose variance is smoothing alone.
    assert fit.returncode == 0 and fit.stderr.count("warning:") == 1, fit.stderr
    assert "'a' in class 'x'; 'b' in class 'x'; 'a' in class 'y'" in fit.stderr
    assert "--var-smoothing-scale feature" in fit.stderr
    pred = _proba_frame(nbcli("predict", "-m", model, "-d", data, "--proba"))
    proba = pred[["proba_x", "proba_y"]].to_numpy()
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert pred["prediction"].tolist() == ["x", "x", "x", "y", "y", "y"]


@pytest.mark.parametrize("model", model_types_where(is_numeric_only))
def test_extreme_magnitudes_give_the_same_finite_posteriors(tmp_path, model):
    """Features of size 1e150 and spreads of 1e-150 (squares would over- or
    underflow) give the posteriors of the same data at scale 1."""
    from nbcli.io.modelfile import load_model
    from nbcli.models import MODELS

    X, y = blobs(n_per_class=15, d=3, seed=1, shift=2.0)
    reference = MODELS[model]().fit(X, y).predict_proba(X)
    for scale in (1e150, 1e-150):
        frame = pd.DataFrame(X * scale, columns=["f1", "f2", "f3"]).assign(label=y)
        path = tmp_path / f"{scale:g}.csv"
        frame.to_csv(path, index=False, float_format="%.17g")
        # About numbers, not the process: the entry point in this process.
        run = nbcli_in_process(
            "fit", "-m", model, "-d", path, "-o", tmp_path / f"{scale:g}.npz", "-q"
        )
        assert run.returncode == 0 and run.stderr == "", run.stderr
        proba = load_model(tmp_path / f"{scale:g}.npz").predict_proba(X * scale)
        assert np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba, reference, rtol=1e-9, atol=1e-12)


def test_reordered_and_extra_columns_give_the_same_predictions(tmp_path):
    X, y = blobs(n_per_class=10, d=3, seed=2)
    frame = pd.DataFrame(X, columns=["f1", "f2", "f3"]).assign(label=y)
    frame.to_csv(tmp_path / "plain.csv", index=False, float_format="%.17g")
    frame[["label", "f3", "f1", "f2"]].assign(extra=7.0).to_csv(
        tmp_path / "shuffled.csv", index=False, float_format="%.17g"
    )
    mf = fitted_model_file(
        tmp_path / "m.npz", "lda", frame.to_csv(index=False, float_format="%.17g")
    )
    got = _proba_frame(
        nbcli("predict", "-m", tmp_path / "m.npz", "-d", tmp_path / "shuffled.csv", "--proba")
    )
    assert list(got.columns) == ["prediction", "proba_a", "proba_b"]
    np.testing.assert_array_equal(got["prediction"].to_numpy(), mf.predict(X))
    # Columns in another order and extra ones change nothing but the rounding
    # of another summation order.
    shown, expected = got[["proba_a", "proba_b"]].to_numpy(), mf.predict_proba(X)
    np.testing.assert_array_less(
        np.abs(shown - expected), posterior_tolerance(mf.model, X, shown, expected)
    )


def test_encodings_delimiters_gzip_and_stdin_read_like_the_plain_csv(tmp_path, sample_dir):
    """BOM, ';' and tab (detected or given), .csv.gz and stdin: the same
    model statistics and the same predictions as the plain CSV."""
    from nbcli.io.modelfile import load_model

    text = (sample_dir / "iris_train.csv").read_text(encoding="utf-8")
    test_text = (sample_dir / "iris_test.csv").read_text(encoding="utf-8")
    (tmp_path / "bom_semicolon.csv").write_text(text.replace(",", ";"), encoding="utf-8-sig")
    (tmp_path / "train.csv.gz").write_bytes(gzip.compress(text.encode()))
    variants = {
        "bom.csv": (test_text.encode("utf-8-sig"), ()),
        "semicolon.csv": (test_text.replace(",", ";").encode(), ()),
        "semicolon_given.csv": (test_text.replace(",", ";").encode(), ("--delimiter", ";")),
        "tab.tsv": (test_text.replace(",", "\t").encode(), ()),
        "tab_given.txt": (test_text.replace(",", "\t").encode(), ("--delimiter", "\\t")),
        "test.csv.gz": (gzip.compress(test_text.encode()), ()),
    }
    for name, (raw, _) in variants.items():
        (tmp_path / name).write_bytes(raw)
    # The plain CSV, through the same training code in this process.
    plain = fitted_model_file(tmp_path / "plain.npz", "lda", text)
    test = pd.read_csv(io.StringIO(test_text))
    X_test = test[plain.feature_names].to_numpy()
    model = tmp_path / "plain.npz"
    # stdin, gzip and the BOM go through real processes; the delimiter variants
    # are the reader's logic alone and run through the entry point in this process.
    in_a_process = ("bom.csv", "test.csv.gz")
    calls = [
        (
            "fit",
            "-m",
            "lda",
            "-d",
            "-",
            "-o",
            tmp_path / "stdin.npz",
            "-q",
            gzip.compress(text.encode()),
        ),
        ("predict", "-m", model, "-d", "-", "--proba", test_text.encode()),
        *[("predict", "-m", model, "-d", tmp_path / name, "--proba") for name in in_a_process],
    ]
    runs = nbcli_many(calls) + [
        nbcli_in_process("predict", "-m", model, "-d", tmp_path / name, "--proba", *flags)
        for name, (_, flags) in variants.items()
        if name not in in_a_process
    ]
    fits = [runs[0]] + [
        nbcli_in_process("fit", "-m", "lda", "-d", tmp_path / src, "-o", tmp_path / out, "-q")
        for src, out in (("bom_semicolon.csv", "bs.npz"), ("train.csv.gz", "gz.npz"))
    ]
    for run in fits:
        assert run.returncode == 0 and run.stderr == "", run.stderr
    for name in ("bs.npz", "gz.npz", "stdin.npz"):
        other = load_model(tmp_path / name)
        assert other.feature_names == plain.feature_names
        assert other.training["fingerprint"] == plain.training["fingerprint"]
        for key, array in plain.model.stats_.arrays().items():
            np.testing.assert_array_equal(other.model.stats_.arrays()[key], array, err_msg=key)
    expected = plain.predict_proba(X_test)
    assert expected.shape == (30, 3)
    assert len(runs) == 8
    for run in runs[1:]:
        got = _proba_frame(run)
        np.testing.assert_array_equal(got["prediction"].to_numpy(), plain.predict(X_test))
        shown = got.iloc[:, 1:].to_numpy()
        tolerance = posterior_tolerance(plain.model, X_test, shown, expected)
        np.testing.assert_array_less(np.abs(shown - expected), tolerance, err_msg=str(run.args))


@pytest.mark.parametrize(
    "tail, warned, code",
    # A cut row's missing cell is then refused by the model's policy, the
    # warning saying why the cell is missing; an open quote is the parser's.
    [("5,6", False, 0), ("5,6\n", False, 0), ("5", True, 2), ('"5', False, 2)],
)
def test_a_last_line_cut_short_is_warned_about(tmp_path, tail, warned, code):
    from tests.conftest import fitted_model_file, nbcli_in_process

    model = tmp_path / "m.npz"
    fitted_model_file(model)
    data = tmp_path / "new.csv"
    data.write_text("a,b\n1,2\n3,4\n" + tail)
    run = nbcli_in_process("predict", "-m", model, "-d", data, "-o", tmp_path / "p.csv")
    assert run.returncode == code, run.stderr
    assert ("as if the file was cut short" in run.stderr) == warned, run.stderr


def test_an_unclosed_quote_mid_file_gives_one_error_line_and_no_library_warning(tmp_path):
    model = tmp_path / "m.npz"
    fitted_model_file(model)
    bad = tmp_path / "bad.csv"
    bad.write_text('a,b,label\n1,2,x\n"1.0,2,y\n3,1,x\n')
    run = nbcli("evaluate", "-m", model, "-d", bad)
    assert "UserWarning" not in run.stderr and "CSV malformed" not in run.stderr
    assert_one_error_line(run, "line 3 opens a quoted field that is never closed")


def test_a_json_report_given_as_data_is_named_as_json(tmp_path):
    # Read as CSV it failed on "text after the closing quote" of line 2.
    report = tmp_path / "cv.json"
    report.write_text(json.dumps({"schema": "nbcli.cross_validation", "folds": [1, 2]}, indent=2))
    renamed = tmp_path / "report.txt"
    renamed.write_text(report.read_text())
    for data in (report, renamed):
        run = nbcli_in_process("fit", "-m", "gaussian", "-d", data, "-o", tmp_path / "m.npz")
        assert_one_error_line(run, f"{data}: is JSON", "not a table of rows")
    run = nbcli(
        "fit", "-m", "gaussian", "-d", "-", "-o", tmp_path / "m.npz", stdin=report.read_bytes()
    )
    assert_one_error_line(run, "<stdin>: is JSON")
    # A CSV whose first column name has braces is still a CSV.
    braces = tmp_path / "braces.csv"
    braces.write_text("{a},b,label\n1,2,x\n2,3,y\n1,3,x\n2,2,y\n")
    ok = nbcli_in_process("fit", "-m", "gaussian", "-d", braces, "-o", tmp_path / "b.npz", "-q")
    assert ok.returncode == 0, ok.stderr
