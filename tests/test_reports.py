"""Evaluation, comparison and calibration reports, their JSON forms, and thresholds."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as skm
from sklearn.calibration import calibration_curve

from nbcli import __version__
from nbcli.reports import (
    CALIBRATION_METRICS,
    COMPARISON_METRICS,
    EVALUATION_SCHEMA,
    RecalibrationReport,
    build_calibration,
    build_comparison,
    build_evaluation,
    check_thresholds,
    parse_threshold,
)
from nbcli.reports import reliability as rel
from nbcli.reports.evaluation import TRAINING_DATA_WARNING

# --------------------------------------------------------------------------
# A validator for the subset of JSON Schema (draft 2020-12) the schemas use.

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
_HANDLED = {
    "$schema",
    "title",
    "type",
    "required",
    "properties",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "anyOf",
}


def validate(instance, schema, path="$"):
    """Return a list of violations of ``schema`` by ``instance``."""
    unknown = set(schema) - _HANDLED
    assert not unknown, f"validator does not handle {unknown} at {path}"
    if "anyOf" in schema:
        tried = [validate(instance, option, path) for option in schema["anyOf"]]
        if all(tried):
            return [f"{path}: matches none of anyOf ({'; '.join(t[0] for t in tried)})"]
    errors = []
    if isinstance(instance, list) and len(instance) < schema.get("minItems", 0):
        errors.append(f"{path}: fewer than {schema['minItems']} items")
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](instance) for t in types):
            return [f"{path}: {instance!r} is not of type {types}"]
    if "const" in schema and instance != schema["const"]:
        errors.append(f"{path}: {instance!r} != {schema['const']!r}")
    if "enum" in schema and instance not in schema["enum"]:
        errors.append(f"{path}: {instance!r} not in {schema['enum']}")
    if _TYPES["number"](instance):
        if "minimum" in schema and instance < schema["minimum"]:
            errors.append(f"{path}: {instance} < {schema['minimum']}")
        if "maximum" in schema and instance > schema["maximum"]:
            errors.append(f"{path}: {instance} > {schema['maximum']}")
        if "exclusiveMinimum" in schema and instance <= schema["exclusiveMinimum"]:
            errors.append(f"{path}: {instance} <= {schema['exclusiveMinimum']}")
        if "exclusiveMaximum" in schema and instance >= schema["exclusiveMaximum"]:
            errors.append(f"{path}: {instance} >= {schema['exclusiveMaximum']}")
    if isinstance(instance, dict):
        for key in schema.get("required", []):
            if key not in instance:
                errors.append(f"{path}: missing {key!r}")
        props = schema.get("properties", {})
        for key, value in instance.items():
            if key in props:
                errors.extend(validate(value, props[key], f"{path}.{key}"))
            elif schema.get("additionalProperties", True) is False:
                errors.append(f"{path}: unexpected {key!r}")
    if isinstance(instance, list) and "items" in schema:
        for i, item in enumerate(instance):
            errors.extend(validate(item, schema["items"], f"{path}[{i}]"))
    return errors


def test_validator_rejects_what_it_should():
    schema = EVALUATION_SCHEMA["properties"]["metrics"]
    good = {
        k: {"value": 0.5, "lower": None, "upper": None, "method": "none"}
        for k in schema["required"]
    }
    assert validate(good, schema) == []
    bad = dict(good, accuracy={"value": "0.5", "lower": None, "upper": None, "method": "bootstrap"})
    assert len(validate(bad, schema)) == 2
    assert validate({k: v for k, v in good.items() if k != "brier"}, schema) == [
        "$: missing 'brier'"
    ]


def _plain_json_types_only(obj):
    if isinstance(obj, dict):
        return all(isinstance(k, str) and _plain_json_types_only(v) for k, v in obj.items())
    if isinstance(obj, list):
        return all(_plain_json_types_only(v) for v in obj)
    return obj is None or type(obj) in (str, int, float, bool)


# --------------------------------------------------------------------------
# Fixtures


def _posteriors(rng, n, k, true_idx, signal=1.5):
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), true_idx] += signal
    p = np.exp(logits)
    return p / p.sum(axis=1, keepdims=True)


@pytest.fixture
def int_model():
    """Integer classes 1..4; test labels read as text, two labels unseen (7 and 5)."""
    rng = np.random.default_rng(21)
    classes = np.array([1, 2, 3, 4])
    n = 400
    idx = rng.integers(0, 4, n)
    p = _posteriors(rng, n, 4, idx)
    y = classes[idx].astype(str).astype(object)
    y[:6] = "7"
    y[6:8] = "5"
    return classes, y, p


# --------------------------------------------------------------------------
# Evaluation


def test_evaluation_matches_sklearn_and_records_unseen_labels(int_model):
    classes, y, p = int_model
    r = build_evaluation(classes, y, p, n_resamples=200, seed=1)
    yt = y.astype(str)
    yp = classes[p.argmax(axis=1)].astype(str)
    assert r.metrics["accuracy"].value == pytest.approx(skm.accuracy_score(yt, yp), abs=1e-12)
    assert r.metrics["balanced_accuracy"].value == pytest.approx(
        skm.balanced_accuracy_score(yt, yp), abs=1e-12
    )
    macro_f1 = skm.f1_score(yt, yp, average="macro", zero_division=0)
    assert r.metrics["macro_f1"].value == pytest.approx(macro_f1, abs=1e-12)
    assert r.metrics["cohen_kappa"].value == pytest.approx(skm.cohen_kappa_score(yt, yp), abs=1e-12)
    known = np.arange(8, len(y))
    log_loss = skm.log_loss(yt[known], p[known], labels=["1", "2", "3", "4"])
    assert r.metrics["log_loss"].value == pytest.approx(log_loss, abs=1e-12)
    assert r.metrics["brier"].value == pytest.approx(
        skm.brier_score_loss(yt[known], p[known], labels=["1", "2", "3", "4"], scale_by_half=False),
        abs=1e-12,
    )
    assert r.n_samples == 400 and r.n_unseen == 8
    assert r.labels == [1, 2, 3, 4, "5", "7"]
    assert r.confusion.shape == (6, 6) and r.confusion[4:].sum() == 8
    assert len(r.warnings) == 1 and "8 test rows" in r.warnings[0] and "'5', '7'" in r.warnings[0]
    assert all(iv.lower < iv.value < iv.upper for iv in r.metrics.values())
    assert r.calibration.diagram.n_samples == 392


def test_evaluation_dict_validates_against_its_schema_and_is_plain_json(int_model):
    classes, y, p = int_model
    d = build_evaluation(
        classes,
        y,
        p,
        n_resamples=100,
        inputs={"model": {"path": "m.npz", "sha256": "ab"}},
        settings={"extra": 1},
    ).to_dict()
    assert validate(d, EVALUATION_SCHEMA) == []
    assert _plain_json_types_only(d)
    json.dumps(d, allow_nan=False)
    assert (
        d["schema"] == "nbcli.evaluation"
        and d["schema_version"] == 1
        and d["nbcli_version"] == __version__
    )
    assert build_evaluation(classes, y, p, n_resamples=0).schema == d["schema"]
    assert d["inputs"]["model"]["path"] == "m.npz"
    assert d["settings"]["extra"] == 1 and d["settings"]["bootstrap_resamples"] == 100
    # Average precision has no jackknife: its interval is always the percentile one.
    assert d["settings"]["bootstrap_method"] == "BCa (percentile for: average_precision)"
    # Labels keep their type: model classes are ints; unseen labels stay as given (text).
    assert d["confusion_matrix"]["labels"] == [1, 2, 3, 4, "5", "7"]
    assert sum(map(sum, d["confusion_matrix"]["counts"])) == 400
    assert list(d["metrics"]) == [
        "accuracy",
        "balanced_accuracy",
        "macro_f1",
        "cohen_kappa",
        "log_loss",
        "brier",
        "roc_auc",
        "roc_auc_weighted",
        "average_precision",
    ]


def test_evaluation_of_a_perfect_model_uses_percentile_where_bca_is_undefined():
    y = np.array(["a", "b", "c"] * 20)
    p = np.eye(3)[np.tile([0, 1, 2], 20)] * 0.9 + 0.1 / 3
    r = build_evaluation(np.array(["a", "b", "c"]), y, p, n_resamples=200, training_match=True)
    d = r.to_dict()
    assert validate(d, EVALUATION_SCHEMA) == []
    assert d["metrics"]["accuracy"] == {
        "value": 1.0,
        "lower": 1.0,
        "upper": 1.0,
        "method": "percentile",
    }
    assert d["metrics"]["log_loss"]["method"] == "percentile"
    assert d["settings"]["bootstrap_method"].startswith("percentile")
    assert d["most_confused"] == []
    assert TRAINING_DATA_WARNING in d["warnings"]
    assert d["calibration"]["ece"] == pytest.approx(1 - (0.9 + 0.1 / 3))


def test_evaluation_without_resamples_has_no_intervals(int_model):
    classes, y, p = int_model
    d = build_evaluation(classes, y, p, n_resamples=0).to_dict()
    assert all(m["method"] == "none" and m["lower"] is None for m in d["metrics"].values())
    assert d["settings"]["bootstrap_method"] == "none"
    assert validate(d, EVALUATION_SCHEMA) == []


def test_evaluation_is_reproducible_for_a_seed(int_model):
    classes, y, p = int_model
    a = build_evaluation(classes, y, p, n_resamples=100, seed=5).to_dict()
    b = build_evaluation(classes, y, p, n_resamples=100, seed=5).to_dict()
    c = build_evaluation(classes, y, p, n_resamples=100, seed=6).to_dict()
    assert a == b
    assert a["metrics"] != c["metrics"]


def test_evaluation_with_many_labels_and_unseen_ones_matches_sklearn_and_the_whole_table_bootstrap():
    from nbcli.reports import bootstrap as bs
    from nbcli.reports import metrics as m

    rng = np.random.default_rng(8)
    k, n = 60, 900
    classes = np.arange(k)
    idx = rng.integers(0, k, n)
    p = _posteriors(rng, n, k, idx, signal=3.0)
    y = idx.astype(object)
    y[:5] = "new"
    r = build_evaluation(classes, y, p, n_resamples=300, seed=4)
    yt, yp = y.astype(str), classes[p.argmax(axis=1)].astype(str)
    assert r.metrics["accuracy"].value == pytest.approx(skm.accuracy_score(yt, yp), abs=1e-12)
    assert r.metrics["balanced_accuracy"].value == pytest.approx(
        skm.balanced_accuracy_score(yt, yp), abs=1e-12
    )
    macro_f1 = skm.f1_score(yt, yp, average="macro", zero_division=0)
    assert r.metrics["macro_f1"].value == pytest.approx(macro_f1, abs=1e-12)
    assert r.metrics["cohen_kappa"].value == pytest.approx(skm.cohen_kappa_score(yt, yp), abs=1e-12)
    # sklearn orders string labels as text ("10" before "2"): integer labels keep the column order.
    assert r.metrics["log_loss"].value == pytest.approx(
        skm.log_loss(idx[5:], p[5:], labels=classes), abs=1e-12
    )
    brier = skm.brier_score_loss(idx[5:], p[5:], labels=classes, scale_by_half=False)
    assert r.metrics["brier"].value == pytest.approx(brier, abs=1e-12)
    assert r.calibration.diagram.n_samples == n - 5
    # The margin path draws what whole tables draw from the same seed.
    tables = bs.bootstrap_count_statistics(
        r.confusion,
        m.CONFUSION_METRICS,
        n_resamples=300,
        confidence=0.95,
        rng=np.random.default_rng(4),
    )
    for name, iv in tables.items():
        assert r.metrics[name].method == iv.method == "BCa"
        assert (r.metrics[name].lower, r.metrics[name].upper) == pytest.approx(
            (iv.lower, iv.upper), abs=1e-12
        )


def test_evaluation_rejects_mismatched_shapes(int_model):
    classes, y, p = int_model
    with pytest.raises(ValueError, match="shape"):
        build_evaluation(classes, y, p[:, :3])


def test_threshold_values_of_evaluation_pass_and_fail_as_expected(int_model):
    classes, y, p = int_model
    known = np.arange(8, len(y))  # the first 8 rows have labels the model never saw
    r = build_evaluation(classes, y[known], p[known], n_resamples=100)
    values = r.threshold_values()
    acc = r.metrics["accuracy"]
    passing = [
        parse_threshold(f"accuracy.lower={acc.lower - 0.01}", "under"),
        parse_threshold("ece=0.9", "over"),
    ]
    assert check_thresholds(values, passing) == []
    failing = [
        parse_threshold(f"accuracy.lower={acc.lower + 0.01}", "under"),
        parse_threshold("log_loss=0.01", "over"),
    ]
    messages = check_thresholds(values, failing)
    assert messages[0].startswith(f"accuracy.lower {acc.lower:.4f} is below the threshold")
    assert messages[1].startswith("log_loss ") and messages[1].endswith(
        "is above the threshold 0.01"
    )


def test_a_gate_on_a_figure_that_leaves_out_unseen_labels_fails(int_model):
    # 8 rows have labels the model has no column for: the losses, ranking and
    # calibration figures are over the other 392, so a gate on them cannot
    # pass however good they are; the confusion metrics count the 8 rows.
    classes, y, p = int_model
    r = build_evaluation(classes, y, p, n_resamples=0)
    assert r.n_unseen == 8
    values = r.threshold_values()
    lenient = {
        "log_loss": ("over", 1e9), "brier": ("over", 2.0), "ece": ("over", 1.0),
        "mce": ("over", 1.0), "mean_confidence": ("over", 1.0), "roc_auc": ("under", 0.0),
        "roc_auc_weighted": ("under", 0.0), "average_precision": ("under", 0.0),
    }  # fmt: skip
    for name, (direction, bound) in lenient.items():
        [message] = check_thresholds(values, [parse_threshold(f"{name}={bound}", direction)])
        assert message.startswith(f"{name} ") and "leaves out the 8 rows whose labels" in message
    confusion = ("accuracy", "balanced_accuracy", "macro_f1")
    assert check_thresholds(values, [parse_threshold(f"{k}=0", "under") for k in confusion]) == []
    # Without those rows every one of the lenient gates passes.
    rest = build_evaluation(classes, y[8:], p[8:], n_resamples=0).threshold_values()
    gates = [parse_threshold(f"{k}={b}", d) for k, (d, b) in lenient.items()]
    assert check_thresholds(rest, gates) == []


# --------------------------------------------------------------------------
# Comparison


def test_a_model_compared_with_itself_differs_by_exactly_zero(int_model):
    classes, y, p = int_model
    r = build_comparison(classes, p, classes, p, y, n_resamples=300, confidence=0.95, seed=0)
    diff = r.metrics["difference"]
    assert (diff.value, diff.lower, diff.upper) == (0.0, 0.0, 0.0)
    assert r.p_value == 1.0
    assert r.table.only_a_correct == r.table.only_b_correct == 0
    assert r.metrics["accuracy_a"] == r.metrics["accuracy_b"]


def test_mcnemar_exact_p_value_by_hand():
    from nbcli.reports.comparison import mcnemar_exact

    b, c = 10, 3
    n = b + c
    tail = sum(math.comb(n, k) for k in range(0, min(b, c) + 1)) / 2**n
    assert mcnemar_exact(b, c) == pytest.approx(min(1.0, 2 * tail), rel=1e-12)
    assert mcnemar_exact(b, c) == pytest.approx(0.09228515625, rel=1e-12)
    assert mcnemar_exact(0, 0) == 1.0


def test_comparison_table_difference_and_schema():
    y = np.array([0] * 20 + [1] * 20)
    right = np.eye(2)[y] * 0.8 + 0.1
    wrong = np.eye(2)[1 - y] * 0.8 + 0.1
    # A is right on rows 0-29, B on rows 0-19 and 30-39.
    pa = np.vstack([right[:30], wrong[30:]])
    pb = np.vstack([right[:20], wrong[20:30], right[30:]])
    r = build_comparison(
        [0, 1], pa, [0, 1], pb, y, n_resamples=500, seed=3, inputs={"model_a": {"path": "a"}}
    )
    assert r.table.to_dict() == {
        "both_correct": 20,
        "only_a_correct": 10,
        "only_b_correct": 10,
        "both_wrong": 0,
    }
    assert r.metrics["accuracy_a"].value == 0.75 and r.metrics["accuracy_b"].value == 0.75
    assert r.metrics["difference"].value == 0.0
    assert r.metrics["difference"].lower < 0 < r.metrics["difference"].upper
    assert r.p_value == pytest.approx(1.0)
    d = r.to_dict()
    assert d["schema"] == "nbcli.comparison" == r.schema and d["schema_version"] == 1
    assert d["mcnemar"]["discordant_a"] == 10 and d["mcnemar"]["p_value"] == pytest.approx(1.0)
    assert _plain_json_types_only(d)
    assert set(r.threshold_values()) == set(COMPARISON_METRICS)


def test_comparison_difference_is_b_minus_a_with_a_paired_interval(int_model):
    classes, y, p = int_model
    worse = np.roll(p, 1, axis=0)
    r = build_comparison(classes, p, classes, worse, y, n_resamples=500)
    acc = lambda q: np.mean(classes[q.argmax(axis=1)].astype(str) == y.astype(str))
    assert r.metrics["difference"].value == pytest.approx(acc(worse) - acc(p), abs=1e-12)
    assert r.metrics["difference"].upper < 0
    assert r.p_value < 1e-10
    assert any("model A never saw" in w for w in r.warnings)


# --------------------------------------------------------------------------
# Reliability and calibration


def test_binary_bins_and_ece_equal_sklearn_calibration_curve():
    rng = np.random.default_rng(4)
    p1 = rng.uniform(size=500)
    p1[:5] = [0.0, 0.1, 0.3, 0.7, 1.0]  # values on bin edges
    y = rng.uniform(size=500) < p1**1.3
    d = rel.reliability_diagram(p1, y, bins=10)
    prob_true, prob_pred = calibration_curve(y, p1, n_bins=10, strategy="uniform")
    filled = [b for b in d.bins if b.count]
    np.testing.assert_allclose([b.accuracy for b in filled], prob_true, atol=1e-12)
    np.testing.assert_allclose([b.mean_confidence for b in filled], prob_pred, atol=1e-12)
    counts = np.array([b.count for b in filled])
    ece = np.sum(counts / 500 * np.abs(prob_true - prob_pred))
    assert d.ece == pytest.approx(ece, abs=1e-12)
    assert d.mce == pytest.approx(np.max(np.abs(prob_true - prob_pred)), abs=1e-12)


def test_top_class_confidence_bins_match_sklearn_when_the_positive_class_is_always_on_top():
    rng = np.random.default_rng(9)
    p1 = rng.uniform(0.5, 1.0, size=400)
    y = (rng.uniform(size=400) < p1).astype(int)
    proba = np.column_stack([1 - p1, p1])
    conf, correct = rel.top_class_confidence(proba, y)
    d = rel.reliability_diagram(conf, correct, bins=10)
    prob_true, prob_pred = calibration_curve(y, p1, n_bins=10)
    filled = [b for b in d.bins if b.count]
    np.testing.assert_allclose([b.accuracy for b in filled], prob_true, atol=1e-12)
    np.testing.assert_allclose([b.mean_confidence for b in filled], prob_pred, atol=1e-12)
    # The lower five bins are empty and kept.
    assert [b.count for b in d.bins[:5]] == [0] * 5
    empty = {
        "lower": 0.0,
        "upper": 0.1,
        "count": 0,
        "mean_confidence": None,
        "accuracy": None,
        "gap": None,
    }
    assert d.bins[0].to_dict() == empty


def test_bin_membership_is_lower_open_upper_closed_with_the_first_bin_closed():
    edges = np.array([0.0, 0.5, 0.9, 1.0])
    idx = rel.assign_bins([0.0, 0.5, 0.5000001, 0.9, 0.95, 1.0], edges)
    np.testing.assert_array_equal(idx, [0, 0, 1, 1, 2, 2])
    with pytest.raises(ValueError, match="outside the bin edges"):
        rel.assign_bins([0.3], [0.5, 1.0])


def test_quantile_bins_hold_about_equal_counts():
    p = np.random.default_rng(0).beta(5, 1, size=1000)
    d = rel.reliability_diagram(p, p > 0.5, bins=4, strategy="quantile")
    assert d.strategy == "quantile"
    assert [b.count for b in d.bins] == [250, 250, 250, 250]
    assert d.edges[0] == 0.0 and d.edges[-1] == 1.0


def test_equal_count_bins_merged_by_ties_are_reported_with_the_tie():
    # 600 of 1,000 rows claim certainty: the deciles 0.5 to 0.9 fall on 1.0,
    # the top edge, so 10 bins become 5 (edges 0, the deciles 0.1 to 0.4, 1).
    rng = np.random.default_rng(3)
    top = np.concatenate([np.ones(600), rng.uniform(0.5, 0.99, 400)])
    proba = np.column_stack([top, 1.0 - top])
    y = (rng.uniform(size=1000) > top).astype(int)
    report = build_calibration(
        np.array([0, 1]), y, proba, bins=10, strategy="quantile", n_resamples=0
    )
    assert len(report.diagram.bins) == 5
    assert [b.count for b in report.diagram.bins][-1] == 600
    assert any(
        "5 made of the 10 asked for" in w and "600 of the 1,000 rows" in w and "confidence 1 " in w
        for w in report.warnings
    )
    # Without ties every bin asked for is made, and nothing is said.
    spread = np.column_stack([np.linspace(0.5, 1.0, 1000), np.linspace(0.5, 0.0, 1000)])
    plain = build_calibration(
        np.array([0, 1]), y, spread, bins=10, strategy="quantile", n_resamples=0
    )
    assert len(plain.diagram.bins) == 10 and not plain.warnings


def test_explicit_edges_are_validated():
    d = rel.reliability_diagram(
        [0.95, 0.995, 0.9995, 0.5], [1, 1, 0, 0], bins=[0, 0.9, 0.99, 0.999, 1]
    )
    assert d.strategy == "explicit" and [b.count for b in d.bins] == [1, 1, 1, 1]
    for edges, message in [
        ([0.5], "at least 2"),
        ([0, 0.5, 0.5, 1], "strictly increasing"),
        ([0, 0.7, 0.3, 1], "strictly increasing"),
        ([-0.1, 1], r"within \[0, 1\]"),
        ([0, 1.5], r"within \[0, 1\]"),
        (["a", "b"], "numbers"),
    ]:
        with pytest.raises(ValueError, match=message):
            rel.validate_edges(edges)


def test_ece_jackknife_and_bootstrap_match_scipy_on_the_same_resamples():
    rng = np.random.default_rng(6)
    conf = rng.uniform(0.4, 1.0, size=80)
    correct = rng.uniform(size=80) < conf - 0.1
    edges = rel.bin_edges(conf, 5)

    def ece(c, y, axis=-1):
        c, y = np.atleast_2d(c), np.atleast_2d(y)
        return np.array(
            [rel.reliability_diagram(ci, yi, edges).ece for ci, yi in zip(c, y)]
        ).squeeze()

    iv = rel.ece_interval(
        conf, correct, edges, n_resamples=400, confidence=0.95, rng=np.random.default_rng(1)
    )
    assert iv.value == pytest.approx(rel.reliability_diagram(conf, correct, 5).ece, abs=1e-12)
    # Rebuild the same resamples to hand SciPy the same bootstrap distribution.
    idx = np.random.default_rng(1).integers(0, 80, size=(400, 80), dtype=np.intp)
    replicates = ece(conf[idx], correct[idx])
    ref = stats.bootstrap(
        (conf, correct),
        ece,
        paired=True,
        vectorized=True,
        n_resamples=0,
        bootstrap_result=SimpleNamespace(bootstrap_distribution=replicates),
        method="BCa",
    ).confidence_interval
    assert iv.method == "BCa"
    assert iv.lower == pytest.approx(ref.low, abs=1e-12) and iv.upper == pytest.approx(
        ref.high, abs=1e-12
    )


def test_calibration_report_from_the_callers_per_row_figures_is_the_same(int_model):
    classes, y, p = int_model  # 8 of 400 labels unseen by the model
    from nbcli.reports.metrics import encode_labels

    coding = encode_labels(classes, y)
    rows = np.flatnonzero(coding.known)
    per_row = rel.row_reliability(p[rows], coding.codes[rows])
    kwargs = dict(bins=10, n_resamples=200, seed=2)
    taken = build_calibration(classes, y, p, **kwargs).to_dict()
    assert build_calibration(classes, y, p, per_row=per_row, **kwargs).to_dict() == taken
    # The figures given are the ones reported.
    sharper = p**3 / (p**3).sum(axis=1, keepdims=True)
    other = rel.row_reliability(sharper[rows], coding.codes[rows])
    shown = build_calibration(classes, y, p, per_row=other, **kwargs).to_dict()
    assert shown == build_calibration(classes, y, sharper, **kwargs).to_dict() != taken


def test_calibration_report_and_too_few_samples(int_model):
    classes, y, p = int_model
    r = build_calibration(
        classes, y, p, bins=10, n_resamples=200, seed=2, inputs={"data": {"path": "t.csv"}}
    )
    d = r.to_dict()
    assert d["schema"] == "nbcli.calibration" and d["schema_version"] == 1
    assert set(d["metrics"]) == {"ece", "brier", "log_loss"}
    assert d["metrics"]["ece"]["value"] == pytest.approx(d["reliability"]["ece"])
    assert (
        d["metrics"]["ece"]["lower"] < d["metrics"]["ece"]["value"] < d["metrics"]["ece"]["upper"]
    )
    assert sum(b["count"] for b in d["reliability"]["bins"]) == 392 and d["n_unseen"] == 8
    assert _plain_json_types_only(d) and json.dumps(d, allow_nan=False)
    assert set(r.threshold_values()) == set(CALIBRATION_METRICS)
    # At most one bin per row with a known label, as evaluate allows.
    with pytest.raises(ValueError, match=r"^too few samples \(392\) for 393 bins; use fewer bins$"):
        build_calibration(classes, y, p, bins=393)
    diagram = build_calibration(classes, y, p, bins=392, n_resamples=0).diagram
    assert len(diagram.edges) == 393 and sum(b.count for b in diagram.bins) == 392
    with pytest.raises(ValueError, match="too few samples"):
        build_calibration(classes, y[:5], p[:5], bins=[0, 0.3, 0.6, 0.8, 0.9, 0.95, 1])


def test_recalibration_document_holds_before_and_after(int_model):
    classes, y, p = int_model
    before = build_calibration(classes, y, p, n_resamples=50)
    sharper = p**2 / (p**2).sum(axis=1, keepdims=True)
    after = build_calibration(classes, y, sharper, n_resamples=50)
    doc = RecalibrationReport(before, after, {"method": "temperature", "temperature": 0.5})
    d = doc.to_dict()
    assert (doc.schema, before.schema) == ("nbcli.recalibration", "nbcli.calibration")
    assert d["schema"] == "nbcli.recalibration"
    assert d["calibrator"]["temperature"] == 0.5
    assert d["before"]["mean_confidence"] < d["after"]["mean_confidence"]
    assert d["before"]["accuracy"] == d["after"]["accuracy"]  # sharpening keeps the argmax


# --------------------------------------------------------------------------
# Threshold parsing


def test_parse_threshold_forms():
    t = parse_threshold("accuracy.lower=0.85", "under")
    assert (t.metric, t.part, t.value, t.name) == ("accuracy", "lower", 0.85, "accuracy.lower")
    assert parse_threshold(" accuracy = 0.9 ", "under").part == "value"
    assert parse_threshold("log_loss.upper=0.4", "over").direction == "over"
    assert parse_threshold("difference.lower=0", "under", COMPARISON_METRICS).value == 0.0
    assert parse_threshold("p_value=0.05", "over", COMPARISON_METRICS).metric == "p_value"
    # Names alone are enough: their kinds come from the table of all metrics.
    names = ("accuracy", "log_loss")
    assert parse_threshold("log_loss=0.5", "over", names).metric == "log_loss"
    with pytest.raises(ValueError, match="use --fail-over"):
        parse_threshold("log_loss=0.5", "under", names)
    with pytest.raises(ValueError, match="known metrics: accuracy, log_loss$"):
        parse_threshold("ece=0.5", "over", names)


@pytest.mark.parametrize(
    "text, direction, message",
    [
        (
            "acuracy=0.9",
            "under",
            "unknown metric 'acuracy'; known metrics: accuracy, balanced_accuracy",
        ),
        ("accuracy=high", "under", "'high' is not a number"),
        ("accuracy=nan", "under", "finite"),
        ("accuracy", "under", "expected METRIC=VALUE"),
        ("accuracy.middle=0.9", "under", "unknown part"),
        ("ece.lower=0.1", "over", "has no interval; use --fail-over ece=0.1"),
        # The way on is the option ece takes, not the one it was given with.
        ("ece.lower=0", "under", "has no interval; use --fail-over ece=0"),
        ("log_loss=0.3", "under", "lower is better for log_loss; use --fail-over"),
        ("accuracy=0.9", "over", "higher is better for accuracy; use --fail-under"),
    ],
)
def test_parse_threshold_errors(text, direction, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        parse_threshold(text, direction)


def test_check_thresholds_messages():
    values = {
        "accuracy": {"value": 0.9, "lower": 0.8312, "upper": 0.95, "method": "BCa"},
        "cohen_kappa": {"value": None, "lower": None, "upper": None, "method": "none"},
        "ece": 0.05,
    }
    ts = [
        parse_threshold("accuracy.lower=0.85", "under"),
        parse_threshold("accuracy=0.9", "under"),
        parse_threshold("ece=0.04", "over"),
        parse_threshold("cohen_kappa=0.1", "under"),
    ]
    assert check_thresholds(values, ts) == [
        "accuracy.lower 0.8312 is below the threshold 0.85",
        "ece 0.0500 is above the threshold 0.04",
        "cohen_kappa is undefined, so the threshold 0.1 cannot be met",
    ]
    # A value just under the threshold is shown with enough digits to differ from it.
    near = check_thresholds(
        {"accuracy": {"value": 0.89996, "lower": 0, "upper": 1, "method": "BCa"}}, ts[1:2]
    )
    assert near == ["accuracy 0.89996 is below the threshold 0.9"]


@pytest.mark.parametrize(
    "text, direction",
    [
        ("accuracy=1.5", "under"),
        ("accuracy.lower=-0.1", "under"),
        ("cohen_kappa=-1.5", "under"),
        ("log_loss=-0.2", "over"),
        ("brier=2.5", "over"),
    ],
)
def test_a_threshold_outside_its_metrics_range_is_refused(text, direction):
    with pytest.raises(ValueError, match="lies in"):
        parse_threshold(text, direction)


def test_thresholds_at_the_ends_of_a_range_are_gates():
    assert parse_threshold("accuracy=1", "under").value == 1.0
    assert parse_threshold("cohen_kappa=-1", "under").value == -1.0
    assert parse_threshold("log_loss=40", "over").value == 40.0


def test_compare_counts_unseen_labels_as_errors_without_speaking_of_probability_metrics():
    from nbcli.reports import build_comparison

    classes = np.array(["a", "b"])
    y = np.array(["a", "b", "zz", "a"], dtype=object)
    p = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.7, 0.3]])
    report = build_comparison(classes, p, classes, p, y, n_resamples=0)
    unseen = [w for w in report.warnings if "never saw ('zz')" in w]
    assert unseen and all("probability metrics" not in w for w in unseen)
