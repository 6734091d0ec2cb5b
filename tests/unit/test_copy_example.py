"""What the app says about the example on view (mha_app.copy.example): the line of what is computed, the device and
the padding note, from plain values."""

from __future__ import annotations

from types import SimpleNamespace

import mha_core as mc
from mha_app.copy.example import describe, device_label, padding_note

TOKENS = ["The", "cat", "sat", "on", "the", "mat", "because", "it", "was", "tired", "."]


def _view(card=None, input="sentence", seed=0, ablate=(), layer=1, pad=0):
    return SimpleNamespace(spec=SimpleNamespace(card=card, input=input, seed=seed, ablate=ablate, pad=pad),
                           view=SimpleNamespace(layer=layer))


def _example(cfg, n=11, key_tokens=None):
    return SimpleNamespace(cfg=cfg, n=n, key_tokens=key_tokens)


def test_the_line_of_what_is_computed_in_each_mode():
    sizes = " · 11 tokens · d_model = 128 · h = 8 · d_k = 16"
    assert describe(_view(seed=3), _example(mc.MHAConfig(128, 8))) == "random weights, seed 3" + sizes
    assert describe(_view(ablate=(2, 5)), _example(mc.MHAConfig(128, 8))) == (
        "random weights, seed 0" + sizes + " · heads 2 and 5 off (zeroed at Step 3)")
    assert describe(_view(input="tiny"), _example(mc.MHAConfig(4, 2), n=3)).startswith("tiny example · 3 tokens")
    masked = describe(_view(pad=2, ablate=(2,)), _example(mc.MHAConfig(128, 8, causal=True)))
    assert masked.endswith(sizes + " · causal mask · 2 padded keys · head 2 off (zeroed at Step 3)")
    assert describe(_view(pad=1), _example(mc.MHAConfig(128, 8))).endswith(" · 1 padded key")
    pair = describe(_view(input="pair"), _example(mc.MHAConfig(128, 8), n=5, key_tokens=["a"] * 7))
    assert "· 5 query tokens, 7 key tokens ·" in pair


def test_a_trained_models_line_names_its_layer_and_shared_kv_heads():
    minilm = SimpleNamespace(name="all-MiniLM-L6-v2", n_layers=6)
    assert describe(_view(card=minilm, layer=2), _example(mc.MHAConfig(384, 12), n=13)).startswith(
        "all-MiniLM-L6-v2, layer 2 of 6 · 13 tokens · d_model = 384 · h = 12 · d_k = 32")
    smol = SimpleNamespace(name="SmolLM2-135M-Instruct", n_layers=30)
    cfg = mc.MHAConfig(576, 9, n_kv_heads=3, causal=True)
    assert describe(_view(card=smol, layer=18), _example(cfg, n=16)) == (
        "SmolLM2-135M-Instruct, layer 18 of 30 · 16 tokens · d_model = 576 · h = 9 · h_kv = 3 · d_k = 64 · causal mask")
    assert describe(_view(card=smol), _example(cfg, n=16), layer=False).startswith("SmolLM2-135M-Instruct, 30 layers ·")


def test_the_device_is_named_for_a_student():
    assert device_label("cpu") == "CPU" and device_label("cuda:0") == "GPU (cuda:0)"


def test_the_padding_note_says_what_padding_is_and_which_tokens_stand_in_for_it():
    text = padding_note(2, TOKENS, first_query=9)
    assert text.startswith("**Padding** is filler: a batch computes several texts at once, so the shorter ones get "
                           "filler tokens (such as [PAD]) at the end until all have one length")
    assert "Here the last 2 tokens of the sentence (`tired`, `.`) stand in for that filler" in text
    assert "their outputs are thrown away" in text and "the pages start on query 9 `was`" in text
    one = padding_note(1, TOKENS)
    assert "the last 1 token of the sentence (`.`) stands in for that filler" in one and one.endswith("outputs).")


def test_in_cross_attention_only_the_source_sentences_keys_are_padded():
    text = padding_note(1, ["a", "b"], key_tokens=["x", "*y*"])
    assert "of the source sentence (`*y*`) stands in" in text and "thrown away" not in text
