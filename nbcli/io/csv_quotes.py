"""The one rule for double quotes in CSV files, checked before any row is read.

RFC 4180 lets a double quote appear only around a whole field (``"a, b"``)
and, doubled, inside one (``"say ""hi"" now"``). A quote anywhere else, such as
``5 ft 11"`` or ``ab"c`` in an unquoted field, or text after a closing
quote (``"ab"c``), is refused, naming its line: parsers disagree on such
files (polars counts quotes to find where its parallel pieces start, so
the rows it hands out depend on where a piece falls, up to none at all;
Python's csv module takes the quote literally), so no one reading of them
can be promised to every command. A file that ends inside a quoted field
is refused too (the line where that field opens is named).

The check runs over the bytes in blocks with NumPy (a file without a quote
costs one comparison per byte), so every command, ``split`` included, sees
the same rows. A plain file is first searched for a quote where the system
maps it (no copy of its bytes): one without any needs nothing more.
"""

from __future__ import annotations

import io
import mmap
from collections.abc import Callable
from typing import BinaryIO

import numpy as np

from nbcli.errors import NbcliError
from nbcli.io.messages import fail, translated

__all__ = ["check_quotes"]

_QUOTE = ord('"')
_BLOCK = 1 << 23
#: Bytes that may stand before an opening quote, or after a closing one,
#: besides the delimiter: line ends, and the spaces of ``"a", "b"``.
_AROUND = (ord("\n"), ord("\r"), ord(" "), ord("\t"), _QUOTE)


def check_quotes(
    open_binary: Callable[[], BinaryIO], display: str, delimiter: str, lone_cr: bool = False
) -> bool:
    """Refuse the first double quote that RFC 4180 does not allow where it stands.

    Parameters
    ----------
    open_binary : callable
        Opens the file's bytes (decompressed), from the top.
    display : str
        The file, for messages.
    delimiter : str
        One character.
    lone_cr : bool
        Lines end with a carriage return alone (for the line numbers).

    Returns
    -------
    bool
        Whether the file may hold a double quote (False: it holds none, so
        each of its lines is one record).

    Raises
    ------
    NbcliError
        For a quote inside an unquoted field, text after a closing quote, or
        a quoted field that is never closed: one line naming the line of the
        file (1-based, the header included) and the field.
    """
    if _no_quote(open_binary):
        return False
    newline = ord("\r") if lone_cr else ord("\n")
    around = np.zeros(256, dtype=bool)
    around[list(_AROUND)] = True
    delim = delimiter.encode("utf-8")
    if len(delim) == 1:
        around[delim[0]] = True
    lines = 0  # line breaks before this block
    parity = 0  # quotes before this block, mod 2: 1 inside a quoted field
    prev = ord("\n")  # the byte before this block (the start of a line)
    pending: tuple[int, bytes] | None = None  # a closing quote ending the last block
    opened = (0, b"")  # the line and text where the open quoted field starts
    with translated(display), open_binary() as raw:
        first = True
        while True:
            block = raw.read(_BLOCK)
            if not block:
                break
            if first and block.startswith(b"\xef\xbb\xbf"):
                block = block[3:]
            first = False
            if pending is not None:
                if not around[block[0]]:
                    _refuse_after(display, *pending)
                pending = None
            if b'"' not in block:
                # Most blocks of most files: bytes' own search and count.
                lines += block.count(bytes([newline]))
                prev = block[-1]
                continue
            a = np.frombuffer(block, dtype=np.uint8)
            q = np.flatnonzero(a == _QUOTE)
            if q.size:
                inside = (parity + np.arange(q.size)) % 2 == 1
                before = np.where(q > 0, a[np.maximum(q - 1, 0)], prev)
                opening = ~inside & ~around[before]
                has_next = q + 1 < a.size
                after = a[np.minimum(q + 1, a.size - 1)]
                closing = inside & has_next & ~around[after]
                bad = np.flatnonzero(opening | closing)
                if bad.size:
                    at = int(q[bad[0]])
                    line = lines + int(np.count_nonzero(a[:at] == newline)) + 1
                    text = _field(block, at, delim)
                    if opening[bad[0]]:
                        raise fail(
                            display,
                            f"line {line} has a '\"' inside a field that is not quoted "
                            f"({text}); quote the whole field and double the quotes in it "
                            f'("{text.replace(chr(34), chr(34) * 2)}"), as CSV (RFC 4180) '
                            "asks",
                        )
                    _refuse_after(display, line, text.encode())
                if inside[-1] and not has_next[-1]:
                    at = int(q[-1])
                    pending = (
                        lines + int(np.count_nonzero(a[:at] == newline)) + 1,
                        _field(block, at, delim).encode(),
                    )
                parity = (parity + int(q.size)) % 2
                if parity:
                    at = int(q[-1])
                    opened = (
                        lines + int(np.count_nonzero(a[:at] == newline)) + 1,
                        block[at : at + 40],
                    )
            lines += int(np.count_nonzero(a == newline))
            prev = int(a[-1])
    if parity:
        line, start = opened
        shown = start.replace(b"\r", b"\n").split(b"\n")[0].decode("utf-8", "replace")
        raise fail(
            display,
            f"line {line} opens a quoted field that is never closed ({shown}...); close "
            "the quote, or check that the file was not cut short",
        )
    return True


def _no_quote(open_binary: Callable[[], BinaryIO]) -> bool:
    """Whether a plain file holds no double quote, by one search of its mapped bytes.

    False (the blocks are read) for anything else: compressed or in memory,
    empty, or not mappable.
    """
    try:
        with open_binary() as raw:
            if not isinstance(raw, (io.BufferedReader, io.FileIO)):
                return False
            with mmap.mmap(raw.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                return mapped.find(b'"') < 0
    except (OSError, ValueError):
        return False


def _field(block: bytes, at: int, delim: bytes) -> str:
    """The field around byte ``at`` of ``block``, for a message (at most 40 characters)."""
    starts = [block.rfind(c, 0, at) for c in (delim, b"\n", b"\r")]
    ends = [e for e in (block.find(c, at + 1) for c in (delim, b"\n", b"\r")) if e >= 0]
    start = max(starts) + 1
    end = min(ends) if ends else len(block)
    text = block[start:end].decode("utf-8", "replace")
    return text if len(text) <= 40 else text[:37] + "..."


def _refuse_after(display: str, line: int, text: bytes) -> NbcliError:
    raise fail(
        display,
        f"line {line} has text after the closing '\"' of a quoted field "
        f"({text.decode('utf-8', 'replace')}); a quote inside a quoted field is doubled "
        '(""), as CSV (RFC 4180) asks',
    )
