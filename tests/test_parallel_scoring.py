"""Row blocks scored in parallel threads give the sequential results bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import nbcli.models as nb
from nbcli.models import _blocks as _base
from tests.declared import takes_counts

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical

MODELS = {
    "gaussian": nb.GaussianNB,
    "multinomial": nb.MultinomialNB,
    "bernoulli": lambda: nb.BernoulliNB(binarize=0.0),
    "lda": nb.LinearDiscriminantAnalysis,
    "qda": lambda: nb.QuadraticDiscriminantAnalysis(reg_param=0.01),
}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n, d = 30_000, 12
    y = rng.integers(0, 4, n)
    X = rng.normal(size=(n, d)) + y[:, None] * 0.3
    return X, y


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    # Small blocks, so that a small array has many and takes the threaded path.
    monkeypatch.setattr(_base, "_BLOCK_ELEMENTS", 1 << 12)


def _scores(model, X, threads, monkeypatch):
    monkeypatch.setenv("NBCLI_THREADS", str(threads))
    return (
        model.predict_proba(X),
        model.predict_log_proba(X),
        model.joint_log_likelihood(X),
        model.predict(X),
    )


@pytest.mark.parametrize("name", sorted(MODELS))
def test_threaded_scoring_is_bit_identical_to_sequential(name, data, monkeypatch):
    X, y = data
    model = MODELS[name]()
    if takes_counts(type(model)):
        X = np.abs(X)
    model.fit(X, y)
    assert X.shape[0] // model._block_step() >= _base._PARALLEL_BLOCKS
    seq = _scores(model, X, 1, monkeypatch)
    par = _scores(model, X, 3, monkeypatch)
    for a, b in zip(seq, par):
        assert np.array_equal(a, b)
    np.testing.assert_allclose(seq[0].sum(axis=1), 1.0, atol=1e-12)


def test_threaded_scoring_reports_the_first_bad_row(data, monkeypatch):
    X, y = data
    model = nb.GaussianNB().fit(X, y)
    bad = X.copy()
    bad[25_000, 3] = np.nan
    bad[20_001, 0] = np.inf
    for threads in (1, 3):
        monkeypatch.setenv("NBCLI_THREADS", str(threads))
        with pytest.raises(ValueError) as err:
            model.predict_proba(bad)
        assert "20001" in str(err.value) or "20002" in str(err.value)


def test_scoring_threads_follow_the_environment(monkeypatch):
    monkeypatch.setenv("NBCLI_THREADS", "3")
    assert _base.scoring_threads() == 3
    monkeypatch.setenv("NBCLI_THREADS", "x")
    assert 1 <= _base.scoring_threads() <= 8


def test_streamed_fit_holds_blas_to_one_thread_and_gives_it_back(monkeypatch):
    # A chunk's statistics are small BLAS products that lose to the thread
    # reading the next chunk when BLAS runs on several threads.
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    seen = []
    original = nb.LinearDiscriminantAnalysis.accumulate

    def spy(self, *args, **kwargs):
        seen.append(blas_threads())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(nb.LinearDiscriminantAnalysis, "accumulate", spy)
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(200, 3)), np.arange(200) % 2
    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        nb.LinearDiscriminantAnalysis().fit_chunks([(X[:100], y[:100]), (X[100:], y[100:])])
        after = blas_threads()
    if not before:
        pytest.skip("no BLAS library that threadpoolctl controls")
    assert seen == [[1] * len(before)] * 2
    assert after == before


def test_the_scoring_pool_is_kept_per_process_and_size(monkeypatch):
    # Kept between calls (a search scores the same rows under hundreds of
    # models); made again for another size, and in a forked child, where
    # the parent's threads do not run and tasks sent to them would wait forever.
    from nbcli.models import _parallel

    pool = _parallel.scoring_pool(2)
    assert _parallel.scoring_pool(2) is pool
    assert pool.submit(sum, [1, 2]).result(timeout=10) == 3
    other = _parallel.scoring_pool(3)
    assert other is not pool
    real = _parallel.os.getpid()
    monkeypatch.setattr(_parallel.os, "getpid", lambda: real + 1)
    child = _parallel.scoring_pool(3)
    assert child is not other
    assert child.submit(sum, [3, 4]).result(timeout=10) == 7


def test_a_failed_run_leaves_no_run_writing_after_the_call(data, monkeypatch):
    # The first bad block's error is raised once every run already started
    # has ended: none writes into the caller's arrays afterwards.
    import time

    X, y = data
    model = nb.GaussianNB().fit(X, y)
    monkeypatch.setenv("NBCLI_THREADS", "2")
    bad = X.copy()
    bad[10, 3] = np.nan
    started: list[int] = []
    ended: list[int] = []
    original = type(model)._score_rows

    def slow(self, X, lo, hi):
        started.append(lo)
        if lo:
            time.sleep(0.01)
        try:
            return original(self, X, lo, hi)
        finally:
            ended.append(lo)

    monkeypatch.setattr(type(model), "_score_rows", slow)
    with pytest.raises(ValueError, match="row 10, column 3"):
        model.predict_log_proba(bad)
    settled = (len(started), len(ended))
    time.sleep(0.05)
    # Runs ran on the threads (more than the failing one), and all had ended.
    assert settled[0] >= 2 and settled[0] == settled[1]
    assert (len(started), len(ended)) == settled
