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
