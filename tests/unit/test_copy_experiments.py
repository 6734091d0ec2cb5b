"""copy.experiments: what the pages say about the experiments on heads, from plain values."""

from __future__ import annotations

import math

import pytest

from mha_app.copy import experiments as say
from mha_app.copy.markup import plain


@pytest.mark.parametrize("off, made, parts", [
    ((2,), "attention weights", ["Switched off: head 2. Its attention weights", "zeroes its output", "sees it."]),
    ((2, 5), "queries", ["Switched off: heads 2 and 5. Their queries", "zeroes their output", "sees them."]),
])
def test_heads_off_text_agrees_with_the_number_of_heads(off, made, parts):
    text = say.heads_off_text(off, made)
    assert all(part in text for part in parts), text
    assert say.heads_off_text((), made) == ""
    assert say.heads_off_line(off).endswith("off (zeroed at Step 3)")


def test_cross_attention_names_both_sentences_sizes():
    assert say.cross_attention_text(5, None) == ""
    text = say.cross_attention_text(5, 7)
    assert "The **7** keys and values come from the source sentence (Y), the **5** queries" in text
    assert "change shape, to 5 × 7" in text
    assert "The projection matrices W_Q, W_K, W_V are d_model × d_model as before; only the matrices of" in text


@pytest.mark.parametrize("h, kv, parts", [
    (8, 1, ["share **h_kv = 1** key/value head (multi-query attention, Shazeer 2019;",
            "query heads 1–8 read K/V head 1.", "**1 · 16 = 16** columns instead of 8 · 16 = 128"]),
    (4, 4, ["share **h_kv = 4** key/value heads (grouped-query attention, Ainslie et al. 2023;",
            "query head 1 reads K/V head 1; query head 2 reads K/V head 2;"]),
    (16, 8, ["query heads 1–2 read K/V head 1; query heads 3–4 read K/V head 2; and so on."]),
])
def test_shared_key_value_heads_list_their_groups(h, kv, parts):
    text = say.kv_sharing_text(h, kv, 16, "Llama 2 70B", 64, 8)
    assert all(part in text for part in parts), text
    assert "Llama 2 70B's 64 query heads share 8" in text


def test_the_kv_cache_and_its_saving():
    assert say.kv_saving_delta(12288).startswith("-12,288 ")  # an ASCII minus: Streamlit's arrow reads it
    assert "with 2 instead of 8 K/V heads it keeps 4 times fewer" in say.kv_cache_caption(8, 2)


@pytest.mark.parametrize("off, model, now", [(False, None, "with 1/√d_k"),
                                             (True, "all-MiniLM-L6-v2", "without scaling")])
def test_the_scaling_text_gives_the_layer_numbers(off, model, now):
    text = say.scaling_text(16, "Q_i K_iᵀ", 8.0, 1.5, 2.0, off, model)
    assert "Here d_k = 16: this layer's raw scores Q_i K_iᵀ have a spread (standard deviation) of **8**" in text
    assert "**2** after dividing by √16 = 4." in text and "1.5 × 2 = **3**" in text
    assert text.count(now) == 1 and (model is None) == ("was trained with the scaling" not in text)
    assert (model is None) == ("not how a model trained without it would behave" not in text)
    assert say.scaling_over(12).startswith("Over all 12 heads")
    assert say.scaling_switch_caption(True).endswith("sidebar.")
    assert say.scaling_switch_caption(False).endswith("grows with d_k.")


@pytest.mark.parametrize("pattern, parts", [
    ("uniform", ["should all read 0", "the same weight 1/m"]),
    ("previous", ["should read **4** on the rule's key", "= **0.886** of the row's weight when all 8 keys",
                  "A row with no key before it"]),
    ("first", ["$e^{4} / (e^{4} + 7)$"]),
])
def test_a_planted_head_says_what_its_weights_should_read(pattern, parts):
    aim = say.planted_aim(pattern, 4.0, 8)
    assert all(part in aim for part in parts), aim
    assert ("spreads its weight evenly" in aim) == (pattern in ("previous", "next"))
    assert f"{math.exp(4) / (math.exp(4) + 7):.3f}" in say.planted_aim("self", 4.0, 8)


@pytest.mark.parametrize("bias", [False, True])
def test_a_planted_head_names_its_columns(bias):
    text = say.planted_text("Heads do this.", 2, 16, bias, "least squares", r"q \cdot k", "Aim")
    assert text.startswith("Heads do this. To plant it, only columns 17–32 of W_Q (head 2's block")
    assert ("and entries 17–32 of b_Q" in text) == bias
    assert "found by least squares, of $q \\cdot k \\cdot" in text and text.endswith("unchanged. Aim.")
    assert say.planted_title(2, "the previous token") == "Head 2, planted: the previous token"


def test_the_fit_is_exact_or_the_closest():
    assert say.fit_exact("2 × 10⁻⁷") == ("The fit is exact: the scores differ from strength · rule by at most "
                                          "2 × 10⁻⁷ (rounding).")
    assert say.fit_closest(0.5, 0.1, 8, 20, 16).endswith("; here m = 20 > d_k = 16.")
    assert say.fit_closest(0.5, 0.1, 8, 8, 16).endswith("; here they are not quite.")
    assert "An exact fit needs the 8 keys" in say.fit_closest(0.5, 0.1, 8, 8, 16)


@pytest.mark.parametrize("off, parts", [
    ((3,), ["Head 3 of layer 2 is switched off (its output", "the model with this head off."]),
    ((1, 3), ["Heads 1 and 3 of layer 2 are switched off (their output", "the model with these heads off."]),
])
def test_a_trained_model_with_heads_off(off, parts):
    text = say.model_heads_off(off, 2)
    assert all(part in text for part in parts), text


def test_the_focused_head_is_computed_though_it_is_off():
    assert say.focused_head_off(4).startswith("Head 4 is switched off: its weights and output are computed as usual")


@pytest.mark.parametrize("weights, part", [("trained", "(Michel et al. 2019). Here"),
                                           ("tiny", "the tiny example's weights are set by hand"),
                                           ("random", "with random weights every head matters")])
def test_the_ablation_intro_says_how_much_heads_matter_here(weights, part):
    text = say.ablation_intro(weights, False, False)
    assert part in text and text.endswith("Choose heads under *Switch heads off* in the sidebar.")
    with_cosine = say.ablation_intro(weights, True, True)
    assert say.COSINE in with_cosine and "Choose heads" not in with_cosine


@pytest.mark.parametrize("off, parts", [
    ((), ["**Which head matters most?**", "and measure."]),
    ((2,), ["all 8 heads on (head 2 too): so it gets a bar here", "drawn with it off, shows 0."]),
    ((2, 5), ["(heads 2 and 5 too): so they get bars here", "drawn with them off"]),
])
def test_the_ranking_question(off, parts):
    text = say.ranking_question(None, off, False, 8)
    assert all(part in text for part in parts), text
    assert ("from the full layer" in text) == bool(off)
    assert say.ranking_question(3, (1,), True, 12).startswith("**Which head of layer 3 matters most?**")
    assert "from the full model, all 12 heads on" in say.ranking_question(3, (1,), True, 12)


def test_the_rankings_of_trained_models():
    assert "it is 0.412 with every head" in say.next_token_ranking_title(4, 0.4123)
    down, up = say.next_token_ranking(2, 4, "`cat`", 0.25), say.next_token_ranking(2, 4, "`cat`", -0.25)
    assert "switching off head 2 of layer 4 changes the probability of the predicted next token `cat` most: down by " \
           "0.2500." in down and "most: up by 0.2500." in up
    assert say.sentence_vector_ranking(3, 1).startswith("On this text, head 3 of layer 1 moves the sentence vector")
    assert say.sentence_vector_ranking_title(5).startswith("Layer 5, one head off")
    assert say.last_layer_ranking_title(5).startswith("Layer 5, one head off: how far the last layer's")
    assert say.all_heads_off(False).endswith("(zero here: no bias).") and say.all_heads_off(True).endswith("token.")


@pytest.mark.parametrize("decoder, part", [(True, "which a decoder normalises"), (False, "and LayerNorm")])
def test_later_layers_change(decoder, part):
    text = say.layer_change_caption(3, decoder)
    assert text.startswith("Layers before 3 are untouched (zero); from layer 3 on,") and part in text


def test_the_sentence_vector_and_the_next_token_quote_user_text():
    assert say.sentence_vector_text("all-MiniLM-L6-v2", (), 2).endswith("Compare two sentences:")
    assert say.sentence_vector_text("M", (1, 2), 2).endswith("with every head and with heads 1 and 2 of layer 2 off:")
    assert plain(say.similarity_caption("**a** cat")) == ("Your sentence and “**a** cat”; 1 = same direction, "
                                                          "0 = unrelated.")
    assert say.heads_off_label((3,)) == "With head 3 off" and say.heads_off_named((1, 3)) == "heads 1 and 3 off"
    assert say.next_token_text("SmolLM2", (), 1).endswith("Switch heads off in the sidebar to see it change.")
    assert say.next_token_text("S", (2,), 1).endswith("With every head, and with head 2 of layer 1 off:")
    same = say.next_token_caption(True, "mat", "*x*", (2,))
    assert same == "The most likely next token stays the same: `mat` with every head, `*x*` with head 2 off."
    assert say.next_token_caption(False, "a", "b", (1, 2)).startswith("The most likely next token changes: `a`")
