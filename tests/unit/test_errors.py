"""Every input a student can get wrong raises ConfigError with a message that says what to change.

Also the fully blocked query row: all-zero weights and head output, never NaN, and flagged in blocked_rows.
"""

from __future__ import annotations

import dataclasses
import re
import warnings

import numpy as np
import pytest
import torch

import mha_core as mc
from mha_core import figures
from screen import as_figure, non_finite_in_figure

BACKENDS = ["numpy", "torch"]


def layer(d_model=16, h=4, **kw):
    cfg = mc.MHAConfig(d_model, h, **kw)
    return cfg, mc.init_weights(cfg, seed=0)


def x_of(n=5, d_model=16, dtype=np.float32):
    return np.random.default_rng(0).standard_normal((n, d_model)).astype(dtype)


def test_config_error_is_a_value_error():
    assert issubclass(mc.ConfigError, ValueError)


# --------------------------------------------------------------------------------------------------------------------
# MHAConfig
# --------------------------------------------------------------------------------------------------------------------


def test_heads_must_divide_d_model_and_message_lists_valid_counts():
    with pytest.raises(mc.ConfigError) as info:
        mc.MHAConfig(30, 4)
    msg = str(info.value)
    # Every divisor of 30 up to the cap of 64 heads, in order, and nothing else.
    expected = [h for h in range(1, 31) if 30 % h == 0]
    assert expected == [1, 2, 3, 5, 6, 10, 15, 30]
    assert "1, 2, 3, 5, 6, 10, 15, 30" in msg
    assert "30 / 4 = 7.50" in msg
    listed = [int(s) for s in msg.split("d_model = 30:")[1].strip(" .").split(",")]
    assert listed == expected


def test_valid_head_counts_stop_at_the_head_cap():
    with pytest.raises(mc.ConfigError) as info:
        mc.MHAConfig(4096, 3)
    listed = [int(s) for s in str(info.value).split("d_model = 4096:")[1].strip(" .").split(",")]
    assert listed == [1, 2, 4, 8, 16, 32, 64]
    assert max(listed) <= mc.MAX_HEADS


@pytest.mark.parametrize("field", ["d_model", "n_heads", "n_kv_heads"])
@pytest.mark.parametrize("value", [0, -1, -64])
def test_non_positive_sizes(field, value):
    kw = dict(d_model=16, n_heads=4)
    kw[field] = value
    with pytest.raises(mc.ConfigError, match=rf"{field} must be at least 1, got {value}"):
        mc.MHAConfig(**kw)


@pytest.mark.parametrize("field", ["d_model", "n_heads", "n_kv_heads"])
@pytest.mark.parametrize("value", [16.0, 2.5, "16", True, [4]])
def test_non_integer_sizes(field, value):
    kw = dict(d_model=16, n_heads=4)
    kw[field] = value
    with pytest.raises(mc.ConfigError, match=f"{field} must be a whole number"):
        mc.MHAConfig(**kw)


def test_n_heads_none_is_refused():
    with pytest.raises(mc.ConfigError):
        mc.MHAConfig(16, None)


@pytest.mark.parametrize("h,kv,valid", [(8, 3, "1, 2, 4, 8"), (6, 4, "1, 2, 3, 6"), (4, 8, "1, 2, 4"),
                                        (12, 5, "1, 2, 3, 4, 6, 12")])
def test_n_heads_not_divisible_by_n_kv_heads(h, kv, valid):
    with pytest.raises(mc.ConfigError) as info:
        mc.MHAConfig(48, h, n_kv_heads=kv)
    assert f"Values that work: {valid}." in str(info.value)


def test_sizes_at_the_caps_are_fine_and_beyond_them_refused():
    cfg = mc.MHAConfig(mc.MAX_D_MODEL, mc.MAX_HEADS, n_kv_heads=mc.MAX_HEADS)
    assert cfg.d_k == mc.MAX_D_MODEL // mc.MAX_HEADS
    with pytest.raises(mc.ConfigError, match=f"limit of {mc.MAX_D_MODEL}"):
        mc.MHAConfig(mc.MAX_D_MODEL + 1, 1)
    with pytest.raises(mc.ConfigError, match=f"limit of {mc.MAX_HEADS}"):
        mc.MHAConfig((mc.MAX_HEADS + 1) * 2, mc.MAX_HEADS + 1)
    with pytest.raises(mc.ConfigError, match=f"limit of {mc.MAX_HEADS}"):
        mc.MHAConfig(mc.MAX_HEADS * 2, mc.MAX_HEADS, n_kv_heads=mc.MAX_HEADS + 1)


@pytest.mark.parametrize("scale", [0, 0.0, -1.0, "0.5", float("nan"), float("inf"), True])
def test_bad_scale(scale):
    with pytest.raises(mc.ConfigError, match="scale must be a positive, finite number"):
        mc.MHAConfig(16, 4, scale=scale)


def test_numpy_integer_sizes_are_accepted_as_plain_ints():
    cfg = mc.MHAConfig(np.int64(16), np.int32(4), n_kv_heads=np.int64(2))
    assert (cfg.d_model, cfg.n_heads, cfg.n_kv_heads) == (16, 4, 2)
    assert type(cfg.d_model) is int


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_float64_input_with_float32_weights_runs_in_float64_on_both_backends(backend):
    cfg = mc.MHAConfig(16, 4)
    w = mc.init_weights(cfg, seed=0)  # float32
    x = mc.random_input(5, 16, seed=1).astype(np.float64)
    trace = mc.forward(x, w, cfg, backend=backend)
    assert trace.output.dtype == np.float64
    module = mc.weights_to_torch(w.astype(np.float64), cfg)
    X = torch.tensor(x)[None]
    ref, _ = module(X, X, X, need_weights=True, average_attn_weights=False)
    np.testing.assert_allclose(trace.output, ref[0].detach().numpy(), atol=1e-10)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_python_lists_are_accepted(backend):
    cfg = mc.MHAConfig(4, 2)
    w = mc.init_weights(cfg, seed=0)
    floats = mc.forward([[1, 0, 0, 1], [0.5, 0.5, 0, 0]], w, cfg, backend=backend)
    assert floats.output.shape == (2, 4) and floats.output.dtype == np.float64  # Python floats are float64
    ints = mc.forward([[1, 0, 0, 1], [2, 1, 0, 0]], w, cfg, backend=backend)
    assert ints.output.dtype == np.float32  # integers take the weights' dtype


@pytest.mark.parametrize("bad", [np.array([["a"] * 4]), np.ones((2, 4), dtype=complex)])
def test_non_real_inputs_are_refused(bad):
    cfg = mc.MHAConfig(4, 2)
    with pytest.raises(mc.ConfigError, match="must hold real numbers"):
        mc.forward(bad, mc.init_weights(cfg), cfg)


def test_non_finite_weights_are_refused():
    cfg = mc.MHAConfig(4, 2)
    w = mc.init_weights(cfg)
    W_Q = w.W_Q.copy()
    W_Q[0, 0] = np.nan
    with pytest.raises(mc.ConfigError, match="W_Q contains NaN"):
        mc.forward(np.ones((2, 4)), dataclasses.replace(w, W_Q=W_Q), cfg)


def test_score_cells_are_capped_before_any_memory_is_used():
    cfg = mc.MHAConfig(64, 64)
    x = np.zeros((mc.MAX_TOKENS, 64), dtype=np.float32)
    with pytest.raises(mc.ConfigError, match="attention scores is above"):
        mc.forward(x, mc.init_weights(cfg), cfg)


@pytest.mark.parametrize("device", ["cuda:abc", "cuda:", "gpu"])
def test_malformed_device_strings(device):
    cfg = mc.MHAConfig(4, 2)
    with pytest.raises(mc.ConfigError, match="device must be one of"):
        mc.forward(np.ones((2, 4)), mc.init_weights(cfg), cfg, backend="torch", device=device)


def test_a_torch_device_object_is_accepted():
    cfg = mc.MHAConfig(4, 2)
    trace = mc.forward(np.ones((2, 4)), mc.init_weights(cfg), cfg, backend="torch", device=torch.device("cpu"))
    assert trace.device == "cpu"


def test_stats_is_reachable_from_the_package():
    assert mc.stats.row_entropy(np.array([0.5, 0.5])) == pytest.approx(1.0)


# --------------------------------------------------------------------------------------------------------------------
# forward: inputs
# --------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_x_wrong_width(backend):
    cfg, w = layer()
    with pytest.raises(mc.ConfigError, match="x has 15 numbers per token, but d_model = 16"):
        mc.forward(x_of(5, 15), w, cfg, backend=backend)
    with pytest.raises(mc.ConfigError, match="kv has 17 numbers per token"):
        mc.forward(x_of(5, 16), w, cfg, kv=x_of(3, 17), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(16,), (1, 5, 16), (), (2, 2, 2, 16)])
def test_x_wrong_ndim(backend, shape):
    cfg, w = layer()
    with pytest.raises(mc.ConfigError, match="must be a matrix of shape"):
        mc.forward(np.zeros(shape, np.float32), w, cfg, backend=backend)
    with pytest.raises(mc.ConfigError, match="kv must be a matrix"):
        mc.forward(x_of(), w, cfg, kv=np.zeros(shape, np.float32), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_x_not_finite(backend, bad):
    cfg, w = layer()
    x = x_of()
    x[2, 3] = bad
    with pytest.raises(mc.ConfigError, match="NaN or infinite"):
        mc.forward(x, w, cfg, backend=backend)
    with pytest.raises(mc.ConfigError, match="kv contains NaN or infinite"):
        mc.forward(x_of(), w, cfg, kv=x, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_tokens_and_too_many_tokens(backend):
    cfg, w = layer(4, 1)
    with pytest.raises(mc.ConfigError, match="no tokens"):
        mc.forward(np.zeros((0, 4), np.float32), w, cfg, backend=backend)
    too_many = np.zeros((mc.MAX_TOKENS + 1, 4), np.float32)
    with pytest.raises(mc.ConfigError, match=f"limit is {mc.MAX_TOKENS}"):
        mc.forward(too_many, w, cfg, backend=backend)
    with pytest.raises(mc.ConfigError, match=f"limit is {mc.MAX_TOKENS}"):
        mc.forward(np.zeros((2, 4), np.float32), w, cfg, kv=too_many, backend=backend)


def test_random_input_errors():
    for n, d in [(0, 4), (4, 0), (-1, 4)]:
        with pytest.raises(mc.ConfigError, match="at least one token"):
            mc.random_input(n, d)
    with pytest.raises(mc.ConfigError, match=str(mc.MAX_TOKENS)):
        mc.random_input(mc.MAX_TOKENS + 1, 4)


# --------------------------------------------------------------------------------------------------------------------
# forward: masks
# --------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(6,), (4,), (1, 5), (5, 5)])
def test_key_padding_mask_wrong_shape(backend, shape):
    cfg, w = layer()
    with pytest.raises(mc.ConfigError, match=re.escape("key_padding_mask needs one entry per key, shape (5,)")):
        mc.forward(x_of(5), w, cfg, key_padding_mask=np.zeros(shape, bool), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_key_padding_mask_follows_the_keys_in_cross_attention(backend):
    cfg, w = layer()
    with pytest.raises(mc.ConfigError, match=re.escape("shape (7,)")):
        mc.forward(x_of(3), w, cfg, kv=x_of(7), key_padding_mask=np.zeros(3, bool), backend=backend)
    mc.forward(x_of(3), w, cfg, kv=x_of(7), key_padding_mask=np.zeros(7, bool), backend=backend)  # fine


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(3, 8), (7, 3), (7, 7), (3, 3), (5, 3, 7), (1, 3, 7), (7,), (2, 4, 3, 7)])
def test_attn_mask_wrong_shape(backend, shape):
    cfg, w = layer()  # 4 heads, n = 3 queries, m = 7 keys
    with pytest.raises(mc.ConfigError, match=re.escape("attn_mask must have shape (3, 7)")):
        mc.forward(x_of(3), w, cfg, kv=x_of(7)[:7], attn_mask=np.zeros(shape, bool), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("which", ["key_padding_mask", "attn_mask"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8])
def test_non_boolean_masks(backend, which, dtype):
    cfg, w = layer()
    n = 5
    shape = (n,) if which == "key_padding_mask" else (n, n)
    mask = np.zeros(shape, dtype)
    with pytest.raises(mc.ConfigError, match=f"{which} must be boolean"):
        mc.forward(x_of(n), w, cfg, backend=backend, **{which: mask})


@pytest.mark.parametrize("backend", BACKENDS)
def test_additive_float_mask_is_refused(backend):
    """A torch-style additive mask (0 / -inf) is not silently read as 'block where nonzero'."""
    cfg, w = layer()
    additive = np.where(np.triu(np.ones((5, 5), bool), 1), -np.inf, 0.0)
    with pytest.raises(mc.ConfigError, match="boolean"):
        mc.forward(x_of(5), w, cfg, attn_mask=additive, backend=backend)


# --------------------------------------------------------------------------------------------------------------------
# forward: backend and device
# --------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["jax", "NumPy", "", None, "cuda"])
def test_unknown_backend(backend):
    cfg, w = layer()
    with pytest.raises(mc.ConfigError, match="backend must be one of numpy, torch"):
        mc.forward(x_of(), w, cfg, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("device", ["gpu", "tpu", "CPU", "", "xla"])
def test_unknown_device(backend, device):
    cfg, w = layer()
    with pytest.raises(mc.ConfigError, match="device must be one of auto, cpu, cuda, mps"):
        mc.forward(x_of(), w, cfg, backend=backend, device=device)


@pytest.mark.parametrize("device", ["cuda", "cuda:0", "mps"])
def test_numpy_backend_is_cpu_only(device):
    cfg, w = layer()
    with pytest.raises(mc.ConfigError, match="NumPy backend runs on the CPU only"):
        mc.forward(x_of(), w, cfg, backend="numpy", device=device)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")
@pytest.mark.parametrize("device", ["cuda", "cuda:0"])
def test_cuda_without_gpu(device):
    cfg, w = layer()
    with pytest.raises(mc.ConfigError, match="no CUDA GPU"):
        mc.forward(x_of(), w, cfg, backend="torch", device=device)


@pytest.mark.skipif(torch.backends.mps.is_available(), reason="this machine has Apple's MPS")
def test_mps_without_mps():
    cfg, w = layer()
    with pytest.raises(mc.ConfigError, match="MPS is not available"):
        mc.forward(x_of(), w, cfg, backend="torch", device="mps")


# --------------------------------------------------------------------------------------------------------------------
# Weights
# --------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_weights_of_another_size(backend):
    _, w = layer(32, 4)
    cfg = mc.MHAConfig(16, 4)
    msg = "W_Q has shape (32, 32), but this configuration needs (16, 16)"
    with pytest.raises(mc.ConfigError, match=re.escape(msg)):
        mc.forward(x_of(), w, cfg, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_weights_with_gqa_shapes_for_plain_config(backend):
    _, w = layer(16, 4, n_kv_heads=2)
    with pytest.raises(mc.ConfigError, match="W_K has shape"):
        mc.forward(x_of(), w, mc.MHAConfig(16, 4), backend=backend)
    _, w = layer(16, 4)
    with pytest.raises(mc.ConfigError, match="W_K has shape"):
        mc.forward(x_of(), w, mc.MHAConfig(16, 4, n_kv_heads=2), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["W_O", "b_Q", "b_V", "b_O"])
def test_one_array_of_the_wrong_shape(backend, name):
    cfg, w = layer()
    bad = dataclasses.replace(w, **{name: getattr(w, name)[..., :-1]})
    with pytest.raises(mc.ConfigError, match=f"{name} has shape"):
        mc.forward(x_of(), bad, cfg, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bias_mismatch(backend):
    _, with_bias = layer(bias=True)
    _, without = layer(bias=False)
    with pytest.raises(mc.ConfigError, match="bias=False, but the weights have biases"):
        mc.forward(x_of(), with_bias, mc.MHAConfig(16, 4, bias=False), backend=backend)
    with pytest.raises(mc.ConfigError, match="bias=True, but the weights lack biases"):
        mc.forward(x_of(), without, mc.MHAConfig(16, 4, bias=True), backend=backend)


def test_weights_to_torch_refuses_gqa_and_mismatch():
    cfg, w = layer(16, 4, n_kv_heads=2)
    with pytest.raises(mc.ConfigError, match="no grouped-query heads"):
        mc.weights_to_torch(w, cfg)
    cfg, w = layer(16, 4, n_kv_heads=1)
    with pytest.raises(mc.ConfigError, match="no grouped-query heads"):
        mc.weights_to_torch(w, cfg)
    _, w = layer(32, 4)
    with pytest.raises(mc.ConfigError, match="W_Q has shape"):
        mc.weights_to_torch(w, mc.MHAConfig(16, 4))


@pytest.mark.parametrize("kwargs,match", [
    (dict(add_bias_kv=True), "add_bias_kv"),
    (dict(add_zero_attn=True), "add_zero_attn"),
    (dict(kdim=8), "kdim/vdim"),
    (dict(vdim=8), "kdim/vdim"),
    (dict(kdim=8, vdim=12), "kdim/vdim"),
])
def test_weights_from_torch_refuses_unsupported_modules(kwargs, match):
    module = torch.nn.MultiheadAttention(16, 4, batch_first=True, **kwargs)
    with pytest.raises(mc.ConfigError, match=match):
        mc.weights_from_torch(module)
    with pytest.raises(mc.ConfigError, match=match):
        mc.config_from_torch(module)


# --------------------------------------------------------------------------------------------------------------------
# Text input
# --------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", " ", "\n\t  "])
def test_tokenize_empty_text(text):
    with pytest.raises(mc.ConfigError, match="no words"):
        mc.tokenize(text)


@pytest.mark.parametrize("text", [None, 42, ["a", "b"], b"bytes"])
def test_tokenize_non_text(text):
    with pytest.raises(mc.ConfigError, match="must be text"):
        mc.tokenize(text)


def test_tokenize_too_many_tokens():
    with pytest.raises(mc.ConfigError, match="3 tokens, but the limit is 2"):
        mc.tokenize("a b c", max_tokens=2)
    assert mc.tokenize("a b", max_tokens=2) == ["a", "b"]
    assert len(mc.tokenize("w " * mc.MAX_TOKENS)) == mc.MAX_TOKENS
    with pytest.raises(mc.ConfigError, match=f"{mc.MAX_TOKENS + 1:,} tokens"):
        mc.tokenize("w " * (mc.MAX_TOKENS + 1))


def test_embed_no_tokens():
    with pytest.raises(mc.ConfigError, match="no tokens"):
        mc.embed([], 8)


# --------------------------------------------------------------------------------------------------------------------
# Fully blocked query rows
# --------------------------------------------------------------------------------------------------------------------


def _biased_layer(d_model, h, dtype):
    cfg = mc.MHAConfig(d_model, h)
    w = mc.init_weights(cfg, seed=1, dtype=dtype)
    rng = np.random.default_rng(5)
    return cfg, dataclasses.replace(w, **{k: rng.uniform(0.1, 0.5, getattr(w, k).shape).astype(dtype)
                                          for k in ("b_Q", "b_K", "b_V", "b_O")})


def _assert_no_nan(t):
    for name in ("q", "k", "v", "scores", "weights", "heads", "concat", "output"):
        assert not np.isnan(getattr(t, name)).any(), name


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_all_masked_row(backend, dtype):
    h, n, d_model = 4, 5, 16
    cfg, w = _biased_layer(d_model, h, dtype)
    mask = np.zeros((n, n), bool)
    mask[2, :] = True  # query 2 may look at nothing
    mask[0, 3:] = True  # query 0 still sees some keys
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 'invalid value' RuntimeWarning either
        t = mc.forward(x_of(n, d_model, dtype), w, cfg, attn_mask=mask, backend=backend)
    expected = np.zeros((h, n), bool)
    expected[:, 2] = True
    np.testing.assert_array_equal(t.blocked_rows, expected)
    assert (t.weights[:, 2, :] == 0).all()
    assert (t.heads[:, 2, :] == 0).all()
    assert (t.concat[2] == 0).all()
    np.testing.assert_allclose(t.output[2], w.b_O, rtol=0, atol=1e-6)  # zero heads: only the bias is left
    _assert_no_nan(t)
    # The other rows are untouched: each sums to 1.
    others = np.delete(t.weights, 2, axis=1)
    np.testing.assert_allclose(others.sum(-1), 1.0, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_all_keys_padded(backend):
    """Every key padded: every row blocked, every head output zero, output = b_O everywhere."""
    h, n, d_model = 2, 4, 8
    cfg, w = _biased_layer(d_model, h, np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = mc.forward(x_of(n, d_model, np.float64), w, cfg, key_padding_mask=np.ones(n, bool), backend=backend)
    assert t.blocked_rows.all() and t.blocked_rows.shape == (h, n)
    assert (t.weights == 0).all() and (t.heads == 0).all()
    np.testing.assert_allclose(t.output, np.broadcast_to(w.b_O, (n, d_model)), rtol=0, atol=1e-12)
    _assert_no_nan(t)


@pytest.mark.parametrize("backend", BACKENDS)
def test_row_blocked_in_one_head_only(backend):
    h, n, d_model = 3, 4, 12
    cfg, w = _biased_layer(d_model, h, np.float64)
    mask = np.zeros((h, n, n), bool)
    mask[1, 3, :] = True
    t = mc.forward(x_of(n, d_model, np.float64), w, cfg, attn_mask=mask, backend=backend)
    expected = np.zeros((h, n), bool)
    expected[1, 3] = True
    np.testing.assert_array_equal(t.blocked_rows, expected)
    assert (t.heads[1, 3] == 0).all()
    assert (np.abs(t.heads[0, 3]) > 0).any() and (np.abs(t.heads[2, 3]) > 0).any()
    np.testing.assert_allclose(t.weights[[0, 2], 3].sum(-1), 1.0, atol=1e-12)
    _assert_no_nan(t)


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_mask_means_no_blocked_rows(backend):
    cfg, w = layer()
    t = mc.forward(x_of(), w, cfg, key_padding_mask=np.zeros(5, bool), backend=backend)
    assert t.mask is None
    assert t.blocked_rows.shape == (4, 5) and not t.blocked_rows.any()


# --------------------------------------------------------------------------------------------------------------------
# Large inputs
# --------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("scale", [1e3, 1e6, 1e15])
def test_large_inputs_give_finite_numbers(backend, scale):
    cfg = mc.MHAConfig(16, 4)
    x = mc.random_input(6, 16, seed=0).astype(np.float64) * scale
    trace = mc.forward(x, mc.init_weights(cfg, 0).astype(np.float64), cfg, backend=backend)
    assert np.isfinite(trace.weights).all() and np.isfinite(trace.output).all()
    np.testing.assert_allclose(trace.weights.sum(axis=-1), 1, rtol=1e-12)
    assert not non_finite_in_figure(as_figure(figures.entropy_figure(trace, list("abcdef"))).to_plotly_json())


@pytest.mark.parametrize("backend", BACKENDS)
def test_inputs_too_large_for_the_dtype_are_refused_in_words(backend):
    cfg = mc.MHAConfig(16, 4)
    x = mc.random_input(6, 16, seed=0) * np.float32(1e30)  # Q K^T overflows float32
    with pytest.raises(mc.ConfigError, match="overflow float32"):
        mc.forward(x, mc.init_weights(cfg, 0), cfg, backend=backend)
