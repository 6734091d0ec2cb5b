"""Switching heads off (Michel et al. 2019): how far the output moves, which head matters most, and, in a trained
model, how the change travels through the later layers to the sentence vector (an encoder) or to the prediction of
the next token (a decoder).

A head is switched off by a 0 in mc.forward's head_mask; the trace still holds every head's output before the
mask, so the layer's full output (every head kept) is known without a second pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis.decompose import block_outputs
from ..attention.engine import linear
from ..attention.trace import Trace
from ..attention.weights import MHAWeights
from ..pretrained.minilm import mean_pooled


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of matching rows (last axis); NaN where either vector is zero (no direction to compare)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    dot, size = (a * b).sum(axis=-1), np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    return np.divide(dot, size, out=np.full(dot.shape, np.nan), where=size > 0)


def full_output(trace: Trace, w: MHAWeights) -> np.ndarray:
    """(n, d_model): the layer's output with every head kept, from the heads before the mask."""
    h, n, d_k = trace.heads.shape
    return linear(trace.heads.transpose(1, 0, 2).reshape(n, h * d_k), w.W_O, w.b_O)


@dataclass(frozen=True)
class OutputChange:
    """How far each token's output moved when the trace's heads were switched off."""

    full: np.ndarray      # (n, d_model) the output with every head kept
    distance: np.ndarray  # (n,) |output - full| per token
    cosine: np.ndarray    # (n,) cos(output, full) per token; NaN where a vector is zero


def output_change(trace: Trace, w: MHAWeights) -> OutputChange:
    full = full_output(trace, w)
    diff = trace.output.astype(np.float64) - full
    return OutputChange(full=full, distance=np.linalg.norm(diff, axis=-1), cosine=cosine_rows(trace.output, full))


def removal_effects(trace: Trace, w: MHAWeights) -> np.ndarray:
    """(h,): the mean |change| of the output rows when head i alone is switched off (from every head kept).

    In one layer this is exact and needs no new pass: the output is a sum of one block per head (see decompose),
    so removing head i moves every row by exactly head i's block, head_i W_O[block i].
    """
    return np.linalg.norm(block_outputs(trace.heads.astype(np.float64), w.W_O), axis=-1).mean(axis=1)


# --- A trained model: the later layers and the sentence vector ---------------------------------------------------

@dataclass(frozen=True)
class LayerChange:
    """How far each layer's output moved (rows: layers 1..L, columns: tokens) between two runs of a model."""

    relative: np.ndarray  # (L, n) |h_changed - h_full| / |h_full|
    cosine: np.ndarray    # (L, n) cos(h_changed, h_full)


def hidden_change(full_run, changed_run) -> LayerChange:
    """Compare every layer's output of two runs of the same text (e.g. without and with switched-off heads)."""
    full = np.stack(full_run.hidden_states[1:]).astype(np.float64)  # (L, n, d_model)
    changed = np.stack(changed_run.hidden_states[1:]).astype(np.float64)
    relative = np.linalg.norm(changed - full, axis=-1) / np.linalg.norm(full, axis=-1)
    return LayerChange(relative=relative, cosine=cosine_rows(changed, full))


@dataclass(frozen=True)
class ModelRanking:
    """For each head of one layer, switched off alone: what is left of the model's final output.

    An encoder used for sentence vectors (MiniLM) is measured by its sentence vector, a decoder (SmolLM2) by its
    prediction of the next token; the field of the other kind is None.
    """

    layer: int                    # 0-based
    relative_change: np.ndarray   # (h,) mean over tokens of |h_L changed - h_L full| / |h_L full|
    embedding_cosine: np.ndarray | None = None    # (h,) cos(sentence vector without head i, with every head)
    top_token: int | None = None                  # the id of the full model's most likely next token
    top_probability: float | None = None          # its probability with every head
    next_probability: np.ndarray | None = None    # (h,) its probability with head i off


def rank_heads_in_model(model, full_run, layer: int, backend: str = "numpy") -> ModelRanking:
    """Switch off each head of `layer` (0-based) alone and run the model on from there; `full_run` is model.run
    on the text with every head kept (the layers before `layer` are the same, so they are not run again)."""
    h = model.n_heads
    full_last = full_run.output.astype(np.float64)
    decoder = model.config.causal
    cosine, change, probability = np.empty(h), np.empty(h), np.empty(h)
    top = full_run.next_tokens[0] if decoder else None
    for i in range(h):
        mask = np.ones(h)
        mask[i] = 0.0
        x = full_run.hidden_states[layer]
        for l in range(layer, model.n_layers):
            _, x = model.layer(l, x, backend=backend, head_mask=mask if l == layer else None)
        change[i] = float((np.linalg.norm(x - full_last, axis=-1) / np.linalg.norm(full_last, axis=-1)).mean())
        if decoder:
            probability[i] = model.next_token_probabilities(x[-1])[top.id]
        else:
            cosine[i] = float(mean_pooled(x) @ full_run.sentence_embedding)
    if decoder:
        return ModelRanking(layer=layer, relative_change=change, top_token=top.id, top_probability=top.probability,
                            next_probability=probability)
    return ModelRanking(layer=layer, relative_change=change, embedding_cosine=cosine)


def embedding_similarity(model, text_a: str, text_b: str, head_mask=None, backend: str = "numpy"
                         ) -> tuple[float, float]:
    """Cosine similarity of two texts' sentence vectors: with every head, and with head_mask (n_layers, h) applied
    to both (the same as with every head when head_mask is None)."""
    a, b = (model.run(t, backend=backend).sentence_embedding for t in (text_a, text_b))
    full = float(a @ b)
    if head_mask is None:
        return full, full
    a, b = (model.run(t, backend=backend, head_mask=head_mask).sentence_embedding for t in (text_a, text_b))
    return full, float(a @ b)
