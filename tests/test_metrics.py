"""Metrics against scikit-learn's values on the same inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from nbcli.reports import metrics as m

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical


def _posteriors(rng, n, k, true_idx, signal=1.5):
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), true_idx] += signal
    p = np.exp(logits)
    return p / p.sum(axis=1, keepdims=True)


@pytest.fixture
def scored():
    """String classes, test labels including two labels the model never saw."""
    rng = np.random.default_rng(7)
    classes = np.array(["ant", "bee", "cat", "dog"])
    n = 300
    idx = rng.integers(0, 4, n)
    p = _posteriors(rng, n, 4, idx)
    y = classes[idx].astype(object)
    y[rng.choice(n, 9, replace=False)] = "eel"
    y[rng.choice(np.flatnonzero(y != "eel"), 4, replace=False)] = "fox"
    return classes, y, p


def _coded(classes, y, p):
    coding = m.encode_labels(classes, y)
    pred = m.predicted_codes(p)
    c = m.confusion_matrix(coding.codes, pred, len(coding.labels))
    return coding, pred, c


def test_confusion_matrix_covers_model_classes_then_unseen_labels(scored):
    classes, y, p = scored
    coding, pred, c = _coded(classes, y, p)
    assert coding.labels == ["ant", "bee", "cat", "dog", "eel", "fox"]
    assert coding.n_unseen == 13
    y_pred = classes[pred]
    expected = skm.confusion_matrix(y.astype(str), y_pred, labels=coding.labels)
    np.testing.assert_array_equal(c, expected)
    # Predictions are always model classes: the unseen labels' columns are empty.
    assert c[:, 4:].sum() == 0 and c[4:].sum() == 13


def test_confusion_metrics_equal_sklearn_with_unseen_labels(scored):
    classes, y, p = scored
    _, pred, c = _coded(classes, y, p)
    yt, yp = y.astype(str), classes[pred]
    assert m.accuracy(c) == pytest.approx(skm.accuracy_score(yt, yp), abs=1e-12)
    assert m.balanced_accuracy(c) == pytest.approx(skm.balanced_accuracy_score(yt, yp), abs=1e-12)
    assert m.macro_f1(c) == pytest.approx(
        skm.f1_score(yt, yp, average="macro", zero_division=0), abs=1e-12
    )
    assert m.cohen_kappa(c) == pytest.approx(skm.cohen_kappa_score(yt, yp), abs=1e-12)
    # Unseen labels are errors: accuracy is below the accuracy on known rows.
    known = np.isin(yt, classes)
    assert m.accuracy(c) < skm.accuracy_score(yt[known], yp[known])


def test_probability_metrics_equal_sklearn_on_known_rows(scored):
    classes, y, p = scored
    coding = m.encode_labels(classes, y)
    known = coding.known
    codes = coding.codes[known]
    yt = y[known].astype(str)
    assert m.log_loss(p[known], codes) == pytest.approx(
        skm.log_loss(yt, p[known], labels=classes), abs=1e-12
    )
    assert m.brier_score(p[known], codes) == pytest.approx(
        skm.brier_score_loss(yt, p[known], labels=classes, scale_by_half=False), abs=1e-12
    )


def test_binary_brier_is_the_unhalved_two_class_sum():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 50)
    p1 = rng.uniform(size=50)
    proba = np.column_stack([1 - p1, p1])
    ours = m.brier_score(proba, y)
    assert ours == pytest.approx(
        skm.brier_score_loss(y, proba, labels=[0, 1], scale_by_half=False), abs=1e-12
    )
    # In the binary case it is twice the usual one-column Brier score.
    assert ours == pytest.approx(2 * np.mean((p1 - y) ** 2), abs=1e-12)


def test_per_class_table_equals_sklearn(scored):
    classes, y, p = scored
    coding, pred, c = _coded(classes, y, p)
    rows, averages = m.per_class_scores(c, coding.labels)
    yt, yp = y.astype(str), classes[pred]
    labels = sorted(set(yt) | set(yp))
    prec, rec, f1, sup = skm.precision_recall_fscore_support(yt, yp, labels=labels, zero_division=0)
    by_label = {r.label: r for r in rows}
    assert sorted(by_label) == labels
    for i, lab in enumerate(labels):
        r = by_label[lab]
        assert (r.precision, r.recall, r.f1, r.support) == pytest.approx(
            (prec[i], rec[i], f1[i], sup[i]), abs=1e-12
        )
    for avg in ("macro", "weighted"):
        P, R, F, _ = skm.precision_recall_fscore_support(yt, yp, average=avg, zero_division=0)
        a = averages[avg]
        assert (a.precision, a.recall, a.f1) == pytest.approx((P, R, F), abs=1e-12)
        assert a.support == len(y)


def test_classes_never_true_nor_predicted_are_left_out_like_sklearn():
    classes = np.array([0, 1, 2])
    y = np.array([0, 0, 1, 1, 1])
    proba = np.array(
        [[0.9, 0.1, 0.0], [0.2, 0.8, 0.0], [0.1, 0.9, 0.0], [0.3, 0.7, 0.0], [0.6, 0.4, 0.0]]
    )
    _, pred, c = _coded(classes, y, proba)
    rows, _ = m.per_class_scores(c, [0, 1, 2])
    assert [r.label for r in rows] == [0, 1]
    assert m.macro_f1(c) == pytest.approx(
        skm.f1_score(y, pred, average="macro", zero_division=0), abs=1e-12
    )
    assert m.balanced_accuracy(c) == pytest.approx(skm.balanced_accuracy_score(y, pred), abs=1e-12)


def test_labels_match_by_string_form():
    classes = np.array([1, 2, 3])
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 3, 40)
    p = _posteriors(rng, 40, 3, idx)
    as_int = m.encode_labels(classes, classes[idx])
    as_text = m.encode_labels(classes, classes[idx].astype(str))
    alternating = [str(v) if i % 2 else int(v) for i, v in enumerate(classes[idx])]
    mixed = m.encode_labels(classes, np.array(alternating, dtype=object))
    for coding in (as_text, mixed):
        np.testing.assert_array_equal(coding.codes, as_int.codes)
        assert coding.n_unseen == 0
    assert as_text.labels == [1, 2, 3] and type(as_text.labels[0]) is int
    c = m.confusion_matrix(as_text.codes, m.predicted_codes(p), 3)
    assert m.accuracy(c) == pytest.approx(np.mean(classes[m.predicted_codes(p)] == classes[idx]))


def test_unseen_labels_keep_their_type_and_sort_numerically():
    coding = m.encode_labels(np.array([0, 1]), np.array([0, 10, 9, 1, 10]))
    assert coding.labels == [0, 1, 9, 10]
    assert all(type(x) is int for x in coding.labels)
    assert coding.unseen_labels == [9, 10] and coding.n_unseen == 3
    np.testing.assert_array_equal(coding.codes, [0, 3, 2, 1, 3])


def test_log_loss_clips_a_zero_probability_at_the_smallest_normal_float():
    proba = np.array([[1.0, 0.0], [0.5, 0.5]])
    losses = m.log_loss_per_row(proba, np.array([1, 0]))
    assert losses[0] == pytest.approx(-math.log(np.finfo(float).tiny))
    assert 708.0 < losses[0] < 709.0
    assert losses[1] == pytest.approx(math.log(2))


def test_kappa_is_nan_when_both_raters_use_one_class():
    c = np.array([[5, 0], [0, 0]])
    assert math.isnan(float(m.cohen_kappa(c)))


def test_metrics_of_a_stack_equal_metrics_of_each_matrix():
    rng = np.random.default_rng(2)
    stack = rng.integers(0, 20, size=(6, 4, 4))
    stack[2, :, 3] = 0  # a label never predicted
    stack[3, 1, :] = 0  # a label never true
    for name, f in m.CONFUSION_METRICS.items():
        batched = f(stack)
        assert batched.shape == (6,)
        np.testing.assert_allclose(
            batched, [float(f(s)) for s in stack], rtol=0, atol=1e-15, err_msg=name
        )


def test_most_confused_orders_by_count_then_label_order():
    c = np.array([[5, 2, 3], [3, 4, 0], [1, 3, 7]])
    pairs = m.most_confused(c, ["a", "b", "c"], top=4)
    assert [str(p) for p in pairs] == ["a -> c (3)", "b -> a (3)", "c -> b (3)", "a -> b (2)"]
    assert len(m.most_confused(c, ["a", "b", "c"], top=None)) == 5
    assert m.most_confused(np.diag([3, 4]), ["a", "b"]) == []


labels_st = st.lists(st.integers(0, 3), min_size=2, max_size=40)


@pytest.mark.filterwarnings("ignore::UserWarning")
@settings(max_examples=60, deadline=None)
@given(st.data())
def test_confusion_metrics_equal_sklearn_on_random_inputs(data):
    y = np.array(data.draw(labels_st))
    pred = np.array(data.draw(st.lists(st.integers(0, 3), min_size=len(y), max_size=len(y))))
    c = m.confusion_matrix(y, pred, 4)
    assert m.accuracy(c) == pytest.approx(skm.accuracy_score(y, pred), abs=1e-12)
    assert m.balanced_accuracy(c) == pytest.approx(skm.balanced_accuracy_score(y, pred), abs=1e-12)
    assert m.macro_f1(c) == pytest.approx(
        skm.f1_score(y, pred, average="macro", zero_division=0), abs=1e-12
    )
    kappa = float(m.cohen_kappa(c))
    if math.isnan(kappa):
        assert len(set(y) | set(pred)) == 1
    else:
        assert kappa == pytest.approx(skm.cohen_kappa_score(y, pred), abs=1e-12)


def test_margin_form_equals_the_table_form_bit_for_bit():
    rng = np.random.default_rng(4)
    stack = rng.integers(0, 6, size=(5, 7, 7))
    stack[1, :, 2] = 0  # a label never predicted
    stack[2, 3, :] = 0  # a label never true
    stack[4] = 0
    stack[4, 0, 0] = 9  # one label only: kappa undefined
    hits, support, predicted = m.confusion_margins(stack)
    np.testing.assert_array_equal(hits[0], np.diag(stack[0]))
    np.testing.assert_array_equal(support[2], stack[2].sum(axis=1))
    np.testing.assert_array_equal(predicted[1], stack[1].sum(axis=0))
    assert support[2, 3] == 0 and predicted[1, 2] == 0
    # Margins summed independently, in integers.
    margins = np.diagonal(stack, axis1=1, axis2=2), stack.sum(axis=2), stack.sum(axis=1)
    for name, metric in m.MARGIN_METRICS.items():
        from_margins = metric.from_margins(*(x.astype(float) for x in margins))
        np.testing.assert_array_equal(
            from_margins, m.CONFUSION_METRICS[name](stack.astype(float)), err_msg=name
        )
        np.testing.assert_array_equal(metric(stack), m.CONFUSION_METRICS[name](stack), err_msg=name)
    assert math.isnan(m.cohen_kappa(stack)[4]) and m.accuracy(stack)[4] == 1.0


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_per_row_losses_equal_their_formulas_in_every_layout(layout):
    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.ones(6), size=50)
    codes = rng.integers(0, 6, 50)
    true = np.array([p[i, c] for i, c in enumerate(codes)])
    brier = np.array(
        [sum((p[i, k] - (k == c)) ** 2 for k in range(6)) for i, c in enumerate(codes)]
    )
    given = {"C": p, "F": np.asfortranarray(p), "strided": np.repeat(p, 2, axis=0)[::2]}[layout]
    np.testing.assert_array_equal(m.true_class_values(given, codes), true)
    np.testing.assert_allclose(m.brier_per_row(given, codes), brier, rtol=0, atol=1e-15)
    # The same bits in every layout.
    np.testing.assert_array_equal(m.brier_per_row(given, codes), m.brier_per_row(p, codes))
    np.testing.assert_array_equal(m.log_loss_per_row(given, codes), -np.log(true))
    assert m.log_loss_per_row(np.array([[0.0, 1.0]]), [0])[0] == pytest.approx(708.396, abs=1e-3)


def test_most_confused_of_a_large_sparse_matrix_sorts_only_occupied_cells():
    rng = np.random.default_rng(6)
    k = 300
    c = np.zeros((k, k), dtype=np.int64)
    t, p = rng.integers(0, k, 2000), rng.integers(0, k, 2000)
    np.add.at(c, (t, p), 1)
    labels = [f"l{i}" for i in range(k)]
    pairs = m.most_confused(c, labels, top=None)
    off = c.copy()
    np.fill_diagonal(off, 0)
    cells = [(-off[i, j], i, j) for i in range(k) for j in range(k) if off[i, j]]
    assert [(p.true, p.predicted, p.count) for p in pairs] == [
        (labels[i], labels[j], -neg) for neg, i, j in sorted(cells)
    ]
    assert [str(x) for x in m.most_confused(c, labels, top=3)] == [str(x) for x in pairs[:3]]


def test_object_labels_are_coded_by_their_text_like_a_per_row_reference():
    from nbcli.reports.metrics import encode_labels, label_key

    rng = np.random.default_rng(0)
    pool = np.array([1, 1.0, True, "1", "x", "a", 2, 2.5, "2", False, 0], dtype=object)
    y = pool[rng.integers(0, pool.size, 500)]
    coding = encode_labels(np.array([0, 1, 2]), y)
    text = [label_key(label) for label in coding.labels]
    assert len(set(text)) == len(text)
    assert [text[c] for c in coding.codes] == [label_key(v) for v in y]
    assert coding.labels[:3] == [0, 1, 2]
    strings = np.array(["b", "c", "b", "zz"], dtype=object)
    coding = encode_labels(np.array(["a", "b"]), strings)
    assert coding.labels == ["a", "b", "c", "zz"] and coding.codes.tolist() == [1, 2, 1, 3]
