"""The complement, categorical and mixed models through model files."""

import io
import json
import zipfile

import numpy as np
import pytest

from nbcli.errors import NbcliError
from nbcli.io.modelfile import ModelFile, load_model, save_model
from nbcli.models import CategoricalNB, ComplementNB, MixedNB

sklearn = pytest.importorskip("sklearn")
from sklearn import naive_bayes as sk_nb  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:1200], y[:1200], X[1200:], y[1200:]


def _through_file(model, path, n_features):
    names = [f"f{j}" for j in range(n_features)]
    save_model(ModelFile(model=model, feature_names=names, target="y", training={}), path)
    return load_model(path).model


@pytest.mark.parametrize("norm", [False, True])
def test_complement_equals_sklearn_through_a_saved_file(tmp_path, digits, norm):
    Xtr, ytr, Xte, _ = digits
    back = _through_file(ComplementNB(norm=norm, alpha=0.5).fit(Xtr, ytr), tmp_path / "c.npz", 64)
    theirs = sk_nb.ComplementNB(norm=norm, alpha=0.5).fit(Xtr, ytr)
    np.testing.assert_allclose(back.predict_proba(Xte), theirs.predict_proba(Xte), atol=1e-8)
    np.testing.assert_array_equal(back.predict(Xte), theirs.predict(Xte))


def test_categorical_equals_sklearn_through_a_saved_file(tmp_path, digits):
    Xtr, ytr, Xte, _ = digits
    codes_tr, codes_te = Xtr // 4, Xte // 4  # 0..4: integer-coded features
    ours = CategoricalNB(alpha=0.7, min_categories=5).fit(codes_tr, ytr)
    back = _through_file(ours, tmp_path / "k.npz", 64)
    theirs = sk_nb.CategoricalNB(alpha=0.7, min_categories=5).fit(codes_tr, ytr)
    np.testing.assert_allclose(
        back.predict_proba(codes_te), theirs.predict_proba(codes_te), atol=1e-8
    )
    assert np.array_equal(back.predict_proba(codes_te), ours.predict_proba(codes_te))
    assert back.n_categories_.tolist() == [5] * 64


def test_mixed_posteriors_survive_a_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    X = np.column_stack(
        [
            rng.normal(size=60),
            rng.integers(0, 4, 60),
            rng.integers(0, 2, 60),
            rng.poisson(3.0, 60),
        ]
    ).astype(float)
    X[::7, 0] = np.nan
    X[::5, 1] = np.nan
    y = rng.integers(0, 3, 60)
    model = MixedNB(
        column_types=["gaussian", "categorical", "bernoulli", "multinomial"],
        missing="ignore",
        var_smoothing_scale="feature",
    ).fit(X, y)
    back = _through_file(model, tmp_path / "m.npz", 4)
    assert back.column_types_ == model.column_types_
    assert np.array_equal(back.predict_proba(X), model.predict_proba(X))


def _rewrite(path, members, meta):
    buf = io.BytesIO()
    np.save(buf, np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    members = {**members, "metadata.npy": buf.getvalue()}
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def test_a_category_layout_that_does_not_add_up_is_refused(tmp_path):
    model = CategoricalNB().fit([[0.0, 1.0], [2.0, 0.0], [1.0, 1.0]], [0, 1, 1])
    path = tmp_path / "k.npz"
    _through_file(model, path, 2)
    with zipfile.ZipFile(path) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    meta = json.loads(np.load(io.BytesIO(members["metadata.npy"])).tobytes())
    assert meta["stats"]["dims"] == {"S": 5}
    for dims, text in [({"S": 6}, "has shape"), ({}, "dims must give sizes of S")]:
        _rewrite(path, members, {**meta, "stats": {**meta["stats"], "dims": dims}})
        with pytest.raises(NbcliError, match=text):
            load_model(path)
    buf = io.BytesIO()
    np.save(buf, np.array([2.0, 2.0]))
    _rewrite(path, {**members, "stats.n_categories.npy": buf.getvalue()}, meta)
    with pytest.raises(NbcliError, match="numbers of categories that do not add up"):
        load_model(path)
