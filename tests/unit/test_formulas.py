"""The formulas the pages show match what was computed: biases exactly when there are some, M always defined."""

from __future__ import annotations

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
