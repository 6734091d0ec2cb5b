"""What the app says that depends on the model: each trained model's own sentences (all-MiniLM-L6-v2, SmolLM2),
random weights and the tiny example; and the model view's and head summary's sentences."""

from __future__ import annotations

import re

import pytest

from mha_app.copy import models
from mha_app.state.settings import Spec
from mha_core.analysis.head_stats import CONTENT, MIXED, POSITIONAL, SINK, SPECIAL, decoder_parts, encoder_parts

MINILM, SMOLLM2 = "all-MiniLM-L6-v2", "SmolLM2-135M-Instruct"
ENCODER, DECODER = encoder_parts(), decoder_parts(("<|im_start|>", "<|im_end|>"))


# --- The tokens and the input X ----------------------------------------------------------------------------------

def test_the_sentence_box_says_how_each_model_splits_the_text():
    assert "words and punctuation marks" in models.sentence_help(Spec())
    assert models.sentence_help(Spec(input="tiny")) == models.sentence_help(Spec())
    minilm = models.sentence_help(Spec(model=MINILM))
    assert "WordPiece" in minilm and "“token”, “##ization”" in minilm and "lower-cases" in minilm
    assert "[CLS] is added at the start and [SEP] at the end" in minilm
    smollm2 = models.sentence_help(Spec(model=SMOLLM2))
    assert "byte-level BPE" in smollm2 and "Case is kept" in smollm2 and models.BYTE_LEVEL_SPELLING in smollm2
    assert "“In 2024” → “In”, “Ġ”, “2”, “0”, “2”, “4”" in smollm2


def test_only_byte_level_tokens_need_a_spelling_note():
    assert models.spelling_note(Spec(model=SMOLLM2)) == models.BYTE_LEVEL_SPELLING
    assert "Ġ at the start of a token is the space before it" in models.BYTE_LEVEL_SPELLING
    assert "Ċ is a new line" in models.BYTE_LEVEL_SPELLING
    assert models.spelling_note(Spec(model=MINILM)) == models.spelling_note(Spec()) == ""


def test_the_special_tokens_are_explained_for_trained_models_only():
    minilm = models.special_tokens_explained(Spec(model=MINILM))
    assert "“classification”" in minilm and "“separator”" in minilm and "the model does not choose them" in minilm
    assert "close each sentence with [SEP]" not in minilm
    assert "<|im_start|>" in models.special_tokens_explained(Spec(model=SMOLLM2))
    assert models.special_tokens_explained(Spec()) == models.special_tokens_explained(Spec(input="tiny")) == ""


def test_each_token_of_minilm_gets_its_note():
    tokens = ["[CLS]", "token", "##ization", "matters", "[SEP]"]
    notes = models.token_notes(Spec(model=MINILM), tokens)
    assert notes == ["special token, added at the start", "", "word piece: the rest of the word before (## marks it)",
                     "", "special token, added at the end"]
    assert models.token_gloss(Spec(model=MINILM), tokens, 2) == notes[2]
    assert models.token_gloss(Spec(model=MINILM), tokens, 0) == notes[0]


def test_smollm2s_word_pieces_digits_and_markers_are_told_apart():
    tokens = ["Token", "ization", "Ġof", "Ġ", "2", "0", "<|im_start|>", "Ċ"]
    notes = models.token_notes(Spec(model=SMOLLM2), tokens)
    assert notes[0] == "" and notes[2] == "" and notes[3] == ""
    assert notes[1] == "word piece: the rest of the word before (no Ġ, so no space before it)"
    assert notes[4] == "", "a digit after a space token starts a number"
    assert notes[5] == "the next digit of the number before (every digit is a token of its own)"
    assert notes[6] == "special token: starts a chat message" and notes[7] == "a new line"


def test_random_weights_and_the_tiny_example_have_no_token_notes():
    assert models.token_notes(Spec(), ["The", "##cat"]) == ["", ""]
    assert models.token_notes(Spec(input="tiny"), ["a", "b", "c"]) == ["", "", ""]


def test_a_model_without_its_own_text_gets_the_generic_one():
    assert models.model_text("some-other-model") is models.GENERIC
    assert models.model_text(MINILM) is models.MODEL_TEXT[MINILM]
    assert models.GENERIC.token_note("##x") == "" and "{dark}" in models.GENERIC.patterns


@pytest.mark.parametrize(("spec", "said"), [
    (Spec(), "sinusoidal position signal of Vaswani et al. (2017), so that word order matters"),
    (Spec(pe=False), "with no position signal (positional encoding is off), so X does not depend on word order"),
    (Spec(input="pair"), "Y, the keys' and values' input, is made the same way from the source sentence"),
    (Spec(input="random", n=5), "X holds 5 vectors of d_model = 128 random numbers"),
    (Spec(input="tiny"), "X is a hand-picked 3 × 4 matrix of 0s and 1s"),
    (Spec(model=MINILM), "plus its segment (token-type) embedding, then LayerNorm"),
    (Spec(model=SMOLLM2), "No position is added to X: positions enter inside attention, where RoPE turns"),
])
def test_the_input_x_of_layer_1_comes_from_where_the_mode_says(spec, said):
    assert said in models.input_source(spec, 1)


def test_a_later_layers_input_is_the_previous_layers_output_with_its_residual_and_feed_forward_block():
    for name in (MINILM, SMOLLM2):
        text = models.input_source(Spec(model=name), 3)
        assert text.startswith("X of layer 3 is the output of layer 2") and "{" not in text
        assert "feed-forward" in text and "residual" in text and models.RESIDUAL in text
    assert f"feed-forward block, {models.FEED_FORWARD}" in models.input_source(Spec(model=SMOLLM2), 18)
    assert "layer 17" in models.input_source(Spec(model=SMOLLM2), 18)


def test_smollm2s_later_input_is_short_sentences_and_rollout_says_what_the_feed_forward_network_is():
    """SmolLM2's later input ("The tokens", layer 18) is short sentences with no brackets inside brackets, and
    rollout says what the feed-forward network is when it names it."""
    from mha_app.copy.inside import rollout_in_brief

    text = models.model_text(SMOLLM2).later_input.format(layer=18, previous=17)
    sentences = [s for s in re.split(r"(?<=[.;])\s+(?=[A-Z])", text) if s]
    assert all(len(s.split()) <= 30 for s in sentences), [len(s.split()) for s in sentences]
    assert not re.search(r"\([^)]*\(", text), "no brackets inside brackets"
    assert "feed-forward block, a small network applied to each token on its own" in text
    assert f"feed-forward network ({models.FEED_FORWARD})" in rollout_in_brief(30)


def test_the_weights_and_masks_of_smollm2_are_said_and_minilm_needs_no_weights_note():
    weights = models.model_text(SMOLLM2).weights
    assert "GGUF is the file format of llama.cpp" in weights and "rounded to one of 16 evenly spaced levels" in weights
    assert "Q4_1" in weights and "one scale per block of 32, with no offset" in weights and "Q8_0" in weights
    assert "close to the original's, not equal to it" in weights and "the same way with 8 bits" not in weights
    assert "each token sees only itself and the tokens before it" in models.model_text(SMOLLM2).masks
    assert models.model_text(MINILM).weights == ""


def test_each_models_patterns_name_its_own_kinds_of_head_with_the_themes_colour_word():
    minilm = models.model_text(MINILM).patterns.format(dark="dark")
    assert "dark first or last columns" in minilm and f"*{SPECIAL}* heads" in minilm and f"*{POSITIONAL}*" in minilm
    smollm2 = models.model_text(SMOLLM2).patterns.format(dark="bright")
    assert "a bright first column" in smollm2 and f"*{SINK}* heads" in smollm2
    assert "random weights with the mask give the same triangle" in smollm2 and "far from random" not in smollm2
    assert "one place less than the phrase's length to the left" in smollm2 and "one phrase length" not in smollm2
    assert "gives each head's induction score" in smollm2 and "counts each kind" not in smollm2


# --- The model view ----------------------------------------------------------------------------------------------

def test_the_model_views_title_counts_the_heads():
    assert models.model_view_title(270) == "Model view: all 270 heads"
    assert models.model_view_title(None) == "Model view: every head of a model"


def test_the_model_view_intro_of_an_encoder_and_of_grouped_heads():
    minilm = models.model_view_intro(MINILM, 6, 12, 12, "dark", "darker")
    assert minilm.startswith("A trained transformer runs attention 6 times, once per layer, each time with 12 heads. ")
    assert "(rows: the token that asks, columns: the token it looks at; darker = more weight)" in minilm
    assert models.model_text(MINILM).patterns.format(dark="dark") in minilm and "key/value" not in minilm
    smollm2 = models.model_view_intro(SMOLLM2, 30, 9, 3, "bright", "brighter")
    assert ("each time with 9 heads (here 9 query heads share 3 key/value heads: the heads of one group stand "
            "together, under a label that names their K/V head).") in smollm2
    assert "brighter = more weight" in smollm2 and "a bright first column" in smollm2
    assert "with 1 head." in models.model_view_intro("one-head-model", 2, 1, 1, "dark", "darker")


def test_the_model_views_captions_and_large_layer():
    assert models.outlined_caption(18, 5, "HOW.") == ("Outlined: layer 18, head 5, the one the step-through pages "
                                                      "show. HOW.")
    assert models.layer_large_caption(3, True).endswith(" Each row of panels is one key/value group of 3 query heads.")
    assert models.layer_large_caption(1, False).endswith("big enough for a projector.")
    assert models.layer_grid_title(2, 12) == "Layer 2: all 12 heads (rows: queries, columns: keys)"


def test_each_page_says_how_it_counts_and_why_the_other_may_differ():
    view = models.how_pages_count(ENCODER, "model view")
    assert view.startswith("How this page counts: its chart in words takes, for every query ([CLS] included), only "
                           "the key with the largest weight. The head summary averages each head's weights over the "
                           "words ([CLS] and [SEP] left out)")
    summary = models.how_pages_count(ENCODER, "head summary")
    assert summary.startswith("How this page counts: it averages each head's weights over the words ([CLS] and [SEP] "
                              "left out) and names a kind only when one part gets more than half. The model view's "
                              "chart in words takes")
    for text in (view, summary):  # short sentences, not one of 70 words
        assert max(len(sentence.split()) for sentence in text.split(". ")) < 35
    decoder = models.how_pages_count(DECODER, "model view")
    assert "(the first token included)" in decoder and "the tokens after the first (special tokens left out)" in decoder
    assert f"*{CONTENT}* or *{MIXED}*" in decoder and "[CLS]" not in decoder


# --- The head summary --------------------------------------------------------------------------------------------

def test_the_summary_intro_splits_an_encoders_attention_six_ways_and_a_decoders_five():
    encoder = models.summary_intro(ENCODER)
    assert "[CLS] and [SEP] are left out as queries" in encoder and "six parts" in encoder
    assert "which may be the token itself" in encoder and "grows with sentence length" in encoder
    decoder = models.summary_intro(DECODER)
    assert "into five parts" in decoder and "with the first token (it can only look at itself) and the model's " \
        "special tokens (such as <|im_start|>) left out" in decoder
    assert "the tokens 2 to 4 back" in decoder and "log2(t)" in decoder
    assert "<|im_start|>" in decoder and "[CLS]" not in decoder


def test_the_pattern_caption_and_the_reading_name_each_kind():
    encoder = models.pattern_caption(ENCODER, 0.5) + models.summary_reading(ENCODER)
    assert "more than 50% of a head's attention" in encoder and "*parks on [CLS]*" in encoder
    assert "Clark et al. (2019" in encoder and "no-op" in encoder and models.CAVEATS in encoder
    decoder = models.pattern_caption(DECODER, 0.4) + models.summary_reading(DECODER)
    assert "more than 40%" in decoder and f"(kind *{SINK}*)" in decoder and "more than 4 tokens back" in decoder
    assert "Xiao et al. (2023" in decoder and "Olsson et al. 2022" in decoder and models.CAVEATS in decoder
    for kind in (SPECIAL, POSITIONAL, CONTENT):
        assert f"*{kind.capitalize()}*:" in encoder
    for kind in (SINK, POSITIONAL, CONTENT):
        assert f"*{kind.capitalize()}*:" in decoder


def test_a_text_with_no_query_to_average_says_why_for_each_kind_of_model():
    assert models.no_queries_note(DECODER) == ("This text has no token to average over: the first token is left out "
                                               "as a query (it can only look at itself). Type a longer text in the "
                                               "sidebar.")
    assert "only [CLS] and [SEP], which are left out as queries." in models.no_queries_note(ENCODER)


def test_the_kind_help_and_the_split_title():
    assert models.kind_help("sink", "weight parked on the first token") == "Sink: weight parked on the first token."
    assert models.split_title(3).startswith("Layer 3 (chosen in the sidebar): where each head's attention goes")


def test_the_induction_notes_agree_with_the_counts_and_name_the_key_value_head():
    assert "Nothing in this text repeats" in models.NO_REPEATS and "*Repeated phrase*" in models.NO_REPEATS
    best = [{"layer": 17, "head": 4, "induction": 0.8123}, {"layer": 2, "head": 0, "induction": 0.5}]
    many = models.induction_found(12, best, 3)
    assert many.startswith("On this text, 12 tokens were seen before. The heads with the highest induction score")
    assert "layer 18 head 5 (K/V 2): 0.81, layer 3 head 1 (K/V 1): 0.50." in many
    one = models.induction_found(1, best[:1], 1)
    assert one.startswith("On this text, 1 token was seen before. The head with the highest")
    assert "layer 18 head 5: 0.81." in one and "K/V" not in one
    assert models.induction_none(2, 0.3) == ("On this text, 2 tokens were seen before, but no head puts more than 0.3 "
                                             "of its weight on the token that followed the earlier copy.")
