"""Column planning: which column is the target, which are features, which are
kept or dropped, and what kind of values each one holds.

The plan is made in two steps before the rows are read: the roles, from
the header (or schema) alone (:func:`plan_columns`), then, at fit time,
the kinds, from the first :data:`~nbcli.io.profile.SAMPLE_ROWS` data rows
(:func:`decide_kinds`); every chunk is read through the result, so no
chunk can change a column's kind (a later cell that contradicts it, text
in a numeric column, is an error naming its row). At predict time the
kinds and categories come from the model file. The kinds are
:data:`NUMERIC` (features, read as float64, NaN where a cell is missing),
:data:`CATEGORICAL` (text, boolean or categorical-typed features, read as
float64 category codes, NaN where missing; see :mod:`nbcli.io.categories`),
:data:`WORDS` (text to be split into words), :data:`LABEL` (the target,
read as text) and :data:`RAW` (kept columns, as written).

:func:`decide_kinds` is the one place where a column's kind is chosen:
explicit kinds (``DataRequest.kinds``, such as the words columns) first,
then ``--column`` types, then what the sample holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from nbcli.io import profile as pf
from nbcli.io.limits import check_names
from nbcli.io.messages import (
    fail,
    missing_mark,
    quote_names,
    refuse_missing_model_columns,
    refuse_repeated,
)
from nbcli.io.request import DataRequest

__all__ = [
    "NUMERIC",
    "LABEL",
    "RAW",
    "CATEGORICAL",
    "WORDS",
    "ColumnPlan",
    "plan_columns",
    "decide_kinds",
    "NUMERIC_TYPES",
]

#: ``--column`` types read as numbers (the others: ``categorical``).
NUMERIC_TYPES = ("gaussian", "bernoulli", "multinomial")

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
    warnings : list of str
        What the user should hear about the plan (a column left out as a
        row index, a target that looks continuous).
    profiles : dict of str to ColumnProfile
        The planning sample's facts per column (fit time only).
    unnamed : int
        Columns without a name in the header (never used).
    declared_index : tuple of str
        Columns the file's own metadata declares a row index (a Parquet
        file's pandas metadata, ``index_columns``): left out at fit time
        like other row-index columns.
    stray : dict of str to tuple of str
        Numeric columns with a few stray text cells in the planning sample
        (see :func:`decide_kinds`) and those texts, which are read as
        missing cells in that column wherever they appear.
    """

    target: str | None
    features: list[str]
    keep: list[str]
    note: str | None
    kinds: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    profiles: dict = field(default_factory=dict)
    unnamed: int = 0
    declared_index: tuple[str, ...] = ()
    stray: dict[str, tuple[str, ...]] = field(default_factory=dict)

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

    @property
    def matrix(self) -> list[str]:
        """The features of the matrix ``X``, in order: every kind but WORDS
        (numbers, and category codes), which are read as text instead."""
        return [c for c in self.features if self.kinds.get(c, NUMERIC) != WORDS]


def plan_columns(columns: list[str], opts: DataRequest, display: str) -> ColumnPlan:
    """Choose the target, feature and kept columns of a table.

    ``columns`` are the names in file order; ``""`` marks an unnamed column,
    which is never used (it is usually an index written along with the data).
    """
    check_names(columns, display)
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
    unknown(keep, opts.keep_for)
    if opts.features is not None:
        unknown(opts.features, "to use as a feature")
    unknown(opts.drop or [], "to drop")
    if opts.model_features is not None:
        # Every missing column of the model at once, before the kinds the
        # model gives some of them are checked one by one.
        refuse_missing_model_columns(display, opts.model_features, present, named, "columns")
    for name, kind in opts.kinds.items():
        unknown([name], f"to read as {kind}")

    target, note = _choose_target(named, opts, display, unknown)

    if opts.model_features is not None:
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
    refuse_repeated(
        display, features, "the feature list names {names} more than once; list each feature once"
    )
    kinds = {c: opts.kinds.get(c, NUMERIC) for c in features}
    return ColumnPlan(
        target=target,
        features=features,
        keep=keep,
        note=note,
        kinds=kinds,
        unnamed=len(columns) - len(named),
    )


def _choose_target(named: list[str], opts: DataRequest, display: str, unknown):
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
    if not candidates and hint is not None:
        raise fail(
            display,
            f"has no column {quote_names([hint])}, the target the model was fitted with; the "
            f"columns are: {quote_names(named)}; give --target COLUMN if it has another name here",
        )
    if not candidates:
        raise fail(
            display,
            "has no column left to use as the target; the columns are: "
            f"{quote_names(named)}; name the target column explicitly",
        )

    def like_a_target(columns) -> list[str]:
        return [c for c in columns or [] if c.strip().lower() in _TARGET_NAMES and c in named]

    # A column named like a target that an option takes for itself: another
    # column would silently become the target (for --drop even when one is left).
    left = bool(like_a_target(candidates))
    for claimed, why, always in (
        (opts.drop, "--drop {c} leaves out the column named like a target", True),
        (opts.features, "--features {c} uses the column named like a target as a feature", False),
        (opts.keep, f"column '{{c}}', named like a target, is given {opts.keep_for}", False),
    ):
        given = like_a_target(claimed)
        if given and (always or not left):
            raise fail(
                display,
                why.format(c=given[0]) + ", and another column would silently become the "
                "target; give --target COLUMN to choose it",
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
    last = "the last column" if chosen == named[-1] else "the last column not named elsewhere"
    return chosen, f"using column '{chosen}' as the target ({last})"


def decide_kinds(plan: ColumnPlan, profiles: dict, opts: DataRequest, display: str) -> ColumnPlan:
    """The plan with the kinds of its features decided from the planning sample.

    ``profiles`` maps column names to :class:`~nbcli.io.profile.ColumnProfile`.
    At fit time (``opts.infer``) columns that look like a row index are left
    out (unless named in ``features``), a target chosen by default that
    looks continuous is refused (an explicit one gets a warning), and each
    feature gets its kind: the caller's (``opts.kinds``), else its
    ``--column`` type, else :data:`NUMERIC` for numbers and, when
    ``opts.categorical``, :data:`CATEGORICAL` for text, boolean and
    categorical-typed columns. Text columns a numeric model cannot take are
    refused all at once; text that looks like names or dates is refused as
    a category unless its type is given.

    Raises
    ------
    NbcliError
        As described, naming the columns and the ways on.
    """
    if not opts.infer:
        return plan
    warnings = list(plan.warnings)
    chosen = opts.features is None and opts.model_features is None
    if plan.unnamed and chosen:
        word = "a column" if plan.unnamed == 1 else f"{plan.unnamed} columns"
        warnings.append(
            f"{display}: {word} without a name in the header left out (an unnamed column is "
            "usually a row index); give it a name in the header to use it as a feature"
        )
    features = list(plan.features)
    if chosen:
        typed = set(opts.kinds) | set(opts.column_types)
        index = [
            c
            for c in features
            if c not in typed
            and (
                c in plan.declared_index
                or pf.index_name(c)
                or (c in profiles and profiles[c].counting)
            )
        ]
        for c in index:
            if c in plan.declared_index:
                why = "the file's pandas metadata names it the index"
            elif pf.index_name(c):
                why = "its name"
            else:
                why = "it counts the rows 0, 1, 2, ... or 1, 2, 3, ..."
            warnings.append(
                f"{display}: column '{c}' looks like a row index ({why}) and is left out; "
                "name it in --features to use it as a feature"
            )
        features = [c for c in features if c not in index]
        if not features:
            raise fail(
                display,
                "has no feature columns left after leaving out the row-index columns "
                f"{quote_names(index)}; name the features with --features",
            )
    if plan.target is not None and plan.target in profiles:
        warnings.extend(_check_target(plan, profiles[plan.target], opts, display))
    kinds, refused, not_categories, marked = {}, [], [], []
    stray: dict[str, tuple[str, ...]] = {}
    for c in features:
        given = opts.column_types.get(c)
        p = profiles.get(c)
        if c in opts.kinds:
            kinds[c] = opts.kinds[c]
        elif given == "categorical" and not (
            p is not None and p.value_type == pf.INTEGER and pf.looks_like_codes(p)
        ):
            # Whole numbers that look like codes stay codes (0..K-1, as the
            # categorical model reads them); anything else is read as labels.
            kinds[c] = CATEGORICAL
        elif (
            opts.all_categorical
            and given is None
            and p is not None
            and p.value_type == pf.INTEGER
            and not pf.looks_like_codes(p)
        ):
            # Years or ZIP codes as codes would make thousands of categories,
            # nearly all never seen and each smoothed as if it could be.
            kinds[c] = CATEGORICAL
        elif given is not None or p is None or p.is_number:
            kinds[c] = NUMERIC
        elif opts.categorical and not opts.all_categorical and _stray_text(p):
            # Numbers but for a slip or two: the column stays numeric.
            kinds[c] = NUMERIC
            stray[c] = tuple(dict.fromkeys(t for _, t in p.texts))
            warnings.append(_stray_text_warning(p, display))
        elif not opts.categorical:
            refused.append(p)
        elif _marked_numbers(p):
            # Numbers and one mark such as '?': as categories, every number
            # would be a category of its own and the mark one more.
            marked.append(p)
        elif p.value_type == pf.DATETIME or (
            p.value_type == pf.TEXT and p.n_distinct > max(5, p.n_present / 2)
        ):
            not_categories.append(p)
        else:
            kinds[c] = CATEGORICAL
        if kinds.get(c) == CATEGORICAL and p is not None and opts.na_values is None:
            warnings.extend(_category_like_missing_warning(p, display))
    if refused:
        raise fail(display, _text_columns_message(refused, opts))
    if marked:
        raise fail(display, _marked_numbers_message(marked))
    if not_categories and all(_decimal_comma(p.example) for p in not_categories):
        # Numbers with a decimal comma are many distinct texts, not free text.
        raise fail(display, _text_columns_message(not_categories, opts))
    if not_categories:
        raise fail(display, _not_categories_message(not_categories))
    return replace(
        plan, features=features, kinds=kinds, warnings=warnings, profiles=profiles, stray=stray
    )


#: Present cells of the planning sample per stray text cell, at least, for a
#: column of numbers to stay numeric under ``mixed`` (one cell in 50: 2%).
STRAY_CELLS_PER_TEXT = 50


def _stray_text(p) -> bool:
    """A text column of numbers but for a few cells (:data:`STRAY_CELLS_PER_TEXT`),
    whose texts the profile holds all of."""
    n_text = p.n_present - p.n_numbers
    return (
        p.value_type == pf.TEXT
        and n_text >= 1
        and n_text * STRAY_CELLS_PER_TEXT <= p.n_present
        and n_text <= len(p.texts)
    )


def _category_like_missing_warning(p, display: str) -> list[str]:
    """A category column some of whose cells are a word of the default
    missing-value list that is also written as a category (``None``)."""
    if not p.category_like_missing:
        return []
    cells = ", ".join(f"{n} cell{'' if n == 1 else 's'} {w!r}" for w, n in p.category_like_missing)
    word = p.category_like_missing[0][0]
    return [
        f"{display}: column '{p.name}' has {cells} in the first {p.n_rows} rows, read as "
        f"missing (a word of the default missing-value list); if {word!r} is one of its "
        "categories, pass --na-values with the marks the file uses for a missing value "
        f"(such as --na-values NA; empty cells are always missing), and {word!r} is read "
        "as a category"
    ]


def _stray_text_warning(p, display: str) -> str:
    import shlex

    n_text = p.n_present - p.n_numbers
    cells = ", ".join(f"{t!r} at row {r}" for r, t in p.texts)
    marks = " ".join(f"--na-values {shlex.quote(t)}" for t in dict.fromkeys(t for _, t in p.texts))
    return (
        f"{display}: column '{p.name}' holds numbers but for {n_text} text "
        f"cell{'' if n_text == 1 else 's'} in the first {p.n_rows} rows ({cells}); "
        f"with at most one text cell in {STRAY_CELLS_PER_TEXT} it stays numeric and "
        f"{'that text is' if n_text == 1 else 'those texts are'} read as missing in it; "
        f"pass {marks} to say so, or --column {shlex.quote(p.name + '=categorical')} to read "
        "the column as categories"
    )


def _check_target(plan: ColumnPlan, p, opts: DataRequest, display: str) -> list[str]:
    """Refuse a target chosen by default that looks continuous or is mostly
    empty; warn for a chosen one."""
    note = plan.note or ""
    by_default = opts.target is None and bool(note) and "training time" not in note
    how = note.split("(", 1)[-1].rstrip(")") if "(" in note else "chosen by default"
    empty = p.n_rows - p.n_present
    if p.n_rows >= 10 and empty > p.n_rows / 2:
        what = f"{empty} of the first {p.n_rows} rows have no value in it"
        if by_default:
            raise fail(
                display,
                f"column '{plan.target}' ({how}) is mostly empty ({what}), not like class "
                "labels; pass --target NAME to choose the label column",
            )
        return [
            f"{display}: the target '{plan.target}' is mostly empty ({what}); rows without a "
            "label are skipped"
        ]
    fractional = p.value_type == pf.NUMBER
    many = p.n_distinct > max(10, p.n_present / 5)
    if not (fractional or many):
        return []
    what = (
        "numbers with fractional parts in the first rows"
        if fractional
        else f"{p.n_distinct} distinct values in the first {p.n_present} rows"
    )
    if by_default:
        raise fail(
            display,
            f"column '{plan.target}' ({how}) looks continuous, not like class labels ({what}); "
            "pass --target NAME to choose the label column",
        )
    return [
        f"{display}: the target '{plan.target}' looks continuous ({what}); "
        "each distinct value becomes a class"
    ]


def _decimal_comma(text) -> bool:
    """``1,5`` or ``-12,25``: a number written with a decimal comma."""
    import re

    return text is not None and re.fullmatch(r"[+-]?\d+,\d+", str(text).strip()) is not None


def _text_columns_message(refused: list, opts: DataRequest) -> str:
    names = [p.name for p in refused]
    model = f"the {opts.model} model" if opts.model else "this model"
    examples = ", ".join(
        f"{p.name}={p.example!r}" + (f" in row {p.example_row}" if p.example_row else "")
        for p in refused[:5]
    )
    booleans = all(p.value_type == pf.BOOLEAN for p in refused)
    word = "column" if len(names) == 1 else "columns"
    if all(_decimal_comma(p.example) for p in refused):
        import re

        if any(re.fullmatch(r"[+-]?\d{1,3},\d{3}", str(p.example).strip()) for p in refused):
            # "4,095": a decimal comma, or a thousands separator; only the user knows.
            return (
                f"{word} {quote_names(names)} hold{'s' if len(names) == 1 else ''} numbers "
                f"written with a comma (such as {examples}): a decimal comma or a thousands "
                "separator; numbers need a '.' as the decimal point and no separators: save "
                "the file that way"
            )
        return (
            f"{word} {quote_names(names)} hold{'s' if len(names) == 1 else ''} numbers written "
            f"with a decimal comma (such as {examples}), and numbers need a '.' as the decimal "
            "point; save the file with '.' as the decimal separator"
        )
    import shlex

    marks = {str(p.example).strip() for p in refused if p.example is not None}
    if len(marks) == 1 and missing_mark(next(iter(marks))) is not None:
        # One short mark such as ? or . in number columns: a missing-value marker.
        mark = next(iter(marks))
        return (
            f"{word} {quote_names(names)} hold{'s' if len(names) == 1 else ''} numbers and "
            f"the text {mark!r} (such as {examples}); if {mark!r} marks a missing value, "
            f"pass --na-values {shlex.quote(mark)}"
        )
    holds = "True/False values" if booleans else "text"
    return (
        f"{word} {quote_names(names)} hold{'s' if len(names) == 1 else ''} {holds} "
        f"(such as {examples}) and {model} takes numbers only; leave "
        f"{'it' if len(names) == 1 else 'them'} out with --drop {shlex.quote(','.join(names))}, "
        "use --model mixed (text and boolean columns become categorical features), "
        "or --text NAME for a column of words"
    )


def _marked_numbers(p) -> bool:
    """A text column of numbers whose only other value is one missing-value mark
    (:func:`nbcli.io.messages.missing_mark`)."""
    return (
        p.value_type == pf.TEXT
        and p.n_marks == 1
        and p.n_numbers >= p.n_present / 2
        and missing_mark(p.example) is not None
    )


def _marked_numbers_message(columns: list) -> str:
    import shlex

    names = [p.name for p in columns]
    word = "column" if len(names) == 1 else "columns"
    marks = sorted({str(p.example).strip() for p in columns})
    examples = ", ".join(
        f"{p.name}={p.example!r}" + (f" in row {p.example_row}" if p.example_row else "")
        for p in columns[:5]
    )
    flags = " ".join(f"--na-values {shlex.quote(m)}" for m in marks)
    keep = shlex.quote(f"{names[0]}=categorical")
    return (
        f"{word} {quote_names(names)} hold{'s' if len(names) == 1 else ''} numbers and "
        f"the mark {' or '.join(repr(m) for m in marks)} (such as {examples}); if it marks "
        f"a missing value, pass {flags}; to read the values as categories all the same, "
        f"pass --column {keep}"
    )


def _not_categories_message(columns: list) -> str:
    parts = []
    for p in columns:
        if p.value_type == pf.DATETIME:
            parts.append(f"'{p.name}' holds dates or times (such as {p.example!r})")
        else:
            parts.append(
                f"'{p.name}' has {p.n_distinct} distinct values in {p.n_present} rows "
                "(names, identifiers or free text rather than categories)"
            )
    import shlex

    names = [p.name for p in columns]
    dropped = shlex.quote(",".join(names))
    first = shlex.quote(names[0])
    them = "it" if len(names) == 1 else "them"
    return (
        f"column {'; column '.join(parts)}; leave {them} out with --drop {dropped}, treat "
        f"{'it' if len(names) == 1 else 'one'} as words with --text {first}, or insist "
        f"with --column {shlex.quote(names[0] + '=categorical')}"
    )
