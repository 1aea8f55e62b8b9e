#!/usr/bin/env python
"""Run scikit-learn's own naive Bayes and discriminant analysis tests on nbcli.

The installed scikit-learn's ``sklearn/tests/test_naive_bayes.py`` and
``sklearn/tests/test_discriminant_analysis.py`` are copied to a temporary
directory with only their imports of the estimators changed to
``nbcli.models``; everything else (data, helpers such as ``load_iris``,
``_cov``, ``cross_val_score``) still comes from scikit-learn. The copies
are run by pytest in a child process, in scikit-learn's default test
environment (``SKLEARN_RUN_FLOAT32_TESTS`` and ``SCIPY_ARRAY_API`` unset, its
default seed), and the outcomes counted::

    python tests/sklearn_suite/run.py            # the figure, every failure, every item not run
    python tests/sklearn_suite/run.py --keep DIR # leave the copies in DIR

The figure is plain: items that pass over items that ran. An item ran
unless scikit-learn's own environment skipped it (:data:`NOT_RUN`: its
array-API items, which need a backend that is not installed and which nbcli
could not pass anyway, having no array-API support; its float32 items, run
only when ``SKLEARN_RUN_FLOAT32_TESTS=1``). Any other skip counts as a
failure, and so does every item that fails on purpose
(``tests/sklearn_suite/known.py``). Only ``test_covariance``, which tests
scikit-learn's private ``_cov`` and no estimator, is left out
(:data:`NOT_APPLICABLE`). ``tests/test_sklearn_suite.py`` asserts the rate
and that docs/guide/comparison.md states it. No network is needed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this checkout's nbcli, also when run as a script

#: Tests of scikit-learn internals rather than of an estimator: not applicable.
NOT_APPLICABLE = ("test_discriminant_analysis.py::test_covariance",)

_NB_IMPORT = re.compile(r"from sklearn\.naive_bayes import \((.*?)\)", re.S)
_DA_IMPORT = re.compile(r"from sklearn\.discriminant_analysis import \((.*?)\)", re.S)


def _names(block: str) -> list[str]:
    return [n.strip() for n in block.split(",") if n.strip()]


#: Where an estimator lives until ``nbcli.models`` exports it.
_MODULES = {
    "ComplementNB": "nbcli.models.complement",
    "CategoricalNB": "nbcli.models.categorical",
}


def _nbcli_import(names: list[str]) -> str:
    """Import lines for ``names``: from ``nbcli.models``, or the module that defines one."""
    import nbcli.models

    exported = [n for n in names if hasattr(nbcli.models, n)]
    lines = [f"from nbcli.models import ({', '.join(exported)})"] if exported else []
    lines += [f"from {_MODULES[n]} import {n}" for n in names if n not in exported]
    return "\n".join(lines)


def swap_imports(source: str) -> str:
    """``source`` with the estimator imports taken from ``nbcli.models``.

    Private helpers (``_cov``) stay imported from scikit-learn.

    Raises
    ------
    ValueError
        When the file has no import block to swap (scikit-learn's layout changed).
    """

    def nb(match):
        return _nbcli_import(_names(match.group(1)))

    def da(match):
        names = _names(match.group(1))
        public = [n for n in names if not n.startswith("_")]
        private = [n for n in names if n.startswith("_")]
        text = _nbcli_import(public)
        if private:
            text += f"\nfrom sklearn.discriminant_analysis import ({', '.join(private)})"
        return text

    out, n1 = _NB_IMPORT.subn(nb, source)
    out, n2 = _DA_IMPORT.subn(da, out)
    if n1 + n2 != 1:
        raise ValueError("expected exactly one estimator import block to swap")
    return out


def copy_tests(dest: Path) -> list[Path]:
    """Copy the two test files from the installed scikit-learn into ``dest``."""
    import sklearn

    tests = Path(sklearn.__file__).parent / "tests"
    written = []
    for name in ("test_naive_bayes.py", "test_discriminant_analysis.py"):
        target = dest / name
        target.write_text(swap_imports((tests / name).read_text(encoding="utf-8")), "utf-8")
        written.append(target)
    return written


#: Skips of scikit-learn's own default environment: (pattern of the skip
#: message, what it means). These items did not run; every other skip counts
#: as a failure.
NOT_RUN = (
    (
        re.compile(r"not checking array_api input"),
        "array API: no array-API backend is installed, and nbcli has no array-API support",
    ),
    (
        re.compile(r"SKLEARN_RUN_FLOAT32_TESTS=1"),
        "float32 items: scikit-learn runs them only with SKLEARN_RUN_FLOAT32_TESTS=1",
    ),
)


@dataclass
class Outcome:
    """What one run gave: the plain figure and every item that did not pass.

    Attributes
    ----------
    collected : int
        Every item pytest collected.
    passed : int
        Items that ran and passed.
    excluded : int
        Items of :data:`NOT_APPLICABLE` (counted neither way).
    failures : dict
        Item id -> first line of its failure, error or (a skip nbcli's side
        caused) ``skipped: reason``. Deliberate differences are failures too.
    not_run : dict
        Item id -> why scikit-learn's default environment skipped it
        (:data:`NOT_RUN`).
    """

    collected: int = 0
    passed: int = 0
    excluded: int = 0
    failures: dict[str, str] = field(default_factory=dict)
    not_run: dict[str, str] = field(default_factory=dict)

    @property
    def ran(self) -> int:
        """Items that ran: the denominator of :attr:`rate`."""
        return self.passed + len(self.failures)

    @property
    def rate(self) -> float:
        """Items that pass over items that ran (0 when none ran)."""
        return self.passed / self.ran if self.ran else 0.0

    def summary(self) -> str:
        """The figure as the guide states it: ``135 of 146 items that ran pass (92.5%)``."""
        return f"{self.passed} of {self.ran} items that ran pass ({100 * self.rate:.1f}%)"


def _first_line(text: str | None) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


def _not_run_reason(message: str) -> str | None:
    for pattern, why in NOT_RUN:
        if pattern.search(message):
            return why
    return None


def run(dest: Path, timeout: float = 600) -> Outcome:
    """Copy the tests into ``dest``, run them with pytest, count the outcomes."""
    copy_tests(dest)
    report = dest / "report.xml"
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    # scikit-learn's default test environment: its default seed (42, so item
    # ids are the same every run), no float32 items, no SciPy array API.
    for name in (
        "SKLEARN_TESTS_GLOBAL_RANDOM_SEED",
        "SKLEARN_RUN_FLOAT32_TESTS",
        "SCIPY_ARRAY_API",
    ):
        env.pop(name, None)
    # One BLAS thread: these are small problems and the machine is shared.
    env.setdefault("OMP_NUM_THREADS", "1")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            # scikit-learn's own fixtures (global_random_seed, ...), as its test run has them.
            "-p",
            "sklearn.conftest",
            "--rootdir",
            str(dest),
            "-o",
            "addopts=",
            f"--junitxml={report}",
            str(dest),
        ],
        cwd=dest,
        env=env,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    outcome = Outcome()
    for case in ET.parse(report).getroot().iter("testcase"):
        module = (case.get("classname") or "").rsplit(".", 1)[-1]
        item = f"{module}.py::{case.get('name')}"
        outcome.collected += 1
        if item.split("[")[0] in NOT_APPLICABLE:
            outcome.excluded += 1
            continue
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        skipped = case.find("skipped")
        if skipped is not None:
            message = skipped.get("message") or ""
            why = _not_run_reason(message)
            if why is None:
                outcome.failures[item] = f"skipped: {_first_line(message)}"
            else:
                outcome.not_run[item] = why
        elif problem is not None:
            outcome.failures[item] = _first_line(problem.get("message"))
        else:
            outcome.passed += 1
    return outcome


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="write the copies here and keep them")
    args = parser.parse_args(argv)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        outcome = run(args.keep)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            outcome = run(Path(tmp))
    for item, message in sorted(outcome.failures.items()):
        print(f"FAILED {item}: {message}")
    reasons: dict[str, int] = {}
    for why in outcome.not_run.values():
        reasons[why] = reasons.get(why, 0) + 1
    for why, n in reasons.items():
        tests = sorted({i.split("[")[0] for i, w in outcome.not_run.items() if w == why})
        print(f"NOT RUN {n} ({why}): {', '.join(tests)}")
    print(
        f"{outcome.summary()}; failed {len(outcome.failures)}, not run {len(outcome.not_run)}, "
        f"not applicable {outcome.excluded}, collected {outcome.collected}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
