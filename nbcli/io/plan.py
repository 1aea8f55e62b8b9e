"""Column planning: which column is the target, which are features, which are
kept or dropped, and what kind of values each one holds.

The plan is made once, from the header (or schema), before any row is read,
and every chunk is read through it: no chunk can change a column's kind.
Today's kinds are :data:`NUMERIC` (features, read as float64, NaN where a
cell is missing), :data:`LABEL` (the target, read as text) and :data:`RAW`
(kept columns, as written). The kinds of the tables and text-columns work
(:data:`CATEGORICAL`, :data:`WORDS`) are named here so that a reader can be
asked for them; a reader that does not handle a kind refuses it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nbcli.io.messages import fail, quote_names

__all__ = [
    "NUMERIC",
    "LABEL",
    "RAW",
    "CATEGORICAL",
    "WORDS",
    "ReadOptions",
    "ColumnPlan",
    "plan_columns",
    "read_options",
]

#: Feature read as float64; missing cells are NaN.
NUMERIC = "numeric"
#: The target: text, typed later (see :func:`nbcli.io.cells.resolve_labels`).
LABEL = "label"
#: A column kept as written (an ID column, say).
RAW = "raw"
#: A feature of categories (text; missing cells in a mask).
CATEGORICAL = "categorical"
#: A feature of text to be split into words (missing cells in a mask).
WORDS = "words"

_TARGET_NAMES = ("label", "target", "class", "y")


@dataclass(frozen=True)
class ReadOptions:
    """What the caller asked for (see :func:`nbcli.io.data.read_dataset`)."""

    target: str | None = None
    features: list[str] | None = None
    drop: list[str] | None = None
    model_features: list[str] | None = None
    need_target: bool = True
    keep: list[str] | None = None
    target_hint: str | None = None
    x_key: str = "X"
    y_key: str = "y"
    kinds: dict[str, str] = field(default_factory=dict)


def read_options(
    target=None,
    features=None,
    drop=None,
    model_features=None,
    need_target=True,
    keep=None,
    target_hint=None,
    x_key="X",
    y_key="y",
    kinds=None,
) -> ReadOptions:
    """:class:`ReadOptions` with every list of names as a list of str."""

    def as_list(names):
        return None if names is None else [str(n) for n in names]

    return ReadOptions(
        target=target,
        features=as_list(features),
        drop=as_list(drop),
        model_features=as_list(model_features),
        need_target=bool(need_target),
        keep=as_list(keep),
        target_hint=target_hint,
        x_key=x_key,
        y_key=y_key,
        kinds=dict(kinds or {}),
    )


@dataclass(frozen=True)
class ColumnPlan:
    """Which columns play which part, and the kind of each feature.

    Attributes
    ----------
    target : str or None
    features : list of str
        In the order of the feature matrix.
    keep : list of str
    note : str or None
        Which column became the target and why, when it was chosen.
    kinds : dict of str to str
        Each feature's kind (:data:`NUMERIC` unless asked otherwise).
    """

    target: str | None
    features: list[str]
    keep: list[str]
    note: str | None
    kinds: dict[str, str] = field(default_factory=dict)

    def kind(self, name: str) -> str:
        """The kind of column ``name``: its feature kind, LABEL, or RAW."""
        if name in self.kinds:
            return self.kinds[name]
        if name == self.target:
            return LABEL
        return RAW

    @property
    def numeric(self) -> list[str]:
        """The NUMERIC features, in order."""
        return [c for c in self.features if self.kinds.get(c, NUMERIC) == NUMERIC]


def plan_columns(columns: list[str], opts: ReadOptions, display: str) -> ColumnPlan:
    """Choose the target, feature and kept columns of a table.

    ``columns`` are the names in file order; ``""`` marks an unnamed column,
    which is never used (it is usually an index written along with the data).
    """
    named = [c for c in columns if c]
    present = set(named)

    def unknown(names, purpose):
        for name in names:
            if name not in present:
                raise fail(
                    display,
                    f"has no column '{name}' {purpose}; the columns are: {quote_names(named)}",
                )

    if opts.model_features is not None and (opts.features or opts.drop):
        raise fail(
            display,
            "features and drop cannot be combined with the model's "
            "feature list; the model decides which columns are used",
        )
    keep = list(opts.keep or [])
    unknown(keep, "to keep")
    if opts.features is not None:
        unknown(opts.features, "to use as a feature")
    unknown(opts.drop or [], "to drop")

    target, note = _choose_target(named, opts, display, unknown)

    if opts.model_features is not None:
        missing = [c for c in opts.model_features if c not in present]
        if missing:
            word = "column" if len(missing) == 1 else "columns"
            raise fail(
                display,
                f"missing {word} {quote_names(missing)} that the model was "
                f"trained on; the columns are: {quote_names(named)}",
            )
        features = list(opts.model_features)
    elif opts.features is not None:
        if target is not None and target in opts.features:
            raise fail(
                display,
                f"column '{target}' is the target and cannot also be a feature; "
                "remove it from the feature list or choose another target",
            )
        features = list(opts.features)
    else:
        left_out = set(opts.drop or []) | set(keep) | {target}
        features = [c for c in named if c not in left_out]
    if not features:
        raise fail(
            display,
            "has no feature columns left after setting aside the target"
            f"{f' {target!r}' if target else ''}, dropped and kept columns; "
            "it needs at least one feature column",
        )
    repeated = sorted({c for c in features if features.count(c) > 1})
    if repeated:
        raise fail(
            display,
            f"the feature list names {quote_names(repeated)} more than once; "
            "list each feature once",
        )
    kinds = {c: opts.kinds.get(c, NUMERIC) for c in features}
    return ColumnPlan(target=target, features=features, keep=keep, note=note, kinds=kinds)


def _choose_target(named: list[str], opts: ReadOptions, display: str, unknown):
    if opts.target is not None:
        unknown([opts.target], "to use as the target")
        return opts.target, None
    hint = opts.target_hint
    if hint is not None and hint in named:
        return hint, f"using column '{hint}' as the target (the name it had at training time)"
    if not opts.need_target:
        return None, None
    # Columns the caller gave another part to are not guessed as the target.
    taken = (
        set(opts.features or [])
        | set(opts.model_features or [])
        | set(opts.keep or [])
        | set(opts.drop or [])
    )
    candidates = [c for c in named if c not in taken]
    if not candidates:
        raise fail(
            display,
            "has no column left to use as the target; the columns are: "
            f"{quote_names(named)}; name the target column explicitly",
        )
    dropped = [c for c in opts.drop or [] if c.strip().lower() in _TARGET_NAMES and c in named]
    if dropped:
        raise fail(
            display,
            f"--drop {dropped[0]} leaves out the column named like a target, and another "
            "column would silently become the target; give --target COLUMN to choose it",
        )
    like_target = [c for c in candidates if c.strip().lower() in _TARGET_NAMES]
    if len(like_target) > 1:
        raise fail(
            display,
            f"has several columns named like a target ({quote_names(like_target)}); "
            "give --target COLUMN to choose one",
        )
    if len(like_target) == 1:
        chosen = like_target[0]
        return chosen, f"using column '{chosen}' as the target (named like a target)"
    chosen = candidates[-1]
    return chosen, f"using column '{chosen}' as the target (the last column)"
