"""Input checks shared by the estimators.

Errors are ``ValueError`` (or ``TypeError`` for unsupported containers) with a
message that says what was wrong and where, following scikit-learn's
conventions so that the estimators behave like its own.
"""

from __future__ import annotations

import functools
import numbers
import sys
import warnings

import numpy as np


class DataConversionWarning(UserWarning):
    """Input was accepted after a conversion the caller may not have meant,
    such as labels given as a column vector of shape (n_samples, 1)."""


@functools.cache
def _joint_class(ours: type, theirs: type) -> type:
    # Made at run time, the class cannot be found by name when unpickling;
    # its instances pickle as plain instances of ``ours``.
    return type(
        ours.__name__,
        (ours, theirs),
        {
            "__module__": ours.__module__,
            "__reduce__": lambda self: (ours, self.args),
        },
    )


def sklearn_compatible(ours: type) -> type:
    """``ours``, or a subclass of it and scikit-learn's class of the same name.

    For exception and warning classes that scikit-learn also defines in
    ``sklearn.exceptions`` (``NotFittedError``, ``DataConversionWarning``):
    when scikit-learn is loaded in this process, what is raised is also an
    instance of its class, so that its tools (``check_is_fitted``, pipelines,
    its estimator checks) recognise it. Code that has not imported
    scikit-learn cannot be catching its classes, so it is never imported here.
    """
    module = sys.modules.get("sklearn.exceptions")
    theirs = getattr(module, ours.__name__, None) if module is not None else None
    if theirs is None or issubclass(ours, theirs):
        return ours
    return _joint_class(ours, theirs)


class DataValueError(ValueError):
    """A bad value in the data, with where it is (0-based row and column).

    The CLI uses ``row`` and ``column`` to name the file's row and column;
    ``str()`` of the error is a complete message on its own. ``remedy``,
    when given, is ``(hyperparameter, value, what it does)``: a setting that
    would accept the value, which the message names as the Python API spells
    it and the CLI as its flag.
    """

    def __init__(
        self,
        message: str,
        row: int,
        column: int,
        reason: str,
        remedy: tuple[str, str, str] | None = None,
    ):
        super().__init__(message)
        self.row = row
        self.column = column
        self.reason = reason
        self.remedy = remedy


#: How many features a message lists before it counts the rest.
LISTED_FEATURES = 10


class ColumnsMessage(Exception):
    """Base of a model's errors and warnings whose message names columns of
    its input: they keep the columns, so that a caller that knows the
    columns' names says the message with them (:meth:`named`).

    ``pieces`` are the message: text (``str``) and the columns it names,
    each an ``int`` (one column of the model's input: ``column 3``) or a
    tuple of ints (features it lists: ``x0, x3``, the first
    :data:`LISTED_FEATURES` and a count of the rest). ``names`` are the
    model's own column names (``feature_names_in_``), if it has them:
    ``str()`` is then ``column 3 ('island')``.

    Attributes
    ----------
    pieces : tuple of str, int or tuple of int
    """

    def __init__(self, *pieces, names=None):
        self.pieces = pieces
        super().__init__(self._say(names, own=True))

    def named(self, names) -> str:
        """The message with its columns called by ``names`` (the model's input
        in order): ``column 'island'``, ``'bill_length_mm', 'flipper_length_mm'``;
        an index beyond ``names`` as ``str()`` has it."""
        return self._say(list(names), own=False)

    def _say(self, names, own: bool) -> str:
        def known(i: int) -> bool:
            return names is not None and 0 <= i < len(names)

        def one(j: int) -> str:
            if not known(j):
                return f"column {j}"
            return f"column {j} ({names[j]!r})" if own else f"column {str(names[j])!r}"

        def listed(features) -> str:
            shown = [
                (str(names[i]) if own else repr(str(names[i]))) if known(i) else f"x{i}"
                for i in features[:LISTED_FEATURES]
            ]
            more = len(features) - len(shown)
            return ", ".join(shown) + (f" and {more} more" if more > 0 else "")

        return "".join(
            p if isinstance(p, str) else one(p) if isinstance(p, int) else listed(p)
            for p in self.pieces
        )


class ColumnValueError(ColumnsMessage, ValueError):
    """A ``ValueError`` about columns of the model's input (see :class:`ColumnsMessage`)."""


def _frame_to_numpy(X) -> np.ndarray:
    """A data frame's values; pandas' nullable numbers (``Float64``,
    ``Int64``, ``boolean``) with ``pd.NA`` as NaN, the missing value every
    model reads (their own ``to_numpy`` makes an object array of ``pd.NA``)."""
    dtypes = getattr(X, "dtypes", None)
    kinds = list(dtypes) if dtypes is not None and hasattr(dtypes, "__iter__") else []
    if not kinds and getattr(X, "dtype", None) is not None:
        kinds = [X.dtype]
    if any(not isinstance(dt, np.dtype) and hasattr(dt, "na_value") for dt in kinds):
        for dtype in (np.float64, None):
            try:
                # Beside a column of text (None): the check of text words it.
                return X.to_numpy(dtype=dtype, na_value=np.nan)
            except (TypeError, ValueError):
                continue
    return X.to_numpy()


def check_array(X, *, name: str = "X", finite: bool = True) -> np.ndarray:
    """Return ``X`` as a 2-D float64 array with finite entries.

    With ``finite=False`` the scan for NaN and infinity is left to the
    caller (scoring does it block by block, while the block is in cache).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_samples, n_features), dtype float64
        ``X`` itself when it already is one (no copy), else a converted copy.
        Memory order is kept: column-major input stays column-major.

    Raises
    ------
    TypeError
        For sparse matrices, which these estimators do not accept, and for
        object arrays holding values that are neither numbers nor strings.
    ValueError
        For arrays that are not 2-D, are empty, hold complex values or text
        that is not a number, or contain NaN or infinity (the message names
        the first offending row and column, 0-based).

    Messages follow scikit-learn's ``check_array`` wording, so that code
    written against scikit-learn's errors reads ours too.
    """
    if hasattr(X, "tocsr") or hasattr(X, "toarray"):
        raise TypeError("sparse input is not supported; convert it with X.toarray() first")
    if hasattr(X, "to_numpy") and not isinstance(X, np.ndarray):
        X = _frame_to_numpy(X)
    arr = np.asarray(X)
    if arr.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} holds complex values")
    if arr.dtype.kind in "OUS":
        try:
            arr = arr.astype(np.float64)
        except ValueError:
            raise ValueError(
                f"{name} holds non-numeric values; every feature must be a number"
            ) from None
        except TypeError as exc:
            # Python's own text ("float() argument must be a string or a real
            # number, not 'dict'") says what was found, so it is kept.
            raise TypeError(f"{name} holds values that are not numbers ({exc})") from None
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} has dtype {arr.dtype}; expected numbers")
    if arr.ndim != 2:
        raise ValueError(
            f"expected a 2-D array of shape (n_samples, n_features) for {name}, "
            f"got {arr.ndim}-D with shape {arr.shape}. Reshape your data with "
            "X.reshape(-1, 1) for one feature or X.reshape(1, -1) for one sample"
        )
    n, d = arr.shape
    if n == 0:
        raise ValueError(
            f"Found array with 0 sample(s) (shape={arr.shape}) while a minimum of 1 is "
            f"required: {name} is empty"
        )
    if d == 0:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={arr.shape}) while a minimum of 1 is "
            f"required: {name} has no feature columns"
        )
    if arr.dtype != np.float64:
        arr = arr.astype(np.float64, order="K")
    if finite:
        check_finite(arr, name=name)
    return arr


def check_finite(arr: np.ndarray, *, name: str = "X", row_offset: int = 0) -> None:
    """Raise ``ValueError`` naming the first NaN or infinite entry of ``arr``."""
    # A sum is one cheap pass; only when it is not finite do we look closer
    # (the sum of huge finite values can overflow, so the closer look decides).
    with np.errstate(over="ignore", invalid="ignore"):
        total = arr.sum()
    if np.isfinite(total):
        return
    bad = ~np.isfinite(arr)
    if not bad.any():
        return
    rows, cols = np.nonzero(bad)
    first = np.argmin(rows * arr.shape[1] + cols)
    i, j = int(rows[first]), int(cols[first])
    what = "NaN" if np.isnan(arr[i, j]) else "infinity"
    raise DataValueError(
        f"{name} contains {what} at row {i + row_offset}, column {j}; "
        "input must not contain NaN or infinity",
        i + row_offset,
        j,
        f"{what} is not allowed",
    )


def check_labels(y, n_samples: int) -> np.ndarray:
    """Return ``y`` as a 1-D label array of length ``n_samples``.

    Labels may be integers, strings, booleans or floats with integral values;
    non-integral floats mean a regression target and are refused, as are
    missing labels. A column vector of shape (n_samples, 1) is accepted with
    a :class:`DataConversionWarning`.

    Raises
    ------
    ValueError
        For a shape other than (n_samples,) or (n_samples, 1), missing or
        continuous labels, or labels of mixed or unknown type.
    """
    if hasattr(y, "to_numpy") and not isinstance(y, np.ndarray):
        y = y.to_numpy()
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            sklearn_compatible(DataConversionWarning)(
                "A column-vector y was passed when a 1d array was expected; "
                "its single column is used as the labels"
            ),
            stacklevel=3,
        )
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D of shape (n_samples,), got shape {y.shape}")
    if y.shape[0] != n_samples:
        raise ValueError(
            f"X and y have inconsistent numbers of samples: {n_samples} and {y.shape[0]}"
        )
    if y.dtype.kind == "f":
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinity; every sample needs a label")
        if not np.all(y == np.round(y)):
            raise ValueError(
                "Unknown label type: continuous target; class labels must be integers or strings"
            )
    elif y.dtype.kind == "O":
        kinds = set(map(type, y.tolist()))  # one pass in C; the common case is {str}
        if any(k is type(None) or issubclass(k, float) for k in kinds) and any(
            v is None or (isinstance(v, float) and v != v) for v in y
        ):
            raise ValueError("y contains missing labels; every sample needs a label")
        if len(kinds) > 1 and not all(issubclass(k, numbers.Integral) for k in kinds):
            raise ValueError(
                "y mixes label types "
                f"({', '.join(sorted(k.__name__ for k in kinds))}); use one type"
            )
    elif y.dtype.kind not in "biuUS":
        raise ValueError(f"Unknown label type: dtype {y.dtype}")
    return y


def check_sample_weight(sample_weight, n_samples: int) -> np.ndarray | None:
    """Return sample weights as float64 of shape (n_samples,), or None for unit weights.

    Raises
    ------
    ValueError
        For a wrong shape, NaN or infinity, negative weights, or weights that
        are all zero (they would leave every statistic empty).
    """
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 0:
        w = np.full(n_samples, float(w))
    if w.shape != (n_samples,):
        raise ValueError(f"sample_weight.shape == {w.shape}, expected {(n_samples,)}")
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight contains NaN or infinity")
    if np.any(w < 0):
        raise ValueError("sample_weight must be non-negative")
    if n_samples and not np.any(w > 0):
        raise ValueError("Sample weights must contain at least one non-zero number")
    return w


def label_text(label) -> str:
    """A class label for messages: ``'spam'`` or ``3`` (no NumPy scalar reprs)."""
    if isinstance(label, np.generic):
        label = label.item()
    return repr(label)


def refuse_priors_by_label(priors, name: str = "priors") -> None:
    """Refuse priors given as ``{label: prior}``: the command line and config
    files take such a table (and put it in class order once the classes are
    known); an estimator takes a list in the order of ``classes_``."""
    if isinstance(priors, dict):
        raise ValueError(
            f"{name} is a table by class label, which the command line and config files "
            "take; an estimator takes a list in the order of classes_ (the sorted labels)"
        )


def check_priors(priors, n_classes: int, name: str = "priors") -> np.ndarray:
    """Validate user-given class priors: length ``n_classes``, non-negative, sum 1."""
    refuse_priors_by_label(priors, name)
    p = np.array(priors, dtype=np.float64).ravel()  # a copy: never the caller's array
    if p.shape[0] != n_classes:
        raise ValueError(
            f"{name} has {p.shape[0]} values but there are {n_classes} classes "
            "(Number of priors must match number of classes)"
        )
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"{name} must be non-negative numbers")
    if not np.isclose(p.sum(), 1.0, rtol=0, atol=1e-8):
        raise ValueError(f"{name} must sum to 1, they sum to {p.sum():.10g}")
    return p
