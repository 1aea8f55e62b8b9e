"""The train workflow: a plain function that returns a report and prints nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nbcli.errors import NbcliError
from nbcli.io.request import DataRequest
from nbcli.models import GaussianNB, MultinomialNB
from nbcli.workflows.train import TrainResult, train

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical

SAMPLE = Path(__file__).parent.parent / "sample_data"


def test_train_returns_a_report_and_prints_nothing(capfd):
    result = train(GaussianNB(), DataRequest.of(str(SAMPLE / "iris_train.csv")))
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert isinstance(result, TrainResult)
    frame = pd.read_csv(SAMPLE / "iris_train.csv")
    X, y = frame.drop(columns="label").to_numpy(), frame["label"].to_numpy()
    reference = GaussianNB().fit(X, y)
    np.testing.assert_array_equal(
        result.model_file.model.predict_proba(X), reference.predict_proba(X)
    )
    assert result.facts["n_samples"] == len(y) and result.facts["n_chunks"] == 1
    assert result.facts["training_accuracy"] == pytest.approx(reference.score(X, y))
    from nbcli.io.fingerprint import TrainingFingerprint

    fp = TrainingFingerprint(legacy=False)
    fp.update(X, y)
    assert result.model_file.training["fingerprint"] == fp.metadata()["fingerprint"]


def test_chunks_give_the_same_model_through_the_public_api():
    one = train(GaussianNB(), DataRequest.of(str(SAMPLE / "wine_train.csv")))
    many = train(GaussianNB(), DataRequest.of(str(SAMPLE / "wine_train.csv"), chunk_size=7))
    assert many.facts["n_chunks"] > 1 and many.facts["training_accuracy"] is None
    X = pd.read_csv(SAMPLE / "wine_test.csv").drop(columns="label").to_numpy()
    np.testing.assert_allclose(
        many.model_file.model.predict_proba(X),
        one.model_file.model.predict_proba(X),
        rtol=0,
        atol=1e-12,
    )


def test_progress_wraps_the_chunks_and_priors_by_label_are_ordered(tmp_path):
    seen = []

    def progress(chunks, what):
        seen.append(what)
        yield from chunks

    data = tmp_path / "d.csv"
    data.write_text("a,b,label\n1,2,ham\n2,3,ham\n3,1,spam\n5,6,spam\n", encoding="utf-8")
    result = train(
        MultinomialNB(),
        DataRequest.of(str(data)),
        priors_by_label={"spam": 0.25, "ham": 0.75},
        progress=progress,
    )
    assert seen == [f"reading {data}"]
    np.testing.assert_allclose(result.facts["priors"], [0.75, 0.25])
    assert result.facts["classes"] == ["ham", "spam"]


def test_a_class_below_the_declared_minimum_is_refused(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("a,b,label\n1,2,x\n2,3,x\n3,1,y\n", encoding="utf-8")
    assert GaussianNB.min_samples_per_class == 2
    with pytest.raises(NbcliError, match="needs at least two per class"):
        train(GaussianNB(), DataRequest.of(str(data)))
    result = train(MultinomialNB(), DataRequest.of(str(data)))
    assert "single sample" in result.warnings[0]


def test_a_data_error_names_file_column_and_row(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("a,b,label\n1,2,x\n2,-3,x\n3,1,y\n4,4,y\n", encoding="utf-8")
    with pytest.raises(NbcliError, match=r"d.csv: column 'b', row 2: negative value -3"):
        train(MultinomialNB(), DataRequest.of(str(data), chunk_size=1))


def test_a_small_file_read_in_default_chunks_still_gets_its_training_accuracy(
    tmp_path, monkeypatch
):
    import nbcli.io.data as data

    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 3000)
    X = rng.normal(size=(3000, 2)) + y[:, None]
    path = tmp_path / "t.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "label": y}).to_csv(path, index=False)
    expected = GaussianNB().fit(X, y).score(X, y)
    # Default chunks of 1,000 rows; the file is held whole up to 4,000 rows.
    monkeypatch.setattr(data, "CHUNK_VALUES", 3_000)
    monkeypatch.setattr(data, "WHOLE_VALUES", 12_000)
    held = train(GaussianNB(), DataRequest.of(str(path)))
    assert held.facts["n_chunks"] == 3
    assert held.facts["training_accuracy"] == pytest.approx(expected, abs=1e-12)
    # Beyond it, nothing is held.
    monkeypatch.setattr(data, "WHOLE_VALUES", 6_000)
    assert train(GaussianNB(), DataRequest.of(str(path))).facts["training_accuracy"] is None


def test_a_column_without_any_value_is_named_in_the_refusal(tmp_path):
    from nbcli.errors import NbcliError
    from nbcli.models import GaussianNB, MixedNB
    from nbcli.workflows.train import train

    path = tmp_path / "e.csv"
    path.write_text("a,empty,label\n1.0,,x\n2.0,,y\n1.5,,x\n2.5,,y\n")
    for model in (GaussianNB(), MixedNB()):
        with pytest.raises(NbcliError, match=r"column 'empty' has no observed value"):
            train(model, DataRequest.of(str(path), missing="ignore"))


def test_a_refusal_names_the_column_it_carries_and_keeps_labels_that_look_like_columns(
    tmp_path,
):
    # The classes are spelt like column placeholders ("x1", "column 0"): only
    # the column the error carries is named, the labels stay as they are.
    path = tmp_path / "e.csv"
    path.write_text("a,b,label\n1.0,,x1\n2.0,4.0,column 0\n1.5,,x1\n2.5,5.0,column 0\n")
    with pytest.raises(NbcliError) as err:
        train(GaussianNB(), DataRequest.of(str(path), missing="ignore"))
    assert str(err.value).startswith(
        f"{path}: column 'b' has no observed value in class 'x1'; a mean and variance need"
    )


def test_a_model_error_keeps_its_columns_through_pickling_and_names_them_once():
    import pickle

    from nbcli.models import NoObservedValueError
    from nbcli.models.discriminant import CollinearWarning
    from nbcli.workflows.train import model_message

    error = NoObservedValueError(1, " has no observed value in class 'x1'")
    assert str(error) == "column 1 has no observed value in class 'x1'"
    again = pickle.loads(pickle.dumps(error))  # as from a Dask worker
    assert type(again) is NoObservedValueError and again.feature == 1
    assert model_message(again, ["a", "b"]) == "column 'b' has no observed value in class 'x1'"
    # An index beyond the names, or no names, keep the model's own words.
    assert model_message(again, ["a"]) == str(error) == model_message(again, None)
    own = NoObservedValueError(1, " is empty", names=np.array(["a", "b"], dtype=object))
    assert str(own) == "column 1 ('b') is empty" and own.named(["p", "q"]) == "column 'q' is empty"
    warning = CollinearWarning("dropped (features ", tuple(range(12)), ")", n_dropped=2)
    assert str(warning) == "dropped (features x0, x1, x2, x3, x4, x5, x6, x7, x8, x9 and 2 more)"
    assert warning.features == list(range(12)) and warning.n_dropped == 2
    names = [f"c{i}" for i in range(12)]
    assert model_message(warning, names) == (
        "dropped (features 'c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9' and 2 more)"
    )
    assert model_message(ValueError("column 1 is bad"), ["a", "b"]) == "column 1 is bad"


def test_a_measurement_given_as_target_is_named_as_such(tmp_path):
    from nbcli.errors import NbcliError
    from nbcli.models import GaussianNB
    from nbcli.workflows.train import train

    path = tmp_path / "m.csv"
    rows = [f"{i % 3},{10 + i * 0.37:.2f}" for i in range(40)]
    path.write_text("x,weight\n" + "\n".join(rows) + "\n")
    with pytest.raises(NbcliError) as err:
        train(GaussianNB(), DataRequest.of(str(path), target="weight"))
    message = str(err.value)
    assert "and 30 more have a single sample" in message
    assert "is 'weight' a measurement rather than class labels?" in message
