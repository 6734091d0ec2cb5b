"""What rotary position embeddings (RoPE, Su et al. 2021) do to a query-key product, shown with real vectors.

RoPE turns each query and key by an angle that grows with its position (engine.apply_rope). A rotation by p·θ_i
followed by the transpose of a rotation by p'·θ_i is a rotation by (p' − p)·θ_i, so the product of a rotated query
at position p and a rotated key at position p' depends, for given q and k, only on the distance p − p', not on where
the pair sits.
`relative_scores` shows that with one query vector and one key vector placed at every pair of positions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .engine import apply_rope


def frequencies(d_k: int, theta: float) -> np.ndarray:
    """(d_k/2,): the angle, in radians per position, by which each pair (i, i + d_k/2) turns: θ^(−2i/d_k)."""
    return float(theta) ** (np.arange(d_k // 2) * (-2.0 / d_k))


@dataclass(frozen=True)
class RelativeScores:
    """One query vector q and one key vector k (before RoPE), placed at every pair of positions 0 ... P−1."""

    products: np.ndarray     # (P, P) RoPE(q, a) · RoPE(k, b): row a = the query's position, column b = the key's
    by_distance: np.ndarray  # (P,) the product at distance a − b = 0, 1, ..., P−1 (from the key at position 0)
    unrotated: float         # q · k, the product without RoPE (equal to the product at distance 0)
    spread: float            # the largest gap between two products at one distance a ≥ b (rounding only)


def relative_scores(q: np.ndarray, k: np.ndarray, theta: float, positions: int) -> RelativeScores:
    """The products of q (d_k,) and k (d_k,) rotated by RoPE at positions 0 ... positions−1, in float64."""
    q, k = np.asarray(q, np.float64), np.asarray(k, np.float64)
    q_at = apply_rope(np.tile(q, (1, positions, 1)), theta)[0]  # (P, d_k): q placed at positions 0 ... P−1
    k_at = apply_rope(np.tile(k, (1, positions, 1)), theta)[0]  # (P, d_k)
    products = q_at @ k_at.T                                    # (P, P)
    by_distance = products[:, 0].copy()                         # key at 0, query at 0, 1, ...: distances 0, 1, ...
    a, b = np.indices(products.shape)
    spread = float(np.abs(products - by_distance[np.abs(a - b)]).max(where=a >= b, initial=0.0))
    return RelativeScores(products=products, by_distance=by_distance, unrotated=float(q @ k), spread=spread)
