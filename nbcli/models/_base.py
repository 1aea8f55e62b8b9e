"""The base class every nbcli estimator derives from, and the model contract.

A model type is one class. It declares what the rest of the package needs
to know about it (:class:`BayesClassifier`'s class attributes: ``name``,
``hyperparameters``, ``statistics``, ``sklearn_tags``,
``min_samples_per_class``, ``prior_param``) and implements three methods:

* :meth:`~BayesClassifier.accumulate` - one chunk of rows to per-class
  sufficient statistics (see :mod:`nbcli.models._stats`), which merge;
* :meth:`~BayesClassifier.finalize` - statistics to scoring parameters: the
  only place smoothing and regularisation are applied, so fitting in chunks
  and fitting at once give the same model;
* :meth:`~BayesClassifier.joint_log_likelihood_block` - the joint
  log-likelihood of a block of rows, class-major.

Everything else (``fit``, ``partial_fit``, ``fit_chunks``, ``merge``,
labels, prediction) is here. Scoring works in log space: the posterior
``log p(y=k | x)`` is obtained from the joint log-likelihood by log-sum-exp
normalisation over classes, so nothing underflows however many features
there are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np

from nbcli.distinct import LabelCoding, unique_inverse
from nbcli.models._blocks import BlockScoring
from nbcli.models._logspace import _log_normalise_columns, _softmax_columns
from nbcli.models._missing import (
    check_no_infinity,
    checks_of_one_array,
    drop_incomplete,
    labels_of,
)
from nbcli.models._parallel import one_blas_thread
from nbcli.models._params import Parameters
from nbcli.models._rebuild import FromStatistics
from nbcli.models._validation import (
    ColumnsMessage,
    check_array,
    check_labels,
    check_sample_weight,
    sklearn_compatible,
)
from nbcli.models.hyperparameters import Hyperparameter

if TYPE_CHECKING:
    from nbcli.models._stats import _Stats


class BayesClassifier(BlockScoring, FromStatistics, Parameters):
    """Common machinery: parameters, labels, statistics, log-space prediction.

    A subclass is a model type. It declares the class attributes below and
    implements :meth:`accumulate`, :meth:`finalize` and
    :meth:`joint_log_likelihood_block`; optionally ``_check_values(X,
    row_offset)`` (values the model cannot take). The registry
    (:mod:`nbcli.models.registry`) finds every subclass that declares a
    ``name``; the command line, config files, model files and docs learn
    about the model from these declarations only.

    Attributes
    ----------
    name : str
        Model type, as the command line and model files spell it (``"gaussian"``).
    hyperparameters : tuple of Hyperparameter
        One spec per ``__init__`` keyword: type, range, default, help text,
        flag. :meth:`check_hyperparameters` validates with them.
    statistics : tuple of type
        The statistics classes :meth:`accumulate` can return (the first is
        the usual one; LDA with ``shrinkage="auto"`` uses the second).
    sklearn_tags : dict
        Tags that differ from scikit-learn's defaults (``positive_only``,
        ``poor_score``), as scikit-learn sets them for its own estimator, and
        ``sparse`` for a model that takes ``scipy.sparse`` input (see
        :mod:`nbcli.models._sparse`).
    min_samples_per_class : int
        Below this many samples a class has no estimate (one sample has no
        spread); with 1, such a class rests on smoothing alone.
    prior_param : str
        Name of the class-prior hyperparameter (``priors`` or ``class_prior``).
    feature_kinds : tuple of str
        The distributions a feature column can follow, by the names
        ``--column NAME=TYPE`` gives them; the first is a numeric column's.
    indicative_definition : str or None
        What the class's ``indicative_features()`` scores mean (see
        :mod:`nbcli.models._indicative`); None for a model without them.
    inspection_sections : tuple of str
        Further analyses ``nbcli inspect`` shows (``discriminant_directions``,
        ``class_covariances``; ``column_parameters``, for a model whose
        ``learnt_columns()`` describes what it learnt of each column).
    sklearn_equivalent : str or None
        Import path of the scikit-learn estimator the model reproduces
        (``"sklearn.naive_bayes.GaussianNB"``): the same hyperparameter names,
        and ``predict_proba`` equal to 1e-8 in float64, which the parity
        tests check for every model that declares one; None for a model
        scikit-learn does not have.
    text_statistic : str or None
        The term statistic its text columns (``--text``) are fitted from:
        ``multinomial`` (counts per class), ``complement`` (counts of the
        other classes) or ``bernoulli`` (documents holding a term); None for a
        model that takes no text columns.
    fit_checks : tuple of str
        Checks of the training data the fit workflow runs before the
        statistics become a model (:data:`nbcli.workflows.train_checks.FIT_CHECKS`):
        ``"gaussian_spread"`` for per-class variances smoothed by a fraction
        of the largest one (a table whose features are all constant, or a
        variance of zero without smoothing, is refused naming the column).
    float32_attributes : tuple of str
        Fitted attributes that are float32 after a fit on float32 input, as
        scikit-learn's estimator has them (GaussianNB, LDA); a model that
        declares any also scores in float32 (posteriors, joint
        log-likelihood). Empty: float64 whatever the input, as scikit-learn's
        discrete naive Bayes and QDA posteriors are. The statistics stay
        float64 in every case, so chunks and parts merge exactly, and the
        parameters are computed in float64 and rounded once.
    """

    name: ClassVar[str] = ""
    hyperparameters: ClassVar[tuple[Hyperparameter, ...]] = ()
    statistics: ClassVar[tuple[type[_Stats], ...]] = ()
    sklearn_tags: ClassVar[dict[str, bool]] = {}
    min_samples_per_class: ClassVar[int] = 1
    prior_param: ClassVar[str] = "priors"
    feature_kinds: ClassVar[tuple[str, ...]] = ("gaussian",)
    indicative_definition: ClassVar[str | None] = None
    inspection_sections: ClassVar[tuple[str, ...]] = ()
    text_statistic: ClassVar[str | None] = None
    sklearn_equivalent: ClassVar[str | None] = None
    fit_checks: ClassVar[tuple[str, ...]] = ()
    float32_attributes: ClassVar[tuple[str, ...]] = ()
    #: The same as ``name`` (the attribute earlier versions had).
    model_type: ClassVar[str] = ""

    @property
    def _scan_for_nonfinite(self) -> bool:
        # True where each block is scanned for NaN and infinity before it is
        # scored: where a non-finite input need not show in the scores
        # (binarised input), or where the scan pays for itself (LDA). Otherwise
        # the scores of a block tell whether it needs the scan.
        return False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.model_type = cls.name

    # -- the model contract --------------------------------------------------------
    def merge_statistics(self, a, b):
        """The statistics of two chunks merged (``a.merge(b)``); a model whose
        merge can refuse the data overrides this to say so in its own terms."""
        return a.merge(b)

    def accumulate(self, X: np.ndarray, y_idx: np.ndarray, sample_weight, n_classes: int):
        """Sufficient statistics of one chunk of training rows.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features), float64
            Validated rows (finite, values the model accepts).
        y_idx : ndarray of shape (n_samples,), int
            Class index of each row, in ``range(n_classes)``.
        sample_weight : ndarray of shape (n_samples,) or None
            Non-negative frequency weights; ``None`` means all ones.
        n_classes : int
            Number of classes; classes with no row get all-zero statistics.

        Returns
        -------
        statistics
            An instance of one of the classes in :attr:`statistics`, whose
            ``merge`` gives the statistics of the union of two chunks and
            whose ``reindex`` changes the class order. No smoothing is
            applied here.
        """
        raise NotImplementedError

    def finalize(self) -> None:
        """Turn ``self.stats_`` into scoring parameters (attributes ending in ``_``).

        The only place smoothing and regularisation are applied; it reads
        ``stats_``, ``classes_`` and the hyperparameters and must be
        deterministic, so a model rebuilt from stored statistics scores bit
        for bit as the original.

        Raises
        ------
        ValueError
            When no model follows from these statistics and hyperparameters
            (a singular QDA covariance, an overflowing smoothing).
        """
        raise NotImplementedError

    def joint_log_likelihood_block(self, X: np.ndarray) -> np.ndarray:
        """Joint log-likelihood of a block of validated rows, class-major.

        Parameters
        ----------
        X : ndarray of shape (n_rows, n_features), float64
            Rows already checked by the caller (number of features, values
            the model accepts); implementations leave ``X`` unchanged.

        Returns
        -------
        ndarray of shape (n_classes, n_rows)
            ``log p(x) + log p(y=k)`` in nats up to a term that depends on
            the row only (see :meth:`joint_log_likelihood`). Class-major so
            that reductions over classes run along contiguous memory.
        """
        raise NotImplementedError

    def scoring_form(self):
        """The fitted model's joint log-likelihood as a formula over its arrays
        (:mod:`nbcli.models._forms`), or None when it has none of those forms.

        What exports the model (an ONNX graph) reads; a model type that
        declares a form is exported without being known by name.
        """
        return None

    def check_hyperparameters(self) -> None:
        """Validate every hyperparameter against its spec in :attr:`hyperparameters`.

        Raises
        ------
        ValueError
            ``{name} must be {what it accepts}; got {value}`` for the first
            invalid value.
        """
        for spec in self.hyperparameters:
            spec.check(getattr(self, spec.name))

    # -- fitting ------------------------------------------------------------------
    @property
    def missing_policy(self) -> str:
        """What a missing cell (NaN) does: ``"error"``, ``"ignore"`` or ``"drop"``.

        The model's ``missing`` hyperparameter, ``"error"`` for a model without one.
        """
        return getattr(self, "missing", "error")

    def validated_rows(self, X) -> np.ndarray:
        """``X`` checked as :meth:`fit` checks it, as float64 rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features)

        Raises
        ------
        ValueError
            For values the model cannot take (NaN unless ``missing`` allows
            it, infinity, negative counts...), naming row and column.
        """
        return self._prepare_X(X)

    def _prepare_X(self, X) -> np.ndarray:
        """Validated float64 rows (all checks, for fitting); NaN only if ``missing`` allows."""
        X = check_array(X, finite=self.missing_policy == "error")
        if self.missing_policy != "error":
            check_no_infinity(X)
        self._check_values(X)
        return X

    def _check_values(self, X, row_offset: int = 0) -> None:
        """Model-specific checks of values (multinomial: no negatives...).

        ``row_offset`` is added to row numbers in messages, for blocks of a
        larger array. Under ``missing="ignore"`` or ``"drop"`` a NaN cell
        must pass (it is missing, not a bad value).
        """

    def _check_unseen(self, X, row_offset: int = 0) -> None:
        """Refuse values the fitted model has no parameters for (scoring only)."""

    def _check_training(self, X, y, sample_weight):
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        names = getattr(X, "columns", None)
        with checks_of_one_array():
            X = self._prepare_X(X)
            y = check_labels(y, X.shape[0])
            w = check_sample_weight(sample_weight, X.shape[0])
            X, y, w, n_dropped = drop_incomplete(X, y, w, self.missing_policy)
        return X, y, w, names, n_dropped

    def _set_feature_names(self, names, reset: bool):
        if names is not None and all(isinstance(c, str) for c in names):
            names = np.asarray(list(names), dtype=object)
        else:
            names = None
        if reset:
            if names is not None:
                self.feature_names_in_ = names
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
            return
        fitted = getattr(self, "feature_names_in_", None)
        if fitted is not None and names is not None and not np.array_equal(fitted, names):
            raise ValueError("The feature names should match those that were passed during fit")

    def fit(self, X, y, sample_weight=None):
        """Fit the model from training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels: integers, strings or booleans; kept as given.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative frequency weights; ``None`` means all ones.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            On invalid input or hyperparameters (see ``check_array`` and the
            estimator's parameter notes).
        """
        self.check_hyperparameters()
        X_given = X
        X, y, w, names, n_dropped = self._check_training(X, y, sample_weight)
        if X.shape[0] == 0:
            raise ValueError("no training rows: every row has a missing cell (missing='drop')")
        self.n_dropped_ = n_dropped
        self._float32 = _is_float32(X_given)
        classes, y_idx = unique_inverse(y)
        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        self._set_feature_names(names, reset=True)
        self._fixed_classes = False
        self._undetermined = None
        self.stats_ = self.accumulate(X, y_idx, w, len(classes))
        self.finalize()
        self._follow_input_dtype()
        return self

    def _follow_input_dtype(self) -> None:
        """Round :attr:`float32_attributes` to float32 after a fit on float32 input."""
        if not getattr(self, "_float32", False):
            return
        for attr in self.float32_attributes:
            value = getattr(self, attr, None)
            if isinstance(value, np.ndarray) and value.dtype == np.float64:
                setattr(self, attr, value.astype(np.float32))

    @property
    def _scores_float32(self) -> bool:
        return bool(self.float32_attributes) and getattr(self, "_float32", False)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Add one chunk of training data to the model.

        Statistics are merged with those of earlier chunks, so any split of
        the data into chunks, in any order, gives the same model as ``fit``
        on all of it (up to rounding).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,)
            All labels that can occur: required on the first call, as in
            scikit-learn, so that ``classes_`` and the columns of the
            posteriors stay the same from call to call; later labels outside
            it are an error. (:meth:`fit_chunks` and :meth:`merge` learn the
            labels from the data instead.) Optional later; when given, it
            must equal the first call's.
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self

        Raises
        ------
        ValueError
            On invalid input, a change in the number of features, a first
            call without ``classes``, or a label outside ``classes``. Statistics that do not determine a model yet
            (a single row, a class with too few rows for its covariance) are
            not an error here: scoring refuses, saying why, until enough
            rows have been added (see :class:`UndeterminedError`).
        """
        self.check_hyperparameters()
        if classes is None and not hasattr(self, "stats_"):
            raise ValueError(
                "classes must be passed on the first call to partial_fit: every label that "
                "can occur (fit_chunks learns the labels from the chunks instead)"
            )
        self._accumulate(X, y, classes, sample_weight)
        self._finalize_online()
        return self

    def _finalize_online(self) -> None:
        """Finalize after a chunk of online learning, or note why the model cannot score yet.

        Statistics that do not determine a model yet (one row, no spread
        yet, a class not seen yet) are not an error while learning: they are
        kept, and :meth:`_check_fitted` refuses to score, with the reason,
        until later chunks determine the model.
        """
        try:
            self.finalize()
        except (UndeterminedError, np.linalg.LinAlgError) as exc:
            self._undetermined = str(exc)
        else:
            self._undetermined = None
            self._follow_input_dtype()

    def fit_chunks(self, chunks, *, finalize: bool = True):
        """Fit from an iterable of chunks, turning statistics into a model once.

        Parameters
        ----------
        chunks : iterable of tuples ``(X, y)`` or ``(X, y, sample_weight)``
            Shapes as for :meth:`fit`; chunks may have any number of rows.
            Only one chunk is held at a time. ``y`` may be a
            :class:`~nbcli.distinct.LabelCoding` of the labels (coded once by
            the caller), taken as it is.
        finalize : bool, default=True
            With False, only the statistics are gathered (``stats_``,
            ``classes_``, ``n_features_in_`` are set): the caller may check
            them, relabel the classes or set the priors, and then calls
            :meth:`finalize` itself.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            As :meth:`fit`, or when ``chunks`` is empty. Unlike a series of
            :meth:`partial_fit` calls, a model that is not well defined until
            all data are in (a QDA class with few rows in the first chunk)
            is not an error part way.
        """
        self.check_hyperparameters()
        for attr in ("stats_", "classes_"):
            if hasattr(self, attr):
                delattr(self, attr)
        # The statistics of a chunk are small BLAS products (a d x d scatter
        # per class, a class-by-feature sum); on several BLAS threads they
        # wait for cores that the thread reading the next chunk holds, and
        # cost more than they save. Scoring holds BLAS to one thread too.
        with one_blas_thread():
            for chunk in chunks:
                X, y, *rest = chunk
                self._accumulate(X, y, None, rest[0] if rest else None)
        if not hasattr(self, "stats_"):
            raise ValueError("no training data: the chunks were empty")
        self._undetermined = None
        if finalize:
            self.finalize()
            self._follow_input_dtype()
        return self

    def _accumulate(self, X, y, classes, sample_weight):
        X_given = X
        coding = y if isinstance(y, LabelCoding) else None
        if coding is not None:
            # Labels coded by the caller: the distinct ones are checked, and
            # the rows travel as their codes (dropped rows and all).
            check_labels(coding.uniques, len(coding.uniques))
            y = coding.codes
        X, y, w, names, n_dropped = self._check_training(X, y, sample_weight)
        first = not hasattr(self, "stats_")
        if coding is None:
            labels, codes = unique_inverse(y)
        else:
            labels, codes = _present(coding.uniques, y)
        self.n_dropped_ = n_dropped + (0 if first else getattr(self, "n_dropped_", 0))
        if first:
            self._float32 = _is_float32(X_given)
            if classes is not None:
                self.classes_ = np.unique(check_labels(classes, len(classes)))
                self._fixed_classes = True
            else:
                self.classes_ = labels
                self._fixed_classes = False
            self.n_features_in_ = X.shape[1]
            self._set_feature_names(names, reset=True)
        else:
            self._check_n_features(X)
            self._set_feature_names(names, reset=False)
            if classes is not None and not np.array_equal(
                np.unique(check_labels(classes, len(classes))), self.classes_
            ):
                raise ValueError(
                    f"classes={np.asarray(classes).tolist()} differs from the classes of the "
                    f"first call, {self.classes_.tolist()} (`classes={np.asarray(classes).tolist()}` "
                    "is not the same as on last call to partial_fit)"
                )
        self._absorb_labels(labels)
        # Each distinct label found once among the classes, then every row by its code.
        y_idx = np.searchsorted(self.classes_, labels)[codes]
        chunk = self.accumulate(X, y_idx, w, len(self.classes_))
        self.stats_ = chunk if first else self.merge_statistics(self.stats_, chunk)

    def relabel(self, labels) -> BayesClassifier:
        """Replace the class labels, e.g. strings read from a file by their typed values.

        Parameters
        ----------
        labels : array-like of shape (n_classes,)
            New label of each class in the current ``classes_`` order; must be
            distinct. Classes are re-sorted by the new labels and the model
            rebuilt, so it equals a fit with the new labels.
        """
        self._check_fitted()
        labels = np.asarray(labels)
        if labels.shape != self.classes_.shape or len(np.unique(labels)) != len(labels):
            raise ValueError("relabel needs one distinct new label per class")
        order = np.argsort(labels, kind="stable")
        position = np.empty_like(order)
        position[order] = np.arange(len(order))
        self.stats_ = self.stats_.reindex(position, len(order))
        self.classes_ = labels[order]
        self.finalize()
        self._follow_input_dtype()
        return self

    def _absorb_labels(self, labels):
        """Add labels not seen before (keeping classes sorted), or refuse them
        (of another type than the classes so far: numbers beside text would be
        turned into text, and classes 1 and '1' would be two)."""
        theirs, ours = _label_kind(np.asarray(labels)), _label_kind(self.classes_)
        if theirs != ours:
            raise ValueError(
                f"labels of another type ({theirs}) than the classes so far ({ours}): "
                f"{np.asarray(labels)[:3].tolist()} against {self.classes_[:3].tolist()}; "
                "use one type"
            )
        new = np.setdiff1d(labels, self.classes_)
        if new.size == 0:
            return
        if getattr(self, "_fixed_classes", False):
            raise ValueError(
                f"labels {new.tolist()} are not in classes={self.classes_.tolist()} "
                "given on the first call to partial_fit (The target labels in y do not "
                "exist in the initial classes)"
            )
        merged = np.union1d(self.classes_, new)
        if hasattr(self, "stats_"):
            self.stats_ = self.stats_.reindex(np.searchsorted(merged, self.classes_), len(merged))
        self.classes_ = merged

    def merge(self, other: BayesClassifier) -> BayesClassifier:
        """Combine with a model fitted on other data, in place; returns ``self``.

        Both must be the same estimator type with equal hyperparameters and
        the same features. The result equals a fit on both data sets. Models
        still being learnt online may be merged before they can score: as
        after :meth:`partial_fit`, a result that is not determined yet
        refuses to score until more rows are added.
        """
        if type(other) is not type(self) or not _same_params(other.get_params(), self.get_params()):
            raise ValueError("can only merge estimators of the same type and hyperparameters")
        for model in (self, other):
            if not hasattr(model, "stats_"):
                model._check_fitted()  # NotFittedError
        if other.n_features_in_ != self.n_features_in_:
            raise ValueError(
                f"cannot merge models with {self.n_features_in_} and {other.n_features_in_} features"
            )
        mine, theirs = (getattr(m, "feature_names_in_", None) for m in (self, other))
        if mine is not None and theirs is not None and list(mine) != list(theirs):
            # Statistics are merged column by column in position: names that
            # differ (or the same in another order) would mix the columns.
            raise ValueError(
                "cannot merge models fitted on other columns: "
                f"{list(mine)[:5]} against {list(theirs)[:5]}; fit both on the columns in one order"
            )
        self._absorb_labels(other.classes_)
        theirs = other.stats_.reindex(
            np.searchsorted(self.classes_, other.classes_), len(self.classes_)
        )
        self.stats_ = self.merge_statistics(self.stats_, theirs)
        self.n_dropped_ = getattr(self, "n_dropped_", 0) + getattr(other, "n_dropped_", 0)
        self._finalize_online()
        return self

    # -- scoring ------------------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "stats_"):
            # Text kept close to scikit-learn's NotFittedError message.
            raise sklearn_compatible(NotFittedError)(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' "
                "with appropriate arguments before using this estimator."
            )
        reason = getattr(self, "_undetermined", None)
        if reason is not None:
            raise UndeterminedError(
                f"This {type(self).__name__} cannot score yet: {reason}; "
                "add more rows with partial_fit"
            )

    def _check_n_features(self, X):
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input"
            )

    def _check_predict_input(self, X) -> np.ndarray:
        self._check_fitted()
        names = getattr(X, "columns", None)
        X = check_array(X, finite=False)
        self._check_n_features(X)
        self._set_feature_names(names, reset=False)
        return X

    def _collect(self, X, transform) -> np.ndarray:
        X = self._check_predict_input(X)
        out = np.empty((X.shape[0], len(self.classes_)))

        def consume(rows, jll):
            out[rows] = transform(jll).T

        self._each_block(X, consume)
        return out.astype(np.float32) if self._scores_float32 else out

    def joint_log_likelihood(self, X) -> np.ndarray:
        """Joint log-likelihood ``log p(x) + log p(y=k)`` per sample and class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            For the naive Bayes models and QDA, ``log p(x | y=k) + log p(y=k)``
            in nats (QDA and Gaussian NB as a log density). For LDA the
            discriminant function, which differs from it by a term that
            depends on ``x`` only and cancels in the posterior.

        Raises
        ------
        NotFittedError, ValueError
            Before ``fit``; on invalid ``X`` (NaN unless ``missing`` allows
            it, infinity, values the model cannot take) or a wrong number of
            features. Under ``missing="drop"`` a row with a NaN cell scores
            NaN for every class.
        """
        return self._collect(X, lambda jll: jll)

    def predict_log_proba(self, X) -> np.ndarray:
        """Log posterior ``log p(y=k | x)``, shape (n_samples, n_classes).

        Columns follow ``classes_``. Computed by log-sum-exp normalisation of
        the joint log-likelihood, finite even when every class's likelihood
        underflows in linear space. Raises as :meth:`joint_log_likelihood`.
        """
        return self._collect(X, _log_normalise_columns)

    def predict_proba(self, X) -> np.ndarray:
        """Posterior ``p(y=k | x)``, shape (n_samples, n_classes); rows sum to 1.

        A softmax of the joint log-likelihood after subtracting each row's
        maximum, so no exponential overflows. Raises as :meth:`joint_log_likelihood`.
        """
        return self._collect(X, _softmax_columns)

    def predict(self, X) -> np.ndarray:
        """Most probable class (maximum a posteriori) per sample, shape (n_samples,).

        Labels are taken from ``classes_``, so they keep the type given at fit;
        under ``missing="drop"`` a row with a missing cell has no label
        (``None``, in an array of dtype object).

        Raises
        ------
        ValueError
            For input the model refuses, and for a row no class of which has
            a finite joint log-likelihood (values too large for float64 here;
            ``predict_proba`` gives NaN for it), naming the first such row.
        """
        X = self._check_predict_input(X)
        idx = np.empty(X.shape[0], dtype=np.intp)
        undefined: list[int] = []

        def consume(rows, jll):
            found = np.argmax(jll, axis=0)
            dropped = np.isnan(jll[0])  # a row dropped for a missing cell
            found[dropped] = -1
            idx[rows] = found
            # No class with a finite joint log-likelihood (values beyond what
            # float64 holds here): the posterior is undefined (predict_proba
            # gives NaN), and argmax would name the first class.
            bad = ~dropped & ~np.isfinite(jll.max(axis=0))
            if bad.any():
                undefined.append(np.arange(X.shape[0])[rows][int(np.argmax(bad))])

        self._each_block(X, consume)
        if undefined:
            raise ValueError(
                f"row {min(undefined)} of X has no class with a finite joint log-likelihood "
                "(its values are too large for this model in float64), so it has no most "
                "probable class; rescale the features"
            )
        return labels_of(self.classes_, idx)

    def score(self, X, y, sample_weight=None) -> float:
        """Mean accuracy of ``predict(X)`` against ``y``."""
        pred = self.predict(X)
        y = check_labels(y, pred.shape[0])
        hit = (pred == y).astype(np.float64)
        return float(np.average(hit, weights=sample_weight))


def _is_float32(X) -> bool:
    """Whether training input ``X`` is a float32 array (scikit-learn then keeps float32)."""
    return getattr(X, "dtype", None) == np.float32


def _same_params(a: dict, b: dict) -> bool:
    """Whether two ``get_params()`` are equal, arrays (one alpha per feature) by value."""
    if a.keys() != b.keys():
        return False
    for key, x in a.items():
        y = b[key]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not np.array_equal(np.asarray(x, dtype=object), np.asarray(y, dtype=object)):
                return False
        elif x != y:
            return False
    return True


class NotFittedError(ValueError, AttributeError):
    """Raised when scoring with an estimator that has not been fitted."""


class UndeterminedError(ValueError):
    """The statistics do not determine a model yet.

    Raised by :meth:`BayesClassifier.finalize` where more rows would make a
    model (too few samples for a class's spread or covariance, no variance
    at all yet); :meth:`BayesClassifier.partial_fit` keeps the statistics
    and scoring raises it, with the reason, until they do. ``fit``,
    ``fit_chunks`` and ``from_stats`` raise it at once, as any ``ValueError``.
    """


class ColumnUndeterminedError(ColumnsMessage, UndeterminedError):
    """An :class:`UndeterminedError` about columns of the model's input (see
    :class:`~nbcli.models._validation.ColumnsMessage`)."""


class NoObservedValueError(ColumnUndeterminedError):
    """A class has no observed value in a column whose distribution needs one
    (a Gaussian mean and variance, a Poisson rate).

    Attributes
    ----------
    feature : int
        The column, as an index of the model's input, so that a caller can
        name it and say how to leave it out.
    """

    @property
    def feature(self) -> int:
        return next(p for p in self.pieces if isinstance(p, int))


class EmptyColumnError(NoObservedValueError):
    """A column has no observed value in any training row: no class has one,
    so nothing but leaving the column out helps (``feature`` as for
    :class:`NoObservedValueError`)."""


def _present(uniques: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, codes)`` of the rows coded ``codes`` into ``uniques``, with
    only the labels some row has (as :func:`~nbcli.distinct.unique_inverse`
    of the labels themselves gives them)."""
    present = np.bincount(codes, minlength=len(uniques)) > 0
    if present.all():
        return uniques, codes
    new = np.cumsum(present) - 1
    return uniques[present], new[codes].astype(np.intp, copy=False)


def _label_kind(labels: np.ndarray) -> str:
    """``number`` or ``text``: what kind of class labels ``labels`` are."""
    if labels.dtype.kind in "biuf":
        return "number"
    if labels.dtype.kind in "US":
        return "text"
    values = labels.tolist()
    if all(isinstance(v, str) for v in values):
        return "text"
    if all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in values):
        return "number"
    return "mixed"
