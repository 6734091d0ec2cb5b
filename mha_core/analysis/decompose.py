"""W_O read head by head: the output is the sum of one contribution per head (plus the bias)."""

from __future__ import annotations

import numpy as np

from ..attention.trace import Trace
from ..attention.weights import MHAWeights


def block_outputs(heads: np.ndarray, W_O: np.ndarray) -> np.ndarray:
    """(h, n, d_model): heads[i] @ W_O[:, block i].T, where block i is head i's d_k columns of W_O."""
    h, n, d_k = heads.shape
    # A contiguous copy: on the transposed view, NumPy's float64 matmul leaves its BLAS path (many times slower).
    W_O_blocks = np.ascontiguousarray(W_O.reshape(W_O.shape[0], h, d_k).transpose(1, 2, 0))  # (h, d_k, d_model)
    return heads @ W_O_blocks                                         # (h, n, d_model)


def head_contributions(trace: Trace, w: MHAWeights) -> np.ndarray:
    """(h, n, d_model): what each head adds to the output, its block of the concatenation times its block of W_O.

    Summed over heads and plus b_O, this is exactly trace.output: concat @ W_O.T splits into these blocks. With a
    head mask, each block is the masked one W_O saw (a switched-off head adds zero).
    """
    h, n, d_k = trace.heads.shape
    seen = trace.concat.reshape(n, h, d_k).transpose(1, 0, 2)        # (h, n, d_k)
    return block_outputs(seen, w.W_O)
