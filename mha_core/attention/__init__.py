"""The attention engine: a layer's configuration and weights, its inputs and masks, the four steps, and the Trace.

`engine.attention_steps` is the readable NumPy reference; `torch_backend` holds the same steps in PyTorch.
"""

from .config import MAX_D_MODEL, MAX_HEADS, MAX_TOKENS, ConfigError, MHAConfig, divisors
from .engine import forward
from .inputs import embed, positional_encoding, random_input, tokenize
from .masks import causal_mask, padding_mask
from .trace import Trace
from .weights import MHAWeights, config_from_torch, init_weights, weights_from_torch, weights_to_torch

__all__ = [
    "MAX_D_MODEL", "MAX_HEADS", "MAX_TOKENS", "ConfigError", "MHAConfig", "MHAWeights", "Trace", "causal_mask",
    "config_from_torch", "divisors", "embed", "forward", "init_weights", "padding_mask", "positional_encoding",
    "random_input", "tokenize", "weights_from_torch", "weights_to_torch",
]
