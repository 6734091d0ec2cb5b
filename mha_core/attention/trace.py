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
    With a per-head norm on queries and keys (qk_norm_eps set, Qwen3), q_before_norm / k_before_norm keep the
    projections, and q_before_rope / k_before_rope the normed vectors that RoPE turns.
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
    heads: np.ndarray          # (h, n, d_k) weights @ V_i, before the head mask
    head_mask: np.ndarray | None  # (h,) each head's factor before W_O (1 = kept, 0 = off), or None: all kept
    concat: np.ndarray         # (n, h*d_k) heads side by side, each times its head_mask entry: what W_O sees
    output: np.ndarray         # (n, d_model) concat @ W_O^T + b_O
    blocked_rows: np.ndarray   # (h, n) True where every key was blocked for that query
    backend: str
    device: str
    q_before_norm: np.ndarray | None = None  # (h, n, d_k) X W_Q before the per-head RMSNorm, or None without it
    k_before_norm: np.ndarray | None = None  # (n_kv_heads, m, d_k) X W_K before the per-head RMSNorm, or None

    def raw_scores(self, head: int | None = None) -> np.ndarray:
        """Q_i K_i^T before the scale, (h, n, m), or (n, m) for one head; each query head with its key/value head.

        Computed from q and k, not by dividing `scores` by the scale, so every number is the product itself.
        """
        group = self.q.shape[0] // self.k.shape[0]
        if head is not None:
            return self.q[head] @ self.k[head // group].T                             # (n, m)
        k = np.repeat(self.k, group, axis=0) if group > 1 else self.k                 # (h, m, d_k)
        return self.q @ k.transpose(0, 2, 1)                                          # (h, n, m)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every array in the trace, by name (for export)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if isinstance(getattr(self, f.name), np.ndarray)}
