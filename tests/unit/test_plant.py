"""Planted heads: each pattern's weights against its rule, written out here, and the least-squares claims."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mha_core as mc
from mha_core.experiments.plant import PATTERNS, fit, rule_matrix

BACKENDS = ["numpy", "torch"]


def rule_key(pattern: str, i: int, m: int) -> int | None:
    """The key query i should look at, by the rule's definition in words; None when there is none."""
    j = {"previous": i - 1, "next": i + 1, "first": 0, "self": i, "uniform": None}[pattern]
    return j if j is not None and 0 <= j < m else None


def expected_weights(pattern: str, strength: float, n: int, m: int) -> np.ndarray:
    """softmax(strength * rule) row by row, written out: the rule key gets e^s / (e^s + m - 1), the others 1 / (...)."""
    out = np.full((n, m), 1.0 / m)
    for i in range(n):
        j = rule_key(pattern, i, m)
        if j is not None:
            total = math.exp(strength) + m - 1
            out[i] = 1.0 / total
            out[i, j] = math.exp(strength) / total
    return out


def sentence(n: int, d_model: int) -> np.ndarray:
    return mc.embed([f"w{i}" for i in range(n)], d_model, seed=3)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("pattern", list(PATTERNS))
@pytest.mark.parametrize("strength", [0.0, 2.5, 4.0, 9.0])
def test_each_pattern_follows_its_rule_exactly_when_the_keys_fit(pattern, strength, backend):
    cfg = mc.MHAConfig(128, 8)                       # d_k = 16 >= m = 11: exact
    w = mc.init_weights(cfg, seed=1)
    x = sentence(11, 128)
    planted = mc.plant_head(w, cfg, 2, pattern, strength, x)
    trace = mc.forward(x, planted, cfg, backend=backend)
    np.testing.assert_allclose(trace.weights[2], expected_weights(pattern, strength, 11, 11), atol=2e-6)
    target = np.array([[strength if rule_key(pattern, i, 11) == j else 0.0 for j in range(11)] for i in range(11)])
    np.testing.assert_allclose(trace.scores[2], target, atol=2e-5, err_msg="the scaled scores read strength off")
    result = fit(trace, 2, pattern, strength)
    assert result.score_error <= 2e-5 and result.weight_error <= 2e-6


def test_only_the_planted_heads_rows_of_w_q_and_b_q_change():
    cfg = mc.MHAConfig(64, 4)
    w = mc.init_weights(cfg, seed=0)
    planted = mc.plant_head(w, cfg, 1, "previous", 4.0, sentence(6, 64))
    rows = slice(16, 32)
    assert not np.array_equal(planted.W_Q[rows], w.W_Q[rows])
    for name, array in w.arrays().items():
        other = getattr(planted, name)
        assert other.dtype == array.dtype
        if name in ("W_Q", "b_Q"):
            keep = np.ones(len(array), bool)
            keep[rows] = False
            np.testing.assert_array_equal(other[keep], array[keep])
        else:
            np.testing.assert_array_equal(other, array, err_msg=name)
    assert planted.W_Q is not w.W_Q and (w.W_Q == mc.init_weights(cfg, seed=0).W_Q).all(), "the input is untouched"


@pytest.mark.parametrize("scale", [None, 1.0, 0.3])
def test_strength_is_the_score_softmax_sees_whatever_the_scale(scale):
    cfg = mc.MHAConfig(96, 4, scale=scale, bias=False)
    x = sentence(7, 96)
    trace = mc.forward(x, mc.plant_head(mc.init_weights(cfg), cfg, 0, "first", 5.0, x), cfg)
    np.testing.assert_allclose(trace.scores[0][:, 0], 5.0, atol=1e-4)
    np.testing.assert_allclose(trace.scores[0][:, 1:], 0.0, atol=1e-4)


@pytest.mark.parametrize("pattern", ["previous", "self", "first"])
def test_cross_attention_and_grouped_query_heads(pattern):
    cfg = mc.MHAConfig(96, 6, n_kv_heads=2)          # d_k = 16; head 4 reads K/V head 1
    x, kv = sentence(5, 96), mc.embed([f"k{i}" for i in range(9)], 96, seed=4)
    trace = mc.forward(x, mc.plant_head(mc.init_weights(cfg, seed=2), cfg, 4, pattern, 6.0, x, kv=kv), cfg, kv=kv)
    assert trace.weights.shape == (6, 5, 9)
    np.testing.assert_allclose(trace.weights[4], expected_weights(pattern, 6.0, 5, 9), atol=2e-6)


def test_strength_sharpens_then_saturates():
    cfg = mc.MHAConfig(64, 4)
    w, x = mc.init_weights(cfg), sentence(8, 64)
    peak = [mc.forward(x, mc.plant_head(w, cfg, 0, "self", s, x), cfg).weights[0].diagonal().mean()
            for s in (0.0, 2.0, 4.0, 8.0, 16.0)]
    assert peak[0] == pytest.approx(1 / 8, abs=1e-6)
    assert all(a < b for a, b in zip(peak, peak[1:], strict=False))
    assert peak[-1] - peak[-2] < 0.01 < peak[2] - peak[1], "the last doubling changes almost nothing"


def test_too_many_keys_gives_the_least_squares_fit():
    """m = 11 keys in d_k = 8 dimensions: no exact fit. The result must be the least-squares optimum, checked
    against a direct solve of min |X_aug A K^T - T| over all of A written with a Kronecker product."""
    cfg = mc.MHAConfig(64, 8)
    w, x = mc.init_weights(cfg, seed=0, dtype=np.float64), sentence(11, 64).astype(np.float64)
    trace = mc.forward(x, mc.plant_head(w, cfg, 3, "previous", 4.0, x), cfg)
    result = fit(trace, 3, "previous", 4.0)
    assert result.score_error > 0.1, "the page must say the fit is not exact"
    K = x @ w.W_K[24:32].T + w.b_K[24:32]                      # (m, d_k)
    X = np.hstack([x, np.ones((11, 1))])                       # (n, d_model + 1)
    T = 4.0 * rule_matrix("previous", 11, 11) / cfg.softmax_scale
    # vec(X A K^T) = (K kron X) vec(A), column-major vec.
    A = np.linalg.lstsq(np.kron(K, X), T.flatten(order="F"), rcond=None)[0]
    best = np.linalg.norm(X @ A.reshape(65, 8, order="F") @ K.T - T)
    ours = np.linalg.norm(trace.scores[3] / cfg.softmax_scale - T)
    assert ours == pytest.approx(best, rel=1e-6)


def test_rule_matrices():
    np.testing.assert_array_equal(rule_matrix("previous", 3, 3), [[0, 0, 0], [1, 0, 0], [0, 1, 0]])
    np.testing.assert_array_equal(rule_matrix("next", 3, 3), [[0, 1, 0], [0, 0, 1], [0, 0, 0]])
    np.testing.assert_array_equal(rule_matrix("first", 2, 3), [[1, 0, 0], [1, 0, 0]])
    np.testing.assert_array_equal(rule_matrix("self", 3, 2), [[1, 0], [0, 1], [0, 0]])
    np.testing.assert_array_equal(rule_matrix("uniform", 2, 2), np.zeros((2, 2)))


@pytest.mark.parametrize("kwargs, words", [
    (dict(pattern="diagonal"), "pattern must be one of"),
    (dict(head=4), "head must be a head index from 0 to 3"),
    (dict(head=-1), "head must be"),
    (dict(head=True), "head must be"),
    (dict(strength=float("inf")), "finite"),
    (dict(strength=float("nan")), "finite"),
    (dict(strength="4"), "finite number"),
    (dict(x=np.zeros((3, 5))), "d_model"),
])
def test_bad_arguments_are_refused_in_words(kwargs, words):
    cfg = mc.MHAConfig(16, 4)
    args = dict(w=mc.init_weights(cfg), cfg=cfg, head=0, pattern="self", strength=4.0, x=np.ones((3, 16)))
    with pytest.raises(mc.ConfigError, match=words):
        mc.plant_head(**{**args, **kwargs})
