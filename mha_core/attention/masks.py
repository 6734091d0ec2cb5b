"""Boolean attention masks (True = blocked), checked and combined into one (h, n, m) array."""

from __future__ import annotations

import numpy as np

from .config import ConfigError, MHAConfig


def causal_mask(n: int, m: int | None = None, window: int | None = None) -> np.ndarray:
    """(n, m) True above the diagonal: the query at position t may not look at the keys after position t.

    window (a sliding window, as Mistral's): the query at t also may not look at the keys before t - window + 1.
    """
    m = n if m is None else m
    blocked = np.triu(np.ones((n, m), dtype=bool), k=1)
    if window is not None:
        blocked |= np.tril(np.ones((n, m), dtype=bool), k=-window)  # key s blocked where t - s >= window
    return blocked


def padding_problem(m: int, n_padded: int) -> str | None:
    """Why blocking the last n_padded of m keys cannot work (no key would be left to attend to), or None."""
    if n_padded < m:
        return None
    return (f"Masking the last {n_padded} of {m} tokens as padding would leave no token to attend to. "
            f"Choose at most {m - 1}.")


def padding_mask(m: int, n_padded: int) -> np.ndarray:
    """(m,) key padding mask that blocks the last `n_padded` keys."""
    mask = np.zeros(m, dtype=bool)
    if n_padded > 0:
        mask[-n_padded:] = True
    return mask


def _as_bool(mask, name: str) -> np.ndarray:
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise ConfigError(f"{name} must be boolean (True = blocked), got values of type {mask.dtype}.")
    return mask


def combine_masks(cfg: MHAConfig, n: int, m: int, key_padding_mask=None, attn_mask=None) -> np.ndarray | None:
    """One (h, n, m) boolean mask from the causal flag, key_padding_mask (m,) and attn_mask (n, m) or (h, n, m)."""
    parts = []
    if key_padding_mask is not None:
        kpm = _as_bool(key_padding_mask, "key_padding_mask")
        if kpm.shape != (m,):
            raise ConfigError(f"key_padding_mask needs one entry per key, shape ({m},); got {kpm.shape}.")
        parts.append(kpm[None, None, :])
    if attn_mask is not None:
        am = _as_bool(attn_mask, "attn_mask")
        if am.shape not in ((n, m), (cfg.n_heads, n, m)):
            raise ConfigError(
                f"attn_mask must have shape ({n}, {m}) (queries x keys) or ({cfg.n_heads}, {n}, {m}) (one per head); "
                f"got {am.shape}."
            )
        parts.append(am if am.ndim == 3 else am[None])
    if cfg.causal:
        parts.append(causal_mask(n, m, cfg.sliding_window)[None])
    if not parts:
        return None
    mask = np.zeros((cfg.n_heads, n, m), dtype=bool)
    for part in parts:
        mask |= part
    return mask if mask.any() else None
