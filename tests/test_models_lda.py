"""LinearDiscriminantAnalysis: float32 input as scikit-learn's svd solver keeps it.

scikit-learn's LDA (svd solver) keeps its fitted arrays in float32 on
float32 input and scores in float32; nbcli does the same for every solver
(every solver gives the same model), computing in float64 from float64
statistics and rounding once.
"""

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn import datasets  # noqa: E402
from sklearn import discriminant_analysis as sk_da  # noqa: E402

from nbcli.models import LinearDiscriminantAnalysis  # noqa: E402

EPS32 = float(np.finfo(np.float32).eps)
ATTRS = ("coef_", "intercept_", "means_", "priors_", "xbar_", "scalings_")


@pytest.mark.parametrize("shrinkage", [None, "auto"])
def test_float32_input_gives_float32_attributes_and_posteriors(shrinkage):
    X, y = datasets.load_wine(return_X_y=True)
    X32 = X.astype(np.float32)
    solver = "svd" if shrinkage is None else "eigen"
    ours = LinearDiscriminantAnalysis(solver=solver, shrinkage=shrinkage).fit(X32, y)
    for attr in ATTRS + ("covariance_",):
        assert getattr(ours, attr).dtype == np.float32, attr
    for method in ("predict_proba", "predict_log_proba", "decision_function", "transform"):
        assert getattr(ours, method)(X32).dtype == np.float32, method
    exact = LinearDiscriminantAnalysis(solver=solver, shrinkage=shrinkage).fit(
        X32.astype(np.float64), y
    )
    assert exact.coef_.dtype == np.float64
    # Rounding coef_ and intercept_ moves each score by about eps32 times the
    # sum of |coef_ x| terms; the posteriors by at most that.
    terms = np.abs(X @ exact.coef_.T).max() + np.abs(exact.intercept_).max()
    np.testing.assert_allclose(
        ours.predict_proba(X32), exact.predict_proba(X32), rtol=0, atol=8 * EPS32 * terms
    )
    if shrinkage is None:
        theirs = sk_da.LinearDiscriminantAnalysis().fit(X32, y)
        assert theirs.coef_.dtype == np.float32
        np.testing.assert_allclose(
            ours.predict_proba(X32), theirs.predict_proba(X32), rtol=0, atol=64 * EPS32 * terms
        )
