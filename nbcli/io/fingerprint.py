"""Content fingerprints of a data set, to recognise a model's own training data.

A fingerprint is computed over the parsed values, not the file bytes, so the
same rows give the same value whether they come from CSV, gzip, Parquet or
NPZ. Two definitions exist:

``rowhash64-v1`` (:class:`RowHashFingerprint`, the current one)
    Each row gets a 64-bit hash: every feature value's IEEE-754 bits are
    multiplied by an odd key of the feature's position (a bijection modulo
    2**64), the label's UTF-8 text (its ``str`` form, so ``1`` and ``"1"``
    are one label) is hashed with BLAKE2b, and the terms are summed and
    mixed with the finaliser of MurmurHash3 (``fmix64``; Appleby 2011). Rows are combined in order as
    a polynomial in an odd constant modulo 2**64,
    ``H = sum_i r_i * P**(n - 1 - i)``, so a block of rows has a state
    ``(H, n)`` and two consecutive blocks combine as
    ``(H_a * P**n_b + H_b, n_a + n_b)``: the value does not depend on how
    the rows are cut into chunks or partitions, and each partition can be
    hashed on its own and combined afterwards (:meth:`RowHashFingerprint.combine`).
    Changing a value in its last bit, a label, or the order of rows changes
    it. It is a non-cryptographic checksum (64 bits), meant to tell a
    model's training data from other data, not to resist deliberate
    collisions.

``sha256-columns-v1`` (:class:`DataFingerprint`, the definition of model files
written before format version 2, stored as ``training.data_sha256``)
    SHA-256 of each feature column's float64 bytes in row order, of the
    labels' text one per line, and of those digests joined.

:func:`fingerprint_matches` recognises either, as stored in a model file.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from nbcli.distinct import unique_inverse

__all__ = [
    "ROWHASH_ALGORITHM",
    "SHA256_ALGORITHM",
    "RowHashFingerprint",
    "DataFingerprint",
    "TrainingFingerprint",
    "fingerprint",
    "row_fingerprint",
    "fingerprint_matches",
]

ROWHASH_ALGORITHM = "rowhash64-v1"
SHA256_ALGORITHM = "sha256-columns-v1"

_U64 = np.uint64
# MurmurHash3's fmix64 constants and the golden-ratio increment of SplitMix64.
_M1 = _U64(0xFF51AFD7ED558CCD)
_M2 = _U64(0xC4CEB9FE1A85EC53)
_GOLDEN = _U64(0x9E3779B97F4A7C15)
# The odd multiplier of the row polynomial (a 64-bit prime).
_P = 0xFFFFFFFFFFFFFFC5
_MASK = (1 << 64) - 1
_S33 = _U64(33)


def _fmix(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser, in place on a uint64 array."""
    h ^= h >> _S33
    h *= _M1
    h ^= h >> _S33
    h *= _M2
    h ^= h >> _S33
    return h


def _fmix_int(h: int) -> int:
    return int(_fmix(np.array([h & _MASK], dtype=_U64))[0])


def _column_keys(n: int) -> np.ndarray:
    """One key per feature position (SplitMix64's sequence), so that swapping
    two columns changes the row hash."""
    keys = np.arange(1, n + 1, dtype=_U64) * _GOLDEN
    # Odd keys multiply bijectively modulo 2**64.
    return _fmix(keys) | _U64(1)


_LABEL_KEY = _U64(0x6C6162656C730000)  # "labels"


class RowHashFingerprint:
    """Accumulate ``(X, y)`` blocks in row order; :attr:`value` is the hex fingerprint.

    The state of a block is ``(H, n)`` (see the module docstring), so blocks
    computed apart (chunks of a file, partitions of a data frame) combine
    with :meth:`combine` into the value of all their rows in order.

    Attributes
    ----------
    algorithm : str
        ``"rowhash64-v1"``.
    n_samples : int
        Rows added so far.
    """

    algorithm = ROWHASH_ALGORITHM

    def __init__(self) -> None:
        self._h = 0
        self.n_samples = 0
        self.n_features: int | None = None
        self._keys: np.ndarray | None = None

    def row_hashes(self, X, y, coding=None) -> np.ndarray:
        """The 64-bit hash of every row of one block.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Feature values, read as float64 (any memory order).
        y : array-like of shape (n_samples,) or None
            Labels, taken by their ``str`` form; None for no labels.
        coding : LabelCoding, optional
            ``y`` already coded (:class:`~nbcli.distinct.LabelCoding`), used
            when it describes ``y``: the labels are not coded again.

        Returns
        -------
        ndarray of shape (n_samples,), uint64
        """
        X = np.asarray(X, dtype=np.float64)
        n, d = X.shape
        if self._keys is None or len(self._keys) != d:
            self._keys = _column_keys(d)
        h = np.zeros(n, dtype=_U64)
        # Each value's bits times an odd per-column key (a bijection of the
        # 64-bit words, so any change of one value changes the sum), summed
        # across the row; column by column for column-major blocks (what the
        # readers hand out), row blocks otherwise, so temporaries stay small.
        if X.flags.f_contiguous and not X.flags.c_contiguous:
            bits = X.view(_U64)
            term = np.empty(n, dtype=_U64)
            for j in range(d):
                np.multiply(bits[:, j], self._keys[j], out=term)
                h += term
        else:
            bits = np.ascontiguousarray(X).view(_U64)
            step = max(1, (1 << 16) // max(d, 1))
            for start in range(0, n, step):
                block = bits[start : start + step] * self._keys[None, :]
                h[start : start + step] = block.sum(axis=1, dtype=_U64)
        if y is not None:
            h += _label_hashes(np.asarray(y), coding)
        h ^= _U64(d)
        return _fmix(h)

    def update(self, X, y, coding=None) -> None:
        """Add the next block of rows (see :meth:`row_hashes` for the arguments)."""
        X = np.asarray(X, dtype=np.float64)
        if self.n_features is None:
            self.n_features = int(X.shape[1])
        r = self.row_hashes(X, y, coding)
        self._absorb(_poly(r), len(r))

    def _absorb(self, h: int, n: int) -> None:
        self._h = (self._h * pow(_P, n, 1 << 64) + h) & _MASK
        self.n_samples += n

    def combine(self, other: RowHashFingerprint) -> RowHashFingerprint:
        """This block followed by ``other``: a new accumulator of all their rows."""
        out = RowHashFingerprint()
        out._h, out.n_samples, out.n_features = self._h, self.n_samples, self.n_features
        out._absorb(other._h, other.n_samples)
        return out

    @property
    def value(self) -> str:
        """The fingerprint: 16 hex digits (64 bits)."""
        return f"{_fmix_int(self._h ^ _fmix_int(self.n_samples)):016x}"

    def hexdigest(self) -> str:
        return self.value

    def as_dict(self) -> dict[str, str]:
        """``{"algorithm", "value"}``, as stored in a model file's ``training.fingerprint``."""
        return {"algorithm": self.algorithm, "value": self.value}


_POWERS: dict[int, np.ndarray] = {}


def _powers(n: int) -> np.ndarray:
    """``P**(n-1-i)`` modulo 2**64 for ``i < n``; kept for the last few lengths
    (the chunks of a file are mostly of one)."""
    powers = _POWERS.get(n)
    if powers is None:
        powers = np.full(n, _P, dtype=_U64)
        powers[-1] = 1
        # Cumulative products from the end give P**(n-1-i); uint64 wraps modulo 2**64.
        powers = np.cumprod(powers[::-1], dtype=_U64)[::-1]
        if len(_POWERS) >= 4:
            _POWERS.pop(next(iter(_POWERS)))
        _POWERS[n] = powers
    return powers


def _poly(r: np.ndarray) -> int:
    """``sum_i r_i * P**(n-1-i)`` modulo 2**64, vectorised."""
    n = len(r)
    if n == 0:
        return 0
    with np.errstate(over="ignore"):
        return int(np.dot(r, _powers(n)))


def _distinct(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct labels and the code of each row; text by hashing (pandas), not sorting."""
    if y.dtype == object:
        from nbcli.io.cells import label_codes

        try:
            return label_codes(y)
        except TypeError:  # labels of several types, which no order sorts
            pass
    return unique_inverse(y)


def _label_hashes(y: np.ndarray, coding=None) -> np.ndarray:
    """A 64-bit hash of each label's text; the distinct labels are hashed once
    (``coding``: their :class:`~nbcli.distinct.LabelCoding`, when known)."""
    if coding is not None and coding.describes(y):
        uniques, codes = coding.uniques, coding.codes
    else:
        if y.ndim != 1:
            y = y.reshape(-1)
        uniques, codes = _distinct(y)
    table = np.array(
        [
            int.from_bytes(hashlib.blake2b(str(u).encode(), digest_size=8).digest(), "little")
            for u in uniques.tolist()
        ],
        dtype=_U64,
    )
    # The hash of a row's label is a function of its distinct label alone:
    # mixed once per distinct label, then looked up.
    return _fmix(table ^ _LABEL_KEY)[codes.reshape(-1)]


class DataFingerprint:
    """The definition of model files before format version 2 (``sha256-columns-v1``).

    Accumulate ``(X, y)`` chunks in row order; ``hexdigest()`` gives the SHA-256.
    """

    algorithm = SHA256_ALGORITHM

    def __init__(self) -> None:
        self._columns: list[Any] = []
        self._y = hashlib.sha256()
        self.n_samples = 0

    def update(self, X: np.ndarray, y) -> None:
        """Add rows: ``X`` of shape (n_samples, n_features), ``y`` of shape (n_samples,) or None."""
        X = np.asarray(X, dtype=np.float64)
        if not self._columns:
            self._columns = [hashlib.sha256() for _ in range(X.shape[1])]
        for hasher, column in zip(self._columns, X.T):
            hasher.update(np.ascontiguousarray(column).data)
        if y is not None:
            self._y.update(("\n".join(map(str, np.asarray(y).tolist())) + "\n").encode())
        self.n_samples += X.shape[0]

    def hexdigest(self) -> str:
        joined = b"".join(h.digest() for h in self._columns) + self._y.digest()
        return hashlib.sha256(joined).hexdigest()

    @property
    def value(self) -> str:
        return self.hexdigest()


class TrainingFingerprint:
    """The fingerprints a model file records of its training data.

    Computes :class:`RowHashFingerprint` and, while model files still carry
    ``data_sha256`` (format version 1), :class:`DataFingerprint` beside it
    (``legacy=False`` skips it). :meth:`metadata` gives the entries for the
    ``training`` metadata; :meth:`matches` recognises stored ones.
    """

    def __init__(self, legacy: bool = True) -> None:
        self.rowhash = RowHashFingerprint()
        self.legacy = DataFingerprint() if legacy else None

    @property
    def n_samples(self) -> int:
        return self.rowhash.n_samples

    def update(self, X, y, coding=None) -> None:
        """Add the next block of rows (``coding``: see :meth:`RowHashFingerprint.row_hashes`)."""
        self.rowhash.update(X, y, coding)
        if self.legacy is not None:
            self.legacy.update(X, y)

    def hexdigest(self) -> str:
        """The legacy SHA-256 when computed, else the row hash."""
        return self.legacy.hexdigest() if self.legacy is not None else self.rowhash.value

    def metadata(self) -> dict[str, Any]:
        """``{"fingerprint": {"algorithm", "value"}}`` and, with ``legacy``, ``data_sha256``."""
        out: dict[str, Any] = {"fingerprint": self.rowhash.as_dict()}
        if self.legacy is not None:
            out["data_sha256"] = self.legacy.hexdigest()
        return out

    def matches(self, training: dict) -> bool:
        """Whether a model file's ``training`` metadata names these rows."""
        return fingerprint_matches(training, self)


def rowhash_matches(training: dict, fp: RowHashFingerprint) -> bool:
    """Whether ``training`` (a model file's metadata) stores the row-hash
    fingerprint ``fp`` has (a data set read in parts has no other)."""
    stored = training.get("fingerprint")
    return (
        isinstance(stored, dict)
        and stored.get("algorithm") == ROWHASH_ALGORITHM
        and stored.get("value") == fp.value
    )


def fingerprint_matches(training: dict, fp: TrainingFingerprint) -> bool:
    """Whether the fingerprint stored in ``training`` (a model file's metadata)
    is the one of the rows ``fp`` has seen: ``training["fingerprint"]``
    (``{"algorithm", "value"}``) when present, else the old ``data_sha256``.
    An algorithm this version does not know never matches."""
    stored = training.get("fingerprint")
    if isinstance(stored, dict):
        if stored.get("algorithm") == ROWHASH_ALGORITHM:
            return stored.get("value") == fp.rowhash.value
        if stored.get("algorithm") == SHA256_ALGORITHM and fp.legacy is not None:
            return stored.get("value") == fp.legacy.hexdigest()
        return False
    sha = training.get("data_sha256")
    return fp.legacy is not None and sha is not None and sha == fp.legacy.hexdigest()


def fingerprint(X, y) -> str:
    """SHA-256 fingerprint (``sha256-columns-v1``) of one in-memory data set."""
    fp = DataFingerprint()
    fp.update(X, y)
    return fp.hexdigest()


def row_fingerprint(X, y) -> str:
    """Row-hash fingerprint (``rowhash64-v1``) of one in-memory data set."""
    fp = RowHashFingerprint()
    fp.update(X, y)
    return fp.value
