"""A tiny example small enough to check on paper: 3 tokens, d_model = 4, h = 2, integer weights, no bias."""

from __future__ import annotations

import numpy as np

from ..attention.config import MHAConfig
from ..attention.weights import MHAWeights

TINY_TOKENS = ["I", "like", "tea"]
TINY_CONFIG = MHAConfig(d_model=4, n_heads=2, bias=False)


def tiny_example(dtype=np.float64) -> tuple[np.ndarray, MHAWeights]:
    """X (3, 4) and weights whose products are small integers, so every score can be worked out by hand.

    Head 1 reads dimensions 1-2 and head 2 dimensions 3-4; W_K swaps head 2's two key dimensions, so
    head 2 matches a query's 3rd dimension against the keys' 4th.
    """
    x = np.array([[1, 0, 1, 0],
                  [0, 1, 0, 1],
                  [1, 1, 0, 1]], dtype=dtype)
    identity = np.eye(4, dtype=dtype)
    W_K = identity[[0, 1, 3, 2]]                  # head 2's keys: dimensions 3 and 4 swapped
    W_V = np.diag([1, 2, 1, -1]).astype(dtype)
    W_O = np.array([[1, 0, 1, 0],
                    [0, 1, 0, 1],
                    [1, 0, 0, 0],
                    [0, 0, 0, 1]], dtype=dtype)   # output dim 1 adds head 1's and head 2's first values
    return x, MHAWeights(W_Q=identity.copy(), W_K=W_K, W_V=W_V, W_O=W_O)
