"""An independent check of a trace: the same weights and input through torch.nn.MultiheadAttention."""

from __future__ import annotations

import numpy as np

from .config import MHAConfig
from .trace import Trace
from .weights import MHAWeights, weights_to_torch


def torch_difference(trace: Trace, weights: MHAWeights, cfg: MHAConfig) -> float:
    """Largest |difference| between the trace's output and weights and torch.nn.MultiheadAttention's, same input.

    Rows that are fully blocked are left out: PyTorch returns NaN there, this package returns zeros on purpose.
    """
    import torch

    module = weights_to_torch(weights, cfg)
    x = torch.tensor(trace.x)[None]
    attn_mask = None if trace.mask is None else torch.tensor(trace.mask[0])
    with torch.inference_mode():
        out, attn = module(x, x, x, attn_mask=attn_mask, need_weights=True, average_attn_weights=False)
    keep = ~trace.blocked_rows[0]
    d_out = np.abs(out[0].numpy()[keep] - trace.output[keep]).max(initial=0.0)
    d_w = np.abs(attn[0].numpy()[:, keep] - trace.weights[:, keep]).max(initial=0.0)
    return float(max(d_out, d_w))
