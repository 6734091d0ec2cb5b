"""Summaries of attention weights that tell how a head behaves."""

from __future__ import annotations

import numpy as np


def row_entropy(weights: np.ndarray) -> np.ndarray:
    """Entropy in bits of each weight row (last axis): 0 = all on one key, log2(m) = spread evenly.

    A fully blocked (all-zero) row has entropy 0.
    """
    if np.ndim(weights) > 2:  # one matrix at a time: float64 temporaries of one (n, m), not of all heads at once
        return np.stack([row_entropy(matrix) for matrix in weights])
    w = np.asarray(weights, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(w > 0, w * np.log2(w), 0.0)
    return -terms.sum(axis=-1) + 0.0  # + 0.0 turns -0.0 into 0.0
