"""scikit-learn's own estimator checks, run on the five nbcli estimators.

They follow scikit-learn's conventions (``get_params``/``set_params``,
``classes_``, ``n_features_in_``, ``feature_names_in_``, sample weights,
error messages, tags) without importing scikit-learn themselves.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.exceptions import DataConversionWarning as SklearnDataConversionWarning  # noqa: E402
from sklearn.exceptions import NotFittedError as SklearnNotFittedError  # noqa: E402
from sklearn.utils import get_tags  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402
from sklearn.utils.validation import check_is_fitted  # noqa: E402

from nbcli.models import (  # noqa: E402
    BernoulliNB,
    GaussianNB,
    LinearDiscriminantAnalysis,
    MultinomialNB,
    NotFittedError,
    QuadraticDiscriminantAnalysis,
)

ESTIMATORS = [
    GaussianNB(),
    MultinomialNB(),
    # binarize=None (the default) refuses anything but 0/1 features, which
    # the checks' random data never are; 0.0 is scikit-learn's own default.
    BernoulliNB(binarize=0.0),
    LinearDiscriminantAnalysis(),
    # Several checks fit on fewer rows per class than features; regularising
    # keeps those covariances invertible, as the checks expect.
    QuadraticDiscriminantAnalysis(reg_param=0.1),
]

# Checks that fail on purpose, by estimator, with the reason. None do today;
# every check must pass.
EXPECTED_FAILURES: dict[str, dict[str, str]] = {}


def _expected_failures(estimator) -> dict[str, str]:
    return EXPECTED_FAILURES.get(type(estimator).__name__, {})


with warnings.catch_warnings():
    # Deliberate: the estimators follow the conventions without scikit-learn's base class.
    warnings.filterwarnings(
        "ignore", message=".*does not inherit from `sklearn.base.BaseEstimator`"
    )
    SKLEARN_CHECKS = parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures)


@SKLEARN_CHECKS
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_tags_follow_sklearn_naive_bayes():
    """The tags scikit-learn gives its own estimators of the same kind."""
    assert get_tags(MultinomialNB()).input_tags.positive_only
    assert get_tags(MultinomialNB()).classifier_tags.poor_score
    assert get_tags(BernoulliNB()).classifier_tags.poor_score
    assert not get_tags(BernoulliNB()).input_tags.positive_only
    for est in (GaussianNB(), LinearDiscriminantAnalysis(), QuadraticDiscriminantAnalysis()):
        tags = get_tags(est)
        assert tags.estimator_type == "classifier" and tags.target_tags.required
        assert not tags.input_tags.positive_only and not tags.classifier_tags.poor_score
        assert not tags.input_tags.allow_nan and not tags.input_tags.sparse


def test_unfitted_error_is_both_nbcli_and_sklearn():
    model = GaussianNB()
    with pytest.raises(NotFittedError) as info:
        model.predict(np.zeros((1, 2)))
    assert isinstance(info.value, SklearnNotFittedError)
    assert "not fitted yet" in str(info.value)
    # The class made at run time pickles as nbcli's own (joblib workers pickle errors).
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is NotFittedError and again.args == info.value.args
    with pytest.raises(SklearnNotFittedError):
        check_is_fitted(model)
    model.fit(np.array([[0.0], [1.0], [0.1], [1.1]]), [0, 1, 0, 1])
    check_is_fitted(model)


def test_column_vector_labels_warn_and_fit_like_flat_ones():
    X = np.array([[0.0, 1], [0.2, 1.1], [3, 0], [3.1, 0.2]])
    y = np.array([0, 0, 1, 1])
    with pytest.warns(SklearnDataConversionWarning, match="column-vector y"):
        column = GaussianNB().fit(X, y[:, None])
    flat = GaussianNB().fit(X, y)
    np.testing.assert_array_equal(column.predict_proba(X), flat.predict_proba(X))


def test_all_zero_sample_weights_are_refused():
    X = np.array([[0.0], [1.0], [0.1], [1.1]])
    for est in ESTIMATORS:
        with pytest.raises(ValueError, match="Sample weights must contain at least one non-zero"):
            type(est)(**est.get_params()).fit(np.abs(X), [0, 1, 0, 1], sample_weight=np.zeros(4))


def test_the_models_do_not_import_sklearn():
    """Without scikit-learn loaded, the plain nbcli classes are raised and
    warned with, and nothing pulls scikit-learn in."""
    code = (
        "import sys, warnings, numpy as np\n"
        "from nbcli.models import GaussianNB, NotFittedError\n"
        "from nbcli.models._validation import DataConversionWarning\n"
        "try:\n"
        "    GaussianNB().predict(np.zeros((1, 1)))\n"
        "except NotFittedError as e:\n"
        "    assert type(e) is NotFittedError, type(e).__mro__\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    GaussianNB().fit(np.array([[0.0], [1], [0.2], [1.2]]), np.array([[0], [1], [0], [1]]))\n"
        "assert [type(w.message) for w in caught] == [DataConversionWarning], caught\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'sklearn'], 'sklearn imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
