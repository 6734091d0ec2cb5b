"""copy.inside: the sentences of the views inside the heads (what each key adds, queries and keys as points, rollout),
from plain values and the planes mha_core computes."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import mha_core as mc
from mha_app.copy import inside
from mha_app.copy.markup import quote
from mha_app.copy.models import FEED_FORWARD, RESIDUAL
from mha_core.analysis import head_stats
from references import biased_weights

TOKENS = ["The", "cat", "**sat**", "on"]


def plane(d_model: int = 24, h: int = 4, n: int = 5, head: int = 1, **cfg) -> mc.QKPlane:
    """Head `head`'s plane of a random layer (d_k = d_model / h)."""
    config = mc.MHAConfig(d_model, h, **cfg)
    x = np.random.default_rng(3).normal(size=(n, d_model))
    return mc.qk_plane(mc.forward(x, biased_weights(config, np.float64, seed=3), config), head)


def test_a_token_is_named_by_its_position_from_1_and_its_text_quoted():
    assert inside.token(TOKENS, 2) == f"3 {quote('**sat**')}" == "3 `**sat**`"


# --- what each key adds ---------------------------------------------------------------------------------------------

def sentence(weights, added, switched_off=False, keys=TOKENS):
    weights, added = np.asarray(weights, float), np.asarray(added, float)
    total = added.sum()
    shares = added / total if total else np.zeros_like(added)
    return inside.contribution_sentence(1, 2, TOKENS, keys, weights, added, shares, switched_off)


def test_the_contribution_sentence_names_the_strongest_key_the_one_that_adds_most_and_a_short_vector():
    text = sentence([0.1, 0.6, 0.3, 0.0], [0.5, 0.3, 0.2, 0.0])
    assert text.startswith("In head 2, query 3 `**sat**` puts its largest weight, 0.600, on key 2 `cat`; that key "
                           "adds a share of 0.300 of what the query receives.")
    assert "The key that adds most is 1 `The`: a share of 0.500, with a weight of 0.100." in text
    assert "Key " not in text, "the key with the widest gap is the strongest, named already"
    gap = sentence([0.5, 0.4, 0.1, 0.0], [0.5, 0.1, 0.4, 0.0])
    assert "The key that adds most" not in gap
    assert "Key 2 `cat` has a weight of 0.400 but adds a share of only 0.100: its vector $v_s W^O_i$ is short." in gap


def test_the_contribution_sentence_in_a_blocked_row_a_switched_off_head_and_zero_values():
    assert sentence([0, 0, 0, 0], [0, 0, 0, 0]) == ("In head 2, query 3 `**sat**` sees no key (all are blocked), so "
                                                    "nothing is added.")
    off = sentence([0.5, 0.5, 0, 0], [0, 0, 0, 0], switched_off=True)
    assert "head 2 is switched off: Step 3 multiplies its output by 0" in off and "every contribution is 0" in off
    zero = sentence([0.5, 0.5, 0, 0], [0, 0, 0, 0])
    assert zero.endswith("has weights, but every key's vector $v_s W^O_i$ is 0 here, so it adds nothing.")


def test_cross_attention_names_the_key_from_the_source_sentence():
    text = sentence([0.2, 0.8], [0.2, 0.8], keys=["Le", "chat"])
    assert "query 3 `**sat**`" in text and "on key 2 `chat`" in text


def test_the_tab_and_its_table_name_the_head_the_query_and_the_bias():
    assert "passed through head 3's block of $W^O$" in inside.key_adds_intro(2)
    with_bias, without = inside.key_adds_caption(2, 0, bias=True), inside.key_adds_caption(2, 0, bias=False)
    assert with_bias.startswith("Query 1 in head 3, every key. The bias b_O is added once to the whole output")
    assert without == "Query 1 in head 3, every key. " + inside.SOURCES["contributions"]
    assert inside.sorted_keys_note(24, 30) == ("Sorted by share, largest first; the table shows 24 of the 30 keys at "
                                               "a time.")


# --- queries and keys as points -------------------------------------------------------------------------------------

def test_a_plane_of_more_than_two_dimensions_says_what_it_keeps_and_that_neither_reading_is_exact():
    p = plane()                                                                    # d_k = 6
    intro = inside.plane_intro(p, 6)
    assert intro.startswith("Head 2 compares each query with each key") and "d_k = 6 numbers" in intro
    assert f"This plane keeps **{p.explained:.0%}** of the spread; the rest is lost." in intro
    reading = inside.plane_reading(p, 3, TOKENS + ["mat"])
    assert "highlighted query 4 `on`" in reading
    assert f"the right order for **{p.order_kept(3):.0%}** of the pairs" in reading
    assert f"right for **{p.order_kept(3, 'distance'):.0%}** of the pairs" in reading
    assert "**Neither reading is exact.**" in reading and f"leaves out {1 - p.explained:.0%}" in reading


@pytest.mark.parametrize("d_k", [1, 2])
def test_a_plane_of_one_or_two_dimensions_is_the_whole_space(d_k):
    p = plane(d_model=4 * d_k)
    assert inside.whole_space(p)
    intro = inside.plane_intro(p, d_k)
    assert f"d_k = {d_k} {'number' if d_k == 1 else 'numbers'}, so the picture holds them whole" in intro
    assert "nothing is lost" in intro and "the rest is lost" not in intro
    reading = inside.plane_reading(p, 0, TOKENS + ["mat"])
    assert f"**Only the arrow is exact here.** With d_k = {d_k}" in reading and "Neither" not in reading


def test_a_query_that_sees_one_key_has_no_order_to_keep():
    p = plane(causal=True)                                                         # query 1 sees only key 1
    assert "Here query 1 `The` sees only one key, so there is no order to keep." in inside.plane_reading(p, 0, TOKENS)
    brief = inside.plane_in_brief(p, 0, TOKENS)
    assert "Here the arrow" not in brief and "On this example" not in brief


@pytest.mark.parametrize("arrow, near, verdict", [(0.78, 0.91, "distance does better than the arrow."),
                                                  (0.91, 0.78, "the arrow does better than distance."),
                                                  (0.801, 0.799, "the two readings do equally well.")])
def test_the_verdict_follows_the_numbers_as_the_page_shows_them(arrow, near, verdict):
    fake = SimpleNamespace(order_kept=lambda query, by="dot": arrow if by == "dot" else near)
    assert inside.better_reading(fake, 0) == f"On this example {verdict}"


def test_the_lessons_plane_gives_the_spread_and_both_readings_and_with_rope_the_open_circles():
    p = plane()
    brief = inside.plane_in_brief(p, 3, TOKENS + ["mat"])
    assert brief.startswith("Head 2's queries (●) and keys (◆) as points in one plane") and \
        f"here {p.explained:.0%}" in brief
    assert f"right order for {p.order_kept(3):.0%} of the pairs" in brief and "(RoPE)" not in brief
    assert f"distance (nearer = higher score) for {p.order_kept(3, 'distance'):.0%}" in brief
    rope = plane(d_model=32, rope_theta=10000.0)
    assert rope.keys_before_rope is not None
    assert "An open circle (○) is a key before its rotary turn (RoPE)" in inside.plane_in_brief(rope, 3, TOKENS + ["x"])
    assert inside.ROPE_NOTE.startswith("**Keys before and after the rotary turn.**")
    assert inside.OPEN_CIRCLES in inside.ROPE_NOTE, "the attention page's note and the lesson say it alike"
    assert inside.true_scores_note(1).startswith("The true scores of head 2:")


# --- weight and contribution on the special tokens ------------------------------------------------------------------

def test_an_encoder_parks_on_its_special_tokens_a_decoder_on_its_first_token():
    encoder, decoder = head_stats.encoder_parts(), head_stats.decoder_parts()
    assert inside.parked_header(encoder) == "What the weight on [CLS] and [SEP] really adds"
    assert inside.parked_header(decoder) == "What the weight on the first token really adds"
    assert inside.parked_intro(encoder).startswith(
        "Many heads put most of their weight on [CLS] and [SEP] (shown as *parks on …* in the table).")
    assert "(an attention sink)" in inside.parked_intro(decoder)
    assert inside.parked_sentence(encoder, 0.62, 0.18) == (
        "On this text, a head puts on average **62%** of its weight on [CLS] and [SEP], but that weight adds **18%** "
        "of what it passes on: less than the weight says.")
    assert inside.parked_sentence(decoder, 0.2, 0.3).endswith(": more than the weight says.")
    assert inside.parked_caption(encoder) == inside.SOURCES["contributions"]
    assert "Their finding is about BERT" in inside.parked_caption(decoder)


# --- rollout --------------------------------------------------------------------------------------------------------

def test_the_rollout_sentence_gives_the_positions_own_share_and_the_largest_other():
    flow = np.zeros((2, 3, 3))
    flow[-1, 1] = [0.3, 0.45, 0.25]
    text = inside.rollout_sentence(flow, ["a", "*b*", "c"], 1)
    assert text == ("On this text, after the last layer, position 2 `*b*` holds 45% of its own token; the other input "
                    "token that reached it most is 1 `a`, with 30%.")
    assert inside.rollout_sentence(np.ones((1, 1, 1)), ["a"], 0) == ("On this text, the only position keeps all of "
                                                                     "its own token: 100%.")


def test_rollout_says_how_many_layers_it_follows_and_what_it_leaves_out():
    assert "through all 6 layers" in inside.rollout_intro(6)
    brief = inside.rollout_in_brief(30)
    assert "Rollout follows all 30 layers" in brief and f"residual connection ({RESIDUAL})" in brief
    assert f"feed-forward network ({FEED_FORWARD})" in brief and "not a measured cause" in brief
    assert f"residual connection ({RESIDUAL})" in inside.ROLLOUT_SYMBOLS
    random = inside.rollout_untrained()
    assert random.startswith(inside.ROLLOUT_IN_ONE) and random.endswith("so there are no layers to follow.")
    assert "follows attention back through the layers of a trained model" in inside.ROLLOUT_IN_ONE


def test_rollout_names_each_of_its_four_simplifications():
    for assumption in ("mean of the heads' attention weights", "**half** of each token", "**multiplied**",
                       "feed-forward network", "not a measured cause"):
        assert assumption in inside.ROLLOUT_ASSUMPTIONS, assumption
    assert "Abnar and Zuidema (2020)" in inside.SOURCES["rollout"]
