"""Grouped-query and multi-query attention against torch's F.scaled_dot_product_attention.

The reference (references.sdpa_attention) projects with F.linear on the weights from mc.init_weights (plus random
biases) and lets SDPA do the attention, with the key/value heads repeated by repeat_interleave, and again with SDPA's
own enable_gqa=True.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import mha_core as mc
from references import biased_weights as weights_with_biases
from references import max_abs, sdpa_attention

BACKENDS = ["numpy", "torch"]
TOL = {np.float32: 1e-5, np.float64: 1e-10}
D_MODEL = 48
# (n_heads, n_kv_heads): multi-query (kv = 1), grouped (in between), and plain MHA (kv = h) for contrast.
GROUPS = [(8, 1), (8, 2), (8, 4), (6, 2), (6, 3), (12, 4), (12, 6), (16, 1), (4, 4)]


def sdpa_has_enable_gqa() -> bool:
    z = torch.zeros(1, 2, 1, 2)
    try:
        F.scaled_dot_product_attention(z, z[:, :1], z[:, :1], enable_gqa=True)
    except TypeError:
        return False
    return True


def check(trace, ref, h, n_kv, n, m, dtype):
    q, k, v, heads, output = ref.q, ref.k, ref.v, ref.heads, ref.output
    d_k = D_MODEL // h
    assert trace.q.shape == (h, n, d_k)
    assert trace.k.shape == trace.v.shape == (n_kv, m, d_k)
    assert trace.weights.shape == (h, n, m)
    tol = TOL[dtype]
    assert max_abs(trace.q, q) <= tol
    assert max_abs(trace.k, k) <= tol
    assert max_abs(trace.v, v) <= tol
    assert max_abs(trace.heads, heads) <= tol
    assert max_abs(trace.output, output) <= tol
    assert trace.output.dtype == dtype


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("h,n_kv", GROUPS)
def test_gqa_repeat_interleave(h, n_kv, causal, dtype, backend):
    cfg = mc.MHAConfig(D_MODEL, h, n_kv_heads=n_kv, causal=causal)
    assert cfg.group_size == h // n_kv
    w = weights_with_biases(cfg, dtype, seed=h * 10 + n_kv)
    assert w.W_K.shape == (n_kv * D_MODEL // h, D_MODEL)
    n = 9
    x = np.random.default_rng(h).standard_normal((n, D_MODEL)).astype(dtype)
    trace = mc.forward(x, w, cfg, backend=backend)
    check(trace, sdpa_attention(w, cfg, x), h, n_kv, n, n, dtype)
    if causal:
        assert (trace.weights[:, np.triu(np.ones((n, n), bool), 1)] == 0).all()


@pytest.mark.skipif(not sdpa_has_enable_gqa(), reason="this torch's scaled_dot_product_attention has no enable_gqa")
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("h,n_kv", [(8, 1), (8, 2), (6, 3), (12, 4)])
def test_gqa_enable_gqa(h, n_kv, causal, dtype, backend):
    cfg = mc.MHAConfig(D_MODEL, h, n_kv_heads=n_kv, causal=causal)
    w = weights_with_biases(cfg, dtype, seed=h + n_kv)
    n = 7
    x = np.random.default_rng(n_kv).standard_normal((n, D_MODEL)).astype(dtype)
    trace = mc.forward(x, w, cfg, backend=backend)
    check(trace, sdpa_attention(w, cfg, x, enable_gqa=True), h, n_kv, n, n, dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("h,n_kv", [(8, 1), (8, 2), (6, 3)])
def test_gqa_cross_attention(h, n_kv, backend):
    dtype = np.float64
    cfg = mc.MHAConfig(D_MODEL, h, n_kv_heads=n_kv)
    w = weights_with_biases(cfg, dtype, seed=3)
    rng = np.random.default_rng(0)
    x, kv = rng.standard_normal((4, D_MODEL)), rng.standard_normal((11, D_MODEL))
    trace = mc.forward(x, w, cfg, kv=kv, backend=backend)
    check(trace, sdpa_attention(w, cfg, x, kv), h, n_kv, 4, 11, dtype)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gqa_with_padding_mask(backend):
    """Key padding with GQA, against SDPA with a boolean attn_mask (SDPA's bool mask is True = keep)."""
    h, n_kv, n = 8, 2, 6
    cfg = mc.MHAConfig(D_MODEL, h, n_kv_heads=n_kv)
    w = weights_with_biases(cfg, np.float64, seed=5)
    x = np.random.default_rng(1).standard_normal((n, D_MODEL))
    kpm = np.array([False, False, True, False, True, True])
    trace = mc.forward(x, w, cfg, key_padding_mask=kpm, backend=backend)

    ref = sdpa_attention(w, cfg, x, keep=np.broadcast_to(~kpm, (n, n)))  # SDPA's bool mask: True = keep
    assert max_abs(trace.heads, ref.heads) <= 1e-10
    assert (trace.weights[:, :, kpm] == 0).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_query_heads_share_kv_heads_in_blocks(backend):
    """Query heads g*j ... g*j+g-1 read key/value head j: with identical queries those heads' weights coincide."""
    h, n_kv = 6, 2
    cfg = mc.MHAConfig(24, h, n_kv_heads=n_kv, bias=False)
    w = mc.init_weights(cfg, seed=0, dtype=np.float64)
    d_k = cfg.d_k
    # Make every query head use the same W_Q rows, so only the key/value head read distinguishes them.
    W_Q = np.tile(w.W_Q[:d_k], (h, 1))
    w = dataclasses.replace(w, W_Q=W_Q)
    x = np.random.default_rng(2).standard_normal((5, 24))
    t = mc.forward(x, w, cfg, backend=backend)
    for i in range(h):
        for j in range(h):
            same_group = i // (h // n_kv) == j // (h // n_kv)
            assert np.allclose(t.weights[i], t.weights[j], atol=1e-12) == same_group, (i, j)


@pytest.mark.parametrize("backend", BACKENDS)
def test_n_kv_heads_equal_to_n_heads_is_plain_mha(backend):
    cfg_plain, cfg_gqa = mc.MHAConfig(D_MODEL, 4), mc.MHAConfig(D_MODEL, 4, n_kv_heads=4)
    w = weights_with_biases(cfg_plain, np.float64, seed=9)
    x = np.random.default_rng(3).standard_normal((5, D_MODEL))
    a, b = mc.forward(x, w, cfg_plain, backend=backend), mc.forward(x, w, cfg_gqa, backend=backend)
    np.testing.assert_array_equal(a.output, b.output)
    np.testing.assert_array_equal(a.weights, b.weights)
