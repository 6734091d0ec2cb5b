"""One module per family of checkpoints, each holding only what sets it apart (checkpoint.py holds the rest).

A family module has ANCHOR (the name of its token embeddings, which finds the prefix its model class adds),
layout(hp) (a checkpoint.Layout from config.json), embeddings(read, hp) and layer(read, l, hp) (the tensors by the
names checkpoint.CheckpointModel reads, held as released), and, for a byte-level BPE encoder, WRAP (the tokens
around a text when the tokenizer is rebuilt from vocab.json and merges.txt).
"""

from __future__ import annotations

from . import bert, distilbert, gpt2, llama, mistral, qwen2, qwen3, roberta

FAMILIES = {module.MODEL_TYPE: module for module in (bert, roberta, distilbert, gpt2, llama, mistral, qwen2, qwen3)}

__all__ = ["FAMILIES"]
