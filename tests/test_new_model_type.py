"""A model type added as CONTRIBUTING.md's "Add a model type" says is picked up by
the registry, the help, the configs' checks and the model-driven tests, with no
test naming it.

The checklist is followed in a copy of the project: a module with the class
(diagonal linear discriminant analysis, written only against the public
contract of :class:`nbcli.models.BayesClassifier`), one export line and its
config file; the documentation's reference of models is generated from the
class. The model-driven test files then run in that copy, with the check that
the reference lists the new type and its hyperparameters.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAME = "diagonal_lda"

MODULE = textwrap.dedent(
    '''
    """Diagonal linear discriminant analysis: Gaussian classes sharing one diagonal covariance."""

    from __future__ import annotations

    import numpy as np

    from nbcli.models import BayesClassifier, ClassMoments, UndeterminedError
    from nbcli.models.hyperparameters import MISSING_ROWS_ONLY, missing, priors, var_smoothing


    class DiagonalLDA(BayesClassifier):
        """Classes normal with their own means and one diagonal covariance.

        ``log p(x, k) = log pi_k - 1/2 sum_j log(2 pi s_j) - 1/2 sum_j (x_j - m_kj)^2 / s_j``
        with ``s_j`` the pooled within-class variance of feature ``j`` plus
        ``var_smoothing`` times the largest feature variance (Dudoit, Fridlyand
        and Speed, JASA 97, 2002, "DLDA").
        """

        name = "diagonal_lda"
        hyperparameters = (priors("priors"), var_smoothing(), missing(MISSING_ROWS_ONLY))
        statistics = (ClassMoments,)
        min_samples_per_class = 2

        def __init__(self, *, priors=None, var_smoothing=1e-9, missing="error"):
            self.priors = priors
            self.var_smoothing = var_smoothing
            self.missing = missing

        def accumulate(self, X, y_idx, sample_weight, n_classes):
            return ClassMoments.from_data(X, y_idx, sample_weight, n_classes)

        def finalize(self):
            st = self.stats_
            count = st.class_counts
            total, _, m2_all = st.pooled()
            if not np.any(m2_all > 0):
                raise UndeterminedError(f"every feature is constant (n_samples = {total:g})")
            self.var_ = st.m2.sum(axis=0) / total + self.var_smoothing * float(m2_all.max() / total)
            if not np.all(self.var_ > 0):
                raise UndeterminedError("a feature is constant within every class; set var_smoothing > 0")
            self.theta_ = st.mean.copy()
            if self.priors is None:
                self.class_prior_ = count / count.sum()
            else:
                self.class_prior_ = np.asarray(self.priors, dtype=float)
            with np.errstate(divide="ignore"):
                self._constant = np.log(self.class_prior_) - 0.5 * np.sum(np.log(2 * np.pi * self.var_))

        def joint_log_likelihood_block(self, X):
            z = (X[None, :, :] - self.theta_[:, None, :]) ** 2 / self.var_
            return self._constant[:, None] - 0.5 * z.sum(axis=2)
    '''
)

CONFIG = textwrap.dedent(
    """\
    # Diagonal linear discriminant analysis: Gaussian classes that share one
    # diagonal covariance. Every value below is the default; edit the ones to change.

    model = "diagonal_lda"

    [hyperparameters]
    # Prior probabilities of the classes, in sorted label order; non-negative and
    # summing to 1, one per class. Default: the class frequencies (leave the key out).
    # priors = [0.5, 0.5]

    # Fraction of the largest feature variance added to every pooled variance.
    # Non-negative. Default: 1e-9.
    var_smoothing = 1e-9

    # Missing cells (NaN): "error" refuses them; "drop" skips the row at fit
    # and leaves its prediction empty. Default: "drop" on the command line
    # ("error" in the Python API).
    missing = "drop"

    # Optional: defaults for the data options (--target, --features, --drop);
    # options given on the command line win.
    # [data]
    # Name of the label column. Default: a column named label, target, class or y
    # (if exactly one exists), else the last column.
    # target = "label"
    # Feature columns to use. Default: every column except the target and the
    # dropped ones.
    # features = ["sepal_length_cm", "sepal_width_cm", "petal_length_cm", "petal_width_cm"]
    # Columns to leave out, such as identifiers. Default: none.
    # drop = ["id"]
    """
)

#: The test files that are driven by the registry and the classes' declarations.
MODEL_DRIVEN = [
    "tests/test_properties.py",
    "tests/test_modelfile.py",
    "tests/test_declarations.py",
    "tests/test_estimator_checks.py",
    "tests/test_sample_data.py",
]


def _copy_with_new_model(dest: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in ("nbcli", "tests", "configs", "sample_data", "docs"):
        shutil.copytree(ROOT / part, dest / part, ignore=ignore)
    for part in ("README.md", "pyproject.toml", "CONTRIBUTING.md"):
        shutil.copy2(ROOT / part, dest / part)
    # 1. The class, in a module of its own, and one export line.
    (dest / "nbcli" / "models" / "diagonal.py").write_text(MODULE, encoding="utf-8")
    init = dest / "nbcli" / "models" / "__init__.py"
    text = init.read_text(encoding="utf-8")
    anchor = "from nbcli.models.registry import model_classes"
    assert anchor in text
    init.write_text(
        text.replace(anchor, f"from nbcli.models.diagonal import DiagonalLDA\n{anchor}"),
        encoding="utf-8",
    )
    # 2. Its config file.
    (dest / "configs" / f"{NAME}.toml").write_text(CONFIG, encoding="utf-8")
    return dest


def _run(dest: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(dest), COLUMNS="200", NO_COLOR="1")
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, *args], cwd=dest, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    # 4. Nothing to write in the docs: the reference is generated from the class.
    return _copy_with_new_model(tmp_path_factory.mktemp("project"))


def test_the_copy_imports_its_own_package(project):
    where = _run(
        project, "-c", "import nbcli, nbcli.models as m; print(nbcli.__file__, list(m.MODELS))"
    )
    assert where.returncode == 0, where.stderr
    assert where.stdout.startswith(str(project / "nbcli"))
    assert NAME in where.stdout


def test_the_help_lists_the_new_model_type(project):
    for args in (["--help"], ["fit", "--help"], ["cv", "--help"]):
        run = _run(project, "-m", "nbcli", *args)
        assert run.returncode == 0, run.stderr
        assert NAME in run.stdout, args


def test_the_new_model_type_fits_from_the_command_line(project, tmp_path):
    run = _run(
        project,
        "-m",
        "nbcli",
        "fit",
        "--model",
        NAME,
        "--data",
        "sample_data/iris_train.csv",
        "--output",
        str(tmp_path / "m.npz"),
    )
    assert run.returncode == 0, run.stderr
    run = _run(
        project,
        "-m",
        "nbcli",
        "evaluate",
        "--model",
        str(tmp_path / "m.npz"),
        "--data",
        "sample_data/iris_test.csv",
        "--bootstrap",
        "0",
    )
    assert run.returncode == 0, run.stderr
    accuracy = float(re.search(r"accuracy\s+([0-9.]+)", run.stdout + run.stderr).group(1))
    assert accuracy > 0.8  # iris is nearly separable on shared diagonal variances


def test_the_model_driven_tests_pick_it_up_and_pass(project):
    # No test file names the new model: what runs for it comes from the registry.
    for path in (project / "tests").glob("*.py"):
        if path.name == Path(__file__).name:
            continue
        assert NAME not in path.read_text(encoding="utf-8"), path.name
    # Its own items in every model-driven file, then the whole of the files
    # that check the registry, the help, the docs' reference and the configs.
    own = _run(
        project,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-k",
        "diagonal_lda or DiagonalLDA",
        *MODEL_DRIVEN,
    )
    assert own.returncode == 0, own.stdout[-3000:] + own.stderr[-2000:]
    passed = re.search(r"(\d+) passed", own.stdout.strip().splitlines()[-1])
    assert passed is not None and int(passed.group(1)) >= 30, own.stdout[-500:]
    assert re.search(r"\b\d+ failed", own.stdout.strip().splitlines()[-1]) is None
    whole = _run(
        project,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/test_declarations.py",
        "tests/test_sample_data.py",
        "tests/test_docs.py::test_every_model_and_hyperparameter_has_a_reference_entry",
    )
    assert whole.returncode == 0, whole.stdout[-3000:] + whole.stderr[-2000:]
