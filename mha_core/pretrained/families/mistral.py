"""Mistral: Llama with a sliding window on every layer when config.json sets sliding_window (each query sees only
the last sliding_window keys, itself included)."""

from __future__ import annotations

from . import llama

MODEL_TYPE = "mistral"
ANCHOR = llama.ANCHOR
embeddings, layer = llama.embeddings, llama.layer


def layout(hp: dict):
    return llama.layout(hp, windows=(hp.get("sliding_window"),) * hp["num_hidden_layers"])
