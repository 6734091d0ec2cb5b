"""copy.sidebar: the sidebar's captions, help texts, notes and Share box, from plain values."""

from __future__ import annotations

import pytest

from mha_app.copy import sidebar
from mha_app.copy.markup import plain


def test_inputs_and_weights_are_described():
    captions = sidebar.input_captions(6, 4)
    assert len(captions) == 4 and captions[2].startswith("6 tokens, d_model 4, its own small whole-number weights")
    assert "cross-attention" in captions[3]
    assert "pencil and paper" in sidebar.random_weights_caption(True)
    assert sidebar.random_weights_caption(False) == "any sizes; the patterns mean nothing"
    assert sidebar.not_installed_caption("pip install x") == "not installed here; add it with `pip install x`"
    assert sidebar.not_installed_text("SmolLM2-135M-Instruct").startswith(
        "**SmolLM2-135M-Instruct** is not installed on this server.")
    assert sidebar.layer_help("all-MiniLM-L6-v2", 6).startswith("all-MiniLM-L6-v2 has 6 layers;")
    assert sidebar.layer_help("x", 1).startswith("x has 1 layer;")


def test_sizes_say_what_is_fixed_and_what_sharing_does():
    assert sidebar.model_sizes_caption("all-MiniLM-L6-v2", 384, 12, 32, 12) == (
        "all-MiniLM-L6-v2 fixes d_model = 384 and h = 12 (d_k = 32).")
    smol = sidebar.model_sizes_caption("SmolLM2-135M-Instruct", 576, 9, 64, 3, "Tied weights.")
    assert smol == ("SmolLM2-135M-Instruct fixes d_model = 576 and h = 9 (d_k = 64, h_kv = 3 key/value heads). "
                    "Tied weights.")
    assert sidebar.tiny_sizes_caption(4, 2, 2) == "The tiny example fixes d_model = 4 and h = 2 (d_k = 2)."
    assert sidebar.d_k_caption(128, 8) == "Each head works in d_k = d_model / h = 128 / 8 = 16 dimensions."
    assert "divide d_model = 30 are offered" in sidebar.head_count_help(30)
    assert sidebar.head_count_changed(4, 30, 5) == "h = 4 does not divide d_model = 30, so h is now 5."


@pytest.mark.parametrize("h, kv, caption", [
    (8, 8, "One key/value head per query head: plain multi-head attention."),
    (8, 1, "8 query heads share 1 key/value head: 8 query heads each."),
    (8, 2, "8 query heads share 2 key/value heads: 4 query heads each."),
])
def test_shared_key_value_heads(h, kv, caption):
    assert sidebar.kv_heads_caption(h, kv) == caption


def test_key_value_heads_help_and_change():
    assert sidebar.kv_heads_help("Grouped-query.", 6) == "Grouped-query. Only divisors of h = 6 work."
    assert sidebar.kv_heads_changed(3, 8) == ("3 key/value heads do not divide h = 8, so each query head has its own "
                                              "again.")


@pytest.mark.parametrize("decoder, effect", [(True, "the next token it predicts"), (False, "its sentence vector")])
def test_a_trained_model_says_which_experiments_it_allows(decoder, effect):
    text = sidebar.trained_experiments_caption("M", decoder)
    assert text.startswith(f"With M: switch heads off and see what that does to the later layers and to {effect}.")
    assert "need random weights" in text


@pytest.mark.parametrize("off, layer, text", [
    ((2,), None, "Switched off: head 2. Step 4 shows what changed."),
    ((2, 5), None, "Switched off: heads 2 and 5. Step 4 shows what changed."),
    ((1,), 3, "Switched off (in layer 3, the one on view): head 1. Step 4 shows what changed."),
])
def test_switched_off_heads_under_the_control(off, layer, text):
    assert sidebar.heads_off_caption(off, layer) == text


def test_focus_and_share_quote_user_text():
    assert sidebar.query_changed(12, 9) == "Query token 12 is past the last token, so `query` is now 9."
    caption = sidebar.query_caption(3, "*cat*", "“ cat” in the tokenizer")
    assert caption == "Query token 3: `*cat*` (“ cat” in the tokenizer)"
    assert plain(sidebar.query_caption(1, ":red[x]")) == "Query token 1: “:red[x]”"
    assert sidebar.computed_with("torch", "CUDA (H200)") == "Computed with torch on **CUDA (H200)**."
    assert "reopens exactly this view" in sidebar.SHARE_LINK
    assert "asking first" in sidebar.SHARE_ASKING and "waiting for an answer" in sidebar.SHARE_ASKING


def test_positions_masks_and_pairs_say_why_a_control_is_off():
    assert set(sidebar.NO_POSITIONS) == {"random", "tiny"}
    assert all(text.startswith("Off: ") for text in sidebar.NO_POSITIONS.values())
    assert "no causal mask" in sidebar.NO_CAUSAL_PAIR and "[PAD]" in sidebar.PAD_PAIR_HELP
    assert "keys and values" in sidebar.PAIR_SOURCE and "Cross-attention" in sidebar.PAIR_SOURCE_HELP
    assert sidebar.PAIR_SOURCE == "The source sentence: keys and values"
    assert sidebar.TINY_WEIGHTS == "hand-set weights (the tiny example)"
