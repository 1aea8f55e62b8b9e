"""Data sets given as parts: ``--data`` folders and globs, and fits over the parts on an engine.

A folder or a pattern names a data set cut into part files (CSV, ``.csv.gz``,
Parquet). ``fit`` and ``evaluate`` take the parts as one data set; ``predict``
writes one output per part. Each part is read where its task runs (in this
process, or on a Dask worker) by nbcli's own reader,
:func:`nbcli.io.data.iter_dataset`, with the same options as a one-file run,
so the parsing, the column plan and the one-line errors (naming the part
and its row) are those of a local run on that file.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from nbcli.errors import NbcliError
from nbcli.io.part_paths import (  # noqa: F401
    PART_SUFFIXES,
    expand_parts,
    is_part_file,
    names_parts,
)


def at_client(part: Any, engine) -> Any:
    """``part`` (a path, or a tuple of paths) with relative paths made absolute
    here, at the client, for an engine whose workers run elsewhere: a worker
    would resolve a relative path in its own working directory."""
    if engine.name == "local":
        return part
    if isinstance(part, tuple):
        return tuple(at_client(p, engine) for p in part)
    if isinstance(part, str) and part != "-" and "://" not in part:
        return os.path.abspath(part)
    return part


def check_parts(parts: Sequence[str], engine) -> None:
    """Refuse stdin as a part: a part is opened where its task runs.

    Raises
    ------
    NbcliError
        When ``-`` is among ``parts`` on an engine other than the local one.
    """
    if "-" in parts and engine.name != "local":
        raise NbcliError(
            f"stdin (-) cannot be read by the workers of --engine {engine.name}; give files"
        )


@dataclass(frozen=True)
class PartTraining:
    """What every part's fitting task needs: the estimator and the data request.

    Sent once to every worker; each part is read through the same reader as
    a one-file fit (:func:`nbcli.workflows.train.training_stream`), with the
    request's ``missing`` the policy in force and its ``categories`` those
    known before reading (all parts', first-seen order: given for the second
    pass that fingerprints parts whose own codes were renumbered).
    """

    estimator: Any
    request: Any  # DataRequest

    @property
    def missing(self) -> str:
        return self.request.missing or "error"

    @property
    def missing_in_force(self) -> str:
        """The policy the rows are read by (``ignore`` acts as ``drop`` under a projection)."""
        from nbcli.workflows.tables import missing_in_force

        return missing_in_force(self.estimator, self.missing)

    @property
    def unseen(self) -> str:
        return self.request.unseen or "error"

    @property
    def text(self):
        return self.request.text

    @property
    def column_types(self) -> dict:
        return dict(self.request.column_types)

    def knowing(self, categories: dict) -> PartTraining:
        """This task reading with ``categories`` known."""
        return replace(self, request=self.request.reading(categories=categories))

    def deciding(self, kinds: dict, column_types: dict | None) -> PartTraining:
        """This task reading every part with the column ``kinds`` (and the mixed
        model's ``column_types``) the first part decided."""
        request = self.request.reading(
            kinds={**self.request.kinds, **kinds},
            column_types=column_types or self.request.column_types,
        )
        return replace(self, request=request)

    def stream(self, path: str):
        """The reader of one part: :func:`nbcli.workflows.train.training_stream`."""
        from nbcli.workflows.train import training_stream

        return training_stream(path, self.estimator, self.request)


@dataclass
class PartFit:
    """Training statistics and fingerprint of one or more consecutive parts.

    ``merge`` puts ``other``'s rows after this one's (the fingerprint depends
    on the order), so the engines merge in part-index order.

    Category codes are numbered by each part's reader in the order its
    values first appear in that part; ``merge`` renumbers them by label into
    the first-seen order of the merged rows (this one's values, then
    ``other``'s new ones in their order), which is the order a one-file read
    of the parts joined in order gives, and moves the counts with them.
    """

    part: str
    # FitStatistics (TextChunkStats with text columns), or None for parts without rows
    stats: Any
    #: ``(part index, RowHashFingerprint, {column: categories of that part})``
    #: per part in order: a part's fingerprint holds for the merged rows only
    #: where its own codes are those of the merged categories.
    pieces: list
    target: str | None
    feature_names: tuple
    notes: list = field(default_factory=list)
    n_chunks: int = 0
    #: The column plan of the first part, for the model file's ``columns``.
    plan: Any = None
    #: Rows used (not skipped for a missing label nor dropped for a missing cell).
    n_rows: int = 0
    #: Rows skipped without a label, per part.
    warnings: list = field(default_factory=list)
    #: ``{column: categories}`` of the columns read as categories, first-seen order.
    categories: dict = field(default_factory=dict)
    #: The model's ``column_types`` (mixed) as the part's plan gave them, else None.
    column_types: tuple | None = None
    #: The columns of the statistics' category block, in its order.
    category_columns: tuple = ()
    #: Each column's type as the distinct-value statistics count them (the
    #: mixed model's ``column_types``, or every column of the model's
    #: ``numeric_estimator``), for naming a column over the limit; None: none.
    value_types: tuple | None = None

    def merge(self, other: PartFit) -> PartFit:
        from nbcli.engines._reduce import merge_optional

        if other.target != self.target:
            # A part's default target is chosen among its own columns: the
            # columns it lacks are not those a comparison of features names.
            for a, b in ((other, self), (self, other)):
                if b.target is not None and b.target not in {*a.feature_names, a.target}:
                    raise NbcliError(
                        f"{a.part}: lacks {b.target!r}, the target column of {b.part}; the "
                        "parts of a data set must have the same columns"
                    )
        if other.feature_names != self.feature_names:
            raise NbcliError(f"{other.part}: {_columns_differ(self, other)}")
        if other.target != self.target:
            raise NbcliError(
                f"{other.part}: its target column {other.target!r} differs from "
                f"{self.target!r} in {self.part}; give --target"
            )
        _check_same_kinds(self, other)
        categories = {
            c: v + [x for x in other.categories.get(c, []) if x not in set(v)]
            for c, v in self.categories.items()
        }
        from nbcli.models._value_table import TooManyValuesError, too_many_values_error

        try:
            stats = merge_optional(
                _recoded(self.stats, self, categories, other.stats),
                _recoded(other.stats, other, categories, self.stats),
            )
        except TooManyValuesError as exc:  # parts each within the limit, together over it
            if self.value_types is None:
                raise
            named = too_many_values_error(exc, self.value_types).named(self.feature_names)
            raise NbcliError(f"{other.part}: with the parts before it, {named}") from None
        return PartFit(
            self.part,
            stats,
            self.pieces + other.pieces,
            self.target,
            self.feature_names,
            self.notes + [n for n in other.notes if n not in self.notes],
            self.n_chunks + other.n_chunks,
            self.plan if self.plan is not None else other.plan,
            self.n_rows + other.n_rows,
            self.warnings + [w for w in other.warnings if w not in self.warnings],
            categories,
            self.column_types,
            self.category_columns,
            self.value_types,
        )


def _check_same_kinds(first: PartFit, other: PartFit) -> None:
    """Refuse parts whose columns were planned as different kinds (each part
    plans its columns from its own first rows)."""
    if first.plan is None or other.plan is None:
        return
    ours, theirs = dict(first.plan.kinds), dict(other.plan.kinds)
    if first.column_types is not None and other.column_types is not None:
        # The mixed model's column types say more than the kinds (numbers as counts).
        ours.update(zip(first.plan.matrix, first.column_types))
        theirs.update(zip(other.plan.matrix, other.column_types))
    said = {"categorical": "categories", "numeric": "numbers", "words": "text"}
    for name in first.feature_names:
        if ours.get(name) != theirs.get(name):
            mine, yours = (said.get(str(k), str(k)) for k in (ours.get(name), theirs.get(name)))
            raise NbcliError(
                f"{other.part}: column {name!r} is read as {yours} there and as {mine} in "
                f"{first.part} (each part decides from its first rows); give --column "
                f"{name}=TYPE"
            )


def _recoded(stats, fit: PartFit, categories: dict, partner):
    """``stats`` (of ``fit``'s rows) with its category codes renumbered into
    ``categories`` (the merged first-seen lists), and each category block
    as wide as the merged one (``partner``: the other side's statistics)."""
    if stats is None or not fit.category_columns or not hasattr(stats.stats, "recode"):
        return stats
    n_mine = np.asarray(stats.stats.n_categories, dtype=np.intp)
    n_theirs = n_mine if partner is None else np.asarray(partner.stats.n_categories, np.intp)
    codes, n_new = [], []
    for j, name in enumerate(fit.category_columns):
        if name in categories:
            index = {v: i for i, v in enumerate(categories[name])}
            codes.append(np.array([index[v] for v in fit.categories[name]], dtype=np.intp))
            n_new.append(len(categories[name]))
        else:
            # Whole numbers read as codes (the categorical model): kept as they are.
            codes.append(np.arange(max(n_mine[j], n_theirs[j])))
            n_new.append(max(n_mine[j], n_theirs[j]))
    if all(np.array_equal(c, np.arange(len(c))) for c in codes) and np.array_equal(n_mine, n_new):
        return stats
    return replace(stats, stats=stats.stats.recode(codes, np.asarray(n_new)))


class _Fingerprint:
    """A :class:`~nbcli.io.fingerprint.RowHashFingerprint` that merges as parts do."""

    def __init__(self, fp) -> None:
        self.fp = fp

    def merge(self, other: _Fingerprint) -> _Fingerprint:
        return _Fingerprint(self.fp.combine(other.fp))


@dataclass(frozen=True)
class _Refingerprint:
    """The second pass's shared value: the reading with the merged
    categories, and the fingerprints that already hold (by part index)."""

    spec: PartTraining
    known: dict


def refingerprint_part(index: int, part: str, shared: _Refingerprint) -> _Fingerprint:
    """The fingerprint of one part read with the merged categories (its own
    from the first pass where its codes needed no renumbering)."""
    if index in shared.known:
        return _Fingerprint(shared.known[index])
    return _Fingerprint(_read_part(part, shared.spec, fit=False)[1])


def _fingerprint(parts: Sequence[str], engine, spec: PartTraining, total: PartFit):
    """The fingerprint of all rows in order, with category codes of the merged
    categories, as a one-file read of the parts joined gives it: parts whose
    own codes differ are read a second time."""

    def holds(own: dict) -> bool:
        return all(total.categories[c][: len(v)] == v for c, v in own.items())

    known = {i: fp for i, fp, own in total.pieces if holds(own)}
    if len(known) == len(total.pieces):
        fp = total.pieces[0][1]
        for _, other, _ in total.pieces[1:]:
            fp = fp.combine(other)
        return fp
    again = spec.knowing(dict(total.categories))
    return engine.sum_over_parts(list(parts), refingerprint_part, _Refingerprint(again, known)).fp


def _columns_differ(first: PartFit, other: PartFit) -> str:
    """How ``other``'s feature columns differ from ``first``'s, for the message."""
    from nbcli.io.messages import quote_names

    mine, theirs = list(first.feature_names), list(other.feature_names)
    extra = [c for c in theirs if c not in mine]
    lacking = [c for c in mine if c not in theirs]
    if not extra and not lacking:
        # Parts merge along a tree: either of the two may be the odd one out.
        return (
            f"its feature columns are those of {first.part} in another order (one of the two "
            "differs from the other parts); the parts of a data set must have their columns "
            "in one order"
        )
    said = []
    if extra:
        said.append(f"has {quote_names(extra)}, which {first.part} has not")
    if lacking:
        said.append(f"lacks {quote_names(lacking)}, which {first.part} has")
    return (
        f"{' and '.join(said)}; the parts of a data set must have the same columns "
        "(--drop or --features may leave a column out of every part)"
    )


@dataclass(frozen=True)
class _Plan:
    """Per feature column, the kind (and the mixed model's column type) the
    first part holding a value of it decides; ``undecided``: columns no part
    so far held a value of in its first rows."""

    kinds: dict
    column_types: dict | None
    undecided: frozenset

    def merge(self, other: _Plan) -> _Plan:
        take = [c for c in self.undecided if c not in other.undecided]
        kinds = {**self.kinds, **{c: other.kinds[c] for c in take if c in other.kinds}}
        types = self.column_types
        if types is not None and other.column_types is not None:
            types = {**types, **{c: other.column_types[c] for c in take if c in other.column_types}}
        return _Plan(kinds, types, self.undecided & other.undecided)


def plan_part(index: int, part: str, spec: PartTraining) -> _Plan:
    """The column kinds (and the mixed model's column types) that ``part``'s
    first rows decide. Merged in part order, the first part that holds a value
    of a column decides it for every part, as a one-file read decides from its
    first rows."""
    from nbcli.io.profile import EMPTY
    from nbcli.workflows.tables import apply_column_types

    stream = spec.stream(part)
    plan = stream.plan
    est = type(spec.estimator)(**spec.estimator.get_params())
    apply_column_types(est, plan, spec.column_types, spec.missing, spec.unseen)
    types = est.get_params().get("column_types")
    kinds = {c: plan.kind(c) for c in plan.features if c in plan.matrix}
    given = set(spec.column_types)
    undecided = frozenset(
        c
        for c in kinds
        if c not in given and getattr(plan.profiles.get(c), "value_type", None) == EMPTY
    )
    return _Plan(
        kinds, None if types is None else dict(zip(plan.matrix, map(str, types))), undecided
    )


@dataclass(frozen=True)
class WeightedPass:
    """What the second pass of a TF-IDF fit over parts sends every part: the
    first pass's task, classes (labels as read), learnt text settings and
    vocabularies."""

    training: PartTraining
    classes: Any
    settings: Any
    vocabularies: dict


def weigh_part(index: int, part: str, task: WeightedPass):
    """Per class, the sums of one part's TF-IDF weighted rows, shape (n_classes,
    n_words) (:func:`nbcli.workflows.text_features.weighted_word_sums`); its
    rows as the first pass used them."""
    from nbcli.workflows.tables import RowCounts
    from nbcli.workflows.text_features import weighted_word_sums

    counts = RowCounts()
    missing = task.training.missing_in_force

    def chunks():
        for ds in task.training.stream(part):
            ds = counts.filter(ds, missing)
            if ds.X.shape[0]:
                yield ds.X, ds.y, ds.words

    return weighted_word_sums(task.classes, task.settings, task.vocabularies, chunks())


def fit_part(index: int, part: str, spec: PartTraining) -> PartFit:
    """The :class:`PartFit` of one part file, read where this task runs.

    Raises
    ------
    NbcliError
        The reader's own message for a bad cell, or the model's refusal of
        a value, naming the part and its row (rows count from the part's
        first data row).
    """
    part_fit, fp = _read_part(part, spec, fit=True)
    part_fit.pieces = [(index, fp, dict(part_fit.categories))]
    return part_fit


def _read_part(part: str, spec: PartTraining, *, fit: bool):
    """Read one part: its :class:`PartFit` (None unless ``fit``) and the
    fingerprint of its rows."""
    from nbcli.engines._reduce import FitStatistics
    from nbcli.io.fingerprint import RowHashFingerprint
    from nbcli.workflows.blocks import check_text_columns, fingerprint_columns, tally_blocks
    from nbcli.workflows.data_errors import data_error
    from nbcli.workflows.tables import RowCounts, apply_column_types

    text, words_of = spec.text, spec.request.text_columns
    stream = spec.stream(part)
    check_text_columns(part, words_of, stream)
    fp = RowHashFingerprint()
    est = type(spec.estimator)(**spec.estimator.get_params())
    # As a one-file fit: the mixed model's column types from this part's plan.
    apply_column_types(est, stream.plan, spec.column_types, spec.missing, spec.unseen)
    # The rows a one-file fit skips (no label) or drops (a missing cell under
    # "drop"), skipped here, before the fingerprint and the statistics see them.
    counts = RowCounts()
    state: dict[str, Any] = {"chunks": 0, "kept": None}

    def chunks():
        for ds in stream:
            state["chunks"] += 1
            ds = counts.filter(ds, spec.missing_in_force)
            if not ds.X.shape[0]:
                continue
            # As a one-file fit: each document's CRC-32 beside the numeric columns.
            fp.update(fingerprint_columns(ds.X, ds.words, words_of), ds.y)
            state["kept"] = counts.kept_rows
            yield ds.X, ds.y, ds.words

    if not fit:
        for _ in chunks():
            pass
        return None, fp
    stats: Any = None
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            stats = tally_blocks(est, text, chunks())
    except NbcliError:
        raise
    except ValueError as exc:
        if counts.used:
            raise data_error(part, exc, stream.feature_names, 0, rows=state["kept"]) from None
    else:
        # Without a text block the estimator holds the table's statistics.
        stats = stats or FitStatistics(
            est.classes_, est.stats_, int(est.n_features_in_), counts.used
        )
    types = est.get_params().get("column_types")
    features = list(stream.plan.features)
    if types is not None:
        category_columns = tuple(c for c, t in zip(features, types) if t == "categorical")
    elif "categorical" in type(est).feature_kinds:
        category_columns = tuple(features)
    else:
        category_columns = ()
    return (
        PartFit(
            part,
            stats,
            [],
            stream.target,
            tuple(stream.feature_names),
            [stream.note] if stream.note else [],
            state["chunks"],
            # What the model file records of the plan; the planning sample stays here.
            replace(stream.plan, profiles={}),
            counts.used,
            counts.warnings(part, spec.missing),
            {c: list(v) for c, v in stream.categories.items()},
            None if types is None else tuple(types),
            category_columns,
            _value_types(est, types, features),
        ),
        fp,
    )


def _value_types(est, types, features) -> tuple | None:
    """:attr:`PartFit.value_types` of the part's model: its ``column_types``, or
    its ``numeric_estimator`` for every column (the gaussian model's)."""
    if types is not None:
        return tuple(types)
    numeric = est.get_params().get("numeric_estimator")
    return None if numeric is None else (numeric,) * len(features)


def train_parts(estimator, request, engine, *, priors_by_label=None):
    """Fit ``estimator`` on the rows of the parts of ``request`` in order, part by part on ``engine``.

    Each part's statistics are gathered where its task runs and merged in
    the engines' fixed tree; the model is made once from the total, by the
    same checks as a one-file fit
    (:func:`nbcli.workflows.train.finish_training`), so the model file
    equals that of a local fit of the parts joined into one file, its
    fingerprint included.

    With text columns each part gives, per column, the per-class statistics
    of every term it holds (:class:`nbcli.text.TermStats`) beside its
    numeric columns' statistics; these merge exactly (counts add), and the
    vocabulary is chosen once, from the merged statistics
    (:func:`nbcli.workflows.text_features.finalize_text`), as a one-file
    fit chooses it after its last chunk: the same terms, the same model.

    Parameters
    ----------
    estimator : BayesClassifier
        Unfitted, with its hyperparameters.
    request : DataRequest
        Its ``data`` names the parts (files, folders, globs: their files in
        row order, see :func:`expand_parts`); read as
        :func:`nbcli.workflows.train.train` reads a file (its
        ``column_types`` the mixed model's); its ``unseen`` is stored in the
        model file.
    engine : nbcli.engines.Engine
    priors_by_label : dict, optional
        As in :func:`nbcli.workflows.train.train`.

    Returns
    -------
    nbcli.workflows.train.TrainResult

    Raises
    ------
    NbcliError
        For the lowest-indexed bad part (its message names it and its row),
        parts with different columns, or what a one-file fit refuses.

    Examples
    --------
    A folder of two part files, fitted part by part on the local engine:

    >>> import os, shutil
    >>> from nbcli.engines import open_engine
    >>> from nbcli.io.request import DataRequest
    >>> from nbcli.models import GaussianNB
    >>> from nbcli.workflows.parts import train_parts
    >>> os.makedirs("parts", exist_ok=True)
    >>> _ = shutil.copy("sample_data/iris_test.csv", "parts/a.csv")
    >>> _ = shutil.copy("sample_data/iris_calib.csv", "parts/b.csv")
    >>> with open_engine("local") as engine:
    ...     result = train_parts(GaussianNB(), DataRequest.of("parts"), engine)
    >>> result.model_file.training["n_samples"]
    60
    """
    from nbcli.io.fingerprint import ROWHASH_ALGORITHM
    from nbcli.workflows.blocks import check_blocks, model_from_blocks
    from nbcli.workflows.tables import apply_column_types, missing_remedies
    from nbcli.workflows.train import RowsRead, TableFacts, finish_training

    data, text, parts = request.path, request.text, expand_parts(request.data)
    from nbcli.workflows import text_features

    text_features.check_weighting(estimator, text, data)
    unseen = request.unseen or "error"
    check_blocks(estimator, request)
    if priors_by_label is not None:
        estimator.set_params(**{estimator.prior_param: None})
    check_parts(parts, engine)
    started = time.perf_counter()
    missing = getattr(estimator, "missing", "error")
    spec = PartTraining(
        type(estimator)(**estimator.get_params()),
        request.reading(missing=missing, missing_remedies=missing_remedies(estimator)),
    )
    parts = [at_client(p, engine) for p in parts]
    try:
        if "categorical" in type(estimator).feature_kinds and text is None:
            # Kinds decided once, for every part, from the first rows of the
            # first part that holds a value of each column (its planning sample).
            first: _Plan = engine.sum_over_parts(list(parts), plan_part, spec)
            spec = spec.deciding(first.kinds, first.column_types)
        total: PartFit = engine.sum_over_parts(list(parts), fit_part, spec)
    except ValueError as exc:
        raise NbcliError(f"{data}: {exc}") from None
    if total.stats is None:
        raise NbcliError(f"{data}: no data rows in any of its {len(parts)} parts")
    # As a one-file fit sets them: column types (mixed) from the plan, which
    # every part shares (PartFit.merge), and the policies.
    apply_column_types(estimator, total.plan, spec.column_types, missing, unseen)
    fingerprint = _fingerprint(parts, engine, spec, total)
    frequencies: dict = {}
    try:
        est, vocabularies, feature_names = model_from_blocks(
            estimator, text, total.stats, list(total.feature_names), frequencies
        )
    except NbcliError as exc:
        raise NbcliError(f"{data}: {exc}") from None
    if text is not None:
        text = text_features.learnt_frequencies(text, frequencies)
    if text is not None and text.weighting is not None:
        # The second pass (nbcli.text.weighting): each part's weighted rows, summed.
        task = WeightedPass(spec, est.classes_, text, vocabularies)
        try:
            text_features.set_word_sums(est, engine.sum_over_parts(list(parts), weigh_part, task))
        except ValueError as exc:
            raise NbcliError(f"{data}: {exc}") from None
    return finish_training(
        est,
        RowsRead(
            data=data,
            target=total.target,
            feature_names=feature_names,
            notes=total.notes,
            n_rows=total.n_rows,
            n_chunks=total.n_chunks,
            fingerprint={
                "fingerprint": {"algorithm": ROWHASH_ALGORITHM, "value": fingerprint.value}
            },
            started=started,
            # The column plan's warnings once (the first part's), then each part's skipped rows.
            warnings=[*total.plan.warnings, *total.warnings],
        ),
        priors_by_label=priors_by_label,
        text=text,
        vocabularies=vocabularies,
        # As a one-file fit records them: the plan's columns, the categories in
        # first-seen order of the parts joined, and the policies.
        tables=TableFacts.of(total.plan, total.categories, request, (missing, unseen)),
    )
