"""One data request: what a command reads, how, and which features it makes.

:class:`DataRequest` is the one value every reading command builds (the
command line builds it once, in :func:`nbcli.cli.common.data_request`) and
every workflow takes whole. It holds

- the source: ``data``, the ``--data`` values as given (one file, several
  files, a folder or glob of parts, ``-`` for stdin);
- the read options: ``target``, ``delimiter``, ``chunk_size``, the NPZ keys
  ``x_key`` and ``y_key``, ``na_values``;
- the column selection: ``features``, ``drop``, ``column_types``
  (``--column NAME=TYPE``);
- the cell policies: ``missing`` and ``unseen``;
- the feature blocks: the table's columns by kind (:class:`TableBlock`) and
  zero or more text blocks (:class:`TextBlock`), each with its own
  :class:`~nbcli.text.settings.TextSettings`.

The fields after those are what a workflow decides for one read from the
model it fits or applies (the model's feature list, known categories,
whether kinds are inferred...): :meth:`DataRequest.reading` sets them, and
the readers (:mod:`nbcli.io.readers`) take the result. A new reading option
is one field here and one line in the reader that uses it; a new kind of
feature column is one block type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nbcli.text.settings import TextSettings

__all__ = ["DataRequest", "FeatureBlock", "TableBlock", "TextBlock"]


@dataclass(frozen=True)
class TableBlock:
    """The table's own columns, each read by its kind (numbers, categories)."""

    kind = "table"


@dataclass(frozen=True)
class TextBlock:
    """Text columns whose words are counted, with their tokenisation.

    Attributes
    ----------
    settings : TextSettings
        The columns and how their documents become term counts.
    """

    settings: TextSettings
    kind = "text"

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.settings.columns)


FeatureBlock = TableBlock | TextBlock

_NAME_LISTS = ("features", "drop", "model_features", "keep")


def _names(value) -> tuple[str, ...] | None:
    return None if value is None else tuple(str(v) for v in value)


@dataclass(frozen=True)
class DataRequest:
    """A data set to read and the features to make of it (see the module docstring).

    Attributes
    ----------
    data : tuple of str
        The ``--data`` values as given; a file, ``-``, a folder or a glob.
    sha256 : bool
        Reports record each file's SHA-256 in their ``inputs`` (which reads
        the file once more).
    target : str or None
        Label column (NPZ: the labels' key); None: the model's training
        target, else the reader's default (a column named label, target,
        class or y, else the last column).
    delimiter : str or None
        CSV delimiter; None: detected among ``, ; tab |``.
    chunk_size : int or None
        Rows per chunk; None: about 2 million values (16 MB).
    x_key, y_key : str
        Names of the feature and label arrays in ``.npz`` input.
    na_values : tuple of str or None
        Cell texts that mean a missing feature cell; None: the model's (at
        scoring time) or :data:`nbcli.io.cells.NA_STRINGS`.
    features, drop : tuple of str or None
        Feature columns to use, or to leave out of "all but the target".
    column_types : mapping of str to str
        ``--column NAME=TYPE`` overrides (:data:`nbcli.io.plan.NUMERIC_TYPES`
        or ``categorical``).
    missing : {"error", "ignore", "drop"} or None
        Missing feature cells; None: the model's policy (and, while reading,
        refused).
    unseen : {"error", "ignore"} or None
        Categories never seen in training; None: the model's policy.
    blocks : tuple of FeatureBlock
        The table's columns and the text blocks.

    Examples
    --------
    >>> from nbcli.io.request import DataRequest
    >>> request = DataRequest.of("sample_data/penguins_train.csv", target="species", drop=["year"])
    >>> request.path, request.target, request.drop
    ('sample_data/penguins_train.csv', 'species', ('year',))
    """

    # The source.
    data: tuple[str, ...] = ()
    sha256: bool = True
    # The read options.
    target: str | None = None
    delimiter: str | None = None
    chunk_size: int | None = None
    x_key: str = "X"
    y_key: str = "y"
    na_values: tuple[str, ...] | None = None
    # The column selection.
    features: tuple[str, ...] | None = None
    drop: tuple[str, ...] | None = None
    column_types: Mapping[str, str] = field(default_factory=dict)
    # The cell policies.
    missing: str | None = None
    unseen: str | None = None
    # The feature blocks.
    blocks: tuple[FeatureBlock, ...] = (TableBlock(),)

    # What a workflow decides for one read (set with ``reading``).
    #: The model's features: exactly these columns, in this order.
    model_features: tuple[str, ...] | None = None
    #: False at prediction time: the target is never guessed.
    need_target: bool = True
    #: Columns returned as read beside the features (an ID or fold column).
    keep: tuple[str, ...] | None = None
    #: What the kept columns are for, in the message for one that is not there.
    keep_for: str = "to keep"
    #: The target name known from training.
    target_hint: str | None = None
    #: Kinds fixed before the sample is looked at (``{"notes": "words"}``).
    kinds: Mapping[str, str] = field(default_factory=dict)
    #: A row without a label is handed on (its ``Dataset.y_missing`` set).
    skip_missing_labels: bool = False
    #: Label texts (spaces stripped) that mean a missing label, besides the
    #: empty cell (``--na-labels``; default none: labels are taken as written).
    na_labels: tuple[str, ...] = ()
    #: Decide kinds from the planning sample (fit time).
    infer: bool = False
    #: Whether text, boolean and categorical columns may be categorical features.
    categorical: bool = False
    #: Every feature is categorical (the categorical model).
    all_categorical: bool = False
    #: Known categories per column (predict time, from the model file).
    categories: Mapping[str, list[str]] = field(default_factory=dict)
    #: Texts that fit read as missing in a numeric column (predict time, from
    #: the model file's ``training.read_as_missing``): read so again.
    read_as_missing: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: The model type, for messages.
    model: str | None = None
    #: The missing-cell policies besides ``error`` the model takes, which the
    #: message refusing a missing cell offers (LDA and QDA cannot ``ignore``).
    missing_remedies: tuple[str, ...] = ("ignore", "drop")

    @classmethod
    def of(cls, data: str | list[str] | tuple[str, ...] = (), **options: Any) -> DataRequest:
        """A request for ``data`` (one path, or several) with ``options`` as fields
        (``text=TextSettings`` for one text block)."""
        paths = (data,) if isinstance(data, str) else tuple(str(d) for d in data)
        return cls(data=paths).reading(**options)

    def reading(self, **options: Any) -> DataRequest:
        """This request with ``options`` replacing fields: lists of names become
        tuples of str, ``na_values`` a tuple of str, ``text`` (TextSettings or
        None) the text blocks."""
        if "text" in options:
            text = options.pop("text")
            table = tuple(b for b in self.blocks if not isinstance(b, TextBlock))
            options["blocks"] = table + (() if text is None else (TextBlock(text),))
        for name in _NAME_LISTS:
            if name in options:
                options[name] = _names(options[name])
        if options.get("na_values") is not None:
            options["na_values"] = tuple(str(v) for v in options["na_values"])
        if "na_labels" in options:
            options["na_labels"] = tuple(str(v) for v in options["na_labels"] or ())
        for name in ("kinds", "column_types", "categories"):
            if name in options:
                options[name] = dict(options[name] or {})
        if "read_as_missing" in options:
            options["read_as_missing"] = {
                str(c): tuple(str(t) for t in texts)
                for c, texts in (options["read_as_missing"] or {}).items()
            }
        if "data" in options:
            options["data"] = tuple(options["data"])
        return replace(self, **options)

    @property
    def path(self) -> str:
        """The data as messages and reports name it: the one path, or the paths
        joined by ``", "``."""
        return self.data[0] if len(self.data) == 1 else ", ".join(self.data)

    @property
    def text_blocks(self) -> tuple[TextBlock, ...]:
        return tuple(b for b in self.blocks if isinstance(b, TextBlock))

    @property
    def text(self) -> TextSettings | None:
        """The settings of the text block, or None without text columns."""
        blocks = self.text_blocks
        return blocks[0].settings if blocks else None

    @property
    def text_columns(self) -> tuple[str, ...]:
        return tuple(c for b in self.text_blocks for c in b.columns)

    def text_record(self) -> dict:
        """``{"text": settings}`` of the text block, as reports record it; empty without."""
        text = self.text
        return {} if text is None else {"text": text.to_metadata()}
