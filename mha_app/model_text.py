"""What the app says that depends on the weights and the input: how the text becomes tokens, what the special
tokens are, and where the input X of the shown layer comes from.

A trained model's sentences live in MODEL_TEXT, under the model's name, so that each model says its own; a model
without an entry gets GENERIC, which holds for any model. Random weights and the tiny example are described here
too, so that every page asks one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mha_core.presets import TINY_CONFIG, TINY_TOKENS

from .settings import Spec


@dataclass(frozen=True)
class ModelText:
    """The sentences about one trained model."""

    tokenizer: str                                      # what happens to the text (the sentence box's help)
    first_input: str                                    # where X of layer 1 comes from
    later_input: str                                    # where X of layer {layer} > 1 comes from ({previous} = layer-1)
    special: dict[str, str] = field(default_factory=dict)  # special token -> a few words on it
    special_explained: str = ""                         # what the special tokens are for, where they first appear
    piece_prefix: str = ""                              # marks a piece that continues a word ("##" in WordPiece)

    def token_note(self, token: str) -> str:
        """A few words on a token that needs them (a special token, a word piece); "" for a plain word."""
        if token in self.special:
            return self.special[token]
        if self.piece_prefix and token.startswith(self.piece_prefix) and len(token) > len(self.piece_prefix):
            return f"word piece: the rest of the word before ({self.piece_prefix} marks it)"
        return ""


MODEL_TEXT = {
    "all-MiniLM-L6-v2": ModelText(
        tokenizer=("all-MiniLM-L6-v2 lower-cases the text (and drops accents), then splits it with WordPiece into "
                   "pieces of its 30,522-entry vocabulary: a common word is one token, a rarer one is cut into "
                   "pieces, e.g. “tokenization” → “token”, “##ization” (## marks a piece that continues a word). "
                   "Punctuation marks are tokens of their own. The special token [CLS] is added at the start and "
                   "[SEP] at the end."),
        first_input=("X of layer 1 is made from the token ids: each token's word embedding, plus the embedding of "
                     "its position, plus its segment (token-type) embedding, then LayerNorm; all learned in "
                     "training."),
        later_input=("X of layer {layer} is the output of layer {previous}: that layer's attention output (what "
                     "these pages show for layer {previous}) plus its own input (the residual connection), "
                     "LayerNorm, then the feed-forward block (384 → 1,536 → 384 numbers per token, GELU) plus its "
                     "input again, LayerNorm."),
        special={"[CLS]": "special token, added at the start", "[SEP]": "special token, added at the end"},
        special_explained=("[CLS] (“classification”) and [SEP] (“separator”) are special tokens that the tokenizer "
                           "adds to every text, [CLS] first and [SEP] last. BERT-style models are trained to gather "
                           "the whole text into [CLS] and to close each sentence with [SEP] (this model's sentence "
                           "embedding averages all tokens instead). In attention they are tokens like any other, "
                           "with a row and a column in every weight matrix."),
        piece_prefix="##",
    ),
}

GENERIC = ModelText(
    tokenizer="The model's own tokenizer splits the text into tokens of its vocabulary (words or word pieces).",
    first_input="X of layer 1 is the model's learned embedding of each token.",
    later_input=("X of layer {layer} is the output of layer {previous}: its attention output plus the rest of that "
                 "layer (residual connections, normalisation and the feed-forward block)."),
)


def model_text(name: str) -> ModelText:
    return MODEL_TEXT.get(name, GENERIC)


def sentence_help(spec: Spec) -> str:
    """The help of the sentence box: what happens to the text typed there."""
    if spec.card is not None:
        return model_text(spec.card.name).tokenizer
    return ("Split into words and punctuation marks; each one becomes a token. (Trained models split text their "
            "own way: choose a trained model under Weights to see it.)")


def token_notes(spec: Spec, tokens: list[str]) -> list[str]:
    """A note for each token ("" for most): what the special tokens and word pieces of a trained model are."""
    if spec.card is None:
        return ["" for _ in tokens]
    text = model_text(spec.card.name)
    return [text.token_note(token) for token in tokens]


def special_tokens_explained(spec: Spec) -> str:
    """What the special tokens of a trained model are for ("" for random weights and models without any)."""
    return model_text(spec.card.name).special_explained if spec.card is not None else ""


def token_gloss(spec: Spec, token: str) -> str:
    """The note on one token, or "" (for the sidebar's line under the query token)."""
    return token_notes(spec, [token])[0]


def input_source(spec: Spec, layer: int = 1) -> str:
    """Where the rows of X come from, for this spec (and the shown layer of a trained model)."""
    if spec.card is not None:
        text = model_text(spec.card.name)
        return text.first_input if layer == 1 else text.later_input.format(layer=layer, previous=layer - 1)
    if spec.input == "tiny":
        return (f"X is a hand-picked {len(TINY_TOKENS)} × {TINY_CONFIG.d_model} matrix of 0s and 1s, one row per "
                "token, small enough to follow every product by hand.")
    if spec.input == "random":
        return (f"X holds {spec.n} vectors of d_model = {spec.d_model} random numbers (normal, mean 0, variance 1), "
                "fixed by the seed; t1, t2, … are only names for its rows.")
    position = ("plus the sinusoidal position signal of Vaswani et al. (2017), so that word order matters" if spec.pe
                else "with no position signal (positional encoding is off), so X does not depend on word order")
    pair = (" Y, the keys' and values' input, is made the same way from the second sentence." if spec.input == "pair"
            else "")
    return (f"Each token's row of X is {spec.d_model} random numbers (normal, mean 0, variance 1) fixed by the seed "
            f"and the word (the same word, in any case, always gets the same vector), {position}.{pair}")
