"""The formulas the pages show match what was computed: biases exactly when there are some, M always defined."""

from __future__ import annotations

import re

import numpy as np

import mha_core as mc
from mha_core.teaching import formulas


def test_projection_has_biases_exactly_when_the_layer_has_them():
    with_bias = formulas.projection(mc.MHAConfig(128, 8))
    assert all(f"{m}_i = X\\,W^{{{m}}}_i + b^{{{m}}}_i" in with_bias for m in "QKV"), with_bias
    without = formulas.projection(mc.MHAConfig(4, 2, bias=False))
    assert "b^" not in without and all(f"{m}_i = X\\,W^{{{m}}}_i" in without for m in "QKV")


def test_output_and_overview_have_b_O_only_with_biases():
    assert formulas.output(mc.MHAConfig(128, 8)).count("+ b^{O}") == 2  # in both forms of the formula
    assert "b^" not in formulas.output(mc.MHAConfig(4, 2, bias=False))
    assert "+ b^{O}" in formulas.multihead(mc.MHAConfig(128, 8))
    assert "b^" not in formulas.multihead(mc.MHAConfig(4, 2, bias=False))


def test_attention_shows_the_scale_used_and_always_adds_M():
    default = formulas.attention(mc.MHAConfig(128, 8))
    assert r"\sqrt{16}" in default and "+ M" in default
    custom = formulas.attention(mc.MHAConfig(128, 8, scale=0.125))
    assert r"\sqrt" not in custom and "0.125" in custom and "+ M" in custom


def test_M_is_defined_whether_or_not_anything_is_masked():
    for blocked in (None, np.zeros((2, 3, 3), bool), np.triu(np.ones((2, 3, 3), bool), 1)):
        text = formulas.mask(blocked)
        assert r"-\infty" in text and "M_{ts}" in text and "0 &" in text
    assert "M = 0" in formulas.mask(None) and "M = 0" in formulas.mask(np.zeros((2, 3, 3), bool))
    assert "M = 0" not in formulas.mask(np.triu(np.ones((2, 3, 3), bool), 1))


def test_a_switched_off_head_is_written_into_the_output_formula():
    """A switched-off head is written into the output formula as 0 · head_i: its own output is not zero, so the
    plain formula Σ head_i W^O_i + b^O would give another output."""
    cfg = mc.MHAConfig(16, 4, bias=True)
    w, x = mc.init_weights(cfg, seed=0), mc.random_input(5, 16, seed=0)
    off = np.array([1.0, 0.0, 1.0, 1.0])
    tr = mc.forward(x, w, cfg, head_mask=off)
    # the formula's claim, computed from the heads' own outputs (not zero) and W^O's blocks: the sum without head 2
    blocks = w.W_O.T.reshape(4, 4, 16)                                            # (h, d_v, d_model): W^O_i
    kept = sum(tr.heads[i] @ blocks[i] for i in (0, 2, 3)) + w.b_O
    np.testing.assert_allclose(kept, tr.output, atol=1e-6)
    assert np.abs(tr.heads[1]).max() > 0.01
    said = formulas.output(cfg, tr.head_mask)
    assert r"0 \cdot \mathrm{head}_{2}" in said and r"\sum_{i \neq 2}" in said
    assert r"0 \cdot" in formulas.multihead(cfg, head_mask=tr.head_mask)
    assert r"0 \cdot" not in formulas.output(cfg) and r"\sum_{i=1}^{4}" in formulas.output(cfg)


def test_shared_kv_heads_write_the_scores_product_with_the_kv_heads_index():
    """With 9 query heads on 3 K/V heads (SmolLM2) the cost table and chart write Step 2 with K_j and V_j, as the
    formulas do (K_⌈i/3⌉): there is no K_i for i = 4…9."""
    from mha_app.copy.cost import cost_rows, step_names
    from mha_core.teaching.notation import score_product

    shared = [row["step"] for row in cost_rows(11, 11, 576, 9, False, n_kv_heads=3)]
    assert "Step 2: scores Q_i K_jᵀ" in shared and "Step 2: weights × V_j" in shared
    assert not any("K_i" in step or "V_i" in step for step in shared), shared
    assert step_names(group_size=3)["scores"] == "Step 2: scores Q_i K_jᵀ"
    plain = [row["step"] for row in cost_rows(11, 11, 512, 8, True)]
    assert "Step 2: scores Q_i K_iᵀ" in plain and "Step 2: weights × V_i" in plain
    # One head's product names the K/V head the engine reads: its raw scores are that Q times that K, transposed.
    cfg = mc.MHAConfig(48, 6, n_kv_heads=2)
    x = np.random.default_rng(0).standard_normal((5, 48))
    trace = mc.forward(x, mc.init_weights(cfg, seed=1, dtype=np.float64), cfg)
    for head in range(6):
        q, k = (int(n) for n in re.fullmatch(r"Q_(\d) K_(\d)ᵀ", score_product(3, head)).groups())
        np.testing.assert_allclose(trace.raw_scores(head), trace.q[q - 1] @ trace.k[k - 1].T, rtol=1e-12)
    assert score_product(3, 4, tex=True) == r"Q_{5} K_{2}^\top"
