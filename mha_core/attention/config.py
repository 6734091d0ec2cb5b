"""The configuration of one multi-head attention layer, and the errors a student can make with it."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

# Documented caps: large enough for real models, small enough that a typo cannot exhaust memory.
MAX_D_MODEL = 4096
MAX_HEADS = 64
MAX_TOKENS = 4096
# h * n * m: the size of one score matrix stack; 2**28 float32 numbers are 1 GiB, and a trace holds a few of them.
MAX_SCORE_CELLS = 2**28


class ConfigError(ValueError):
    """A configuration or input that cannot work, explained in plain words."""


def divisors(n: int, limit: int = MAX_HEADS) -> list[int]:
    """The head counts that split n dimensions evenly (at most `limit`)."""
    return [h for h in range(1, min(n, limit) + 1) if n % h == 0]


def head_split_problem(d_model: int, n_heads: int, limit: int = MAX_HEADS) -> str | None:
    """Why h cannot split d_model into heads (each gets d_model / h whole dimensions), or None when it can."""
    if d_model % n_heads == 0:
        return None
    return (f"Each head gets d_model / h dimensions, so h must divide d_model evenly: {d_model} / {n_heads} = "
            f"{d_model / n_heads:.2f} is not a whole number. Head counts that work for d_model = {d_model}: "
            f"{', '.join(map(str, divisors(d_model, limit)))}.")


def kv_split_problem(n_heads: int, n_kv_heads: int) -> str | None:
    """Why the query heads cannot be shared out evenly among n_kv_heads key/value heads, or None when they can."""
    if n_heads % n_kv_heads == 0:
        return None
    return (f"Query heads are shared out evenly among the key/value heads, so the number of key/value heads must "
            f"divide h = {n_heads}; {n_kv_heads} does not. Values that work: {', '.join(map(str, divisors(n_heads)))}.")


def _check_size(name: str, value, cap: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(f"{name} must be a whole number, got {value!r}.")
    if value <= 0:
        raise ConfigError(f"{name} must be at least 1, got {value}.")
    if value > cap:
        raise ConfigError(f"{name} = {value} is above this tool's limit of {cap}.")


@dataclass(frozen=True)
class MHAConfig:
    """Sizes and options of one multi-head attention layer.

    d_model: width of each token vector; n_heads: the number of query heads h;
    n_kv_heads: key/value heads (None = n_heads, 1 = multi-query, in between = grouped-query);
    bias: whether the projections add a bias; causal: block every key after the query;
    scale: factor on Q K^T (None = 1/sqrt(d_k));
    rope_theta: the base of rotary position embeddings (RoPE, Su 2021; 10000 in the paper, 100000 in SmolLM2):
    queries and keys are rotated by their position after the projection (None = no rotation);
    head_dim: d_k, each head's width, when a model sets it apart from d_model / h (Qwen3: 128 with d_model 1024 and
    16 heads); None = d_model / h;
    qk_norm_eps: RMSNorm each head's query and key over its d_k numbers before RoPE, with the weights' q_norm and
    k_norm (Qwen3), this being the epsilon (None = no such norm);
    sliding_window: with causal, the query at position t sees only the keys t - sliding_window + 1 ... t (Mistral);
    None = every earlier key;
    rope_frequencies: (d_k/2,) the angle per position of each RoPE pair, where a model rescales them (Llama 3's
    rope_scaling); None = rope_theta^(-2i/d_k).
    """

    d_model: int
    n_heads: int
    n_kv_heads: int | None = None
    bias: bool = True
    causal: bool = False
    scale: float | None = None
    rope_theta: float | None = None
    head_dim: int | None = None
    qk_norm_eps: float | None = None
    sliding_window: int | None = None
    rope_frequencies: tuple[float, ...] | None = None

    def __post_init__(self):
        for name in ("d_model", "n_heads", "n_kv_heads", "head_dim", "sliding_window"):
            value = getattr(self, name)
            if isinstance(value, numbers.Integral) and not isinstance(value, bool):
                object.__setattr__(self, name, int(value))  # NumPy integers become plain ints
        _check_size("d_model", self.d_model, MAX_D_MODEL)
        _check_size("n_heads", self.n_heads, MAX_HEADS)
        if self.head_dim is not None:
            _check_size("head_dim", self.head_dim, MAX_D_MODEL)
        elif problem := head_split_problem(self.d_model, self.n_heads):
            raise ConfigError(problem)
        if self.n_kv_heads is not None:
            _check_size("n_kv_heads", self.n_kv_heads, MAX_HEADS)
            if problem := kv_split_problem(self.n_heads, self.n_kv_heads):
                raise ConfigError(problem)
        if self.scale is not None and (isinstance(self.scale, bool) or not isinstance(self.scale, numbers.Real)
                                       or not math.isfinite(self.scale) or self.scale <= 0):
            raise ConfigError(f"scale must be a positive, finite number (or None for 1/sqrt(d_k)), got {self.scale!r}.")
        if self.rope_theta is not None:
            if (isinstance(self.rope_theta, bool) or not isinstance(self.rope_theta, numbers.Real)
                    or not math.isfinite(self.rope_theta) or self.rope_theta <= 1):
                raise ConfigError(f"rope_theta must be a finite number above 1 (or None for no rotation), "
                                  f"got {self.rope_theta!r}.")
            object.__setattr__(self, "rope_theta", float(self.rope_theta))  # 10000 and 10000.0 are one config
            if self.d_k % 2:
                raise ConfigError(f"RoPE turns each head's dimensions in pairs, so d_k must be even; d_k = {self.d_k} "
                                  "is odd.")
        if self.rope_frequencies is not None:
            freqs = tuple(float(f) for f in self.rope_frequencies)
            if self.rope_theta is None:
                raise ConfigError("rope_frequencies rescale RoPE's angles: set rope_theta too (no RoPE without it).")
            if len(freqs) != self.d_k // 2 or not all(math.isfinite(f) and f > 0 for f in freqs):
                raise ConfigError(f"rope_frequencies needs d_k / 2 = {self.d_k // 2} positive, finite numbers (one per "
                                  f"pair of dimensions); got {len(freqs)}.")
            object.__setattr__(self, "rope_frequencies", freqs)
        if self.qk_norm_eps is not None and (isinstance(self.qk_norm_eps, bool)
                                             or not isinstance(self.qk_norm_eps, numbers.Real)
                                             or not math.isfinite(self.qk_norm_eps) or self.qk_norm_eps <= 0):
            raise ConfigError(f"qk_norm_eps must be a small positive number (or None for no norm), got "
                              f"{self.qk_norm_eps!r}.")
        if self.sliding_window is not None:
            _check_size("sliding_window", self.sliding_window, 2**31)
            if not self.causal:
                raise ConfigError("A sliding window limits how far back a causal query looks: set causal=True with it.")

    @property
    def d_k(self) -> int:
        """Width of one head's queries, keys and values: head_dim when set, else d_model / h."""
        return self.head_dim if self.head_dim is not None else self.d_model // self.n_heads

    @property
    def kv_heads(self) -> int:
        """The number of key/value heads actually used."""
        return self.n_kv_heads or self.n_heads

    @property
    def group_size(self) -> int:
        """How many query heads share one key/value head."""
        return self.n_heads // self.kv_heads

    @property
    def softmax_scale(self) -> float:
        return self.scale if self.scale is not None else self.d_k**-0.5
