"""W_O read head by head: the output is the sum of one contribution per head (plus the bias)."""

from __future__ import annotations

import numpy as np

from .trace import Trace
from .weights import MHAWeights


def head_contributions(trace: Trace, w: MHAWeights) -> np.ndarray:
    """(h, n, d_model): head_i @ W_O[:, block i].T, where block i is head i's d_k columns of W_O.

    Summed over heads and plus b_O, this is exactly trace.output: concat @ W_O.T splits into these blocks.
    """
    h, n, d_k = trace.heads.shape
    W_O_blocks = w.W_O.reshape(w.W_O.shape[0], h, d_k).transpose(1, 2, 0)  # (h, d_k, d_model)
    return trace.heads @ W_O_blocks                                       # (h, n, d_model)
