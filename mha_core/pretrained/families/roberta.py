"""RoBERTa: BERT's layers and names; its positions count from padding_idx + 1, skipping padding tokens, and its
byte-level BPE tokenizer puts <s> ... </s> around a text."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from . import bert

MODEL_TYPE = "roberta"
ANCHOR = bert.ANCHOR
WRAP = ("<s>", "</s>")
embeddings, layer = bert.embeddings, bert.layer


def layout(hp: dict):
    pad = hp.get("pad_token_id", 1)

    def positions(ids: np.ndarray) -> np.ndarray:
        """As create_position_ids_from_input_ids: pad + 1, pad + 2, ... over the non-padding tokens, pad on padding."""
        real = (ids != pad).astype(np.int64)  # (n,)
        return np.cumsum(real) * real + pad

    base = bert.layout(hp, offset=pad + 1)
    return replace(base, positions=positions)
