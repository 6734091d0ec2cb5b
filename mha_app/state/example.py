"""Everything one view of the app shows, computed from a Spec (no Streamlit here)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from mha_app.copy import example as words
from mha_app.state.settings import APP_MAX_TOKENS, Spec, view_defaults
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
from mha_core.attention.masks import padding_problem
from mha_core.experiments.plant import LEAST_SQUARES, PATTERNS, plant_head
from mha_core.teaching.presets import TINY_CONFIG, TINY_TOKENS, tiny_example

CAUSAL_NOTE = ("A causal mask is on, as in a decoder: each token may look only at itself and the tokens before "
               "it.")


@dataclass(frozen=True)
class Example:
    """The tokens, configuration, weights and trace of one example, plus notes for the reader.

    For a pretrained model, `run` holds every layer, and `trace` and `weights` are those of layer `layer`.
    `key_tokens` are the keys' and values' tokens in cross-attention (None: the queries' own tokens).
    """

    tokens: list[str]
    cfg: MHAConfig
    weights: MHAWeights
    trace: Trace
    notes: tuple[str, ...] = ()
    run: object | None = None
    layer: int = 1
    key_tokens: list[str] | None = None

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def m_source(self) -> int | None:
        """In cross-attention, the source sentence's token count (the keys); None in self-attention."""
        return None if self.key_tokens is None else len(self.key_tokens)

    @property
    def keys(self) -> list[str]:
        """The tokens the keys and values come from (the queries' tokens in self-attention)."""
        return self.tokens if self.key_tokens is None else self.key_tokens

    def at_layer(self, layer: int, model) -> Example:
        """The same run seen at another layer (1-based) of `model`; the example itself for random weights."""
        if self.run is None or layer == self.layer:
            return self
        if not 1 <= layer <= len(self.run.layers):
            raise ConfigError(f"The model has layers 1 to {len(self.run.layers)}; layer {layer} does not exist.")
        return dataclasses.replace(self, trace=self.run.layers[layer - 1],
                                   weights=model.layer_weights[layer - 1].attention, layer=layer)


def _padding(m: int, pad: int) -> np.ndarray | None:
    if pad <= 0:
        return None
    if problem := padding_problem(m, pad):
        raise ConfigError(problem)
    return padding_mask(m, pad)


def head_mask(spec: Spec, n_heads: int) -> np.ndarray | None:
    """(h,) 1 for every head, 0 for the spec's switched-off heads; None when no head is switched off."""
    if not spec.ablate:
        return None
    mask = np.ones(n_heads)
    mask[[i - 1 for i in spec.ablate]] = 0.0
    return mask


def model_head_mask(spec: Spec, model, layer: int) -> np.ndarray | None:
    """(n_layers, h) for a trained model: the spec's switched-off heads in layer `layer` (1-based), 1 elsewhere."""
    if not spec.ablate:
        return None
    mask = np.ones((model.n_layers, model.n_heads))
    mask[layer - 1] = head_mask(spec, model.n_heads)
    return mask


def build_example(spec: Spec, model=None, layer: int = 1, device: str = "auto") -> Example:
    """The example a spec describes, run through mc.forward; `model` is the loaded pretrained model, if any.

    The spec is taken as given (the app passes Spec.normalised()); what cannot be computed raises the engine's
    ConfigError.

    With a trained model, the switched-off heads (spec.ablate) are those of layer `layer`.
    """
    backend = spec.backend
    if spec.card is not None:
        run = model.run(spec.text, backend=backend, device=device, head_mask=model_head_mask(spec, model, layer))
        first = Example(tokens=list(run.tokens), cfg=model.config, weights=model.layer_weights[0].attention,
                        trace=run.layers[0], notes=(run.message,) if run.message else (), run=run)
        return first.at_layer(layer, model)
    notes = []
    key_tokens, x_kv = None, None
    if spec.input == "tiny":
        tokens = list(TINY_TOKENS)
        x, w = tiny_example()
        cfg = dataclasses.replace(TINY_CONFIG, causal=spec.causal, scale=spec.softmax_scale)
        notes.append("The tiny example uses fixed integer weights and no bias, so every number can be checked by hand"
                     + (" (except the planted head's queries)." if spec.plant != "none" else "."))
    else:
        cfg = MHAConfig(spec.d_model, spec.h, n_kv_heads=spec.kv_heads or None,
                        causal=spec.causal, scale=spec.softmax_scale)
        if spec.input in ("sentence", "pair"):
            tokens = tokenize(spec.query_text, max_tokens=APP_MAX_TOKENS)                    # the queries' tokens
            x = embed(tokens, spec.d_model, seed=spec.seed, positional=spec.pe)              # (n, d_model)
        elif spec.input == "random":
            tokens = [f"t{i + 1}" for i in range(spec.n)]
            x = random_input(spec.n, spec.d_model, seed=spec.seed)
        else:
            raise ConfigError(f"Unknown input kind {spec.input!r}: choose sentence, random, tiny or pair.")
        if spec.input == "pair":
            key_tokens = tokenize(spec.text, max_tokens=APP_MAX_TOKENS)  # the source sentence: keys and values
            x_kv = embed(key_tokens, spec.d_model, seed=spec.seed, positional=spec.pe)        # (m, d_model)
        w = init_weights(cfg, seed=spec.seed)
    if spec.plant != "none":
        if spec.plant_head > cfg.n_heads:
            raise ConfigError(f"There are {cfg.n_heads} heads, so head {spec.plant_head} cannot be planted.")
        w = plant_head(w, cfg, spec.plant_head - 1, spec.plant, spec.strength, x, kv=x_kv)
        columns = f"{(spec.plant_head - 1) * cfg.d_k + 1}–{spec.plant_head * cfg.d_k}"
        wanted = "all 0" if spec.plant == "uniform" else f"{spec.strength:g} on the rule's key and 0 elsewhere"
        notes.append(f"Head {spec.plant_head} is planted: {PATTERNS[spec.plant]}. Columns {columns} of W_Q"
                     f"{' and entries ' + columns + ' of b_Q' if cfg.bias else ''} (its queries, as the projection "
                     f"page draws W_Q) were solved for, by {LEAST_SQUARES}, so that the "
                     f"scores softmax sees are {wanted}; W_K, W_V, W_O and the other heads are unchanged.")
    if spec.causal:
        notes.append(CAUSAL_NOTE)
    if spec.pad:
        notes.append(padding_note(spec, tokens, key_tokens))
    m = len(key_tokens or tokens)
    trace = forward(x, w, cfg, kv=x_kv, key_padding_mask=_padding(m, spec.pad), head_mask=head_mask(spec, cfg.n_heads),
                    backend=backend, device=device)
    return Example(tokens=tokens, cfg=cfg, weights=w, trace=trace, notes=tuple(notes), key_tokens=key_tokens)


def padding_note(spec: Spec, tokens: list[str], key_tokens: list[str] | None = None) -> str:
    """copy.example.padding_note for this spec's padding (and, with a causal mask, the query the pages start on)."""
    first = view_defaults(spec, len(tokens))["query"] if spec.causal and key_tokens is None else None
    return words.padding_note(spec.pad, tokens, key_tokens, first)
