"""What the sidebar says: the captions and help texts of its controls, the notes when a value had to change, and the
Share box."""

from __future__ import annotations

from mha_app.copy.markup import quote
from mha_app.copy.words import count, heads

# --- Model and input ---------------------------------------------------------------------------------------------

# The first choice of weights when the input is the tiny example, whose weights are set by hand, not drawn at random.
TINY_WEIGHTS = "hand-set weights (the tiny example)"
PAIR_SOURCE = "The source sentence: keys and values"
PAIR_SOURCE_HELP = ("Cross-attention: the keys and values come from this sentence, the source that a translating "
                    "decoder reads; the queries come from the sentence being written from it, below.")
EXAMPLE_HELP = "Fills the sentence box; you can edit it afterwards."
EXAMPLE_PLACEHOLDER = "Pick an example…"


def input_captions(tiny_tokens: int, tiny_d_model: int) -> list[str]:
    """One line under each input (sentence, random, tiny, pair); the tiny example's sizes given."""
    return ["your own words", "n random vectors",
            f"{tiny_tokens} tokens, d_model {tiny_d_model}, its own small whole-number weights (not random): check "
            "by hand",
            "two sentences: a translating decoder writes one while it reads the other (cross-attention)"]


def random_weights_caption(tiny: bool) -> str:
    """The line under the first choice of weights: random weights, or the tiny example's hand-set ones."""
    return ("small whole numbers chosen by hand, to check with pencil and paper" if tiny else
            "any sizes; the patterns mean nothing")


def not_installed_caption(install: str) -> str:
    """The line under a trained model that is not installed here: the command that adds it."""
    return f"not installed here; add it with `{install}`"


def not_installed_text(model: str) -> str:
    """The box shown instead of the page when the chosen model is missing (the command follows it)."""
    return f"**{model}** is not installed on this server. Add it with one command, then reload the page:"


def layer_help(model: str, n_layers: int) -> str:
    return f"{model} has {count(n_layers, 'layer')}; the step-through pages show this layer's attention."


# --- Sizes -------------------------------------------------------------------------------------------------------


def model_sizes_caption(model: str, d_model: int, n_heads: int, d_k: int, n_kv_heads: int,
                        weights_short: str = "") -> str:
    """What a trained model fixes: its sizes (with its key/value heads when it shares them), then weights_short."""
    kv = f", h_kv = {n_kv_heads} key/value heads" if n_kv_heads != n_heads else ""
    return (f"{model} fixes d_model = {d_model} and h = {n_heads} (d_k = {d_k}{kv})."
            + (f" {weights_short}" if weights_short else ""))


def tiny_sizes_caption(d_model: int, n_heads: int, d_k: int) -> str:
    return f"The tiny example fixes d_model = {d_model} and h = {n_heads} (d_k = {d_k})."


def d_k_caption(d_model: int, h: int) -> str:
    return f"Each head works in d_k = d_model / h = {d_model} / {h} = {d_model // h} dimensions."


def head_count_help(d_model: int) -> str:
    return f"Only head counts that divide d_model = {d_model} are offered: each head gets d_model / h dimensions."


def head_count_changed(old: int, d_model: int, new: int) -> str:
    return f"h = {old} does not divide d_model = {d_model}, so h is now {new}."


def kv_heads_help(help_text: str, h: int) -> str:
    """The key/value heads' help (the field's own, help_text), and which numbers work with h query heads."""
    return f"{help_text} Only divisors of h = {h} work."


def kv_heads_changed(old: int, h: int) -> str:
    return f"{old} key/value heads do not divide h = {h}, so each query head has its own again."


def kv_heads_caption(h: int, kv: int) -> str:
    """How h query heads share kv key/value heads."""
    if kv == h:
        return "One key/value head per query head: plain multi-head attention."
    return f"{h} query heads share {count(kv, 'key/value head')}: {h // kv} query heads each."


# --- Masks and positions -----------------------------------------------------------------------------------------

NO_POSITIONS = {  # why the positional encoding is off, for each input that has none
    "random": "Off: with random input, X is random numbers, with no position signal added. Choose the sentence "
              "input to add one.",
    "tiny": "Off: the tiny example's X is written by hand, with no position signal added. Choose the sentence input "
            "to add one.",
}
NO_CAUSAL_PAIR = "Cross-attention reads the whole other sentence, so there is no causal mask here."
PAD_PAIR_HELP = ("Blocks the last keys (of the source sentence) for every query, as padding is blocked in a batch: "
                 "filler ([PAD] tokens added to make texts the same length).")


# --- Experiments -------------------------------------------------------------------------------------------------


def trained_experiments_caption(model: str, decoder: bool) -> str:
    """With a trained model: which experiments it allows, and what switching heads off changes (the next token of a
    decoder, the sentence vector of an encoder)."""
    effect = "the next token it predicts" if decoder else "its sentence vector"
    return (f"With {model}: switch heads off and see what that does to the later layers and to {effect}. It keeps "
            "the 1/√d_k scaling it was trained with. Planting a head (its heads are shown as trained), another "
            "number of key/value heads (its own are fixed) and cross-attention (it reads one text) need random "
            "weights.")


def heads_off_caption(off, layer: int | None = None) -> str:
    """The heads switched off, under the control; layer: the trained model's layer on view (None: random
    weights)."""
    where = f" (in layer {layer}, the one on view)" if layer is not None else ""
    return f"Switched off{where}: {heads(off)}. Step 4 shows what changed."


# --- Focus -------------------------------------------------------------------------------------------------------


def query_changed(wanted: int, n: int) -> str:
    return f"Query token {wanted} is past the last token, so `query` is now {n}."


def query_caption(query: int, token: str, gloss: str = "") -> str:
    """The query token in focus (as typed: quoted), with what the model's tokenizer made of it (gloss)."""
    return f"Query token {query}: {quote(token)}" + (f" ({gloss})" if gloss else "")


# --- Share -------------------------------------------------------------------------------------------------------

SHARE_LINK = "**This view**: the link reopens exactly this view, its figures drawn (copy button on the right):"
SHARE_ASKING = "**This view, asking first**: the same view, its question waiting for an answer before the "\
               "figure shows:"


def computed_with(backend: str, device: str) -> str:
    """The engine's backend and the device it ran on (copy.example.device_label)."""
    return f"Computed with {backend} on **{device}**."

