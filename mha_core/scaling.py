"""Why Q K^T is scaled by 1/sqrt(d_k) (Vaswani et al. 2017): the same scores, softmaxed with and without it.

A dot product of two d_k-dimensional vectors with unit-variance entries has variance d_k, so raw scores grow with
d_k; softmax of large scores puts nearly all the weight on one key and its gradients vanish. Dividing by sqrt(d_k)
brings the scores back to unit variance whatever d_k is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import MHAConfig
from .engine import softmax_rows
from .stats import row_entropy
from .trace import Trace

SCALES = ("1/√d_k", "none")  # the factor on Q K^T: Vaswani et al.'s, or none (1)


@dataclass(frozen=True)
class ScaleComparison:
    """One trace's attention under the two scales: 1/sqrt(d_k) and none (1)."""

    d_k: int
    raw_std: float         # spread (standard deviation) of the raw scores Q_i K_i^T over unblocked cells
    scaled: np.ndarray     # (h, n, m) weights with 1/sqrt(d_k)
    unscaled: np.ndarray   # (h, n, m) weights with no scaling
    entropy: dict          # each of SCALES -> (h,) mean row entropy in bits
    peak: dict             # each of SCALES -> (h,) mean of each row's largest weight


def _head_means(values: np.ndarray, blocked_rows: np.ndarray) -> np.ndarray:
    """(h,) mean over the rows (queries) that attend at all."""
    keep = ~blocked_rows
    return np.where(keep, values, 0.0).sum(axis=1) / np.maximum(keep.sum(axis=1), 1)


def compare_scaling(trace: Trace, cfg: MHAConfig) -> ScaleComparison:
    """The trace's raw scores (its scores divided by the scale it used) softmaxed with 1/sqrt(d_k) and with 1."""
    raw = trace.scores.astype(np.float64) / cfg.softmax_scale  # (h, n, m)
    blocked = trace.mask
    weights = {}
    for name, scale in zip(SCALES, (cfg.d_k**-0.5, 1.0), strict=True):
        scores = raw * scale
        weights[name] = softmax_rows(scores if blocked is None else np.where(blocked, -np.inf, scores))
    open_cells = raw if blocked is None else raw[~blocked]
    return ScaleComparison(
        d_k=cfg.d_k, raw_std=float(np.std(open_cells)), scaled=weights[SCALES[0]], unscaled=weights[SCALES[1]],
        entropy={name: _head_means(row_entropy(w), trace.blocked_rows) for name, w in weights.items()},
        peak={name: _head_means(w.max(axis=-1), trace.blocked_rows) for name, w in weights.items()},
    )
