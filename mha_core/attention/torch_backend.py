"""The same four steps in PyTorch, on a CPU or GPU; imported only when the torch backend is chosen.

Helper names, step comments and the mask convention (True = blocked, fully blocked rows get zero weights) are those
of engine.py, so the two files differ only in the array library. `run` moves the arrays to the device and back.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from .config import ConfigError, MHAConfig
from .weights import MHAWeights


def resolve_device(device: str = "auto") -> torch.device:
    """'auto' picks CUDA, then Apple's MPS, then the CPU; an explicit choice must exist."""
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError("device='cuda' was asked for, but this machine has no CUDA GPU. Use 'auto' or 'cpu'.")
    if device == "mps" and not torch.backends.mps.is_available():
        raise ConfigError("device='mps' was asked for, but Apple's MPS is not available here. Use 'auto' or 'cpu'.")
    return torch.device(device)


def linear(x: torch.Tensor, W: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    """x @ W.T + b, for W stored (out_features, in_features) as in PyTorch, or W a view of a C-contiguous W^T
    (SmolLM2's widened layers, pretrained/blocks.py). Each layout gets the product that reads it in place: on 2 cores,
    F.linear on the view took 1.5 to 2 times as long as x @ W^T, and x @ W.T about 2 times F.linear's on a held W."""
    if W.is_contiguous() or not W.mT.is_contiguous():
        return F.linear(x, W, b)
    y = x @ W.mT
    return y if b is None else y + b


def split_heads(y: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(n, n_heads*d_k) -> (n_heads, n, d_k): head i owns columns i*d_k ... (i+1)*d_k - 1."""
    n, width = y.shape
    return y.view(n, n_heads, width // n_heads).transpose(0, 1)  # (n_heads, n, d_k)


def softmax_rows(masked_scores: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis; a row whose entries are all -inf (fully blocked) becomes all zeros."""
    weights = torch.softmax(masked_scores, dim=-1)
    # torch's fused softmax gives NaN on such a row (0 / 0) and nowhere else, since the inputs are finite; a NaN row
    # is NaN in every column, so its first column finds it without a pass over all h*n*m weights.
    blocked = weights[..., 0].isnan()                           # (h, n)
    if blocked.any():
        weights[blocked] = 0.0
    return weights


def head_rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """RMSNorm of each head's vector over its d_k numbers (Qwen3's q_norm, k_norm): w x / sqrt(mean(x²) + eps)."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight  # (heads, n, d_k)


def apply_rope(x: torch.Tensor, theta: float, frequencies=None) -> torch.Tensor:
    """Rotary position embedding as Llama applies it: turn the vector at position p (0, 1, ...) in each head.

    Dimensions i and i + d_k/2 form a pair ("rotate half"), turned by the angle p * theta^(-2i / d_k): fast turns
    in the first pairs, slow ones in the last. frequencies (d_k/2,), when given, are those angles per position
    instead (a model's rescaled ones). The angles are computed in float64 (on the CPU: MPS has no float64),
    then rounded to x's dtype.
    """
    heads, n, d_k = x.shape
    half = d_k // 2
    if frequencies is None:
        frequencies = theta ** (torch.arange(half, dtype=torch.float64) * (-2.0 / d_k))  # (d_k/2,)
    angle = torch.arange(n, dtype=torch.float64)[:, None] * torch.as_tensor(frequencies, dtype=torch.float64)
    # angle: (n, d_k/2)
    cos, sin = (a.to(device=x.device, dtype=x.dtype) for a in (angle.cos(), angle.sin()))
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)  # (heads, n, d_k)


def attention_steps(x: torch.Tensor, x_kv: torch.Tensor, w: dict[str, torch.Tensor], cfg: MHAConfig,
                    mask: torch.Tensor | None, head_mask: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """The four steps on checked inputs: x (n, d_model), x_kv (m, d_model), mask (h, n, m) True = blocked,
    head_mask (h,) a factor on each head's output (None = every head kept)."""
    h, d_k = cfg.n_heads, cfg.d_k
    n = x.shape[0]

    # Step 1: project X into queries, keys and values, and give each head its own d_k columns.
    q = split_heads(linear(x, w["W_Q"], w.get("b_Q")), h)                # (h, n, d_k)
    k = split_heads(linear(x_kv, w["W_K"], w.get("b_K")), cfg.kv_heads)  # (n_kv_heads, m, d_k)
    v = split_heads(linear(x_kv, w["W_V"], w.get("b_V")), cfg.kv_heads)  # (n_kv_heads, m, d_k)
    # With a per-head norm (Qwen3), scale each head's query and key to a root mean square of 1, times its weights.
    q_before_norm, k_before_norm = None, None
    if cfg.qk_norm_eps is not None:
        q_before_norm, k_before_norm = q, k
        q = head_rms_norm(q, w["q_norm"], cfg.qk_norm_eps)               # (h, n, d_k)
        k = head_rms_norm(k, w["k_norm"], cfg.qk_norm_eps)               # (n_kv_heads, m, d_k)
    # With rotary positions (RoPE), turn each query and key by angles that grow with its position.
    q_before_rope, k_before_rope = None, None
    if cfg.rope_theta is not None:
        q_before_rope, k_before_rope = q, k
        q = apply_rope(q, cfg.rope_theta, cfg.rope_frequencies)          # (h, n, d_k)
        k = apply_rope(k, cfg.rope_theta, cfg.rope_frequencies)          # (n_kv_heads, m, d_k)

    # Step 2: scaled dot-product attention, every head on its own.
    # Grouped-query attention: query heads g*j ... g*j+g-1 read key/value head j
    # (0-based here, as Python counts; from 1, as the pages count, query head i
    # reads key/value head ⌈i/g⌉).
    k_i = k.repeat_interleave(cfg.group_size, dim=0) if cfg.group_size > 1 else k  # (h, m, d_k)
    v_i = v.repeat_interleave(cfg.group_size, dim=0) if cfg.group_size > 1 else v  # (h, m, d_k)
    # Scaling Q before the product equals scaling Q K^T after it, and touches n*d_model numbers instead of h*n*m.
    scores = (q * cfg.softmax_scale) @ k_i.transpose(1, 2)               # (h, n, m)
    masked_scores = scores if mask is None else scores.masked_fill(mask, float("-inf"))
    weights = softmax_rows(masked_scores)                                # (h, n, m)
    heads = weights @ v_i                                                # (h, n, d_k)

    # Step 3: concatenate: put all head outputs side by side.
    # A head mask (Michel et al. 2019) scales each head's output first: 0 switches the head off, 1 keeps it.
    gated = heads if head_mask is None else heads * head_mask[:, None, None]  # (h, n, d_k)
    concat = gated.transpose(0, 1).reshape(n, h * d_k)                   # (n, h*d_k)

    # Step 4: project the concatenation back to d_model with W_O.
    output = linear(concat, w["W_O"], w.get("b_O"))                      # (n, d_model)

    return dict(q=q, k=k, v=v, scores=scores, masked_scores=masked_scores, weights=weights,
                q_before_rope=q_before_rope, k_before_rope=k_before_rope,
                q_before_norm=q_before_norm, k_before_norm=k_before_norm,
                heads=heads, concat=concat, output=output)


@torch.inference_mode()
def run(x: np.ndarray, x_kv: np.ndarray, w: MHAWeights, cfg: MHAConfig, mask: np.ndarray | None, device: str,
        head_mask: np.ndarray | None = None):
    """attention_steps on `device`: the trace's arrays (as NumPy) and the name of the device that computed them."""
    dev = resolve_device(device)
    if dev.type == "mps" and x.dtype == np.float64:
        raise ConfigError("Apple's MPS has no float64: use float32 weights or device='cpu'.")

    def t(a):
        # torch cannot share read-only arrays (a loaded pretrained model's are), so those are copied.
        return None if a is None else (torch.from_numpy(a) if a.flags.writeable else torch.tensor(a)).to(dev)

    X = t(x)
    X_kv = X if x_kv is x else t(x_kv)
    parts = attention_steps(X, X_kv, {name: t(a) for name, a in w.arrays().items()}, cfg, t(mask), t(head_mask))
    return {name: None if value is None else value.cpu().numpy() for name, value in parts.items()}, str(dev)
