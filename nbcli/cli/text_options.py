"""The text-column options of ``fit`` (and of the commands that fit): ``--text COL`` and tokenisation.

Flags override the ``[text]`` table of a config file::

    [text]
    columns = ["body"]          # or "body,subject"
    ngram = "1,2"               # or [1, 2]
    min_df = 2                  # documents (an integer) or a fraction (a float)
    max_df = 0.9
    max_features = 50000
    stop_words = "stop.txt"     # one word per line, next to this file; or ["the", "a"]
    lowercase = true
    tfidf = true                # TF-IDF weighting (fit), with:
    sublinear_tf = false
    smooth_idf = true
    norm = "l2"                 # or "l1", "none"
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import typer

from nbcli.cli.common import option_group
from nbcli.cli.options import column_names, split_list
from nbcli.errors import NbcliError

TEXT = typer.Option(
    "--text",
    help="Column of text whose word counts are features (comma-separated or repeated); "
    "models multinomial, complement, bernoulli (with --binarize 0), and mixed (beside "
    "its table's columns; fit only, not cv or tune yet).",
)
NGRAM = typer.Option(
    "--ngram",
    metavar="MIN,MAX",
    help="Word n-gram lengths (default 1,1; N alone is N,N; MAX at most 10).",
)
MIN_DF = typer.Option(
    "--min-df", help="Keep words in at least this many documents (or this fraction, 0-1)."
)
MAX_DF = typer.Option(
    "--max-df", help="Keep words in at most this many documents (or this fraction, 0-1)."
)
MAX_FEATURES = typer.Option(
    "--max-features", help="Keep only the most frequent words, this many per text column."
)
STOP_WORDS = typer.Option("--stop-words", help="File of stop words, one per line (UTF-8).")
LOWERCASE = typer.Option(
    "--lowercase/--no-lowercase", help="Lowercase text before splitting it (default: yes)."
)

TFIDF = typer.Option(
    "--tfidf",
    help="Weight word counts by TF-IDF as scikit-learn's TfidfTransformer (reads the data "
    "twice; models multinomial, complement, mixed).",
)
SUBLINEAR_TF = typer.Option("--sublinear-tf", help="With --tfidf: 1 + log(count) for counts.")
SMOOTH_IDF = typer.Option(
    "--smooth-idf/--no-smooth-idf",
    help="With --tfidf: idf = log((1 + n) / (1 + df)) + 1 (default: yes), else log(n / df) + 1.",
)
NORM = typer.Option(
    "--tfidf-norm",
    metavar="l2|l1|none",
    help="With --tfidf: divide each document's weights by their l2 (default) or l1 norm.",
)

_OPTIONS = ("text", "ngram", "min_df", "max_df", "max_features", "stop_words", "lowercase")


@dataclass(frozen=True)
class TextOptions:
    """A command's text options, as one value (see :data:`with_text_options`)."""

    option_group: ClassVar[bool] = True
    text: list[str] | None = None
    ngram: str | None = None
    min_df: str | None = None
    max_df: str | None = None
    max_features: int | None = None
    stop_words: str | None = None
    lowercase: bool | None = None
    tfidf: bool | None = None
    sublinear_tf: bool | None = None
    smooth_idf: bool | None = None
    tfidf_norm: str | None = None


#: The text options of a command that gives none.
NO_TEXT = TextOptions()

#: ``--text`` and its tokenisation options in place of a command's ``text``
#: parameter, which receives them as one :class:`TextOptions`.
with_text_options = option_group(
    "text",
    TextOptions,
    (
        ("text", list[str] | None, TEXT, None),
        ("ngram", str | None, NGRAM, None),
        ("min_df", str | None, MIN_DF, None),
        ("max_df", str | None, MAX_DF, None),
        ("max_features", int | None, MAX_FEATURES, None),
        ("stop_words", str | None, STOP_WORDS, None),
        ("lowercase", bool | None, LOWERCASE, None),
        ("tfidf", bool | None, TFIDF, None),
        ("sublinear_tf", bool | None, SUBLINEAR_TF, None),
        ("smooth_idf", bool | None, SMOOTH_IDF, None),
        ("tfidf_norm", str | None, NORM, None),
    ),
)
_KEYS = {"columns", "ngram", "min_df", "max_df", "max_features", "stop_words", "lowercase"}
_WEIGHTING = ("tfidf", "sublinear_tf", "smooth_idf", "tfidf_norm")
_WEIGHTING_KEYS = {"tfidf", "sublinear_tf", "smooth_idf", "norm"}


def parse_df(value, flag: str) -> int | float:
    """``"2"`` -> 2 documents, ``"0.5"`` -> half of them (as ``CountVectorizer`` reads them)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    text = str(value).strip()
    try:
        return float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        raise NbcliError(
            f"{flag} must be a number of documents (an integer) or a fraction (0-1), got {value!r}"
        ) from None


#: The longest word n-gram: each row's count of n-grams of every length up to
#: it is built at once, so a range such as 1,1000 would take all memory.
MAX_NGRAM = 10


def parse_ngram(value, flag: str = "--ngram") -> tuple[int, int]:
    """``"1,2"`` or ``[1, 2]`` -> (1, 2); one number ``"2"`` -> (2, 2), as
    scikit-learn's ``ngram_range=(2, 2)``: n-grams of that one length."""
    parts = value if isinstance(value, list) else str(value).split(",")
    try:
        numbers = [int(str(p).strip()) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) == 1:
        numbers *= 2
    if len(numbers) != 2 or not 1 <= numbers[0] <= numbers[1] <= MAX_NGRAM:
        raise NbcliError(
            f"{flag} must be MIN,MAX with 1 <= MIN <= MAX <= {MAX_NGRAM} (e.g. 1,2; one number N "
            f"is N,N), got {value!r}"
        )
    return numbers[0], numbers[1]


def _config_stop_words(value, config: str | None, where: str):
    """``(path, None)`` for a file a config's ``stop_words`` names, relative
    to the config file's folder (as a project's config is read wherever the
    command runs), or ``(None, words)`` for a list of the words themselves.

    Raises
    ------
    NbcliError
        For a value that is neither a string nor a list of strings.
    """
    if isinstance(value, list) and all(isinstance(w, str) for w in value):
        return None, tuple(sorted({w.strip() for w in value if w.strip()}))
    if not isinstance(value, str) or not value:
        raise NbcliError(
            f"{where} takes a file of words, one per line, or a list of words "
            f'(stop_words = "stop.txt" or stop_words = ["the", "a"]); got {value!r}'
        )
    if config is None or os.path.isabs(value):
        return value, None
    return os.path.join(os.path.dirname(config), value), None


def read_stop_words(path: str, flag: str = "--stop-words") -> tuple[str, ...]:
    """The words of a stop-word file: one per line, blank lines and ``#`` comments skipped.

    At most :data:`~nbcli.io.limits.MAX_STOP_WORD_BYTES` bytes and
    :data:`~nbcli.io.limits.MAX_STOP_WORDS` lines are read (a device such as
    ``/dev/zero`` is refused, not read without end).
    """
    from nbcli.io.limits import MAX_STOP_WORD_BYTES, MAX_STOP_WORDS

    try:
        with open(path, "rb") as f:
            data = f.read(MAX_STOP_WORD_BYTES + 1)
        if len(data) > MAX_STOP_WORD_BYTES:
            raise NbcliError(
                f"{flag} {path}: the file is larger than {MAX_STOP_WORD_BYTES >> 20} MB; a "
                "stop-word list is at most that (one word a line)"
            )
        # utf-8-sig: editors on Windows start the file with a byte-order mark.
        lines = data.decode("utf-8-sig").splitlines()
        if len(lines) > MAX_STOP_WORDS:
            raise NbcliError(
                f"{flag} {path}: the file has {len(lines):,} lines; a stop-word list has at "
                f"most {MAX_STOP_WORDS:,}"
            )
    except FileNotFoundError:
        if os.sep not in str(path) and "." not in str(path):
            # "english", as scikit-learn's CountVectorizer takes it.
            raise NbcliError(
                f"{flag} {path}: no such file; {flag} takes a file of words, one per line "
                "(nbcli has no built-in lists)"
            ) from None
        raise NbcliError(f"{flag} {path}: no such file") from None
    except UnicodeDecodeError:
        raise NbcliError(f"{flag} {path}: the file is not UTF-8 text") from None
    except OSError as exc:
        raise NbcliError(f"{flag} {path}: cannot read it ({exc.strerror or exc})") from None
    words = [w.strip() for w in lines]
    return tuple(sorted({w for w in words if w and not w.startswith("#")}))


def text_settings(cfg: dict, config: str | None, options: Mapping[str, Any]):
    """The :class:`~nbcli.text.settings.TextSettings` asked for, or None without text columns.

    ``options`` holds the command's text options by parameter name
    (``text``, ``ngram``, ``min_df``, ``max_df``, ``max_features``,
    ``stop_words``, ``lowercase``; those missing are not given).

    Raises
    ------
    NbcliError
        For an invalid value (naming the flag or config key), or tokenisation
        options given without any text column.
    """
    text, ngram, min_df, max_df, max_features, stop_words, lowercase = (
        options.get(name) for name in _OPTIONS
    )
    table = cfg.get("text", {})
    where = f"{config}: [text]"
    if not isinstance(table, dict) or set(table) - _KEYS - _WEIGHTING_KEYS:
        raise NbcliError(f"{where} may hold {', '.join(sorted(_KEYS | _WEIGHTING_KEYS))} only")
    if text is not None and not split_list(text):
        # An unset shell variable: the column would be read as a table column.
        raise NbcliError("--text is empty; name the column of text (--text COL)")
    columns = split_list(text) or (
        column_names(table["columns"], f"{where} columns") if "columns" in table else None
    )
    given = {
        "--ngram": ngram,
        "--min-df": min_df,
        "--max-df": max_df,
        "--max-features": max_features,
        "--stop-words": stop_words,
        "--lowercase": lowercase,
        **{f"--{n.replace('_', '-')}": options.get(n) or None for n in _WEIGHTING},
    }
    if not columns:
        named = [flag for flag, v in given.items() if v is not None]
        if named:
            raise NbcliError(f"{named[0]} applies to text columns: name them with --text COL")
        return None
    from nbcli.text.settings import TextSettings

    # A value from the table is named by its key of the config file.
    shown_as = {
        key: flag if given[flag] is not None or key not in table else f"{where} {key}"
        for key, flag in (("ngram", "--ngram"), ("min_df", "--min-df"), ("max_df", "--max-df"))
    }
    ngram = ngram if ngram is not None else table.get("ngram")
    min_df = min_df if min_df is not None else table.get("min_df")
    max_df = max_df if max_df is not None else table.get("max_df")
    max_features = max_features if max_features is not None else table.get("max_features")
    stop_flag, stop_list = "--stop-words", None
    if stop_words is None and table.get("stop_words") is not None:
        stop_flag = f"{where} stop_words"
        stop_words, stop_list = _config_stop_words(table["stop_words"], config, stop_flag)
    lowercase = lowercase if lowercase is not None else table.get("lowercase", True)
    try:
        return TextSettings(
            columns=tuple(columns),
            lowercase=lowercase,
            ngram_range=(1, 1) if ngram is None else parse_ngram(ngram, shown_as["ngram"]),
            min_df=1 if min_df is None else parse_df(min_df, shown_as["min_df"]),
            max_df=1.0 if max_df is None else parse_df(max_df, shown_as["max_df"]),
            max_features=max_features,
            stop_words=stop_list
            if stop_list is not None or stop_words is None
            else read_stop_words(stop_words, stop_flag),
            weighting=_weighting(table, options, where),
        )
    except ValueError as exc:
        raise NbcliError(f"--text: {exc}") from None


def _weighting(table: dict, options: Mapping[str, Any], where: str):
    """The :class:`~nbcli.text.weighting.TfidfWeighting` asked for (flags over
    the ``[text]`` table), or None for raw counts; an invalid value is refused
    naming its flag, or its key of the config file (``where``)."""
    from nbcli.text.weighting import TfidfWeighting

    def given(flag_name, key):
        value = options.get(flag_name)
        if value is None:
            return table.get(key), f"{where} {key}"
        return value, f"--{flag_name.replace('_', '-')}"

    (norm, norm_from), (sublinear, sublinear_from), (smooth, smooth_from) = (
        given("tfidf_norm", "norm"),
        given("sublinear_tf", "sublinear_tf"),
        given("smooth_idf", "smooth_idf"),
    )
    tfidf, tfidf_from = given("tfidf", "tfidf")
    if tfidf is not None and not isinstance(tfidf, bool):
        # "false" or 1 would switch TF-IDF on (any value but false did).
        raise NbcliError(f"{tfidf_from} must be true or false, got {tfidf!r}")
    if not tfidf:
        named = [n for n, v in (("--sublinear-tf", sublinear), ("--tfidf-norm", norm)) if v]
        if named or smooth is not None:
            raise NbcliError(f"{named[0] if named else '--smooth-idf'} applies with --tfidf")
        return None
    for value, source in ((sublinear, sublinear_from), (smooth, smooth_from)):
        if value is not None and not isinstance(value, bool):
            raise NbcliError(f"{source} must be true or false, got {value!r}")
    spelled = norm.strip().lower() if isinstance(norm, str) else norm
    if spelled not in ("l2", "l1", "none", None):
        raise NbcliError(f"{norm_from} must be l2, l1 or none, got {norm!r}")
    return TfidfWeighting(
        smooth_idf=True if smooth is None else smooth,
        sublinear_tf=bool(sublinear),
        norm="l2" if norm is None else None if spelled == "none" else spelled,
    )


def text_grid(ngram, min_df, max_df) -> dict[str, list]:
    """The text settings ``tune`` searches: each of ``--ngram`` (ranges
    separated by ``:``, as ``1,1:1,2``), ``--min-df`` and ``--max-df``
    (values separated by commas) given with more than one value, by
    :class:`~nbcli.text.settings.TextSettings` field name; others are single
    settings, read as ``fit`` reads them."""
    grid: dict[str, list] = {}
    if ngram is not None and ":" in str(ngram):
        grid["ngram_range"] = [parse_ngram(p, "--ngram") for p in str(ngram).split(":")]
    for name, flag, value in (("min_df", "--min-df", min_df), ("max_df", "--max-df", max_df)):
        if value is not None and "," in str(value):
            grid[name] = [parse_df(p, flag) for p in str(value).split(",")]
    flags = {"ngram_range": "--ngram", "min_df": "--min-df", "max_df": "--max-df"}
    for name, values in grid.items():
        # 1 (one document) and 1.0 (every document) are two settings.
        if len({(type(v), v) for v in values}) != len(values):
            raise NbcliError(f"{flags[name]}: a value is listed twice")
    return grid
