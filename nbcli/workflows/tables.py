"""Tables as they come: the missing-value policy, column types and categories
between the reader, the model and the model file.

:func:`nbcli.workflows.train.train` and the scoring path use these so that
fit and predict agree: the policy chosen at fit (``missing``, ``unseen``,
the ``na_values``) is stored in the model file's ``training`` record, the
column types and categories in its ``columns`` member, and predict reads
the file through them (:func:`read_options_for`), overriding the policy
only where asked.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace

import numpy as np

from nbcli.errors import NbcliError
from nbcli.models._missing import incomplete_rows
from nbcli.models.mixed import MixedNB

__all__ = [
    "MISSING_POLICIES",
    "UNSEEN_POLICIES",
    "COLUMN_TYPES",
    "RowCounts",
    "choose_missing",
    "missing_in_force",
    "missing_remedies",
    "missing_wording",
    "can_ignore_missing",
    "check_column_types",
    "apply_column_types",
    "column_records",
    "set_category_counts",
    "smoothing_warnings",
    "large_epsilon_warnings",
    "zero_variance_warnings",
    "read_options_for",
    "reading_record",
    "parse_column_types",
]

MISSING_POLICIES = ("error", "ignore", "drop")
UNSEEN_POLICIES = ("error", "ignore")
#: ``--column NAME=TYPE`` types (the mixed model's per-column distributions).
COLUMN_TYPES = MixedNB.feature_kinds


def _spec(estimator, name: str):
    return {s.name: s for s in type(estimator).hyperparameters}.get(name)


def _accepts(estimator, name: str, value) -> bool:
    spec = _spec(estimator, name)
    return spec is not None and spec.is_valid(value)


def can_ignore_missing(estimator) -> bool:
    """Whether the model can leave a missing cell out (its ``missing`` takes ``"ignore"``)."""
    return _accepts(estimator, "missing", "ignore")


def missing_remedies(estimator) -> tuple[str, ...]:
    """The ``missing`` policies besides ``error`` the model declares it takes
    (its hyperparameter spec): what a refused missing cell may be told to
    try instead."""
    return tuple(p for p in MISSING_POLICIES if p != "error" and _accepts(estimator, "missing", p))


def choose_missing(estimator, missing: str | None) -> str:
    """The missing-value policy of a fit: ``missing`` checked, or by default
    the estimator's own ``missing`` (the command line sets it to its
    defaults: ``ignore`` for the models that can leave a cell out, the naive
    Bayes ones; ``drop`` for LDA and QDA, which model the features jointly);
    for an estimator without one, ``drop``.

    Raises
    ------
    NbcliError
        For an unknown policy, or ``ignore`` for a model that cannot.
    """
    if missing is None:
        missing = estimator.get_params().get("missing", "drop")
    if missing not in MISSING_POLICIES:
        raise NbcliError(f"--missing must be one of {', '.join(MISSING_POLICIES)}; got {missing!r}")
    if missing == "ignore" and not can_ignore_missing(estimator):
        raise NbcliError(
            f"--missing ignore: the {estimator.name} model cannot leave a missing cell out "
            "(it models the features jointly); use --missing drop to skip such rows, or "
            "--missing error"
        )
    return missing


def missing_in_force(estimator, missing: str) -> str:
    """The policy ``estimator`` follows when its ``missing`` is ``missing``.

    The same, except where the model with ``ignore`` acts as ``drop``: under
    a projection (``--pca``, ``--standardize``), which mixes or rescales
    every column, so that a missing cell cannot be left out on its own (the
    model's ``missing_policy``). Rows are read, counted and scored by the
    policy in force; the model keeps the policy it was given.
    """
    if missing == "ignore" and "missing" in estimator.get_params():
        probe = copy.copy(estimator)
        probe.missing = "ignore"
        missing = getattr(probe, "missing_policy", missing)
    return missing


def fold_missing(estimator, missing: str | None) -> str:
    """:func:`choose_missing` for the fold statistics of ``cv`` and ``tune``:
    the policy in force (:func:`missing_in_force`).

    A fold's statistics are gathered by the model's ``accumulate``, which
    does not drop rows as ``fit`` does: where the model with ``ignore`` acts
    as ``drop``, the rows with a missing cell are left out as they are read,
    and counted.
    """
    return missing_in_force(estimator, choose_missing(estimator, missing))


def missing_wording(estimator, missing: str) -> str:
    """``--missing POLICY`` as messages name the policy ``estimator`` was
    given; for ``ignore`` acting as ``drop``, saying so and why."""
    if missing_in_force(estimator, missing) == missing:
        return f"--missing {missing}"
    return (
        f"--missing {missing}, which acts as drop under --pca and --standardize "
        "(a projection mixes every column, so a missing cell cannot be left out on its own)"
    )


#: Other spellings ``--column`` takes for a type.
_SPELLINGS = {"discretised": "discretized"}


def parse_column_types(values) -> dict[str, str]:
    """``["sex=categorical", "a=gaussian,b=bernoulli"]`` (or a dict) -> ``{name: type}``.

    Raises
    ------
    NbcliError
        For an entry without ``=``, an unknown type, or a column given two types.
    """
    if values is None:
        return {}
    if isinstance(values, dict):
        items = [(str(k), str(v)) for k, v in values.items()]
    else:
        items = []
        for value in values:
            for part in str(value).split(","):
                if not part.strip():
                    continue
                name, sep, kind = part.rpartition("=")
                if not sep or not name.strip():
                    raise NbcliError(
                        f"--column {part!r}: expected NAME=TYPE, TYPE one of "
                        f"{', '.join(COLUMN_TYPES)}"
                    )
                items.append((name.strip(), kind.strip().lower()))
    out: dict[str, str] = {}
    for name, kind in items:
        kind = _SPELLINGS.get(kind, kind)
        if kind not in COLUMN_TYPES:
            raise NbcliError(
                f"--column {name}={kind}: unknown column type; choose one of "
                f"{', '.join(COLUMN_TYPES)}"
            )
        if out.get(name, kind) != kind:
            raise NbcliError(
                f"--column {name}: given two types, {out[name]} and {kind}; give each column one"
            )
        out[name] = kind
    return out


def check_column_types(estimator, column_types: dict[str, str]) -> None:
    """Refuse ``--column`` types the model cannot take."""
    if not column_types:
        return
    if "column_types" in estimator.get_params():
        return
    kinds = type(estimator).feature_kinds
    if "categorical" in kinds and set(column_types.values()) <= set(kinds):
        return  # the categorical model: `--column NAME=categorical` reads labels
    raise NbcliError(
        f"--column sets per-column distributions, which the {estimator.name} model does not "
        "have; use --model mixed"
    )


def apply_column_types(estimator, plan, column_types: dict, missing: str, unseen: str) -> None:
    """Set the model's ``column_types`` (mixed), ``missing`` and ``unseen`` from the plan.

    Raises
    ------
    NbcliError
        For ``--column`` naming a column that is not a feature.
    """
    unknown = [c for c in column_types if c not in plan.features]
    if unknown:
        raise NbcliError(
            f"--column names {', '.join(repr(c) for c in unknown)}, which "
            f"{'is' if len(unknown) == 1 else 'are'} not a feature; the features are: "
            f"{', '.join(plan.features)}"
        )
    params: dict[str, object] = {}
    if "column_types" in estimator.get_params():
        # A numeric column --column leaves untyped takes the model's numeric estimator.
        numeric = estimator.get_params().get("numeric_estimator", MixedNB.feature_kinds[0])
        params["column_types"] = [
            _column_type(c, plan, column_types, numeric) for c in plan.features
        ]
    if _accepts(estimator, "missing", missing):
        params["missing"] = missing
    if _accepts(estimator, "unseen", unseen):
        params["unseen"] = unseen
    if params:
        estimator.set_params(**params)


def _column_type(name: str, plan, column_types: dict, numeric: str) -> str:
    from nbcli.io.plan import CATEGORICAL

    if name in column_types:
        return column_types[name]
    return "categorical" if plan.kind(name) == CATEGORICAL else numeric


def column_records(estimator, plan, categories: dict) -> list[dict]:
    """The model file's ``columns`` member: per feature ``name``, ``type``
    and, for a column read as categories, ``categories`` (first-seen order)."""
    from nbcli.io.plan import WORDS

    types = estimator.get_params().get("column_types")
    typed = None
    if isinstance(types, (list, tuple)) and len(types) == len(plan.matrix) < len(plan.features):
        # Text columns (mixed --text) have no entry in column_types: their
        # words are the model's multinomial terms.
        typed = dict(zip(plan.matrix, map(str, types)))
    out = []
    for j, name in enumerate(plan.features):
        if plan.kind(name) == WORDS:
            kind = "text"  # its words are the model's features
        elif typed is not None:
            kind = typed[name]
        elif isinstance(types, (list, tuple)) and len(types) == len(plan.features):
            kind = str(types[j])
        elif type(estimator).feature_kinds == ("categorical",):
            kind = "categorical"
        else:
            kind = "numeric"
        record: dict = {"name": name, "type": kind}
        if name in categories:
            record["categories"] = list(categories[name])
        out.append(record)
    return out


def set_category_counts(estimator, feature_names, categories: dict) -> None:
    """Give each categorical column as many categories as its table holds
    (``min_categories``), so a category seen only in skipped rows still
    has its (smoothed) probability, and the stored list and the model agree."""
    if not categories or "min_categories" not in estimator.get_params():
        return
    counts = np.zeros(len(feature_names), dtype=np.int64)
    for j, name in enumerate(feature_names):
        if name in categories:
            counts[j] = len(categories[name])
    given = estimator.get_params()["min_categories"]
    if given is not None and np.ndim(given) == 1 and len(given) != len(feature_names):
        raise NbcliError(
            f"--min-categories gives {len(given)} values for {len(feature_names)} feature columns "
            f"({', '.join(map(str, feature_names))}); give one number for all, or one per column"
        )
    if given is not None:
        counts = np.maximum(
            counts, np.broadcast_to(np.asarray(given, dtype=np.int64), counts.shape)
        )
    estimator.set_params(min_categories=counts)


def model_feature_names(estimator, feature_names) -> list[str]:
    """The names of the features the fitted model sees: the table's columns,
    or ``pc1..pcK`` when it is fitted on principal components (``pca``)."""
    projection = getattr(estimator, "projection_", None)
    components = [] if projection is None else projection.component_names
    return components or list(feature_names)


def _on_components(estimator) -> bool:
    projection = getattr(estimator, "projection_", None)
    return projection is not None and projection.components is not None


def smoothing_warnings(path: str, estimator, feature_names) -> list[str]:
    """Warnings about ``var_smoothing``'s epsilon: where a class-feature
    variance is epsilon alone (:func:`zero_variance_warnings`), and where
    epsilon adds more than a stated share to one (:func:`large_epsilon_warnings`)."""
    return zero_variance_warnings(path, estimator, feature_names) + large_epsilon_warnings(
        path, estimator, feature_names
    )


def large_epsilon_warnings(path: str, estimator, feature_names) -> list[str]:
    """A warning when epsilon exceeds
    :data:`~nbcli.models.gaussian.EPSILON_SHARE` of a class's (positive)
    variance of a feature, so that it moves posteriors, naming the first
    pairs, the column whose variance sets a global epsilon, and the flag
    that makes epsilon follow each feature's own units.

    The models list the pairs in ``large_epsilon_`` (class index, feature
    index in the table).
    """
    from nbcli.models._gaussian_terms import EPSILON_SHARE

    pairs = getattr(estimator, "large_epsilon_", None)
    if pairs is None or len(pairs) == 0 or not getattr(estimator, "var_smoothing", 0):
        return []
    classes = estimator.classes_
    shown = "; ".join(
        f"'{feature_names[int(j)]}' in class {_plain(classes[int(k)])!r}" for k, j in pairs[:3]
    )
    more = f" and {len(pairs) - 3} more pairs" if len(pairs) > 3 else ""
    share = f"{EPSILON_SHARE:.0%}"
    if estimator.get_params().get("var_smoothing_scale") == "global":
        source = _largest_variance_column(estimator, feature_names)
        if _on_components(estimator):
            fix = "--var-smoothing-scale feature takes epsilon from each component's own variance"
            if not estimator.get_params().get("standardize"):
                fix = (
                    "the components' variances follow the input columns' units: "
                    f"--standardize puts the columns on one scale first, and {fix}"
                )
            return [
                f"{path}: var_smoothing's epsilon ({estimator.var_smoothing:g} times the "
                f"largest component variance{source}) is more than {share} of the class "
                f"variance of {shown}{more}, so it changes the posteriors; {fix}"
            ]
        return [
            f"{path}: var_smoothing's epsilon ({estimator.var_smoothing:g} times the largest "
            f"feature variance{source}) is more than {share} of the class variance of {shown}"
            f"{more}, so it changes the posteriors and depends on that column's units; "
            "--var-smoothing-scale feature takes epsilon from each feature's own variance"
        ]
    return [
        f"{path}: var_smoothing's epsilon ({estimator.var_smoothing:g} times each feature's "
        f"variance) is more than {share} of the class variance of {shown}{more}, so it "
        "changes the posteriors: a smaller --var-smoothing leaves them to the data"
    ]


def _largest_variance_column(estimator, feature_names) -> str:
    """``, that of 'worst area'``: the column whose variance sets a global epsilon."""
    j = getattr(estimator, "largest_variance_feature_", -1)
    return f", that of '{feature_names[int(j)]}'" if 0 <= j < len(feature_names) else ""


def zero_variance_warnings(path: str, estimator, feature_names) -> list[str]:
    """A warning when a class-feature variance is ``var_smoothing``'s epsilon
    alone, naming both, with the remedies the model in use offers.

    The models say which pairs those are (``zero_variance_``: class index,
    feature index in the table) and whether the class's values differ
    (``zero_variance_spread_``: their variance underflowed float64) or are
    all equal; without smoothing no such pair is fitted.
    """
    pairs = getattr(estimator, "zero_variance_", None)
    if pairs is None or len(pairs) == 0 or not getattr(estimator, "var_smoothing", 0):
        return []
    classes = estimator.classes_
    spread = np.asarray(getattr(estimator, "zero_variance_spread_", np.zeros(len(pairs), bool)))

    def listed(chosen) -> str:
        shown = "; ".join(
            f"'{feature_names[int(j)]}' in class {_plain(classes[int(k)])!r}" for k, j in chosen[:5]
        )
        return shown + (f" and {len(chosen) - 5} more" if len(chosen) > 5 else "")

    parts, remedies = [], []
    if not spread.all():
        parts.append(f"the feature is constant within the class: {listed(pairs[~spread])}")
        remedies.append(_smoothing_remedies(estimator))
    if spread.any():
        # Neither a per-feature scale (that variance underflows too) nor
        # categories fit values that differ: their scale is what is wrong.
        parts.append(
            f"the values differ, but their variance underflows float64: {listed(pairs[spread])}"
        )
        remedies.append(
            "rescaling the column (its values are too small for their squares to be held)"
            + ("" if remedies else " or a larger --var-smoothing")
        )
    return [
        f"{path}: a variance set by smoothing alone ({'; and where '.join(parts)}); such a "
        f"feature can decide a row's class by itself (a row at the class's value is drawn "
        f"into it, one off it ruled out): consider {'; or '.join(remedies)}"
    ]


def _smoothing_remedies(estimator) -> str:
    """The options that change a variance set by smoothing alone, as far as
    the model in use takes them: its hyperparameters and feature kinds."""
    params = estimator.get_params()
    remedies = []
    if params.get("var_smoothing_scale", "feature") != "feature":
        remedies.append("--var-smoothing-scale feature")
    remedies.append("a larger --var-smoothing")
    kinds = getattr(type(estimator), "feature_kinds", ())
    if _on_components(estimator):
        # A component mixes every column: no column of it can be read as categories.
        pass
    elif "categorical" in kinds:
        remedies.append("--column NAME=categorical")
    else:
        from nbcli.models.registry import model_classes

        # A model with both kinds can read such a column as categories.
        both = [
            name
            for name, cls in model_classes().items()
            if {"gaussian", "categorical"} <= set(cls.feature_kinds)
        ]
        if both:
            remedies.append(f"--model {both[0]} with --column NAME=categorical")
    return ", ".join(remedies[:-1]) + (" or " if len(remedies) > 1 else "") + remedies[-1]


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


@dataclass
class RowCounts:
    """Rows of a fit: read, used, skipped for a missing label, dropped or
    holding missing cells; the file rows of the current chunk's kept rows."""

    read: int = 0
    used: int = 0
    no_label: int = 0
    dropped: int = 0
    with_missing: int = 0
    first_no_label: int | None = None
    kept_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    dropped_labels: dict = field(default_factory=dict)

    def filter(self, ds, missing: str):
        """``ds`` without the rows the policy skips, counted."""
        n = ds.X.shape[0]
        keep = np.ones(n, dtype=bool)
        if ds.y_missing is not None and ds.y_missing.any():
            keep &= ~ds.y_missing
            if self.first_no_label is None:
                self.first_no_label = self.read + int(np.argmax(ds.y_missing)) + 1
            self.no_label += int(ds.y_missing.sum())
        holes = incomplete_rows(ds.X) & keep
        if missing == "drop":
            keep &= ~holes
            self.dropped += int(holes.sum())
            if ds.y is not None and holes.any():
                # The labels of the dropped rows, to name a class that loses every row.
                labels, counts = np.unique(np.asarray(ds.y)[holes], return_counts=True)
                for label, count in zip(labels.tolist(), counts.tolist()):
                    self.dropped_labels[label] = self.dropped_labels.get(label, 0) + count
        else:
            self.with_missing += int(holes.sum())
        self.kept_rows = self.read + np.flatnonzero(keep)
        self.read += n
        self.used += int(keep.sum())
        if keep.all():
            return replace(ds, y_missing=None)
        y = None if ds.y is None else np.asarray(ds.y)[keep]
        coding = getattr(ds, "y_coding", None)
        if coding is not None and y is not None and coding.describes(ds.y):
            coding = coding.take(keep, y)
        else:
            coding = None
        return replace(
            ds,
            X=np.asfortranarray(ds.X[keep]),
            y=y,
            y_coding=coding,
            kept={k: v[keep] for k, v in ds.kept.items()},
            # The documents of text columns go with their rows.
            words={k: v[keep] for k, v in ds.words.items()},
            y_missing=None,
        )

    def none_used(self, path: str) -> str:
        """Why no row of ``path`` is left to learn from: none read, none
        labelled, or the rest dropped for a missing cell (``--missing drop``)."""
        if self.read == 0:
            return f"{path}: no data rows"
        rows = f"{self.read:,} row{'s' if self.read != 1 else ''}"
        if self.no_label == self.read:
            return (
                f"{path}: none of its {rows} has a label (the target column is empty "
                "in every row); check --target"
            )
        labelled = f" ({self.no_label:,} without a label)" if self.no_label else ""
        return (
            f"{path}: every one of its {rows} is left out{labelled}: "
            f"{self.dropped:,} {'has' if self.dropped == 1 else 'have'} a missing cell, "
            "which the missing-value policy drop leaves out; fill the cells, --drop the "
            "columns that hold them, or use --missing ignore where the model takes it"
        )

    def lost_classes(self, path: str, classes) -> list[str]:
        """A warning for each label of dropped rows that is not among
        ``classes`` (the labels of the rows used, as read): a class every row
        of which had a missing cell, which the model will never predict."""
        known = set(np.asarray(classes).tolist())
        out = []
        for label, count in self.dropped_labels.items():
            if label not in known:
                out.append(
                    f"{path}: class {label!r} is left out of the model: all {count:,} of its "
                    f"row{'s' if count != 1 else ''} have a missing cell, which the "
                    "missing-value policy drop leaves out; the model will never predict it "
                    "(fill the cells, or --drop the columns that hold them)"
                )
        return out

    def warnings(self, path: str, missing: str) -> list[str]:
        out = []
        if self.no_label:
            out.append(
                f"{path}: skipped {self.no_label} row{'s' if self.no_label != 1 else ''} "
                f"without a label (the first at row {self.first_no_label})"
            )
        return out

    def notes(
        self,
        path: str,
        missing: str,
        columns: list[dict],
        in_force: str | None = None,
        code_widths: dict[str, int] | None = None,
    ) -> list[str]:
        """The fit summary's lines about the columns and the missing cells
        (``missing`` the policy given, ``in_force`` the one the model follows
        when it differs: see :func:`missing_in_force`; ``code_widths`` the
        categories of columns of integer codes, by name)."""
        described = []
        for c in columns:
            text = f"{c['name']}={c['type']}"
            if "categories" in c:
                k = len(c["categories"])
                text += f" ({k} categor{'y' if k == 1 else 'ies'})"
            elif c["name"] in (code_widths or {}):
                # Codes as given: 1, 2, 3 make 0 a category too, which the summary shows.
                k = (code_widths or {})[c["name"]]
                text += f" ({k} categor{'y' if k == 1 else 'ies'}: codes 0 to {k - 1})"
            described.append(text)
        out = [f"column types: {', '.join(described)}"]
        in_force = in_force or missing
        how = {
            "ignore": "left out of their feature's likelihood",
            "drop": "their rows skipped",
            "error": "refused",
        }[in_force]
        if in_force != missing:
            how = f"acts as {in_force} under the projection: {how}"
        if in_force == "drop":
            counted = f"{self.dropped} row{'s' if self.dropped != 1 else ''} dropped"
        else:
            counted = f"{self.with_missing} row{'s' if self.with_missing != 1 else ''} with one"
        out.append(f"missing cells: {missing} ({how}); {counted}; {self.used} rows used")
        return out


def read_options_for(
    mf,
    *,
    missing: str | None = None,
    unseen: str | None = None,
    na_values: tuple[str, ...] | None = None,
) -> dict:
    """Reader options that read a file as the model was trained: its
    categorical columns through the stored categories, missing cells and
    unseen categories by the stored policy (or the override), missing-value
    texts as at fit (or ``na_values``: a file that writes them otherwise).

    Returns
    -------
    dict
        Keyword options of :func:`nbcli.io.data.iter_dataset`, and
        ``"missing"``: the policy in force (:func:`missing_in_force`).

    Raises
    ------
    NbcliError
        For an unknown policy, or ``ignore`` for a model that cannot.
    """
    from nbcli.io.plan import CATEGORICAL

    training = mf.training or {}
    if missing is None:
        missing = training.get("missing") or "error"
    else:
        missing = choose_missing(mf.model, missing)
    if unseen is None:
        unseen = training.get("unseen") or "error"
    elif unseen not in UNSEEN_POLICIES:
        raise NbcliError(f"--unseen must be one of {', '.join(UNSEEN_POLICIES)}; got {unseen!r}")
    categories = {c["name"]: list(c["categories"]) for c in (mf.columns or []) if "categories" in c}
    if unseen == "ignore" and _accepts(mf.model, "unseen", "ignore"):
        mf.model.set_params(unseen="ignore")
    if missing == "ignore" and _accepts(mf.model, "missing", "ignore"):
        mf.model.set_params(missing="ignore")
    # Rows are read and scored by the policy the model follows (a projected
    # model scores no row with a missing cell, even under "ignore").
    missing = missing_in_force(mf.model, missing)
    if na_values is None:
        na_values = training.get("na_values")
    return {
        "missing": missing,
        "missing_remedies": missing_remedies(mf.model),
        "unseen": unseen,
        "kinds": {name: CATEGORICAL for name in categories},
        "categories": categories,
        "na_values": None if na_values is None else tuple(str(v) for v in na_values),
        # Label texts read as a missing label at fit (--na-labels), read so here too.
        "na_labels": tuple(str(v) for v in training.get("na_labels") or ()),
        # Texts fit read as missing in a numeric column (a stray 'unknown'),
        # read so here too: the training file scores as it trained.
        "read_as_missing": dict(training.get("read_as_missing") or {}),
    }


def reading_record(facts) -> dict:
    """The reading policies of a fit for its model file's ``training`` record:
    ``missing``, ``unseen`` and, where they apply, ``na_values``,
    ``na_labels`` and ``read_as_missing`` (``{column: texts}``, the stray
    texts of numeric columns that the reader read as missing cells).

    ``facts`` is a :class:`nbcli.workflows.train.TableFacts`.
    """
    record: dict = {"missing": facts.missing, "unseen": facts.unseen}
    if facts.na_values is not None:
        record["na_values"] = [str(v) for v in facts.na_values]
    if facts.na_labels:
        record["na_labels"] = [str(v) for v in facts.na_labels]
    stray = getattr(facts.plan, "stray", None) or {}
    if stray:
        record["read_as_missing"] = {str(c): [str(t) for t in texts] for c, texts in stray.items()}
    return record
