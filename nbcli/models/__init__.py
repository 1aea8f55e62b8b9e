"""The numerical core: five Bayes classifiers sharing one log-space base.

>>> from nbcli.models import GaussianNB
>>> model = GaussianNB().fit(X_train, y_train)          # doctest: +SKIP
>>> model.predict_proba(X_test)                         # doctest: +SKIP

NumPy and SciPy only: no file I/O, no printing.
"""

from nbcli.models._base import BayesClassifier, NotFittedError, log_normalise
from nbcli.models._stats import ClassCounts, ClassMoments, ClassScatter
from nbcli.models._table_stats import CategoryCounts, MixedStats
from nbcli.models.categorical import CategoricalNB
from nbcli.models.complement import ComplementNB
from nbcli.models.discrete import BernoulliNB, MultinomialNB
from nbcli.models.discriminant import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from nbcli.models.gaussian import GaussianNB
from nbcli.models.mixed import MixedNB

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
    "CategoricalNB",
    "CategoryCounts",
    "ClassCounts",
    "ClassMoments",
    "ClassScatter",
    "ComplementNB",
    "GaussianNB",
    "LinearDiscriminantAnalysis",
    "MODELS",
    "MixedNB",
    "MixedStats",
    "MultinomialNB",
    "NotFittedError",
    "QuadraticDiscriminantAnalysis",
    "log_normalise",
]
