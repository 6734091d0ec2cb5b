"""What the pretrained models share: a tokenised text, a run over every layer, and the loop that makes it."""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass

import numpy as np

from ..attention.config import ConfigError
from ..attention.engine import BACKENDS
from ..attention.trace import Trace
from .functional import frozen


class ModelNotInstalledError(ConfigError):
    """A model's weights package is not installed; the message says how to add it."""


@dataclass(frozen=True, eq=False)
class TokenizedText:
    """A text as a model reads it: at most the model's max_tokens tokens, special tokens included."""

    tokens: list[str]
    ids: np.ndarray      # (n,) vocabulary ids
    n_in_text: int       # how many tokens the whole text had before truncation
    truncated: bool
    message: str         # a sentence for the student, "" when there is nothing to say


@dataclass(frozen=True, eq=False)
class PretrainedRun:
    """One pass of a pretrained model over a text, with every layer's attention trace.

    layers[l]: the mc.Trace of layer l's self-attention; hidden_states[l]: the input of layer l (n, d_model),
    hidden_states[n_layers] being the last layer's output.
    """

    text: str
    tokens: list[str]
    token_ids: np.ndarray                 # (n,)
    layers: tuple[Trace, ...]             # n_layers traces; weights (h, n, n)
    hidden_states: tuple[np.ndarray, ...]  # n_layers + 1 arrays (n, d_model)
    truncated: bool
    message: str
    n_in_text: int
    backend: str
    head_mask: np.ndarray | None           # (n_layers, h) the factors this run gave each head, None = all 1

    @property
    def output(self) -> np.ndarray:
        """The last hidden state (n, d_model)."""
        return self.hidden_states[-1]

    @functools.cached_property
    def attentions(self) -> np.ndarray:
        """Every layer's attention weights stacked, (n_layers, h, n, n); made on first use, then kept."""
        return frozen(np.stack([trace.weights for trace in self.layers]))


def torch_view(a: np.ndarray):
    """A torch tensor sharing a's memory, also when a is read-only (a loaded model's arrays are).

    torch warns that it could write to such an array; the code here only reads model weights, never writes them,
    and a view keeps the torch path from doubling the model's memory.
    """
    import torch

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        return torch.from_numpy(a)


class PretrainedModel:
    """The methods the loaded models share.

    A model is a frozen dataclass with the fields config (MHAConfig), n_layers, layer_weights and tokenizer, a class
    attribute `name` for messages, and the methods tokenize, embed, layer (which takes the layer's weights as
    `weights`) and make_run. A model whose torch layer uses _torch_layer also has the field _torch_cache (a dict)
    and `_TORCH_NAMES`, the per-layer arrays that layer reads.
    """

    name = "the model"
    _TORCH_NAMES: tuple[str, ...] = ()

    @property
    def n_heads(self) -> int:
        return self.config.n_heads

    @property
    def d_model(self) -> int:
        return self.config.d_model

    @property
    def special_tokens(self) -> frozenset[str]:
        """The tokenizer's special tokens ([CLS], [SEP], ... or <|im_start|>, <|endoftext|>, ...)."""
        return frozenset(t.content for t in self.tokenizer.get_added_tokens_decoder().values() if t.special)

    @property
    def added_tokens(self) -> tuple[str, ...]:
        """The tokens the tokenizer adds to every text, in order: ("[CLS]", "[SEP]") for BERT, () for SmolLM2."""
        return tuple(self.tokenizer.encode("").tokens)

    def encode(self, text: str) -> tuple[list[str], list[int]]:
        """The tokens and ids of the whole text; raise ConfigError if it is not text or blank."""
        if not isinstance(text, str):
            raise ConfigError(f"The input must be text, got {type(text).__name__}.")
        if not text.strip():
            raise ConfigError(f"The text is empty: type a sentence for {self.name} to read.")
        encoding = self.tokenizer.encode(text)
        return list(encoding.tokens), list(encoding.ids)

    def run(self, text: str, backend: str = "numpy", device: str = "auto", head_mask=None):
        """Tokenise text and run all layers; backend ("numpy" or "torch") and device as for mc.forward.

        head_mask (n_layers, h): row l multiplies the heads' outputs of layer l before its W_O (1 = keep,
        0 = switch the head off), as mc.forward's head_mask does for one layer; None keeps every head.
        """
        if backend not in BACKENDS:
            raise ConfigError(f"backend must be one of {', '.join(BACKENDS)}; got {backend!r}.")
        head_mask = self._check_head_mask(head_mask)
        tok = self.tokenize(text)
        hidden_states, traces = [self.embed(tok.ids)], []  # hidden_states[0]: (n, d_model)
        for l, weights in enumerate(self.weights_in_order(backend)):
            trace, out = self.layer(l, hidden_states[-1], backend=backend, device=device,
                                    head_mask=None if head_mask is None else head_mask[l], weights=weights)
            traces.append(trace)
            hidden_states.append(out)
        # Read-only from here on: a run may be cached and shared between the app's sessions.
        for array in [*hidden_states, *(a for trace in traces for a in trace.arrays().values())]:
            frozen(array)
        return self.make_run(dict(text=text, tokens=tok.tokens, token_ids=tok.ids, layers=tuple(traces),
                                  hidden_states=tuple(hidden_states), truncated=tok.truncated, message=tok.message,
                                  n_in_text=tok.n_in_text, backend=backend, head_mask=head_mask))

    def weights_in_order(self, backend: str = "numpy"):
        """Each layer's weights as layer() reads them, first to last, for a run on `backend` (a model may prepare them
        as the run goes, e.g. with that backend's kernels)."""
        return iter(self.layer_weights)

    def _check_head_mask(self, head_mask) -> np.ndarray | None:
        """head_mask as a read-only float64 (n_layers, h) array, or None; ConfigError in words if it cannot work."""
        if head_mask is None:
            return None
        mask = np.asarray(head_mask)
        shape = (self.n_layers, self.n_heads)
        if mask.dtype == bool or mask.dtype.kind not in "iuf":
            raise ConfigError("head_mask must hold numbers (1.0 = keep a head, 0.0 = switch it off), "
                              f"got values of type {mask.dtype}.")
        if mask.shape != shape:
            raise ConfigError(f"head_mask needs one number per layer and head, shape {shape}; got {mask.shape}.")
        if not np.isfinite(mask).all():
            raise ConfigError("head_mask contains NaN or infinite numbers; each head's factor must be finite.")
        return frozen(mask.astype(np.float64))

    def _torch_layer(self, l: int) -> dict:
        """Layer l's arrays named in _TORCH_NAMES as torch tensors (views), made on the first torch run."""
        if "layers" not in self._torch_cache:
            # Two threads may both build the cache; the second simply replaces the first with equal views.
            self._torch_cache["layers"] = tuple(
                {name: torch_view(getattr(w, name)) for name in self._TORCH_NAMES} for w in self.layer_weights
            )
        return self._torch_cache["layers"][l]
