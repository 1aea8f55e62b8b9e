"""Methods scikit-learn users call that the model contract does not need.

Mixins put before :class:`~nbcli.models._base.BayesClassifier` in a model's
bases: they only read what a fitted model already has (the joint
log-likelihood, ``classes_``), so no model type implements anything for them.
"""

from __future__ import annotations

import numpy as np

_LOG_2PI = np.log(2.0 * np.pi)


class NaiveBayesAPI:
    """``predict_joint_log_proba``, as scikit-learn's naive Bayes classifiers have it."""

    def predict_joint_log_proba(self, X) -> np.ndarray:
        """Joint log-likelihood ``log p(x, y=k) = log p(x | y=k) + log p(y=k)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            In nats, columns in the order of ``classes_``; the same as
            :meth:`joint_log_likelihood` (for the multinomial model without
            the multinomial coefficient, as in scikit-learn).

        Raises
        ------
        NotFittedError, ValueError
            As :meth:`joint_log_likelihood`.
        """
        return self.joint_log_likelihood(X)  # type: ignore[attr-defined]


class DiscriminantAPI:
    """``decision_function`` of scikit-learn's LDA and QDA.

    The subclass sets ``_decision_offset`` (a constant added to every joint
    log-likelihood to get scikit-learn's scores; 0 by default).
    """

    _decision_offset: float = 0.0

    def decision_function(self, X) -> np.ndarray:
        """Discriminant scores, as scikit-learn's ``decision_function``.

        For LDA ``x @ coef_.T + intercept_``; for QDA the log density plus log
        prior without the ``-d/2 log(2 pi)`` term. Either differs from the
        log posterior by a term that depends on the row only.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes), or (n_samples,) with two classes
            With two classes, the score of ``classes_[1]`` minus that of
            ``classes_[0]``: the log-likelihood ratio of the positive class.

        Raises
        ------
        NotFittedError, ValueError
            As :meth:`joint_log_likelihood`.
        """
        scores = self.joint_log_likelihood(X)  # type: ignore[attr-defined]
        if self._decision_offset:
            scores += self._decision_offset
        if scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores


def qda_decision_offset(n_features: int) -> float:
    """What scikit-learn's QDA scores leave out of the log density: ``d/2 log(2 pi)``."""
    return 0.5 * n_features * _LOG_2PI


class ClassNamePrefixFeaturesOut:
    """``get_feature_names_out`` for a transformer whose outputs are numbered components.

    Names are the lower-case class name and the component number
    (``lineardiscriminantanalysis0``), as scikit-learn names them; the number
    of components is ``_n_features_out``.
    """

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names of the components :meth:`transform` gives.

        Parameters
        ----------
        input_features : array-like of str, optional
            Ignored except for checking, as in scikit-learn: when given with
            fitted feature names, they must match them.

        Returns
        -------
        ndarray of shape (n_components,), dtype object

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ValueError
            When ``input_features`` differs from the features seen at fit.
        """
        self._check_fitted()  # type: ignore[attr-defined]
        if input_features is not None:
            given = np.asarray(input_features, dtype=object)
            fitted = getattr(self, "feature_names_in_", None)
            if fitted is not None and not np.array_equal(given, fitted):
                raise ValueError("input_features is not equal to feature_names_in_")
            if fitted is None and len(given) != self.n_features_in_:  # type: ignore[attr-defined]
                raise ValueError(
                    f"input_features should have length equal to number of features "
                    f"({self.n_features_in_}), got {len(given)}"  # type: ignore[attr-defined]
                )
        prefix = type(self).__name__.lower()
        n_out = self._n_features_out  # type: ignore[attr-defined]
        return np.asarray([f"{prefix}{i}" for i in range(n_out)], dtype=object)
