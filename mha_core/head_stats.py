"""Per-head summaries of a model's attention: how spread out each head is, and where its weight goes, as a split.

The queries are the tokens of the text itself: special tokens ([CLS], [SEP]) are left out as queries (they stay in
as keys). For every layer and head, averaged over those queries: the row entropy (bits), and the share of each
query's attention in six parts that do not overlap, taken in this order: [CLS], [SEP], the query itself, the
previous token, the next token, elsewhere. A key counts in the first part that fits it (the first word's previous
token is [CLS], so that weight counts as [CLS]), so the six shares of a head sum to 1.

The result is a list of plain dicts (one per head), ready for any table, plus `summary_array` for a (layers, heads)
heatmap; pandas is not needed.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from .config import ConfigError
from .stats import row_entropy

SPECIAL_TOKENS = ("[CLS]", "[SEP]")
SHARE_COLUMNS = ("cls", "sep", "self", "prev", "next", "elsewhere")  # the parts, in the order a key is placed
COLUMNS = ("entropy", *SHARE_COLUMNS)
# What each column means, in words for tables and charts.
LABELS = {"entropy": "entropy (bits)", "cls": "[CLS]", "sep": "[SEP]", "self": "self", "prev": "previous token",
          "next": "next token", "elsewhere": "elsewhere"}

# The kinds of pattern, and the pattern a head has when more than half of its attention goes to one part.
SPECIAL, POSITIONAL, CONTENT, MIXED = "special token", "positional", "content or broad", "mixed"
PATTERNS = {"cls": ("parks on [CLS]", SPECIAL), "sep": ("parks on [SEP]", SPECIAL), "self": ("self", POSITIONAL),
            "prev": ("previous token", POSITIONAL), "next": ("next token", POSITIONAL),
            "elsewhere": ("other words", CONTENT)}
KINDS = (SPECIAL, POSITIONAL, CONTENT, MIXED)
# A head follows a pattern when more than this share of its attention goes there, on average.
DOMINANT_MIN_SHARE = 0.5


def _weights_of(layer) -> np.ndarray:
    """The (h, n, m) weights of a Trace, or the array itself."""
    return np.asarray(getattr(layer, "weights", layer), dtype=np.float64)


def key_parts(tokens: list[str]) -> np.ndarray:
    """(n, n): for query j and key k, the index in SHARE_COLUMNS of the part that key k counts in."""
    tokens = np.asarray(tokens, dtype=object)
    n = len(tokens)
    part = np.full((n, n), SHARE_COLUMNS.index("elsewhere"))
    j = np.arange(n)
    # Later parts first, so that the earlier ones (in SHARE_COLUMNS' order) win where they meet.
    part[j[:-1], j[1:]] = SHARE_COLUMNS.index("next")
    part[j[1:], j[:-1]] = SHARE_COLUMNS.index("prev")
    part[j, j] = SHARE_COLUMNS.index("self")
    part[:, tokens == "[SEP]"] = SHARE_COLUMNS.index("sep")
    part[:, tokens == "[CLS]"] = SHARE_COLUMNS.index("cls")
    return part


def layer_summary(weights: np.ndarray, tokens: list[str]) -> dict[str, np.ndarray]:
    """The columns of COLUMNS for one layer's self-attention weights (h, n, n), each of shape (h,).

    Averages over the queries that are not special tokens and attend at all (a query whose every key was masked
    is left out). A head with no such query gets NaN everywhere; a share on a special token the text lacks is NaN.
    """
    w = _weights_of(weights)
    if w.ndim != 3 or w.shape[1] != w.shape[2]:
        raise ConfigError(f"Self-attention weights must have shape (heads, tokens, tokens); got {w.shape}.")
    n = w.shape[1]
    if len(tokens) != n:
        raise ConfigError(f"There are {len(tokens)} tokens but the attention weights cover {n}.")
    special = np.isin(np.asarray(tokens, dtype=object), SPECIAL_TOKENS)           # (n,)
    queries = (w.sum(axis=-1) > 0) & ~special                                        # (h, n)
    count = queries.sum(axis=-1)                                                     # (h,)

    def mean_over_queries(values: np.ndarray) -> np.ndarray:                         # (h, n) -> (h,)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, np.where(queries, values, 0.0).sum(axis=-1) / np.maximum(count, 1), np.nan)

    part = key_parts(tokens)
    columns = {"entropy": mean_over_queries(row_entropy(w))}
    for index, name in enumerate(SHARE_COLUMNS):
        columns[name] = mean_over_queries(np.where(part == index, w, 0.0).sum(axis=-1))
    for name, token in (("cls", "[CLS]"), ("sep", "[SEP]")):
        if token not in tokens:
            columns[name] = np.full(w.shape[0], np.nan)
    return columns


def head_summary(run, tokens: list[str] | None = None) -> list[dict]:
    """One row per (layer, head): {"layer", "head", "entropy", "cls", "sep", "self", "prev", "next", "elsewhere"}.

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


def _share(row: dict, name: str) -> float:
    value = row.get(name, math.nan)
    return 0.0 if math.isnan(value) else value


def dominant_part(row: dict, min_share: float = DOMINANT_MIN_SHARE) -> str | None:
    """The column (of SHARE_COLUMNS) that takes more than min_share of a head's attention, or None.

    [CLS] and [SEP] count together (a head that parks on both is still parking); the larger of them is named.
    """
    special = max(("cls", "sep"), key=lambda name: _share(row, name))
    if _share(row, "cls") + _share(row, "sep") > min_share:
        return special
    best = max(("self", "prev", "next", "elsewhere"), key=lambda name: _share(row, name))
    return best if _share(row, best) > min_share else None


def dominant_pattern(row: dict, min_share: float = DOMINANT_MIN_SHARE) -> str:
    """The name of a head's pattern, e.g. "previous token" or "parks on [SEP]"; "mixed" when no part dominates."""
    part = dominant_part(row, min_share)
    return PATTERNS[part][0] if part else MIXED


def pattern_kind(row: dict, min_share: float = DOMINANT_MIN_SHARE) -> str:
    """The kind of a head's pattern: special token, positional, content or broad, or mixed."""
    part = dominant_part(row, min_share)
    return PATTERNS[part][1] if part else MIXED


def kind_counts(rows: list[dict]) -> dict[str, int]:
    """How many heads have each kind of pattern, every kind of KINDS listed (0 when none)."""
    counts = Counter(pattern_kind(r) for r in rows)
    return {kind: counts.get(kind, 0) for kind in KINDS}
