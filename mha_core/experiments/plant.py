"""A planted head: one head's W_Q solved for so that, on a given input, it attends by a simple rule.

Some of these rules are patterns that studies found in trained heads (EVIDENCE). Planting such a head by hand shows
that the pattern is nothing but scores: if head i's scores are `strength` where the rule says 1 and 0 elsewhere,
softmax gives each rule key e^strength / (e^strength + the other keys), and the heatmap obeys the rule more sharply
as strength grows.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass

import numpy as np

from ..attention.config import ConfigError, MHAConfig
from ..attention.engine import check_input, linear, softmax_rows
from ..attention.trace import Trace
from ..attention.weights import MHAWeights

# pattern -> what the head does, in words.
PATTERNS = {
    "previous": "each token attends to the token before it",
    "next": "each token attends to the token after it",
    "first": "every token attends to the first token",
    "self": "each token attends to itself",
    "uniform": "every token spreads its attention evenly over all keys",
}

# How the head's queries are found, in words a first-year student knows (said where the pages first name the method).
LEAST_SQUARES = ("least squares (the numbers that make the sum of the squared misses as small as possible, the way a "
                 "straight line is fitted through points)")

# What the literature says about each rule, in one sentence.
_POSITIONAL = ("Voita et al. (2019) call heads that attend to the token before or after positional heads, and find "
               "them among the most important heads of a trained translation model.")
EVIDENCE = {
    "previous": _POSITIONAL,
    "next": _POSITIONAL,
    "first": "Clark et al. (2019) find BERT heads that put most of their weight on [CLS] or [SEP], and Xiao et al. "
             "(2023) find that language models park weight on the first token (an 'attention sink').",
    "self": "Clark et al. (2019) find that most BERT heads put little weight on the current token: a head that "
            "looks only at itself is here to compare with the others.",
    "uniform": "Clark et al. (2019) find BERT heads that attend broadly over the whole sentence: a uniform head, every "
               "weight equal, is the far end of that.",
}


def rule_matrix(pattern: str, n: int, m: int) -> np.ndarray:
    """(n, m) 0/1: 1 where the rule says query t should look at key s.

    "previous": key i-1; "next": key i+1; "first": key 0; "self": key i; "uniform": no key above another (all 0).
    A query whose rule key does not exist (the first token's previous one) has a row of zeros: it spreads evenly.
    """
    if pattern not in PATTERNS:
        raise ConfigError(f"pattern must be one of {', '.join(PATTERNS)}; got {pattern!r}.")
    rule = np.zeros((n, m))
    i = np.arange(n)
    target = {"previous": i - 1, "next": i + 1, "first": np.zeros(n, int), "self": i, "uniform": None}[pattern]
    if target is not None:
        ok = (target >= 0) & (target < m)
        rule[i[ok], target[ok]] = 1.0
    return rule


def _check_head(head, cfg: MHAConfig) -> int:
    if isinstance(head, bool) or not isinstance(head, numbers.Integral) or not 0 <= head < cfg.n_heads:
        raise ConfigError(f"head must be a head index from 0 to {cfg.n_heads - 1} (0-based); got {head!r}.")
    return int(head)


def _check_strength(strength) -> float:
    if isinstance(strength, bool) or not isinstance(strength, numbers.Real) or not math.isfinite(strength):
        raise ConfigError(f"strength must be a finite number, got {strength!r}.")
    return float(strength)


def plant_head(w: MHAWeights, cfg: MHAConfig, head: int, pattern: str, strength: float, x, kv=None) -> MHAWeights:
    """New weights in which head `head` (0-based) attends to x by `pattern` ("previous", "next", "first", "self",
    "uniform"); kv is the keys' and values' input for cross-attention (None = x).

    The head's scores, as softmax sees them (Q_i K_i^T times the scale: Trace.scores, the "scaled scores"
    heatmap), are made `strength` times rule_matrix(pattern): the heatmap reads `strength` where the rule says 1
    and 0 elsewhere. W_K, W_V, W_O and every other head stay as they were; only head's d_k rows of W_Q (and of b_Q)
    change, to the least-squares solution of  (X W_Q_i^T + b_Q_i) K_i^T · scale = strength · rule.
    That is exact while head's m keys are linearly independent (so m <= d_k) and so are the n inputs (with the bias,
    each with a 1 appended); otherwise it is the closest fit, and `fit` measures how close.
    """
    w.check(cfg)
    head, strength = _check_head(head, cfg), _check_strength(strength)
    x = check_input(x, cfg, "x").astype(np.float64)
    x_kv = x if kv is None else check_input(kv, cfg, "kv").astype(np.float64)
    d_k = cfg.d_k
    kv_head = head // cfg.group_size                    # with grouped-query attention, the K/V head it reads
    rows = slice(kv_head * d_k, (kv_head + 1) * d_k)
    b_K = None if w.b_K is None else w.b_K[rows].astype(np.float64)
    K_i = linear(x_kv, w.W_K[rows].astype(np.float64), b_K)  # (m, d_k)
    target = strength * rule_matrix(pattern, len(x), len(x_kv)) / cfg.softmax_scale  # (n, m) wanted Q_i K_i^T
    # Two least-squares solves, each the minimum-norm one: the queries Q_i with Q_i K_i^T = target, then the
    # rows of W_Q (and b_Q, through a column of ones) that make those queries from X.
    Q_i = np.linalg.lstsq(K_i, target.T, rcond=None)[0].T  # (n, d_k)
    X = np.hstack([x, np.ones((len(x), 1))]) if cfg.bias else x  # (n, d_model [+1])
    A = np.linalg.lstsq(X, Q_i, rcond=None)[0]          # (d_model [+1], d_k)
    q_rows = slice(head * d_k, (head + 1) * d_k)
    W_Q = w.W_Q.copy()
    W_Q[q_rows] = A[: cfg.d_model].T
    changed = dict(W_Q=W_Q)
    if cfg.bias:
        b_Q = w.b_Q.copy()
        b_Q[q_rows] = A[cfg.d_model]
        changed["b_Q"] = b_Q
    return dataclasses.replace(w, **changed)


@dataclass(frozen=True)
class PlantFit:
    """How closely a planted head follows its rule on the traced input."""

    score_error: float   # largest |score - strength * rule| over the head's n x m scores (before the mask)
    weight_error: float  # largest |weight - the rule's weight| over the rows that attend at all
    target_weights: np.ndarray  # (n, m) softmax(strength * rule), with the trace's mask: the weights a perfect fit has


def fit(trace: Trace, head: int, pattern: str, strength: float) -> PlantFit:
    """Compare head `head` (0-based) of a trace with the rule it was planted with."""
    n, m = trace.scores.shape[1:]
    target = strength * rule_matrix(pattern, n, m)
    masked = target if trace.mask is None else np.where(trace.mask[head], -np.inf, target)
    target_weights = softmax_rows(masked)
    keep = ~trace.blocked_rows[head]
    return PlantFit(score_error=float(np.abs(trace.scores[head] - target).max()),
                    weight_error=float(np.abs(trace.weights[head][keep] - target_weights[keep]).max(initial=0.0)),
                    target_weights=target_weights)
