"""Category columns over parts: ``mixed`` and ``categorical`` fits of a folder of
parts, locally and on Dask, equal the fit of the parts joined into one file.

Each part numbers its categories in the order they first appear in it; the
merge renumbers them by label into the first-seen order of the joined rows,
so the model file's category lists, its fingerprint and its posteriors are
those of the one-file fit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.models import registry
from tests.conftest import assert_one_error_line, nbcli_in_process
from tests.declared import model_types_where

# Posteriors of two fits whose statistics differ only in the order of the
# floating-point merges: a few ulps of log-probabilities of order 10.
TOL = 1e-12

NUMERIC = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
#: The models that take categorical columns.
CATEGORY_MODELS = model_types_where(lambda cls: "categorical" in cls.feature_kinds)


@pytest.fixture(scope="module")
def penguins(tmp_path_factory):
    """Penguins (categories and missing cells) in a shuffled order that makes
    later parts meet the islands in another order than the first, and a code
    column (whole numbers 0..2) that the categorical model reads as codes."""
    from palmerpenguins import load_penguins

    frame = load_penguins().sample(frac=1.0, random_state=7).reset_index(drop=True)
    frame["site"] = np.arange(len(frame)) % 3
    return frame


def _split(frame, folder, cuts):
    folder.mkdir()
    edges = [0, *cuts, len(frame)]
    for i, (a, b) in enumerate(zip(edges[:-1], edges[1:])):
        frame.iloc[a:b].to_csv(folder / f"p{i}.csv", index=False)
    return folder


def _proba(model, data):
    run = nbcli_in_process("predict", "-m", model, "-d", data, "--proba")
    assert run.returncode == 0, run.stderr
    from io import StringIO

    out = pd.read_csv(StringIO(run.stdout))
    return out[[c for c in out if c.startswith("proba_")]].to_numpy()


def _fit(tmp_path, name, data, model, *extra):
    out = tmp_path / f"{name}.npz"
    run = nbcli_in_process(
        "fit", "-m", model, "-d", data, "--target", "species", "-o", out, "--quiet", *extra
    )
    assert run.returncode == 0, run.stderr
    return out


def _same_model(one, parts, data):
    from nbcli.io.modelfile import load_model

    a, b = load_model(one), load_model(parts)
    assert a.columns == b.columns
    assert a.training["fingerprint"] == b.training["fingerprint"]
    assert a.training["class_counts"] == b.training["class_counts"]
    pa, pb = _proba(one, data), _proba(parts, data)
    assert pa.shape == pb.shape and pa.shape[0] > 300
    np.testing.assert_allclose(pb, pa, rtol=0, atol=TOL)
    return a


# Cuts that give a part of one row, and parts whose first-seen orders differ.
CUTS = [(1, 40, 41, 200), (170, 171)]


@pytest.mark.parametrize("cuts", CUTS)
@pytest.mark.parametrize("model", CATEGORY_MODELS)
def test_category_fits_over_parts_equal_the_one_file_fit(tmp_path, penguins, model, cuts):
    # The numeric columns go to a model without Gaussian columns.
    numeric = "gaussian" in registry.model_classes()[model].feature_kinds
    frame = penguins if numeric else penguins.drop(columns=NUMERIC)
    one = tmp_path / "one.csv"
    frame.to_csv(one, index=False)
    folder = _split(frame, tmp_path / "parts", cuts)
    orders = {tuple(dict.fromkeys(pd.read_csv(p)["island"])) for p in folder.iterdir()}
    assert len(orders) > 1  # the parts number their islands differently
    # The one-file fit in small chunks: the order does not depend on chunks either.
    whole = _fit(tmp_path, "one", one, model, "--chunk-size", "13")
    by_parts = _fit(tmp_path, "parts", folder, model)
    mf = _same_model(whole, by_parts, one)
    islands = next(c for c in mf.columns if c["name"] == "island")["categories"]
    assert islands == list(dict.fromkeys(frame["island"]))  # first seen in the joined rows


def test_column_types_apply_to_every_part(tmp_path, penguins):
    one = tmp_path / "one.csv"
    penguins.to_csv(one, index=False)
    folder = _split(penguins, tmp_path / "parts", (100, 250))
    flags = ("--column", "year=categorical", "--column", "site=multinomial")
    whole = _fit(tmp_path, "one", one, "mixed", *flags)
    mf = _same_model(whole, _fit(tmp_path, "parts", folder, "mixed", *flags), one)
    types = {c["name"]: c["type"] for c in mf.columns}
    assert types["year"] == "categorical" and types["site"] == "multinomial"


def test_every_part_reads_a_column_as_the_first_part_holding_a_value_of_it(tmp_path, penguins):
    # The first part holds no sex at all: the next part's rows decide that it is
    # categorical, as the first rows of the joined file do.
    frame = penguins.copy()
    frame.loc[:9, "sex"] = np.nan
    one = tmp_path / "one.csv"
    frame.to_csv(one, index=False)
    folder = _split(frame, tmp_path / "parts", (10, 200))
    _same_model(_fit(tmp_path, "one", one, "mixed"), _fit(tmp_path, "parts", folder, "mixed"), one)


def test_a_part_at_odds_with_the_plan_is_refused_in_one_line(tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.csv").write_text("x,c,label\n1.5,2.5,a\n2.5,3.5,b\n1.0,2.5,a\n")
    (folder / "b.csv").write_text("x,c,label\n1.5,red,a\n2.5,blue,b\n")
    run = nbcli_in_process("fit", "-m", "mixed", "-d", folder, "-o", tmp_path / "m.npz")
    assert_one_error_line(run, "b.csv", "column 'c'", "'red'")
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.dask
def test_category_fits_on_dask_equal_the_one_file_fit(tmp_path, penguins):
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    one = tmp_path / "one.csv"
    penguins.to_csv(one, index=False)
    folder = _split(penguins, tmp_path / "parts", (1, 90, 91, 230))
    whole = _fit(tmp_path, "one", one, "mixed")
    cat = penguins.drop(columns=NUMERIC)
    cat_one = tmp_path / "cat.csv"
    cat.to_csv(cat_one, index=False)
    cat_folder = _split(cat, tmp_path / "cat_parts", (1, 90, 91, 230))
    cat_whole = _fit(tmp_path, "cat_one", cat_one, "categorical")
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0", silence_logs=50
    ) as cluster:
        dask = ("--engine", "dask", "--scheduler", cluster.scheduler_address)
        mixed = _fit(tmp_path, "dask", folder, "mixed", *dask)
        categorical = _fit(tmp_path, "cat_dask", cat_folder, "categorical", *dask)
    _same_model(whole, mixed, one)
    _same_model(cat_whole, categorical, cat_one)


def test_declared_categories_keep_their_order_over_parts(tmp_path):
    import polars as pl

    declared = ["Torgersen", "Dream", "Biscoe", "Elsewhere"]
    rng = np.random.default_rng(3)
    n = 120
    island = rng.choice(declared[:3], n)
    label = np.where(island == "Biscoe", "a", rng.choice(["a", "b"], n))
    frame = pl.DataFrame(
        {
            "island": pl.Series(island, dtype=pl.Enum(declared)),
            "x": rng.normal(size=n),
            "label": label,
        }
    )
    one = tmp_path / "one.parquet"
    frame.write_parquet(one)
    folder = tmp_path / "parts"
    folder.mkdir()
    frame[:50].reverse().write_parquet(folder / "p0.parquet")  # another first-seen order
    frame[50:].write_parquet(folder / "p1.parquet")
    joined = tmp_path / "joined.parquet"
    pl.concat([pl.read_parquet(folder / "p0.parquet"), frame[50:]]).write_parquet(joined)
    whole = _fit_to(tmp_path, "one", joined, "mixed")
    by_parts = _fit_to(tmp_path, "parts", folder, "mixed")
    from nbcli.io.modelfile import load_model

    for path in (whole, by_parts):
        columns = {c["name"]: c for c in load_model(path).columns}
        assert columns["island"]["categories"] == declared
    assert load_model(whole).training["fingerprint"] == load_model(by_parts).training["fingerprint"]
    np.testing.assert_allclose(_proba(by_parts, joined), _proba(whole, joined), rtol=0, atol=TOL)


def _fit_to(tmp_path, name, data, model):
    out = tmp_path / f"{name}.npz"
    run = nbcli_in_process("fit", "-m", model, "-d", data, "--target", "label", "-o", out, "-q")
    assert run.returncode == 0, run.stderr
    return out


@settings(max_examples=5, deadline=None)
@given(cuts=st.lists(st.integers(1, 343), max_size=4, unique=True), chunk=st.integers(5, 400))
def test_any_split_gives_the_statistics_of_one_file(tmp_path_factory, cuts, chunk):
    from palmerpenguins import load_penguins

    from nbcli.engines.local import LocalEngine
    from nbcli.models import MixedNB
    from nbcli.workflows.parts import train_parts
    from nbcli.workflows.train import train

    frame = load_penguins().sample(frac=1.0, random_state=11).reset_index(drop=True)
    tmp_path = tmp_path_factory.mktemp("split")
    one = tmp_path / "one.csv"
    frame.to_csv(one, index=False)
    folder = _split(frame, tmp_path / "parts", sorted(cuts))
    parts = sorted(str(p) for p in folder.iterdir())
    from nbcli.io.request import DataRequest

    whole = train(
        MixedNB(missing="ignore"),
        DataRequest.of(str(one), target="species", chunk_size=chunk, missing="ignore"),
    ).model_file
    split = train_parts(
        MixedNB(missing="ignore"),
        DataRequest.of(parts, target="species", chunk_size=chunk),
        LocalEngine(),
    ).model_file
    assert split.columns == whole.columns
    assert split.training["fingerprint"] == whole.training["fingerprint"]
    a, b = whole.model.stats_, split.model.stats_
    np.testing.assert_array_equal(b.category_count, a.category_count)  # whole numbers
    np.testing.assert_array_equal(b.class_count, a.class_count)
    mean_a, mean_b = a.gaussian_shift + a.gaussian_offset, b.gaussian_shift + b.gaussian_offset
    np.testing.assert_allclose(mean_b, mean_a, rtol=1e-13)
    np.testing.assert_allclose(b.gaussian_m2, a.gaussian_m2, rtol=1e-11)
