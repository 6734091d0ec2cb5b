"""copy.links: the words of a link's warnings and of the rules between settings, from plain values."""

from __future__ import annotations

import pytest

from mha_app.copy import links
from mha_app.copy.markup import quote


def test_a_list_names_its_bounds_and_what_was_left_out_in_agreement():
    one = links.bad_list("ablate", "the heads to switch off", 1, 16, ["x"])
    assert one.startswith("`ablate` lists the heads to switch off by number from 1 to 16")
    assert "(e.g. 1,2)" in one and "`x` was left out." in one
    many = links.bad_list("ablate", "the heads", 1, 16, ["a", "b", "c", "d"])
    assert "`a`, `b`, `c` were left out." in many and "`d`" not in many


@pytest.mark.parametrize("whole, kind", [(False, "a number"), (True, "a whole number")])
def test_a_value_that_is_no_number_is_quoted(whole, kind):
    text = links.not_a_number("seed", "the random seed", "**x**", whole=whole)
    assert text == f"`seed` should be {kind} (the random seed), but the link says {quote('**x**')}; using the default."


def test_bounds_are_written_as_the_setting_counts():
    assert links.out_of_bounds("strength", "31", 0.0, 30.0, "the strength") == (
        "`strength` = `31` is outside 0…30 (the strength); using the default.")  # a decimal setting: its text
    assert links.out_of_bounds("h", "+017", 1, 16, "the number of heads", 17) == (
        "`h` = 17 is outside 1…16 (the number of heads); using the default.")    # a whole number: its value
    long = "9" * 20
    assert f"= {quote(long)} is outside 1…2147483647" in links.out_of_bounds("seed", long, 1, 2**31 - 1, "s", 1)


def test_choices_on_off_and_lengths():
    assert "must be one of none, self, but the link says `x`" in links.not_a_choice("plant", ("none", "self"), "x")
    assert links.not_on_off("pe", "Positional encoding", "maybe").startswith(
        "`pe` is on or off (Positional encoding): 1 or 0 (also true/false, yes/no, on/off), but the link says `maybe`")
    assert "longer than 4,000 characters; only the first 4,000 are used." in links.too_long("text", 4000)
    assert "has 3,000 tokens, more than the 2,048 the app shows; only the first 2,048" in links.too_many_tokens(
        "text", 3000, 2048)


def test_unknown_and_repeated_parameters_quote_what_the_link_says():
    assert links.unknown_setting("*a*") == "The link has an unknown setting `*a*`; it was ignored."
    assert links.repeated("h", 3, "4") == "`h` appears 3 times in the link; only the last one, `4`, is used."
    assert links.link_problem("pad", "No padding.") == "`pad`: No padding."


@pytest.mark.parametrize("model, heads, kv, own", [
    (None, 2, 2, "the tiny example's fixed weights have one key/value head per query head"),
    ("all-MiniLM-L6-v2", 12, 12, "all-MiniLM-L6-v2's trained weights have one key/value head per query head"),
    ("SmolLM2-135M-Instruct", 9, 3, "have their own 3 key/value heads, each shared by 3 query heads"),
])
def test_key_value_heads_with_fixed_weights_say_whose_heads_stay(model, heads, kv, own):
    text = links.kv_heads_ignored(model, heads, kv)
    assert text.startswith("The number of key/value heads applies to random weights; ")
    assert own in text and text.endswith("so it was ignored.")


def test_trained_models_keep_their_scaling_and_heads():
    assert "all-MiniLM-L6-v2 was trained with the 1/√d_k scaling and keeps it" in links.scale_kept("all-MiniLM-L6-v2")
    assert links.plant_ignored("SmolLM2-135M-Instruct").endswith("SmolLM2-135M-Instruct's heads are shown as trained.")
    assert links.head_count_fixed("h must divide d_model.", 4) == "h must divide d_model. Using h = 4 instead."
    assert links.kv_heads_fixed("No.").endswith("Using one key/value head per query head (plain multi-head attention).")
    assert links.padding_fixed("Too much.") == "Too much. No padding is used."
    assert "The causal mask is off for two sentences." in links.CAUSAL_PAIR


@pytest.mark.parametrize("heads, only", [(8, "there are only 8 heads"), (1, "there is only 1 head")])
def test_missing_heads_agree_with_the_count(heads, only):
    assert links.plant_head_missing(9, heads) == f"Head 9 cannot be planted: {only}; planting head 1."
    assert links.head_missing(9, heads) == f"Head 9 does not exist: {only}; showing head 1."
    assert links.ablate_missing(12, heads, (1,)) == f"Head 12 cannot be switched off: {only}; switching off 1 only."
    assert links.ablate_missing(12, heads, ()).endswith(f"{only}; no head is switched off.")
    assert links.ablate_missing(12, 8, (2, 5)).endswith("switching off 2,5 only.")


def test_missing_layers_queries_and_zoom_starts_agree_with_the_count():
    assert links.layer_missing(9, "all-MiniLM-L6-v2", 6) == (
        "Layer 9 does not exist: all-MiniLM-L6-v2 has only 6 layers; showing layer 1.")
    assert links.query_missing(5, 1) == "Query token 5 does not exist: there is only 1 token; showing the last one, 1."
    assert links.query_missing(50, 10).startswith("Query token 50 does not exist: there are only 10 tokens;")
    assert links.zoom_missing(300, 100, "query row") == (
        "The zoom window cannot start at 300: there are only 100 query rows; it starts at the last one, 100.")
    assert "there is only 1 key column" in links.zoom_missing(3, 1, "key column")
