"""What the decoder's sections say: RoPE in Step 1 and the prediction of the next token (SmolLM2's sizes)."""

from __future__ import annotations

from mha_app.copy import decoder


def test_the_rope_intro_gives_the_pairs_and_angles_of_these_sizes():
    text = decoder.rope_intro("SmolLM2-135M-Instruct", 64, 100000.0, 1.0, 1.4e-5)
    assert text.startswith("SmolLM2-135M-Instruct adds no position signal to X.")
    assert "the d_k = 64 components of a query or key form 32 pairs, component a with component a + 32" in text
    assert "(a = 1, …, 32; counted from 1, as c1 … c64 in the figures)" in text
    assert "θ_a = 100,000^(−2(a − 1)/64): the first pair by 1 radian per position, the last by 1.4 × 10⁻⁵." in text
    assert "Su et al. 2021" in text and "The values V are not turned." in text


def test_rope_keeps_the_content_in_the_score():
    assert "the score depends only on their distance, not on where in the text the pair sits" in decoder.ROPE_DISTANCE
    assert "The content still matters as much as ever" in decoder.ROPE_DISTANCE
    assert "looks the same to the query" not in decoder.ROPE_DISTANCE


def test_the_rope_captions_give_the_heads_numbers():
    caption = decoder.rope_caption(16, 5, 2.4e-7)
    assert "hardly turn over 16 positions" in caption and "in Q_5 is 2.4 × 10⁻⁷ (rounding)" in caption
    assert "over 1 position." in decoder.rope_caption(1, 1, 0.0)
    distance = decoder.rope_distance_caption(5, 14, "`Ġred`", 11, "`Ġthe`", 0.4567, 3e-6, 12.345678, "Q_5 K_2^T",
                                             12.3457, 9.87654)
    assert distance.startswith("Head 5's query of the query token `Ġred` (position 14, chosen in the sidebar) and the "
                               "key of `Ġthe` (position 11, the key it weights most: 0.457)")
    assert "placed at every pair of positions" in distance and "differ by at most 3.0 × 10⁻⁶ (rounding)" in distance
    assert "they are 3 apart, so their product is 12.35: the raw score Q_5 K_2^T of that pair in Step 2 (12.35)" \
        in distance
    assert distance.endswith("Without RoPE it would be 9.877 at any distance.")


def test_the_next_token_intro_and_the_rest():
    text = decoder.next_token_intro(30, 49152, heads_off=False)
    assert text.startswith("After all 30 layers, a final RMSNorm")
    assert "a probability for each of the 49,152 tokens of the vocabulary" in text and "switched off" not in text
    assert decoder.next_token_intro(30, 49152, heads_off=True).endswith(
        " These are the predictions of the model with the heads switched off in the sidebar.")
    assert decoder.next_token_rest(49147, 0.4321) == "The other 49,147 tokens share the remaining 43.2%."
    assert decoder.next_token_rest(1, 0.01) == "The other 1 token share the remaining 1.0%."
