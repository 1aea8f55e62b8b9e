"""ROC and confusion plots: valid PNG/SVG files, legends, matplotlib imported lazily."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.naive_bayes import GaussianNB

from nbcli.errors import NbcliError
from nbcli.reports.ranking import roc_curves

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def iris_scores():
    X, y = load_iris(return_X_y=True)
    return y, GaussianNB().fit(X, y).predict_proba(X)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def _svg_root(path: Path):
    root = ET.fromstring(path.read_bytes())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return root


def test_roc_png_and_svg(tmp_path, iris_scores):
    pytest.importorskip("matplotlib")
    from nbcli.render.plot import plot_roc

    y, p = iris_scores
    curves = roc_curves(y, p)
    png = tmp_path / "m.roc.png"
    plot_roc(curves, ["setosa", "versicolor", "virginica"], png)
    width, height = _png_size(png.read_bytes())
    assert width > 300 and height > 300
    svg = tmp_path / "m.roc.SVG"
    # The JSON form of the curves draws the same plot.
    plot_roc([c.to_dict() for c in curves], [0, 1, 2], svg)
    _svg_root(svg)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["m.roc.SVG", "m.roc.png"]


def test_roc_legend_names_each_class_with_its_auc(iris_scores):
    pytest.importorskip("matplotlib")
    from nbcli.render.plot import roc_figure

    y, p = iris_scores
    keep = y != 2  # class 2 has no rows: listed, undefined
    curves = roc_curves(y[keep], p[keep])
    fig = roc_figure(curves, ["setosa", "versicolor", "virginica"])
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert texts[0] == "chance (AUC 0.5)"
    assert texts[1] == f"setosa (AUC {curves[0].area:.3f})"
    assert texts[3] == "virginica (AUC undefined)"
    drawn = [line for line in fig.axes[0].get_lines() if len(line.get_xdata())]
    assert len(drawn) == 3  # the diagonal and two classes
    np.testing.assert_array_equal(drawn[2].get_xdata(), curves[1].x)


def test_confusion_png_and_svg_with_counts(tmp_path):
    pytest.importorskip("matplotlib")
    from nbcli.render.plot import confusion_figure, plot_confusion

    matrix = np.array([[50, 0, 0], [0, 47, 3], [0, 4, 46]])
    png = tmp_path / "m.confusion.png"
    plot_confusion(matrix, ["a", "b", "c"], png)
    _png_size(png.read_bytes())
    svg = tmp_path / "m.confusion.svg"
    plot_confusion(matrix, ["a", "b", "c"], svg)
    _svg_root(svg)
    fig = confusion_figure(matrix, ["a", "b", "c"])
    cells = {(t.get_position(), t.get_text()) for t in fig.axes[0].texts}
    assert ((2, 1), "3") in cells and ((1, 2), "4") in cells and len(cells) == 9
    np.testing.assert_array_equal(fig.axes[0].images[0].get_array(), matrix)
    # Many classes: no per-cell text.
    big = confusion_figure(np.eye(40, dtype=int), range(40))
    assert len(big.axes[0].texts) == 0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda m: m.confusion_image(np.ones((2, 3)), ["a", "b"], ".png"), "square"),
        (lambda m: m.confusion_image(np.ones((2, 2)), ["a"], ".png"), "labels"),
        (lambda m: m.roc_image([{"fpr": [0, 1]}], ["a"], ".png"), "lacks"),
        (lambda m: m.roc_image([], ["a"], ".png"), "labels"),
    ],
)
def test_malformed_input(call, match):
    from nbcli.render import plot

    with pytest.raises(ValueError, match=match):
        call(plot)


def test_unknown_extension_refused_before_drawing(tmp_path):
    from nbcli.render.plot import plot_confusion, plot_roc

    with pytest.raises(NbcliError, match=r"\.pdf"):
        plot_confusion(np.eye(2), ["a", "b"], tmp_path / "c.pdf")
    with pytest.raises(NbcliError, match=r"\.jpg"):
        plot_roc([], [], tmp_path / "r.jpg")
    assert list(tmp_path.iterdir()) == []


def test_without_matplotlib(tmp_path, monkeypatch):
    from nbcli.render.plot import plot_confusion, plot_roc

    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(NbcliError, match=r"pip install 'nbcli\[plot\]'"):
        plot_confusion(np.eye(2), ["a", "b"], tmp_path / "c.png")
    with pytest.raises(NbcliError, match=r"pip install 'nbcli\[plot\]'"):
        plot_roc([{"fpr": [0, 1], "tpr": [0, 1], "area": 0.5}], ["a"], tmp_path / "r.svg")
    assert list(tmp_path.iterdir()) == []


def test_importing_the_plot_module_does_not_import_matplotlib():
    code = (
        "import sys, nbcli.render.plot, nbcli.reports.ranking, nbcli.reports.delong; "
        "sys.exit(any(m.split('.')[0] == 'matplotlib' for m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    assert subprocess.run([sys.executable, "-c", code], env=env).returncode == 0
