"""Why Q K^T is scaled by 1/sqrt(d_k) (Vaswani et al. 2017): the same scores, softmaxed with and without it.

A dot product of two d_k-dimensional vectors with unit-variance entries has variance d_k, so raw scores grow with
d_k; softmax of large scores puts nearly all the weight on one key and its gradients vanish. Dividing by sqrt(d_k)
brings the scores back to unit variance whatever d_k is.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..analysis.stats import row_entropy
from ..attention.config import MHAConfig
from ..attention.engine import softmax_rows
from ..attention.trace import Trace

SCALES = ("sqrt_dk", "none")  # the factor on Q K^T: 1/sqrt(d_k), Vaswani et al.'s, or none (1)


@dataclass(frozen=True)
class ScaleComparison:
    """One trace's attention under the two scales, 1/sqrt(d_k) and none (1): one head's weights, every head's means."""

    d_k: int
    head: int              # the head whose weights are kept (0-based)
    raw_std: float         # spread (standard deviation) of the raw scores Q_i K_i^T over every head's open cells
    q_rms: float           # typical size (root mean square) of the query numbers that meet an open key
    k_rms: float           # the same for the key numbers that some query may see
    scaled: np.ndarray     # (n, m) that head's weights with 1/sqrt(d_k)
    unscaled: np.ndarray   # (n, m) that head's weights with no scaling
    entropy: dict          # each of SCALES -> (h,) mean row entropy in bits
    peak: dict             # each of SCALES -> (h,) mean of each row's largest weight


def _row_mean(values: np.ndarray, blocked_rows: np.ndarray) -> float:
    """The mean over the rows (queries) that attend at all."""
    keep = ~blocked_rows
    return float(values[keep].mean()) if keep.any() else 0.0


def with_head(comparison: ScaleComparison, trace: Trace, cfg: MHAConfig, head: int) -> ScaleComparison:
    """The same comparison keeping another head's weights (the per-head means do not depend on the head kept)."""
    if head == comparison.head:
        return comparison
    kept = head_weights(trace, cfg, head)
    return replace(comparison, head=head, scaled=kept[SCALES[0]], unscaled=kept[SCALES[1]])


def head_weights(trace: Trace, cfg: MHAConfig, head: int) -> dict:
    """One head's weights under each of SCALES: its raw scores times the scale, masked, softmaxed."""
    return _softmaxed(trace.raw_scores(head).astype(np.float64), None if trace.mask is None else trace.mask[head], cfg)


def _softmaxed(raw: np.ndarray, blocked: np.ndarray | None, cfg: MHAConfig) -> dict:
    return {name: softmax_rows(raw * scale if blocked is None else np.where(blocked, -np.inf, raw * scale))
            for name, scale in zip(SCALES, (cfg.d_k**-0.5, 1.0), strict=True)}


def compare_scaling(trace: Trace, cfg: MHAConfig, head: int = 0) -> ScaleComparison:
    """The trace's raw scores (Q_i K_i^T, Trace.raw_scores) softmaxed with 1/sqrt(d_k) and with 1.

    One head at a time, so that memory stays at a few n x m matrices however many heads there are.
    """
    h = trace.scores.shape[0]
    entropy = {name: np.zeros(h) for name in SCALES}
    peak = {name: np.zeros(h) for name in SCALES}
    kept, total, squares, count = {}, 0.0, 0.0, 0
    for i in range(h):
        raw = trace.raw_scores(i).astype(np.float64)                          # (n, m)
        blocked = None if trace.mask is None else trace.mask[i]
        open_cells = raw if blocked is None else raw[~blocked]
        total, squares, count = total + open_cells.sum(), squares + np.square(open_cells).sum(), count + open_cells.size
        for name, weights in _softmaxed(raw, blocked, cfg).items():
            entropy[name][i] = _row_mean(row_entropy(weights), trace.blocked_rows[i])
            peak[name][i] = _row_mean(weights.max(axis=-1), trace.blocked_rows[i])
            if i == head:
                kept[name] = weights
    mean = total / max(count, 1)
    q_rms, k_rms = _sizes(trace)
    return ScaleComparison(d_k=cfg.d_k, head=head, raw_std=float(np.sqrt(max(squares / max(count, 1) - mean**2, 0.0))),
                           q_rms=q_rms, k_rms=k_rms, scaled=kept[SCALES[0]], unscaled=kept[SCALES[1]],
                           entropy=entropy, peak=peak)


def _sizes(trace: Trace) -> tuple[float, float]:
    """Root mean square of the query numbers and of the key numbers that take part in an open score.

    The footnote's argument with variance s_q^2 and s_k^2 in place of 1 gives scores Q_i K_i^T / sqrt(d_k) of spread
    s_q * s_k: the prediction the page sets beside the measured spread.
    """
    h, n, m = trace.scores.shape
    group = h // trace.k.shape[0]
    open_cells = np.ones((h, n, m), bool) if trace.mask is None else ~trace.mask        # (h, n, m)
    queries = open_cells.any(axis=2)                                                       # (h, n) rows that attend
    keys = open_cells.any(axis=1).reshape(-1, group, m).any(axis=1)                        # (h_kv, m) keys seen
    q, k = trace.q.astype(np.float64), trace.k.astype(np.float64)
    return (float(np.sqrt(np.square(q[queries]).mean())) if queries.any() else 0.0,
            float(np.sqrt(np.square(k[keys]).mean())) if keys.any() else 0.0)
