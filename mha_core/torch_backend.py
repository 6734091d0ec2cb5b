"""The same four steps in PyTorch, on a CPU or GPU; imported only when the torch backend is chosen."""

from __future__ import annotations

import numpy as np
import torch

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


def _linear(x, W, b):
    return torch.nn.functional.linear(x, W, b)


def _split_heads(y, n_heads: int):
    n, width = y.shape
    return y.view(n, n_heads, width // n_heads).transpose(0, 1)  # (n_heads, n, d_k)


@torch.inference_mode()
def forward_torch(x: np.ndarray, x_kv: np.ndarray, w: MHAWeights, cfg: MHAConfig, mask, device: str):
    """The trace's arrays (as NumPy) and the name of the device that computed them."""
    dev = resolve_device(device)
    if dev.type == "mps" and x.dtype == np.float64:
        raise ConfigError("Apple's MPS has no float64: use float32 weights or device='cpu'.")

    def t(a):
        # torch cannot share read-only arrays (a loaded pretrained model's are), so those are copied.
        return None if a is None else (torch.from_numpy(a) if a.flags.writeable else torch.tensor(a)).to(dev)

    W = {name: t(a) for name, a in w.arrays().items()}
    X, X_kv = t(x), (t(x) if x_kv is x else t(x_kv))
    h, d_k = cfg.n_heads, cfg.d_k
    n = x.shape[0]

    # Step 1: project into per-head queries, keys and values.
    q = _split_heads(_linear(X, W["W_Q"], W.get("b_Q")), h)                # (h, n, d_k)
    k = _split_heads(_linear(X_kv, W["W_K"], W.get("b_K")), cfg.kv_heads)  # (n_kv_heads, m, d_k)
    v = _split_heads(_linear(X_kv, W["W_V"], W.get("b_V")), cfg.kv_heads)  # (n_kv_heads, m, d_k)

    # Step 2: scaled dot-product attention per head (key/value heads shared by groups under GQA).
    k_i = k.repeat_interleave(cfg.group_size, dim=0) if cfg.group_size > 1 else k  # (h, m, d_k)
    v_i = v.repeat_interleave(cfg.group_size, dim=0) if cfg.group_size > 1 else v  # (h, m, d_k)
    scores = torch.matmul(q * cfg.softmax_scale, k_i.transpose(1, 2))  # (h, n, m)
    if mask is None:
        masked_scores = scores
        weights = torch.softmax(scores, dim=-1)                       # (h, n, m)
    else:
        blocked = t(mask)
        masked_scores = scores.masked_fill(blocked, float("-inf"))
        weights = torch.softmax(masked_scores, dim=-1)                # (h, n, m)
        weights.masked_fill_(blocked.all(dim=-1, keepdim=True), 0.0)  # fully blocked rows: zeros, not NaN
    heads = torch.matmul(weights, v_i)                                 # (h, n, d_k)

    # Step 3: concatenate the heads side by side.
    concat = heads.transpose(0, 1).reshape(n, h * d_k)                # (n, h*d_k)

    # Step 4: output projection with W_O.
    output = _linear(concat, W["W_O"], W.get("b_O"))                  # (n, d_model)

    parts = dict(q=q, k=k, v=v, scores=scores, masked_scores=masked_scores, weights=weights,
                 heads=heads, concat=concat, output=output)
    return {name: value.cpu().numpy() for name, value in parts.items()}, str(dev)
