"""The numerical core: Bayes classifiers sharing one log-space base.

>>> from nbcli.models import GaussianNB
>>> model = GaussianNB().fit([[1.0], [1.2], [0.9], [3.0], [3.2], [2.9]], [0, 0, 0, 1, 1, 1])
>>> model.predict_proba([[1.0], [3.1]]).round(3).tolist()
[[1.0, 0.0], [0.0, 1.0]]

NumPy and SciPy only: no file I/O, no printing.
"""

from nbcli.models._base import (
    BayesClassifier,
    ColumnUndeterminedError,
    EmptyColumnError,
    NoObservedValueError,
    NotFittedError,
    UndeterminedError,
)
from nbcli.models._logspace import log_normalise
from nbcli.models._stats import ClassCounts, ClassMoments, ClassScatter, PooledScatter
from nbcli.models._table_stats import CategoryCounts, MixedStats, ObservedCounts, ObservedMoments
from nbcli.models._validation import ColumnsMessage, ColumnValueError, DataValueError
from nbcli.models.categorical import CategoricalNB
from nbcli.models.complement import ComplementNB
from nbcli.models.discrete import BernoulliNB, MultinomialNB
from nbcli.models.discriminant import LinearDiscriminantAnalysis
from nbcli.models.gaussian import GaussianNB
from nbcli.models.hyperparameters import Hyperparameter
from nbcli.models.mixed import MixedNB
from nbcli.models.poisson import PoissonNB
from nbcli.models.quadratic import QuadraticDiscriminantAnalysis
from nbcli.models.registry import model_classes

#: ``{model type: class}``, as found by :mod:`nbcli.models.registry`.
MODELS: dict[str, type[BayesClassifier]] = model_classes()

__all__ = [
    "BayesClassifier",
    "BernoulliNB",
    "CategoricalNB",
    "CategoryCounts",
    "ClassCounts",
    "ClassMoments",
    "ClassScatter",
    "ColumnUndeterminedError",
    "ColumnValueError",
    "ColumnsMessage",
    "ComplementNB",
    "DataValueError",
    "GaussianNB",
    "Hyperparameter",
    "LinearDiscriminantAnalysis",
    "MODELS",
    "MixedNB",
    "MixedStats",
    "MultinomialNB",
    "NotFittedError",
    "ObservedCounts",
    "ObservedMoments",
    "PoissonNB",
    "PooledScatter",
    "QuadraticDiscriminantAnalysis",
    "UndeterminedError",
    "EmptyColumnError",
    "NoObservedValueError",
    "log_normalise",
]
