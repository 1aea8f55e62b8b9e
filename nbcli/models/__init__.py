"""The numerical core: five Bayes classifiers sharing one log-space base.

>>> from nbcli.models import GaussianNB
>>> model = GaussianNB().fit(X_train, y_train)          # doctest: +SKIP
>>> model.predict_proba(X_test)                         # doctest: +SKIP

NumPy and SciPy only: no file I/O, no printing.
"""

from nbcli.models._base import BayesClassifier, NotFittedError, log_normalise
from nbcli.models._stats import ClassCounts, ClassMoments, ClassScatter
from nbcli.models.discrete import BernoulliNB, MultinomialNB
from nbcli.models.discriminant import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from nbcli.models.gaussian import GaussianNB

MODELS: dict[str, type[BayesClassifier]] = {
    cls.model_type: cls
    for cls in (
        GaussianNB,
        MultinomialNB,
        BernoulliNB,
        LinearDiscriminantAnalysis,
        QuadraticDiscriminantAnalysis,
    )
}

__all__ = [
    "BayesClassifier",
    "BernoulliNB",
    "ClassCounts",
    "ClassMoments",
    "ClassScatter",
    "GaussianNB",
    "LinearDiscriminantAnalysis",
    "MODELS",
    "MultinomialNB",
    "NotFittedError",
    "QuadraticDiscriminantAnalysis",
    "log_normalise",
]
