"""Naive Bayes over a table whose columns have different types."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from nbcli.models import _text_term, _value_table
from nbcli.models._base import (
    BayesClassifier,
    EmptyColumnError,
    NoObservedValueError,
    UndeterminedError,
)
from nbcli.models._gaussian_terms import StandardisedTerms, large_epsilon, smoothing_epsilon
from nbcli.models._indicative import TEXT_WORD_DEFINITION, log_probability_ratios
from nbcli.models._table_stats import MixedStats, pooled_moments
from nbcli.models._text_term import TextColumns, TextRows
from nbcli.models._validation import ColumnValueError, label_text
from nbcli.models.categorical import (
    category_log_prob,
    category_terms,
    check_codes,
    check_known,
    check_min_categories,
    class_log_prior,
    refuse_cells,
    unseen_counts,
)
from nbcli.models.discrete import _alpha
from nbcli.models.hyperparameters import (
    Hyperparameter,
    alpha,
    bandwidth,
    bandwidth_adjust,
    fit_prior,
    min_categories,
    missing,
    numeric_estimator,
    priors,
    unseen,
    var_smoothing,
    var_smoothing_scale,
)
from nbcli.models.poisson import poisson_form, poisson_rates, poisson_terms, refuse_negative

COLUMN_TYPES = (
    "gaussian",
    "categorical",
    "bernoulli",
    "multinomial",
    "poisson",
    "kernel",
    "discretized",
)

_LOG_2PI = np.log(2.0 * np.pi)

# Kernel and discretized columns of at most this many distinct training
# values have their terms at those values computed once, when the model is
# made (for kernels, values x values x classes kernel evaluations), so that
# scoring finds each row's value and looks its terms up.
_TABLED_VALUES = 4096


@dataclass(frozen=True)
class ColumnLayout:
    """Which columns of the table have which type: index arrays into the columns."""

    types: tuple[str, ...]
    gaussian: np.ndarray
    categorical: np.ndarray
    bernoulli: np.ndarray
    multinomial: np.ndarray
    poisson: np.ndarray
    kernel: np.ndarray
    discretized: np.ndarray
    #: Length of each text column's vocabulary (its word counts follow the table's columns).
    vocabulary_sizes: tuple[int, ...] = ()

    @property
    def n_table(self) -> int:
        """Number of the table's columns (the features before the word counts)."""
        return len(self.types)

    @property
    def valued(self) -> np.ndarray:
        """The kernel and discretized columns in table order: those whose
        statistics are their distinct values (:mod:`nbcli.models._value_table`)."""
        return np.sort(np.concatenate([self.kernel, self.discretized]))


def _check_type(value, where: str) -> str:
    if not isinstance(value, str) or value not in COLUMN_TYPES:
        raise ValueError(
            f"column_types{where} must be one of {', '.join(COLUMN_TYPES)}; got {value!r}"
        )
    return value


def _type_entries(column_types):
    """The (key, type) pairs of ``column_types``, each type checked."""
    if column_types is None or isinstance(column_types, str):
        return []
    if isinstance(column_types, dict):
        return [(key, _check_type(v, f"[{key!r}]")) for key, v in column_types.items()]
    try:
        values = list(column_types)
    except TypeError:
        raise ValueError(
            f"column_types must be a list, a dict or a type name, got {column_types!r}"
        ) from None
    return [(i, _check_type(v, f"[{i}]")) for i, v in enumerate(values)]


def resolve_column_types(
    column_types, n_features: int, names=None, default: str = "gaussian"
) -> ColumnLayout:
    """The column layout that ``column_types`` gives a table of ``n_features`` columns.

    Parameters
    ----------
    column_types : None, str, sequence of str or dict
        ``None``: every column of type ``default``; one type name: every
        column of that type; a sequence: one type per column; a dict: types
        of the columns it names, by index (int) or feature name (str), the
        others of type ``default``.
    n_features : int
    names : ndarray of str or None
        Feature names, needed when the dict names columns by name.
    default : str, default="gaussian"
        The type of the columns ``column_types`` leaves untyped (the
        model's ``numeric_estimator``).

    Raises
    ------
    ValueError
        For an unknown type, a sequence of the wrong length, or a key that
        names no column.
    """
    types = [_check_type(default, " default")] * n_features
    if isinstance(column_types, str):
        types = [_check_type(column_types, "")] * n_features
    elif isinstance(column_types, dict):
        lookup = {} if names is None else {str(n): i for i, n in enumerate(names)}
        for key, kind in _type_entries(column_types):
            if isinstance(key, str) and key not in lookup and key.isdigit():
                # Keys of a table read back from JSON (model files) are text.
                key = int(key)
            if isinstance(key, str):
                if key not in lookup:
                    known = "the model has no feature names" if names is None else "no such column"
                    raise ValueError(f"column_types names column {key!r}: {known}")
                types[lookup[key]] = kind
            elif isinstance(key, (int, np.integer)) and 0 <= int(key) < n_features:
                types[int(key)] = kind
            else:
                raise ValueError(
                    f"column_types key {key!r} is not a column index 0..{n_features - 1} "
                    "or a feature name"
                )
    elif column_types is not None:
        entries = _type_entries(column_types)
        if len(entries) != n_features:
            raise ValueError(
                f"column_types has {len(entries)} entries but X has {n_features} features"
            )
        types = [kind for _, kind in entries]
    where = {
        k: np.array([i for i, t in enumerate(types) if t == k], dtype=np.intp) for k in COLUMN_TYPES
    }
    return ColumnLayout(
        tuple(types),
        gaussian=where["gaussian"],
        categorical=where["categorical"],
        bernoulli=where["bernoulli"],
        multinomial=where["multinomial"],
        poisson=where["poisson"],
        kernel=where["kernel"],
        discretized=where["discretized"],
    )


def _term_tables(tables, columns: np.ndarray, terms_at) -> list:
    """Per column of ``columns`` (indices into ``tables``, the (values, weights)
    of every column): its ``ValueIndex`` and ``terms_at(position, values)``
    at its training values, or None beyond :data:`_TABLED_VALUES` values."""
    out: list[tuple[_value_table.ValueIndex, np.ndarray] | None] = []
    for jj, j in enumerate(columns.tolist()):
        values = tables[j][0]
        if values.size > _TABLED_VALUES:
            out.append(None)
            continue
        out.append((_value_table.ValueIndex(values), terms_at(jj, values)))
    return out


class MixedNB(TextColumns, BayesClassifier):
    """Naive Bayes over mixed columns: a class-conditional distribution per column type.

    Each column ``j`` has its own distribution, chosen by ``column_types``,
    and the joint log-likelihood is the log prior plus the sum of the
    per-column terms (John and Langley, "Estimating continuous distributions
    in Bayesian classifiers", UAI 1995, whose mix of nominal and normal
    attributes Weka's ``NaiveBayes`` implements)::

        log p(x, c) = log pi_c + sum_{j observed} log p_j(x_j | c)

    with, per type (``n_cj`` the weighted number of class-``c`` rows where
    column ``j`` is observed):

    * ``gaussian``: ``log N(x_j; theta_cj, var_cj)``, with the mean and the
      maximum-likelihood variance of the column's observed values in the
      class plus ``epsilon_j`` (Murphy, *Machine Learning: A Probabilistic
      Perspective*, 2012, section 3.5). By default (``var_smoothing_scale=
      "feature"``) ``epsilon_j = var_smoothing * var_j``, the column's own
      variance over its observed values, so rescaling a column changes no
      posterior; a column constant in all the training data, which has no
      variance to scale, gets the global epsilon below, the same in every
      class, so it changes no posterior either. With ``"global"``, as in
      scikit-learn's ``GaussianNB``, ``epsilon_j = var_smoothing * max_i
      var_i`` over the Gaussian columns (and the model with only Gaussian
      columns equals :class:`nbcli.models.GaussianNB`).
    * ``categorical``: ``log (N_cjv + alpha) / (n_cj + alpha K_j)``, integer
      codes ``0..K_j - 1`` with ``K_j`` the largest code seen plus one (or
      ``min_categories``), as in :class:`nbcli.models.CategoricalNB`.
    * ``bernoulli``: ``x log p_cj + (1 - x) log(1 - p_cj)`` for 0/1 values,
      ``p_cj = (N_cj + alpha) / (n_cj + 2 alpha)`` with ``N_cj`` the weight
      of the ones (McCallum and Nigam, AAAI-98 workshop on text
      categorisation, 1998).
    * ``multinomial``: ``x log p_cj`` for counts, ``p_cj = (N_cj + alpha) /
      (sum_i N_ci + alpha m)`` over the ``m`` multinomial columns, without
      the multinomial coefficient (Manning, Raghavan and Schuetze,
      *Introduction to Information Retrieval*, 2008, section 13.2).
    * ``poisson``: ``x log lambda_cj - lambda_cj - log x!`` for counts
      (as :class:`nbcli.models.PoissonNB`: non-negative values, ``log x!``
      as ``log Gamma(x + 1)``), with ``lambda_cj = (S_cj + alpha) /
      n_cj`` and ``S_cj`` the weighted sum of the column's observed values
      in the class: R naivebayes' ``usepoisson`` rate with ``laplace =
      alpha``, the posterior mean of the rate under the (improper) prior
      ``Gamma(alpha, 0)``. ``alpha > 0`` keeps a class that saw only zeros
      from a zero rate, under which every positive count would be impossible.
    * ``kernel``: ``log f_cj(x)``, the Gaussian kernel density of the
      class's observed values ``v_i`` with weights ``w_i``: ``f_cj(x) =
      sum_i w_i phi((x - v_i) / h_cj) / (h_cj sum_i w_i)`` (John and
      Langley 1995; R naivebayes' and klaR's ``usekernel``), all values
      kept (:mod:`nbcli.models._value_table`, at most
      :data:`~nbcli.models._value_table.MAX_DISTINCT` distinct values per
      column). The bandwidth is ``h_cj = bandwidth_adjust * bw.nrd0``:
      Silverman's rule of thumb ``0.9 min(sd, IQR / 1.34) n^(-1/5)`` of the
      class's values (Silverman, *Density Estimation*, 1986, eq. 3.31; the
      default of R's ``density``, with its fallbacks where it is zero).
      With ``bandwidth="weka"``, Weka ``NaiveBayes -K``'s estimator instead
      (John and Langley 1995 as Weka's ``KernelEstimator`` implements it):
      values rounded to the column's precision ``(max - min) / (V - 1)``
      over its ``V`` distinct values in all classes (rounded when the
      statistics become a model, so chunks and parts change nothing),
      kernel standard deviation ``bandwidth_adjust * max(range / sqrt(n_cj),
      precision / 6)``, and ``log max(1e-75, P)`` with ``P`` the kernels'
      mass over the precision interval about ``x``, summed outward and
      stopped as Weka stops it
      (:func:`~nbcli.models._value_table.weka_log_probability`).
    * ``discretized``: the column cut into intervals at Fayyad and Irani's
      MDL cut points (IJCAI 1993; Weka's supervised ``Discretize``, which
      Weka's ``NaiveBayes -D`` applies), found from the distinct values of
      all classes (:func:`~nbcli.models._value_table.mdl_cut_points`), then
      a categorical term per interval: ``log (N_cjv + alpha) / (n_cj + alpha
      K_j)`` with ``K_j`` the number of intervals. A value ``x`` falls into
      interval ``v`` where ``cut_{v-1} < x <= cut_v``.

    The kernel and discretized columns' statistics are the distinct values
    with their per-class weights, which merge exactly, so fits over chunks
    or parts equal one fit.

    Text columns (``vocabulary_sizes``) add one multinomial term each, over
    their own vocabulary ``V_t``: ``sum_w n_tw log theta_ctw`` with
    ``theta_ctw = (N_ctw + alpha) / (N_ct + alpha |V_t|)``, as
    scikit-learn's ``MultinomialNB`` on that column's word counts (see
    :mod:`nbcli.models._text_term`). Their word counts are the last
    ``sum(vocabulary_sizes)`` features, after the table's columns, and may
    come as a SciPy sparse matrix.

    With ``missing="ignore"`` a NaN cell is left out of its column's
    statistics at fit and out of the sum at predict, which is exact
    marginalisation under missing-at-random (Little and Rubin, 2002).

    Parameters
    ----------
    column_types : None, str, sequence of str or dict, default=None
        Per column one of ``"gaussian"``, ``"categorical"``, ``"bernoulli"``,
        ``"multinomial"``, ``"poisson"``, ``"kernel"``, ``"discretized"``: a list with one entry per column, a dict by column
        index or feature name (columns it leaves out are of the
        ``numeric_estimator`` type), or one name for all columns. ``None``:
        every column of the ``numeric_estimator`` type.
    var_smoothing : float, default=1e-9
        See above.
    var_smoothing_scale : {"feature", "global"}, default="feature"
        See above. Model files written before the scale was stored were
        fitted with ``"global"`` and load so.
    numeric_estimator : {"gaussian", "kernel", "discretized"}, default="gaussian"
        The type of the columns that ``column_types`` leaves untyped (all of
        them when it is None): Weka NaiveBayes' ``-K`` (``"kernel"``) and
        ``-D`` (``"discretized"``) as one switch. Types that
        ``column_types`` gives win, ``"gaussian"`` among them.
    bandwidth_adjust : float, default=1.0
        Multiplier of every kernel column's bandwidth (R ``density``'s ``adjust``).
    bandwidth : {"nrd0", "weka"}, default="nrd0"
        The kernel columns' estimator, see above.
    alpha : float, default=1.0
        Lidstone smoothing of the categorical, Bernoulli, multinomial and
        discretized columns, and the prior count of the Poisson rates;
        values below 1e-10 are raised to 1e-10.
    min_categories : int or array-like of shape (n_table_columns,), optional
        Lower bound on ``K_j`` of categorical columns (entries of other
        columns are not used); one entry per column before the word counts.
    fit_prior : bool, default=True
        Learn class priors from the (weighted) class frequencies of all
        rows; when False, uniform.
    class_prior : array-like of shape (n_classes,), optional
        Fixed class priors, overriding ``fit_prior``; must sum to 1.
    missing : {"error", "ignore", "drop"}, default="error"
        ``"ignore"``: see above; ``"drop"``: rows with a NaN cell are skipped
        at fit and get NaN posteriors at predict.
    unseen : {"error", "ignore"}, default="error"
        A categorical code ``>= K_j`` at predict: an error naming row,
        column and value, or left out of the product like a missing cell.
    vocabulary_sizes : sequence of int, optional
        Length of each text column's vocabulary; the last
        ``sum(vocabulary_sizes)`` features are their word counts, column
        after column (``column_types`` describes the features before them).
        ``None``: no text columns.

    Attributes
    ----------
    classes_, class_count_, class_log_prior_ : ndarray of shape (n_classes,)
    column_types_ : list of str, one per column
    theta_, var_ : ndarray of shape (n_classes, n_gaussian)
        Means and variances (including ``epsilon_``) of the Gaussian columns.
    epsilon_ : ndarray of shape (n_gaussian,)
    large_epsilon_ : ndarray of shape (n_pairs, 2), int
        ``(class index, column index)`` of the Gaussian columns whose
        within-class variance is positive but smaller than ``epsilon_j /
        EPSILON_SHARE`` (:data:`nbcli.models.gaussian.EPSILON_SHARE`): the
        smoothing adds more than that share to it, enough to move posteriors.
    largest_variance_feature_ : int
        The table column of the Gaussian column with the largest variance,
        which sets ``epsilon_`` under the global scale (-1: none).
    zero_variance_ : ndarray of shape (n_pairs, 2), int
        ``(class index, column index)`` of the Gaussian columns whose
        within-class variance is zero before smoothing (set by ``epsilon_``
        alone).
    zero_variance_spread_ : ndarray of shape (n_pairs,), bool
        For each pair of ``zero_variance_``: True where the class's values of
        the column are not all equal, so that their variance underflowed
        float64 rather than being zero.
    n_dropped_ : int
        Training rows skipped for a missing cell (``missing="drop"``).
    n_categories_ : ndarray of shape (n_categorical,), int
    category_log_prob_ : list of ndarrays of shape (n_classes, K_j)
    bernoulli_log_prob_, multinomial_log_prob_ : ndarray of shape (n_classes, n_columns_of_type)
        ``log p_cj`` of the Bernoulli and multinomial columns.
    poisson_rate_ : ndarray of shape (n_classes, n_poisson)
        ``lambda_cj`` of the Poisson columns.
    bandwidth_ : ndarray of shape (n_classes, n_kernel)
        ``h_cj`` of the kernel columns (the kernel standard deviation).
    kernel_precision_ : ndarray of shape (n_kernel,)
        Weka's precision of each kernel column (``bandwidth="weka"``; 0 otherwise).
    cut_points_ : list of ndarrays, one per discretized column
        Its MDL cut points, sorted (empty: one interval).
    interval_log_prob_ : list of ndarrays of shape (n_classes, K_j)
        ``log P(interval v | c)`` of each discretized column.
    text_log_prob_ : ndarray of shape (n_classes, sum(vocabulary_sizes))
        ``log theta_ctw`` of the text columns' words, vocabulary after vocabulary.
    stats_ : MixedStats

    Raises
    ------
    ValueError
        For a cell its column's type cannot take (a code that is not a
        non-negative integer, a Bernoulli value other than 0 or 1, a negative
        count), infinity, NaN under ``missing="error"``, an unseen category
        under ``unseen="error"`` (messages name row and column); at fit, for
        a Gaussian column with no observed value in a class that has rows,
        or a zero variance that smoothing does not lift.

    Examples
    --------
    A Gaussian column and a categorical one (integer codes):

    >>> import numpy as np
    >>> from nbcli.models import MixedNB
    >>> X = np.array([[1.0, 0], [1.2, 0], [0.9, 1], [3.1, 1], [2.8, 1], [3.3, 0]])
    >>> model = MixedNB(column_types=["gaussian", "categorical"]).fit(X, ["a", "a", "a", "b", "b", "b"])
    >>> model.predict([[1.0, 0], [3.0, 1]]).tolist()
    ['a', 'b']
    """

    name = "mixed"

    def scoring_form(self):
        from nbcli.models._forms import (
            AffineForm,
            CategoryForm,
            CompositeForm,
            DiagonalGaussianForm,
            IntervalForm,
            KernelDensityForm,
            NoForm,
        )

        self._check_fitted()
        lay = self._layout
        K = len(self.classes_)
        zero = np.zeros(K)
        parts: list = []
        if lay.gaussian.size:
            parts.append(
                (
                    lay.gaussian,
                    DiagonalGaussianForm(self.theta_, self._inv_sd, self._log_norm, zero),
                )
            )
        if lay.categorical.size:
            table = CategoryForm(self._cat_log_prob[:, :-1], self._n_cat)
            parts.append((lay.categorical, table))
        if lay.bernoulli.size:
            # w x + b over the cells seen: b in the intercept, taken back out where missing.
            form = AffineForm(self._bern_w, self._bern_b.sum(axis=1), missing_coef=-self._bern_b)
            parts.append((lay.bernoulli, form))
        if lay.multinomial.size:
            parts.append((lay.multinomial, AffineForm(self.multinomial_log_prob_, zero)))
        if lay.poisson.size:
            parts.append((lay.poisson, poisson_form(self.poisson_rate_, self._log_rate, zero)))
        if lay.kernel.size and self.bandwidth == "weka":
            return NoForm(
                "kernel columns with --bandwidth weka are not written to ONNX (Weka's sum "
                "stops at a data-dependent term); use --bandwidth nrd0 or discretized columns"
            )
        if lay.kernel.size:
            width = max(v.size for per_class in self._kernels for v, _ in per_class)
            shape = (lay.kernel.size, K, width)
            centres, log_weight = np.zeros(shape), np.full(shape, -np.inf)
            for jj, per_class in enumerate(self._kernels):
                for k, (v, w) in enumerate(per_class):
                    centres[jj, k, : v.size], log_weight[jj, k, : v.size] = v, w
            kernels = KernelDensityForm(centres, log_weight, self.bandwidth_)
            parts.append((lay.kernel, kernels))
        if lay.discretized.size:
            width = max([c.size for c in self.cut_points_] + [0])
            cuts = np.full((lay.discretized.size, width), np.inf)
            for jj, c in enumerate(self.cut_points_):
                cuts[jj, : c.size] = c
            intervals = IntervalForm(cuts, self._int_log_prob[:, :-1], self._n_int)
            parts.append((lay.discretized, intervals))
        if lay.vocabulary_sizes:
            # The text columns' word counts follow the table's columns.
            words = np.arange(lay.n_table, lay.n_table + sum(lay.vocabulary_sizes))
            parts.append((words, AffineForm(self.text_log_prob_, zero)))
        return CompositeForm(self.class_log_prior_, tuple(parts))

    feature_kinds = COLUMN_TYPES
    hyperparameters = (
        Hyperparameter(
            "column_types",
            "column_types",
            None,
            "the distribution of each column (the command line sets it from the column plan)",
            options=COLUMN_TYPES,
            allow_none=True,
            default_text="from the column types",
        ),
        var_smoothing(),
        var_smoothing_scale("feature"),
        numeric_estimator(),
        bandwidth_adjust(),
        bandwidth(),
        alpha(),
        min_categories(),
        fit_prior(),
        priors("class_prior"),
        missing(),
        unseen(),
        Hyperparameter(
            "vocabulary_sizes",
            "object",
            None,
            "length of each text column's vocabulary (the command line sets it from --text)",
            allow_none=True,
            default_text="no text columns",
        ),
    )
    statistics = (MixedStats,)
    inspection_sections = ("column_parameters",)
    indicative_definition = TEXT_WORD_DEFINITION
    #: Text columns are multinomial terms of this model (``--text``), each
    #: beside the table's columns rather than among them.
    text_term = "multinomial"
    text_statistic = "multinomial"
    prior_param = "class_prior"
    # NaN must be caught before scoring: a NaN cell scores as a missing one.
    _scan_for_nonfinite = True

    def __init__(
        self,
        *,
        column_types=None,
        var_smoothing=1e-9,
        var_smoothing_scale="feature",
        numeric_estimator="gaussian",
        bandwidth_adjust=1.0,
        bandwidth="nrd0",
        alpha=1.0,
        min_categories=None,
        fit_prior=True,
        class_prior=None,
        missing="error",
        unseen="error",
        vocabulary_sizes=None,
    ):
        self.column_types = column_types
        self.var_smoothing = var_smoothing
        self.var_smoothing_scale = var_smoothing_scale
        self.numeric_estimator = numeric_estimator
        self.bandwidth_adjust = bandwidth_adjust
        self.bandwidth = bandwidth
        self.alpha = alpha
        self.min_categories = min_categories
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.missing = missing
        self.unseen = unseen
        self.vocabulary_sizes = vocabulary_sizes

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        ct = self.column_types
        try:
            kinds = [ct] if isinstance(ct, str) else [t for _, t in _type_entries(ct)]
        except ValueError:  # invalid column_types are reported by fit
            kinds = []
        tags.input_tags.categorical = "categorical" in kinds
        return tags

    def _resolve_layout(self) -> ColumnLayout:
        sizes = _text_term.check_vocabulary_sizes(self.vocabulary_sizes)
        n_table = self.n_features_in_ - sum(sizes)
        if n_table < 0:
            raise ValueError(
                f"vocabulary_sizes adds up to {sum(sizes)} word counts, more than the "
                f"{self.n_features_in_} features"
            )
        names = getattr(self, "feature_names_in_", None)
        lay = resolve_column_types(
            self.column_types,
            n_table,
            None if names is None else names[:n_table],
            self.numeric_estimator,
        )
        if not sizes:
            return lay
        return replace(lay, vocabulary_sizes=sizes)

    def indicative_features(self) -> tuple[np.ndarray, None]:
        """Per class and feature (n_classes, n_features): for the words of
        text columns, :data:`~nbcli.models._indicative.TEXT_WORD_DEFINITION`;
        NaN for the table's columns (``learnt_columns`` describes those)."""
        n_table = self._layout.n_table
        out = np.full((len(self.classes_), self.n_features_in_), np.nan)
        if self.text_log_prob_.shape[1]:
            out[:, n_table:] = log_probability_ratios(self, self.text_log_prob_)
        return out, None

    def indicative_counts(self) -> np.ndarray:
        """Weighted training occurrences of each feature in each class, shape
        (n_classes, n_features): the words' counts; NaN for the table's columns."""
        m = self._layout.multinomial.size
        out = np.full((len(self.classes_), self.n_features_in_), np.nan)
        out[:, self._layout.n_table :] = self.stats_.multinomial_count[:, m:]
        return out

    def learnt_columns(self) -> list[dict]:
        """Per column of the table (text columns' words excluded), what was learnt:
        ``{"type": "gaussian", "mean", "variance"}`` (shape (n_classes,), the
        variance with ``epsilon_``), ``{"type": "categorical", "probability"}``
        (shape (n_classes, K_j): P(code | class)), ``{"type": "bernoulli",
        "probability"}`` (P(x = 1 | class)), ``{"type": "multinomial",
        "probability"}`` (p_cj), ``{"type": "poisson", "rate"}`` (lambda_cj),
        ``{"type": "kernel", "bandwidth"}`` (h_cj) or ``{"type":
        "discretized", "cut_points", "probability"}`` (shape (n_cuts,) and
        (n_classes, n_cuts + 1): P(interval | class)), all as scoring uses them."""
        lay = self._layout
        out: list[dict] = []
        where = {
            kind: {int(j): i for i, j in enumerate(getattr(lay, kind))} for kind in COLUMN_TYPES
        }
        for j, kind in enumerate(lay.types):
            i = where[kind][j]
            if kind == "gaussian":
                out.append({"type": kind, "mean": self.theta_[:, i], "variance": self.var_[:, i]})
            elif kind == "categorical":
                out.append({"type": kind, "probability": np.exp(self.category_log_prob_[i])})
            elif kind == "bernoulli":
                out.append({"type": kind, "probability": np.exp(self.bernoulli_log_prob_[:, i])})
            elif kind == "multinomial":
                out.append({"type": kind, "probability": np.exp(self.multinomial_log_prob_[:, i])})
            elif kind == "poisson":
                out.append({"type": kind, "rate": self.poisson_rate_[:, i]})
            elif kind == "kernel":
                out.append({"type": kind, "bandwidth": self.bandwidth_[:, i]})
            else:
                out.append(
                    {
                        "type": kind,
                        "cut_points": self.cut_points_[i],
                        "probability": np.exp(self.interval_log_prob_[i]),
                    }
                )
        return out

    # -- values -------------------------------------------------------------------
    def _check_values(self, X, row_offset=0):
        # At the first fit the layout needs the feature names, which are set
        # after this check: accumulate checks the cells then (and, while
        # fitting, of every chunk: not twice).
        if hasattr(self, "_layout") and hasattr(self, "stats_") and not self._fitting_chunk:
            self._check_cells(X, row_offset)

    _fitting_chunk = False

    def _check_training(self, X, y, sample_weight):
        self._fitting_chunk = True
        try:
            return super()._check_training(X, y, sample_weight)
        finally:
            del self._fitting_chunk

    def _check_cells(self, X, row_offset=0):
        lay = self._layout
        check_codes(self, X[:, lay.categorical], lay.categorical, row_offset)
        Xb = X[:, lay.bernoulli]
        with np.errstate(invalid="ignore"):
            refuse_cells(
                self,
                Xb,
                (Xb != 0) & (Xb != 1) & ~np.isnan(Xb),
                lay.bernoulli,
                row_offset,
                "is not 0 or 1: Bernoulli columns take binary values",
            )
            Xm = X[:, lay.multinomial]
            refuse_cells(
                self,
                Xm,
                Xm < 0,
                lay.multinomial,
                row_offset,
                "is negative: multinomial columns take non-negative counts",
            )
            refuse_negative(self, X[:, lay.poisson], lay.poisson, row_offset)

    def unseen_cells(self, X) -> np.ndarray:
        """Per feature, the cells of ``X`` (n_samples, n_features) holding a
        category code unseen in training (0 for non-categorical columns),
        shape (n_features,), int."""
        lay = self._layout
        out = np.zeros(X.shape[1], dtype=np.int64)
        if hasattr(X, "tocsc"):
            # Table columns beside text word counts (sparse): the categorical ones, dense.
            codes = np.asarray(X[:, lay.categorical].toarray(), dtype=float)
        else:
            codes = np.asarray(X, dtype=float)[:, lay.categorical]
        out[lay.categorical] = unseen_counts(codes, self._n_cat)
        return out

    def _check_unseen(self, X, row_offset=0):
        if self.unseen == "error":
            lay = self._layout
            check_known(self, X[:, lay.categorical], lay.categorical, self._n_cat, row_offset)

    # -- fitting ------------------------------------------------------------------
    def accumulate(self, X, y_idx, sample_weight, n_classes):
        self._layout = self._resolve_layout()
        if not isinstance(X, TextRows):
            self._check_cells(X)
            return self._table_stats(X, y_idx, sample_weight, n_classes)
        self._check_cells(X.table)
        st = self._table_stats(X.table, y_idx, sample_weight, n_classes)
        words = _text_term.class_word_counts(X.words, y_idx, sample_weight, n_classes)
        st.multinomial_count = np.hstack([st.multinomial_count, words])
        return st

    def _table_stats(self, X, y_idx, sample_weight, n_classes):
        try:
            return MixedStats.from_data(X, y_idx, sample_weight, n_classes, self._layout)
        except _value_table.TooManyValuesError as e:
            raise self._too_many_values(e) from None

    def merge_statistics(self, a, b):
        try:
            return a.merge(b)
        except _value_table.TooManyValuesError as e:
            raise self._too_many_values(e) from None

    def _too_many_values(self, e):
        names = getattr(self, "feature_names_in_", None)
        return _value_table.too_many_values_error(e, self._layout.types, names)

    def finalize(self):
        lay = self._layout = self._resolve_layout()
        st = self.stats_
        if (
            st.gaussian_count.shape[1] != lay.gaussian.size
            or st.n_categories.size != lay.categorical.size
            or st.multinomial_count.shape[1] != lay.multinomial.size + sum(lay.vocabulary_sizes)
            or st.poisson[0].shape[1] != lay.poisson.size
            or st.values[2].size != lay.valued.size
        ):
            raise ValueError("the statistics do not match column_types; refit the model")
        self.column_types_ = list(lay.types)
        self.class_count_ = st.class_count.copy()
        self.class_log_prior_ = class_log_prior(st.class_count, self.fit_prior, self.class_prior)
        alpha = _alpha(self.alpha)
        self._finalize_gaussian(st, lay)
        min_cat = check_min_categories(self.min_categories, lay.n_table)
        self._cat_log_prob, _, self._n_cat = category_log_prob(
            st.category_count,
            st.n_categories,
            alpha,
            None if min_cat is None else min_cat[lay.categorical],
        )
        self.n_categories_ = self._n_cat.astype(np.int64)
        self.category_log_prob_ = np.split(
            self._cat_log_prob[:, :-1], np.cumsum(self._n_cat)[:-1], axis=1
        )
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            den = np.log(st.bernoulli_observed + 2.0 * alpha)
            lp = np.log(st.bernoulli_count + alpha) - den
            # log(1 - p) from the counts, accurate when p is near 1.
            lq = np.log(st.bernoulli_observed - st.bernoulli_count + alpha) - den
            m = lay.multinomial.size
            mult = st.multinomial_count[:, :m] + alpha
            lm = np.log(mult) - np.log(mult.sum(axis=1, keepdims=True))
        lt = _text_term.text_log_prob(st.multinomial_count[:, m:], lay.vocabulary_sizes, alpha)
        if not all(np.all(np.isfinite(a)) for a in (lp, lq, lm, lt)):
            raise ValueError(
                f"alpha={alpha:g} is too large: the smoothed counts overflow float64; "
                "use a smaller alpha (1 is Laplace smoothing)"
            )
        self.bernoulli_log_prob_ = lp
        self.multinomial_log_prob_ = lm
        self.text_log_prob_ = lt
        self._bern_w = lp - lq
        self._bern_b = lq
        self._finalize_poisson(st, lay, alpha)
        self._finalize_values(st, lay, alpha)

    def _unobserved(self, kind, count, columns, why=""):
        """Refuse a column of ``kind`` without an observed value in a class that
        has rows (``why`` ends the message)."""
        live = self.stats_.class_count > 0
        empty = live[:, None] & (count <= 0)
        if empty.any():
            k, jj = np.argwhere(empty)[0]
            raise NoObservedValueError(
                f"{kind} ",
                int(columns[jj]),
                f" has no observed value in class {label_text(self.classes_[k])}{why}",
                names=getattr(self, "feature_names_in_", None),
            )

    def _finalize_poisson(self, st, lay, alpha):
        count, total = st.poisson
        self._unobserved("Poisson", count, lay.poisson)
        self.poisson_rate_ = poisson_rates(total, count, alpha)
        self._log_rate = np.log(self.poisson_rate_)

    def _finalize_values(self, st, lay, alpha):
        points, counts, sizes = st.values
        live = st.class_count > 0
        tables = dict(zip(lay.valued.tolist(), _value_table.split(points, counts, sizes)))
        observed = np.zeros((live.size, lay.valued.size))
        for jj, j in enumerate(lay.valued.tolist()):
            observed[:, jj] = tables[j][1].sum(axis=1)
        self._unobserved("kernel or discretized", observed, lay.valued)
        # Kernel columns: per class, the centres with positive weight and
        # their log weights (summing to 0 in probability).
        self._kernels = []
        bandwidth = np.ones((live.size, lay.kernel.size))
        precision = np.zeros(lay.kernel.size)
        weka = self.bandwidth == "weka"
        for jj, j in enumerate(lay.kernel.tolist()):
            values, weights = tables[j]
            if weka:
                precision[jj] = _value_table.weka_precision(values[weights.sum(axis=0) > 0])
            per_class = []
            for k in range(live.size):
                keep = weights[k] > 0
                if not live[k] or not keep.any():
                    per_class.append((np.zeros(1), np.ones(1)))
                    continue
                v, w = values[keep], weights[k][keep]
                if weka:
                    v, w, sd = _value_table.weka_kernels(v, w, precision[jj])
                    bandwidth[k, jj] = self.bandwidth_adjust * sd
                    per_class.append((v, w))
                    continue
                bandwidth[k, jj] = self.bandwidth_adjust * _value_table.nrd0_bandwidth(v, w)
                per_class.append((v, np.log(w) - np.log(w.sum())))
            self._kernels.append(per_class)
        self.kernel_precision_ = precision
        if not np.all(np.isfinite(bandwidth) & (bandwidth > 0)):
            raise ValueError(
                f"bandwidth_adjust={self.bandwidth_adjust:g} makes a kernel bandwidth zero or "
                "infinite in float64; use a multiplier nearer 1"
            )
        self.bandwidth_ = bandwidth
        # Each column's terms at its training values (see _TABLED_VALUES).
        self._kernel_tables = _term_tables(tables, lay.kernel, self._kernel_column_terms)
        # Discretized columns: MDL cut points over all classes, then interval counts.
        cuts, blocks = [], []
        for j in lay.discretized.tolist():
            values, weights = tables[j]
            c = _value_table.mdl_cut_points(values, weights)
            cuts.append(c)
            blocks.append(_value_table.interval_counts(values, weights, c))
        n_int = np.array([c.size + 1 for c in cuts], dtype=np.intp)
        joined = np.hstack([np.zeros((live.size, 0)), *blocks])
        self._int_log_prob, _, _ = category_log_prob(joined, n_int, alpha)
        self._n_int = n_int
        self.cut_points_ = cuts
        self.interval_log_prob_ = np.split(
            self._int_log_prob[:, :-1], np.cumsum(n_int)[:-1], axis=1
        )
        self._interval_tables = _term_tables(tables, lay.discretized, self._interval_terms)

    def _kernel_terms(self, jj: int, k: int, x: np.ndarray) -> np.ndarray:
        """Class ``k``'s term of kernel column ``jj`` at the values ``x`` (no NaN)."""
        centres, w = self._kernels[jj][k]
        if self.bandwidth == "weka":
            return _value_table.weka_log_probability(
                x, centres, w, self.kernel_precision_[jj], self.bandwidth_[k, jj]
            )
        return _value_table.kernel_log_density(x, centres, w, self.bandwidth_[k, jj])

    def _kernel_column_terms(self, jj: int, x: np.ndarray) -> np.ndarray:
        """Every class's term of kernel column ``jj`` at the values ``x`` (no NaN),
        shape (n_classes, x.size)."""
        return np.vstack([self._kernel_terms(jj, k, x) for k in range(len(self._kernels[jj]))])

    def _interval_terms(self, jj: int, x: np.ndarray) -> np.ndarray:
        """Every class's term of discretized column ``jj`` at the values ``x`` (no NaN),
        shape (n_classes, x.size)."""
        codes = np.searchsorted(self.cut_points_[jj], x, side="left")
        return np.take(self.interval_log_prob_[jj], codes, axis=1)

    @staticmethod
    def _tabled_scores(table, terms_at, x: np.ndarray) -> np.ndarray:
        """A column's terms at ``x`` (no NaN), shape (n_classes, x.size): looked up
        in ``table`` (``(ValueIndex, terms)`` at the training values, or None)
        where ``x`` is a training value, ``terms_at(values)`` once per distinct
        value elsewhere."""
        if table is not None:
            index, terms = table
            pos, hit = index.locate(x)
            if hit.all():
                return np.take(terms, pos, axis=1)
            out = np.empty((terms.shape[0], x.size))
            out[:, hit] = terms[:, pos[hit]]
            todo = np.flatnonzero(~hit)
            values, where = np.unique(x[todo], return_inverse=True)
            out[:, todo] = terms_at(values)[:, where.ravel()]
            return out
        values, where = np.unique(x, return_inverse=True)
        return terms_at(values)[:, where.ravel()]

    def _kernel_scores(self, jj: int, x: np.ndarray) -> np.ndarray:
        """The terms of kernel column ``jj`` at ``x`` (no NaN), shape (n_classes, x.size)."""
        return self._tabled_scores(
            self._kernel_tables[jj], lambda v: self._kernel_column_terms(jj, v), x
        )

    def _interval_scores(self, jj: int, x: np.ndarray) -> np.ndarray:
        """The terms of discretized column ``jj`` at ``x`` (no NaN), shape (n_classes, x.size)."""
        table = self._interval_tables[jj]
        if table is None:  # the cut points' search costs no more than a unique
            return self._interval_terms(jj, x)
        return self._tabled_scores(table, lambda v: self._interval_terms(jj, v), x)

    def intervals(self, X) -> np.ndarray:
        """Interval codes of the discretized columns of ``X`` (n_samples,
        n_features), NaN where missing; shape (n_samples, n_discretized)."""
        X = np.asarray(X, dtype=float)
        lay = self._layout
        out = np.full((X.shape[0], lay.discretized.size), np.nan)
        for jj, j in enumerate(lay.discretized.tolist()):
            x = X[:, j]
            seen = ~np.isnan(x)
            out[seen, jj] = np.searchsorted(self.cut_points_[jj], x[seen], side="left")
        return out

    def _finalize_gaussian(self, st, lay):
        count, shift, offset, m2 = st.gaussian()
        g = lay.gaussian.size
        n_all, _, m2_all = pooled_moments(count, shift, offset, m2)
        if np.any(n_all <= 0):
            j = int(lay.gaussian[np.argmax(n_all <= 0)])
            raise EmptyColumnError(
                "Gaussian ",
                j,
                " has no observed value in training",
                names=getattr(self, "feature_names_in_", None),
            )
        var_all = m2_all / n_all
        eps = smoothing_epsilon(self.var_smoothing, var_all, self.var_smoothing_scale)
        if not np.all(np.isfinite(eps)):
            raise ValueError(
                f"var_smoothing={self.var_smoothing:g} is too large: times the feature variance "
                "it overflows float64; use a fraction such as 1e-9 to 1"
            )
        if g and self.var_smoothing > 0 and not np.any(var_all > 0):
            raise UndeterminedError(
                f"every Gaussian column is constant in the training data (n_samples = "
                f"{st.class_count.sum():g}), so there is no variance to smooth with; at least "
                "one Gaussian column must vary (one sample is not enough)"
            )
        live = st.class_count > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            raw = np.where(count > 0, m2 / count, 0.0)
        var = raw + eps
        self._unobserved("Gaussian", count, lay.gaussian, "; a mean and variance need at least one")
        flat = live[:, None] & (var <= 0)
        if flat.any():
            k, jj = np.argwhere(flat)[0]
            fix = "set var_smoothing > 0"
            raise ColumnValueError(
                "Gaussian ",
                int(lay.gaussian[jj]),
                f" has zero variance in class {label_text(self.classes_[k])}: {fix}",
                names=getattr(self, "feature_names_in_", None),
            )
        # Pairs whose variance is the smoothing alone, by column of the table.
        zero = np.argwhere(live[:, None] & (raw <= 0))
        # Equal values give an offset of exactly 0 from the class's first value.
        self.zero_variance_spread_ = offset[zero[:, 0], zero[:, 1]] != 0
        zero[:, 1] = lay.gaussian[zero[:, 1]]
        self.zero_variance_ = zero
        large = large_epsilon(live, raw, eps)
        large[:, 1] = lay.gaussian[large[:, 1]]
        self.large_epsilon_ = large
        self.largest_variance_feature_ = int(lay.gaussian[np.argmax(var_all)]) if g else -1
        # Classes without rows never win (their prior is zero unless fixed);
        # unit variance keeps their scores finite.
        var[~live] = 1.0
        self.epsilon_ = eps
        self.var_ = var
        self.theta_ = np.where(count > 0, shift + offset, 0.0)
        # The density's own terms, for export (scoring_form).
        self._inv_sd = 1.0 / np.sqrt(var)
        self._log_norm = -0.5 * (_LOG_2PI + np.log(var))
        self._gaussian_terms(shift, offset, count, var, var_all, live)

    def _gaussian_terms(self, shift, offset, count, var, var_all, live):
        """Scoring constants of the Gaussian columns, as Gaussian NB takes them.

        In standardised coordinates ``z = (x - centre) / scale`` each class's
        log density is ``a z^2 + b z + c`` summed over the columns: two
        matrix products for all classes, where a class-by-class sum of
        squares took five passes over the rows per class. The centre is the
        precision-weighted mean of the class means (the mean of the tightest
        class, where cancellation would cost most), and columns whose
        expanded terms are large enough for rounding to matter (more than
        about 1e-10 nats) are scored exactly, class by class.
        """
        g = var.shape[1]
        scale = np.sqrt(var_all) if g else np.ones(0)
        scale[~(scale > 0)] = 1.0
        first = int(np.flatnonzero(live)[0]) if live.any() else 0
        reference = np.where(count[first] > 0, shift[first], 0.0)
        about = np.where(count > 0, (shift - reference) + offset, -reference)  # theta_ - reference
        precision = 1.0 / var[live]
        centre_ref = (precision * about[live]).sum(axis=0) / precision.sum(axis=0)
        theta_z = (about - centre_ref) / scale
        a = scale**2 / var
        stiff = (a * theta_z**2).max(axis=0, initial=0.0) > 1e6
        self._g_terms = StandardisedTerms.of(reference + centre_ref, scale, theta_z, a, stiff, var)

    def _gaussian_scores(self, Xg, missing):
        """``sum_j log N(x_j; theta_cj, var_cj)`` over the Gaussian columns, (n_classes, n_rows);
        ``missing`` (a mask of ``Xg``, or None) leaves those cells out."""
        return self._g_terms.scores(Xg, missing)

    # -- scoring ------------------------------------------------------------------
    def joint_log_likelihood_block(self, X):
        lay = self._layout
        if lay.gaussian.size:
            every = lay.gaussian.size == X.shape[1] and np.array_equal(
                lay.gaussian, np.arange(X.shape[1])
            )
            # A table of Gaussian columns alone is scored as it is, not copied.
            Xg = X if every else X[:, lay.gaussian]
            out = self._gaussian_scores(Xg, None)
            with np.errstate(invalid="ignore", over="ignore"):
                suspect = np.isnan(np.add.reduce(out, axis=None))
            if suspect and np.isnan(out).any():
                # Only blocks with a missing cell pay for the mask.
                out = self._gaussian_scores(Xg, np.isnan(Xg))
            out += self.class_log_prior_[:, None]
        else:
            out = np.repeat(self.class_log_prior_[:, None], X.shape[0], axis=1)
        if lay.categorical.size:
            out += category_terms(self._cat_log_prob, X[:, lay.categorical], self._n_cat)
        if lay.bernoulli.size:
            Xb = X[:, lay.bernoulli]
            seen = ~np.isnan(Xb)
            out += self._bern_w @ np.where(seen, Xb, 0.0).T
            out += self._bern_b @ seen.T.astype(np.float64)
        if lay.multinomial.size:
            Xm = X[:, lay.multinomial]
            out += self.multinomial_log_prob_ @ np.where(np.isnan(Xm), 0.0, Xm).T
        if lay.poisson.size:
            out += poisson_terms(X[:, lay.poisson], self.poisson_rate_, self._log_rate)
        for jj, j in enumerate(lay.kernel.tolist()):
            self._add_column(out, X[:, j], lambda x, jj=jj: self._kernel_scores(jj, x))
        for jj, j in enumerate(lay.discretized.tolist()):
            self._add_column(out, X[:, j], lambda x, jj=jj: self._interval_scores(jj, x))
        return out

    @staticmethod
    def _add_column(out, x, scores) -> None:
        """``out += scores(x)`` over the observed cells of column ``x`` (a missing one adds 0)."""
        seen = ~np.isnan(x)
        if seen.all():
            out += scores(x)
        else:
            out[:, seen] += scores(x[seen])
