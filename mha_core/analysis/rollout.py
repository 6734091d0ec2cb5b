"""Attention rollout (Abnar and Zuidema 2020, "Quantifying attention flow in transformers"): how much each input
token reaches each position after several layers, following the attention weights through the layers.

Each layer's mixing is taken to be Ã_l = r · I + (1 − r) · A_l, where A_l is the mean of the layer's heads' weights
and r the share kept by the residual connection; the layers are then multiplied through:
rollout_l = Ã_l Ã_(l−1) ... Ã_0. Row t of rollout_l is a split of position t after layer l over the input tokens
(rows sum to 1 when every row of weights does).

Its assumptions, which the page must state: tokens mix only through attention (the feed-forward and LayerNorm act
on each token alone and are left out); the residual keeps a fixed share r (0.5 in the paper), whatever the sizes of
the vectors added; all heads count equally, however large or small their values (see weighted_norms for what each
key really adds); and mixing in one layer composes linearly with the next. It is a guide to where information can
come from, not a measured attribution.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..attention.config import ConfigError


def _layer_mean(trace) -> np.ndarray:
    """(n, n): the mean of the layer's heads' weights. With a head mask, heads count by the size of their factor
    (a head switched off moves nothing); with every head off, the layer moves nothing: the identity."""
    w = np.asarray(trace.weights, dtype=np.float64)                # (h, n, n)
    factors = getattr(trace, "head_mask", None)
    if factors is None:
        return w.mean(axis=0)
    size = np.abs(np.asarray(factors, dtype=np.float64))           # (h,)
    return np.tensordot(size, w, axes=1) / size.sum() if size.sum() > 0 else np.eye(w.shape[1])


def rollout(run, residual: float = 0.5) -> np.ndarray:
    """(layers, n, n) float64: rollout[l][t, s] = how much input token s reaches position t after layer l.

    run: a pretrained model's run (its .layers, self-attention traces) or a list of such traces.
    residual: the share r of each layer kept by the residual connection, 0..1 (0.5 as in the paper; 0 = attention
    alone, 1 = nothing moves).
    """
    if isinstance(residual, bool) or not isinstance(residual, numbers.Real) or not 0 <= residual <= 1:
        raise ConfigError(f"residual is the share the residual connection keeps: a number from 0 to 1, got "
                          f"{residual!r}.")
    layers = getattr(run, "layers", run)
    if len(layers) == 0:
        raise ConfigError("There are no layers to roll out.")
    n, m = layers[0].weights.shape[1:]
    if n != m or any(trace.weights.shape[1:] != (n, n) for trace in layers):
        raise ConfigError("Rollout follows a token through the layers, so it needs self-attention on one sequence: "
                          "every layer's weights must be (heads, n, n) with the same n.")
    identity = np.eye(n)
    out = np.empty((len(layers), n, n))
    flow = identity
    for l, trace in enumerate(layers):
        mixing = residual * identity + (1.0 - residual) * _layer_mean(trace)  # (n, n) Ã_l
        flow = mixing @ flow                                                  # (n, n) Ã_l ... Ã_0
        out[l] = flow
    return out
