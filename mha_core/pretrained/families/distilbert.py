"""DistilBERT: a post-norm encoder like BERT without token types, its attention in q_lin, k_lin, v_lin, out_lin and
its LayerNorms with eps 1e-12 (fixed in its code, not in config.json)."""

from __future__ import annotations

from ...attention.config import MHAConfig
from ..checkpoint import Layout
from .bert import positions

MODEL_TYPE = "distilbert"
ANCHOR = "embeddings.word_embeddings.weight"


def layout(hp: dict) -> Layout:
    config = MHAConfig(hp["dim"], hp["n_heads"])
    return Layout(kind="encoder", configs=(config,) * hp["n_layers"], d_ff=hp["hidden_dim"], norm="layer",
                  norm_eps=1e-12, activation=hp.get("activation", "gelu"), gated=False,
                  max_positions=hp.get("max_position_embeddings", 512), positions=positions)


def embeddings(read, hp: dict) -> dict:
    return dict(word=read("embeddings.word_embeddings.weight"), position=read("embeddings.position_embeddings.weight"),
                embed_norm_w=read("embeddings.LayerNorm.weight"), embed_norm_b=read("embeddings.LayerNorm.bias"))


def layer(read, l: int, hp: dict) -> dict:
    p = f"transformer.layer.{l}."
    names = dict(W_Q="attention.q_lin.weight", b_Q="attention.q_lin.bias", W_K="attention.k_lin.weight",
                 b_K="attention.k_lin.bias", W_V="attention.v_lin.weight", b_V="attention.v_lin.bias",
                 W_O="attention.out_lin.weight", b_O="attention.out_lin.bias",
                 norm1_w="sa_layer_norm.weight", norm1_b="sa_layer_norm.bias",
                 W_in="ffn.lin1.weight", b_in="ffn.lin1.bias", W_out="ffn.lin2.weight", b_out="ffn.lin2.bias",
                 norm2_w="output_layer_norm.weight", norm2_b="output_layer_norm.bias")
    return {name: read(p + tensor) for name, tensor in names.items()}
