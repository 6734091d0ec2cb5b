"""Qwen2: Llama with biases on Q, K and V (none on W_O), and a sliding window on the layers layer_types marks
"sliding_attention" (with use_sliding_window, from layer max_window_layers on, when config.json has no layer_types)."""

from __future__ import annotations

from . import llama

MODEL_TYPE = "qwen2"
ANCHOR = llama.ANCHOR
embeddings, layer = llama.embeddings, llama.layer


def windows(hp: dict) -> tuple[int | None, ...]:
    """Each layer's sliding window, as the Qwen2 and Qwen3 configurations work them out."""
    n = hp["num_hidden_layers"]
    window = hp.get("sliding_window") if hp.get("use_sliding_window", False) else None
    types = hp.get("layer_types") or ["sliding_attention" if window is not None and l >= hp.get("max_window_layers", 28)
                                      else "full_attention" for l in range(n)]
    return tuple(window if kind == "sliding_attention" else None for kind in types)


def layout(hp: dict):
    return llama.layout(hp, windows=windows(hp), bias=True)
