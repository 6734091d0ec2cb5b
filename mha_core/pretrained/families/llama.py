"""Llama: a pre-norm decoder with RMSNorm, a SwiGLU feed-forward, grouped-query attention and rotary positions
(RoPE), no biases unless attention_bias (or mlp_bias) says so. Llama 3.1's rope_scaling "llama3" rescales the RoPE
frequencies: slow pairs turn `factor` times slower, fast ones as before, those in between blended smoothly.

Mistral, Qwen2 and Qwen3 are this with a few options (their modules): a sliding window, biases on Q, K and V, a
per-head norm on queries and keys.
"""

from __future__ import annotations

import math

import numpy as np

from ...attention.config import ConfigError, MHAConfig
from ..checkpoint import Layout

MODEL_TYPE = "llama"
ANCHOR = "embed_tokens.weight"
ROPE_TYPES = ("default", "linear", "llama3")


def rope(hp: dict) -> tuple[float, tuple[float, ...] | None]:
    """(rope_theta, the rescaled frequencies or None), from config.json's rope_parameters (transformers 5) or
    rope_theta with rope_scaling (earlier ones)."""
    params = dict(hp.get("rope_parameters") or {})
    params.setdefault("rope_theta", hp.get("rope_theta", 10000.0))
    params.update(hp.get("rope_scaling") or {})
    kind = params.get("rope_type", params.get("type", "default"))
    if kind not in ROPE_TYPES:
        raise ConfigError(f"rope type {kind!r} is not supported; supported: {', '.join(ROPE_TYPES)}.")
    if params.get("partial_rotary_factor", 1.0) != 1.0:
        raise ConfigError("RoPE on part of each head (partial_rotary_factor) is not supported; the engine turns all of "
                          "its dimensions.")
    theta = float(params["rope_theta"])
    if kind == "default":
        return theta, None
    d_k = head_dim(hp)
    freqs = theta ** (np.arange(d_k // 2) * (-2.0 / d_k))  # (d_k/2,) the angle per position of each pair
    factor = float(params["factor"])
    if kind == "linear":
        return theta, tuple(freqs / factor)
    # llama3, as transformers' _compute_llama3_parameters
    low, high = float(params["low_freq_factor"]), float(params["high_freq_factor"])
    old_context = params["original_max_position_embeddings"]
    wavelength = 2 * math.pi / freqs
    scaled = np.where(wavelength > old_context / low, freqs / factor, freqs)
    smooth = (old_context / wavelength - low) / (high - low)
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelength >= old_context / high) & (wavelength <= old_context / low)
    return theta, tuple(np.where(medium, blended, scaled))


def head_dim(hp: dict) -> int:
    return hp.get("head_dim") or hp["hidden_size"] // hp["num_attention_heads"]


def layout(hp: dict, windows=None, qk_norm: bool = False, bias: bool | None = None) -> Layout:
    """windows: each layer's sliding window (None = none); qk_norm: Qwen3's per-head RMSNorm on queries and keys;
    bias: whether Q, K and V add biases (None = attention_bias)."""
    theta, frequencies = rope(hp)
    n_layers = hp["num_hidden_layers"]
    windows = windows or (None,) * n_layers
    eps = float(hp.get("rms_norm_eps", 1e-6))
    configs = tuple(MHAConfig(hp["hidden_size"], hp["num_attention_heads"],
                              n_kv_heads=hp.get("num_key_value_heads") or hp["num_attention_heads"],
                              bias=bool(hp.get("attention_bias", False)) if bias is None else bias,
                              causal=True, rope_theta=theta, head_dim=head_dim(hp), sliding_window=window,
                              rope_frequencies=frequencies, qk_norm_eps=eps if qk_norm else None)
                    for window in windows)
    return Layout(kind="decoder", configs=configs, d_ff=hp["intermediate_size"], norm="rms", norm_eps=eps,
                  activation=hp.get("hidden_act", "silu"), gated=True,
                  max_positions=hp.get("max_position_embeddings", 2048),
                  tied_output=hp.get("tie_word_embeddings", False))


def embeddings(read, hp: dict) -> dict:
    return dict(word=read("embed_tokens.weight"), final_norm_w=read("norm.weight"),
                output=read("lm_head.weight", optional=True))


def layer(read, l: int, hp: dict) -> dict:
    p = f"layers.{l}."
    names = dict(W_Q="self_attn.q_proj.weight", W_K="self_attn.k_proj.weight", W_V="self_attn.v_proj.weight",
                 W_O="self_attn.o_proj.weight", b_Q="self_attn.q_proj.bias", b_K="self_attn.k_proj.bias",
                 b_V="self_attn.v_proj.bias", b_O="self_attn.o_proj.bias",
                 q_norm="self_attn.q_norm.weight", k_norm="self_attn.k_norm.weight",
                 norm1_w="input_layernorm.weight", norm2_w="post_attention_layernorm.weight",
                 W_gate="mlp.gate_proj.weight", W_in="mlp.up_proj.weight", W_out="mlp.down_proj.weight",
                 b_gate="mlp.gate_proj.bias", b_in="mlp.up_proj.bias", b_out="mlp.down_proj.bias")
    tensors = {name: read(p + tensor, optional=True) for name, tensor in names.items()}
    for name in ("W_Q", "W_K", "W_V", "W_O", "norm1_w", "norm2_w", "W_gate", "W_in", "W_out"):
        if tensors[name] is None:
            read(p + names[name])  # raises, naming the missing tensor
    return {name: a for name, a in tensors.items() if a is not None}
