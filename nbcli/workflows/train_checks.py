"""Checks of gathered training statistics and of the model made from them,
each naming the column or class at fault (the train workflow's refusals)."""

from __future__ import annotations

import numpy as np

from nbcli.errors import NbcliError


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


_RESCALE = "rescale the column (divide it by a power of ten) and train again"


def check_finite_statistics(path: str, estimator, feature_names) -> None:
    """Refuse data whose sums or squared spreads overflow float64, naming the column.

    Spreads up to about 1e154 are fine (their squares fit in float64), and so
    are sums up to about 1e308; beyond that the statistics are infinite and
    no model can be built from them.
    """
    for array in estimator.stats_.arrays().values():
        bad = ~np.isfinite(array)
        if bad.any():
            where = np.argwhere(bad)[0]
            column = f"column {feature_names[where[1]]!r}" if array.ndim > 1 else "a column"
            raise NbcliError(
                f"{path}: {column} holds values too large or too far apart for float64 "
                "arithmetic (a sum or a squared spread overflows: spreads beyond about 1e154 "
                f"do); {_RESCALE}"
            )


def check_finite_parameters(path: str, estimator) -> None:
    """Refuse a model with NaN or +inf parameters (-inf is the log of a zero prior)."""
    name = estimator.undefined_parameter()
    if name is not None:
        raise NbcliError(
            f"{path}: the {estimator.name} model's parameter {name!r} "
            "came out undefined: the feature values are too extreme for float64; "
            "rescale the features (divide them by a power of ten) and train again"
        )


def check_gaussian_spread(path: str, estimator, feature_names, labels) -> None:
    """Name the column when Gaussian variances would be zero.

    ``var_smoothing`` adds a fraction of the largest feature variance, so it
    rescues a feature that is constant within a class, but not data in which
    every feature is constant, nor ``var_smoothing=0``. ``labels`` are the
    typed class labels in the order of ``estimator.classes_``.
    """
    from nbcli.io.messages import quote_names

    st = estimator.stats_
    if not hasattr(st, "m2"):
        # Scatter matrices gathered for --pca: the model sees components, and
        # finalize refuses components without any variance itself.
        return
    _, _, m2_all = st.pooled()
    if not np.any(m2_all > 0):
        # Per class and feature where missing cells are left out.
        present = np.broadcast_to(st.count.reshape(len(st.count), -1) > 0, st.shift.shape)
        mean = np.where(present, st.shift + st.offset, np.nan)
        # Values that differ, but whose squared spread underflows (spreads
        # below about 1e-154), are not constant: rescaling them helps.
        with np.errstate(invalid="ignore"):
            apart = np.nanmax(mean, axis=0, initial=-np.inf) > np.nanmin(
                mean, axis=0, initial=np.inf
            )
        varies = apart | np.any(present & (st.offset != 0), axis=0)
        if varies.any():
            names = [feature_names[j] for j in np.flatnonzero(varies)]
            raise NbcliError(
                f"{path}: the values of {quote_names(names, limit=5)} vary, but by so little "
                "that their squared spread underflows float64 (spreads below about 1e-154 "
                "do); rescale the columns (multiply them by a power of ten) and train again"
            )
        raise NbcliError(
            f"{path}: every feature column holds a single value in all rows "
            f"({quote_names(feature_names, limit=5)}), so nothing tells the classes apart; "
            "check that the right file and columns were read"
        )
    if estimator.var_smoothing == 0:
        # Per class, or per class and feature when missing cells are left out.
        flat = (st.m2 <= 0) & (st.count.reshape(len(st.count), -1) > 0)
        if flat.any():
            k, j = np.argwhere(flat)[0]
            raise NbcliError(
                f"{path}: column {feature_names[j]!r} is constant within class "
                f"{_plain(labels[k])!r}, which gives a zero variance with "
                "--var-smoothing 0; use a positive --var-smoothing (default 1e-9)"
            )


#: The checks a model class can declare in ``fit_checks``, by name: each is
#: called as ``check(path, estimator, feature_names, labels)`` on the fitted
#: statistics, before they become the model, and raises NbcliError.
FIT_CHECKS = {"gaussian_spread": check_gaussian_spread}
