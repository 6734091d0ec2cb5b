"""GPT-2: a pre-norm decoder with learned positions. Its Q, K and V are one fused c_attn, and every matrix is a
Conv1D that stores W as (in_features, out_features): transposed here (a view) into the (out, in) of MHAWeights.
Scores are scaled by 1/sqrt(d_k) when scale_attn_weights, and also by 1/(layer + 1) when
scale_attn_by_inverse_layer_idx."""

from __future__ import annotations

from ...attention.config import MHAConfig
from ..checkpoint import Layout
from .bert import positions

MODEL_TYPE = "gpt2"
ANCHOR = "wte.weight"


def layout(hp: dict) -> Layout:
    d, h = hp["n_embd"], hp["n_head"]

    def config(l: int) -> MHAConfig:
        scale = (d // h) ** -0.5 if hp.get("scale_attn_weights", True) else 1.0
        if hp.get("scale_attn_by_inverse_layer_idx", False):
            scale /= l + 1
        return MHAConfig(d, h, causal=True, scale=scale)

    return Layout(kind="decoder", configs=tuple(config(l) for l in range(hp["n_layer"])),
                  d_ff=hp.get("n_inner") or 4 * d, norm="layer", norm_eps=float(hp.get("layer_norm_epsilon", 1e-5)),
                  activation=hp.get("activation_function", "gelu_new"), gated=False, max_positions=hp["n_positions"],
                  positions=positions, tied_output=hp.get("tie_word_embeddings", True))


def embeddings(read, hp: dict) -> dict:
    return dict(word=read("wte.weight"), position=read("wpe.weight"), final_norm_w=read("ln_f.weight"),
                final_norm_b=read("ln_f.bias"), output=read("lm_head.weight", optional=True))


def layer(read, l: int, hp: dict) -> dict:
    p, d = f"h.{l}.", hp["n_embd"]
    qkv, qkv_bias = read(p + "attn.c_attn.weight").T, read(p + "attn.c_attn.bias")  # (3 d_model, d_model), (3 d_model,)
    return dict(W_Q=qkv[:d], W_K=qkv[d : 2 * d], W_V=qkv[2 * d :], b_Q=qkv_bias[:d], b_K=qkv_bias[d : 2 * d],
                b_V=qkv_bias[2 * d :], W_O=read(p + "attn.c_proj.weight").T, b_O=read(p + "attn.c_proj.bias"),
                norm1_w=read(p + "ln_1.weight"), norm1_b=read(p + "ln_1.bias"),
                norm2_w=read(p + "ln_2.weight"), norm2_b=read(p + "ln_2.bias"),
                W_in=read(p + "mlp.c_fc.weight").T, b_in=read(p + "mlp.c_fc.bias"),
                W_out=read(p + "mlp.c_proj.weight").T, b_out=read(p + "mlp.c_proj.bias"))
