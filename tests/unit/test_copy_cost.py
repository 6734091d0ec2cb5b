"""What the pages say about the cost of heads (the cost table's rows: test_formulas)."""

from __future__ import annotations

import pytest

from mha_app.copy import cost as say
from mha_core import cost
from mha_core.teaching.published import preset, presets


@pytest.mark.parametrize(("h", "heads"), [(1, "1 head of d_k = 128"), (8, "8 heads of d_k = 16")])
def test_the_intro_and_the_names_agree_in_number(h, heads):
    assert say.many_heads(h, 128 // h) == heads
    text = say.intro(11, 12, 128, h, 128 // h)
    assert f"shapes: {heads} against one head of d_model = 128, for n = 11 queries and m = 12 keys" in text
    assert say.MULTIPLY_ADD in text
    assert say.one_head(128) == "1 head of d_model = 128"


@pytest.mark.parametrize(("kv", "shared"), [(1, "share 1 K/V head (grouped"), (3, "share 3 K/V heads (grouped")])
def test_shared_key_value_heads_in_the_singular_and_the_plural(kv, shared):
    assert f"This example's 9 query heads {shared}" in say.shared_kv(9, kv)
    assert f"because 9 query heads {shared.split(' (')[0]}: " in say.parameters_caption(9, kv, False, 1000)


def test_the_parameters_caption_names_the_biases_and_the_total():
    plain = say.parameters_caption(8, 8, True, 66_048)
    assert plain.startswith("The parameters do not grow: the example's own W_Q, W_K, W_V and W_O and biases hold "
                            "66,048 numbers, the parameters' total for h = 8")
    assert "more heads is not always better" in plain and "(BLEU: a score of how closely" in plain
    assert "W_O hold 65,536 numbers" in say.parameters_caption(8, 8, False, 65_536)


def test_what_is_kept_by_one_head_and_by_h():
    table = say.kept_table(11, 11, 128, 8, 16, 4)
    assert table == {"what is kept": ["attention weights (n × m each)", "their memory at 32 bits"],
                     "1 head of d_model = 128": ["121", cost.human_bytes(484)],
                     "8 heads of d_k = 16": ["968", cost.human_bytes(3872)]}


def test_what_grows_counts_the_weights():
    text = say.what_grows(11, 12, 8)
    assert "8 heads make 8 matrices of attention weights of 11 × 12, 1,056 numbers in all" in text
    assert "one matrix of 132" in text


def test_rope_is_counted_only_with_rope():
    assert say.rope_note(16, 16, 576, 9, 3, rope=False) == ""
    count = cost.rope_multiplications(16, 16, 576, 9, 3)
    assert say.rope_note(16, 16, 576, 9, 3, rope=True) == (
        f"Not counted above: RoPE turns every number of Q and K by its position, 2 multiplications each ({count:,} "
        "here), small next to the projections.")


def test_the_clock_words():
    assert "once with one head of 128 and once with 1 head of 128" in say.measured_intro(128, 1, 128)
    assert "once with 8 heads of 16" in say.measured_intro(128, 8, 16)
    assert say.ratio_label(4) == "4 heads ÷ 1 head"
    text = say.timing_caption(7, "CPU", "numpy", 8)
    assert text.startswith("Median of 7 runs each on CPU, numpy.") and "8 matrices of attention weights" in text


def test_the_cache_table_words():
    assert say.total_column(4096, 2) == "at 4,096 tokens × 2"
    caption = say.cache_caption(presets())
    assert "Transformer base: h = 8 → 4" in caption and "Transformer base: not fixed, because the paper" in caption
    assert "Encoders (BERT-base, all-MiniLM-L6-v2)" in caption
    assert "all-MiniLM-L6-v2: its 512 positions come from BERT" in caption and caption.endswith(".")
    assert "takes as many K/V heads as possible up to 8, as long as they divide h and are fewer than h" in caption
    assert ("all-MiniLM-L6-v2: its 512 positions come from BERT, and its bar shows them; it was fine-tuned on "
            "inputs of at most 128 tokens, "
            "and sentence-transformers cuts longer inputs at 256") in caption
    llama = preset("llama-2-70b")
    assert say.formula_intro(llama.name, llama.n_layers, llama.d_k) == (
        "**Llama 2 70B**: 80 layers, d_k = 128, K/V cache = 2 · layers · h_kv · d_k · tokens · batch · 2 bytes:")
    assert say.no_gqa("GQA", 7) == "GQA: h = 7 has no divisor between 1 and h, so there is no GQA in between."


def test_the_sources_are_numbered_as_the_table():
    lines = say.sources(presets()).split("\n")
    assert len(lines) == len(presets()) and lines[0].startswith("1. **Transformer base**: ")
