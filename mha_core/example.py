"""Everything one view of the app shows, computed from plain settings (no Streamlit here)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from .app_state import APP_MAX_TOKENS
from .config import ConfigError, MHAConfig
from .engine import forward
from .inputs import embed, random_input, tokenize
from .masks import padding_mask
from .presets import TINY_CONFIG, TINY_TOKENS, tiny_example
from .trace import Trace
from .weights import MHAWeights, init_weights


@dataclass(frozen=True)
class Example:
    """The tokens, configuration, weights and trace of one example, plus notes for the reader."""

    tokens: list[str]
    cfg: MHAConfig
    weights: MHAWeights
    trace: Trace
    notes: list[str] = field(default_factory=list)
    run: object | None = None  # the whole MiniLMRun (every layer) when the weights are pretrained

    @property
    def n(self) -> int:
        return len(self.tokens)


def _padding(n: int, pad: int) -> np.ndarray | None:
    if pad <= 0:
        return None
    if pad >= n:
        raise ConfigError(
            f"Masking the last {pad} of {n} tokens as padding would leave no token to attend to. "
            f"Choose at most {n - 1}."
        )
    return padding_mask(n, pad)


def build_example(input_mode: str, text: str, n: int, d_model: int, n_heads: int, seed: int, positional: bool,
                  causal: bool, pad: int, backend: str, device: str = "auto") -> Example:
    """A random-weights (or tiny hand-checkable) example, run through mc.forward."""
    notes = []
    if input_mode == "tiny":
        tokens = list(TINY_TOKENS)
        x, w = tiny_example()
        cfg = dataclasses.replace(TINY_CONFIG, causal=causal)
        notes.append("The tiny example uses fixed integer weights and no bias, so every number can be checked by hand.")
    else:
        cfg = MHAConfig(d_model, n_heads, causal=causal)
        if input_mode == "sentence":
            tokens = tokenize(text, max_tokens=APP_MAX_TOKENS)
            x = embed(tokens, d_model, seed=seed, positional=positional)
        elif input_mode == "random":
            tokens = [f"t{i + 1}" for i in range(n)]
            x = random_input(n, d_model, seed=seed)
        else:
            raise ConfigError(f"Unknown input kind {input_mode!r}: choose sentence, random or tiny.")
        w = init_weights(cfg, seed=seed)
    kpm = _padding(len(tokens), pad)
    trace = forward(x, w, cfg, key_padding_mask=kpm, backend=backend, device=device)
    return Example(tokens=tokens, cfg=cfg, weights=w, trace=trace, notes=notes)


def build_pretrained_example(model, text: str, layer: int, backend: str, device: str = "auto") -> Example:
    """Layer `layer` (1-based) of a pretrained model (mha_core.pretrained.MiniLM) reading `text`."""
    if not 1 <= layer <= model.n_layers:
        raise ConfigError(f"The model has layers 1 to {model.n_layers}; layer {layer} does not exist.")
    run = model.run(text, backend=backend, device=device)
    notes = [run.message] if run.message else []
    return Example(tokens=list(run.tokens), cfg=model.config, weights=model.layer_weights[layer - 1].attention,
                   trace=run.layers[layer - 1], notes=notes, run=run)


def torch_difference(example: Example) -> float:
    """Largest |difference| between our output and weights and torch.nn.MultiheadAttention's, on the same input.

    Rows that are fully blocked are left out: PyTorch returns NaN there, we return zeros on purpose.
    """
    import torch

    from .weights import weights_to_torch

    tr = example.trace
    module = weights_to_torch(example.weights, example.cfg)
    x = torch.tensor(tr.x)[None]
    attn_mask = None if tr.mask is None else torch.tensor(tr.mask[0])
    with torch.inference_mode():
        out, weights = module(x, x, x, attn_mask=attn_mask, need_weights=True, average_attn_weights=False)
    keep = ~tr.blocked_rows[0]
    d_out = np.abs(out[0].numpy()[keep] - tr.output[keep]).max(initial=0.0)
    d_w = np.abs(weights[0].numpy()[:, keep] - tr.weights[:, keep]).max(initial=0.0)
    return float(max(d_out, d_w))
