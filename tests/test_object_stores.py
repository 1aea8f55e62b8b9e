"""URLs as paths, against a real S3-compatible server on 127.0.0.1 (moto's
server mode, started here): fit, predict, evaluate and cv read ``s3://``
objects and prefixes of parts and write ``s3://`` outputs, with the same
results as local files, on the Dask engine too (fit, predict, evaluate, cv and
tune over s3 parts); writes are whole uploads; a wrong bucket, missing
credentials and a missing package each give one line and exit 2."""

from __future__ import annotations

import os
import shutil
import sys

import numpy as np
import polars as pl
import pytest

from tests.conftest import SAMPLE, assert_one_error_line, nbcli, nbcli_in_process

pytest.importorskip("s3fs")
moto_server = pytest.importorskip("moto.server")

SECRET = "nbcli-test-secret-3f9c"
BUCKET = "nbcli-data"


@pytest.fixture(scope="module")
def store():
    """A moto S3 server on the loopback, the environment pointing at it, and
    an s3fs file system with a bucket."""
    import s3fs

    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {
        "AWS_ENDPOINT_URL": f"http://{host}:{port}",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        fs = s3fs.S3FileSystem(client_kwargs={"endpoint_url": env["AWS_ENDPOINT_URL"]})
        fs.mkdir(BUCKET)
        data = SAMPLE
        fs.put_file(str(data / "iris_train.csv"), f"{BUCKET}/iris/train.csv")
        fs.put_file(str(data / "iris_test.csv"), f"{BUCKET}/iris/test.csv")
        train = pl.read_csv(data / "iris_train.csv")
        cut = [0, 31, 32, 80, train.height]
        for i, (a, b) in enumerate(zip(cut, cut[1:])):
            part = train.slice(a, b - a)
            local = f"/tmp/nbcli-part-{os.getpid()}-{i}"
            if i % 2:
                part.write_parquet(local + ".parquet")
                fs.put_file(local + ".parquet", f"{BUCKET}/parts/p{i}.parquet")
                os.unlink(local + ".parquet")
            else:
                part.write_csv(local + ".csv")
                fs.put_file(local + ".csv", f"{BUCKET}/parts/p{i}.csv")
                os.unlink(local + ".csv")
        yield fs
    finally:
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def ok(*args):
    run = nbcli_in_process(*args, "--quiet")
    assert run.returncode == 0, run.stderr
    return run


def proba(model, data, tmp_path, name):
    out = tmp_path / f"{name}.csv"
    ok("predict", "-m", model, "-d", data, "--proba", "-o", out)
    return pl.read_csv(out)


@pytest.mark.numerical
def test_fit_predict_evaluate_from_s3_equal_local(store, tmp_path):
    data = SAMPLE
    ok("fit", "-m", "gaussian", "-d", data / "iris_train.csv", "-o", tmp_path / "local.npz")
    url_model = f"s3://{BUCKET}/models/iris.npz"
    ok("fit", "-m", "gaussian", "-d", f"s3://{BUCKET}/iris/train.csv", "-o", url_model,
       "--json", f"s3://{BUCKET}/reports/fit.json")  # fmt: skip
    parts_model = tmp_path / "parts.npz"
    ok("fit", "-m", "gaussian", "-d", f"s3://{BUCKET}/parts/", "-o", parts_model)
    expected = proba(tmp_path / "local.npz", data / "iris_test.csv", tmp_path, "e")
    for model, test in (
        (url_model, f"s3://{BUCKET}/iris/test.csv"),
        (parts_model, data / "iris_test.csv"),
    ):
        got = proba(model, test, tmp_path, "g")
        assert got["prediction"].to_list() == expected["prediction"].to_list()
        np.testing.assert_allclose(
            got.drop("prediction").to_numpy(), expected.drop("prediction").to_numpy(), atol=1e-12
        )
    assert store.exists(f"{BUCKET}/reports/fit.json")
    assert b'"schema": "nbcli.training"' in store.cat(f"{BUCKET}/reports/fit.json").replace(
        b'"schema":"', b'"schema": "'
    )
    ok("evaluate", "-m", url_model, "-d", f"s3://{BUCKET}/iris/test.csv",
       "--json", f"s3://{BUCKET}/reports/evaluate.json")  # fmt: skip
    ok(
        "cv",
        "-m",
        "gaussian",
        "-d",
        f"s3://{BUCKET}/iris/train.csv",
        "--json",
        tmp_path / "cv.json",
    )
    ok("cv", "-m", "gaussian", "-d", data / "iris_train.csv", "--json", tmp_path / "cv-local.json")
    import json

    cv, cv_local = (json.loads((tmp_path / n).read_text()) for n in ("cv.json", "cv-local.json"))
    assert cv["inputs"]["data"]["sha256"] == cv_local["inputs"]["data"]["sha256"]
    for key in ("metrics", "folds", "confusion_matrix", "per_class"):
        assert cv[key] == cv_local[key]
    # A prefix of parts is cross-validated as the one file it cuts up.
    ok("cv", "-m", "gaussian", "-d", f"s3://{BUCKET}/parts/", "--json", tmp_path / "cv-parts.json")
    cv_parts = json.loads((tmp_path / "cv-parts.json").read_text())
    assert cv_parts["n_samples"] == cv_local["n_samples"]
    assert cv_parts["confusion_matrix"] == cv_local["confusion_matrix"]


def test_predict_output_dir_on_s3(store, tmp_path):
    model = tmp_path / "m.npz"
    ok("fit", "-m", "gaussian", "-d", SAMPLE / "iris_train.csv", "-o", model)
    ok("predict", "-m", model, "-d", f"s3://{BUCKET}/parts/", "--output-dir", f"s3://{BUCKET}/out/")
    written = sorted(p.rsplit("/", 1)[1] for p in store.ls(f"{BUCKET}/out"))
    assert written == ["p0.pred.csv", "p1.pred.csv", "p2.pred.csv", "p3.pred.csv"]
    local = tmp_path / "p1.parquet"
    store.get_file(f"{BUCKET}/parts/p1.parquet", str(local))
    ok("predict", "-m", model, "-d", local, "-o", tmp_path / "p1.pred.csv")
    assert store.cat(f"{BUCKET}/out/p1.pred.csv") == (tmp_path / "p1.pred.csv").read_bytes()
    # A second run replaces its own outputs; a data object is never replaced by a model.
    ok("predict", "-m", model, "-d", f"s3://{BUCKET}/parts/", "--output-dir", f"s3://{BUCKET}/out/")
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", local, "-o", f"s3://{BUCKET}/iris/test.csv"
    )
    assert_one_error_line(run, "iris/test.csv", "exists and is not")


def test_split_into_a_prefix(store, tmp_path):
    ok("split", "-d", f"s3://{BUCKET}/iris/train.csv", "--test", "0.25", "--seed", "3",
       "--output-dir", f"s3://{BUCKET}/split/")  # fmt: skip
    ok("split", "-d", SAMPLE / "iris_train.csv", "--test", "0.25", "--seed", "3",
       "--output-dir", tmp_path)  # fmt: skip
    for part in ("train", "test"):
        local = (tmp_path / f"iris_train.{part}.csv").read_bytes()
        assert store.cat(f"{BUCKET}/split/train.{part}.csv") == local
    assert not os.path.exists("s3:")  # no local folder named like the URL


def test_an_unfinished_write_leaves_no_object(store):
    from nbcli.io.atomic import atomic_write

    url = f"s3://{BUCKET}/atomic/out.csv"
    with pytest.raises(RuntimeError):
        with atomic_write(url, "w") as f:
            f.write("prediction\n" + "a\n" * 1000)
            raise RuntimeError("stopped mid-write")
    assert not store.exists(f"{BUCKET}/atomic/out.csv")
    with atomic_write(url, "w") as f:
        f.write("prediction\nold\n")
    with pytest.raises(RuntimeError):
        with atomic_write(url, "w") as f:
            f.write("prediction\nnew\n")
            raise RuntimeError("stopped mid-write")
    assert store.cat(f"{BUCKET}/atomic/out.csv") == b"prediction\nold\n"


def test_a_replaced_object_is_read_afresh(store):
    from pathlib import Path

    from nbcli.io.remote import local_copy

    store.pipe(f"{BUCKET}/versions/x.csv", b"a,label\n1,x\n")
    url = f"s3://{BUCKET}/versions/x.csv"
    assert Path(local_copy(url)).read_bytes() == b"a,label\n1,x\n"
    assert local_copy(url) == local_copy(url)  # one copy while the object is unchanged
    store.pipe(f"{BUCKET}/versions/x.csv", b"a,label\n2,y\n3,z\n")
    assert Path(local_copy(url)).read_bytes() == b"a,label\n2,y\n3,z\n"


def test_store_errors_are_one_line_and_never_show_secrets(store, tmp_path):
    data = f"s3://{BUCKET}/iris/train.csv"
    cases = [
        (("fit", "-m", "gaussian", "-d", "s3://no-such-bucket/x.csv", "-o", tmp_path / "m.npz"),
         {}, ("no-such-bucket", "does not exist")),
        (("fit", "-m", "gaussian", "-d", f"s3://{BUCKET}/iris/nothing.csv", "-o", tmp_path / "m.npz"),
         {}, ("nothing.csv", "no such object")),
        (("fit", "-m", "gaussian", "-d", data, "-o", "s3://no-such-bucket/m.npz"),
         {}, ("--output", "does not exist")),
        (("fit", "-m", "gaussian", "-d", data, "-o", "https://example.invalid/m.npz"),
         {}, ("read-only",)),
        (("fit", "-m", "gaussian", "-d", data, "-o", tmp_path / "m.npz"),
         {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
          "AWS_CONFIG_FILE": "/nonexistent", "AWS_EC2_METADATA_DISABLED": "true"},
         ("no credentials", "AWS_ACCESS_KEY_ID")),
    ]  # fmt: skip
    for args, env, fragments in cases:
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            # A fresh process where credentials are changed (clients cache them).
            run = nbcli(*args) if env else nbcli_in_process(*args)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        line = assert_one_error_line(run, *fragments)
        assert SECRET not in run.stderr + run.stdout, line


def test_a_missing_package_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "gcsfs", None)
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", "gs://b/x.csv", "-o", tmp_path / "m.npz")
    assert_one_error_line(run, "gcsfs", "pip install 'nbcli[cloud]'")


def test_file_urls_read_and_write(tmp_path):
    shutil.copy(SAMPLE / "iris_train.csv", tmp_path / "train.csv")
    ok(
        "fit",
        "-m",
        "gaussian",
        "-d",
        f"file://{tmp_path}/train.csv",
        "-o",
        f"file://{tmp_path}/m.npz",
    )
    ok("fit", "-m", "gaussian", "-d", tmp_path / "train.csv", "-o", tmp_path / "local.npz")
    from nbcli.io.modelfile import load_model

    a, b = load_model(tmp_path / "m.npz"), load_model(tmp_path / "local.npz")
    assert a.training["fingerprint"] == b.training["fingerprint"]
    np.testing.assert_array_equal(a.model.theta_, b.model.theta_)


@pytest.mark.dask
@pytest.mark.numerical
def test_dask_fit_over_s3_parts(store, tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0", silence_logs=50
    ) as cluster:
        ok("fit", "-m", "gaussian", "-d", f"s3://{BUCKET}/parts/", "--engine", "dask",
           "--scheduler", cluster.scheduler_address, "-o", tmp_path / "dask.npz")  # fmt: skip
        # The workers write the predictions of their parts themselves.
        ok("predict", "-m", tmp_path / "dask.npz", "-d", f"s3://{BUCKET}/parts/",
           "--output-dir", f"s3://{BUCKET}/dask-out/", "--engine", "dask",
           "--scheduler", cluster.scheduler_address)  # fmt: skip
        # evaluate, cv and tune read the s3 parts on the workers too.
        on_dask = ("-d", f"s3://{BUCKET}/parts/", "--engine", "dask",
                   "--scheduler", cluster.scheduler_address)  # fmt: skip
        dask_reports = _scored_reports(tmp_path, on_dask)
    written = sorted(p.rsplit("/", 1)[1] for p in store.ls(f"{BUCKET}/dask-out"))
    assert written == ["p0.pred.csv", "p1.pred.csv", "p2.pred.csv", "p3.pred.csv"]
    one_reports = _scored_reports(tmp_path, ("-d", SAMPLE / "iris_train.csv"))
    for command, (got, want) in zip(("evaluate", "cv", "tune"), zip(dask_reports, one_reports)):
        assert got["n_samples"] == want["n_samples"] == 90, command
        for key, metric in want.get("metrics", {}).items():
            assert got["metrics"][key]["value"] == pytest.approx(
                metric["value"], abs=1e-12, rel=0, nan_ok=True
            ), (command, key)
    assert dask_reports[2]["best"]["params"] == one_reports[2]["best"]["params"]
    assert dask_reports[2]["best"]["value"] == pytest.approx(
        one_reports[2]["best"]["value"], abs=1e-12, rel=0
    )
    ok("fit", "-m", "gaussian", "-d", SAMPLE / "iris_train.csv", "-o", tmp_path / "one.npz")
    a = proba(tmp_path / "dask.npz", SAMPLE / "iris_test.csv", tmp_path, "d")
    b = proba(tmp_path / "one.npz", SAMPLE / "iris_test.csv", tmp_path, "o")
    assert a["prediction"].to_list() == b["prediction"].to_list()
    np.testing.assert_allclose(
        a.drop("prediction").to_numpy(), b.drop("prediction").to_numpy(), atol=1e-12
    )


def _scored_reports(tmp_path, data) -> list[dict]:
    """The JSON reports of evaluate (of the model one.npz would be: fitted
    locally first), cv and tune on ``data`` (``-d`` and engine options)."""
    import json

    model = tmp_path / "ref.npz"
    if not model.exists():
        ok("fit", "-m", "gaussian", "-d", SAMPLE / "iris_train.csv", "-o", model)
    runs = [
        ok("evaluate", "-m", model, *data, "--bootstrap", "0", "--json", "-"),
        ok("cv", "-m", "gaussian", *data, "--bootstrap", "0", "--json", "-"),
        ok(
            "tune",
            "-m",
            "gaussian",
            *data,
            "--var-smoothing",
            "1e-9,1e-3",
            "--bootstrap",
            "0",
            "--json",
            "-",
        ),  # fmt: skip
    ]
    return [json.loads(run.stdout) for run in runs]
