"""Hyperparameters in the style of scikit-learn: ``get_params``, ``set_params``, tags."""

from __future__ import annotations

import inspect
from typing import ClassVar


class Parameters:
    """``get_params``/``set_params``/``repr`` from ``__init__``'s keywords, and
    scikit-learn's tags from the class's ``sklearn_tags``.

    The subclass declares ``hyperparameters`` (specs, see
    :mod:`nbcli.models.hyperparameters`) and ``sklearn_tags``.
    """

    sklearn_tags: ClassVar[dict[str, bool]] = {}
    _param_names: ClassVar[tuple[str, ...]]

    @classmethod
    def _get_param_names(cls):
        # Read from the signature once per class (its own entry, not a base
        # class's): model selection builds hundreds of models, and
        # ``inspect.signature`` costs more than building a small one.
        names = cls.__dict__.get("_param_names")
        if names is None:
            sig = inspect.signature(cls.__init__)
            names = tuple(
                sorted(
                    p.name
                    for p in sig.parameters.values()
                    if p.name != "self" and p.kind != p.VAR_KEYWORD
                )
            )
            cls._param_names = names
        return list(names)

    def get_params(self, deep: bool = True) -> dict:
        """Hyperparameters as a dict ``{name: value}``."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set hyperparameters by name; returns ``self``.

        Raises
        ------
        ValueError
            For a name that is not a hyperparameter of this estimator.
        """
        valid = self._get_param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(
                    f"invalid parameter {name!r} for {type(self).__name__}; "
                    f"valid parameters are {valid}"
                )
            setattr(self, name, value)
        return self

    def __repr__(self):
        # NumPy scalars show as plain values (alpha=0.5, not alpha=np.float64(0.5)).
        args = ", ".join(
            f"{k}={(v.item() if hasattr(v, 'item') and getattr(v, 'ndim', 1) == 0 else v)!r}"
            for k, v in self.get_params().items()
        )
        return f"{type(self).__name__}({args})"

    def __sklearn_tags__(self):
        """scikit-learn's description of this estimator (its ``Tags`` dataclass).

        Only scikit-learn calls this, so importing it here adds no dependency.
        The model-specific tags are those scikit-learn gives its own
        estimators of the same kind (``sklearn/naive_bayes.py``).
        """
        from sklearn.utils import ClassifierTags, Tags, TargetTags

        tags = Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(),
        )
        # NaN is accepted where the model's missing-value policy says what it does.
        tags.input_tags.allow_nan = getattr(self, "missing", "error") != "error"
        tags.input_tags.sparse = self.sklearn_tags.get("sparse", False)
        tags.input_tags.positive_only = self.sklearn_tags.get("positive_only", False)
        tags.classifier_tags.poor_score = self.sklearn_tags.get("poor_score", False)
        return tags
