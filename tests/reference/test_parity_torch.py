"""Parity with torch.nn.MultiheadAttention, the reference implementation.

Every expected value here comes from PyTorch (the module itself, or F.linear on its own parameters), never from
mha_core. Rows that torch turns into NaN (every key blocked) are left out of the comparison and checked on their own:
mha_core must give them all-zero weights and a zero head output instead.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import mha_core as mc
from references import max_abs

BACKENDS = ["numpy", "torch"]
DTYPES = [np.float32, np.float64]
TOL = {np.float32: 1e-5, np.float64: 1e-10}
TORCH_DTYPE = {np.float32: torch.float32, np.float64: torch.float64}
HEADS = [1, 2, 3, 4, 6, 8, 12, 16]
D_MODEL = 48  # divisible by every entry of HEADS


# --------------------------------------------------------------------------------------------------------------------
# Reference helpers (PyTorch only)
# --------------------------------------------------------------------------------------------------------------------


def random_torch_mha(d_model: int, h: int, bias: bool, dtype, seed: int) -> torch.nn.MultiheadAttention:
    """A torch MHA module with random weights and random biases that are all clearly nonzero."""
    g = torch.Generator().manual_seed(seed)
    module = torch.nn.MultiheadAttention(d_model, h, bias=bias, batch_first=True, dtype=TORCH_DTYPE[dtype])
    bound = 1.5 / np.sqrt(d_model)
    with torch.no_grad():
        for name, p in module.named_parameters():
            r = torch.rand(p.shape, generator=g, dtype=torch.float64)
            if "bias" in name:
                sign = torch.where(torch.rand(p.shape, generator=g, dtype=torch.float64) < 0.5, -1.0, 1.0)
                p.copy_((sign * (0.1 + 0.4 * r)).to(p.dtype))  # |b| in [0.1, 0.5]
            else:
                p.copy_(((2 * r - 1) * bound).to(p.dtype))
    module.eval()
    if bias:
        assert (module.in_proj_bias.abs() >= 0.1).all() and (module.out_proj.bias.abs() >= 0.1).all()
    return module


def torch_reference(module, x, kv=None, key_padding_mask=None, attn_mask=None):
    """(output (n, d_model), weights (h, n, m)) from torch.nn.MultiheadAttention, batch of one."""
    X = torch.from_numpy(x)[None]
    KV = X if kv is None else torch.from_numpy(kv)[None]
    kpm = None if key_padding_mask is None else torch.from_numpy(key_padding_mask)[None]
    am = None if attn_mask is None else torch.from_numpy(attn_mask)
    with torch.no_grad():
        out, weights = module(X, KV, KV, key_padding_mask=kpm, attn_mask=am, need_weights=True,
                              average_attn_weights=False)
    return out[0].numpy(), weights[0].numpy()


def torch_projections(module, x, kv=None):
    """Q (h, n, d_k), K, V (h, m, d_k) from the module's packed in_proj, split the way torch's MHA splits it."""
    h, d = module.num_heads, module.embed_dim
    X = torch.from_numpy(x)
    KV = X if kv is None else torch.from_numpy(kv)
    W_q, W_k, W_v = module.in_proj_weight.detach().chunk(3)
    if module.in_proj_bias is not None:
        b_q, b_k, b_v = module.in_proj_bias.detach().chunk(3)
    else:
        b_q = b_k = b_v = None

    def heads(y):
        return y.view(y.shape[0], h, d // h).transpose(0, 1)

    with torch.no_grad():
        return heads(F.linear(X, W_q, b_q)), heads(F.linear(KV, W_k, b_k)), heads(F.linear(KV, W_v, b_v))


def rand(n, d, dtype, seed):
    return np.random.default_rng(seed).standard_normal((n, d)).astype(dtype)


def check_against_torch(trace, module, x, kv=None, key_padding_mask=None, attn_mask=None, dtype=np.float32,
                        expect_nan_rows=False):
    """Compare the whole trace with torch; return the (h, n) boolean array of rows torch made NaN."""
    tol = TOL[dtype]
    ref_out, ref_w = torch_reference(module, x, kv, key_padding_mask, attn_mask)
    h, n = ref_w.shape[:2]
    d_k = module.embed_dim // h

    nan_rows = np.isnan(ref_w).any(axis=-1)  # (h, n)
    assert nan_rows.any() == expect_nan_rows
    nan_out_rows = np.isnan(ref_out).any(axis=-1)  # (n,)
    np.testing.assert_array_equal(nan_out_rows, nan_rows.any(axis=0))
    ok = ~nan_rows

    # Output and weights on every row torch could compute.
    assert trace.output.dtype == dtype and trace.weights.dtype == dtype
    assert max_abs(trace.weights[ok], ref_w[ok]) <= tol
    assert max_abs(trace.output[~nan_out_rows], ref_out[~nan_out_rows]) <= tol

    # Fully blocked rows: zeros, not NaN, and flagged.
    np.testing.assert_array_equal(trace.blocked_rows, nan_rows)
    assert (trace.weights[nan_rows] == 0).all()
    assert (trace.heads[nan_rows] == 0).all()
    for name in ("q", "k", "v", "scores", "weights", "heads", "concat", "output"):
        assert not np.isnan(getattr(trace, name)).any(), name

    # Intermediates against the module's own in_proj, applied with F.linear.
    q_ref, k_ref, v_ref = torch_projections(module, x, kv)
    assert max_abs(trace.q, q_ref.numpy()) <= tol
    assert max_abs(trace.k, k_ref.numpy()) <= tol
    assert max_abs(trace.v, v_ref.numpy()) <= tol

    # Softmax of our masked scores (done by torch) gives torch's weights.
    sm = torch.softmax(torch.from_numpy(trace.masked_scores), dim=-1).numpy()
    assert max_abs(sm[ok], ref_w[ok]) <= tol

    # Heads: torch's weights times torch's V; concat: torch's layout of those heads.
    ref_w_t = torch.from_numpy(np.nan_to_num(ref_w, nan=0.0))
    ref_heads = torch.matmul(ref_w_t, v_ref).numpy()  # (h, n, d_k); blocked rows give 0 here
    assert max_abs(trace.heads, ref_heads) <= tol
    ref_concat = torch.from_numpy(ref_heads).transpose(0, 1).reshape(n, h * d_k).numpy()
    assert trace.concat.shape == (n, module.embed_dim)
    assert max_abs(trace.concat, ref_concat) <= tol

    # out_proj applied to our concat reproduces torch's output (and defines the output of blocked rows).
    with torch.no_grad():
        out_from_concat = module.out_proj(torch.from_numpy(trace.concat)).numpy()
    assert max_abs(out_from_concat[~nan_out_rows], ref_out[~nan_out_rows]) <= tol
    assert max_abs(trace.output, out_from_concat) <= tol
    if module.out_proj.bias is not None:
        # A query row blocked in every head has a zero concat row, so its output is exactly b_O.
        all_blocked = nan_rows.all(axis=0)
        b_O = module.out_proj.bias.detach().numpy()
        assert max_abs(trace.output[all_blocked], np.broadcast_to(b_O, (all_blocked.sum(), b_O.size))) <= tol
    return nan_rows


def load(module):
    w = mc.weights_from_torch(module)
    cfg = mc.config_from_torch(module)
    return w, cfg


# --------------------------------------------------------------------------------------------------------------------
# Self-attention over every head count, bias on and off, both dtypes, both backends
# --------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("h", HEADS)
def test_self_attention(h, bias, dtype, backend):
    module = random_torch_mha(D_MODEL, h, bias, dtype, seed=h)
    w, cfg = load(module)
    assert cfg == mc.MHAConfig(D_MODEL, h, bias=bias)
    assert w.dtype == dtype
    x = rand(7, D_MODEL, dtype, seed=100 + h)
    trace = mc.forward(x, w, cfg, backend=backend, device="cpu")
    assert trace.backend == backend and trace.device == "cpu"
    check_against_torch(trace, module, x, dtype=dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("h", [1, 3, 16])
def test_larger_d_model(h, dtype, backend):
    d_model = 96
    module = random_torch_mha(d_model, h, True, dtype, seed=7 * h)
    w, cfg = load(module)
    x = rand(20, d_model, dtype, seed=h)
    check_against_torch(mc.forward(x, w, cfg, backend=backend), module, x, dtype=dtype)


# --------------------------------------------------------------------------------------------------------------------
# Cross-attention, masks
# --------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("h", [1, 4, 16])
@pytest.mark.parametrize("n,m", [(5, 9), (9, 3), (1, 6)])
def test_cross_attention(n, m, h, dtype, backend):
    module = random_torch_mha(D_MODEL, h, True, dtype, seed=n * m + h)
    w, cfg = load(module)
    x, kv = rand(n, D_MODEL, dtype, seed=1), rand(m, D_MODEL, dtype, seed=2)
    trace = mc.forward(x, w, cfg, kv=kv, backend=backend)
    assert trace.weights.shape == (h, n, m) and trace.k.shape == (h, m, D_MODEL // h)
    np.testing.assert_array_equal(trace.x_kv, kv)
    check_against_torch(trace, module, x, kv=kv, dtype=dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("h", [1, 2, 8])
@pytest.mark.parametrize("via", ["config", "attn_mask"])
def test_causal(via, h, dtype, backend):
    module = random_torch_mha(D_MODEL, h, True, dtype, seed=3 * h)
    w, _ = load(module)
    n = 8
    x = rand(n, D_MODEL, dtype, seed=h)
    torch_mask = np.triu(np.ones((n, n), dtype=bool), k=1)  # written out here, not taken from mc.causal_mask
    if via == "config":
        trace = mc.forward(x, w, mc.MHAConfig(D_MODEL, h, causal=True), backend=backend)
    else:
        trace = mc.forward(x, w, mc.MHAConfig(D_MODEL, h), attn_mask=torch_mask, backend=backend)
    check_against_torch(trace, module, x, attn_mask=torch_mask, dtype=dtype)
    assert (trace.weights[:, torch_mask] == 0).all()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n,m", [(4, 7), (7, 4)])
def test_causal_cross_attention(n, m, backend):
    module = random_torch_mha(D_MODEL, 4, True, np.float64, seed=5)
    w, _ = load(module)
    x, kv = rand(n, D_MODEL, np.float64, 3), rand(m, D_MODEL, np.float64, 4)
    torch_mask = np.triu(np.ones((n, m), dtype=bool), k=1)
    trace = mc.forward(x, w, mc.MHAConfig(D_MODEL, 4, causal=True), kv=kv, backend=backend)
    check_against_torch(trace, module, x, kv=kv, attn_mask=torch_mask, dtype=np.float64)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("h", [1, 6])
@pytest.mark.parametrize("cross", [False, True], ids=["self", "cross"])
def test_key_padding_mask(cross, h, dtype, backend):
    module = random_torch_mha(D_MODEL, h, True, dtype, seed=11 * h)
    w, cfg = load(module)
    n, m = 6, (9 if cross else 6)
    x = rand(n, D_MODEL, dtype, seed=5)
    kv = rand(m, D_MODEL, dtype, seed=6) if cross else None
    kpm = np.zeros(m, dtype=bool)
    kpm[[1, m - 2, m - 1]] = True
    trace = mc.forward(x, w, cfg, kv=kv, key_padding_mask=kpm, backend=backend)
    check_against_torch(trace, module, x, kv=kv, key_padding_mask=kpm, dtype=dtype)
    assert (trace.weights[:, :, kpm] == 0).all()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_causal_plus_padding_blocks_first_row(dtype, backend):
    """Causal mask + padding of key 0: query 0 has no key left, which torch turns into NaN."""
    h, n = 4, 6
    module = random_torch_mha(D_MODEL, h, True, dtype, seed=17)
    w, _ = load(module)
    x = rand(n, D_MODEL, dtype, seed=8)
    kpm = np.zeros(n, dtype=bool)
    kpm[0] = True
    causal = np.triu(np.ones((n, n), dtype=bool), k=1)
    trace = mc.forward(x, w, mc.MHAConfig(D_MODEL, h, causal=True), key_padding_mask=kpm, backend=backend)
    nan_rows = check_against_torch(trace, module, x, key_padding_mask=kpm, attn_mask=causal, dtype=dtype,
                                   expect_nan_rows=True)
    expected = np.zeros((h, n), dtype=bool)
    expected[:, 0] = True
    np.testing.assert_array_equal(nan_rows, expected)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_per_head_attn_mask(dtype, backend):
    """A (h, n, m) mask, different in each head, with some rows blocked in one head only."""
    h, n, m = 4, 5, 7
    module = random_torch_mha(D_MODEL, h, True, dtype, seed=19)
    w, cfg = load(module)
    x, kv = rand(n, D_MODEL, dtype, 9), rand(m, D_MODEL, dtype, 10)
    mask = np.random.default_rng(0).random((h, n, m)) < 0.4
    mask[0, 2, :] = True  # head 0, query 2: nothing left
    mask[3, 4, :] = True  # head 3, query 4: nothing left
    mask[1, :, 0] = False  # keep at least one key elsewhere in head 1
    trace = mc.forward(x, w, cfg, kv=kv, attn_mask=mask, backend=backend)
    nan_rows = check_against_torch(trace, module, x, kv=kv, attn_mask=mask, dtype=dtype, expect_nan_rows=True)
    assert nan_rows[0, 2] and nan_rows[3, 4]
    # A row blocked in one head only: the other heads of that query still match torch's (finite) weights.
    _, ref_w = torch_reference(module, x, kv, attn_mask=mask)
    assert np.isfinite(ref_w[1, 2]).all()
    assert max_abs(trace.weights[1, 2], ref_w[1, 2]) <= TOL[dtype]


# --------------------------------------------------------------------------------------------------------------------
# The other direction: our weights loaded into torch
# --------------------------------------------------------------------------------------------------------------------


def our_weights_with_biases(cfg, dtype, seed):
    w = mc.init_weights(cfg, seed=seed, dtype=dtype)
    if not cfg.bias:
        return w
    rng = np.random.default_rng(seed + 1)
    return dataclasses.replace(w, **{name: rng.uniform(0.1, 0.5, getattr(w, name).shape).astype(dtype)
                                     * rng.choice([-1, 1], getattr(w, name).shape).astype(dtype)
                                     for name in ("b_Q", "b_K", "b_V", "b_O")})


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("h", [1, 3, 8, 16])
def test_weights_to_torch(h, bias, dtype, backend):
    cfg = mc.MHAConfig(D_MODEL, h, bias=bias)
    w = our_weights_with_biases(cfg, dtype, seed=h)
    module = mc.weights_to_torch(w, cfg)
    assert isinstance(module, torch.nn.MultiheadAttention)
    assert module.batch_first and not module.training
    assert module.in_proj_weight.dtype == TORCH_DTYPE[dtype]
    # Parameters copied exactly, in torch's packed [Q; K; V] layout.
    np.testing.assert_array_equal(module.in_proj_weight.detach().numpy(), np.concatenate([w.W_Q, w.W_K, w.W_V]))
    np.testing.assert_array_equal(module.out_proj.weight.detach().numpy(), w.W_O)
    if bias:
        np.testing.assert_array_equal(module.in_proj_bias.detach().numpy(), np.concatenate([w.b_Q, w.b_K, w.b_V]))
        np.testing.assert_array_equal(module.out_proj.bias.detach().numpy(), w.b_O)
        assert (np.abs(w.b_O) >= 0.1).all()
    else:
        assert module.in_proj_bias is None and module.out_proj.bias is None
    # Round trip back is exact.
    back = mc.weights_from_torch(module)
    assert back.arrays().keys() == w.arrays().keys()
    for name, a in w.arrays().items():
        np.testing.assert_array_equal(back.arrays()[name], a)
    assert mc.config_from_torch(module) == cfg

    x = rand(6, D_MODEL, dtype, seed=42)
    check_against_torch(mc.forward(x, w, cfg, backend=backend), module, x, dtype=dtype)


def test_weights_from_torch_copies():
    """Changing the torch module afterwards must not change weights already taken from it."""
    module = random_torch_mha(16, 2, True, np.float32, seed=0)
    w = mc.weights_from_torch(module)
    before = w.W_Q.copy(), w.b_O.copy()
    with torch.no_grad():
        module.in_proj_weight.add_(1.0)
        module.out_proj.bias.add_(1.0)
    np.testing.assert_array_equal(w.W_Q, before[0])
    np.testing.assert_array_equal(w.b_O, before[1])


def test_backends_agree_on_every_array():
    """The two backends give the same trace (float64), array by array."""
    module = random_torch_mha(D_MODEL, 6, True, np.float64, seed=3)
    w, _ = load(module)
    cfg = mc.MHAConfig(D_MODEL, 6, causal=True)
    x = rand(9, D_MODEL, np.float64, 0)
    a = mc.forward(x, w, cfg, backend="numpy")
    b = mc.forward(x, w, cfg, backend="torch", device="cpu")
    assert a.arrays().keys() == b.arrays().keys()
    for name, arr in a.arrays().items():
        other = b.arrays()[name]
        assert arr.shape == other.shape and arr.dtype == other.dtype, name
        if arr.dtype == bool:
            np.testing.assert_array_equal(arr, other)
        else:
            np.testing.assert_allclose(arr, other, rtol=0, atol=1e-12, err_msg=name)
