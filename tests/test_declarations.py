"""What each model class declares, the registry built from it, and what is derived from it:
hyperparameter validation, fit's flags, model-file shapes (the docs' table: tests/test_docs.py)."""

from __future__ import annotations

import inspect
import math
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nbcli.models import (
    MODELS,
    BayesClassifier,
    GaussianNB,
    LinearDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
    registry,
)
from nbcli.models.hyperparameters import SAME, Hyperparameter, parse_priors
from tests.conftest import blobs
from tests.declared import fittable, of_kind

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical

ROOT = Path(__file__).parent.parent


def _fittable(name: str, X: np.ndarray):
    """``X`` (any reals) turned into what model ``name`` takes, and hyperparameters
    for it, from what its class declares: a model of several column types gets
    one column of each, so every kind of statistics array is filled."""
    return fittable(MODELS[name], X)


def test_registry_finds_every_model_class_by_its_declared_name():
    from nbcli.model_names import FIRST, declared_model_names

    found = registry.model_classes()
    # The models the docs have always listed first, then the others as found;
    # nbcli --help reads the same names from the source without importing it.
    assert list(found)[: len(FIRST)] == list(FIRST)
    assert {"categorical", "complement", "mixed"} <= set(found)
    assert list(found) == declared_model_names()
    assert found is registry.model_classes() and MODELS == found
    for name, cls in found.items():
        assert cls.name == name == cls.model_type
        assert issubclass(cls, BayesClassifier) and cls.__module__.startswith("nbcli.models.")
    # Shared bases that declare no name are not model types.
    assert all(cls.__dict__.get("name") for cls in found.values())


@pytest.mark.parametrize("name", list(MODELS))
def test_specs_are_the_constructor(name):
    cls = MODELS[name]
    init = {
        p.name: p.default
        for p in inspect.signature(cls.__init__).parameters.values()
        if p.name != "self"
    }
    specs = {s.name: s for s in cls.hyperparameters}
    assert list(specs) == [s.name for s in cls.hyperparameters]  # no name twice
    assert set(specs) == set(init)
    for pname, spec in specs.items():
        assert spec.default == init[pname], pname
        assert spec.is_valid(spec.default), pname
        if spec.cli_default is not SAME:
            assert spec.is_valid(spec.cli_default)
    assert specs[cls.prior_param].kind == "priors"
    assert cls.min_samples_per_class in (1, 2)
    assert set(cls.sklearn_tags) <= {"positive_only", "poor_score", "sparse"}


@pytest.mark.parametrize("name", list(MODELS))
def test_statistics_declare_exactly_the_arrays_they_store(name):
    cls = MODELS[name]
    X, y = blobs(n_per_class=10, d=3)
    # Ledoit-Wolf shrinkage, where declared, gathers the scatter per class.
    X, params = fittable(cls, X, shrinkage="auto")
    model = cls(**params).fit(X, y)
    assert isinstance(model.stats_, cls.statistics)
    for stats_cls in cls.statistics:
        assert set(stats_cls.shapes) == {f.name for f in fields(stats_cls)}
        units = set("".join(stats_cls.shapes.values()))
        assert units - {"K", "d"} == set(stats_cls.extra_dims)
    stats_cls = type(model.stats_)
    shapes = stats_cls.array_shapes(2, 3, model.stats_.dimensions())
    stored = {k: v.shape for k, v in model.stats_.arrays().items()}
    assert set(shapes) - set(stored) <= set(stats_cls.optional)
    assert stored == {k: shapes[k] for k in stored}
    np.testing.assert_array_equal(model.stats_.class_counts, [10, 10])


@pytest.mark.parametrize(
    "model, message",
    [
        (GaussianNB(var_smoothing=-1), "var_smoothing must be a finite number >= 0; got -1"),
        (GaussianNB(var_smoothing=np.float64("nan")), "var_smoothing must be .*; got nan"),
        (
            MultinomialNB(alpha="1"),
            "alpha must be a finite number >= 0 or a list of them \\(one per feature\\); got '1'",
        ),
        (MultinomialNB(fit_prior="no"), "fit_prior must be true or false; got 'no'"),
        (QuadraticDiscriminantAnalysis(reg_param=1.5), r"reg_param must be a number in \[0, 1\]"),
        (LinearDiscriminantAnalysis(shrinkage="fast"), "shrinkage must be 'auto' or a number"),
        (GaussianNB(priors=[0.5, 0.6]), "priors must be non-negative numbers that sum to 1"),
    ],
)
def test_the_python_api_validates_with_the_specs(model, message):
    X, y = blobs()
    with pytest.raises(ValueError, match=message):
        model.fit(np.abs(X), y)


SPEC = Hyperparameter("x", "float", 0.5, "test", low=0.0, high=1.0, high_open=True)


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_a_range_is_checked_as_described(value):
    assert SPEC.is_valid(value) == (math.isfinite(value) and 0 <= value < 1)
    assert SPEC.describe() == "a number in [0, 1)"


def test_priors_parse_in_class_order_or_by_label():
    assert parse_priors("0.3, 0.7", "--priors") == [0.3, 0.7]
    assert parse_priors("spam=0.4,ham=0.6", "--priors") == {"spam": 0.4, "ham": 0.6}
    with pytest.raises(ValueError, match="gives class a more than once"):
        parse_priors("a=0.5,a=0.5", "--priors")
    with pytest.raises(ValueError, match="^--priors must be numbers"):
        parse_priors("x,y", "--priors")


@pytest.mark.parametrize(
    "name, params",
    [
        ("gaussian", {"var_smoothing": 1e-3}),
        ("multinomial", {"alpha": 0.25, "fit_prior": False}),
        ("bernoulli", {"alpha": 3.0, "class_prior": [0.2, 0.8]}),
        ("lda", {"shrinkage": 0.4}),
        ("qda", {"reg_param": 0.3}),
        ("gaussian", {"var_smoothing": 1e-2, "var_smoothing_scale": "feature"}),
        ("complement", {"alpha": 0.3, "norm": True}),
        ("categorical", {"alpha": 2.0, "min_categories": 9}),
        ("mixed", {"var_smoothing": 1e-1, "var_smoothing_scale": "feature"}),
    ],
)
def test_with_params_equals_a_refit_without_the_data(name, params):
    X, y = blobs(n_per_class=30, d=4, seed=3)
    X = of_kind(X, MODELS[name].feature_kinds[0])
    base = MODELS[name]().fit(X, y)
    before = base.predict_proba(X)
    other = base.with_params(**params)
    refit = MODELS[name](**params).fit(X, y)
    np.testing.assert_allclose(other.predict_proba(X), refit.predict_proba(X), rtol=0, atol=1e-12)
    assert not np.allclose(other.predict_proba(X), before)  # the parameters did change
    np.testing.assert_array_equal(base.predict_proba(X), before)  # self is unchanged
    assert other.stats_ is not base.stats_
    with pytest.raises(ValueError, match="invalid parameter 'nope'"):
        base.with_params(nope=1)


def test_fit_flags_and_help_come_from_the_specs():
    from typer.testing import CliRunner

    from nbcli.cli.app import app, register_commands

    register_commands(["fit", "--help"])
    out = CliRunner().invoke(app, ["fit", "--help"], terminal_width=200).output
    assert "<" + "|".join(registry.model_classes()) + ">" in out
    for flag in registry.flags().values():
        for part in flag.flag.split("/"):
            assert part in out
        assert registry.flag_help(flag).split(" [")[0][:30] in " ".join(out.split())
    assert set(registry.flags()["--priors"].params.values()) == {"priors", "class_prior"}
    assert registry.flags()["--alpha"].models == [
        "multinomial",
        "bernoulli",
        "categorical",
        "complement",
        "mixed",
        "poisson",
    ]
    for flag in ("--norm/--no-norm", "--min-categories", "--missing", "--unseen"):
        assert flag in registry.flags()
    # Set from the column plan, never by a flag of its own.
    assert all(f.spec.name != "column_types" for f in registry.flags().values())


def test_help_imports_neither_scipy_nor_pandas():
    code = (
        "import sys, nbcli.cli.app, nbcli.models.registry as r; r.flags();"
        "print(sorted(m for m in ('scipy', 'pandas') if m in sys.modules))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert run.stdout.strip() == "[]"


def test_the_command_line_and_workflows_use_only_public_names_of_the_core():
    import ast

    X, y = blobs()
    private = set()
    for name, cls in MODELS.items():
        Xm, params = _fittable(name, X)
        model = cls(**params).fit(Xm, y)
        private |= {n for n in [*dir(cls), *vars(model), *vars(model.stats_)] if n[:1] == "_"}
    private = {n for n in private if not n.startswith("__")}
    used = []
    for path in [
        *(ROOT / "nbcli" / "cli").glob("*.py"),
        *(ROOT / "nbcli" / "workflows").glob("*.py"),
    ]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in private:
                used.append(f"{path.name}:{node.lineno} .{node.attr}")
    assert used == []


@pytest.mark.parametrize("name", list(MODELS))
def test_statistics_say_what_no_data_could_give(name):
    X, y = blobs(n_per_class=6, d=2)  # two classes and two features: square arrays
    X, params = _fittable(name, X)
    model = MODELS[name](**params).fit(X, y)
    stats = model.stats_
    assert stats.implausible() is None
    broken = stats.copy()
    broken.class_counts[0] = -1
    assert broken.implausible() == "class counts that are negative or all zero"
    for field_name, what in type(stats)._non_negative.items():
        broken = stats.copy()
        array = getattr(broken, field_name)
        if array is None or array.size == 0:  # a column type the table does not have
            continue
        array[(0,) * array.ndim] = -1.0  # a diagonal entry of a matrix
        assert broken.implausible() == f"negative {what}"
        off = stats.copy()
        array = getattr(off, field_name)
        if type(stats).shapes[field_name].endswith("dd"):
            array[..., 0, 1] = -1.0  # off the diagonal a cross product may be negative
            assert off.implausible() is None
        else:
            array[0, -1] = -1.0  # (n_classes, n_features) is square here, yet no matrix
            assert off.implausible() == f"negative {what}"


def test_nothing_outside_the_core_branches_on_a_model_name():
    # What a model type can do is what its class declares; a comparison of
    # ``.name`` (or ``model_type``) with a model name elsewhere is a table
    # keyed by name in disguise.
    import ast

    names = set(MODELS)
    found = []
    for folder in ("cli", "workflows", "reports", "render", "io", "engines", "text"):
        for path in (ROOT / "nbcli" / folder).glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Compare):
                    continue
                sides = [node.left, *node.comparators]
                named = any(
                    (isinstance(s, ast.Attribute) and s.attr in ("name", "model_type"))
                    or (isinstance(s, ast.Name) and s.id == "model_type")
                    for s in sides
                )
                literals = {
                    c.value
                    for s in sides
                    for c in ast.walk(s)
                    if isinstance(c, ast.Constant) and isinstance(c.value, str)
                }
                if named and literals & names:
                    found.append(f"{folder}/{path.name}:{node.lineno}")
    assert found == []


def test_every_declared_fit_check_is_one_the_fit_runs():
    from nbcli.workflows.train_checks import FIT_CHECKS

    declared = {c for cls in MODELS.values() for c in cls.fit_checks}
    assert declared and declared <= set(FIT_CHECKS)
