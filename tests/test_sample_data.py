"""The shipped sample data (sample_data/) and the per-model config files (configs/)."""

from __future__ import annotations

import functools
import inspect
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nbcli.models import MODELS

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIR = ROOT / "sample_data"
CONFIG_DIR = ROOT / "configs"
SPLITS = ("train", "calib", "test")

# Rows per split (train, calib, test) of the stratified 60/20/20 split.
ROWS = {
    "iris": (90, 30, 30),
    "wine": (106, 36, 36),
    "breast_cancer": (341, 114, 114),
    "digits": (1078, 359, 360),
}
CLASS_TOTALS = {
    "iris": {"setosa": 50, "versicolor": 50, "virginica": 50},
    "wine": {"class_0": 59, "class_1": 71, "class_2": 48},
    "breast_cancer": {"malignant": 212, "benign": 357},
    "digits": dict(zip(range(10), (178, 182, 177, 183, 181, 182, 181, 179, 174, 180))),
}
FIRST_LAST_FEATURE = {
    "iris": ("sepal_length_cm", "petal_width_cm", 4),
    "wine": ("alcohol", "proline", 13),
    "breast_cancer": ("mean_radius", "worst_fractal_dimension", 30),
    "digits": ("pixel_0_0", "pixel_7_7", 64),
}
NAMES = tuple(ROWS)
CONFIG_FILES = sorted(CONFIG_DIR.glob("*.toml"))


@functools.cache
def read(name: str, split: str) -> pd.DataFrame:
    return pd.read_csv(SAMPLE_DIR / f"{name}_{split}.csv")


def rows(frame: pd.DataFrame) -> Counter:
    return Counter(frame.itertuples(index=False, name=None))


# --- sample data -----------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_row_counts_per_split(name):
    assert tuple(len(read(name, s)) for s in SPLITS) == ROWS[name]


@pytest.mark.parametrize("name", NAMES)
def test_header_is_snake_case_with_label_last(name):
    first, last, n_features = FIRST_LAST_FEATURE[name]
    for split in SPLITS:
        columns = list(read(name, split).columns)
        assert columns[-1] == "label"
        assert columns[0] == first and columns[-2] == last
        assert len(columns) == n_features + 1
        assert all(re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", c) for c in columns)
        assert columns == list(read(name, "train").columns)


@pytest.mark.parametrize("name", NAMES)
def test_class_counts_add_up_to_the_whole(name):
    total = Counter()
    for split in SPLITS:
        total.update(read(name, split)["label"].tolist())
    assert dict(total) == CLASS_TOTALS[name]


def test_label_types():
    assert pd.api.types.is_integer_dtype(read("digits", "train")["label"])
    for name in ("iris", "wine", "breast_cancer"):
        assert pd.api.types.is_string_dtype(read(name, "train")["label"])


@pytest.mark.parametrize("name", NAMES)
def test_splits_are_stratified(name):
    totals = CLASS_TOTALS[name]
    n = sum(totals.values())
    for split in SPLITS:
        labels = read(name, split)["label"]
        counts = labels.value_counts()
        for label, n_label in totals.items():
            expected = len(labels) * n_label / n
            assert abs(counts.get(label, 0) - expected) <= 1, (split, label)


@pytest.mark.parametrize("name", NAMES)
def test_splits_are_disjoint(name):
    parts = {s: rows(read(name, s)) for s in SPLITS}
    # Iris has one pair of identical rows in the source; they fell into
    # train and calib. No other row may be shared.
    shared_iris = {(5.8, 2.7, 5.1, 1.9, "virginica")}
    for i, a in enumerate(SPLITS):
        for b in SPLITS[i + 1 :]:
            shared = set(parts[a]) & set(parts[b])
            expected = shared_iris if (name, a, b) == ("iris", "train", "calib") else set()
            assert shared == expected, (a, b)


@pytest.mark.parametrize("name", NAMES)
def test_splits_hold_every_source_row_once(name):
    datasets = pytest.importorskip("sklearn.datasets")
    bunch = getattr(datasets, f"load_{name}")()
    labels = bunch.target if name == "digits" else np.asarray(bunch.target_names)[bunch.target]
    source = Counter(tuple(x) + (lab,) for x, lab in zip(bunch.data.tolist(), labels.tolist()))
    exported = Counter()
    for split in SPLITS:
        exported.update(rows(read(name, split)))
    assert exported == source


def _fields(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [f for line in lines[1:] for f in line.split(",")[:-1]]


@pytest.mark.parametrize("name", ("iris", "wine", "breast_cancer"))
def test_floats_are_written_in_shortest_form(name):
    for split in SPLITS:
        fields = _fields(SAMPLE_DIR / f"{name}_{split}.csv")
        assert [f for f in fields if repr(float(f)) != f] == []
    if name == "iris":
        assert "0.1" in _fields(SAMPLE_DIR / "iris_calib.csv")


def test_digits_pixels_are_integer_counts():
    for split in SPLITS:
        values = {f for f in _fields(SAMPLE_DIR / f"digits_{split}.csv")}
        assert values == {str(v) for v in range(17)}


def test_files_use_unix_line_endings():
    for path in SAMPLE_DIR.glob("*.csv"):
        data = path.read_bytes()
        assert b"\r" not in data and data.endswith(b"\n"), path.name


# The janeaustenr R package, as Debian's r-cran-janeaustenr installs it (or
# unpacked elsewhere, named by JANEAUSTENR_DIR).
AUSTEN_DIR = Path(os.environ.get("JANEAUSTENR_DIR", "/usr/lib/R/site-library/janeaustenr"))
EXPORT_FILES = {
    "uci": [f"{n}_{s}.csv" for n in NAMES for s in SPLITS],
    "penguins": ["penguins.csv", "penguins_train.csv", "penguins_test.csv"],
    "austen": ["austen_train.csv", "austen_test.csv"],
}


def _exportable() -> list[str]:
    """The sample-data groups whose sources are installed here."""
    import importlib.util

    have = importlib.util.find_spec
    sets = []
    if have("sklearn"):
        sets.append("uci")
        if have("palmerpenguins"):
            sets.append("penguins")
        if have("rdata") and (AUSTEN_DIR / "data" / "Rdata.rdb").exists():
            sets.append("austen")
    return sets


def test_export_reproduces_committed_files(tmp_path):
    sets = _exportable()
    if not sets:
        pytest.skip("scikit-learn is not installed")
    subprocess.run(
        [
            sys.executable,
            str(SAMPLE_DIR / "export.py"),
            "--out",
            str(tmp_path),
            "--sets",
            ",".join(sets),
            "--austen-dir",
            str(AUSTEN_DIR),
        ],
        check=True,
        capture_output=True,
    )
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(f for s in sets for f in EXPORT_FILES[s])
    for file_name in written:
        assert (tmp_path / file_name).read_bytes() == (SAMPLE_DIR / file_name).read_bytes(), (
            file_name
        )


def test_export_refuses_an_unknown_set(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            str(SAMPLE_DIR / "export.py"),
            "--out",
            str(tmp_path),
            "--sets",
            "uci,nope",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "unknown set(s) nope" in done.stderr
    assert list(tmp_path.iterdir()) == []


# --- penguins --------------------------------------------------------------

PENGUIN_COLUMNS = [
    "species",
    "island",
    "bill_length_mm",
    "bill_depth_mm",
    "flipper_length_mm",
    "body_mass_g",
    "sex",
    "year",
]


def test_penguins_is_the_shipped_file():
    frame = pd.read_csv(SAMPLE_DIR / "penguins.csv")
    assert list(frame.columns) == PENGUIN_COLUMNS
    assert len(frame) == 344
    assert frame["species"].value_counts().to_dict() == {
        "Adelie": 152,
        "Gentoo": 124,
        "Chinstrap": 68,
    }
    # Issue 11's counts: 2 rows without measurements, 11 without sex.
    assert frame["bill_length_mm"].isna().sum() == 2
    assert frame["sex"].isna().sum() == 11
    assert frame.dropna().shape[0] == 333
    palmerpenguins = pytest.importorskip("palmerpenguins")
    shipped = Path(palmerpenguins.__file__).parent / "data" / "penguins.csv"
    assert (SAMPLE_DIR / "penguins.csv").read_bytes() == shipped.read_bytes()


def test_penguins_split_is_stratified_and_holds_every_row_once():
    whole = (SAMPLE_DIR / "penguins.csv").read_text(encoding="utf-8").splitlines()
    train = (SAMPLE_DIR / "penguins_train.csv").read_text(encoding="utf-8").splitlines()
    test = (SAMPLE_DIR / "penguins_test.csv").read_text(encoding="utf-8").splitlines()
    assert train[0] == test[0] == whole[0]
    assert Counter(train[1:]) + Counter(test[1:]) == Counter(whole[1:])
    assert (len(train) - 1, len(test) - 1) == (240, 104)
    species = Counter(line.split(",")[0] for line in whole[1:])
    for lines in (train, test):
        got = Counter(line.split(",")[0] for line in lines[1:])
        for name, n in species.items():
            assert abs(got[name] - (len(lines) - 1) * n / 344) <= 1, name
    # The test split keeps rows with missing cells, for predict to score.
    assert any(",NA," in line for line in test[1:])
    assert any(line.split(",")[2] == "NA" for line in test[1:])


# --- text ------------------------------------------------------------------

AUSTEN_LABELS = {
    "emma",
    "mansfield_park",
    "northanger_abbey",
    "persuasion",
    "pride_and_prejudice",
    "sense_and_sensibility",
}


def test_austen_sample_has_a_text_and_a_label_column():
    train = pd.read_csv(SAMPLE_DIR / "austen_train.csv")
    test = pd.read_csv(SAMPLE_DIR / "austen_test.csv")
    for frame, per_class in ((train, 140), (test, 60)):
        assert list(frame.columns) == ["text", "label"]
        assert frame["label"].value_counts().to_dict() == dict.fromkeys(AUSTEN_LABELS, per_class)
        assert frame["text"].str.split().str.len().min() >= 8
    assert not set(train["text"]) & set(test["text"])
    size = sum((SAMPLE_DIR / f"austen_{s}.csv").stat().st_size for s in ("train", "test"))
    assert size < 1_000_000


# --- config files ----------------------------------------------------------


def _load(path: Path) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def _constructor_defaults(model: str) -> dict:
    """The defaults a config file documents: the constructor's, except where the
    command line declares its own (Bernoulli's binarize), for every
    hyperparameter a config file can hold (not Python objects such as a
    covariance estimator)."""
    from nbcli.models.hyperparameters import SAME

    params = inspect.signature(MODELS[model].__init__).parameters
    specs = {s.name: s for s in MODELS[model].hyperparameters}
    out = {}
    for n, p in params.items():
        if n == "self" or specs[n].kind == "object":
            continue
        out[n] = p.default if specs[n].cli_default is SAME else specs[n].cli_default
    return out


def test_one_config_per_model():
    assert sorted(p.stem for p in CONFIG_FILES) == sorted(MODELS)


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: p.name)
def test_config_names_its_model(path):
    config = _load(path)
    assert config["model"] == path.stem
    # [data] is an optional, commented-out example.
    assert set(config) == {"model", "hyperparameters"}


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: p.name)
def test_config_hyperparameters_are_the_constructor_defaults(path):
    config = _load(path)
    defaults = _constructor_defaults(config["model"])
    # TOML has no null: parameters defaulting to None are left out.
    expected = {n: d for n, d in defaults.items() if d is not None}
    hyper = config["hyperparameters"]
    assert set(hyper) == set(expected)
    for key, default in expected.items():
        assert hyper[key] == default and type(hyper[key]) is type(default), key


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: p.name)
def test_every_hyperparameter_is_documented(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    model = _load(path)["model"]
    for key in _constructor_defaults(model):
        at = [i for i, line in enumerate(lines) if re.match(rf"(# )?{key} = ", line)]
        assert len(at) == 1, key
        above = []
        i = at[0] - 1
        while i >= 0 and lines[i].startswith("#"):
            above.append(lines[i])
            i -= 1
        assert len(above) >= 2 and any("Default:" in line for line in above), key


def _uncommented(path: Path) -> dict:
    """The config with its commented-out examples (``# key = value``, ``# [table]``) enabled."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"(?m)^# (\[\w+\]|\w+ = .*)$", r"\1", text)
    return tomllib.loads(text)


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: p.name)
def test_commented_examples_are_accepted_by_the_model(path):
    config = _uncommented(path)
    hyper = config["hyperparameters"]
    model_cls = MODELS[config["model"]]
    assert set(hyper) == set(_constructor_defaults(config["model"]))
    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 10.0, size=(12, 2))
    if "categorical" in model_cls.feature_kinds:
        X = np.floor(X)  # category codes (the mixed example's second column)
    y = np.array(["a"] * 9 + ["b"] * 3)
    model = model_cls(**hyper).fit(X, y)
    # The examples set equal priors although the classes are 9:3.
    if hasattr(model, "class_log_prior_"):
        prior = np.exp(model.class_log_prior_)
    elif hasattr(model, "class_prior_"):
        prior = model.class_prior_
    else:
        prior = model.priors_
    np.testing.assert_allclose(prior, [0.5, 0.5])


@pytest.mark.parametrize("path", CONFIG_FILES, ids=lambda p: p.name)
def test_data_table_example_names_sample_data_columns(path):
    data = _uncommented(path)["data"]
    assert data["target"] == "label"
    assert set(data) == {"target", "features", "drop"}
    headers = [set(read(name, "train").columns) for name in NAMES]
    assert any(set(data["features"]) <= h for h in headers), data["features"]
    assert all(isinstance(c, str) for c in data["drop"])
