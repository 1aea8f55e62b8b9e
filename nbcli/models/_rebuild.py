"""Fitted models from statistics alone: rebuilding, re-tuning, checking parameters.

Mixed into :class:`~nbcli.models._base.BayesClassifier`; what a loaded
model file and a search over hyperparameters use, without the data.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class FromStatistics:
    """:meth:`from_stats`, :meth:`with_params` and :meth:`undefined_parameter`."""

    @classmethod
    def from_stats(cls, stats, classes, params: dict, n_features: int):
        """A fitted estimator built from statistics, without the data.

        Parameters
        ----------
        stats : statistics
            An instance of one of the classes in :attr:`statistics`, with
            ``n_classes`` rows (model files store them; cross-validation
            merges those of folds).
        classes : array-like of shape (n_classes,)
            Sorted class labels, in the order of the statistics' rows.
        params : dict
            Hyperparameters (``__init__`` keywords); the others keep their
            defaults.
        n_features : int

        Returns
        -------
        estimator
            Finalized with ``params``: equal to a fit on the data the
            statistics came from.

        Raises
        ------
        ValueError
            For invalid hyperparameters, or when no model follows from the
            statistics with them (see :meth:`finalize`).
        """
        est: Any = cls(**params)
        est.check_hyperparameters()
        est.classes_ = np.asarray(classes)
        est.n_features_in_ = int(n_features)
        est._fixed_classes = False
        est.stats_ = stats
        est.finalize()
        return est

    def with_params(self, **params):
        """A new fitted estimator from this one's statistics with other hyperparameters.

        No data are read again: the statistics (copied) are finalized with
        the hyperparameters of ``self`` updated by ``params``, which is how
        a search over ``alpha`` or ``var_smoothing`` re-uses one pass over
        the data. ``self`` is left unchanged.

        Raises
        ------
        ValueError
            For a name that is not a hyperparameter, an invalid value, or
            one the statistics cannot serve (LDA's ``shrinkage="auto"``
            needs statistics gathered with it).
        """
        model: Any = self  # a BayesClassifier
        model._check_fitted()
        valid = model._get_param_names()
        unknown = sorted(set(params) - set(valid))
        if unknown:
            raise ValueError(
                f"invalid parameter {unknown[0]!r} for {type(self).__name__}; "
                f"valid parameters are {valid}"
            )
        est = type(self).from_stats(
            model.stats_.copy(),
            model.classes_.copy(),
            {**model.get_params(), **params},
            model.n_features_in_,
        )
        if hasattr(self, "feature_names_in_"):
            est.feature_names_in_ = model.feature_names_in_.copy()
        est.n_dropped_ = getattr(self, "n_dropped_", 0)
        return est

    def undefined_parameter(self) -> str | None:
        """Name of the first scoring parameter that came out undefined, or None.

        Undefined: NaN, or +inf (infinitely favourable; -inf is legitimate,
        the log of a zero prior). Statistics of too extreme values, or
        damaged ones, give such parameters; a caller refuses the model.
        """
        for name, value in vars(self).items():
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                if np.isnan(value).any() or (value == np.inf).any():
                    return name.strip("_")
        return None
