"""scikit-learn's own estimator checks, run on every model type of the registry.

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
    MODELS,
    BernoulliNB,
    CategoricalNB,
    ComplementNB,
    GaussianNB,
    LinearDiscriminantAnalysis,
    MixedNB,
    MultinomialNB,
    NotFittedError,
    QuadraticDiscriminantAnalysis,
)
from tests.declared import as_declared, spec_names  # noqa: E402

#: Settings the checks need, for the models that declare them: several checks
#: fit on fewer rows per class than features, and a little regularisation keeps
#: those covariances invertible, as the checks expect.
CHECK_SETTINGS = {"reg_param": 0.1}


def _estimators() -> list:
    """Every model type of the registry at its defaults (with the settings above
    where it declares them), then once under each other missing-cell policy it
    declares."""
    out = []
    for cls in MODELS.values():
        base = {k: v for k, v in CHECK_SETTINGS.items() if k in spec_names(cls)}
        out.append(cls(**base))
        for spec in cls.hyperparameters:
            if spec.name == "missing":
                out += [cls(**base, missing=o) for o in spec.options if o != spec.default]
    return out


ESTIMATORS = _estimators()

# Checks that fail on purpose, with the reason, by what the model declares.
# scikit-learn's CategoricalNB truncates real values to integer codes
# (2.7 -> 2); a model whose every column is categorical refuses them as codes,
# so the checks that fit on uniform random reals cannot pass.
_REAL_VALUED = "fits on uniform random reals, which a model of category codes refuses"
CATEGORY_CODE_FAILURES = {
    "check_sample_weight_equivalence_on_dense_data": _REAL_VALUED,
    "check_classifiers_one_label_sample_weights": _REAL_VALUED,
}
# With missing="drop", a row with a NaN cell gets no label (None), which the
# pickling check, comparing predictions on data with NaN put in, cannot subtract.
_DROPPED = "predict leaves rows with a missing cell unlabelled (None) under missing='drop'"
DROP_FAILURES = {
    "check_estimators_pickle": _DROPPED,
    "check_estimators_pickle(readonly_memmap=True)": _DROPPED,
}


def _expected_failures(estimator) -> dict[str, str]:
    expected: dict[str, str] = {}
    if set(type(estimator).feature_kinds) == {"categorical"}:
        expected.update(CATEGORY_CODE_FAILURES)
    if getattr(estimator, "missing", None) == "drop":
        expected.update(DROP_FAILURES)
    return expected


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
            type(est)(**est.get_params()).fit(
                as_declared(type(est), X), [0, 1, 0, 1], sample_weight=np.zeros(4)
            )


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


def test_tags_follow_sklearn_and_the_missing_option():
    assert get_tags(ComplementNB()).input_tags.positive_only
    assert get_tags(ComplementNB()).classifier_tags.poor_score
    assert get_tags(CategoricalNB()).input_tags.categorical
    assert not get_tags(MixedNB()).input_tags.allow_nan
    assert get_tags(MixedNB(missing="ignore")).input_tags.allow_nan
    assert get_tags(MixedNB(column_types={0: "categorical"})).input_tags.categorical
    assert get_tags(MixedNB(column_types="categorical")).input_tags.categorical
    assert not get_tags(MixedNB()).input_tags.categorical
    assert not get_tags(MixedNB(column_types=["poisson"])).input_tags.categorical
