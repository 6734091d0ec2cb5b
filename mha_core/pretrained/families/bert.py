"""BERT (and checkpoints saved by sentence-transformers, which hold a BertModel): a post-norm encoder with learned
positions and token types; every layer's Q, K, V and W_O with biases, W_O in attention.output.dense."""

from __future__ import annotations

import numpy as np

from ...attention.config import ConfigError, MHAConfig
from ..checkpoint import Layout

MODEL_TYPE = "bert"
ANCHOR = "embeddings.word_embeddings.weight"


def layout(hp: dict, offset: int = 0) -> Layout:
    """offset: the first position's row (RoBERTa's positions start after its padding index)."""
    if hp.get("position_embedding_type", "absolute") != "absolute":
        raise ConfigError(f"position_embedding_type {hp['position_embedding_type']!r} is not supported; supported: "
                          "absolute (learned positions added to the embeddings).")
    config = MHAConfig(hp["hidden_size"], hp["num_attention_heads"])
    return Layout(kind="encoder", configs=(config,) * hp["num_hidden_layers"], d_ff=hp["intermediate_size"],
                  norm="layer", norm_eps=float(hp.get("layer_norm_eps", 1e-12)),
                  activation=hp.get("hidden_act", "gelu"), gated=False,
                  max_positions=hp.get("max_position_embeddings", 512) - offset, positions=positions, token_types=True)


def positions(ids: np.ndarray) -> np.ndarray:
    return np.arange(len(ids))  # (n,)


def embeddings(read, hp: dict) -> dict:
    return dict(word=read("embeddings.word_embeddings.weight"), position=read("embeddings.position_embeddings.weight"),
                token_type=read("embeddings.token_type_embeddings.weight"),
                embed_norm_w=read("embeddings.LayerNorm.weight"), embed_norm_b=read("embeddings.LayerNorm.bias"))


def layer(read, l: int, hp: dict) -> dict:
    p = f"encoder.layer.{l}."
    # nn.Linear stores W as (out_features, in_features), the layout MHAWeights uses.
    names = dict(W_Q="attention.self.query.weight", b_Q="attention.self.query.bias",
                 W_K="attention.self.key.weight", b_K="attention.self.key.bias",
                 W_V="attention.self.value.weight", b_V="attention.self.value.bias",
                 W_O="attention.output.dense.weight", b_O="attention.output.dense.bias",
                 norm1_w="attention.output.LayerNorm.weight", norm1_b="attention.output.LayerNorm.bias",
                 W_in="intermediate.dense.weight", b_in="intermediate.dense.bias",
                 W_out="output.dense.weight", b_out="output.dense.bias",
                 norm2_w="output.LayerNorm.weight", norm2_b="output.LayerNorm.bias")
    return {name: read(p + tensor) for name, tensor in names.items()}
