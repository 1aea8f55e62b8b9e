"""Labels coded once per chunk (LabelCoding) give the results of labels coded anew."""

import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.distinct import LabelCoding, unique_inverse
from nbcli.io.fingerprint import TrainingFingerprint
from nbcli.io.request import DataRequest
from nbcli.models import LinearDiscriminantAnalysis
from nbcli.workflows.train import train


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=30),
    st.data(),
)
def test_taking_rows_keeps_only_the_labels_they_have(labels, data):
    y = np.array(labels, dtype=object)
    uniques, codes = unique_inverse(y)
    keep = np.array(data.draw(st.lists(st.booleans(), min_size=len(y), max_size=len(y))))
    taken = LabelCoding(y, uniques, codes).take(keep)
    expected_uniques, expected_codes = unique_inverse(y[keep])
    assert taken.uniques.tolist() == expected_uniques.tolist()
    assert taken.codes.tolist() == expected_codes.tolist()
    assert taken.describes(taken.labels) and not taken.describes(y[keep])


@pytest.mark.numerical
def test_a_streamed_fit_with_labels_to_clean_equals_a_fit_of_the_clean_labels(tmp_path):
    # Labels with surrounding spaces and two spellings of one text (NFC and
    # NFD), a class whose only rows are dropped for a missing cell, in small
    # chunks: what the reader coded must be recoded where it changes.
    rng = np.random.default_rng(3)
    nfd = unicodedata.normalize("NFD", "é")
    raw = [" b", "b ", "é", nfd, "a", "z"]
    clean = ["b", "b", "é", "é", "a", "z"]
    pick = rng.integers(0, 5, 60)
    pick[[7, 30]] = 5  # "z": only in rows with a missing cell
    X = rng.normal(size=(60, 2)) + pick[:, None]
    cells = [[f"{v:.6f}" for v in row] for row in X]
    cells[7][0] = cells[30][1] = ""
    lines = ["x0,x1,label"] + [f"{r[0]},{r[1]},{raw[k]}" for r, k in zip(cells, pick)]
    path = tmp_path / "labels.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    result = train(
        LinearDiscriminantAnalysis(), DataRequest.of(str(path), chunk_size=7, missing="drop")
    )
    model = result.model_file.model
    keep = np.ones(60, dtype=bool)
    keep[[7, 30]] = False
    y = np.array([clean[k] for k in pick], dtype=object)
    X_read = np.array([[float(c) for c in r] for r, k in zip(cells, keep) if k])
    direct = LinearDiscriminantAnalysis().fit(X_read, y[keep])
    assert model.classes_.tolist() == ["a", "b", "é"] == direct.classes_.tolist()
    tol = 1e-12
    np.testing.assert_allclose(model.means_, direct.means_, rtol=tol, atol=tol)
    np.testing.assert_allclose(model.covariance_, direct.covariance_, rtol=tol, atol=tol)

    fp = TrainingFingerprint(legacy=False)
    fp.update(X_read, y[keep])
    assert result.model_file.training["fingerprint"] == fp.metadata()["fingerprint"]


@pytest.mark.numerical
def test_coded_chunks_whose_rows_the_model_drops_equal_a_fit_without_them():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    y = np.array(["p", "q", "r", "s"], dtype=object)[np.arange(40) % 4]
    X[3::4][:, 1] = np.nan  # every "s" row is dropped, in every chunk
    chunks = []
    for lo in range(0, 40, 9):
        uniques, codes = unique_inverse(y[lo : lo + 9])
        chunks.append((X[lo : lo + 9], LabelCoding(y[lo : lo + 9], uniques, codes)))
    coded = LinearDiscriminantAnalysis(missing="drop").fit_chunks(chunks)
    keep = ~np.isnan(X).any(axis=1)
    direct = LinearDiscriminantAnalysis().fit(X[keep], y[keep])
    assert coded.classes_.tolist() == ["p", "q", "r"] == direct.classes_.tolist()
    np.testing.assert_allclose(coded.means_, direct.means_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(coded.covariance_, direct.covariance_, rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "", " ", "\t", None, "é", " c "]), min_size=1, max_size=30)
)
def test_labels_coded_with_their_missing_ones_equal_each_told_apart(labels):
    import polars as pl

    from nbcli.io.cells import missing_labels, text_label_coding, text_label_coding_and_missing

    column = pl.Series("label", labels, dtype=pl.String)
    coding, missing = text_label_coding_and_missing(column)
    expected = text_label_coding(column, "f.csv", "label", 0, False, True)
    assert coding.labels.tolist() == expected.labels.tolist()
    assert coding.uniques.tolist() == expected.uniques.tolist()
    assert coding.codes.tolist() == expected.codes.tolist()
    assert missing.tolist() == missing_labels(column).tolist()
