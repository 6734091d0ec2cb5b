"""mha_core: multi-head attention computed step by step, with every intermediate kept for display."""

import os

# Read by torch when it is first imported (this package imports it lazily, in several places): large trace
# tensors are allocated on every call, and huge pages make those allocations several times cheaper.
os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")

from . import cost, stats
from .attention_rollout import rollout
from .config import MAX_D_MODEL, MAX_HEADS, MAX_TOKENS, ConfigError, MHAConfig, divisors
from .engine import forward
from .inputs import embed, positional_encoding, random_input, tokenize
from .masks import causal_mask, padding_mask
from .plant import plant_head
from .query_key_plane import QKPlane, qk_plane
from .trace import Trace
from .weighted_norms import contributions
from .weights import MHAWeights, config_from_torch, init_weights, weights_from_torch, weights_to_torch

__all__ = [
    "MAX_D_MODEL", "MAX_HEADS", "MAX_TOKENS", "ConfigError", "MHAConfig", "MHAWeights", "QKPlane", "Trace",
    "causal_mask", "config_from_torch", "contributions", "cost", "divisors", "embed", "forward", "init_weights",
    "padding_mask", "plant_head", "positional_encoding", "qk_plane", "random_input", "rollout", "stats", "tokenize",
    "weights_from_torch", "weights_to_torch",
]
