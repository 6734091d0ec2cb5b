"""Which PyTorch computation checks a trace (mha_core.analysis.reference), and the words that say how."""

from __future__ import annotations

import dataclasses

import numpy as np

import mha_core as mc
from mha_core.analysis import reference


def _trace(cfg: mc.MHAConfig, head_mask=None) -> mc.Trace:
    return mc.forward(mc.random_input(4, cfg.d_model, seed=0), mc.init_weights(cfg, seed=0), cfg,
                      head_mask=head_mask)


def test_plain_multi_head_attention_is_checked_by_torchs_own_layer():
    cfg = mc.MHAConfig(16, 4)
    assert reference.reference_name(_trace(cfg), cfg) == reference.MODULE
    assert reference.HOW[reference.MODULE] == ("PyTorch's own multi-head attention layer, "
                                               "torch.nn.MultiheadAttention, loaded with the same weights, reads the "
                                               "same input.")


def test_what_torchs_layer_cannot_do_is_checked_head_by_head():
    plain = mc.MHAConfig(16, 4)
    for cfg, head_mask in ((mc.MHAConfig(16, 4, n_kv_heads=2), None), (dataclasses.replace(plain, scale=1.0), None),
                           (plain, np.array([1.0, 0.0, 1.0, 1.0]))):
        assert reference.reference_name(_trace(cfg, head_mask), cfg) == reference.PER_HEAD, cfg
    how = reference.HOW[reference.PER_HEAD]
    assert how.startswith("PyTorch's attention function, F.scaled_dot_product_attention, computes each head from the "
                          "same queries, keys and values")
    assert "shared K/V heads, a head switched off or another scale" in how and how.endswith("then W_O is applied.")


def test_rotary_positions_are_checked_with_torchs_complex_numbers():
    cfg = mc.MHAConfig(16, 4, causal=True, rope_theta=10000)
    assert reference.reference_name(_trace(cfg), cfg) == reference.ROTARY
    how = reference.HOW[reference.ROTARY]
    assert "each pair of components is one complex number, multiplied by e^(i·angle)" in how
    assert how.endswith("This app's own code is not used.")
