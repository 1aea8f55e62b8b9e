"""Per-part evaluation sums and the Poisson bootstrap, for evaluation over parts.

Every point figure of an evaluation is a function of a few sums over rows:
the confusion counts, the summed log-loss and Brier score, and per
calibration bin the count, summed confidence and summed hits. Those add
across parts, so each part computes them on its worker and only the sums
travel.

Intervals come from a Poisson bootstrap (Hanley and MacGibbon, "Creating
non-parametric bootstrap samples using Poisson frequencies", Computer Methods
and Programs in Biomedicine 83(1), 2006; Chamandy et al., "Estimating
uncertainty for massive data streams", Google, 2012): in replicate ``b`` row
``i`` counts ``W[i, b] ~ Poisson(1)`` times instead of a multinomial count,
so replicates need no pass over all rows at once and the per-replicate
weighted sums add across parts like the point sums. The weights are a fixed
function of ``(seed, part index, row index in the part)``: rows are taken in
blocks of :data:`WEIGHT_BLOCK` rows and block ``j`` of part ``p`` draws from
``numpy.random.default_rng([seed, p, j])``, so the same seed and parts give
the same intervals however a part is read in chunks and wherever it runs.
The method is named ``poisson-bootstrap`` in reports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from nbcli.reports.bootstrap import Interval, percentile_interval
from nbcli.reports.metrics import brier_per_row, confusion_matrix, log_loss_per_row
from nbcli.reports.reliability import assign_bins, bin_sums

POISSON_BOOTSTRAP = "poisson-bootstrap"

# Rows per block of Poisson weights: the unit the seed is spread over, and a
# bound on the temporary (WEIGHT_BLOCK x n_replicates) array of weights.
WEIGHT_BLOCK = 512

# Poisson(1) by inversion: weight = number of these CDF values that a uniform
# draw reaches, P(W <= j) for j = 0..11. Float32 uniforms and the cut at 12
# (P(W >= 13) = 6e-11) put the weights within 1e-6 of Poisson(1) in total
# variation, at a fifth of the cost of numpy's Poisson sampler.
_POISSON_CDF = np.cumsum([math.exp(-1.0) / math.factorial(j) for j in range(12)]).astype(np.float32)


def _weight_block(seed: int, part_index: int, block: int, n_replicates: int) -> np.ndarray:
    u = np.random.default_rng([seed, part_index, block]).random(
        (WEIGHT_BLOCK, n_replicates), dtype=np.float32
    )
    w = np.zeros(u.shape, dtype=np.uint8)
    for c in _POISSON_CDF:
        w += u >= c
    return w


def poisson_weights(
    seed: int, part_index: int, start: int, stop: int, n_replicates: int
) -> np.ndarray:
    """Bootstrap weights of rows ``start`` to ``stop - 1`` of a part, shape (stop - start, B).

    Each weight is a Poisson(1) draw (0 to 12, uint8) fixed by
    ``(seed, part_index, row)``; see the module notes.
    """
    if stop <= start or n_replicates == 0:
        return np.zeros((max(stop - start, 0), n_replicates), dtype=np.uint8)
    first, last = start // WEIGHT_BLOCK, (stop - 1) // WEIGHT_BLOCK
    blocks = [_weight_block(seed, part_index, j, n_replicates) for j in range(first, last + 1)]
    lo = start - first * WEIGHT_BLOCK
    return np.concatenate(blocks)[lo : lo + stop - start]


def _replicate_sums(rows, seed: int, part_index: int, row_offset: int, n_replicates: int):
    """``rows.T @ W`` over the chunk, block by block: shape (n_sums, B).

    ``rows`` is a sparse (n_rows, n_sums) matrix of what each row adds to
    each sum; the weights ``W`` (n_rows, B) are made one block at a time, so
    memory stays at a block of weights whatever the chunk's length.
    """
    n = rows.shape[0]
    out = np.zeros((rows.shape[1], n_replicates))
    rows = rows.tocsr()  # row slices of CSR cost only their own entries
    start = row_offset
    while start < row_offset + n:
        stop = min((start // WEIGHT_BLOCK + 1) * WEIGHT_BLOCK, row_offset + n)
        W = poisson_weights(seed, part_index, start, stop, n_replicates).astype(np.float64)
        out += rows[start - row_offset : stop - row_offset].T @ W
        start = stop
    return out


@dataclass
class EvaluationSums:
    """Sums over rows that evaluation figures and their intervals are made of.

    Attributes
    ----------
    n_rows : int
        Rows, all counted in the confusion matrix.
    n_scored : int
        Rows whose true label is one of the model's classes: the rows that
        losses and calibration are taken over (as in a local evaluation).
    confusion : ndarray of shape (L, L)
        Counts, rows true labels and columns predicted labels.
    log_loss_sum, brier_sum : float
        Summed per-row log-loss (nats) and multiclass Brier score.
    bin_count, bin_confidence, bin_hits : ndarray of shape (n_bins,)
        Per reliability bin of the top-class confidence: rows, summed
        confidence, rows whose prediction was right.
    replicate_weight, replicate_scored_weight : ndarray of shape (B,)
        Per Poisson-bootstrap replicate: summed weights of all rows and of
        the scored rows.
    replicate_log_loss, replicate_brier : ndarray of shape (B,)
        Per replicate: weighted sums over the scored rows.
    replicate_confusion : ndarray of shape (B, L, L)
        Weighted confusion counts per replicate.
    replicate_bin_count, replicate_bin_confidence, replicate_bin_hits : ndarray (B, n_bins)
    """

    n_rows: int
    n_scored: int
    confusion: np.ndarray
    log_loss_sum: float
    brier_sum: float
    bin_count: np.ndarray
    bin_confidence: np.ndarray
    bin_hits: np.ndarray
    replicate_weight: np.ndarray
    replicate_scored_weight: np.ndarray
    replicate_log_loss: np.ndarray
    replicate_brier: np.ndarray
    replicate_confusion: np.ndarray
    replicate_bin_count: np.ndarray
    replicate_bin_confidence: np.ndarray
    replicate_bin_hits: np.ndarray

    def merge(self, other: EvaluationSums) -> EvaluationSums:
        """Sums of the rows of both (field by field)."""
        return EvaluationSums(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    __add__ = merge

    # -- point figures ---------------------------------------------------------
    @property
    def log_loss(self) -> float:
        """Mean log-loss in nats; NaN for no rows."""
        return self.log_loss_sum / self.n_scored if self.n_scored else math.nan

    @property
    def brier_score(self) -> float:
        """Mean multiclass Brier score; NaN for no rows."""
        return self.brier_sum / self.n_scored if self.n_scored else math.nan

    @property
    def accuracy(self) -> float:
        return float(np.trace(self.confusion)) / self.n_rows if self.n_rows else math.nan

    def ece(self) -> float:
        """Expected calibration error of the top-class confidence over the bins."""
        return float(_ece(self.bin_count, self.bin_confidence, self.bin_hits))

    # -- replicates ------------------------------------------------------------
    def replicate_means(self, which: str) -> np.ndarray:
        """Per-replicate weighted mean of ``"log_loss"`` or ``"brier"``, shape (B,)."""
        total = getattr(self, f"replicate_{which}")
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(
                self.replicate_scored_weight > 0, total / self.replicate_scored_weight, np.nan
            )

    def replicate_ece(self) -> np.ndarray:
        """Per-replicate ECE, shape (B,)."""
        return _ece(
            self.replicate_bin_count, self.replicate_bin_confidence, self.replicate_bin_hits
        )


def _ece(count, conf, hits):
    """ECE = sum_b (n_b / n) |hits_b / n_b - conf_b / n_b| over the last axis."""
    n = count.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.abs(hits - conf).sum(axis=-1) / n


def evaluation_sums(
    proba: np.ndarray,
    true_codes: np.ndarray,
    n_labels: int,
    *,
    edges: np.ndarray,
    n_replicates: int = 0,
    seed: int = 0,
    part_index: int = 0,
    row_offset: int = 0,
) -> EvaluationSums:
    """Evaluation sums of one chunk of scored rows.

    Parameters
    ----------
    proba : ndarray of shape (n_rows, n_classes)
        Posterior probabilities, classes in model order.
    true_codes : ndarray of int, shape (n_rows,)
        Index of each row's true label among ``n_labels`` labels (the model's
        classes first, then labels it never saw).
    n_labels : int
    edges : ndarray of shape (n_bins + 1,)
        Reliability bin edges, fixed before any part is read (e.g. uniform).
    n_replicates : int
        Poisson-bootstrap replicates B (0: none).
    seed, part_index, row_offset : int
        The weights of row ``r`` of this chunk are those of row
        ``row_offset + r`` of part ``part_index`` under ``seed``.

    Raises
    ------
    ValueError
        For probabilities outside the bin edges.
    """
    proba = np.asarray(proba, dtype=float)
    t = np.asarray(true_codes, dtype=np.intp)
    n = len(t)
    n_bins = len(edges) - 1
    pred = np.argmax(proba, axis=1) if n else np.zeros(0, np.intp)
    # Losses and calibration leave out rows of labels the model never saw,
    # as a local evaluation does; those rows count in the confusion matrix.
    known = t < proba.shape[1]
    pk, tk = proba[known], t[known]
    m = len(tk)
    ll = log_loss_per_row(pk, tk) if m else np.zeros(0)
    br = brier_per_row(pk, tk) if m else np.zeros(0)
    confidence = pk[np.arange(m), pred[known]] if m else np.zeros(0)
    hit = (pred[known] == tk).astype(float)
    bins = assign_bins(confidence, edges)
    count, conf, hits = bin_sums(bins, confidence, hit, n_bins)
    B = int(n_replicates)
    L2 = n_labels * n_labels
    if B:
        # What each row adds to each replicate sum, one sparse row per data
        # row: [weight, scored weight, log-loss, Brier, confusion cell,
        # bin count, bin confidence, bin hits].
        from scipy.sparse import coo_matrix

        cols_all = [np.zeros(n, np.intp), t * n_labels + pred + 4]
        vals_all = [np.ones(n), np.ones(n)]
        base = 4 + L2
        cols_known = [np.full(m, c) for c in (1, 2, 3)] + [
            base + bins,
            base + n_bins + bins,
            base + 2 * n_bins + bins,
        ]
        vals_known = [np.ones(m), ll, br, np.ones(m), confidence, hit]
        idx = np.flatnonzero(known)
        rows = coo_matrix(
            (
                np.concatenate(vals_all + vals_known),
                (
                    np.concatenate([np.arange(n)] * 2 + [idx] * 6),
                    np.concatenate(cols_all + cols_known),
                ),
            ),
            shape=(n, base + 3 * n_bins),
        )
        R = _replicate_sums(rows, seed, part_index, row_offset, B)
    else:
        R = np.zeros((4 + L2 + 3 * n_bins, 0))
    base = 4 + L2
    return EvaluationSums(
        n_rows=n,
        n_scored=m,
        confusion=confusion_matrix(t, pred, n_labels),
        log_loss_sum=float(ll.sum()),
        brier_sum=float(br.sum()),
        bin_count=count.astype(np.int64),
        bin_confidence=conf,
        bin_hits=hits,
        replicate_weight=R[0],
        replicate_scored_weight=R[1],
        replicate_log_loss=R[2],
        replicate_brier=R[3],
        replicate_confusion=R[4:base].T.reshape(B, n_labels, n_labels),
        replicate_bin_count=R[base : base + n_bins].T,
        replicate_bin_confidence=R[base + n_bins : base + 2 * n_bins].T,
        replicate_bin_hits=R[base + 2 * n_bins :].T,
    )


def poisson_interval(estimate: float, replicates, *, confidence: float = 0.95) -> Interval:
    """Percentile interval of Poisson-bootstrap replicates, method ``poisson-bootstrap``.

    ``replicates`` has shape (B,); non-finite values (a replicate with no
    rows) are ignored. Quantiles interpolate linearly.
    """
    return percentile_interval(
        estimate, replicates, confidence=confidence, method=POISSON_BOOTSTRAP
    )
