"""Lists of strings as two plain arrays: UTF-8 bytes and offsets.

Model files hold no object arrays, so text (category values, vocabularies)
is stored as a uint8 array ``data`` with the UTF-8 bytes of every string
one after another, and an int64 array ``offsets`` of length ``n + 1``:
string ``i`` is ``data[offsets[i]:offsets[i + 1]]``. ``offsets[0]`` is 0
and ``offsets[-1]`` is ``len(data)``. This is Apache Arrow's layout for a
string column, so it is compact, needs no escaping, and is read without
trusting anything: :func:`decode_texts` checks the offsets (starting at
0, never decreasing, ending at the end of the data) and the UTF-8 before
any string is made.
"""

from __future__ import annotations

import numpy as np


def encode_texts(texts) -> tuple[np.ndarray, np.ndarray]:
    """``["a", "bé"]`` -> ``(data, offsets)``.

    Parameters
    ----------
    texts : iterable of str

    Returns
    -------
    data : ndarray of shape (n_bytes,), uint8
    offsets : ndarray of shape (n_texts + 1,), int64

    Raises
    ------
    TypeError
        For an item that is not a ``str``.
    """
    encoded = []
    for t in texts:
        if not isinstance(t, str):
            raise TypeError(f"text arrays hold strings, got {type(t).__name__}")
        encoded.append(t.encode("utf-8"))
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8).copy()
    return data, offsets


def decode_texts(data: np.ndarray, offsets: np.ndarray) -> list[str]:
    """The strings of ``(data, offsets)``, after checking both.

    Raises
    ------
    ValueError
        When ``data`` is not 1-D uint8, ``offsets`` not 1-D int64 with at
        least one entry, the offsets do not start at 0, decrease, or do not
        end at ``len(data)``, or a string is not valid UTF-8 (the message
        says which string).
    """
    if data.dtype != np.uint8 or data.ndim != 1:
        raise ValueError(f"text bytes must be a 1-D uint8 array, got {data.dtype} {data.shape}")
    if offsets.dtype != np.int64 or offsets.ndim != 1 or offsets.size < 1:
        raise ValueError(
            f"text offsets must be a non-empty 1-D int64 array, got {offsets.dtype} {offsets.shape}"
        )
    if offsets[0] != 0 or offsets[-1] != data.size:
        raise ValueError(
            f"text offsets must run from 0 to the {data.size} bytes, "
            f"got {int(offsets[0])} to {int(offsets[-1])}"
        )
    if offsets.size > 1 and np.any(np.diff(offsets) < 0):
        i = int(np.flatnonzero(np.diff(offsets) < 0)[0])
        raise ValueError(f"text offsets decrease at string {i}")
    raw = data.tobytes()
    out = []
    for i in range(offsets.size - 1):
        try:
            out.append(raw[offsets[i] : offsets[i + 1]].decode("utf-8"))
        except UnicodeDecodeError:
            raise ValueError(f"text {i} is not valid UTF-8") from None
    return out
