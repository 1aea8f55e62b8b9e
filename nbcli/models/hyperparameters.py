"""Declarative hyperparameter specs: the one place a hyperparameter is validated.

Each estimator class lists its hyperparameters as :class:`Hyperparameter`
objects (``BayesClassifier.hyperparameters``). The Python API (``fit``
calls :meth:`Hyperparameter.check`), config-file validation and the
command-line flags of ``nbcli fit`` (their names, ``--help`` text and
parsing from text) are all derived from them, in the spirit of
scikit-learn's ``_parameter_constraints``.

Standard library only: the command line reads these declarations to build
its options, and ``nbcli --help`` must not pay for NumPy or SciPy.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field, replace

#: Marks "the command line uses the Python default" in :attr:`Hyperparameter.cli_default`.
SAME = object()

#: The kinds of value a :class:`Hyperparameter` can take.
KINDS = ("float", "bool", "priors", "choice", "int", "column_types", "object")


def _number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _integer(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _listlike(value) -> bool:
    return isinstance(value, (list, tuple)) or (
        hasattr(value, "ndim") and getattr(value, "ndim", 0) >= 1
    )


def _g(x: float | None) -> str:
    return f"{x:g}"


def _shortest(x: float) -> str:
    """``1e-9``, ``1.0``: the shortest text that reads back as ``x``."""
    text = repr(float(x))
    mantissa, e, exponent = text.partition("e")
    return f"{mantissa}e{int(exponent)}" if e else text


@dataclass(frozen=True)
class Hyperparameter:
    """One hyperparameter of an estimator: what it accepts, means and is called.

    Parameters
    ----------
    name : str
        Keyword of the estimator's ``__init__`` and key in config files and
        model files (``var_smoothing``).
    kind : {"float", "bool", "priors", "choice", "int", "column_types", "object"}
        ``float``: a finite real number (not a bool), within ``low``/``high``;
        ``int``: a whole number (not a bool) within ``low``/``high``, or
        (``per_feature``) a list of them, one per feature;
        ``choice``: one of the strings in ``options``;
        ``bool``: ``True`` or ``False``; ``priors``: non-negative numbers
        that sum to 1, as a list in class order or, from the command line and
        config files, a mapping from label text to prior; ``column_types``:
        a type name from ``options``, a list of them (one per column) or a
        mapping from column (index or name) to type name; the command line
        sets it from its column plan, so it has no flag; ``object``: any value, checked by the
        estimator itself (scikit-learn objects such as a covariance
        estimator; Python API only, so ``flag`` is None).
    default
        The Python API's default (the ``__init__`` default).
    help : str
        What the value means, one line, for ``--help`` and the docs table.
    low, high : float, optional
        Range of a ``float``; ``None`` for no bound.
    low_open, high_open : bool
        Whether the bound itself is excluded.
    allow_none : bool
        ``None`` is a valid value (it means "unset": no shrinkage, no
        threshold, priors from the data).
    options : tuple of str
        Strings accepted besides numbers (``"auto"`` for LDA's shrinkage);
        for a ``choice`` or ``column_types``, the strings accepted.
    flag : str, optional
        Command-line flag of ``nbcli fit`` (``--var-smoothing``); for a bool,
        the pair ``--fit-prior/--no-fit-prior``. ``None``: config files only.
    cli_default
        The default of the command line where it differs from the Python
        API's (:data:`SAME` otherwise): the command line can insist on an
        explicit value, as for Bernoulli's ``binarize``, whose command-line
        default stays "input must be 0/1" whatever the Python default is.
    default_text : str, optional
        The default as the docs show it (``"class frequencies"``); by
        default the value itself.
    sums_to_one : bool
        For ``priors``: whether the values must sum to 1 (within 1e-8). With
        False any non-negative values with a positive sum are accepted and
        the estimator renormalises them, with a warning (LDA and QDA, as
        scikit-learn's do).
    parse : callable ``(text, where) -> value``, optional
        How the flag's text becomes a value (priors lists, shrinkage
        ``auto`` or a number); raises ``ValueError`` with a message that
        starts with ``where``. Without it, a ``float`` flag is read by the
        command-line parser as a number.
    per_feature : bool
        An ``int`` or ``float`` that may also be a list or array with one
        value per feature (``min_categories``; ``alpha`` of the count
        models). The Python API and model files take such a list; the
        command line and config files take one number and refuse a list in
        one line (:meth:`check_setting`), since the features a list would
        follow are known only once the data are read.
    file_default
        The value a model file that lacks this hyperparameter was fitted
        with, where that differs from both defaults (:data:`SAME`
        otherwise): a default that changed keeps its old meaning for the
        files written before the hyperparameter was stored.
    searchable : bool
        A ``choice`` that ``nbcli tune`` can list values of: it is applied
        when statistics become a model, so one pass serves every value.
        Numbers (``float``) are searchable unless they shape the statistics.
    count_or_fraction : bool
        A ``float`` that is either a count (a whole number >= 1) or a
        fraction in (0, 1), as ``pca``: 2.5 is refused.
    shapes_statistics : bool
        The value is applied while statistics are gathered (Bernoulli's
        ``binarize`` turns values into counts), not when they become a model:
        a model with another value needs the data again, so ``nbcli tune``
        cannot search it on one pass.
    """

    name: str
    kind: str
    default: object
    help: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    allow_none: bool = False
    options: tuple[str, ...] = ()
    flag: str | None = None
    cli_default: object = field(default=SAME, compare=False)
    default_text: str | None = None
    parse: Callable[[str, str], object] | None = field(default=None, compare=False)
    per_feature: bool = False
    sums_to_one: bool = True
    shapes_statistics: bool = False
    file_default: object = field(default=SAME, compare=False)
    searchable: bool = False
    count_or_fraction: bool = False

    @property
    def searched(self) -> bool:
        """Whether ``nbcli tune`` lists values of it in a grid: a number, or a
        ``searchable`` choice, applied when statistics become a model."""
        searchable = self.kind == "float" or (self.kind == "choice" and self.searchable)
        return searchable and not self.shapes_statistics

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown hyperparameter kind {self.kind!r}")
        if self.kind in ("choice", "column_types") and not self.options:
            raise ValueError(f"a {self.kind} hyperparameter needs options")

    # -- description ---------------------------------------------------------------
    def describe(self) -> str:
        """What a valid value is, as messages say it: ``a number in [0, 1]``."""
        if self.kind == "bool":
            return "true or false"
        if self.kind == "choice":
            return f"one of {', '.join(map(repr, self.options))}"
        if self.kind == "column_types":
            return (
                f"a column type ({', '.join(self.options)}), a list of them (one per "
                "column) or a table from column index or name to type"
            )
        if self.kind == "int" and self.per_feature:
            bound = "" if self.low is None else f" >= {int(self.low)}"
            return f"an integer{bound} or a list of them (one per feature)"
        if self.kind == "float" and self.per_feature:
            bound = "" if self.low is None else f" >= {_g(self.low)}"
            return f"a finite number{bound} or a list of them (one per feature)"
        if self.kind == "priors":
            total = "sum to 1" if self.sums_to_one else "have a positive sum"
            return (
                f"non-negative numbers that {total}, as a list in class order (or, on the "
                "command line and in config files, a table by class label)"
            )
        if self.kind == "choice":
            return "one of " + ", ".join(repr(o) for o in self.options)
        if self.kind == "object":
            return "an object the estimator accepts"
        if self.count_or_fraction:
            return "a whole number >= 1 (a count) or a fraction in (0, 1)"
        low, high = self.low, self.high
        number = "a whole number" if self.kind == "int" else "a finite number"
        if low is None and high is None:
            text = number
        elif high is None:
            text = f"{number} {'>' if self.low_open else '>='} {_g(low)}"
        elif low is None:
            text = f"{number} {'<' if self.high_open else '<='} {_g(high)}"
        else:
            text = (
                f"a number in {'(' if self.low_open else '['}{_g(self.low)}, "
                f"{_g(self.high)}{')' if self.high_open else ']'}"
            )
        if self.options:
            text = " or ".join([*(repr(o) for o in self.options), text])
        return text

    @property
    def shown_default(self) -> str:
        """The default as ``--help`` and the docs table show it (the command line's)."""
        if self.default_text is not None:
            return self.default_text
        value = self.default if self.cli_default is SAME else self.cli_default
        if value is None:
            return "none"
        return _shortest(value) if isinstance(value, (int, float)) else str(value)

    def grid_point(self, value):
        """A point of a ``log:`` or ``lin:`` grid range as this hyperparameter takes it.

        An integer-valued one (``int``, or a count of ``count_or_fraction``:
        a point at or above 1) is rounded to the nearest whole number, half
        up: range points are computed in floating point (``log:1..64:7``
        gives 7.999999999999999 for 8), and a count between two whole numbers
        means the nearer one. Other values are returned as they are.

        Parameters
        ----------
        value
            A point of the range (a float).

        Returns
        -------
        int or object
        """
        if not isinstance(value, float) or not math.isfinite(value):
            return value
        if self.kind == "int" or (self.count_or_fraction and value >= 1):
            return int(math.floor(value + 0.5))
        return value

    # -- validation ----------------------------------------------------------------
    def is_valid(self, value) -> bool:
        """Whether ``value`` is acceptable (the single definition of validity)."""
        if value is None:
            return self.allow_none
        if self.kind == "object":
            return True
        if self.kind == "choice":
            return isinstance(value, str) and value in self.options
        if self.kind == "bool":
            return isinstance(value, bool) or type(value).__name__ == "bool_"
        if self.kind == "choice":
            return isinstance(value, str) and value in self.options
        if self.kind == "column_types":
            return self._valid_column_types(value)
        if self.kind == "int":
            values = value.tolist() if hasattr(value, "tolist") else value
            if isinstance(values, (list, tuple)) and not self.per_feature:
                return False
            values = values if isinstance(values, (list, tuple)) else [values]
            return all(
                _integer(v)
                and (self.low is None or v >= self.low)
                and (self.high is None or v <= self.high)
                for v in values
            )
        if self.kind == "float" and self.per_feature and _listlike(value):
            values = value.tolist() if hasattr(value, "tolist") else list(value)
            scalar = replace(self, per_feature=False)
            return bool(values) and all(_number(v) and scalar.is_valid(v) for v in values)
        if self.kind == "priors":
            values = list(value.values()) if isinstance(value, dict) else value
            try:
                values = [float(v) if _number(v) else math.nan for v in values]
            except TypeError:
                return False
            if not values or not all(math.isfinite(v) and v >= 0 for v in values):
                return False
            if not self.sums_to_one:
                return math.fsum(values) > 0
            return abs(math.fsum(values) - 1.0) <= 1e-8
        if self.kind == "choice":
            return isinstance(value, str) and value in self.options
        if isinstance(value, str):
            return value in self.options
        if self.kind == "int" and not (
            isinstance(value, numbers.Integral) and not isinstance(value, bool)
        ):
            return False
        if not _number(value) or not math.isfinite(value):
            return False
        if self.count_or_fraction:
            return 0 < value < 1 or (value >= 1 and value == int(value))
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            return False
        return self.high is None or not (
            value > self.high or (self.high_open and value == self.high)
        )

    def _valid_column_types(self, value) -> bool:
        if isinstance(value, str):
            return value in self.options
        if isinstance(value, dict):
            keys_ok = all(isinstance(k, str) or (_integer(k) and k >= 0) for k in value)
            return keys_ok and all(isinstance(v, str) and v in self.options for v in value.values())
        if isinstance(value, (list, tuple)):
            return all(isinstance(v, str) and v in self.options for v in value)
        return False

    def check(self, value, where: str | None = None, *, library_reason: bool = True):
        """Return ``value`` if valid, else raise ``ValueError``.

        The message reads ``{where} must be {description}; got {value!r}``,
        ``where`` defaulting to the name: ``--alpha``, ``FILE: [hyperparameters]
        alpha`` or ``alpha``; with ``library_reason`` (the Python API), followed
        by scikit-learn's wording of the reason in parentheses, which the
        command line leaves out (its own words say the same).
        """
        if not self.is_valid(value):
            # NumPy values print as plain ones (``0.5``, not ``np.float64(0.5)``).
            plain = value.tolist() if type(value).__module__ == "numpy" else value
            shown = repr(plain)
            reason = (
                self._priors_reason(plain) if self.kind == "priors" else self._shape_reason(plain)
            )
            # scikit-learn's wording of the reason, which its users match on.
            tail = f" ({reason})" if reason and library_reason else ""
            raise ValueError(f"{where or self.name} must be {self.describe()}; got {shown}{tail}")
        return value

    def _shape_reason(self, value) -> str | None:
        # scikit-learn's wording for a per-feature value of the wrong shape or sign.
        if not self.per_feature or not _listlike(value):
            return None
        if any(_listlike(v) for v in value):
            return f"'{self.name}' should have shape (n_features,)"
        if self.kind == "float" and any(_number(v) and v < 0 for v in value):
            return f"All values in {self.name} must be greater than 0."
        return None

    def check_setting(self, value, where: str):
        """:meth:`check` for a value from the command line or a config file.

        A per-feature list is refused there, in one line: which feature each
        value would belong to is known only once the data are read (text
        columns add features), so these take one number; the Python API
        takes the list.
        """
        if self.per_feature and self.kind == "float" and _listlike(value):
            raise ValueError(
                f"{where} must be one number here; one {self.name} per feature is taken by "
                f"the Python API (e.g. MultinomialNB({self.name}=[...])), not by the command line"
            )
        return self.check(value, where, library_reason=False)

    @staticmethod
    def _priors_reason(value) -> str | None:
        values = list(value.values()) if isinstance(value, dict) else value
        try:
            numbers = [float(v) for v in values]
        except (TypeError, ValueError):
            return None
        if any(not v >= 0 for v in numbers):
            return "Priors must be non-negative"
        return "The sum of the priors should be 1"

    def from_text(self, text: str, where: str):
        """The value a command-line flag's ``text`` stands for (validated)."""
        if self.parse is not None:
            value = self.parse(text, where)
        elif self.kind == "choice":
            value = text.strip().lower()
        elif self.kind == "int":
            try:
                value = int(text)
            except ValueError:
                raise ValueError(f"{where} must be {self.describe()}; got {text!r}") from None
        else:
            value = float(text)
        return self.check(value, where, library_reason=False)


# -- parsers of flag text ----------------------------------------------------------------


def parse_choice(text: str, where: str) -> str:
    """A choice's flag text: the word, in lower case (checked against the options after)."""
    return text.strip().lower()


def parse_int(text: str, where: str):
    """``3`` -> 3, ``2,3,4`` -> [2, 3, 4] (one per feature), ``none`` -> None."""
    t = text.strip().lower()
    if t in ("none", ""):
        return None
    try:
        parts = [int(p) for p in t.split(",")]
    except ValueError:
        raise ValueError(
            f"{where} must be an integer, or integers separated by commas; got {text!r}"
        ) from None
    return parts[0] if len(parts) == 1 else parts


def parse_float_or_option(options: tuple[str, ...], description: str):
    """A parser for ``auto`` (or another word in ``options``), ``none`` or a number."""

    def parse(text: str, where: str):
        t = text.strip().lower()
        if t in options:
            return t
        if t in ("none", ""):
            return None
        try:
            return float(t)
        except ValueError:
            raise ValueError(f"{where} must be {description}; got {text!r}") from None

    return parse


def parse_priors(text: str, where: str):
    """``"0.2,0.8"`` (class order) -> list, or ``"spam=0.4,ham=0.6"`` (by label) -> dict.

    A dict is put in class order once the classes are known.
    """
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise ValueError(f"{where} is empty; give e.g. 0.3,0.7 or spam=0.4,ham=0.6")
    try:
        if all("=" in p for p in parts):
            pairs = [(k.strip(), float(v)) for k, v in (p.rsplit("=", 1) for p in parts)]
            labels = [k for k, _ in pairs]
            repeated = list(dict.fromkeys(k for k in labels if labels.count(k) > 1))
            if repeated:
                raise LookupError(repeated)
            return dict(pairs)
        return [float(p) for p in parts]
    except LookupError as exc:
        raise ValueError(
            f"{where} gives class {', '.join(exc.args[0])} more than once; give each "
            "class one prior"
        ) from None
    except ValueError:
        raise ValueError(
            f"{where} must be numbers, e.g. 0.3,0.7 or spam=0.4,ham=0.6; got {text!r}"
        ) from None


def priors(name: str = "priors", *, sums_to_one: bool = True) -> Hyperparameter:
    """The class-prior hyperparameter every model has (``priors`` or ``class_prior``).

    ``sums_to_one=False``: priors are renormalised (with a warning) rather
    than refused when they do not sum to 1.
    """
    return Hyperparameter(
        name,
        "priors",
        None,
        "class priors: 0.3,0.7 (in class order) or spam=0.4,ham=0.6",
        allow_none=True,
        flag="--priors",
        default_text="class frequencies",
        parse=parse_priors,
        sums_to_one=sums_to_one,
    )


def alpha(default: float = 1.0, *, per_feature: bool = False) -> Hyperparameter:
    """Additive (Lidstone) smoothing, shared by the count-based naive Bayes models.

    ``per_feature``: the Python API also takes one value per feature, an
    array of shape (n_features,), as scikit-learn's discrete naive Bayes does.
    """
    return Hyperparameter(
        "alpha",
        "float",
        default,
        "Lidstone smoothing (1 = Laplace)",
        low=0.0,
        flag="--alpha",
        per_feature=per_feature,
    )


def fit_prior() -> Hyperparameter:
    """Whether class priors are learnt from frequencies (naive Bayes models)."""
    return Hyperparameter(
        "fit_prior",
        "bool",
        True,
        "learn class priors from frequencies, or use uniform ones",
        flag="--fit-prior/--no-fit-prior",
        default_text="learn",
    )


def choice(
    name: str,
    options: tuple[str, ...],
    default: str,
    help: str,
    *,
    cli_default: object = SAME,
    default_text: str | None = None,
    file_default: object = SAME,
    searchable: bool = False,
    shapes_statistics: bool = False,
) -> Hyperparameter:
    """A hyperparameter that takes one of a few words, with the flag ``--name``."""
    return Hyperparameter(
        name,
        "choice",
        default,
        help,
        options=options,
        flag="--" + name.replace("_", "-"),
        cli_default=cli_default,
        default_text=default_text,
        parse=parse_choice,
        file_default=file_default,
        searchable=searchable,
        shapes_statistics=shapes_statistics,
    )


#: ``missing=``'s options for the naive Bayes models and for the others (LDA, QDA).
MISSING_NAIVE_BAYES = ("error", "ignore", "drop")
MISSING_ROWS_ONLY = ("error", "drop")


def missing(options: tuple[str, ...] = MISSING_NAIVE_BAYES) -> Hyperparameter:
    """What a missing cell (NaN) does; ``"error"`` in Python, as scikit-learn refuses NaN.

    The command line's default is ``"ignore"`` where the model can leave a
    cell out of its product (the naive Bayes models), ``"drop"`` otherwise.
    """
    return choice(
        "missing",
        options,
        "error",
        "missing cells: error, ignore (left out of the product; naive Bayes) or drop the row",
        cli_default="ignore" if "ignore" in options else "drop",
        default_text="ignore (lda, qda: drop)",
    )


def unseen() -> Hyperparameter:
    """What a category unseen in training does at predict."""
    return choice(
        "unseen",
        ("error", "ignore"),
        "error",
        "categories unseen in training: error, or ignore (left out of the product)",
    )


def var_smoothing() -> Hyperparameter:
    """Gaussian variance smoothing, as scikit-learn's ``GaussianNB`` has it."""
    return Hyperparameter(
        "var_smoothing",
        "float",
        1e-9,
        "fraction of the largest feature variance (or, with --var-smoothing-scale feature, "
        "of each feature's own) added to every variance",
        low=0.0,
        flag="--var-smoothing",
    )


def var_smoothing_scale(default: str = "global") -> Hyperparameter:
    """What ``var_smoothing`` is a fraction of (Gaussian columns).

    ``default``: ``"global"`` where a model keeps scikit-learn's rule
    (``gaussian``), ``"feature"`` where it has no scikit-learn twin and its
    posteriors should not depend on a column's units (``mixed``). A model
    file without the member was fitted with ``"global"``, the only rule
    there was before it was stored.
    """
    return choice(
        "var_smoothing_scale",
        ("global", "feature"),
        default,
        "var_smoothing is a fraction of the largest variance (global) or each feature's own",
        file_default="global",
        searchable=True,
    )


#: How ``numeric_estimator`` models a numeric column: the values the
#: mixed model's ``column_types`` gives those distributions.
NUMERIC_ESTIMATORS = ("gaussian", "kernel", "discretized")


def numeric_estimator() -> Hyperparameter:
    """The class-conditional distribution of every numeric column (Weka
    NaiveBayes' ``-K`` and ``-D`` as one switch).

    It decides which statistics are gathered (moments, or the distinct
    values with their weights), so ``nbcli tune`` cannot search it on one pass.
    """
    return choice(
        "numeric_estimator",
        NUMERIC_ESTIMATORS,
        "gaussian",
        "numeric columns: gaussian (normal), kernel (kernel density) or discretized "
        "(MDL intervals); mixed: the kind of columns --column leaves untyped",
        file_default="gaussian",
        shapes_statistics=True,
    )


def bandwidth_adjust() -> Hyperparameter:
    """Multiplier of the kernel columns' bandwidths (R ``density``'s ``adjust``);
    applied when statistics become a model, so ``nbcli tune`` searches it on one pass."""
    return Hyperparameter(
        "bandwidth_adjust",
        "float",
        1.0,
        "multiplier of the kernel columns' bandwidths (Silverman's rule of thumb)",
        low=0.0,
        low_open=True,
        flag="--bandwidth-adjust",
    )


def bandwidth() -> Hyperparameter:
    """The kernel columns' bandwidth rule."""
    return choice(
        "bandwidth",
        ("nrd0", "weka"),
        "nrd0",
        "kernel columns: nrd0 (Silverman's rule of thumb, R's default) or weka (Weka "
        "NaiveBayes -K's estimator)",
    )


def min_categories() -> Hyperparameter:
    """A lower bound on the number of categories of categorical features."""
    return Hyperparameter(
        "min_categories",
        "int",
        None,
        "least number of categories per categorical feature (one, or one per feature)",
        low=0,
        allow_none=True,
        flag="--min-categories",
        parse=parse_int,
        per_feature=True,
    )


def force_alpha() -> Hyperparameter:
    """Whether ``alpha`` is used as given even below 1e-10 (scikit-learn's ``force_alpha``).

    The command line keeps the floor (``cli_default=False``), so ``--alpha 0``
    never gives a log-probability of minus infinity.
    """
    return Hyperparameter(
        "force_alpha",
        "bool",
        True,
        "use alpha as given even below 1e-10 (else raise it to 1e-10, with a warning)",
        cli_default=False,
    )


def solver(options: tuple[str, ...]) -> Hyperparameter:
    """scikit-learn's ``solver`` of LDA and QDA: accepted, and the same model for each.

    The statistics determine the model; how scikit-learn would have solved
    for it (SVD of the rows, least squares, an eigenproblem) does not change it.
    """
    return Hyperparameter(
        "solver",
        "choice",
        options[0],
        "scikit-learn's solver name; every solver gives the same model here",
        options=options,
    )


def shrinkage(*, on_command_line: bool = True) -> Hyperparameter:
    """Covariance shrinkage of LDA and QDA: ``"auto"`` (Ledoit-Wolf) or a number in [0, 1].

    ``on_command_line=False`` leaves it to the Python API (no ``--shrinkage``
    flag, and so no parsing of ``auto`` from text).
    """
    return Hyperparameter(
        "shrinkage",
        "float",
        None,
        "'auto' (Ledoit-Wolf) or a number in [0, 1]",
        low=0.0,
        high=1.0,
        allow_none=True,
        options=("auto",),
        flag="--shrinkage" if on_command_line else None,
        parse=(
            parse_float_or_option(("auto",), "'auto' or a number in [0, 1]")
            if on_command_line
            else None
        ),
    )


def parse_count_or_fraction(text: str, where: str):
    """``50`` -> 50 (a count), ``0.95`` -> 0.95 (a fraction), ``none`` -> None."""
    t = text.strip().lower()
    if t in ("none", ""):
        return None
    message = (
        f"{where} must be a number of components (a whole number >= 1) or a fraction of "
        f"the variance in (0, 1); got {text!r}"
    )
    try:
        value = float(t)
    except ValueError:
        raise ValueError(message) from None
    if not math.isfinite(value):
        # inf, nan and 1e400 (read as inf) count nothing and are no fraction.
        raise ValueError(message)
    return int(value) if value >= 1 and value == int(value) else value


def pca() -> Hyperparameter:
    """Principal components the model is fitted on (Gaussian NB, LDA, QDA)."""
    return Hyperparameter(
        "pca",
        "float",
        None,
        "principal components to keep: a count, or a fraction of the variance in (0, 1)",
        allow_none=True,
        flag="--pca",
        parse=parse_count_or_fraction,
        count_or_fraction=True,
        default_text="none (all features)",
    )


def standardize() -> Hyperparameter:
    """Whether columns are standardised (StandardScaler's rule) before any projection."""
    return Hyperparameter(
        "standardize",
        "bool",
        False,
        "centre each column and divide it by its standard deviation (before --pca)",
        flag="--standardize/--no-standardize",
    )


def store_covariance() -> Hyperparameter:
    """scikit-learn's ``store_covariance`` of LDA and QDA: accepted, the covariance is always kept."""
    return Hyperparameter(
        "store_covariance",
        "bool",
        False,
        "accepted for scikit-learn; covariance_ is always set",
    )


def covariance_method() -> Hyperparameter:
    """The divisor of LDA's and QDA's covariances, named as MASS's ``method``.

    ``"mle"``: maximum likelihood, ``n`` (pooled) and ``n_k`` (per class),
    as scikit-learn; ``"moment"``: the unbiased ``n - K`` and ``n_k - 1`` of
    MASS's ``lda`` and ``qda`` (their default). Applied when statistics
    become a model, so ``nbcli tune`` searches it on one pass.
    """
    return choice(
        "covariance_method",
        ("mle", "moment"),
        "mle",
        "covariance divisor: mle (n, n_k: scikit-learn) or moment (n - K, n_k - 1: "
        "unbiased, MASS's lda/qda default)",
        searchable=True,
    )


def covariance_estimator() -> Hyperparameter:
    """scikit-learn's ``covariance_estimator`` of LDA and QDA (Python API only)."""
    return Hyperparameter(
        "covariance_estimator",
        "object",
        None,
        "a scikit-learn covariance estimator (Python API only)",
        allow_none=True,
    )


def check_hyperparameters(specs, params: dict, origins: dict | None = None) -> None:
    """Check each of ``params`` against its spec in ``specs`` (names without one are skipped).

    ``origins`` names where each value came from, for the message.

    Raises
    ------
    ValueError
        For the first value of the wrong type or out of range.
    """
    by_name = {s.name: s for s in specs}
    origins = origins or {}
    for name, value in params.items():
        spec = by_name.get(name)
        if spec is not None:
            spec.check(value, origins.get(name, name))
