"""Everything one view of the app shows, computed from a Spec (no Streamlit here)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from mha_core import (
    ConfigError,
    MHAConfig,
    MHAWeights,
    Trace,
    embed,
    forward,
    init_weights,
    padding_mask,
    random_input,
    tokenize,
)
from mha_core.presets import TINY_CONFIG, TINY_TOKENS, tiny_example

from .settings import APP_MAX_TOKENS, BACKENDS, Spec


@dataclass(frozen=True)
class Example:
    """The tokens, configuration, weights and trace of one example, plus notes for the reader.

    For a pretrained model, `run` holds every layer, and `trace` and `weights` are those of layer `layer`.
    """

    tokens: list[str]
    cfg: MHAConfig
    weights: MHAWeights
    trace: Trace
    notes: tuple[str, ...] = ()
    run: object | None = None
    layer: int = 1

    @property
    def n(self) -> int:
        return len(self.tokens)

    def at_layer(self, layer: int, model) -> Example:
        """The same run seen at another layer (1-based) of `model`; the example itself for random weights."""
        if self.run is None or layer == self.layer:
            return self
        if not 1 <= layer <= len(self.run.layers):
            raise ConfigError(f"The model has layers 1 to {len(self.run.layers)}; layer {layer} does not exist.")
        return dataclasses.replace(self, trace=self.run.layers[layer - 1],
                                   weights=model.layer_weights[layer - 1].attention, layer=layer)


def _padding(n: int, pad: int) -> np.ndarray | None:
    if pad <= 0:
        return None
    if pad >= n:
        raise ConfigError(
            f"Masking the last {pad} of {n} tokens as padding would leave no token to attend to. "
            f"Choose at most {n - 1}."
        )
    return padding_mask(n, pad)


def build_example(spec: Spec, model=None, layer: int = 1, device: str = "auto") -> Example:
    """The example a spec describes, run through mc.forward; `model` is the loaded pretrained model, if any."""
    backend = BACKENDS[spec.backend]
    if spec.card is not None:
        run = model.run(spec.text, backend=backend, device=device)
        first = Example(tokens=list(run.tokens), cfg=model.config, weights=model.layer_weights[0].attention,
                        trace=run.layers[0], notes=(run.message,) if run.message else (), run=run)
        return first.at_layer(layer, model)
    notes = ()
    if spec.input == "tiny":
        tokens = list(TINY_TOKENS)
        x, w = tiny_example()
        cfg = dataclasses.replace(TINY_CONFIG, causal=spec.causal)
        notes = ("The tiny example uses fixed integer weights and no bias, so every number can be checked by hand.",)
    else:
        cfg = MHAConfig(spec.d_model, spec.h, causal=spec.causal)
        if spec.input == "sentence":
            tokens = tokenize(spec.text, max_tokens=APP_MAX_TOKENS)
            x = embed(tokens, spec.d_model, seed=spec.seed, positional=spec.pe)
        elif spec.input == "random":
            tokens = [f"t{i + 1}" for i in range(spec.n)]
            x = random_input(spec.n, spec.d_model, seed=spec.seed)
        else:
            raise ConfigError(f"Unknown input kind {spec.input!r}: choose sentence, random or tiny.")
        w = init_weights(cfg, seed=spec.seed)
    trace = forward(x, w, cfg, key_padding_mask=_padding(len(tokens), spec.pad), backend=backend, device=device)
    return Example(tokens=tokens, cfg=cfg, weights=w, trace=trace, notes=notes)
