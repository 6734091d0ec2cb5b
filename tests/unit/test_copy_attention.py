"""What the attention page says, for each mode where its words differ."""

from __future__ import annotations

import pytest

from mha_app.copy.attention import entropy_caption, group_caption, intro, mask_caption, step_through_link


def test_the_intro_gives_the_scale_of_this_example():
    scaled = intro(16, None, blocked=False)
    assert "1/√d_k = 1/√16 = 0.2500" in scaled and "not scaled" not in scaled
    unscaled = intro(16, 1.0, blocked=False)
    assert "Here the scores are not scaled." in unscaled and "√" not in unscaled
    assert "1/√64 = 0.1250" in intro(64, None, blocked=False)


def test_the_intro_says_what_a_blocked_pair_gets_where_the_mask_blocks_pairs():
    """Causal mask or padding: the clause is said; nothing blocked: left out; left out too where the page says it
    elsewhere (the answer's reason, or the answer of a waiting question about a fully blocked row)."""
    assert "; a blocked pair (mask M) gets 0." in intro(16, None, blocked=True)
    assert "; a blocked pair (mask M) gets 0." in intro(16, None, blocked=True, said_elsewhere=False)
    for text in (intro(16, None, blocked=False), intro(16, None, blocked=True, said_elsewhere=True)):
        assert "blocked" not in text
        assert text.endswith("The head's output is the value vectors mixed by these weights.")


def test_the_group_caption_names_the_group_size():
    assert "the 4 query heads that read the same key/value head" in group_caption(4)
    assert "the 3 query heads" in group_caption(3)  # SmolLM2: 9 query heads, 3 K/V heads


def test_nothing_blocked_says_how_to_see_the_mask():
    text = mask_caption(0, 0, 0, 11, 11)
    assert text.startswith("Nothing is blocked in this example") and "causal mask or padding" in text


def test_a_causal_mask_alone_counts_the_pairs_after_each_query():
    """SmolLM2 on 16 tokens: 16 · 15 / 2 pairs of a key after its query."""
    assert mask_caption(120, 120, 0, 16, 16) == (
        "The mask M blocks 120 of the 256 query–key pairs (M = −∞ there, 0 elsewhere): 120 by the causal mask (every "
        "key after its query).")


@pytest.mark.parametrize(("pad", "keys"), [(1, "the 1 padded key (the"), (2, "the 2 padded keys (the")])
def test_padding_alone_says_padded_key_in_the_singular_and_the_plural(pad, keys):
    text = mask_caption(11 * pad, 0, pad, 11, 11)
    assert f"blocks {11 * pad} of the 121 query–key pairs" in text and f": {11 * pad} by {keys}" in text
    assert "causal" not in text and " more" not in text


def test_a_causal_mask_and_padding_count_the_padding_as_more():
    text = mask_caption(55 + 9, 55, 2, 11, 11)  # 11 tokens causal, then the last 2 keys for the 9 earlier queries
    assert "55 by the causal mask (every key after its query) and 9 more by the 2 padded keys" in text


def test_cross_attention_blocks_only_padded_keys():
    assert "blocks 22 of the 121" in mask_caption(22, 0, 2, 11, 11)
    assert "of the 132 query–key pairs" in mask_caption(22, 0, 2, 11, 12)  # n = 11 queries, m = 12 keys


def test_the_entropy_caption_in_each_mode():
    plain = entropy_caption(11, cross=False, blocked=False)
    assert "log2(m) = log2(11) bits" in plain and "(which may be the token itself)" in plain
    assert "partly blocked" not in plain
    assert plain.endswith("That maximum grows with the number of tokens, so longer sentences give higher entropies: "
                          "compare heads on the same sentence.")
    assert "(which may be the token itself)" not in entropy_caption(12, cross=True, blocked=False)
    masked = entropy_caption(16, cross=False, blocked=True)
    assert "log2(16)" in masked and "log2 of the number of keys it may see" in masked


def test_the_step_through_link_names_layer_and_head():
    assert step_through_link(6, 8) == "Step through layer 6, head 8"
