"""The training-data fingerprint depends on the values, not on how they were read."""

import numpy as np

from nbcli.io.fingerprint import DataFingerprint, fingerprint


def test_same_rows_in_any_chunks_and_memory_order_give_one_fingerprint():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 5))
    y = np.array(["a", "b", "c"])[np.arange(100) % 3]
    whole = fingerprint(X, y)
    pieces = DataFingerprint()
    for rows in np.array_split(np.arange(100), [7, 8, 60]):
        pieces.update(np.asfortranarray(X[rows]), y[rows])
    assert pieces.hexdigest() == whole
    assert pieces.n_samples == 100


def test_a_changed_value_label_or_order_changes_it():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 4))
    y = np.arange(50) % 2
    base = fingerprint(X, y)
    changed = X.copy()
    changed[10, 2] = np.nextafter(changed[10, 2], np.inf)  # one ulp
    assert fingerprint(changed, y) != base
    assert fingerprint(X, 1 - y) != base
    assert fingerprint(X[::-1], y[::-1]) != base
    # Integer labels and their text are the same labels.
    assert fingerprint(X, y.astype(str)) == base


# ---------------------------------------------------------------------------
# The chunk-independent row hash (rowhash64-v1)

import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from nbcli.io.fingerprint import (  # noqa: E402
    ROWHASH_ALGORITHM,
    RowHashFingerprint,
    TrainingFingerprint,
    fingerprint_matches,
    row_fingerprint,
)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    n=st.integers(1, 60),
    d=st.integers(1, 6),
    cuts=st.lists(st.integers(0, 60), max_size=5),
    fortran=st.booleans(),
)
def test_row_hash_is_the_same_for_any_chunking_and_memory_order(n, d, cuts, fortran):
    rng = np.random.default_rng(n * 7 + d)
    X = rng.normal(size=(n, d))
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, n)]
    whole = row_fingerprint(X, y)
    bounds = sorted({min(c, n) for c in cuts})
    pieces = RowHashFingerprint()
    for rows in np.split(np.arange(n), bounds):
        block = X[rows]
        pieces.update(np.asfortranarray(block) if fortran else block, y[rows])
    assert pieces.value == whole and pieces.n_samples == n
    # Partitions hashed apart and combined give the same value.
    parts = []
    for rows in np.split(np.arange(n), bounds):
        part = RowHashFingerprint()
        part.update(X[rows], y[rows])
        parts.append(part)
    combined = parts[0]
    for part in parts[1:]:
        combined = combined.combine(part)
    assert combined.value == whole


def test_row_hash_changes_with_a_value_a_label_the_order_or_a_column_swap():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = np.arange(40) % 2
    base = row_fingerprint(X, y)
    assert len(base) == 16 and int(base, 16) >= 0
    changed = X.copy()
    changed[17, 1] = np.nextafter(changed[17, 1], np.inf)
    assert row_fingerprint(changed, y) != base
    assert row_fingerprint(X, 1 - y) != base
    assert row_fingerprint(X[::-1], y[::-1]) != base
    swapped = X[[1, 0, *range(2, 40)]]
    assert row_fingerprint(swapped, y[[1, 0, *range(2, 40)]]) != base
    assert row_fingerprint(X[:, [1, 0, 2]], y) != base
    assert row_fingerprint(X[:39], y[:39]) != base
    assert row_fingerprint(X, y.astype(str)) == base
    assert row_fingerprint(X, None) != base


def test_row_hash_of_a_csv_and_an_npz_of_the_same_rows_agree(tmp_path):
    from nbcli.io.data import iter_dataset, read_dataset

    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 2))
    y = np.arange(30) % 3
    csv = tmp_path / "d.csv"
    csv.write_text(
        "a,b,label\n" + "".join(f"{a!r},{b!r},{c}\n" for (a, b), c in zip(X.tolist(), y))
    )
    npz = tmp_path / "d.npz"
    np.savez(npz, X=X, y=y)
    chunked = RowHashFingerprint()
    for chunk in iter_dataset(csv, chunk_size=7):
        chunked.update(chunk.X, chunk.y)
    whole = read_dataset(npz)
    assert chunked.value == row_fingerprint(whole.X, whole.y) == row_fingerprint(X, y)


def test_stored_fingerprints_are_recognised_by_their_algorithm():
    X = np.arange(12.0).reshape(6, 2)
    y = np.arange(6) % 2
    fp = TrainingFingerprint()
    fp.update(X, y)
    meta = fp.metadata()
    assert meta["fingerprint"] == {"algorithm": ROWHASH_ALGORITHM, "value": row_fingerprint(X, y)}
    assert meta["data_sha256"] == fingerprint(X, y)
    assert fingerprint_matches(meta, fp)
    # A file written before format version 2 has only data_sha256.
    assert fingerprint_matches({"data_sha256": fingerprint(X, y)}, fp)
    assert not fingerprint_matches({"data_sha256": "0" * 64}, fp)
    assert not fingerprint_matches(
        {"fingerprint": {"algorithm": ROWHASH_ALGORITHM, "value": "0" * 16}}, fp
    )
    assert not fingerprint_matches({"fingerprint": {"algorithm": "unknown", "value": "x"}}, fp)
    fast = TrainingFingerprint(legacy=False)
    fast.update(X, y)
    assert "data_sha256" not in fast.metadata()
    assert fingerprint_matches(meta, fast)
    with pytest.raises(KeyError):
        fast.metadata()["data_sha256"]
