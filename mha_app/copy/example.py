"""What the app says about the example on view: what is computed, on which device, and its padding."""

from __future__ import annotations

from mha_app.copy.experiments import heads_off_line
from mha_app.copy.markup import quote
from mha_app.copy.words import count, plural, verb

RANDOM_WEIGHTS = "random weights"  # the weights' name when no trained model is chosen


def describe(settings, example, layer: bool = True) -> str:
    """One line that says what is computed: the weights (and the layer on view, unless layer=False), the tokens, the
    sizes, then the modes a projected screen must show: the mask (causal, padded keys) and the heads switched off."""
    spec, cfg = settings.spec, example.cfg
    if spec.card:
        weights = f"{spec.card.name}, " + (f"layer {settings.view.layer} of {spec.card.n_layers}" if layer
                                           else f"{spec.card.n_layers} layers")
    else:
        weights = "tiny example" if spec.input == "tiny" else f"{RANDOM_WEIGHTS}, seed {spec.seed}"
    tokens = f"{example.n} tokens" if example.key_tokens is None else \
        f"{example.n} query tokens, {len(example.key_tokens)} key tokens"
    kv = f" · h_kv = {cfg.kv_heads}" if cfg.kv_heads != cfg.n_heads else ""
    mask = (" · causal mask" if cfg.causal else "") + (f" · {count(spec.pad, 'padded key')}" if spec.pad else "")
    off = f" · {heads_off_line(spec.ablate)}" if spec.ablate else ""
    return f"{weights} · {tokens} · d_model = {cfg.d_model} · h = {cfg.n_heads}{kv} · d_k = {cfg.d_k}{mask}{off}"


def device_label(device: str) -> str:
    """'cpu' -> 'CPU', 'cuda:0' -> 'GPU (cuda:0)', 'mps' -> 'GPU (mps)'."""
    return "CPU" if device == "cpu" else f"GPU ({device})"


def padding_note(last: int, tokens: list[str], key_tokens: list[str] | None = None,
                 first_query: int | None = None) -> str:
    """What padding is, and which tokens stand in for it here (the overview's note, the attention page, the mask
    tab): the last `last` keys. key_tokens: the source sentence's in cross-attention, where only keys are padded;
    first_query: with a causal mask, the query the pages start on (the last that is not padding)."""
    keys = tokens if key_tokens is None else key_tokens
    names = ", ".join(quote(t) for t in keys[-last:])
    text = ("**Padding** is filler: a batch computes several texts at once, so the shorter ones get filler tokens "
            "(such as [PAD]) at the end until all have one length, and the mask keeps every query from looking at "
            f"them. Here the last {last} {plural(last, 'token')} of "
            + ("the source sentence" if key_tokens is not None else "the sentence")
            + f" ({names}) {verb(last, 'stands', 'stand')} in for that filler: blocked as keys for every query.")
    if key_tokens is None:
        text += (" As queries, their outputs are thrown away (a model uses only the real tokens' outputs)"
                 + (f", so the pages start on query {first_query} {quote(tokens[first_query - 1])}, the last token "
                    "that is not padding." if first_query is not None else "."))
    return text
