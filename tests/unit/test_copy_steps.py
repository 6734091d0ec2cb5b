"""The sentences of the four step pages (overview, projection, concatenation, output), from their plain values."""

from __future__ import annotations

import pytest

from mha_app.copy import steps

# --- The overview ------------------------------------------------------------------------------------------------

def test_the_overview_intro_gives_the_sizes_and_no_sharing_in_plain_multi_head_attention():
    text = steps.overview_intro(n_heads=4, d_k=8, kv_heads=4, group_size=1, rope_decoder=False)
    assert "**h = 4** times" in text and "**d_k = d_model / h = 8**" in text
    assert "its own projections of the input" in text and "grouped-query" not in text
    assert "kind of relation. The heads' results" in text
    assert "decoder" not in text
    assert "Each of the four steps below has its own page" in text and "pages of this app" not in text


def test_the_overview_intro_has_a_one_head_form():
    """h = 1: nothing runs in parallel, d_k = d_model is no smaller space, and nothing sits side by side."""
    text = steps.overview_intro(n_heads=1, d_k=128, kv_heads=1, group_size=1, rope_decoder=False)
    assert "**h = 1**: one head" in text and "full **d_k = d_model / h = 128** dimensions" in text
    assert not any(phrase in text for phrase in ("in parallel", "side by side", "smaller space of **", "heads' "))


def test_the_projection_intro_has_a_one_head_form():
    """h = 1: the one head owns every column; there are no blocks of several heads to tell apart."""
    one = steps.projection_intro(128, 1, 128, 1, cross=False, m=11, rope=False)
    assert "1 · 128 = 128 columns, all of them the one head's: one view of the input." in one
    assert "different views" not in one and "head *i*" not in one
    assert "the same input, 8 different views of it." in steps.projection_intro(128, 8, 16, 8, False, 11, False)


@pytest.mark.parametrize(("kv_heads", "group_size", "made"), [
    (3, 3, "only 3 key/value heads are made, each read by 3 heads."),
    (1, 4, "only one key/value head is made, read by all 4 heads."),
])
def test_the_overview_intro_says_how_many_key_value_heads_grouped_query_attention_makes(kv_heads, group_size, made):
    text = steps.overview_intro(n_heads=kv_heads * group_size, d_k=64, kv_heads=kv_heads, group_size=group_size,
                                rope_decoder=False)
    assert "its own query projection of the input" in text and "its own projections of the input" not in text
    assert "kind of relation; keys and values are shared (grouped-query attention): " + made in text


def test_the_overview_intro_names_the_causal_mask_and_rope_of_a_decoder_layer():
    text = steps.overview_intro(n_heads=9, d_k=64, kv_heads=3, group_size=3, rope_decoder=True)
    assert text.endswith("RoPE turns every query and key by its position before they are compared (Step 1b).")
    assert "a causal mask lets each token see only itself and the tokens before it" in text


def test_the_tokens_caption_names_the_rows_in_self_and_cross_attention_then_the_source_of_x():
    assert steps.tokens_caption(False, "X is made so.") == ("The input split into tokens; each token is one row of X. "
                                                           "X is made so.")
    cross = steps.tokens_caption(True, "X is made so.")
    assert cross.startswith("The sentence being written") and "one row of X (the queries). X is made so." in cross
    assert "one row of Y (keys and values)" in steps.SOURCE_TOKENS


def test_the_cost_question_asks_before_it_shows_and_the_answer_adds_what_sharing_saves():
    question = steps.cost_question(32, "ONE MULTIPLY-ADD")
    assert "Does splitting d_model = 32 into h heads" in question and "(ONE MULTIPLY-ADD)" in question
    assert "Predict it on the cost page" in question
    plain = steps.cost_answer(1, "M")
    assert "exactly those of one head of full width" in plain and "(M)" in plain and "grouped-query" not in plain
    shared = steps.cost_answer(3, "M")
    assert shared.startswith(plain) and "shares each key/value head among 3 query heads" in shared
    assert "Ainslie et al. 2023" in shared


def test_the_cost_caption_says_what_h_and_1_stand_for_then_adds_what_it_is_given():
    text = steps.cost_caption(4, 8, 32, "GROWS.", "ROPE.")
    assert text == "h = 4: 4 heads of d_k = 8 each; h = 1: one head of d_k = 32. GROWS. ROPE."
    assert steps.cost_caption(1, 32, 32, "GROWS.").startswith("h = 1: 1 head of d_k = 32 each;")
    assert steps.cost_caption(4, 8, 32, "GROWS.").endswith("GROWS.")


def test_the_torch_check_agrees_with_a_tick_or_reports_the_difference():
    ok = steps.torch_check(True, 1.23456e-7)
    assert ok == (":material/check_circle: Checked: PyTorch computes this layer its own way and gets the same output, "
                  "up to rounding (largest difference 1.23 × 10⁻⁷).")
    bad = steps.torch_check(False, 0.5)
    assert "gets another output" in bad and "0.5, more than rounding" in bad and ":material/" not in bad
    assert steps.how_checked("HOW.") == "HOW. The two outputs are compared number by number."


# --- Step 1: projection ------------------------------------------------------------------------------------------

def test_the_projection_intro_gives_each_head_its_block_of_columns():
    text = steps.projection_intro(d_model=32, h=4, d_k=8, kv_heads=4, cross=False, m=5, rope=False)
    assert text.startswith("Each token is a row of X with **32** numbers. Three projection matrices turn X into "
                           "queries")
    assert "h · d_k = 4 · 8 = 32 columns, and head *i* owns its own block of 8 of them: the same input, 4 different" \
        in text
    assert "Y" not in text and "RoPE" not in text


def test_the_projection_intro_of_shared_key_value_heads_cross_attention_and_rope():
    gqa = steps.projection_intro(d_model=576, h=9, d_k=64, kv_heads=3, cross=False, m=5, rope=True)
    assert "W_K and W_V have only 3 · 64 = 192, one block per key/value head, each shared by 3 query heads." in gqa
    assert gqa.endswith("Then every query and key is turned by its position (RoPE, Step 1b below).")
    cross = steps.projection_intro(d_model=32, h=4, d_k=8, kv_heads=4, cross=True, m=1, rope=False)
    assert "and Y into keys" in cross and cross.endswith("the source sentence (1 token).")
    assert steps.projection_intro(32, 4, 8, 4, True, 6, False).endswith("(6 tokens).")


def test_the_projection_caption_adds_the_bias_to_pytorchs_product_only_with_biases():
    assert steps.projection_caption("NOTE.", True).startswith("NOTE. PyTorch stores each matrix transposed")
    assert "x @ W.T + b;" in steps.projection_caption("NOTE.", True)
    assert "x @ W.T;" in steps.projection_caption("NOTE.", False)


def test_the_code_note_says_what_x_kv_is_and_whether_rope_ran():
    assert steps.projection_code_note(False, None) == ("Here `x_kv` is X itself (self-attention). `cfg.rope_theta` is "
                                                       "None: no rotation, q and k are the projections themselves.")
    assert steps.projection_code_note(True, 100000.0) == ("Here `x_kv` is Y, the source sentence (cross-attention). "
                                                          "`cfg.rope_theta` = 100000, so the rotation ran.")


# --- Step 3: concatenation ---------------------------------------------------------------------------------------

def test_the_concatenation_intro_for_one_head_and_several():
    assert steps.concat_intro(4, 8).startswith("Each of the 4 heads produced one output row per token, of d_v = 8")
    assert steps.concat_intro(1, 32).startswith("The one head produced one output row per token, of d_v = 32")


def test_the_switched_off_note_agrees_with_the_number_of_heads():
    assert steps.concat_heads_off(()) == ""
    one = steps.concat_heads_off((2,))
    assert one.startswith("Switched off: head 2.") and "(0 for that head, 1 for the others)" in one
    assert "so its columns" in one
    two = steps.concat_heads_off((2, 5))
    assert two.startswith("Switched off: heads 2 and 5.") and "(0 for those, 1 for the others)" in two
    assert "so their columns of the concatenation are zero." in two


def test_the_concatenation_says_what_shows_a_columns_head():
    assert "The head's number above each block, in that head's colour, and the block's frame" in steps.CONCAT_COLOURS
    assert steps.CONCAT_COLOURS.endswith("a cell's colour is its value.")
    assert "shown by its colour" not in steps.CONCAT_COLOURS


def test_the_concatenation_check_names_the_head_mask_factor_only_when_heads_are_off():
    assert steps.concat_check(True, False).endswith("equal head i exactly: **True**.")
    assert steps.concat_check(False, True).endswith("equal head i times its head-mask factor exactly: **False**.")


# --- Step 4: output ----------------------------------------------------------------------------------------------

def test_the_output_intro_and_check_name_b_o_only_with_biases():
    with_bias = steps.output_intro(8, True)
    assert "head blocks of d_v = 8 columns, W_O splits into blocks of 8 rows" in with_bias
    assert "its own block of W_O, plus the bias b_O. Without W_O" in with_bias
    assert "b_O" not in steps.output_intro(8, False)
    assert steps.contributions_check(1.5e-7, True) == ("Check: the sum of the head contributions plus b_O differs "
                                                       "from the output by at most 1.5 × 10⁻⁷ (rounding only).")
    assert "contributions differs" in steps.contributions_check(0.0, False)
