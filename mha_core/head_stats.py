"""Per-head summaries of a model's attention: how spread out each head is, and where its weight goes.

For every layer and head: the mean row entropy (bits) and the mean share of each query's attention that lands on
[CLS], on [SEP], on the query token itself, on the previous token and on the next token. The result is a list of
plain dicts (one per head), ready for any table, plus `summary_array` for a (layers, heads) heatmap; pandas is not
needed.
"""

from __future__ import annotations

import math

import numpy as np

from .config import ConfigError
from .stats import row_entropy

SHARE_COLUMNS = ("cls", "sep", "self", "prev", "next")
COLUMNS = ("entropy", *SHARE_COLUMNS)
# What each column means, in words for tables, charts and pattern names.
LABELS = {"entropy": "entropy (bits)", "cls": "[CLS]", "sep": "[SEP]", "self": "self", "prev": "previous token",
          "next": "next token"}
BROAD = "broad"
# A head counts as following a pattern when, on average, at least this much of each query's attention goes there.
DOMINANT_MIN_SHARE = 0.4


def _weights_of(layer) -> np.ndarray:
    """The (h, n, m) weights of a Trace, or the array itself."""
    return np.asarray(getattr(layer, "weights", layer), dtype=np.float64)


def _row_mean(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Mean over the rows (last axis) where valid is True, per head; NaN for a head without such rows."""
    count = valid.sum(axis=-1)                                      # (h,)
    total = np.where(valid, values, 0.0).sum(axis=-1)               # (h,)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def layer_summary(weights: np.ndarray, tokens: list[str]) -> dict[str, np.ndarray]:
    """The columns of COLUMNS for one layer's self-attention weights (h, n, n), each of shape (h,).

    Rows that are entirely zero (queries whose every key was masked) are left out of the means. A share on a
    token the text lacks (no [CLS], say) is NaN, as is prev/next for a single token.
    """
    w = _weights_of(weights)
    if w.ndim != 3 or w.shape[1] != w.shape[2]:
        raise ConfigError(f"Self-attention weights must have shape (heads, tokens, tokens); got {w.shape}.")
    n = w.shape[1]
    if len(tokens) != n:
        raise ConfigError(f"There are {len(tokens)} tokens but the attention weights cover {n}.")
    valid = w.sum(axis=-1) > 0                                      # (h, n) rows that attend at all
    tokens = np.asarray(tokens, dtype=object)

    def share_on(name: str) -> np.ndarray:
        keys = np.flatnonzero(tokens == name)
        if keys.size == 0:
            return np.full(w.shape[0], np.nan)
        return _row_mean(w[:, :, keys].sum(axis=-1), valid)         # (h,)

    return {
        "entropy": _row_mean(row_entropy(w), valid),
        "cls": share_on("[CLS]"),
        "sep": share_on("[SEP]"),
        "self": _row_mean(np.diagonal(w, axis1=1, axis2=2), valid),
        # Query i's weight on key i-1 (queries 1..n-1) and on key i+1 (queries 0..n-2).
        "prev": _row_mean(np.diagonal(w, offset=-1, axis1=1, axis2=2), valid[:, 1:]),
        "next": _row_mean(np.diagonal(w, offset=1, axis1=1, axis2=2), valid[:, :-1]),
    }


def head_summary(run, tokens: list[str] | None = None) -> list[dict]:
    """One row per (layer, head): {"layer", "head", "entropy", "cls", "sep", "self", "prev", "next"}.

    `run` is a MiniLMRun (its .layers and .tokens are used), or a list of per-layer Traces or (h, n, n) weight
    arrays given together with `tokens`. Values are plain floats; shares are in [0, 1], entropy in bits.
    """
    if tokens is None:
        layers, tokens = run.layers, run.tokens
    else:
        layers = run
    rows = []
    for l, layer in enumerate(layers):
        columns = layer_summary(layer, tokens)
        for head in range(len(columns["entropy"])):
            rows.append({"layer": l, "head": head, **{name: float(columns[name][head]) for name in COLUMNS}})
    return rows


def summary_array(rows: list[dict], column: str) -> np.ndarray:
    """One column of head_summary's rows as an (n_layers, n_heads) array, for a heatmap."""
    if column not in COLUMNS:
        raise ConfigError(f"column must be one of {', '.join(COLUMNS)}; got {column!r}.")
    if not rows:
        return np.zeros((0, 0))
    out = np.full((max(r["layer"] for r in rows) + 1, max(r["head"] for r in rows) + 1), np.nan)
    for r in rows:
        out[r["layer"], r["head"]] = r[column]
    return out


def dominant_pattern(row: dict, min_share: float = DOMINANT_MIN_SHARE) -> str:
    """The pattern that takes the largest share of a head's attention, e.g. "previous token"; "broad" if none
    reaches min_share (NaN shares are ignored)."""
    shares = {name: row[name] for name in SHARE_COLUMNS if not math.isnan(row.get(name, math.nan))}
    if not shares:
        return BROAD
    best = max(shares, key=shares.get)
    return LABELS[best] if shares[best] >= min_share else BROAD
