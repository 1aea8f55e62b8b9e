"""ONNX graphs of fitted models, built with the ``onnx`` package (the ``onnx``
extra) from the scoring form a model declares
(:meth:`nbcli.models._base.BayesClassifier.scoring_form`).

The graph takes one float64 input ``X`` of shape (N, n_features), the
model's features in the model file's order (``feature_names`` in the
graph's metadata), a missing cell as NaN, left out as nbcli leaves it out
(a model with categorical columns takes one input a column instead, see
:func:`_inputs`);
it outputs ``label`` (N,) and ``probabilities`` (N, n_classes), the
classes in nbcli's order (``classes`` in the metadata). Everything is
computed in float64 with standard operators (opset 17), so any ONNX
runtime serves it: the TF-IDF weighting of text counts and the model's
projection (``pca``, ``standardize``) where it has them, ``jll`` from the
form, then ``Softmax`` and ``ArgMax``. A model that leaves rows with a
missing cell out (``missing_policy == "drop"``) gives them NaN posteriors.

Every graph is run on synthetic rows before it is returned and compared
with the model's own posteriors (:func:`check_graph`). That check, rather
than a list of the settings each form covers, is what keeps a setting added
later from being exported wrong: settings live in hyperparameters, in the
text settings and in fitted state (a projection), and a list could only
name the ones known when it was written.
"""

from __future__ import annotations

import json

import numpy as np

from nbcli.errors import NbcliError
from nbcli.io.extras import require
from nbcli.models._forms import NoForm

__all__ = ["OPSET", "check_graph", "model_to_onnx"]


def _builders() -> dict:
    from nbcli.models._forms import (
        AffineForm,
        CategoryForm,
        CompositeForm,
        DiagonalGaussianForm,
        IntervalForm,
        KernelDensityForm,
        QuadraticForm,
    )

    return {
        KernelDensityForm: lambda *a: _kernel_density(*a),
        IntervalForm: lambda *a: _intervals(*a),
        AffineForm: lambda *a: _affine(*a),
        DiagonalGaussianForm: lambda *a: _diagonal_gaussian(*a),
        QuadraticForm: lambda *a: _quadratic(*a),
        CategoryForm: lambda *a: _categories(*a),
        CompositeForm: lambda *a: _composite(*a),
    }


OPSET = 17
_IR_VERSION = 8  # what opset 17 came with: runtimes since ONNX Runtime 1.13 read it


class _Graph:
    """Nodes and constants of a graph being built, with fresh names."""

    def __init__(self, onnx):
        self.onnx = onnx
        self.nodes: list = []
        self.initializers: list = []
        self._n = 0

    def name(self, stem: str) -> str:
        self._n += 1
        return f"{stem}_{self._n}"

    def const(self, array, stem: str = "c") -> str:
        name = self.name(stem)
        array = np.asarray(array)
        if array.dtype.kind in "US":
            tensor = self.onnx.helper.make_tensor(
                name,
                self.onnx.TensorProto.STRING,
                array.shape,
                [str(v).encode("utf-8") for v in array.ravel()],
            )
        else:
            tensor = self.onnx.numpy_helper.from_array(array, name)
        self.initializers.append(tensor)
        return name

    def op(self, kind: str, *inputs: str, **attributes) -> str:
        out = self.name(kind.lower())
        self.nodes.append(self.onnx.helper.make_node(kind, list(inputs), [out], **attributes))
        return out


def _f64(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


def _affine(g: _Graph, form, x: str, missing: str) -> str:
    if form.threshold is not None:
        # NaN > t is false: a missing cell gives 0, as nbcli's binarising does.
        features = g.op("Cast", g.op("Greater", x, g.const(_f64(form.threshold))), to=11)
    else:
        shifted = x if form.centre is None else g.op("Sub", x, g.const(_f64(form.centre)))
        features = g.op("Where", missing, g.const(_f64(0.0)), shifted)
    jll = g.op("MatMul", features, g.const(_f64(form.coef).T.copy(), "coef_t"))
    if form.missing_coef is not None:
        holes = g.op("Cast", missing, to=11)
        jll = g.op("Add", jll, g.op("MatMul", holes, g.const(_f64(form.missing_coef).T.copy())))
    return g.op("Add", jll, g.const(_f64(form.intercept), "intercept"))


def _diagonal_gaussian(g: _Graph, form, x: str, missing: str) -> str:
    axis1 = g.const(np.array([1], dtype=np.int64))
    rows = g.op("Unsqueeze", x, axis1)  # (N, 1, d)
    diff = g.op("Sub", rows, g.const(_f64(form.theta)[None], "theta"))  # (N, K, d)
    z = g.op("Mul", diff, g.const(_f64(form.inv_sd)[None], "inv_sd"))
    terms = g.op(
        "Add",
        g.op("Mul", g.op("Mul", z, z), g.const(_f64(-0.5))),
        g.const(_f64(form.log_norm)[None], "log_norm"),
    )
    terms = g.op("Where", g.op("Unsqueeze", missing, axis1), g.const(_f64(0.0)), terms)
    summed = g.op("ReduceSum", terms, g.const(np.array([2], dtype=np.int64)), keepdims=0)
    return g.op("Add", summed, g.const(_f64(form.log_prior), "log_prior"))


def _quadratic(g: _Graph, form, x: str, missing: str) -> str:
    rows = g.op("Unsqueeze", x, g.const(np.array([0], dtype=np.int64)))  # (1, N, d)
    means = _f64(form.means)[:, None, :]  # (K, 1, d)
    diff = g.op("Sub", rows, g.const(means, "means"))  # (K, N, d)
    whiten_t = np.ascontiguousarray(np.transpose(_f64(form.whiten), (0, 2, 1)))
    z = g.op("MatMul", diff, g.const(whiten_t, "whiten_t"))  # (K, N, d)
    squares = g.op(
        "ReduceSum", g.op("Mul", z, z), g.const(np.array([2], dtype=np.int64)), keepdims=0
    )
    jll = g.op("Transpose", squares, perm=[1, 0])  # (N, K)
    return g.op("Add", g.op("Mul", jll, g.const(_f64(-0.5))), g.const(_f64(form.const), "const"))


def _categories(g: _Graph, form, x: str, missing: str) -> str:
    n_cat = np.asarray(form.n_categories, dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(n_cat)[:-1])).astype(np.float64)
    # A zero row at the end takes every missing or unknown code.
    table = np.vstack([_f64(form.log_prob).T, np.zeros((1, form.log_prob.shape[0]))])
    last = _f64(table.shape[0] - 1)
    in_range = g.op(
        "And",
        g.op("GreaterOrEqual", x, g.const(_f64(0.0))),
        g.op("Less", x, g.const(n_cat.astype(np.float64))),
    )
    # A code with a fraction is no category: left out, as an unknown code,
    # not truncated to the category below it by the cast.
    whole = g.op("Equal", g.op("Floor", x), x)
    known = g.op("And", g.op("Not", missing), g.op("And", in_range, whole))
    index = g.op("Where", known, g.op("Add", x, g.const(offsets)), g.const(last))
    terms = g.op("Gather", g.const(table, "log_prob"), g.op("Cast", index, to=7))  # (N, c, K)
    return g.op("ReduceSum", terms, g.const(np.array([1], dtype=np.int64)), keepdims=0)


def _intervals(g: _Graph, form, x: str, missing: str) -> str:
    from nbcli.models._forms import CategoryForm

    cuts = _f64(form.cuts)
    if cuts.shape[1] == 0:
        codes = g.op("Mul", x, g.const(_f64(0.0)))  # one interval; NaN stays NaN
    else:
        # The number of cut points below x: searchsorted(cuts, x, side="left").
        rows = g.op("Unsqueeze", x, g.const(np.array([2], dtype=np.int64)))  # (N, d, 1)
        above = g.op("Cast", g.op("Greater", rows, g.const(cuts[None], "cuts")), to=11)
        codes = g.op("ReduceSum", above, g.const(np.array([2], dtype=np.int64)), keepdims=0)
    table = CategoryForm(form.log_prob, form.n_intervals)
    return _categories(g, table, codes, missing)


def _kernel_density(g: _Graph, form, x: str, missing: str) -> str:
    """Log-sum-exp over the centres with the largest term taken out, as NumPy's
    evaluation takes it out (a row far from every centre keeps a finite term)."""
    centres = _f64(form.centres)  # (d, K, M)
    h = _f64(form.bandwidth).T[:, :, None]  # (d, K, 1)
    rows = g.op("Unsqueeze", x, g.const(np.array([2, 3], dtype=np.int64)))  # (N, d, 1, 1)
    z = g.op("Div", g.op("Sub", rows, g.const(centres, "centres")), g.const(h, "bandwidth"))
    t = g.op(
        "Add",
        g.const(_f64(form.log_weight), "log_weight"),
        g.op("Mul", g.op("Mul", z, z), g.const(_f64(-0.5))),
    )  # (N, d, K, M)
    top = g.op("ReduceMax", t, axes=[3], keepdims=1)
    spread = g.op("Exp", g.op("Sub", t, top))
    total = g.op("ReduceSum", spread, g.const(np.array([3], dtype=np.int64)), keepdims=0)
    top = g.op("Squeeze", top, g.const(np.array([3], dtype=np.int64)))
    shift = -np.log(_f64(form.bandwidth)).T - 0.5 * np.log(2.0 * np.pi)  # (d, K)
    terms = g.op("Add", g.op("Add", top, g.op("Log", total)), g.const(shift, "log_norm"))
    axis2 = g.const(np.array([2], dtype=np.int64))
    terms = g.op("Where", g.op("Unsqueeze", missing, axis2), g.const(_f64(0.0)), terms)
    return g.op("ReduceSum", terms, g.const(np.array([1], dtype=np.int64)), keepdims=0)


def _composite(g: _Graph, form, x: str, missing: str) -> str:
    jll = g.const(_f64(form.log_prior), "log_prior")
    for columns, part in form.parts:
        at = g.const(np.asarray(columns, dtype=np.int64), "columns")
        sub = g.op("Gather", x, at, axis=1)
        holes = g.op("Gather", missing, at, axis=1)
        jll = g.op("Add", jll, _BUILDERS[type(part)](g, part, sub, holes))
    return jll


def _softplus(g: _Graph, z: str) -> str:
    """``log(1 + exp(z))``, as ``max(z, 0) + log(1 + exp(-|z|))``."""
    tail = g.op("Exp", g.op("Neg", g.op("Abs", z)))
    return g.op("Add", g.op("Relu", z), g.op("Log", g.op("Add", tail, g.const(_f64(1.0)))))


def _calibrated(g: _Graph, calibrator, jll: str, n_classes: int) -> str:
    """Scores whose softmax is the calibrated posteriors (and argmax the label)."""
    from nbcli.calibration import IsotonicCalibration, TemperatureScaling

    if isinstance(calibrator, IsotonicCalibration):
        return _isotonic(g, calibrator, jll)
    if isinstance(calibrator, TemperatureScaling):
        # softmax(log_softmax(jll) / T) is softmax(jll / T): the log-sum-exp is
        # the same for every class.
        return g.op("Div", jll, g.const(_f64(calibrator.temperature_), "temperature"))
    # Platt scaling of the one-vs-rest log-odds log p_k - log(1 - p_k), with
    # log(1 - p_k) the log-sum-exp of the other classes (precise near p_k = 1).
    logp = g.op("LogSoftmax", jll, axis=1)
    others = np.where(np.eye(n_classes, dtype=bool), -np.inf, 0.0)
    spread = g.op(
        "Add", g.op("Unsqueeze", logp, g.const(np.array([1], dtype=np.int64))), g.const(others)
    )
    # Opset 17 takes this reduction's axes as an attribute (ReduceSum's as an input).
    rest = g.op("ReduceLogSumExp", spread, axes=[2], keepdims=0)
    f = g.op("Sub", logp, rest)
    a, b = _f64(calibrator.a_), _f64(calibrator.b_)
    if n_classes == 2:
        f = g.op("Gather", f, g.const(np.array([1], dtype=np.int64)), axis=1)  # (N, 1)
        u = g.op("Add", g.op("Mul", f, g.const(a)), g.const(b))
        both = g.op("Concat", g.op("Neg", u), u, axis=1)
        return g.op("Neg", _softplus(g, both))
    u = g.op("Mul", f, g.const(a))
    u = g.op("Where", g.op("IsNaN", u), g.const(_f64(0.0)), u)  # 0 * inf: a flat sigmoid
    return g.op("Neg", _softplus(g, g.op("Add", u, g.const(b))))


def _interp(g: _Graph, p: str, x: np.ndarray, y: np.ndarray) -> str:
    """``numpy.interp(p, x, y)`` of a column ``p`` (N, 1): linear between the
    breakpoints, ``y[0]`` below the first and ``y[-1]`` from the last on."""
    x, y = _f64(x), _f64(y)
    if len(x) == 1:
        return g.op("Add", g.op("Mul", p, g.const(_f64(0.0))), g.const(y))
    dx = np.diff(x)
    slope = np.divide(np.diff(y), dx, out=np.zeros_like(dx), where=dx != 0)
    # The segment: the last breakpoint at or below p, among the first m - 1.
    at_or_below = g.op("Cast", g.op("GreaterOrEqual", p, g.const(x[None, :-1])), to=7)
    count = g.op("ReduceSum", at_or_below, g.const(np.array([1], dtype=np.int64)), keepdims=1)
    j = g.op(
        "Max",
        g.op("Sub", count, g.const(np.array(1, dtype=np.int64))),
        g.const(np.array(0, dtype=np.int64)),
    )
    x0 = g.op("Gather", g.const(x[:-1]), j)
    y0 = g.op("Gather", g.const(y[:-1]), j)
    k = g.op("Gather", g.const(slope), j)
    inside = g.op("Add", g.op("Mul", k, g.op("Sub", p, x0)), y0)
    below = g.op("Less", p, g.const(x[:1]))
    beyond = g.op("GreaterOrEqual", p, g.const(x[-1:]))
    value = g.op("Where", beyond, g.const(y[-1:]), inside)
    return g.op("Where", below, g.const(y[:1]), value)


def _isotonic(g: _Graph, calibrator, jll: str) -> str:
    """Scores whose softmax is the isotonic maps' renormalised output."""
    p = g.op("Softmax", jll, axis=1)
    columns = []
    for k, (x, y) in enumerate(calibrator.breakpoints_):
        pk = g.op("Gather", p, g.const(np.array([k], dtype=np.int64)), axis=1)  # (N, 1)
        columns.append(_interp(g, pk, x, y))
    q = g.op("Concat", *columns, axis=1)
    mapped = g.op("ReduceSum", q, g.const(np.array([1], dtype=np.int64)), keepdims=1)
    # A row whose maps all give 0 (maps stored before the floor) keeps p.
    dead = g.op("LessOrEqual", mapped, g.const(_f64(0.0)))
    q = g.op("Where", dead, p, q)
    mapped = g.op(
        "Where",
        dead,
        g.op("ReduceSum", p, g.const(np.array([1], dtype=np.int64)), keepdims=1),
        mapped,
    )
    return g.op("Log", g.op("Div", q, mapped))


def _tfidf(g: _Graph, weighting, column: int, counts: str) -> str:
    """A text column's counts weighted as :meth:`nbcli.text.weighting.TfidfWeighting.transform`
    weights them: sublinear tf, times idf, then the row over its norm (a zero row kept)."""
    zero = g.const(_f64(0.0))
    present = g.op("Greater", counts, zero)
    tf = counts
    if weighting.sublinear_tf:
        # log(0) is never taken where it counts: absent terms stay 0.
        safe = g.op("Where", present, counts, g.const(_f64(1.0)))
        tf = g.op("Where", present, g.op("Add", g.op("Log", safe), g.const(_f64(1.0))), zero)
    idf = _f64(weighting.idf(column))
    # Only the terms present are weighted (an idf of inf times 0 is no term).
    idf = np.where(np.isfinite(idf), idf, 0.0)
    weighted = g.op("Where", present, g.op("Mul", tf, g.const(idf, "idf")), zero)
    if weighting.norm is None:
        return weighted
    axis = g.const(np.array([1], dtype=np.int64))
    if weighting.norm == "l2":
        norm = g.op("Sqrt", g.op("ReduceSum", g.op("Mul", weighted, weighted), axis, keepdims=1))
    else:
        norm = g.op("ReduceSum", g.op("Abs", weighted), axis, keepdims=1)
    norm = g.op("Where", g.op("Equal", norm, zero), g.const(_f64(1.0)), norm)
    return g.op("Div", weighted, norm)


def _projected(g: _Graph, projection, x: str) -> str:
    """Rows as the model sees them: ``((x - centre) / scale) @ components``
    (:class:`nbcli.models._projection.Projection`); NaN stays NaN."""
    z = g.op("Sub", x, g.const(_f64(projection.centre), "centre"))
    if np.any(_f64(projection.scale) != 1.0):
        z = g.op("Div", z, g.const(_f64(projection.scale), "scale"))
    if projection.components is not None:
        z = g.op("MatMul", z, g.const(_f64(projection.components), "components"))
    return z


def _inputs(g: _Graph, mf, onnx) -> tuple[list, str]:
    """The graph's inputs and the float64 matrix (N, d) made from them.

    A model of numeric columns takes one input ``X``. Any other takes one
    input a column, named as the column: float64 (N, 1) for a numeric one;
    text (N, 1) for a categorical one, whose values become the model's
    category codes (``ai.onnx.ml`` ``LabelEncoder``; a value the model does
    not know, or an empty one, is left out as a missing cell is); float64
    (N, V) for a text column, its documents' counts of the V terms of its
    vocabulary, in the vocabulary's order (the graph's ``text`` metadata).
    """
    columns = {c.get("name"): c for c in (mf.columns or [])}
    vocabularies = dict(mf.vocabularies or {})
    n_words = sum(len(v) for v in vocabularies.values())
    table = list(mf.feature_names)[: len(mf.feature_names) - n_words]
    categories = {n: columns.get(n, {}).get("categories") for n in table}
    d = len(mf.feature_names)
    if not vocabularies and not any(v is not None for v in categories.values()):
        return [onnx.helper.make_tensor_value_info("X", onnx.TensorProto.DOUBLE, ["N", d])], "X"
    inputs, pieces = [], []
    for name in table:
        values = categories[name]
        if values is None:
            inputs.append(
                onnx.helper.make_tensor_value_info(name, onnx.TensorProto.DOUBLE, ["N", 1])
            )
            pieces.append(name)
            continue
        inputs.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.STRING, ["N", 1]))
        code = g.name("code")
        g.nodes.append(
            onnx.helper.make_node(
                "LabelEncoder",
                [name],
                [code],
                domain="ai.onnx.ml",
                keys_strings=[str(v) for v in values],
                values_int64s=list(range(len(values))),
                default_int64=-1,
            )
        )
        as_float = g.op("Cast", code, to=11)
        nan = g.const(_f64(np.nan))
        pieces.append(g.op("Where", g.op("Less", as_float, g.const(_f64(0.0))), nan, as_float))
    order = list(mf.text.columns) if mf.text is not None else list(vocabularies)
    weighting = getattr(mf.text, "weighting", None)
    for j, name in enumerate(order):
        size = len(vocabularies[name])
        inputs.append(
            onnx.helper.make_tensor_value_info(name, onnx.TensorProto.DOUBLE, ["N", size])
        )
        pieces.append(name if weighting is None else _tfidf(g, weighting, j, name))
    return inputs, (pieces[0] if len(pieces) == 1 else g.op("Concat", *pieces, axis=1))


def model_to_onnx(mf) -> bytes:
    """The ONNX graph of a model file's model, serialised.

    Parameters
    ----------
    mf : nbcli.io.modelfile.ModelFile

    Returns
    -------
    bytes
        A checked ONNX model (``onnx.checker.check_model``).

    Raises
    ------
    NbcliError
        For a model whose type declares no scoring form or whose settings
        have none (:class:`~nbcli.models._forms.NoForm`, naming the setting),
        an unknown calibrator, a graph whose posteriors differ from the
        model's (:func:`check_graph`), or a missing ``onnx`` package.
    """
    onnx = require("onnx", "onnx", "exporting to ONNX")
    from nbcli.calibration import IsotonicCalibration, SigmoidCalibration, TemperatureScaling

    model = mf.model
    if mf.calibrator is not None and not isinstance(
        mf.calibrator, (TemperatureScaling, SigmoidCalibration, IsotonicCalibration)
    ):
        raise NbcliError(
            f"the model's calibrator ({mf.calibrator.kind}) is not written to ONNX yet; "
            "score this model with nbcli"
        )
    form = model.scoring_form()
    if isinstance(form, NoForm):
        raise NbcliError(form.reason)
    if type(form) not in _BUILDERS or any(
        type(part) not in _BUILDERS for _, part in getattr(form, "parts", ())
    ):
        raise NbcliError(
            f"the {model.name} model cannot be exported to ONNX yet; exported are the "
            "models whose scores are affine, Gaussian or categorical in the features"
        )
    classes = np.asarray(mf.classes)
    g = _Graph(onnx)
    inputs, x = _inputs(g, mf, onnx)
    holes = g.op("IsNaN", x)
    projection = getattr(model, "projection_", None)
    if projection is not None:
        x = _projected(g, projection, x)
    missing = g.op("IsNaN", x) if projection is not None else holes
    jll = _BUILDERS[type(form)](g, form, x, missing)
    if model.missing_policy == "drop":
        # A row with a missing cell gets NaN posteriors, as nbcli gives it.
        any_hole = g.op(
            "ReduceMax",
            g.op("Cast", holes, to=11),
            axes=[1],
            keepdims=1,
        )
        jll = g.op(
            "Where", g.op("Greater", any_hole, g.const(_f64(0.0))), g.const(_f64(np.nan)), jll
        )
    if mf.calibrator is not None:
        jll = _calibrated(g, mf.calibrator, jll, len(mf.classes))
    g.nodes.append(onnx.helper.make_node("Softmax", [jll], ["probabilities"], axis=1))
    best = g.op("ArgMax", jll, axis=1, keepdims=0)
    if classes.dtype.kind in "biu":
        labels, label_type = classes.astype(np.int64), onnx.TensorProto.INT64
    else:
        labels, label_type = np.asarray([str(c) for c in classes]), onnx.TensorProto.STRING
    g.nodes.append(onnx.helper.make_node("Gather", [g.const(labels, "classes"), best], ["label"]))
    graph = onnx.helper.make_graph(
        g.nodes,
        f"nbcli_{model.name}",
        inputs,
        [
            onnx.helper.make_tensor_value_info("label", label_type, ["N"]),
            onnx.helper.make_tensor_value_info(
                "probabilities", onnx.TensorProto.DOUBLE, ["N", len(classes)]
            ),
        ],
        g.initializers,
    )
    out = onnx.helper.make_model(
        graph,
        producer_name="nbcli",
        opset_imports=[
            onnx.helper.make_opsetid("", OPSET),
            onnx.helper.make_opsetid("ai.onnx.ml", 2),
        ],
    )
    out.ir_version = _IR_VERSION
    from nbcli import __version__

    meta = {
        "model": model.name,
        "feature_names": json.dumps(list(mf.feature_names)),
        "classes": json.dumps([c.item() if hasattr(c, "item") else c for c in classes]),
        "target": json.dumps(mf.target),
        "nbcli_version": __version__,
    }
    if mf.vocabularies:
        # How documents become the counts the text inputs take, and the terms.
        meta["text"] = json.dumps(mf.text.to_metadata() if mf.text is not None else None)
        meta["vocabularies"] = json.dumps({k: list(v) for k, v in mf.vocabularies.items()})
    onnx.helper.set_model_props(out, meta)
    onnx.checker.check_model(out, full_check=True)
    data = out.SerializeToString()
    check_graph(mf, data)
    return data


def _synthetic_rows(mf, inputs, zeros: bool):
    """Feeds for the graph's ``inputs`` and the same rows as the model's
    features: every cell 0 or 1 (a value every column kind takes; category
    codes and text counts drawn within range), or all 0 with ``zeros``."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    n = 16
    columns = {c.get("name"): c for c in (mf.columns or [])}
    vocabularies = dict(mf.vocabularies or {})
    order = list(mf.text.columns) if mf.text is not None else list(vocabularies)
    weighting = getattr(mf.text, "weighting", None)

    def draw(high, shape):
        return np.zeros(shape) if zeros else rng.integers(0, high, shape).astype(np.float64)

    feeds, table, words = {}, [], []
    for item in inputs:
        name = item.name
        if name == "X":
            X = draw(2, (n, len(mf.feature_names)))
            return {"X": X}, X
        if name in vocabularies and name in order:
            counts = draw(3, (n, len(vocabularies[name])))
            feeds[name] = counts
            j = order.index(name)
            weighted = counts if weighting is None else weighting.transform(sp.csr_array(counts), j)
            words.append(np.asarray(sp.csr_array(weighted).toarray(), dtype=np.float64))
            continue
        values = columns.get(name, {}).get("categories")
        if values is None:
            cell = draw(2, (n, 1))
            feeds[name] = cell
            table.append(cell)
        else:
            codes = draw(len(values), (n, 1)).astype(np.int64)
            feeds[name] = np.asarray([str(values[c]) for c in codes.ravel()], dtype=object)[:, None]
            table.append(codes.astype(np.float64))
    return feeds, np.hstack(table + words)


def _run(data: bytes, feeds: dict) -> np.ndarray:
    """The graph's ``probabilities`` on ``feeds``: by onnxruntime where it is
    installed, else by the ``onnx`` package's reference evaluator."""
    if not _has_onnxruntime():
        from onnx.reference import ReferenceEvaluator

        # Its NumPy warnings on extreme rows are not the user's: check_graph
        # judges what it gives.
        with np.errstate(all="ignore"):
            outputs: list = list(ReferenceEvaluator(data).run(["probabilities"], feeds))
        return np.asarray(outputs[0])
    import onnxruntime

    session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    return np.asarray(session.run(["probabilities"], feeds)[0])


def _has_onnxruntime() -> bool:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def check_graph(mf, data: bytes) -> None:
    """Refuse a graph whose posteriors differ from the model's own.

    The graph is run on synthetic rows and its log posteriors compared with
    :meth:`nbcli.io.modelfile.ModelFile.predict_log_proba` of the same rows
    (to 1e-6 relative, floored at ``log 1e-300``): a setting that changes
    scoring but that the graph does not express (one added after this
    exporter) makes the export fail instead of writing a wrong graph.

    Raises
    ------
    NbcliError
        Where the posteriors differ.
    """
    onnx = require("onnx", "onnx", "exporting to ONNX")
    inputs = onnx.load_from_string(data).graph.input
    for zeros in (False, True):
        feeds, X = _synthetic_rows(mf, inputs, zeros)
        try:
            expected = mf.predict_log_proba(X)
        except ValueError:
            continue  # a value this model does not take: try the rows of zeros
        # Rows whose posterior nbcli finds undefined (NaN) are not compared.
        defined = ~np.isnan(expected).any(axis=1)
        if not defined.any():
            continue
        got = _run(data, feeds)
        floor = np.log(1e-300)
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.maximum(np.log(got), floor)
        b = np.maximum(expected, floor)
        if a.shape == b.shape and np.allclose(a[defined], b[defined], rtol=1e-6, atol=1e-9):
            return
        raise NbcliError(
            f"the ONNX graph of this {mf.model.name} model does not reproduce its posteriors "
            "(a setting the exporter does not cover); score this model with nbcli"
        )
    raise NbcliError(
        f"the ONNX graph of this {mf.model.name} model could not be checked against the model "
        "(it takes no row of 0/1 values); score this model with nbcli"
    )


_BUILDERS = _builders()
