"""Whether a stream is a terminal: the one test behind colour, width and progress bars."""

from __future__ import annotations


def is_terminal(stream) -> bool:
    """True when ``stream`` is an open terminal; False for files, pipes, closed or odd streams."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


# Characters a terminal acts on rather than shows: C0 and C1 controls, DEL,
# and the bidirectional overrides that reorder what is shown around them.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escaped(c: str) -> str:
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _is_control(c: str) -> bool:
    code = ord(c)
    return code < 0x20 or 0x7F <= code < 0xA0 or c in _BIDI


def escape_controls(text: str, *, keep_whitespace: bool = False) -> str:
    """``text`` with every character a terminal would act on shown escaped.

    Escape sequences in column names or labels could otherwise set the
    window title, clear the screen or reorder a line. ``ESC`` becomes
    ``\\x1b``, a newline ``\\n``, a right-to-left override ``\\u202e``;
    printable text (any script) is unchanged.

    Parameters
    ----------
    text : str
    keep_whitespace : bool
        Leave newline, tab and carriage return as they are (for messages,
        which collapse them into spaces anyway).
    """
    if text.isprintable() and not any(c in _BIDI for c in text):
        return text
    keep = _NAMED if keep_whitespace else {}
    return "".join(_escaped(c) if _is_control(c) and c not in keep else c for c in text)


def shown_label(label) -> str:
    """A label or column name quoted for a message, control characters escaped."""
    return repr(label) if not isinstance(label, str) else "'" + escape_controls(label) + "'"
