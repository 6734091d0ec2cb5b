"""What each key really adds to each query's output, head by head (Kobayashi et al. 2020, "Attention is not only a
weight").

Through head i, key s adds α_ts · v_s W_O,iᵀ to query t's output, where W_O,i is head i's block of d_k columns of W_O
(PyTorch's (out, in) layout) and v_s W_O,iᵀ is the value "transformed" into the output space. Summed over the keys
and the heads, plus b_O, these vectors are exactly the layer's output. A large weight on a key whose transformed value
is short adds little: the size ‖α_ts · v_s W_O,iᵀ‖ says how much the key really adds.
"""

from __future__ import annotations

import numpy as np

from ..attention.config import ConfigError
from ..attention.trace import Trace
from ..attention.weights import MHAWeights
from .decompose import block_outputs
from .head_stats import ENCODER, Parts, head_summary, summary_array


def head_gates(trace: Trace) -> np.ndarray:
    """(h,) float64: the factor Step 3 multiplies each head's output by (the head mask; 1 = kept, 0 = switched off).

    A switched-off head still computes its weights and values as usual: only its output is multiplied by 0."""
    h = trace.q.shape[0]
    return np.ones(h) if trace.head_mask is None else trace.head_mask.astype(np.float64)


def _head_values(trace: Trace, weights: MHAWeights) -> np.ndarray:
    """(h, m, d_k) float64: the values each query head reads (with grouped-query attention, key/value head
    i // group_size), as the head computes them (before Step 3's gate)."""
    h, _, d_k = trace.q.shape
    d_model = trace.output.shape[1]
    if weights.W_O.shape != (d_model, h * d_k):
        raise ConfigError(f"These weights do not belong to this trace: W_O has shape {weights.W_O.shape}, the trace "
                          f"needs ({d_model}, {h * d_k}).")
    group = h // trace.v.shape[0]
    return np.repeat(trace.v, group, axis=0).astype(np.float64)               # (h, m, d_k)


def transformed_values(trace: Trace, weights: MHAWeights) -> np.ndarray:
    """(h, m, d_model) float64: g_i · v_s W_O,iᵀ, each key's value as head i hands it to the output, times the
    head's gate g_i (head_gates: Step 3 multiplies the head's output by it), so that weighted and summed they are
    the output. With grouped-query attention, query head i reads key/value head i // group_size.
    """
    f = block_outputs(_head_values(trace, weights), weights.W_O.astype(np.float64))  # (h, m, d_model)
    return f * head_gates(trace)[:, None, None]                                     # (h, m, d_model)


def value_sizes(trace: Trace, weights: MHAWeights) -> np.ndarray:
    """(h, m) float64: ‖v_s W_O,iᵀ‖, the length of key s's transformed value in head i (before its weight and
    before Step 3's gate: a switched-off head's values are not 0, only its output is multiplied by 0).

    One head at a time, so that no (h, m, d_model) array is held: this is what a page needs of a long input.
    """
    v = _head_values(trace, weights)                                           # (h, m, d_k)
    h, _, d_k = v.shape
    W_O = weights.W_O.astype(np.float64)                                       # (d_model, h·d_k)
    return np.stack([np.linalg.norm(block_outputs(v[i:i + 1], W_O[:, i * d_k:(i + 1) * d_k])[0], axis=-1)
                     for i in range(h)])                                       # (h, m)


def contributions(trace: Trace, weights: MHAWeights) -> np.ndarray:
    """(h, n, m) float64: ‖g_i · α_ts · v_s W_O,iᵀ‖, the size of what key s adds to query t's output through head i
    (g_i: head_gates).

    A blocked key has weight 0 and adds 0; a head switched off by a head mask (g_i = 0) adds 0, though its weights
    and values are computed as usual.
    """
    sizes = value_sizes(trace, weights)                                        # (h, m)
    return np.stack([head_contributions(trace, sizes, i) for i in range(sizes.shape[0])])  # (h, n, m)


def head_contributions(trace: Trace, sizes: np.ndarray, head: int, queries=slice(None)) -> np.ndarray:
    """(n, m) float64 (or the rows `queries` picks): head i's part of `contributions`, |g_i| · α_ts · ‖v_s W_O,iᵀ‖,
    from value_sizes' (h, m) sizes: one head at a time, for a page that must not hold (h, n, m)."""
    return abs(head_gates(trace)[head]) * trace.weights[head, queries].astype(np.float64) * sizes[head]


def contribution_shares(sizes: np.ndarray) -> np.ndarray:
    """(h, n, m): each query row of `contributions` divided by its sum, so rows sum to 1 as weights do (a row that
    adds nothing stays 0). Shares can be drawn and summarised exactly as weights are."""
    total = sizes.sum(axis=-1, keepdims=True)                                  # (h, n, 1)
    return np.divide(sizes, total, out=np.zeros_like(sizes, dtype=np.float64), where=total > 0)


def contribution_summary(run, layer_weights: list[MHAWeights], parts: Parts = ENCODER) -> list[dict]:
    """head_stats.head_summary's rows, made from each head's contribution shares instead of its weights.

    run: a model's run (its .layers and .tokens); layer_weights: each layer's attention weights, e.g.
    [w.attention for w in model.layer_weights]. Same columns, same parts (head_stats.parts_for(model)).
    """
    if len(layer_weights) != len(run.layers):
        raise ConfigError(f"The run has {len(run.layers)} layers but {len(layer_weights)} sets of weights were given.")
    shares = [contribution_shares(contributions(trace, w)) for trace, w in zip(run.layers, layer_weights, strict=True)]
    return head_summary(shares, run.tokens, parts)


def parked_share(rows: list[dict], parts: Parts = ENCODER) -> np.ndarray:
    """(layers, heads): each head's share on the tokens where heads park ([CLS] and [SEP] for an encoder, the first
    token for a decoder: parts.parked), from head_summary or contribution_summary rows. A part whose token the text
    lacks counts 0; NaN only when every part is NaN (a head with no query)."""
    columns = np.stack([summary_array(rows, name) for name in parts.parked])  # (parked, layers, heads)
    total = np.nansum(columns, axis=0)
    return np.where(np.isnan(columns).all(axis=0), np.nan, total)
