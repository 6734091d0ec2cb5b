"""Multi-head attention, forward pass, in the four steps the app teaches.

`attention_steps` below is the readable NumPy reference; torch_backend.py holds the same function, with the same
helper names and step comments, in PyTorch on a chosen device. Torch is imported only when that path is asked for,
so the NumPy path starts fast. `forward` checks its inputs, runs one of the two, and returns a Trace.
"""

from __future__ import annotations

import re

import numpy as np

from .config import MAX_SCORE_CELLS, MAX_TOKENS, ConfigError, MHAConfig
from .masks import combine_masks
from .trace import Trace
from .weights import MHAWeights

BACKENDS = ("numpy", "torch")
DEVICES = ("auto", "cpu", "cuda", "mps")


def linear(x: np.ndarray, W: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """x @ W.T + b, with W stored (out_features, in_features) as in PyTorch."""
    y = x @ W.T
    if b is not None:
        y += b  # in place: y is a fresh array, and a second one of this size costs a pass over memory
    return y


def split_heads(y: np.ndarray, n_heads: int) -> np.ndarray:
    """(n, n_heads*d_k) -> (n_heads, n, d_k): head i owns columns i*d_k ... (i+1)*d_k - 1."""
    n, width = y.shape
    return y.reshape(n, n_heads, width // n_heads).transpose(1, 0, 2)  # (n_heads, n, d_k)


def softmax_rows(masked_scores: np.ndarray) -> np.ndarray:
    """Softmax over the last axis; a row whose entries are all -inf (fully blocked) becomes all zeros."""
    row_max = masked_scores.max(axis=-1, keepdims=True)
    row_max[~np.isfinite(row_max)] = 0.0  # a fully blocked row: exp(-inf - 0) = 0 everywhere, no NaN
    weights = np.subtract(masked_scores, row_max)
    np.exp(weights, out=weights)
    total = weights.sum(axis=-1, keepdims=True)
    total[total == 0] = 1.0
    weights /= total
    return weights


def head_rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """RMSNorm of each head's vector over its d_k numbers (Qwen3's q_norm, k_norm): w x / sqrt(mean(x²) + eps)."""
    mean_square = np.mean(np.square(x), axis=-1, keepdims=True)  # (heads, n, 1)
    return x / np.sqrt(mean_square + eps) * weight                # (heads, n, d_k)


def apply_rope(x: np.ndarray, theta: float, frequencies=None) -> np.ndarray:
    """Rotary position embedding as Llama applies it: turn the vector at position p (0, 1, ...) in each head.

    Dimensions i and i + d_k/2 form a pair ("rotate half"), turned by the angle p * theta^(-2i / d_k): fast turns
    in the first pairs, slow ones in the last. frequencies (d_k/2,), when given, are those angles per position
    instead (a model's rescaled ones). The angles are computed in float64, then rounded to x's dtype.
    """
    heads, n, d_k = x.shape
    half = d_k // 2
    if frequencies is None:
        frequencies = theta ** (np.arange(half) * (-2.0 / d_k))  # (d_k/2,)
    angle = np.arange(n)[:, None] * np.asarray(frequencies, np.float64)  # (n, d_k/2)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)  # (heads, n, d_k)


def attention_steps(x: np.ndarray, x_kv: np.ndarray, w: MHAWeights, cfg: MHAConfig,
                    mask: np.ndarray | None, head_mask: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The four steps on checked inputs: x (n, d_model), x_kv (m, d_model), mask (h, n, m) True = blocked,
    head_mask (h,) a factor on each head's output (None = every head kept)."""
    h, d_k = cfg.n_heads, cfg.d_k
    n = x.shape[0]

    # Step 1: project X into queries, keys and values, and give each head its own d_k columns.
    q = split_heads(linear(x, w.W_Q, w.b_Q), h)                # (h, n, d_k)
    k = split_heads(linear(x_kv, w.W_K, w.b_K), cfg.kv_heads)  # (n_kv_heads, m, d_k)
    v = split_heads(linear(x_kv, w.W_V, w.b_V), cfg.kv_heads)  # (n_kv_heads, m, d_k)
    # With a per-head norm (Qwen3), scale each head's query and key to a root mean square of 1, times its weights.
    q_before_norm, k_before_norm = None, None
    if cfg.qk_norm_eps is not None:
        q_before_norm, k_before_norm = q, k
        q = head_rms_norm(q, w.q_norm, cfg.qk_norm_eps)        # (h, n, d_k)
        k = head_rms_norm(k, w.k_norm, cfg.qk_norm_eps)        # (n_kv_heads, m, d_k)
    # With rotary positions (RoPE), turn each query and key by angles that grow with its position.
    q_before_rope, k_before_rope = None, None
    if cfg.rope_theta is not None:
        q_before_rope, k_before_rope = q, k
        q = apply_rope(q, cfg.rope_theta, cfg.rope_frequencies)  # (h, n, d_k)
        k = apply_rope(k, cfg.rope_theta, cfg.rope_frequencies)  # (n_kv_heads, m, d_k)

    # Step 2: scaled dot-product attention, every head on its own.
    # Grouped-query attention: query heads g*j ... g*j+g-1 read key/value head j
    # (0-based here, as Python counts; from 1, as the pages count, query head i
    # reads key/value head ⌈i/g⌉).
    k_i = np.repeat(k, cfg.group_size, axis=0) if cfg.group_size > 1 else k  # (h, m, d_k)
    v_i = np.repeat(v, cfg.group_size, axis=0) if cfg.group_size > 1 else v  # (h, m, d_k)
    # Scaling Q before the product equals scaling Q K^T after it, and touches n*d_model numbers instead of h*n*m.
    scores = (q * q.dtype.type(cfg.softmax_scale)) @ k_i.transpose(0, 2, 1)  # (h, n, m)
    masked_scores = scores if mask is None else np.where(mask, scores.dtype.type(-np.inf), scores)
    weights = softmax_rows(masked_scores)                      # (h, n, m)
    heads = weights @ v_i                                      # (h, n, d_k)

    # Step 3: concatenate: put all head outputs side by side.
    # A head mask (Michel et al. 2019) scales each head's output first: 0 switches the head off, 1 keeps it.
    gated = heads if head_mask is None else heads * head_mask[:, None, None]  # (h, n, d_k)
    concat = gated.transpose(1, 0, 2).reshape(n, h * d_k)      # (n, h*d_k)

    # Step 4: project the concatenation back to d_model with W_O.
    output = linear(concat, w.W_O, w.b_O)                      # (n, d_model)

    return dict(q=q, k=k, v=v, scores=scores, masked_scores=masked_scores, weights=weights,
                q_before_rope=q_before_rope, k_before_rope=k_before_rope,
                q_before_norm=q_before_norm, k_before_norm=k_before_norm,
                heads=heads, concat=concat, output=output)


def check_input(x, cfg: MHAConfig, name: str) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype.kind not in "biuf":
        raise ConfigError(f"{name} must hold real numbers, got values of type {x.dtype}.")
    if x.ndim != 2:
        raise ConfigError(f"{name} must be a matrix of shape (tokens, d_model); got {x.ndim} dimension(s), {x.shape}.")
    if x.shape[1] != cfg.d_model:
        raise ConfigError(f"{name} has {x.shape[1]} numbers per token, but d_model = {cfg.d_model}.")
    if x.shape[0] == 0:
        raise ConfigError(f"{name} has no tokens: attention needs at least one.")
    if x.shape[0] > MAX_TOKENS:
        raise ConfigError(f"{name} has {x.shape[0]} tokens; this tool's limit is {MAX_TOKENS}.")
    if not np.isfinite(x).all():
        raise ConfigError(f"{name} contains NaN or infinite numbers; attention needs finite inputs.")
    return x


def _check_head_mask(head_mask, cfg: MHAConfig) -> np.ndarray:
    head_mask = np.asarray(head_mask)
    if head_mask.dtype == bool:
        raise ConfigError("head_mask multiplies each head's output: give numbers, 1.0 to keep a head and 0.0 to switch "
                          "it off (True/False would read as the other masks' True = blocked).")
    if head_mask.dtype.kind not in "iuf":
        raise ConfigError(f"head_mask must hold real numbers, got values of type {head_mask.dtype}.")
    if head_mask.shape != (cfg.n_heads,):
        raise ConfigError(f"head_mask needs one number per head, shape ({cfg.n_heads},); got {head_mask.shape}.")
    if not np.isfinite(head_mask).all():
        raise ConfigError("head_mask contains NaN or infinite numbers; each head's factor must be finite.")
    return head_mask


def _check_backend(backend: str, device) -> str:
    if backend not in BACKENDS:
        raise ConfigError(f"backend must be one of {', '.join(BACKENDS)}; got {backend!r}.")
    device = str(device)  # a torch.device works too
    if device not in DEVICES and not re.fullmatch(r"cuda:\d+", device):
        raise ConfigError(f"device must be one of {', '.join(DEVICES)} (or cuda:N); got {device!r}.")
    if backend == "numpy" and device not in ("auto", "cpu"):
        raise ConfigError(f"The NumPy backend runs on the CPU only; choose backend='torch' for device={device!r}.")
    return device


def forward(x, w: MHAWeights, cfg: MHAConfig, kv=None, key_padding_mask=None, attn_mask=None, head_mask=None,
            backend: str = "numpy", device: str = "auto") -> Trace:
    """Run multi-head attention on x (n, d_model) and return every intermediate as a Trace.

    kv: a second sequence (m, d_model) for cross-attention (None = self-attention).
    key_padding_mask (m,) and attn_mask (n, m) or (h, n, m) are boolean, True = blocked, as in PyTorch.
    head_mask (h,): multiplies each head's output before W_O (1 = keep, 0 = switched off, in between = a gate).
    backend: "numpy" (the reference) or "torch"; device: "auto" (a GPU when there is one), "cpu", "cuda", "mps".
    """
    # Checks: every problem is a ConfigError in plain words, before any arithmetic.
    device = _check_backend(backend, device)
    w.check(cfg)
    x = check_input(x, cfg, "x")
    x_kv = x if kv is None else check_input(kv, cfg, "kv")
    cells = cfg.n_heads * x.shape[0] * x_kv.shape[0]
    if cells > MAX_SCORE_CELLS:
        raise ConfigError(f"h × n × m = {cells:,} attention scores is above this tool's limit of {MAX_SCORE_CELLS:,}: "
                          "use fewer tokens or heads.")
    # One dtype for everything, as NumPy would promote it (integer inputs take the weights' dtype).
    floats = [a.dtype for a in (x, x_kv) if a.dtype.kind == "f"]
    dtype = np.result_type(*floats, *(a.dtype for a in w.arrays().values()))
    x, x_kv, w = x.astype(dtype, copy=False), x_kv.astype(dtype, copy=False), w.astype(dtype)
    mask = combine_masks(cfg, x.shape[0], x_kv.shape[0], key_padding_mask, attn_mask)
    head_mask = None if head_mask is None else _check_head_mask(head_mask, cfg).astype(dtype)

    # The four steps, in NumPy or in PyTorch.
    if backend == "numpy":
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported in words just below
            parts, used = attention_steps(x, x_kv, w, cfg, mask, head_mask), "cpu"
    else:
        from . import torch_backend

        parts, used = torch_backend.run(x, x_kv, w, cfg, mask, device, head_mask)
    # Inputs too large for the dtype overflow to infinity in Q K^T (and a softmax over infinities is NaN): refuse
    # in words rather than show a NaN. min and max are NaN or infinite when any entry is.
    for name in ("scores", "output"):
        if not (np.isfinite(parts[name].min()) and np.isfinite(parts[name].max())):
            raise ConfigError(f"The {name} overflow {dtype} (the largest input is {np.abs(x).max():.3g}): scale the "
                              "input down, or use float64.")

    # The trace: every intermediate, plus which query rows had every key blocked.
    blocked_rows = mask.all(axis=-1) if mask is not None else np.zeros((cfg.n_heads, x.shape[0]), dtype=bool)
    return Trace(x=x, x_kv=x_kv, mask=mask, blocked_rows=blocked_rows, head_mask=head_mask, backend=backend,
                 device=used, **parts)
