"""What multi-head attention costs, counted from its shapes: parameters, multiply-adds, and the K/V cache.

With d_k = d_model / h, the projections and W_O hold the same numbers for any h, and the score and weighted-sum
products do the same work: h heads of width d_k cost what one head of width d_model costs. What grows with h is the
number of n x m matrices of attention weights (h of them) kept in memory.

These functions count and never allocate, so they take real models' sizes (GPT-3's d_model of 12288 and 96 heads),
far above the limits the engine computes with.
"""

from __future__ import annotations

import numbers

from ..attention.config import ConfigError


def _whole(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ConfigError(f"{name} must be a whole number of at least 1, got {value!r}.")
    return int(value)


def head_sizes(d_model: int, n_heads: int, n_kv_heads: int | None = None) -> tuple[int, int, int]:
    """(h, n_kv_heads, d_k), checked: h divides d_model, and n_kv_heads (None = h) divides h."""
    d_model, h = _whole("d_model", d_model), _whole("n_heads", n_heads)
    kv = h if n_kv_heads is None else _whole("n_kv_heads", n_kv_heads)
    if d_model % h:
        raise ConfigError(f"h = {h} does not divide d_model = {d_model}: each head needs d_model / h whole dimensions.")
    if h % kv:
        raise ConfigError(f"n_kv_heads = {kv} does not divide n_heads = {h}: query heads share K/V heads evenly.")
    return h, kv, d_model // h


def trace_sizes(trace) -> dict[str, int]:
    """n, m, d_model, n_heads, n_kv_heads and d_k, read off the arrays of an engine Trace."""
    h, n, m = trace.weights.shape
    return dict(n=n, m=m, d_model=trace.x.shape[1], n_heads=h, n_kv_heads=trace.k.shape[0], d_k=trace.q.shape[2])


def param_shapes(d_model: int, n_heads: int, n_kv_heads: int | None = None, bias: bool = True) -> dict[str, tuple]:
    """Each learned array of one layer and its shape, in PyTorch's (out_features, in_features) layout."""
    h, kv, d_k = head_sizes(d_model, n_heads, n_kv_heads)
    q_out, kv_out = h * d_k, kv * d_k
    shapes = {"W_Q": (q_out, d_model), "W_K": (kv_out, d_model), "W_V": (kv_out, d_model), "W_O": (d_model, q_out)}
    if bias:
        shapes.update(b_Q=(q_out,), b_K=(kv_out,), b_V=(kv_out,), b_O=(d_model,))
    return shapes


def attention_params(d_model: int, n_heads: int, n_kv_heads: int | None = None, bias: bool = True) -> int:
    """The number of learned parameters of one attention layer (W_Q, W_K, W_V, W_O and their biases)."""
    total = 0
    for shape in param_shapes(d_model, n_heads, n_kv_heads, bias).values():
        size = 1
        for dim in shape:
            size *= dim
        total += size
    return total


def attention_flops(n: int, m: int, d_model: int, n_heads: int, n_kv_heads: int | None = None) -> dict[str, int]:
    """Multiply-adds of each matrix product, for n queries and m keys (softmax's exponentials are not counted).

    Keys, in the order of the four steps: project_q, project_k, project_v (step 1), scores (Q_i K_i^T, every head)
    and weighted_sum (weights times V_i, every head) (step 2), project_out (W_O, step 4). Step 3 only moves numbers.
    """
    h, kv, d_k = head_sizes(d_model, n_heads, n_kv_heads)
    n, m = _whole("n", n), _whole("m", m)
    return {
        "project_q": n * d_model * h * d_k,      # (n, d_model) @ (d_model, h*d_k)
        "project_k": m * d_model * kv * d_k,     # (m, d_model) @ (d_model, n_kv_heads*d_k)
        "project_v": m * d_model * kv * d_k,
        "scores": h * n * m * d_k,               # h times (n, d_k) @ (d_k, m)
        "weighted_sum": h * n * m * d_k,         # h times (n, m) @ (m, d_k)
        "project_out": n * h * d_k * d_model,    # (n, h*d_k) @ (h*d_k, d_model)
    }


def rope_multiplications(n: int, m: int, d_model: int, n_heads: int, n_kv_heads: int | None = None) -> int:
    """Multiplications of rotary position embeddings (RoPE): every number of Q (n x h*d_k) and of K
    (m x n_kv_heads*d_k) becomes x1·cos − x2·sin or x2·cos + x1·sin, 2 multiplications each (the angles are not
    counted: they depend on the positions only, and can be computed once)."""
    h, kv, d_k = head_sizes(d_model, n_heads, n_kv_heads)
    return 2 * (_whole("n", n) * h + _whole("m", m) * kv) * d_k


def score_values(n: int, m: int, n_heads: int) -> int:
    """How many attention weights one layer holds: h matrices of n x m (the part that grows with h)."""
    return n_heads * n * m


def kv_cache_bytes(n_layers: int, n_kv_heads: int, d_k: int, seq_len: int, batch: int = 1,
                   bytes_per_value: int = 2) -> int:
    """Bytes a decoder keeps to generate the next token: K and V of every past token, in every layer and KV head."""
    return 2 * n_layers * n_kv_heads * d_k * seq_len * batch * bytes_per_value


def human_bytes(n: int) -> str:
    """A byte count in binary units, as memory is sold: '4.5 MiB' (1 MiB = 2**20 bytes)."""
    for unit, power in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 2**power:
            value = n / 2**power
            return f"{value:,.0f} {unit}" if value >= 100 else f"{value:.3g} {unit}"
    return f"{n} bytes"


def latex_count(n: int) -> str:
    """A whole number for LaTeX with thousands separators ({,} so that KaTeX does not space them out)."""
    return f"{n:,}".replace(",", "{,}")
