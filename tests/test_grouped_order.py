"""nbcli.distinct.grouped_order: the rows of each group together, in their order."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.distinct import grouped_order


@settings(max_examples=60, deadline=None)
@given(
    n_groups=st.sampled_from([1, 2, 7, 255, 256, 300, 70_000]),
    n=st.integers(0, 400),
    dtype=st.sampled_from([np.intp, np.int32, np.uint8]),
    seed=st.integers(0, 2**32 - 1),
)
def test_groups_in_row_order_with_their_bounds(n_groups, n, dtype, seed):
    top = min(n_groups, np.iinfo(dtype).max + 1)
    codes = np.random.default_rng(seed).integers(0, top, n).astype(dtype)
    order, bounds = grouped_order(codes, n_groups)
    assert bounds.shape == (n_groups + 1,) and bounds[0] == 0 and bounds[-1] == n
    np.testing.assert_array_equal(np.diff(bounds), np.bincount(codes, minlength=n_groups))
    for g in np.unique(codes).tolist():
        np.testing.assert_array_equal(order[bounds[g] : bounds[g + 1]], np.flatnonzero(codes == g))
