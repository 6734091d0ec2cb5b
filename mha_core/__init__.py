"""mha_core: multi-head attention computed step by step, with every intermediate kept for display.

Sub-packages by job, from the bottom up: `attention` (the engine), `analysis` and `pretrained` (reading traces;
two trained models), `experiments` (on heads), `teaching` (formulas, questions, worked examples) and `figures`.
"""

import os

# Read by torch when it is first imported (this package imports it lazily, in several places): large trace
# tensors are allocated on every call, and huge pages make those allocations several times cheaper.
os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")

from .analysis import cost, stats
from .analysis.contributions import contributions
from .analysis.qk_plane import QKPlane, qk_plane
from .analysis.rollout import rollout
from .attention import (
    MAX_D_MODEL,
    MAX_HEADS,
    MAX_TOKENS,
    ConfigError,
    MHAConfig,
    MHAWeights,
    Trace,
    causal_mask,
    config_from_torch,
    divisors,
    embed,
    forward,
    init_weights,
    padding_mask,
    positional_encoding,
    random_input,
    tokenize,
    weights_from_torch,
    weights_to_torch,
)
from .experiments.plant import plant_head

__all__ = [
    "MAX_D_MODEL", "MAX_HEADS", "MAX_TOKENS", "ConfigError", "MHAConfig", "MHAWeights", "QKPlane", "Trace",
    "causal_mask", "config_from_torch", "contributions", "cost", "divisors", "embed", "forward", "init_weights",
    "padding_mask", "plant_head", "positional_encoding", "qk_plane", "random_input", "rollout", "stats", "tokenize",
    "weights_from_torch", "weights_to_torch",
]
