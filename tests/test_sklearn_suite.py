"""scikit-learn's own naive Bayes and discriminant analysis test files pass on nbcli.

The installed scikit-learn's files are copied with only the estimator imports
changed (``tests/sklearn_suite/run.py``) and run by pytest in a child
process, once for this module (about 20 s). The figure is plain: items that
pass over items that ran, every deliberate difference and every skip on
nbcli's side counted as a failure; only scikit-learn's own environment skips
(array API, float32 opt-in) are not run, and they are named. Every failing
item must be listed in ``tests/sklearn_suite/known.py`` with its reason and
every listed item must still fail.
"""

import re
from pathlib import Path

import pytest

pytest.importorskip("sklearn")

from tests.sklearn_suite import known  # noqa: E402
from tests.sklearn_suite.run import NOT_RUN, Outcome, run  # noqa: E402

#: The least pass rate asserted, as the guide states it.
MIN_RATE = 0.92

#: The guide page that states the figure and lists the failing items.
COMPARISON = Path(__file__).resolve().parents[1] / "docs" / "guide" / "comparison.md"


@pytest.fixture(scope="module")
def outcome(tmp_path_factory) -> Outcome:
    return run(tmp_path_factory.mktemp("sklearn_suite"))


def test_the_copies_are_collected(outcome):
    # scikit-learn 1.9 has 208 items; a copy that fails to import has one.
    assert outcome.collected > 100
    assert outcome.excluded == 1  # test_covariance, of the private _cov
    counted = outcome.passed + len(outcome.failures) + len(outcome.not_run) + outcome.excluded
    assert counted == outcome.collected


def test_every_failure_is_known(outcome):
    unknown = {i: m for i, m in outcome.failures.items() if known.reason(i) is None}
    assert not unknown, f"new failures (fix, or list in tests/sklearn_suite/known.py): {unknown}"


def test_every_listed_failure_still_fails(outcome):
    stale = [
        key for key in known.FAILING if not any(known.covers(key, i) for i in outcome.failures)
    ]
    assert not stale, f"these pass now: remove them from tests/sklearn_suite/known.py: {stale}"


def test_items_not_run_are_only_scikit_learns_own_skips(outcome):
    # In scikit-learn's default environment its array-API items do not run
    # (no backend): named as not run, never counted as passes.
    reasons = {why for _, why in NOT_RUN}
    assert set(outcome.not_run.values()) <= reasons
    array_api = [i for i, why in outcome.not_run.items() if why == NOT_RUN[0][1]]
    assert all("array_api" in i for i in array_api)


def test_plain_pass_rate(outcome):
    assert outcome.rate >= MIN_RATE, (outcome.summary(), sorted(outcome.failures))


def test_the_guide_states_the_computed_figure(outcome):
    import sklearn

    text = COMPARISON.read_text(encoding="utf-8")
    assert f"asserts at least {MIN_RATE:.0%}" in text
    stated = re.search(
        r"With scikit-learn (\S+), (\d+ of \d+ items that ran pass \([\d.]+%\))", text
    )
    assert stated, (
        "docs/guide/comparison.md must state the figure: 'With scikit-learn X, N of M items that ran pass'"
    )
    if stated.group(1) == sklearn.__version__:
        assert stated.group(2) == outcome.summary()


def test_the_guide_lists_every_failing_item():
    text = COMPARISON.read_text(encoding="utf-8")
    missing = [key for key in known.FAILING if f"| `{key}` |" not in text]
    assert not missing, missing
