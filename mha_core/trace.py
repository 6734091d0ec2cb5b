"""The record of one forward pass: every intermediate, named for the math."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np


@dataclass(frozen=True)
class Trace:
    """Every intermediate of one multi-head attention forward pass, as NumPy arrays.

    Shapes use n query tokens, m key tokens, h heads, d_k per head. q and k are always what the scores are made of:
    with rotary positions (rope_theta set) they are the rotated ones, and q_before_rope / k_before_rope keep the
    projections X W_Q, X W_K as they were before the rotation (None without RoPE, where q and k are those).
    """

    x: np.ndarray              # (n, d_model) the queries' input X
    x_kv: np.ndarray           # (m, d_model) the keys' and values' input (X itself for self-attention)
    q: np.ndarray              # (h, n, d_k)
    k: np.ndarray              # (n_kv_heads, m, d_k)
    v: np.ndarray              # (n_kv_heads, m, d_k)
    q_before_rope: np.ndarray | None  # (h, n, d_k) queries before the RoPE rotation, or None without RoPE
    k_before_rope: np.ndarray | None  # (n_kv_heads, m, d_k) keys before the RoPE rotation, or None without RoPE
    scores: np.ndarray         # (h, n, m) Q_i K_i^T * scale, before the mask
    mask: np.ndarray | None    # (h, n, m) True = blocked, or None when nothing is blocked
    masked_scores: np.ndarray  # (h, n, m) scores with -inf where blocked
    weights: np.ndarray        # (h, n, m) softmax over keys; all zero on fully blocked rows
    heads: np.ndarray          # (h, n, d_k) weights @ V_i
    concat: np.ndarray         # (n, h*d_k) heads side by side
    output: np.ndarray         # (n, d_model) concat @ W_O^T + b_O
    blocked_rows: np.ndarray   # (h, n) True where every key was blocked for that query
    backend: str
    device: str

    def arrays(self) -> dict[str, np.ndarray]:
        """Every array in the trace, by name (for export)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if isinstance(getattr(self, f.name), np.ndarray)}
