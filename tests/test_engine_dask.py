"""The Dask engine on a LocalCluster: the same model, outputs and sums as the local engine.

Selected with ``-m dask``; skipped when Dask is not installed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")
pytest.importorskip("dask")

from nbcli.engines import open_engine  # noqa: E402
from nbcli.engines.dask_engine import DaskEngine  # noqa: E402
from nbcli.engines.sums import evaluation_sums  # noqa: E402
from tests import engine_parts  # noqa: E402
from tests.engine_parts import (  # noqa: E402
    ESTIMATORS,
    BadRowError,
    make_data,
    predict_part,
    read_part,
    write_parts,
)

pytestmark = pytest.mark.dask

N_ROWS = sum(engine_parts.PART_SIZES)


@pytest.fixture(scope="module")
def engine():
    # Threads rather than processes: a cluster starts in well under a second.
    with open_engine("dask", workers=2, worker_memory="1GiB", processes=False) as eng:
        yield eng


def _posteriors(model, name):
    Xt, _ = make_data(ESTIMATORS[name](), 200, seed=99)
    return model.predict_proba(Xt)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_dask_fit_from_six_parts_equals_one_local_fit(engine, tmp_path, name):
    X, y = make_data(ESTIMATORS[name](), N_ROWS, seed=1)
    parts = write_parts(tmp_path, X, y, fmt="mixed")
    stats = engine.fit_statistics(parts, read_part, ESTIMATORS[name]())
    model = stats.to_estimator(ESTIMATORS[name]())
    one = ESTIMATORS[name]().fit(X, y)
    assert stats.n_rows == N_ROWS
    np.testing.assert_array_equal(model.classes_, one.classes_)
    np.testing.assert_allclose(_posteriors(model, name), _posteriors(one, name), rtol=0, atol=1e-12)
    # The same fixed tree as the local engine: the same bits.
    local = open_engine("local").fit_statistics(parts, read_part, ESTIMATORS[name]())
    for key, value in stats.stats.arrays().items():
        np.testing.assert_array_equal(value, local.stats.arrays()[key], err_msg=key)


def test_mean_1e6_keeps_full_precision(engine, tmp_path):
    X, y = make_data(ESTIMATORS["gaussian"](), N_ROWS, seed=2)
    assert abs(X.mean() - 1e6) < 2 and 0.5 < X[y == 0].std(axis=0).min() < 1.5
    parts = write_parts(tmp_path, X, y)
    model = engine.fit_statistics(parts, read_part, ESTIMATORS["gaussian"]()).to_estimator(
        ESTIMATORS["gaussian"]()
    )
    one = ESTIMATORS["gaussian"]().fit(X, y)
    np.testing.assert_allclose(model.var_, one.var_, rtol=1e-12)
    # E[x^2] - E[x]^2 at 1e6 has an absolute error near 1e12 * 2e-16 = 2e-4 of unit variance;
    # these variances agree with the two-pass variances to far better than that.
    two_pass = np.array([X[y == k].var(axis=0) for k in range(3)])
    np.testing.assert_allclose(model.var_ - model.epsilon_, two_pass, rtol=1e-9)


def test_order_of_parts_changes_only_rounding(engine, tmp_path):
    X, y = make_data(ESTIMATORS["qda"](), N_ROWS, seed=3)
    parts = write_parts(tmp_path, X, y)
    forward = engine.fit_statistics(parts, read_part, ESTIMATORS["qda"]())
    backward = engine.fit_statistics(parts[::-1], read_part, ESTIMATORS["qda"]())
    a = forward.to_estimator(ESTIMATORS["qda"]())
    b = backward.to_estimator(ESTIMATORS["qda"]())
    np.testing.assert_allclose(_posteriors(a, "qda"), _posteriors(b, "qda"), rtol=0, atol=1e-12)
    again = engine.fit_statistics(parts, read_part, ESTIMATORS["qda"]())
    for key, value in forward.stats.arrays().items():
        np.testing.assert_array_equal(value, again.stats.arrays()[key])


def test_bad_row_surfaces_as_the_same_exception(engine, tmp_path):
    X, y = make_data(ESTIMATORS["lda"](), N_ROWS, seed=4)
    parts = write_parts(tmp_path, X, y)
    for bad in (parts[4], parts[2]):
        lines = Path(bad).read_text().splitlines()
        lines[3] = lines[3].replace(",", ",1e", 1)
        Path(bad).write_text("\n".join(lines))
    with pytest.raises(BadRowError) as info:
        engine.fit_statistics(parts, read_part, ESTIMATORS["lda"]())
    # The lowest-indexed bad part is reported, whichever finished first.
    assert str(info.value) == (f"{parts[2]}: row 3: a cell is not a number; fix or remove that row")
    assert info.value.exit_code == 2


def test_predict_map_writes_each_part_and_skips_a_bad_one(engine, tmp_path):
    X, y = make_data(ESTIMATORS["gaussian"](), N_ROWS, seed=5)
    parts = write_parts(tmp_path, X, y)
    Path(parts[3]).write_text(Path(parts[3]).read_text() + "\n0,1,2,three\n")
    model = ESTIMATORS["gaussian"]().fit(X, y)
    outcomes = engine.map_write(parts, predict_part, model)
    assert [o.index for o in outcomes] == list(range(6))
    assert [o.ok for o in outcomes] == [True, True, True, False, True, True]
    assert (
        outcomes[3].error == f"{parts[3]}: row 65: a cell is not a number; fix or remove that row"
    )
    start = 0
    for o, size in zip(outcomes, engine_parts.PART_SIZES):
        out = Path(o.part).with_suffix(".pred.csv")
        if o.ok:
            assert o.value == size
            got = np.loadtxt(out, delimiter=",", ndmin=2)
            np.testing.assert_array_equal(got, model.predict_proba(X[start : start + size]))
        else:
            assert not out.exists()
        start += size
    assert not list(tmp_path.glob(".*.tmp"))


def _part_sums(index, path, shared):
    model, edges = shared
    total = None
    for X, y in read_part(path):
        s = evaluation_sums(
            model.predict_proba(X),
            np.searchsorted(model.classes_, y),
            len(model.classes_),
            edges=edges,
        )
        total = s if total is None else total + s
    return total


def _rows_of(index, path, shared):
    return [int(v) for _, y in read_part(path) for v in y]


def _value(index, kept, shared):
    return kept


def test_evaluation_sums_equal_local(engine, tmp_path):
    X, y = make_data(ESTIMATORS["lda"](), N_ROWS, seed=6)
    parts = write_parts(tmp_path, X, y)
    model = ESTIMATORS["lda"]().fit(X[::2], y[::2])
    edges = np.linspace(0.0, 1.0, 11)
    shared = (model, edges)
    dask_sums = engine.sum_over_parts(parts, _part_sums, shared)
    local_sums = open_engine("local").sum_over_parts(parts, _part_sums, shared)
    np.testing.assert_array_equal(dask_sums.confusion, local_sums.confusion)
    assert dask_sums.log_loss == pytest.approx(local_sums.log_loss, rel=1e-12)
    assert dask_sums.brier_score == pytest.approx(local_sums.brier_score, rel=1e-12)
    assert dask_sums.ece() == pytest.approx(local_sums.ece(), rel=1e-12)
    np.testing.assert_array_equal(dask_sums.log_loss_bins.count, local_sums.log_loss_bins.count)
    np.testing.assert_allclose(
        dask_sums.log_loss_bins.sums, local_sums.log_loss_bins.sums, rtol=1e-12, atol=1e-300
    )
    proba = model.predict_proba(X)
    assert dask_sums.accuracy == pytest.approx(np.mean(model.classes_[proba.argmax(1)] == y))


def test_gathered_and_kept_parts_come_back_in_part_order(engine, tmp_path):
    X, y = make_data(ESTIMATORS["gaussian"](), N_ROWS, seed=6)
    parts = write_parts(tmp_path, X, y)
    gathered = engine.gather_parts(parts, _rows_of)
    assert [len(g) for g in gathered] == list(engine_parts.PART_SIZES)
    assert sum(gathered, []) == y.tolist()
    assert gathered == open_engine("local").gather_parts(parts, _rows_of)
    # Kept values are the parts of later sums, which run where they are.
    shared = (ESTIMATORS["gaussian"]().fit(X, y), np.linspace(0.0, 1.0, 11))
    kept = engine.keep_parts(parts, _part_sums, shared)
    once = engine.sum_over_parts(kept, _value)
    np.testing.assert_array_equal(once.confusion, engine.sum_over_parts(kept, _value).confusion)
    np.testing.assert_array_equal(
        once.confusion, engine.sum_over_parts(parts, _part_sums, shared).confusion
    )
    bad = Path(parts[4])
    bad.write_text(bad.read_text() + "0,1,2,three\n")
    for run in (
        lambda: engine.gather_parts(parts, _rows_of),
        lambda: engine.sum_over_parts(engine.keep_parts(parts, _part_sums, shared), _value),
    ):
        with pytest.raises(BadRowError, match=r"part-04\.csv: row \d+: "):
            run()


def test_error_in_a_sum_surfaces_at_the_client(engine, tmp_path):
    X, y = make_data(ESTIMATORS["gaussian"](), N_ROWS, seed=7)
    parts = write_parts(tmp_path, X, y)
    Path(parts[5]).write_text(Path(parts[5]).read_text() + "\n0,x,1,2\n")
    model = ESTIMATORS["gaussian"]().fit(X, y)
    with pytest.raises(BadRowError, match=r"part-05\.csv: row 84: "):
        engine.sum_over_parts(parts, _part_sums, (model, np.linspace(0, 1, 11)))


def _die_once(path):
    # The first attempt at part 2 takes its worker process down mid-read.
    marker = Path(path).with_suffix(".attempted")
    if path.endswith("part-02.csv") and not marker.exists():
        marker.write_text("")
        os._exit(1)
    return read_part(path)


def test_a_lost_worker_is_retried(tmp_path):
    import cloudpickle

    # Worker processes cannot import the tests folder: send these functions by value.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    cloudpickle.register_pickle_by_value(engine_parts)
    try:
        X, y = make_data(ESTIMATORS["gaussian"](), N_ROWS, seed=8)
        parts = write_parts(tmp_path, X, y)
        with DaskEngine(n_workers=2, memory_limit="512MiB", processes=True) as eng:
            stats = eng.fit_statistics(parts, _die_once, ESTIMATORS["gaussian"]())
        assert (tmp_path / "part-02.attempted").exists()
        one = ESTIMATORS["gaussian"]().fit(X, y)
        model = stats.to_estimator(ESTIMATORS["gaussian"]())
        np.testing.assert_allclose(
            _posteriors(model, "gaussian"), _posteriors(one, "gaussian"), atol=1e-12, rtol=0
        )
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
        cloudpickle.unregister_pickle_by_value(engine_parts)


class _WhereMerged:
    """Sums that record where each merge ran (``get_worker`` fails at the client)."""

    def __init__(self, parts, places=()):
        self.parts, self.places = list(parts), list(places)

    def merge(self, other):
        from distributed import get_worker

        return _WhereMerged(
            self.parts + other.parts, self.places + other.places + [get_worker().address]
        )


def _where(index, part, shared):
    return _WhereMerged([index])


def test_merges_run_on_the_workers_in_part_order(engine):
    total = engine.sum_over_parts(list("abcdef"), _where)
    assert total.parts == [0, 1, 2, 3, 4, 5]
    assert len(total.places) == 5  # six parts, five merges, none at the client
    assert set(total.places) <= set(engine.client.scheduler_info()["workers"])


def test_unreachable_scheduler_is_a_one_line_error():
    from nbcli.errors import NbcliError

    with pytest.raises(NbcliError) as info:
        with DaskEngine("tcp://127.0.0.1:9", connect_timeout="1s"):
            pass
    message = str(info.value)
    assert message.startswith(
        "cannot reach the Dask scheduler at tcp://127.0.0.1:9: connection refused"
    )
    assert "\n" not in message and "dask scheduler" in message


def test_tls_security_from_files():
    from nbcli.engines.dask_engine import tls_security

    sec = tls_security("ca.pem", "client.pem", "client.key")
    assert sec.require_encryption is True
    assert (sec.tls_ca_file, sec.tls_client_cert, sec.tls_client_key) == (
        "ca.pem",
        "client.pem",
        "client.key",
    )


def test_local_cluster_sizes_are_checked():
    from nbcli.engines.dask_engine import check_local_cluster
    from nbcli.errors import NbcliError

    assert check_local_cluster(3, "2GiB") == (3, "2GiB")
    assert check_local_cluster(None, "auto")[0] >= 1
    with pytest.raises(NbcliError, match="^--workers must be at least 1, got 0$"):
        check_local_cluster(0, "auto")
    with pytest.raises(NbcliError, match="^--worker-memory 'lots' is not a size; give one"):
        DaskEngine(n_workers=1, memory_limit="lots").start()


def test_a_batch_on_dask_replaces_no_output_until_every_file_is_done(engine, tmp_path, monkeypatch):
    # The workers stage their outputs and the client puts them in place
    # together: interrupted before that, the folder is as it was.
    from nbcli.io.request import DataRequest
    from nbcli.workflows import predict as predict_module
    from nbcli.workflows.predict import BatchOutput, predict_batch
    from tests.conftest import fitted_model_file

    model = tmp_path / "m.npz"
    fitted_model_file(model)
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    inputs = []
    for i in range(4):
        path = tmp_path / "in" / f"p{i}.csv"
        path.write_text("a,b\n" + "".join(f"{i + j},{j}\n" for j in range(5)))
        inputs.append(str(path))
        (tmp_path / "out" / f"p{i}.pred.csv").write_text("prediction\nearlier\n")
    before = {p.name: p.read_text() for p in (tmp_path / "out").iterdir()}

    def interrupted(staged):
        assert len(staged) == 4  # every worker's output, staged, none in place
        raise KeyboardInterrupt

    monkeypatch.setattr(predict_module, "commit_staged", interrupted)
    with pytest.raises(KeyboardInterrupt):
        predict_batch(
            str(model), DataRequest.of(inputs), BatchOutput(tmp_path / "out", force=True),
            engine=engine,
        )  # fmt: skip
    assert {p.name: p.read_text() for p in (tmp_path / "out").iterdir()} == before
    monkeypatch.undo()
    report = predict_batch(
        str(model), DataRequest.of(inputs), BatchOutput(tmp_path / "out", force=True),
        engine=engine,
    )  # fmt: skip
    assert report.n_failed == 0
    for i in range(4):
        written = (tmp_path / "out" / f"p{i}.pred.csv").read_text().splitlines()
        assert written[0] == "prediction" and len(written) == 6 and "earlier" not in written
    assert not [p.name for p in (tmp_path / "out").iterdir() if p.name.endswith(".tmp")]


def _killed(index, part, shared):
    from types import SimpleNamespace

    from distributed import KilledWorker

    raise KilledWorker("nbcli-part-x", SimpleNamespace(address="tcp://127.0.0.1:1"), 3)


def test_a_worker_lost_by_the_cluster_is_one_line_naming_its_memory(engine, tmp_path):
    # A worker killed over its memory limit surfaces as KilledWorker (or as
    # its tasks cancelled): a one-line error, not nbcli's internal error.
    from nbcli.engines.dask_engine import _raise_cluster_failure
    from nbcli.errors import NbcliError

    with pytest.raises(NbcliError, match=r"^the Dask cluster lost the work \(KilledWorker: "):
        engine.gather_parts(["a", "b"], _killed, None)
    from distributed.client import FutureCancelledError

    with pytest.raises(NbcliError, match="--worker-memory"):
        _raise_cluster_failure(FutureCancelledError("k", reason="already forgotten"))
    # Anything else is the caller's to raise as it is.
    assert _raise_cluster_failure(KeyboardInterrupt()) is None
    assert _raise_cluster_failure(ValueError("a part's own error")) is None


def test_an_interrupted_engine_silences_dasks_child_loggers_too():
    # distributed.client's records reach the "distributed" logger's handlers
    # whether or not that parent is disabled: each logger under it must be.
    import logging

    client_log = logging.getLogger("distributed.client")
    comm_log = logging.getLogger("distributed.comm.tcp")
    before = (client_log.disabled, comm_log.disabled)
    try:
        DaskEngine("tcp://127.0.0.1:9")._quiet()
        assert client_log.disabled and comm_log.disabled
        assert logging.getLogger("distributed").disabled
    finally:
        client_log.disabled, comm_log.disabled = before
        logging.getLogger("distributed").disabled = False
