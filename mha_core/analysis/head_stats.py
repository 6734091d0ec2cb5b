"""Per-head summaries of a model's attention: how spread out each head is, and where its weight goes, as a split.

The split fits the model (a `Parts`, made from the model's own tokens by `parts_for`):
- An encoder (BERT-style, every token sees every other): the queries are the tokens of the text; the tokens the
  tokenizer adds ([CLS] first, [SEP] last) are left out as queries (they stay in as keys). Each query's attention
  is split into six parts, taken in this order: the start token, the end token, the query itself, the previous
  token, the next token, elsewhere (the first word's previous token is [CLS], so that weight counts as [CLS]).
- A decoder (causal: a query sees itself and the tokens before it): the first token is left out as a query (it can
  only look at itself), and so are the model's special tokens. The parts are: the first token (where many heads of
  trained decoders park their attention, an "attention sink", Xiao et al. 2023), the query itself, the previous
  token, a local window (2 to LOCAL_WINDOW tokens back), and further back.
A key counts in the first part that fits it, so the shares of a head sum to 1. For every layer and head, averaged
over the queries: the row entropy (bits), the shares, and for a decoder the induction score (see induction_pairs).

The result is a list of plain dicts (one per head), ready for any table, plus `summary_array` for a (layers, heads)
heatmap; pandas is not needed.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..attention.config import ConfigError
from .stats import row_entropy

# A head follows a pattern when more than this share of its attention goes there, on average.
DOMINANT_MIN_SHARE = 0.5
# A decoder's local window: keys 2 to LOCAL_WINDOW tokens before the query (1 back is the previous token).
LOCAL_WINDOW = 4
# A head is called an induction head on a text when its induction score is above this: several times the weight a
# uniform row gives any one key in the texts a student types (1/j at position j).
INDUCTION_MIN_SCORE = 0.3
# The kinds of head: the one set of names every page uses for them, each with what it means. A head's kind is that
# of the part of its attention that takes more than DOMINANT_MIN_SHARE (see Parts.patterns), else mixed.
SPECIAL, POSITIONAL, CONTENT, MIXED = "special token", "positional", "content or broad", "mixed"
SINK = "attention sink"
KIND_MEANINGS = {
    SPECIAL: "most of its weight on a token the tokenizer adds to every text ([CLS] or [SEP])",
    SINK: "most of its weight on the first token, whatever that token is",
    POSITIONAL: "most of its weight on the token itself or a near neighbour, whatever the words are",
    CONTENT: "most of its weight on other words, further away: related words, or attention spread over the text",
    MIXED: "no part of the text takes more than half of its weight",
}


@dataclass(frozen=True)
class Parts:
    """How one model's attention is split per query, and the words for it.

    columns: the share columns, in the order a key is placed; labels: each column (and "entropy", "induction") in
    words; patterns: a dominant column -> (the head's pattern, its kind); parked: the columns that count together
    when a head parks its attention (the larger is named); special: tokens left out as queries.
    """

    kind: str                                  # "encoder" or "decoder"
    columns: tuple[str, ...]
    labels: dict[str, str]
    patterns: dict[str, tuple[str, str]]
    kinds: tuple[str, ...]
    parked: tuple[str, ...]
    special: tuple[str, ...] = ()
    start: str = ""                            # encoder: the token added first ([CLS]); "" for a decoder
    end: str = ""                              # encoder: the token added last ([SEP])
    window: int = LOCAL_WINDOW                 # decoder: the local window's reach
    extra: tuple[str, ...] = field(default=())  # statistics beside the split ("induction" for a decoder)

    @property
    def stat_columns(self) -> tuple[str, ...]:
        """Every statistic of a head, in table order."""
        return ("entropy", *self.columns, *self.extra)

    def key_parts(self, tokens: list[str]) -> np.ndarray:
        """(n, n): for query j and key k, the index in self.columns of the part that key k counts in."""
        tokens = np.asarray(tokens, dtype=object)
        n = len(tokens)
        index = self.columns.index
        part = np.full((n, n), index("elsewhere"))
        j = np.arange(n)
        distance = j[:, None] - j[None, :]                 # query position - key position
        # Later parts first, so that the earlier ones (in self.columns' order) win where they meet.
        if self.kind == "decoder":
            part[(distance >= 2) & (distance <= self.window)] = index("local")
        else:
            part[distance == -1] = index("next")
        part[distance == 1] = index("prev")
        part[distance == 0] = index("self")
        if self.kind == "decoder":
            part[:, 0] = index("first")
        else:
            part[:, tokens == self.end] = index("sep")
            part[:, tokens == self.start] = index("cls")
        return part

    def queries(self, tokens: list[str]) -> np.ndarray:
        """(n,) True for the tokens whose rows are averaged."""
        keep = ~np.isin(np.asarray(tokens, dtype=object), np.asarray(self.special + (self.start, self.end),
                                                                     dtype=object))
        if self.kind == "decoder":
            keep[:1] = False  # the first token can only look at itself
        return keep


def encoder_parts(start: str = "[CLS]", end: str = "[SEP]") -> Parts:
    """The split for an encoder whose tokenizer adds `start` and `end` to every text."""
    return Parts(
        kind="encoder", columns=("cls", "sep", "self", "prev", "next", "elsewhere"),
        labels={"entropy": "entropy (bits)", "cls": start, "sep": end, "self": "self", "prev": "previous token",
                "next": "next token", "elsewhere": "other words"},
        patterns={"cls": (f"parks on {start}", SPECIAL), "sep": (f"parks on {end}", SPECIAL),
                  "self": ("self", POSITIONAL), "prev": ("previous token", POSITIONAL),
                  "next": ("next token", POSITIONAL), "elsewhere": (CONTENT, CONTENT)},
        kinds=(SPECIAL, POSITIONAL, CONTENT, MIXED), parked=("cls", "sep"), start=start, end=end)


def decoder_parts(special: tuple[str, ...] = (), window: int = LOCAL_WINDOW) -> Parts:
    """The split for a decoder with a causal mask; `special` are the model's special tokens (left out as queries)."""
    return Parts(
        kind="decoder", columns=("first", "self", "prev", "local", "elsewhere"),
        labels={"entropy": "entropy (bits)", "first": "first token", "self": "self", "prev": "previous token",
                "local": f"2–{window} back", "elsewhere": f"more than {window} back",
                "induction": "induction score"},
        patterns={"first": ("sink on the first token", SINK), "self": ("self", POSITIONAL),
                  "prev": ("previous token", POSITIONAL), "local": ("local window", POSITIONAL),
                  "elsewhere": (CONTENT, CONTENT)},
        kinds=(SINK, POSITIONAL, CONTENT, MIXED), parked=("first",), special=tuple(sorted(special)), window=window,
        extra=("induction",))


ENCODER = encoder_parts()


def parts_for(model) -> Parts:
    """The split that fits a loaded pretrained model: a decoder's for a causal one, else an encoder's named by the
    tokens its tokenizer adds (e.g. [CLS] and [SEP])."""
    if model.config.causal:
        return decoder_parts(tuple(model.special_tokens))
    start, end = model.added_tokens
    return encoder_parts(start, end)


# The encoder split under its old names (BERT's tokens), for callers that know they show an encoder.
SPECIAL_TOKENS = (ENCODER.start, ENCODER.end)
SHARE_COLUMNS = ENCODER.columns
COLUMNS = ENCODER.stat_columns
LABELS = ENCODER.labels
PATTERNS = ENCODER.patterns
KINDS = ENCODER.kinds


def _weights_of(layer) -> np.ndarray:
    """The (h, n, m) weights of a Trace, or the array itself."""
    return np.asarray(getattr(layer, "weights", layer), dtype=np.float64)


def key_parts(tokens: list[str], parts: Parts = ENCODER) -> np.ndarray:
    """(n, n): for query j and key k, the index in parts.columns of the part that key k counts in."""
    return parts.key_parts(tokens)


def induction_pairs(tokens: list[str], special=()) -> tuple[np.ndarray, np.ndarray]:
    """(queries, keys): for each token seen before, the token that followed its latest earlier copy.

    An induction head (Olsson et al. 2022) looks from a repeated token to what came after it the last time, so the
    model can continue the repeat. A pair is kept only when that key is neither the query itself nor the token just
    before it (those are what self and previous-token heads look at anyway); special tokens are not queries.
    """
    last: dict[str, int] = {}
    queries, keys = [], []
    for i, token in enumerate(tokens):
        j = last.get(token)
        if j is not None and j + 1 <= i - 2 and token not in special:
            queries.append(i)
            keys.append(j + 1)
        last[token] = i
    return np.array(queries, dtype=int), np.array(keys, dtype=int)


def layer_summary(weights: np.ndarray, tokens: list[str], parts: Parts = ENCODER) -> dict[str, np.ndarray]:
    """The statistics of parts.stat_columns for one layer's self-attention weights (h, n, n), each of shape (h,).

    Averages over the queries of parts.queries that attend at all (a query whose every key was masked is left out).
    A head with no such query gets NaN everywhere; a share on a start or end token the text lacks is NaN, and so is
    the induction score of a text without a repeated token.
    """
    w = _weights_of(weights)
    if w.ndim != 3 or w.shape[1] != w.shape[2]:
        raise ConfigError(f"Self-attention weights must have shape (heads, tokens, tokens); got {w.shape}.")
    n = w.shape[1]
    if len(tokens) != n:
        raise ConfigError(f"There are {len(tokens)} tokens but the attention weights cover {n}.")
    queries = (w.sum(axis=-1) > 0) & parts.queries(tokens)                           # (h, n)
    count = queries.sum(axis=-1)                                                     # (h,)

    def mean_over_queries(values: np.ndarray) -> np.ndarray:                         # (h, n) -> (h,)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, np.where(queries, values, 0.0).sum(axis=-1) / np.maximum(count, 1), np.nan)

    part = parts.key_parts(tokens)
    columns = {"entropy": mean_over_queries(row_entropy(w))}
    for index, name in enumerate(parts.columns):
        columns[name] = mean_over_queries(np.where(part == index, w, 0.0).sum(axis=-1))
    if parts.kind == "encoder":
        for name, token in (("cls", parts.start), ("sep", parts.end)):
            if token not in tokens:
                columns[name] = np.full(w.shape[0], np.nan)
    if "induction" in parts.extra:
        q, k = induction_pairs(tokens, parts.special)
        columns["induction"] = w[:, q, k].mean(axis=-1) if len(q) else np.full(w.shape[0], np.nan)
    return columns


def head_summary(run, tokens: list[str] | None = None, parts: Parts = ENCODER) -> list[dict]:
    """One row per (layer, head): {"layer", "head", and each of parts.stat_columns}.

    `run` is a model's run (its .layers and .tokens are used), or a list of per-layer Traces or (h, n, n) weight
    arrays given together with `tokens`. Values are plain floats; shares are in [0, 1], entropy in bits.
    """
    if tokens is None:
        layers, tokens = run.layers, run.tokens
    else:
        layers = run
    rows = []
    for l, layer in enumerate(layers):
        columns = layer_summary(layer, tokens, parts)
        for head in range(len(columns["entropy"])):
            rows.append({"layer": l, "head": head, **{name: float(columns[name][head]) for name in columns}})
    return rows


def summary_array(rows: list[dict], column: str) -> np.ndarray:
    """One column of head_summary's rows as an (n_layers, n_heads) array, for a heatmap."""
    known = [name for name in rows[0] if name not in ("layer", "head")] if rows else list(COLUMNS)
    if column not in known:
        raise ConfigError(f"column must be one of {', '.join(known)}; got {column!r}.")
    if not rows:
        return np.zeros((0, 0))
    out = np.full((max(r["layer"] for r in rows) + 1, max(r["head"] for r in rows) + 1), np.nan)
    for r in rows:
        out[r["layer"], r["head"]] = r[column]
    return out


def _share(row: dict, name: str) -> float:
    value = row.get(name, math.nan)
    return 0.0 if math.isnan(value) else value


def dominant_part(row: dict, min_share: float = DOMINANT_MIN_SHARE, parts: Parts = ENCODER) -> str | None:
    """The column (of parts.columns) that takes more than min_share of a head's attention, or None.

    The parked columns count together (an encoder head that parks on both [CLS] and [SEP] is still parking); the
    larger of them is named.
    """
    parked = max(parts.parked, key=lambda name: _share(row, name))
    if sum(_share(row, name) for name in parts.parked) > min_share:
        return parked
    others = [name for name in parts.columns if name not in parts.parked]
    best = max(others, key=lambda name: _share(row, name))
    return best if _share(row, best) > min_share else None


def dominant_pattern(row: dict, min_share: float = DOMINANT_MIN_SHARE, parts: Parts = ENCODER) -> str:
    """The name of a head's pattern, e.g. "previous token" or "parks on [SEP]"; the kind's name where the kind has
    one pattern only (content or broad); "mixed" when no part dominates."""
    part = dominant_part(row, min_share, parts)
    return parts.patterns[part][0] if part else MIXED


def pattern_kind(row: dict, min_share: float = DOMINANT_MIN_SHARE, parts: Parts = ENCODER) -> str:
    """The kind of a head's pattern: e.g. special token (or attention sink), positional, content or broad, mixed."""
    part = dominant_part(row, min_share, parts)
    return parts.patterns[part][1] if part else MIXED


def kind_counts(rows: list[dict], parts: Parts = ENCODER) -> dict[str, int]:
    """How many heads have each kind of pattern, every kind of parts.kinds listed (0 when none)."""
    counts = Counter(pattern_kind(r, parts=parts) for r in rows)
    return {kind: counts.get(kind, 0) for kind in parts.kinds}


def top_heads(rows: list[dict], column: str, min_value: float, k: int = 3) -> list[dict]:
    """The (at most k) rows with the largest value of `column` above min_value, largest first (NaN never counts)."""
    found = [r for r in rows if not math.isnan(r.get(column, math.nan)) and r[column] > min_value]
    return sorted(found, key=lambda r: -r[column])[:k]
