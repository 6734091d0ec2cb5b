"""Devices: the torch backend on a CUDA GPU (skipped without one) and the 'auto' device choice (the lazy torch import is
checked in unit/test_architecture.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import mha_core as mc
from references import biased_weights as biased_layer

HAS_CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU on this machine")


@pytest.fixture
def no_tf32():
    """TF32 matmuls would round float32 products to 10-bit mantissas; switch them off for the parity checks."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


CASES = [
    # d_model, h, n_kv_heads, causal, n, m (None = self-attention), padded keys
    (64, 8, None, False, 16, None, 0),
    (64, 8, None, True, 16, None, 2),
    (96, 12, 4, True, 33, None, 0),
    (48, 6, 1, False, 7, 19, 3),
    (256, 8, None, False, 256, None, 0),
]


@needs_cuda
@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-4), (np.float64, 1e-10)], ids=["f32", "f64"])
@pytest.mark.parametrize("case", CASES)
def test_cuda_trace_matches_cpu_numpy(no_tf32, case, dtype, tol):
    d_model, h, n_kv, causal, n, m, padded = case
    cfg = mc.MHAConfig(d_model, h, n_kv_heads=n_kv, causal=causal)
    w = biased_layer(cfg, dtype)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d_model)).astype(dtype)
    kv = None if m is None else rng.standard_normal((m, d_model)).astype(dtype)
    kpm = mc.padding_mask(n if m is None else m, padded) if padded else None
    ref = mc.forward(x, w, cfg, kv=kv, key_padding_mask=kpm, backend="numpy", device="cpu")
    gpu = mc.forward(x, w, cfg, kv=kv, key_padding_mask=kpm, backend="torch", device="cuda")
    assert gpu.device.startswith("cuda") and gpu.backend == "torch"
    assert ref.device == "cpu"
    for name, a in ref.arrays().items():
        b = gpu.arrays()[name]
        assert isinstance(b, np.ndarray) and b.shape == a.shape and b.dtype == a.dtype, name
        if a.dtype == bool:
            np.testing.assert_array_equal(b, a, err_msg=name)
        else:
            np.testing.assert_allclose(b, a, rtol=0, atol=tol, err_msg=name)


@needs_cuda
def test_cuda_matches_torch_mha_on_gpu(no_tf32):
    cfg = mc.MHAConfig(128, 8)
    w = biased_layer(cfg, np.float32, seed=3)
    module = mc.weights_to_torch(w, cfg).to("cuda")
    x = np.random.default_rng(1).standard_normal((40, 128)).astype(np.float32)
    X = torch.from_numpy(x)[None].to("cuda")
    with torch.no_grad():
        out, weights = module(X, X, X, need_weights=True, average_attn_weights=False)
    t = mc.forward(x, w, cfg, backend="torch", device="cuda")
    np.testing.assert_allclose(t.output, out[0].cpu().numpy(), rtol=0, atol=1e-4)
    np.testing.assert_allclose(t.weights, weights[0].cpu().numpy(), rtol=0, atol=1e-4)


@needs_cuda
@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-4), (np.float64, 1e-10)], ids=["f32", "f64"])
def test_cuda_head_mask_matches_cpu(no_tf32, dtype, tol):
    cfg = mc.MHAConfig(96, 12, n_kv_heads=4, causal=True)
    w = biased_layer(cfg, dtype, seed=5)
    x = np.random.default_rng(5).standard_normal((33, 96)).astype(dtype)
    factors = np.ones(12)
    factors[[0, 5, 11]] = 0.0
    factors[3] = 0.5
    ref = mc.forward(x, w, cfg, head_mask=factors, backend="numpy")
    gpu = mc.forward(x, w, cfg, head_mask=factors, backend="torch", device="cuda")
    assert gpu.device.startswith("cuda")
    np.testing.assert_array_equal(gpu.head_mask, ref.head_mask)
    for name in ("heads", "concat", "output"):
        np.testing.assert_allclose(getattr(gpu, name), getattr(ref, name), rtol=0, atol=tol, err_msg=name)
    assert (gpu.concat[:, :8] == 0).all() and (gpu.concat[:, 88:] == 0).all()


@needs_cuda
def test_cuda_all_blocked_row_is_zero(no_tf32):
    cfg = mc.MHAConfig(32, 4)
    w = biased_layer(cfg, np.float32)
    mask = np.zeros((6, 6), bool)
    mask[4] = True
    t = mc.forward(np.ones((6, 32), np.float32), w, cfg, attn_mask=mask, backend="torch", device="cuda")
    assert (t.weights[:, 4] == 0).all() and (t.heads[:, 4] == 0).all()
    assert not np.isnan(t.output).any()
    assert t.blocked_rows[:, 4].all() and t.blocked_rows.sum() == 4


@needs_cuda
def test_auto_and_explicit_index_pick_cuda():
    cfg = mc.MHAConfig(16, 4)
    w = mc.init_weights(cfg)
    x = mc.random_input(3, 16)
    assert mc.forward(x, w, cfg, backend="torch", device="auto").device.startswith("cuda")
    assert mc.forward(x, w, cfg, backend="torch", device="cuda:0").device.startswith("cuda")
    assert mc.forward(x, w, cfg, backend="numpy", device="auto").device == "cpu"  # NumPy never leaves the CPU


@pytest.mark.skipif(HAS_CUDA or torch.backends.mps.is_available(), reason="this machine has a GPU")
def test_auto_is_cpu_without_gpu():
    cfg = mc.MHAConfig(16, 4)
    w = mc.init_weights(cfg)
    x = mc.random_input(3, 16)
    t = mc.forward(x, w, cfg, backend="torch", device="auto")
    assert t.device == "cpu" and t.backend == "torch"


def test_numpy_backend_reports_cpu():
    cfg = mc.MHAConfig(16, 4)
    w = mc.init_weights(cfg)
    for device in ("auto", "cpu"):
        t = mc.forward(mc.random_input(3, 16), w, cfg, backend="numpy", device=device)
        assert t.device == "cpu" and t.backend == "numpy"
