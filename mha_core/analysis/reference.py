"""An independent check of a trace: the same weights and input through PyTorch's own attention.

torch.nn.MultiheadAttention when it can compute the same layer; it has no grouped-query heads, no head mask, no
rotary positions and no other scale than 1/sqrt(d_k), so then F.scaled_dot_product_attention on each head (with
enable_gqa=True for shared key/value heads), the head mask, and W_O. RoPE is written here with torch's complex
numbers (a pair of dimensions is one complex number, turned by multiplying it with exp(i·angle)), not with the
engine's apply_rope, so that the check does not share that code.
"""

from __future__ import annotations

import numpy as np

from ..attention.config import MHAConfig
from ..attention.trace import Trace
from ..attention.weights import MHAWeights, weights_to_torch

MODULE = "torch.nn.MultiheadAttention"
PER_HEAD = "F.scaled_dot_product_attention per head, then W_O"
ROTARY = "RoPE as complex rotations in torch, F.scaled_dot_product_attention per head, then W_O"
# How each check works, in words a student follows (the names above are for readers who know PyTorch).
HOW = {
    MODULE: "PyTorch's own multi-head attention layer, torch.nn.MultiheadAttention, loaded with the same weights, "
            "reads the same input.",
    PER_HEAD: "PyTorch's attention function, F.scaled_dot_product_attention, computes each head from the same "
              "queries, keys and values (this layer has something torch.nn.MultiheadAttention cannot do: shared "
              "K/V heads, a head switched off or another scale); then W_O is applied.",
    ROTARY: "PyTorch turns the queries and keys by their positions its own way: each pair of components is one "
            "complex number, multiplied by e^(i·angle). Then its attention function, F.scaled_dot_product_attention, "
            "computes each head, and W_O is applied. This app's own code is not used.",
}


def reference_name(trace: Trace, cfg: MHAConfig) -> str:
    """Which PyTorch computation torch_difference compares with."""
    if cfg.rope_theta is not None:
        return ROTARY
    plain = cfg.kv_heads == cfg.n_heads and cfg.scale is None and trace.head_mask is None
    return MODULE if plain else PER_HEAD


def agrees(difference: float, trace: Trace) -> bool:
    """Whether torch_difference is rounding only: at most 1e-5 (float32) or 1e-10 (float64) of the larger of 1 and
    the largest |output| (a trained model's late layers reach tens, where float32 keeps about 7 digits)."""
    tol = 1e-5 if trace.output.dtype.itemsize == 4 else 1e-10
    return difference <= tol * max(1.0, float(np.abs(trace.output).max()))


def torch_difference(trace: Trace, weights: MHAWeights, cfg: MHAConfig) -> float:
    """Largest |difference| between the trace's output and weights and PyTorch's, same input (see reference_name).

    Rows that are fully blocked are left out: PyTorch returns NaN there, this package returns zeros on purpose.
    """
    import torch

    x, x_kv = torch.tensor(trace.x)[None], torch.tensor(trace.x_kv)[None]  # (1, n, d_model), (1, m, d_model)
    blocked = None if trace.mask is None else torch.tensor(trace.mask)        # (h, n, m) True = blocked
    with torch.inference_mode():
        if reference_name(trace, cfg) == MODULE:
            module = weights_to_torch(weights, cfg)
            out, attn = module(x, x_kv, x_kv, attn_mask=None if blocked is None else blocked[0], need_weights=True,
                               average_attn_weights=False)
        else:
            out, attn = _per_head(x[0], x_kv[0], weights, cfg, blocked, trace.head_mask)
    keep = ~trace.blocked_rows[0]
    d_out = np.abs(out[0].numpy()[keep] - trace.output[keep]).max(initial=0.0)
    d_w = np.abs(attn[0].numpy()[:, keep] - trace.weights[:, keep]).max(initial=0.0)
    return float(max(d_out, d_w))


def _per_head(x, x_kv, weights: MHAWeights, cfg: MHAConfig, blocked, head_mask):
    """(output (1, n, d_model), weights (1, h, n, m)) by F.linear and F.scaled_dot_product_attention."""
    import torch
    import torch.nn.functional as F

    T = {name: torch.tensor(a) for name, a in weights.arrays().items()}
    h, d_k, g = cfg.n_heads, cfg.d_k, cfg.group_size
    q = F.linear(x, T["W_Q"], T.get("b_Q")).view(len(x), h, d_k).transpose(0, 1)                  # (h, n, d_k)
    k = F.linear(x_kv, T["W_K"], T.get("b_K")).view(len(x_kv), cfg.kv_heads, d_k).transpose(0, 1)  # (kv, m, d_k)
    v = F.linear(x_kv, T["W_V"], T.get("b_V")).view(len(x_kv), cfg.kv_heads, d_k).transpose(0, 1)
    if cfg.rope_theta is not None:
        q, k = _complex_rope(q, cfg.rope_theta), _complex_rope(k, cfg.rope_theta)
    keep = None if blocked is None else ~blocked                  # SDPA's boolean mask is True = may attend
    # enable_gqa: query head i reads key/value head i // g, as in the engine.
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, scale=cfg.softmax_scale,
                                           enable_gqa=g > 1)                                             # (h, n, d_k)
    k = k.repeat_interleave(g, dim=0)                                                               # (h, m, d_k)
    if head_mask is not None:
        heads = heads * torch.tensor(head_mask)[:, None, None]
    output = F.linear(heads.transpose(0, 1).reshape(len(x), h * d_k), T["W_O"], T.get("b_O"))       # (n, d_model)
    # SDPA does not return its weights: the same softmax, written out, for the weights' comparison.
    scores = (q @ k.transpose(1, 2)) * cfg.softmax_scale
    attn = torch.softmax(scores if keep is None else scores.masked_fill(~keep, float("-inf")), dim=-1)
    return output[None], attn[None]


def _complex_rope(t, theta: float):
    """t (heads, n, d_k) turned by position: dimensions a and a + d_k/2 form one complex number, multiplied by
    exp(i · p · theta^(-2a/d_k)) at position p (computed in float64, returned in t's dtype)."""
    import torch

    half = t.shape[-1] // 2
    angle = torch.outer(torch.arange(t.shape[1], dtype=torch.float64),
                        theta ** (-2.0 * torch.arange(half, dtype=torch.float64) / t.shape[-1]))  # (n, d_k/2)
    z = torch.complex(t[..., :half].double(), t[..., half:].double()) * torch.polar(torch.ones_like(angle), angle)
    return torch.cat([z.real, z.imag], dim=-1).to(t.dtype)
