"""ONNX graphs of fitted models, built with the ``onnx`` package (the ``onnx``
extra) from the scoring form a model declares
(:meth:`nbcli.models._base.BayesClassifier.scoring_form`).

The graph takes one float64 input ``X`` of shape (N, n_features), the
model's features in the model file's order (``feature_names`` in the
graph's metadata), a missing cell as NaN, left out as nbcli leaves it out;
it outputs ``label`` (N,) and ``probabilities`` (N, n_classes), the
classes in nbcli's order (``classes`` in the metadata). Everything is
computed in float64 with standard operators (opset 17), so any ONNX
runtime serves it: ``jll`` from the form, then ``Softmax`` and ``ArgMax``.
"""

from __future__ import annotations

import json

import numpy as np

from nbcli.errors import NbcliError
from nbcli.io.extras import require

__all__ = ["OPSET", "model_to_onnx"]

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
    var = _f64(form.var)
    terms = g.op(
        "Add",
        g.op("Mul", g.op("Mul", diff, diff), g.const((-0.5 / var)[None])),
        g.const((-0.5 * np.log(2.0 * np.pi * var))[None]),
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
        For a model whose type declares no scoring form, one with text
        columns or a calibrator (not exported yet), or a missing ``onnx``
        package.
    """
    from nbcli.models._forms import AffineForm, DiagonalGaussianForm, QuadraticForm

    onnx = require("onnx", "onnx", "exporting to ONNX")
    model = mf.model
    if mf.calibrator is not None:
        raise NbcliError(
            "the model has a calibrator, which ONNX export does not write yet; "
            "export the model before calibrate, or score it with nbcli"
        )
    if mf.vocabularies:
        raise NbcliError("the model has text columns, which ONNX export does not write yet")
    form = model.scoring_form()
    builders = {
        AffineForm: _affine,
        DiagonalGaussianForm: _diagonal_gaussian,
        QuadraticForm: _quadratic,
    }
    if type(form) not in builders:
        raise NbcliError(
            f"the {model.name} model cannot be exported to ONNX yet; exported are the "
            "models whose scores are affine or Gaussian in the features"
        )
    classes = np.asarray(mf.classes)
    d = len(mf.feature_names)
    g = _Graph(onnx)
    missing = g.op("IsNaN", "X")
    jll = builders[type(form)](g, form, "X", missing)
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
        [onnx.helper.make_tensor_value_info("X", onnx.TensorProto.DOUBLE, ["N", d])],
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
        opset_imports=[onnx.helper.make_opsetid("", OPSET)],
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
    onnx.helper.set_model_props(out, meta)
    onnx.checker.check_model(out, full_check=True)
    return out.SerializeToString()
