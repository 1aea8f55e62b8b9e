"""``--text`` on a data set in parts: the model, predictions and figures of one file.

Each part gives its term statistics; they merge in the engines' tree and the
vocabulary is chosen once, so a part-wise fit writes the model file of a
one-file fit of the parts joined (same vocabulary, same counts, same
fingerprint). The Dask cases run on one small in-process LocalCluster.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.io.modelfile import build_metadata, load_model
from tests.conftest import assert_one_error_line, nbcli_in_process

# Uneven parts, one of a single row.
SIZES = (37, 1, 80, 42)
WORDS = np.array(
    ["free", "money", "now", "meeting", "noon", "agenda", "offer", "café", "naïve", "win"]
)
# Options a per-part vocabulary would get wrong: counts pooled over parts decide.
OPTIONS = ("--ngram", "1,2", "--min-df", "3", "--max-df", "0.9", "--max-features", "40")


def _frame(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = sum(SIZES)
    label = rng.choice(["ham", "spam", "eggs"], n)
    docs = []
    for k in label:
        # Class-dependent word choice, so that the classes differ.
        p = np.ones(WORDS.size)
        p[{"ham": 3, "spam": 0, "eggs": 7}[k]] += 4
        docs.append(" ".join(rng.choice(WORDS, rng.integers(0, 7), p=p / p.sum())))
    docs[5] = ""  # a document without words
    return pd.DataFrame({"links": rng.poisson(2, n), "body": docs, "label": label})


def _write(folder, frame: pd.DataFrame):
    frame.to_csv(folder / "all.csv", index=False)
    parts = folder / "parts"
    parts.mkdir()
    start = 0
    for i, n in enumerate(SIZES):
        frame.iloc[start : start + n].to_csv(parts / f"part-{i}.csv", index=False)
        start += n
    return parts


def _ok(*args):
    run = nbcli_in_process(*args)
    assert run.returncode == 0, run.stderr
    return run


def _same_model(parts_file, one_file):
    a, b = load_model(parts_file), load_model(one_file)
    meta_a, meta_b = build_metadata(a), build_metadata(b)
    meta_a["training"].pop("data")
    meta_b["training"].pop("data")
    # The whole model file but the data's name: vocabulary, settings, columns, fingerprint.
    assert meta_a == meta_b
    assert a.vocabularies == b.vocabularies and len(a.vocabularies["body"]) > 5
    np.testing.assert_array_equal(a.model.feature_count_, b.model.feature_count_)
    for name in ("feature_log_prob_", "class_log_prior_"):
        if hasattr(b.model, name):
            np.testing.assert_allclose(
                getattr(a.model, name), getattr(b.model, name), rtol=0, atol=1e-12
            )
    return a


@pytest.mark.parametrize(
    "model", [["multinomial"], ["complement"], ["bernoulli", "--binarize", "0"]]
)
def test_local_fit_of_a_folder_with_text_equals_one_file(tmp_path, model):
    parts = _write(tmp_path, _frame())
    common = ("-m", *model, "--text", "body", *OPTIONS, "-q")
    _ok("fit", *common, "-d", tmp_path / "all.csv", "-o", tmp_path / "one.npz")
    _ok("fit", *common, "-d", parts, "-o", tmp_path / "parts.npz")
    mf = _same_model(tmp_path / "parts.npz", tmp_path / "one.npz")
    assert mf.training["n_samples"] == sum(SIZES)
    assert mf.feature_names[0] == "links" and len(mf.vocabularies["body"]) == 40
    # Several --data files, in order, are the same data set.
    files = [parts / f"part-{i}.csv" for i in range(len(SIZES))]
    argv = [a for f in files for a in ("-d", f)]
    _ok("fit", *common, *argv, "-o", tmp_path / "files.npz")
    _same_model(tmp_path / "files.npz", tmp_path / "one.npz")


def test_a_vocabulary_chosen_per_part_would_differ(tmp_path):
    # The test above can fail: min_df over one part keeps other terms than over all.
    frame = _frame()
    parts = _write(tmp_path, frame)
    _ok("fit", "-m", "multinomial", "--text", "body", *OPTIONS, "-d", parts, "-o",
        tmp_path / "parts.npz", "-q")  # fmt: skip
    _ok("fit", "-m", "multinomial", "--text", "body", *OPTIONS, "-d", parts / "part-2.csv",
        "-o", tmp_path / "p3.npz", "-q")  # fmt: skip
    assert (
        load_model(tmp_path / "p3.npz").vocabularies
        != load_model(tmp_path / "parts.npz").vocabularies
    )


def test_predict_and_evaluate_of_parts_with_a_text_model_equal_one_file(tmp_path):
    parts = _write(tmp_path, _frame())
    model = tmp_path / "m.npz"
    _ok("fit", "-m", "multinomial", "--text", "body", "-d", parts, "-o", model, "-q")
    # Held-out documents, with words the model never saw.
    test = _frame(seed=5)
    test.loc[0, "body"] = "unheard-of words zzz"
    test_parts = tmp_path / "test"
    test_parts.mkdir()
    test.to_csv(tmp_path / "test.csv", index=False)
    test.iloc[:60].to_csv(test_parts / "a.csv", index=False)
    test.iloc[60:].to_csv(test_parts / "b.csv", index=False)
    one = _ok("predict", "-m", model, "-d", tmp_path / "test.csv", "--proba", "-q")
    _ok("predict", "-m", model, "-d", test_parts, "--proba", "--output-dir", tmp_path / "out",
        "-q", "-j", "1")  # fmt: skip
    expected = pd.read_csv(io.StringIO(one.stdout))
    got = pd.concat([pd.read_csv(tmp_path / "out" / f"{n}.pred.csv") for n in "ab"])
    assert got.shape == expected.shape == (len(test), 4)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected, rtol=0, atol=1e-12)
    figures = []
    for data in (tmp_path / "test.csv", test_parts):
        run = _ok("evaluate", "-m", model, "-d", data, "--json", "-", "-q", "--bootstrap", "100")
        figures.append(json.loads(run.stdout)["metrics"])
    whole, by_part = figures
    for name in ("accuracy", "macro_f1", "log_loss", "brier", "roc_auc", "average_precision"):
        assert by_part[name]["method"] == whole[name]["method"]
        for side in ("value", "lower", "upper"):
            assert by_part[name][side] == pytest.approx(whole[name][side], abs=1e-12)


def test_column_overrides_apply_to_every_part(tmp_path):
    parts = _write(tmp_path, _frame())
    run = nbcli_in_process(
        "fit", "-m", "mixed", "-d", parts, "--column", "links=categorical", "--drop", "body",
        "-o", tmp_path / "m.npz",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    from nbcli.io.modelfile import load_model

    types = {c["name"]: c["type"] for c in load_model(tmp_path / "m.npz").columns}
    assert types["links"] == "categorical"


def test_a_bad_cell_in_a_part_names_the_part_and_row(tmp_path):
    frame = _frame()
    frame["links"] = frame["links"].astype(object)
    frame.loc[37 + 1 + 5, "links"] = "many"  # row 6 of part-2
    parts = _write(tmp_path, frame)
    run = nbcli_in_process(
        "fit", "-m", "multinomial", "--text", "body", "-d", parts, "-o", tmp_path / "m.npz"
    )
    line = assert_one_error_line(run, "part-2.csv", "row 6")
    assert "links" in line
    assert not (tmp_path / "m.npz").exists()


def test_a_text_column_missing_from_a_part_is_refused(tmp_path):
    parts = _write(tmp_path, _frame())
    frame = pd.read_csv(parts / "part-3.csv").drop(columns="body")
    frame.to_csv(parts / "part-3.csv", index=False)
    run = nbcli_in_process(
        "fit", "-m", "multinomial", "--text", "body", "-d", parts, "-o", tmp_path / "m.npz"
    )
    assert_one_error_line(run, "part-3.csv")
    assert not (tmp_path / "m.npz").exists()


@settings(max_examples=40, deadline=None)
@given(
    docs=st.lists(
        st.tuples(st.sampled_from(["a b", "bb cc", "cc dd ee", "dd", "", "ee bb bb"]),
                  st.sampled_from(["x", "y", "z"])),
        min_size=1, max_size=30,
    ),
    cuts=st.lists(st.integers(0, 30), max_size=5),
    chunk=st.integers(1, 7),
)  # fmt: skip
def test_parts_merged_in_the_tree_equal_one_stream(docs, cuts, chunk):
    from nbcli.engines import tree_reduce
    from nbcli.engines._reduce import merge_optional
    from nbcli.models import MultinomialNB
    from nbcli.text.settings import TextSettings
    from nbcli.workflows.text_features import finalize_text, fit_text_chunks, tally_text_chunks

    texts = np.array([d for d, _ in docs], dtype=object)
    y = np.array([label for _, label in docs])
    X = (np.arange(len(docs), dtype=np.float64) % 4)[:, None]
    text = TextSettings(columns=("doc",), ngram_range=(1, 2), min_df=2)

    def chunks(lo, hi):
        for a in range(lo, hi, chunk):
            b = min(a + chunk, hi)
            yield X[a:b], y[a:b], {"doc": texts[a:b]}

    bounds = [0, *sorted({c for c in cuts if c < len(docs)}), len(docs)]
    stats = [
        tally_text_chunks(MultinomialNB(), text, chunks(lo, hi)) if hi > lo else None
        for lo, hi in zip(bounds[:-1], bounds[1:])
    ]
    one, parts = MultinomialNB(), MultinomialNB()
    try:
        expected = fit_text_chunks(one, text, chunks(0, len(docs)), ["n"])
    except Exception as exc:
        with pytest.raises(type(exc)):
            finalize_text(parts, text, tree_reduce(stats, merge_optional), ["n"])
        return
    got = finalize_text(parts, text, tree_reduce(stats, merge_optional), ["n"])
    assert got == expected
    np.testing.assert_array_equal(parts.classes_, one.classes_)
    np.testing.assert_array_equal(parts.stats_.feature_count, one.stats_.feature_count)
    np.testing.assert_array_equal(parts.stats_.class_count, one.stats_.class_count)


@pytest.mark.dask
def test_fit_predict_and_evaluate_with_text_on_dask_equal_one_file(tmp_path):
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    parts = _write(tmp_path, _frame())
    common = ("-m", "multinomial", "--text", "body", *OPTIONS, "-q")
    _ok("fit", *common, "-d", tmp_path / "all.csv", "-o", tmp_path / "one.npz")
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0",
        silence_logs=50,
    ) as cluster:  # fmt: skip
        dask = ("--engine", "dask", "--scheduler", cluster.scheduler_address)
        _ok("fit", *common, "-d", parts, "-o", tmp_path / "dask.npz", *dask)
        _ok("predict", "-m", tmp_path / "dask.npz", "-d", parts, "--proba",
            "--output-dir", tmp_path / "out", "-q", *dask)  # fmt: skip
        run = _ok("evaluate", "-m", tmp_path / "dask.npz", "-d", parts, "--json", "-", "-q",
                  "--bootstrap", "100", *dask)  # fmt: skip
        by_part = json.loads(run.stdout)
    _same_model(tmp_path / "dask.npz", tmp_path / "one.npz")
    one = _ok("predict", "-m", tmp_path / "one.npz", "-d", tmp_path / "all.csv", "--proba", "-q")
    expected = pd.read_csv(io.StringIO(one.stdout))
    got = pd.concat(
        [pd.read_csv(tmp_path / "out" / f"part-{i}.pred.csv") for i in range(len(SIZES))]
    )
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected, rtol=0, atol=1e-12)
    run = _ok("evaluate", "-m", tmp_path / "one.npz", "-d", tmp_path / "all.csv", "--json", "-",
              "-q", "--bootstrap", "100")  # fmt: skip
    whole = json.loads(run.stdout)
    for name in ("accuracy", "macro_f1", "log_loss", "brier", "roc_auc", "average_precision"):
        got_value = by_part["metrics"][name]["value"]
        assert got_value == pytest.approx(whole["metrics"][name]["value"], abs=1e-12)
    # The parts are the model's training rows, recognised by the fingerprint.
    assert whole["warnings"] != []
    assert by_part["warnings"] == whole["warnings"]


def test_rows_without_a_label_are_skipped_as_in_one_file(tmp_path):
    frame = _frame()
    frame["label"] = frame["label"].astype(object)
    frame.loc[37 + 1 + 2, "label"] = None  # row 3 of part-2
    parts = _write(tmp_path, frame)
    common = ("-m", "multinomial", "--text", "body", "-q")
    _ok("fit", *common, "-d", tmp_path / "all.csv", "-o", tmp_path / "one.npz")
    run = _ok("fit", *common, "-d", parts, "-o", tmp_path / "parts.npz")
    assert "part-2.csv: skipped 1 row without a label (the first at row 3)" in run.stderr
    mf = _same_model(tmp_path / "parts.npz", tmp_path / "one.npz")
    assert mf.training["n_samples"] == sum(SIZES) - 1
    # A value the model refuses after the skipped row is named by its row in the part.
    frame.loc[37 + 1 + 6, "links"] = -1  # row 7 of part-2
    (tmp_path / "bad").mkdir()
    bad = _write(tmp_path / "bad", frame)
    run = nbcli_in_process("fit", *common, "-d", bad, "-o", tmp_path / "bad.npz")
    assert_one_error_line(run, "part-2.csv", "'links'", "row 7")
