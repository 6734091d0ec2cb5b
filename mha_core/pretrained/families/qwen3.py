"""Qwen3: Qwen2's layers without the biases, with an RMSNorm on each head's query and key (q_norm, k_norm, over
head_dim numbers) before RoPE, and a head_dim of its own (not hidden_size / num_attention_heads)."""

from __future__ import annotations

from . import llama, qwen2

MODEL_TYPE = "qwen3"
ANCHOR = llama.ANCHOR
embeddings, layer = llama.embeddings, llama.layer


def layout(hp: dict):
    return llama.layout(hp, windows=qwen2.windows(hp), qk_norm=True)
