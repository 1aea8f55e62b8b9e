"""The report of ``nbcli inspect``: what a model file holds and what the model says.

:class:`ModelReport` is plain data; its ``to_dict()`` is the JSON form
described by :data:`MODEL_SCHEMA` (JSON Schema, draft 2020-12). The analyses
read only a fitted model's public attributes:

* the most indicative features of each class, for a model class that
  declares an ``indicative_definition`` (the naive Bayes models with
  per-feature distributions; see :func:`indicative_scores`);
  (for a model with counts, ``feature_count_``, only features whose document
  frequency, the training documents holding them, reaches ``min_df``, so
  that words seen in a few documents do not lead; occurrences where the
  model file stores no document frequencies);
* the sections a model class names in ``inspection_sections``: LDA's
  discriminant directions and the share of the between-class variance
  along each (:func:`discriminant_directions`), QDA's per-class covariance
  log-determinant and condition number (:func:`class_covariances`), and
  what a naive Bayes model learnt of each column (:func:`column_parameters`:
  Gaussian means and variances, categorical conditional probability tables
  per class, as R's e1071 prints them).

NumPy only: no file I/O, no printing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from nbcli.models._indicative import class_counts, class_priors
from nbcli.models.mixed import MixedNB
from nbcli.reports.metrics import json_label, json_number, report_header, report_schema

SCHEMA_NAME = "nbcli.model"
#: 2: ``parameters`` (what was learnt per column), ``indicative_features``'
#: ``min_count`` and ``n_below_min_count``, per-feature ``count`` and ``total``.
#: 3: the floor is on document frequency: ``settings.min_df``,
#: ``indicative_features``' ``min_df``, ``n_below_min_df`` and ``counted_in``,
#: per-feature ``document_frequency`` (the version 2 keys kept, same values).
SCHEMA_VERSION = 3

MIN_COUNT = 0.01
"""Default least document frequency (training documents holding a feature,
over all classes) of a feature that the indicative features of a model with
counts may list, as a fraction of the training rows (1%: 40 of 4,000
documents), as ``min_df`` takes one: a word seen in a handful of documents
has large log-probability ratios by chance alone. A whole number is a count
of documents."""
MIN_DF = MIN_COUNT


def count_floor(min_count: float, n_rows: float) -> int:
    """The least count ``min_count`` stands for: itself when whole (>= 0),
    else (a fraction in (0, 1], a float) that share of ``n_rows``, rounded up.

    As ``CountVectorizer``'s ``min_df`` reads it, the float ``1.0`` is every
    row and the integer ``1`` one row.

    Raises
    ------
    ValueError
        For a negative value, or a fraction outside (0, 1].
    """
    if isinstance(min_count, (float, np.floating)) and min_count == 1:
        return int(np.ceil(n_rows - 1e-9))
    if float(min_count).is_integer() and min_count >= 0:
        return int(min_count)
    if not 0 < min_count < 1:
        raise ValueError(
            f"min_count must be a whole number >= 0 or a fraction in (0, 1]; got {min_count!r}"
        )
    return int(np.ceil(min_count * n_rows - 1e-9))


def feature_labels(
    feature_names: list[str],
    n_features: int,
    columns: list | None = None,
    vocabularies: dict | None = None,
) -> list[str]:
    """One name per model feature: column names, with a text column's words.

    A text column with a vocabulary stands for as many model features as it
    has words, so its words name them (``column:word`` when there are
    several text columns). When the names still do not add up to
    ``n_features``, features are called ``feature 1``, ``feature 2``...

    Parameters
    ----------
    feature_names : list of str
        The model file's ``feature_names``.
    n_features : int
    columns : list of dict, optional
        The model file's ``columns`` (names in model order).
    vocabularies : dict, optional
        ``{text column: list of words}``.
    """
    names = [str(n) for n in feature_names]
    if len(names) == n_features and not vocabularies:
        return names
    vocabularies = vocabularies or {}
    order = [str(c["name"]) for c in columns] if columns else names
    out: list[str] = []
    for name in order:
        words = vocabularies.get(name)
        if words is None:
            out.append(name)
        elif len(vocabularies) == 1:
            out.extend(str(w) for w in words)
        else:
            out.extend(f"{name}:{w}" for w in words)
    if len(out) == n_features:
        return out
    if len(names) == n_features:
        return names
    return [f"feature {j + 1}" for j in range(n_features)]


def text_features(mf) -> tuple[list[str], list[dict]] | None:
    """Feature names and columns of a model with text columns, in model order.

    Such a model's features are its numeric columns first, then each text
    column's vocabulary in order, named ``column:word`` (the model file's
    ``feature_names``); its columns are listed the same way, a text column
    as ``{"name", "type": "text", "n_words"}``.

    Parameters
    ----------
    mf : nbcli.io.modelfile.ModelFile

    Returns
    -------
    (names, features) or None
        ``names``, one per model feature; ``features``, one entry per input
        column. None for a model without text columns, or whose feature
        names do not match its vocabularies.
    """
    settings, vocabularies = getattr(mf, "text", None), mf.vocabularies or {}
    if settings is None or any(c not in vocabularies for c in settings.columns):
        return None
    names = [str(n) for n in mf.feature_names]
    n_text = sum(len(vocabularies[c]) for c in settings.columns)
    if len(names) != mf.model.n_features_in_ or n_text > len(names):
        return None
    columns = {str(c["name"]): c for c in mf.columns or []}
    features = [
        {k: v for k, v in columns.get(name, {"name": name}).items() if k != "categories"}
        for name in names[: len(names) - n_text]
    ]
    features += [
        {"name": str(c), "type": "text", "n_words": len(vocabularies[c])} for c in settings.columns
    ]
    return names, features


def indicative_scores(model) -> tuple[np.ndarray, np.ndarray | None] | None:
    """How strongly each feature points to each class, shape (n_classes, n_features).

    Returns ``(scores, higher)``, ``higher`` (bool, same shape) where the
    model says on which side of the other classes a feature lies (Gaussian
    naive Bayes), or None for a model without such scores or with one
    class. What the scores mean is the model class's
    ``indicative_definition``; see :mod:`nbcli.models._indicative`.
    """
    if len(model.classes_) < 2 or type(model).indicative_definition is None:
        return None
    return model.indicative_features()


def top_indicative(
    model, names: list[str], top: int, min_df: int = 0, documents: np.ndarray | None = None
) -> tuple[dict | None, int | None, str | None]:
    """``{label text: [{"feature", "score"[, "higher"][, "count", "total"]
    [, "document_frequency"]}, ...]}``, best ``top`` first, how many features
    the floor left out, and what the floor counted.

    A model with counts (``indicative_counts()``, else ``feature_count_``,
    shape (n_classes, n_features): a word's occurrences for the multinomial
    model, the documents holding it for Bernoulli) lists only features whose
    document frequency is at least ``min_df``, each with its ``count`` in the
    class and ``total`` over the classes. The document frequency of a
    feature is ``documents[j]`` (the training documents holding it, as the
    model file stores them for text columns' words, NaN where unknown); for
    a model of presence (``text_statistic`` ``"bernoulli"``) its ``total``;
    else, not known, the floor is on ``total`` occurrences. The third value
    says which: ``"documents"``, ``"occurrences"`` or ``"mixed"`` (some
    features of each kind). For a model without counts the second and third
    values are None. Features scored NaN are not ranked (mixed: the table's
    columns), and a model that ranks none gives ``(None, None, None)``.
    """
    found = indicative_scores(model)
    if found is None:
        return None, None, None
    scores, higher = found
    # A score of NaN: a feature the model does not rank (mixed: the table's columns).
    ranked = ~np.isnan(scores).all(axis=0)
    if not ranked.any():
        return None, None, None
    own = getattr(model, "indicative_counts", None)
    counts = own() if own is not None else getattr(model, "feature_count_", None)
    eligible = ranked.copy()
    total = None
    docs = None
    counted_in = None
    if counts is not None and np.shape(counts) == scores.shape:
        counts = np.asarray(counts, dtype=float)
        total = counts.sum(axis=0)
        docs = np.full(total.shape, np.nan)
        if type(model).text_statistic == "bernoulli":
            docs = total.copy()  # counts of presence: the documents holding the feature
        if documents is not None and np.shape(documents) == total.shape:
            docs = np.where(np.isnan(documents), docs, documents)
        known = ~np.isnan(docs)
        with np.errstate(invalid="ignore"):
            eligible &= np.where(known, docs, total) >= min_df
        kinds = {bool(v) for v in known[ranked]}
        counted_in = (
            {True: "documents", False: "occurrences"}[kinds.pop()] if len(kinds) == 1 else "mixed"
        )
    out = {}
    for k, label in enumerate(model.classes_):
        order = np.argsort(-scores[k], kind="stable")
        order = order[eligible[order]][:top]
        rows = []
        for j in order:
            row = {"feature": names[j], "score": json_number(scores[k, j])}
            if higher is not None:
                row["higher"] = bool(higher[k, j])
            if total is not None and counts is not None:
                row["count"] = json_number(counts[k, j])
                row["total"] = json_number(total[j])
                if docs is not None and not np.isnan(docs[j]):
                    row["document_frequency"] = json_number(docs[j])
            rows.append(row)
        out[str(json_label(label))] = rows
    return out, (None if total is None else int((ranked & ~eligible).sum())), counted_in


def document_frequencies(mf) -> np.ndarray | None:
    """Per model feature, the training documents holding it, as the model file
    stores them for its text columns' words (NaN for the other features),
    shape (n_features,); None when the file stores none."""
    settings = getattr(mf, "text", None)
    dfs = None if settings is None else settings.document_frequencies
    if dfs is None:
        return None
    words = np.concatenate([np.asarray(df, dtype=float) for df in dfs])
    n = int(mf.model.n_features_in_)
    if words.size > n:
        return None
    out = np.full(n, np.nan)
    out[n - words.size :] = words
    return out


def column_parameters(model, names: list[str], columns: list | None, top: int) -> dict:
    """What the model learnt of each of its first ``top`` table columns.

    From the model's ``learnt_columns()``: per column ``feature``, ``type``
    and ``classes``, per class label ``{"mean", "variance"}`` (Gaussian; the
    variance with the smoothing), a list of P(category | class) over the
    column's first ``top`` ``categories`` (categorical, named by the model
    file's category values, else by code; ``n_categories`` and
    ``n_left_out`` say how many there are and were left out), or
    ``{"probability"}`` (Bernoulli: of a 1; multinomial: ``p_cj``),
    ``{"rate"}`` (Poisson), ``{"bandwidth"}`` (kernel), or, for a
    discretized column, its ``cut_points`` and P(interval | class) as a
    categorical column's, the intervals named ``<= a``, ``(a, b]``, ``> b``.
    ``n_columns`` and ``n_left_out`` count the columns.
    """
    learnt = model.learnt_columns()
    stored = {str(c["name"]): c.get("categories") for c in columns or []}
    labels = [str(json_label(c)) for c in model.classes_]
    shown = []
    for j, entry in enumerate(learnt[:top]):
        row: dict = {"feature": names[j], "type": entry["type"]}
        if entry["type"] == "gaussian":
            row["classes"] = {
                label: {"mean": json_number(m), "variance": json_number(v)}
                for label, m, v in zip(labels, entry["mean"], entry["variance"], strict=True)
            }
        elif entry["type"] in ("categorical", "discretized"):
            p = np.asarray(entry["probability"])
            values = stored.get(names[j])
            if entry["type"] == "discretized":
                cuts = [float(c) for c in entry["cut_points"]]
                row["cut_points"] = [json_number(c) for c in cuts]
                values = _intervals(cuts)
            elif values is None or len(values) != p.shape[1]:
                values = [str(v) for v in range(p.shape[1])]
            row["categories"] = [str(v) for v in values[:top]]
            row["n_categories"] = int(p.shape[1])
            row["n_left_out"] = max(0, int(p.shape[1]) - top)
            row["classes"] = {
                label: [json_number(x) for x in p[k, :top]] for k, label in enumerate(labels)
            }
        else:
            key = next(k for k in ("probability", "rate", "bandwidth") if k in entry)
            p = np.asarray(entry[key])
            row["classes"] = {label: {key: json_number(p[k])} for k, label in enumerate(labels)}
        shown.append(row)
    return {"columns": shown, "n_columns": len(learnt), "n_left_out": len(learnt) - len(shown)}


def _intervals(cuts: list[float]) -> list[str]:
    """Names of the intervals that ``cuts`` make: ``<= 2.45``, ``(2.45, 4.75]``, ``> 4.75``."""
    if not cuts:
        return ["all"]
    out = [f"<= {cuts[0]:.6g}"]
    out += [f"({a:.6g}, {b:.6g}]" for a, b in zip(cuts, cuts[1:])]
    return [*out, f"> {cuts[-1]:.6g}"]


def discriminant_directions(model, names: list[str], top: int) -> dict:
    """LDA's directions: share of between-class variance and the heaviest weights.

    Each direction lists the features with the largest standardised weight
    (the weight times the feature's within-class standard deviation, so that
    weights of features in different units compare).
    """
    if not hasattr(model, "scalings_"):  # the lsqr solver: same model, svd directions
        model = model.with_params(solver="svd")
    scalings = model.scalings_
    std = np.sqrt(np.diag(model.covariance_))
    ratio = np.asarray(model.explained_variance_ratio_, dtype=float)
    directions = []
    for i in range(min(scalings.shape[1], ratio.size)):
        weight = scalings[:, i]
        standard = weight * std
        order = np.argsort(-np.abs(standard), kind="stable")[:top]
        directions.append(
            {
                "explained_variance_ratio": json_number(ratio[i]),
                "weights": [
                    {
                        "feature": names[j],
                        "weight": json_number(weight[j]),
                        "standardized": json_number(standard[j]),
                    }
                    for j in order
                ],
            }
        )
    return {"solver": model.solver, "rank": int(model.rank_), "directions": directions}


def class_covariances(model) -> dict:
    """QDA: ``{label: {"log_determinant", "condition_number"}}`` of each class covariance."""
    out = {}
    for k, label in enumerate(model.classes_):
        variances = np.asarray(model.scalings_[k])
        out[str(json_label(label))] = {
            "log_determinant": json_number(model.log_det_[k]),
            "condition_number": json_number(variances.max() / variances.min()),
        }
    return out


@dataclass
class ModelReport:
    """What ``nbcli inspect`` shows about a model file.

    Attributes
    ----------
    path, sha256 : str
        The model file and its SHA-256.
    format_version : int
    nbcli_version : str
        The nbcli that wrote the file.
    model : str
        Model type.
    hyperparameters : dict
    target : str or None
    classes : list of dict
        ``label``, ``count`` (training rows, weighted) and ``prior``.
    features : list of dict
        ``name`` and, where the file records it, ``type``.
    training : dict
        ``n_samples``, ``data_sha256``, ``fingerprint`` (or None) and the
        data the model was fitted on, as the file holds them.
    calibration : dict or None
        The calibrator's ``method`` and what the file says about it.
    search : dict or None
        The hyperparameter search summary ``tune`` stored.
    top : int
        Entries shown per class, direction, column or category.
    min_count : int or float
        Least document frequency of a feature listed as indicative (models
        with counts), as asked (``--min-df``): a count of documents, or a
        fraction of the training rows.
    count_floor : int or None
        The count ``min_count`` stood for (None: the model has no counts).
    indicative : dict or None
        Naive Bayes: per class label, the ``top`` most indicative features.
    below_min_count : int or None
        Features the floor left out (None: the model has no counts).
    counted_in : str or None
        What the floor counted: ``"documents"``, ``"occurrences"`` (a model
        file without document frequencies) or ``"mixed"``.
    indicative_definition : str or None
    discriminant : dict or None
        LDA: ``solver``, ``rank`` and ``directions``.
    covariances : dict or None
        QDA: per class label, ``log_determinant`` and ``condition_number``.
    parameters : dict or None
        Gaussian, categorical and mixed naive Bayes: what was learnt per
        column (:func:`column_parameters`).
    projection : dict or None
        With ``pca`` or ``standardize`` (see :func:`projection_summary`).
    """

    schema: ClassVar[str] = SCHEMA_NAME

    path: str
    sha256: str
    format_version: int
    nbcli_version: str
    model: str
    hyperparameters: dict
    target: str | None
    classes: list
    features: list
    training: dict
    calibration: dict | None
    search: dict | None
    top: int
    min_count: float = MIN_COUNT
    count_floor: int | None = None
    indicative: dict | None = None
    below_min_count: int | None = None
    counted_in: str | None = None
    indicative_definition: str | None = None
    discriminant: dict | None = None
    covariances: dict | None = None
    parameters: dict | None = None
    projection: dict | None = None
    warnings: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """The JSON form, described by :data:`MODEL_SCHEMA`."""
        out = report_header(
            self.schema,
            {"model": {"path": self.path, "sha256": self.sha256}},
            {"top": self.top, "min_df": self.min_count, "min_count": self.min_count},
            SCHEMA_VERSION,
        )
        out.update(
            format_version=self.format_version,
            file_nbcli_version=self.nbcli_version,
            model=self.model,
            hyperparameters=self.hyperparameters,
            target=self.target,
            classes=self.classes,
            features=self.features,
            training=self.training,
            calibration=self.calibration,
            search=self.search,
            indicative_features=(
                None
                if self.indicative is None
                else {
                    "definition": self.indicative_definition,
                    "classes": self.indicative,
                    "min_df": self.count_floor,
                    "n_below_min_df": self.below_min_count,
                    "counted_in": self.counted_in,
                    "min_count": self.count_floor,
                    "n_below_min_count": self.below_min_count,
                }
            ),
            discriminant=self.discriminant,
            covariances=self.covariances,
            parameters=self.parameters,
            projection=self.projection,
            warnings=list(self.warnings),
        )
        return out


def build_model_report(
    mf, *, path: str, sha256: str, top: int = 10, min_count: float = MIN_COUNT
) -> ModelReport:
    """The :class:`ModelReport` of a loaded model file (:class:`nbcli.io.modelfile.ModelFile`).

    Raises
    ------
    ValueError
        For ``top`` < 1, or a ``min_count`` that is neither a whole number
        >= 0 nor a fraction in (0, 1).
    """
    if top < 1:
        raise ValueError(f"top must be at least 1; got {top}")
    model = mf.model
    meta = mf.metadata
    text = text_features(mf)
    names = (
        text[0]
        if text is not None
        else feature_labels(mf.feature_names, model.n_features_in_, mf.columns, mf.vocabularies)
    )
    projection = getattr(model, "projection_", None)
    if projection is not None and projection.components is not None:
        # The model's parameters are per principal component.
        names = [f"pc{i + 1}" for i in range(projection.n_components)]
    priors = class_priors(model)
    count = np.asarray(class_counts(model), dtype=float)
    # Whole counts as integers, as fit's report gives them (weighted rows may not be whole).
    counted = [int(n) if float(n).is_integer() else json_number(n) for n in count]
    classes = [
        {"label": json_label(c), "count": counted[k], "prior": json_number(priors[k])}
        for k, c in enumerate(model.classes_)
    ]
    if text is not None:
        features = text[1]
    elif mf.columns:
        features = [{k: v for k, v in c.items() if k != "categories"} for c in mf.columns]
        for entry, column in zip(features, mf.columns):
            if column.get("categories") is not None:
                entry["n_categories"] = len(column["categories"])
    else:
        features = [{"name": str(n)} for n in mf.feature_names]
    if mf.vocabularies and text is None:
        for entry in features:
            if entry["name"] in mf.vocabularies:
                entry["n_words"] = len(mf.vocabularies[entry["name"]])
    training = {k: v for k, v in mf.training.items() if k != "class_counts"}
    training.setdefault("fingerprint", None)
    calibration = None
    if mf.calibrator is not None:
        info = dict(meta.get("calibration") or {})
        info.pop("arrays", None)
        calibration = {"method": mf.calibrator.kind, **info, **mf.calibrator.describe()}
    report = ModelReport(
        path=path,
        sha256=sha256,
        format_version=int(meta.get("format_version", 1)),
        nbcli_version=str(meta.get("nbcli_version", "unknown")),
        model=model.name,
        hyperparameters=dict(meta.get("hyperparameters", {})),
        target=mf.target,
        classes=classes,
        features=features,
        training=training,
        calibration=calibration,
        search=mf.search,
        top=int(top),
        min_count=min_count,
    )
    floor = count_floor(min_count, float(count.sum()))
    report.indicative, report.below_min_count, report.counted_in = top_indicative(
        model, names, top, floor, document_frequencies(mf)
    )
    if report.below_min_count is not None:
        report.count_floor = floor
    sections = type(model).inspection_sections
    if report.indicative is not None:
        report.indicative_definition = type(model).indicative_definition
    elif len(model.classes_) > 1 and not sections:
        # A model with sections of its own (LDA's directions, QDA's
        # covariances) shows what tells its classes apart there.
        report.warnings.append(
            f"the {model.name} model has no per-feature score of how indicative a feature "
            "is, so no indicative features are shown"
        )
    if "discriminant_directions" in sections:
        report.discriminant = discriminant_directions(model, names, top)
    if "class_covariances" in sections:
        report.covariances = class_covariances(model)
    if "column_parameters" in sections:
        report.parameters = column_parameters(model, names, mf.columns, top)
    report.projection = projection_summary(model)
    return report


def projection_summary(model) -> dict | None:
    """What the model does to raw rows first: ``standardize``, ``n_components`` and,
    with ``pca``, per kept component its ``explained_variance`` (``n - 1``
    divisor), ``explained_variance_ratio`` (of the total variance) and
    ``cumulative_ratio``; None for a model without a projection."""
    projection = getattr(model, "projection_", None)
    if projection is None:
        return None
    out: dict = {
        "standardize": bool(model.standardize),
        "n_components": int(projection.n_components),
        "total_variance": json_number(projection.total_variance),
        "components": None,
    }
    ratio = projection.explained_variance_ratio
    if ratio is not None and projection.explained_variance is not None:
        cumulative = np.cumsum(ratio)
        out["components"] = [
            {
                "component": f"pc{i + 1}",
                "explained_variance": json_number(v),
                "explained_variance_ratio": json_number(r),
                "cumulative_ratio": json_number(c),
            }
            for i, (v, r, c) in enumerate(zip(projection.explained_variance, ratio, cumulative))
        ]
    return out


_WEIGHTED = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["feature"],
        "properties": {"feature": {"type": "string"}},
    },
}

MODEL_SCHEMA = report_schema(
    SCHEMA_NAME,
    SCHEMA_VERSION,
    "nbcli model report (nbcli inspect)",
    required=[
        "format_version",
        "file_nbcli_version",
        "model",
        "hyperparameters",
        "target",
        "classes",
        "features",
        "training",
        "calibration",
        "search",
        "indicative_features",
        "discriminant",
        "covariances",
        "parameters",
    ],
    inputs={
        "type": "object",
        "required": ["model"],
        "properties": {
            "model": {
                "type": "object",
                "required": ["path", "sha256"],
                "properties": {"path": {"type": "string"}, "sha256": {"type": "string"}},
            }
        },
    },
    settings={
        "type": "object",
        "required": ["top", "min_df", "min_count"],
        "properties": {
            "top": {"type": "integer", "minimum": 1},
            "min_df": {"type": "number", "minimum": 0},
            "min_count": {"type": "number", "minimum": 0},
        },
    },
    properties={
        "format_version": {"type": "integer", "minimum": 1},
        "file_nbcli_version": {"type": "string"},
        "model": {"type": "string"},
        "hyperparameters": {"type": "object"},
        "target": {"type": ["string", "null"]},
        "classes": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["label", "count", "prior"],
                "properties": {
                    "label": {"type": ["string", "number", "boolean"]},
                    "count": {"type": "number", "minimum": 0},
                    "prior": {"type": "number", "minimum": 0, "maximum": 1},
                },
            },
        },
        "features": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string"},
                    "type": {"type": "string"},
                    "n_categories": {"type": "integer"},
                    "n_words": {"type": "integer"},
                },
            },
        },
        "training": {
            "type": "object",
            "required": ["n_samples", "fingerprint"],
            "properties": {
                "n_samples": {"type": "number"},
                "data_sha256": {"type": ["string", "null"]},
                "fingerprint": {
                    "type": ["object", "null"],
                    "required": ["algorithm", "value"],
                    "properties": {
                        "algorithm": {"type": "string"},
                        "value": {"type": "string"},
                    },
                },
            },
        },
        "calibration": {
            "type": ["object", "null"],
            "required": ["method"],
            "properties": {
                "method": {"type": "string"},
                "temperature": {"type": "number"},
                "at_bound": {"type": "boolean"},
                "breakpoints": {"type": "array", "items": {"type": "integer"}},
            },
        },
        "search": {"type": ["object", "null"]},
        "indicative_features": {
            "type": ["object", "null"],
            "required": [
                "definition",
                "classes",
                "min_df",
                "n_below_min_df",
                "counted_in",
                "min_count",
                "n_below_min_count",
            ],
            "properties": {
                "definition": {"type": "string"},
                "classes": {"type": "object", "additionalProperties": _WEIGHTED},
                "min_df": {"type": ["integer", "null"], "minimum": 0},
                "n_below_min_df": {"type": ["integer", "null"], "minimum": 0},
                "counted_in": {"enum": ["documents", "occurrences", "mixed", None]},
                "min_count": {"type": ["integer", "null"], "minimum": 0},
                "n_below_min_count": {"type": ["integer", "null"], "minimum": 0},
            },
        },
        "discriminant": {
            "type": ["object", "null"],
            "required": ["solver", "rank", "directions"],
            "properties": {
                "solver": {"type": "string"},
                "rank": {"type": "integer"},
                "directions": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["explained_variance_ratio", "weights"],
                        "properties": {
                            "explained_variance_ratio": {"type": "number"},
                            "weights": _WEIGHTED,
                        },
                    },
                },
            },
        },
        "covariances": {
            "type": ["object", "null"],
            "additionalProperties": {
                "type": "object",
                "required": ["log_determinant", "condition_number"],
            },
        },
        "projection": {
            "type": ["object", "null"],
            "required": ["standardize", "n_components", "total_variance", "components"],
            "properties": {
                "standardize": {"type": "boolean"},
                "n_components": {"type": "integer", "minimum": 1},
                "total_variance": {"type": "number"},
                "components": {
                    "type": ["array", "null"],
                    "items": {
                        "type": "object",
                        "required": [
                            "component",
                            "explained_variance",
                            "explained_variance_ratio",
                            "cumulative_ratio",
                        ],
                    },
                },
            },
        },
        "parameters": {
            "type": ["object", "null"],
            "required": ["columns", "n_columns", "n_left_out"],
            "properties": {
                "n_columns": {"type": "integer", "minimum": 0},
                "n_left_out": {"type": "integer", "minimum": 0},
                "columns": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["feature", "type", "classes"],
                        "properties": {
                            "feature": {"type": "string"},
                            "type": {"enum": list(MixedNB.feature_kinds)},
                            "categories": {"type": "array", "items": {"type": "string"}},
                            "cut_points": {"type": "array", "items": {"type": "number"}},
                            "n_categories": {"type": "integer", "minimum": 0},
                            "n_left_out": {"type": "integer", "minimum": 0},
                            "classes": {"type": "object"},
                        },
                    },
                },
            },
        },
    },
)
