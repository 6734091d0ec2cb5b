"""Attention shapes of well-known models, as their papers and releases give them, and of this app's trained models.

One table (`presets()`), and the counting that the cost page and the practice questions read from it: d_k, the
parameters of one attention block, and the K/V cache for multi-head (MHA), grouped-query (GQA) and multi-query (MQA)
attention. Every size is a published number; the sources are cited row by row.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis import cost
from ..pretrained import MODELS

ATTENTION_KINDS = ("MHA", "GQA", "MQA")
GQA_GROUPS = 8  # Llama 2 70B shares K/V among 8 groups, as Ainslie et al. (2023) recommend (GQA-8)


@dataclass(frozen=True)
class ModelShape:
    """The attention sizes of one model: every attention block has these, in each of its n_layers layers."""

    name: str
    key: str             # how a link names it: short, and never changed once published
    kind: str            # "encoder", "decoder" or "encoder-decoder"
    n_layers: int        # layers of one stack (the decoder's, for the K/V cache)
    d_model: int
    n_heads: int         # query heads h
    n_kv_heads: int      # key/value heads (h for MHA, 1 for MQA, in between for GQA)
    bias: bool           # whether W_Q, W_K, W_V, W_O add a bias
    context: int | None  # the longest input its positions allow, in tokens (None: not fixed)
    source: str          # where the numbers come from
    no_context: str = ""  # why there is no context, when context is None
    context_note: str = ""  # where the inputs it was trained or is used on are shorter than its context

    @property
    def context_words(self) -> str:
        """The context as a table cell: "2,048", or "not fixed" (no_context says why)."""
        return "not fixed" if self.context is None else f"{self.context:,}"

    @property
    def d_k(self) -> int:
        return cost.head_sizes(self.d_model, self.n_heads, self.n_kv_heads)[2]

    @property
    def decoder(self) -> bool:
        """Whether it generates text token by token, keeping a K/V cache (a decoder, or an encoder-decoder)."""
        return self.kind != "encoder"

    @property
    def attention(self) -> str:
        """MHA, GQA or MQA: how many query heads share one K/V head."""
        return attention_kind(self.n_heads, self.n_kv_heads)

    def params_per_layer(self) -> int:
        """Parameters of one attention block: W_Q, W_K, W_V, W_O (and their biases, if any)."""
        return cost.attention_params(self.d_model, self.n_heads, self.n_kv_heads, bias=self.bias)

    def kv_cache_bytes(self, seq_len: int = 1, batch: int = 1, n_kv_heads: int | None = None,
                       bytes_per_value: int = 2) -> int:
        """K/V cache of every layer at 16 bits (by default), with its own K/V heads or `n_kv_heads`."""
        kv = self.n_kv_heads if n_kv_heads is None else n_kv_heads
        return cost.kv_cache_bytes(self.n_layers, kv, self.d_k, seq_len, batch, bytes_per_value)


PUBLISHED = (
    ModelShape("Transformer base", "transformer-base", "encoder-decoder", n_layers=6, d_model=512, n_heads=8,
               n_kv_heads=8, bias=False, context=None,
               source="Vaswani et al. 2017, Attention Is All You Need, Table 3 (base): N = 6 layers, d_model = 512, "
                      "h = 8, d_k = d_v = 64; §3.2.2: the projections are the matrices W^Q_i, W^K_i, W^V_i, W^O (no "
                      "bias is listed).",
               no_context="the paper sets no longest input: its positions are sine waves, defined for any length "
                          "(Vaswani et al. 2017, §3.5)"),
    ModelShape("BERT-base", "bert-base", "encoder", n_layers=12, d_model=768, n_heads=12, n_kv_heads=12, bias=True,
               context=512, source="Devlin et al. 2019, BERT, §3: L = 12 layers, H = 768, A = 12 heads; §A.2: inputs "
                                   "of up to 512 tokens; the released model's attention projections have biases."),
    ModelShape("GPT-3 175B", "gpt-3-175b", "decoder", n_layers=96, d_model=12288, n_heads=96, n_kv_heads=96, bias=True,
               context=2048, source="Brown et al. 2020, Language Models are Few-Shot Learners, Table 2.1: n_layers = "
                                    "96, d_model = 12288, n_heads = 96, d_head = 128; §2.1: a context of 2048 tokens; "
                                    "the architecture (with biases) is GPT-2's."),
    ModelShape("Llama 2 70B", "llama-2-70b", "decoder", n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8, bias=False,
               context=4096, source="Touvron et al. 2023, Llama 2, Table 1 (the 70B model uses GQA, a context of 4k "
                                    "tokens); sizes from Meta's released params.json: dim = 8192, n_layers = 80, "
                                    "n_heads = 64, n_kv_heads = 8; no biases."),
)


def attention_kind(n_heads: int, n_kv_heads: int) -> str:
    if n_kv_heads == n_heads:
        return "MHA"
    return "MQA" if n_kv_heads == 1 else "GQA"


def trained_shape(card) -> ModelShape:
    """A trained model of this app (a pretrained.ModelCard) as a row of the table."""
    return ModelShape(card.name, card.name, card.kind, n_layers=card.n_layers, d_model=card.d_model,
                      n_heads=card.n_heads, n_kv_heads=card.n_kv_heads, bias=card.bias, context=card.context,
                      context_note=card.context_note,
                      source=f"The trained model in this app (pip package {card.package}): sizes from its "
                             "configuration, checked against its loaded weights.")


def presets() -> tuple[ModelShape, ...]:
    """The published shapes, then every trained model of the app."""
    return PUBLISHED + tuple(trained_shape(card) for card in MODELS.values())


def preset(key: str) -> ModelShape:
    """The shape a link's key names (see ModelShape.key)."""
    for shape in presets():
        if shape.key == key:
            return shape
    raise KeyError(key)


def gqa_heads(n_heads: int, n_kv_heads: int) -> int | None:
    """K/V heads for a grouped-query version of a model: its own when it groups its heads, else the largest divisor
    of h from 2 to 8 that is smaller than h (8, as Llama 2 70B's GQA-8, when h is a multiple of 8 above 8);
    None when h has none (h prime, or h below 4)."""
    if 1 < n_kv_heads < n_heads:
        return n_kv_heads
    options = [g for g in range(2, min(GQA_GROUPS, n_heads - 1) + 1) if n_heads % g == 0]
    return options[-1] if options else None


def kv_variants(shape: ModelShape) -> dict[str, int | None]:
    """K/V heads of the same model with MHA (h), GQA and MQA (1); GQA is None when h cannot be grouped."""
    return {"MHA": shape.n_heads, "GQA": gqa_heads(shape.n_heads, shape.n_kv_heads), "MQA": 1}


def kv_cache_table(seq_len: int, batch: int = 1) -> list[dict]:
    """One row per model and kind of attention: K/V heads, whether that is the model as published (own), its
    context, and the 16-bit cache bytes per token and for `batch` sequences of seq_len tokens."""
    rows = []
    for shape in presets():
        for kind, kv in kv_variants(shape).items():
            if kv is not None:
                rows.append(dict(model=shape.name, attention=kind, kv_heads=kv, own=kv == shape.n_kv_heads,
                                 decoder=shape.decoder, context=shape.context, context_words=shape.context_words,
                                 per_token=shape.kv_cache_bytes(n_kv_heads=kv),
                                 total=shape.kv_cache_bytes(seq_len, batch, n_kv_heads=kv)))
    return rows


def cache_length_note(seq_len: int) -> str:
    """What one sequence length for every model means: which models it goes beyond (their context, in tokens)."""
    beyond = [f"{shape.name} ({shape.context:,})" for shape in presets()
              if shape.context is not None and shape.context < seq_len]
    note = (f"Every bar is at the same {seq_len:,} tokens, so the models compare at one length; a model's own "
            "limit is its context.")
    if beyond:
        note += f" {seq_len:,} tokens is past the context of {', '.join(beyond)}: shown for the comparison only."
    return note
