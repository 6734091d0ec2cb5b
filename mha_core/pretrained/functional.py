"""Numerical pieces of a transformer layer outside attention, in NumPy: exact GELU (through erf) and LayerNorm for
BERT, RMSNorm and the SwiGLU feed-forward for Llama.

GELU and erf: BERT's hidden_act "gelu" is the exact 0.5 x (1 + erf(x / sqrt 2)), and NumPy has no erf. `erf` below
is a table of math.erf values with a Taylor correction, in float64: relative error below 2e-11. It is not torch's,
for two measured reasons: calling torch between NumPy matrix products makes torch's OpenMP threads and OpenBLAS's
threads fight over the cores (a forward pass became 5-8x slower on a 2-core machine), and importing torch adds
hundreds of MB and most of a second to loading. The usual float32 approximations (the tanh form, Abramowitz-Stegun
7.1.26) are off by 1e-3 to 1e-7, not exact enough.
"""

from __future__ import annotations

import math

import numpy as np


def frozen(a: np.ndarray) -> np.ndarray:
    """The array itself, made read-only so that no caller can change a shared model or run."""
    a.setflags(write=False)
    return a


# erf by table and Taylor series: exact values erf(z0) at z0 = 0, 1/256, ..., 6 (from math.erf), corrected by
# the Taylor terms up to h^3 for the offset h = |z| - z0, |h| <= 1/512. The remainder, erf^(4)(xi) h^4 / 24, is below
# 4e-12, and below 2e-11 of erf(z) itself also near zero (measured against math.erf in tests/test_pretrained.py).
# Beyond 6, erf is +-1 to double precision (erfc(6) = 2e-17). Four table look-ups and a few products per number:
# fewer passes over the array than Cephes' rational functions (ndtr.c) written in NumPy.
_ERF_STEP = 256
_ERF_ZMAX = 6.0
# Numbers per block in erf and gelu: 64 KB of float64 stays in the CPU cache and below malloc's mmap threshold
# (128 KB); with whole (128, 1536) arrays every temporary was fresh memory, and GELU took 4x as long.
_BLOCK = 8192


def _erf_table() -> tuple[np.ndarray, ...]:
    """Taylor coefficients of erf around each grid point z0, lowest order first."""
    z0 = np.arange(int(_ERF_ZMAX * _ERF_STEP) + 1) / _ERF_STEP
    d = 2.0 / math.sqrt(math.pi) * np.exp(-z0 * z0)  # erf'(z0); the higher derivatives are polynomials times d
    table = (np.array([math.erf(v) for v in z0]), d, -z0 * d, (2.0 * z0 * z0 - 1.0) / 3.0 * d)
    return tuple(frozen(c) for c in table)


_ERF_COEFS = _erf_table()


def _erf_block(z: np.ndarray) -> np.ndarray:
    """erf of a 1-D float64 block (see erf); overwrites nothing."""
    s = np.fmin(np.abs(z), _ERF_ZMAX)  # fmin: a NaN becomes a valid index here, and NaN again below
    s *= _ERF_STEP
    k = np.rint(s)
    h = s
    h -= k
    h *= 1.0 / _ERF_STEP  # exact: |z| - z0, since the step is a power of 2
    i = k.astype(np.int32)
    c0, c1, c2, c3 = _ERF_COEFS
    p = c3.take(i)
    p *= h
    p += c2.take(i)
    p *= h
    p += c1.take(i)
    p *= h
    p += c0.take(i)
    np.copysign(p, z, out=p)  # erf is odd
    nan = np.isnan(z)
    if nan.any():
        p[nan] = np.nan
    return p


def erf(z) -> np.ndarray:
    """The error function in float64, relative error below 2e-11 (NumPy has none)."""
    z = np.asarray(z, dtype=np.float64)
    flat, out = z.reshape(-1), np.empty(z.size)
    for start in range(0, flat.size, _BLOCK):
        out[start : start + _BLOCK] = _erf_block(flat[start : start + _BLOCK])
    return out.reshape(z.shape)


def gelu(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Exact GELU, x * 0.5 * (1 + erf(x / sqrt 2)), computed in float64 block by block, stored in out (or new)."""
    x = np.asarray(x)
    if out is None:
        out = np.empty(x.shape, x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64)
    elif out.shape != x.shape or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous array of shape {x.shape}.")
    flat, flat_out = x.reshape(-1), out.reshape(-1)  # out is C-contiguous (new, or an array we made), so a view
    for start in range(0, flat.size, _BLOCK):
        xs = flat[start : start + _BLOCK]
        z = xs.astype(np.float64)
        z *= math.sqrt(0.5)
        phi = _erf_block(z)  # in float64, to keep erf exact
        phi += 1.0
        phi *= 0.5
        phi *= xs
        flat_out[start : start + _BLOCK] = phi  # rounded once, to out's dtype
    return out




def layer_norm_(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis with the biased variance, as torch.nn.LayerNorm, in place on x (ours)."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.mean(np.square(x), axis=-1, keepdims=True)  # (n, 1)
    x /= np.sqrt(var + eps)
    x *= weight
    x += bias
    return x                                              # (n, d_model)


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """RMSNorm over the last axis (Zhang & Sennrich 2019) as Llama's: x / sqrt(mean(x^2) + eps) * weight, new array."""
    mean_square = np.mean(np.square(x), axis=-1, keepdims=True)  # (n, 1)
    y = x * (1.0 / np.sqrt(mean_square + eps))
    y *= weight
    return y                                                     # (n, d_model)


def silu_(x: np.ndarray) -> np.ndarray:
    """SiLU, x * sigmoid(x) = x / (1 + exp(-x)), in place on x."""
    e = np.negative(x)
    with np.errstate(over="ignore"):  # exp(-x) = inf for x < -88 (float32): x / inf = -0, the right limit
        np.exp(e, out=e)
    e += 1.0
    x /= e
    return x


def swiglu(x: np.ndarray, w) -> np.ndarray:
    """Llama's feed-forward block (SwiGLU, Shazeer 2020): (SiLU(x W_gate^T) * x W_up^T) W_down^T, no biases.

    w: the layer's weights, with W_gate, W_up (d_ff, d_model) and W_down (d_model, d_ff); each is read once, just
    before its product (a layer held in 4-bit blocks widens it there, into one buffer for all three).
    """
    inner = silu_(x @ w.W_gate.T)  # (n, d_ff)
    inner *= x @ w.W_up.T
    return inner @ w.W_down.T      # (n, d_model)
