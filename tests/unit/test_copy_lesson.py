"""copy.lesson: the lesson's screens (one list, in order) and each screen's sentences, from plain values."""

from __future__ import annotations

import numpy as np
import pytest

import mha_core as mc
from mha_app.copy import lesson
from mha_app.copy.markup import quote
from references import biased_weights

TOKENS = ["The", "*cat*", "sat"]


def test_the_screens_are_one_list_of_unique_keys_and_the_inside_views_come_last():
    keys = [key for key, _ in lesson.SCREENS]
    assert len(keys) == len(set(keys)) == 14
    assert keys[0] == "tokens" and keys[-3:] == ["plane", "adds", "rollout"], "earlier screens keep their numbers"
    assert lesson.screen_title(3) == "3 · Scores: every query against every key"
    assert lesson.where(14) == "Screen 14 of 14"


def test_the_lesson_plan_gives_every_screens_number_title_and_link_in_order():
    urls = [f"http://x/lesson?screen={i}" for i in range(1, 15)]
    plan = lesson.lesson_plan(urls).split("\n")
    assert plan[:4] == ["1. A sentence becomes n vectors", urls[0], "2. h heads, each d_k = d_model / h wide", urls[1]]
    assert plan[-2:] == ["14. Following attention through the layers", urls[-1]]
    with pytest.raises(ValueError):
        lesson.lesson_plan(urls[:-1])


def test_the_tokens_screen_counts_the_tokens_and_in_cross_attention_the_source():
    text = lesson.tokens_text(5, 32, None)
    assert text == ("The attention layer reads **5 tokens**, each one a row of **d_model = 32 numbers**. Stacked, they "
                    "form the matrix X.")
    assert "**1 token**," in lesson.tokens_text(1, 32, None)
    cross = lesson.tokens_text(4, 32, 7)
    assert cross.endswith(" They are the sentence being written; its keys and values come from the source sentence, "
                          "7 tokens (cross-attention).")


@pytest.mark.parametrize("h, group, said", [(1, 1, "Each of the **1 head** gets its own W_Q, W_K and W_V"),
                                            (8, 1, "Each of the **8 heads** gets its own W_Q, W_K and W_V"),
                                            (4, 2, "its own W_Q, and shares W_K and W_V with 1 other head,"),
                                            (9, 3, "its own W_Q, and shares W_K and W_V with 2 other heads,")])
def test_the_heads_screen_says_what_each_head_owns_and_shares(h, group, said):
    text = lesson.heads_text(h, group, rotated=False)
    assert said in text and "works in **d_k = d_model / h** dimensions" in text and "RoPE" not in text


def test_the_heads_screen_of_a_decoder_with_rope_says_the_queries_and_keys_are_turned():
    assert lesson.heads_text(9, 3, rotated=True).endswith(" Its queries and keys are then turned by their position "
                                                          "(RoPE).")


def test_the_scores_screen_names_the_scale_and_the_causal_mask():
    usual = lesson.scores_text(2, None, causal=False)
    assert usual.startswith("Head 3 compares every query with every key: one dot product per pair, scaled by 1/√d_k")
    assert "its typical size does not grow with d_k (under the paper's assumptions" in usual
    assert "causal" not in usual
    unscaled = lesson.scores_text(0, 1.0, causal=True)
    assert "multiplied by 1 instead of the usual 1/√d_k" in unscaled
    assert unscaled.endswith("The causal mask hides every key after its query: those cells stay blank.")


def test_the_query_and_key_are_named_from_1_with_their_text_quoted():
    assert lesson.softmax_text(1, 1, TOKENS).endswith(f"Here is the row of query 2 {quote('*cat*')} in head 2.")
    assert lesson.mix_text(0, TOKENS) == ("The head's output for query 1 `The` is the sum of every key's value vector, "
                                          "each times its weight.")


@pytest.mark.parametrize("tied, blocked, said", [(1, False, "(its strongest)"), (2, False, "(tied with 1 other for"),
                                                 (3, False, "(tied with 2 others for its strongest)"),
                                                 (1, True, "(every key is blocked)")])
def test_the_weight_by_hand_says_whether_its_key_is_the_strongest(tied, blocked, said):
    text = lesson.by_hand_text(0, 2, 1, TOKENS, ["Le", "chat"], tied, blocked)
    assert text.startswith("The weight of query 3 `sat` on key 2 `chat` ") and said in text
    assert text.endswith("in head 1: multiply, add, scale, exponentiate, normalise.")


def test_the_grid_screen_with_one_head_and_several():
    assert lesson.grid_text(4).startswith("The 4 heads read the same tokens but weigh them differently")
    assert lesson.grid_text(1) == "This example has one head; with more, each would weigh the tokens its own way."


def test_random_heads_point_to_a_trained_model_where_the_screen_can_reach_one():
    presenting, page = lesson.random_heads_note(True), lesson.random_heads_note(False)
    assert presenting.endswith("Switch to a trained model with a button below.") and "Weights" not in presenting
    assert page.endswith("Choose a trained model under Weights.")
    assert "(Voita et al. 2019)" in page and "(Michel et al. 2019)" in page


def test_the_cache_note_names_the_encoders_and_ends_on_the_length_note():
    assert lesson.cache_note(["BERT-base", "all-MiniLM-L6-v2"], "At 4,096 tokens.") == (
        "Encoders (BERT-base, all-MiniLM-L6-v2) keep no cache: their bars show a decoder of the same shape. "
        "At 4,096 tokens.")


# --- inside the heads ------------------------------------------------------------------------------------------------

def test_the_plane_on_a_projector_is_short_lines_with_the_spread_and_both_readings():
    config = mc.MHAConfig(24, 4)
    x = np.random.default_rng(3).normal(size=(5, 24))
    p = mc.qk_plane(mc.forward(x, biased_weights(config, np.float64, seed=3), config), 1)
    said = lesson.plane_lines(p, 4, ["The", "cat", "sat", "on", "**mat**"])
    lines = said.split("\n")
    assert len(lines) == 4 and all(line.startswith("- ") and len(line) < 170 for line in lines), lines
    assert f"**{p.explained:.0%}** of their spread" in lines[0] and f"to query 5 {quote('**mat**')}" in lines[1]
    assert f"**{p.order_kept(4):.0%}** of the pairs along the arrow" in lines[3]
    assert f"**{p.order_kept(4, 'distance'):.0%}** by distance" in lines[3] and "On this example" in lines[3]


@pytest.mark.parametrize("weight, share, shows", [(0.31, 0.12, True), (0.212, 0.168, False)])
def test_the_adds_screen_says_whether_its_chosen_key_adds_little(weight, share, shows):
    tokens = ["The", "cat", "**sat**"]
    said = lesson.adds_text(1, 2, 0, tokens, tokens, weight, share, 3)
    assert f"{weight:.3f}" in said and f"{share:.3f}" in said and "3 queries" in said
    assert f"query 3 {quote('**sat**')}" in said and "key 1 `The`" in said
    assert ("less than its weight says" in said) == shows
    assert ("head 2's 3 queries" in said) == shows and ("In every head" in said) != shows
