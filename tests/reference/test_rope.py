"""Rotary position embeddings (RoPE) in mc.forward, checked against a rotation written with complex numbers.

RoPE as Llama applies it (Su et al. 2021, "RoFormer"; transformers' rotate_half): in each head, dimension i and
i + d_k/2 are the real and imaginary part of one complex number, multiplied by exp(1j * p * theta^(-2i/d_k)) at
position p. The reference, references.complex_rope, does exactly that with NumPy's complex arithmetic, in float64.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

import mha_core as mc
from mha_core.attention import engine, torch_backend
from references import complex_rope, sdpa_attention

BACKENDS = ["numpy", "torch"]


@pytest.mark.parametrize("theta", [10_000.0, 100_000.0, 2.5])
@pytest.mark.parametrize("d_k", [2, 8, 64])
def test_apply_rope_is_the_complex_rotation(theta, d_k):
    x = np.random.default_rng(d_k).standard_normal((3, 300, d_k))
    expected = complex_rope(x, theta)
    np.testing.assert_allclose(engine.apply_rope(x, theta), expected, rtol=0, atol=1e-12)
    got = torch_backend.apply_rope(torch.from_numpy(x), theta).numpy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_apply_rope_keeps_dtype_and_turns_position_zero_by_nothing():
    x = np.random.default_rng(1).standard_normal((2, 5, 16)).astype(np.float32)
    y = engine.apply_rope(x, 10_000.0)
    assert y.dtype == np.float32 and y.shape == x.shape
    np.testing.assert_array_equal(y[:, 0], x[:, 0])
    # a rotation keeps each pair's length
    pairs = lambda a: np.hypot(a[..., :8], a[..., 8:])  # noqa: E731
    np.testing.assert_allclose(pairs(y), pairs(x), rtol=1e-6)
    t = torch_backend.apply_rope(torch.from_numpy(x), 10_000.0)
    assert t.dtype == torch.float32
    np.testing.assert_allclose(t.numpy(), y, rtol=0, atol=1e-5)


def _rope_layer(dtype=np.float64, n_kv_heads=None, causal=False, bias=False, seed=0):
    cfg = mc.MHAConfig(32, 4, n_kv_heads=n_kv_heads, bias=bias, causal=causal, rope_theta=10_000.0)
    return cfg, mc.init_weights(cfg, seed=seed, dtype=dtype)


@pytest.mark.parametrize("backend", BACKENDS)
def test_q_k_dot_product_depends_only_on_the_distance(backend):
    """The property the projection page teaches: the same token at every position gives scores that are constant
    along each diagonal (key j, query i: only i - j matters), and different for different distances."""
    cfg, w = _rope_layer()
    row = np.random.default_rng(3).standard_normal(32)
    x = np.tile(row, (12, 1))  # one token, repeated at positions 0 ... 11
    t = mc.forward(x, w, cfg, backend=backend)
    for head in range(cfg.n_heads):
        s = t.scores[head]
        for offset in range(-11, 12):
            diagonal = np.diagonal(s, offset=offset)
            np.testing.assert_allclose(diagonal, diagonal[0], rtol=0, atol=1e-12)
        assert np.ptp([s[11, 11 - d] for d in range(12)]) > 1e-3, "scores do change with the distance"
    # Without RoPE the same input gives one score everywhere: the positions come from the rotation alone.
    plain = mc.forward(x, w, dataclasses.replace(cfg, rope_theta=None), backend=backend)
    np.testing.assert_allclose(plain.scores, plain.scores[:, :1, :1] * np.ones_like(plain.scores), rtol=0, atol=1e-12)


def test_shifting_both_positions_keeps_the_rotated_product():
    """q at position p and k at position p' give the same product as at p + s and p' + s (complex reference)."""
    rng = np.random.default_rng(4)
    q, k = rng.standard_normal((1, 1, 64)), rng.standard_normal((1, 1, 64))
    for p, p2, s in [(0, 0, 7), (5, 2, 100), (2, 9, 1000), (300, 3, 4095)]:
        before = complex_rope(q, 1e5, [p])[0, 0] @ complex_rope(k, 1e5, [p2])[0, 0]
        after = complex_rope(q, 1e5, [p + s])[0, 0] @ complex_rope(k, 1e5, [p2 + s])[0, 0]
        assert after == pytest.approx(before, abs=1e-9)
        # and the engine's rotation agrees at those positions
        rotated = engine.apply_rope(np.tile(q, (1, p + s + 1, 1)), 1e5)
        np.testing.assert_allclose(rotated[0, p + s], complex_rope(q, 1e5, [p + s])[0, 0], rtol=0, atol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n_kv_heads", [None, 2, 1])
def test_trace_keeps_q_and_k_before_and_after_the_rotation(backend, n_kv_heads):
    cfg, w = _rope_layer(n_kv_heads=n_kv_heads, causal=True, bias=True)
    x = np.random.default_rng(5).standard_normal((9, 32))
    t = mc.forward(x, w, cfg, backend=backend)
    d_k, kv = cfg.d_k, cfg.kv_heads
    q_proj = (x @ w.W_Q.T + w.b_Q).reshape(9, 4, d_k).transpose(1, 0, 2)
    k_proj = (x @ w.W_K.T + w.b_K).reshape(9, kv, d_k).transpose(1, 0, 2)
    np.testing.assert_allclose(t.q_before_rope, q_proj, rtol=0, atol=1e-12)
    np.testing.assert_allclose(t.k_before_rope, k_proj, rtol=0, atol=1e-12)
    np.testing.assert_allclose(t.q, complex_rope(q_proj, 10_000.0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(t.k, complex_rope(k_proj, 10_000.0), rtol=0, atol=1e-12)
    # the scores are made of the rotated q and k
    k_i = np.repeat(t.k, cfg.group_size, axis=0)
    np.testing.assert_allclose(t.scores, t.q @ k_i.transpose(0, 2, 1) / np.sqrt(d_k), rtol=0, atol=1e-12)
    assert {"q_before_rope", "k_before_rope"} <= set(t.arrays())


@pytest.mark.parametrize("backend", BACKENDS)
def test_without_rope_nothing_is_kept_twice(backend):
    cfg = mc.MHAConfig(16, 4)
    t = mc.forward(np.ones((3, 16)), mc.init_weights(cfg), cfg, backend=backend)
    assert t.q_before_rope is None and t.k_before_rope is None
    assert "q_before_rope" not in t.arrays()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_kv_heads", [None, 2, 1])
def test_rope_attention_matches_sdpa_with_complex_rotation(dtype, n_kv_heads):
    """The whole layer against torch: F.linear, the complex rotation above, F.scaled_dot_product_attention."""
    cfg, w = _rope_layer(dtype=dtype, n_kv_heads=n_kv_heads, causal=True, seed=7)
    x = np.random.default_rng(8).standard_normal((20, 32)).astype(dtype)
    ref = sdpa_attention(w, cfg, x, enable_gqa=cfg.kv_heads != 4)  # RoPE as complex rotations, causal, in float64
    heads, out = ref.heads, ref.output
    tol = 1e-5 if dtype == np.float32 else 1e-10
    for backend in BACKENDS:
        t = mc.forward(x, w, cfg, backend=backend)
        np.testing.assert_allclose(t.heads, heads, rtol=0, atol=tol, err_msg=backend)
        np.testing.assert_allclose(t.output, out, rtol=0, atol=tol, err_msg=backend)


def test_both_backends_name_the_rotation_alike():
    assert engine.apply_rope.__name__ == torch_backend.apply_rope.__name__ == "apply_rope"
    assert engine.apply_rope.__doc__.splitlines()[0] == torch_backend.apply_rope.__doc__.splitlines()[0]


@pytest.mark.parametrize("theta", [0, -1.0, 1.0, 0.5, float("nan"), float("inf"), True, "10000"])
def test_bad_rope_theta(theta):
    with pytest.raises(mc.ConfigError, match="rope_theta must be a finite number above 1"):
        mc.MHAConfig(16, 4, rope_theta=theta)


def test_rope_needs_an_even_d_k():
    with pytest.raises(mc.ConfigError, match="d_k must be even"):
        mc.MHAConfig(15, 5, rope_theta=10_000)
    assert mc.MHAConfig(16, 4, rope_theta=10_000).rope_theta == 10_000.0


def test_nn_multiheadattention_refuses_rope():
    cfg = mc.MHAConfig(16, 4, rope_theta=10_000)
    with pytest.raises(mc.ConfigError, match="rotary"):
        mc.weights_to_torch(mc.init_weights(cfg), cfg)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine")
def test_rope_on_cuda_matches_numpy():
    """The angles are made on the CPU in float64 and moved to the GPU; float64 keeps TF32 out of the comparison."""
    cfg = mc.MHAConfig(96, 12, n_kv_heads=4, causal=True, rope_theta=10_000.0)
    w = mc.init_weights(cfg, seed=2, dtype=np.float64)
    x = np.random.default_rng(3).standard_normal((40, 96))
    ref = mc.forward(x, w, cfg, backend="numpy")
    gpu = mc.forward(x, w, cfg, backend="torch", device="cuda")
    assert gpu.device.startswith("cuda")
    for name in ("q_before_rope", "k_before_rope", "q", "k", "weights", "output"):
        np.testing.assert_allclose(getattr(gpu, name), getattr(ref, name), rtol=0, atol=1e-10, err_msg=name)
