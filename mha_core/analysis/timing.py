"""Measured time of one wide head against h heads of d_model / h, both computed by mc.forward on this machine.

The multiply-adds are the same (see cost.py); the time is not quite: h smaller matrix products, h score matrices
to write and read, and the engine's per-call work all take their share. This measures, it does not predict: run it
on click, never in a test.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..attention.config import MHAConfig
from ..attention.engine import forward
from ..attention.weights import init_weights


@dataclass(frozen=True)
class HeadTiming:
    """Median seconds of one forward pass, for 1 head of d_model and for n_heads heads of d_model / n_heads."""

    n: int
    d_model: int
    n_heads: int
    one_head: float
    many_heads: float
    runs: int        # timed runs of each
    device: str

    @property
    def ratio(self) -> float:
        """many_heads / one_head: 1 means the same time."""
        return self.many_heads / self.one_head


WARM_UP = 3  # untimed runs of each first: torch prepares its kernels for a new shape over the first few calls


def time_heads(x: np.ndarray, n_heads: int, n_kv_heads: int | None = None, backend: str = "numpy",
               device: str = "auto", causal: bool = False, repeats: int = 9, budget_s: float = 3.0) -> HeadTiming:
    """Time mc.forward on x (n, d_model) with one head of width d_model and with n_heads heads (sharing n_kv_heads
    K/V heads, if given), same input. The two alternate, so that a machine growing busier slows both alike; at
    least 3 timed runs each, at most `repeats`, fewer once budget_s is spent."""
    n, d_model = x.shape
    configs = (MHAConfig(d_model, 1, causal=causal), MHAConfig(d_model, n_heads, n_kv_heads, causal=causal))
    runs = [(cfg, init_weights(cfg, seed=0, dtype=x.dtype)) for cfg in configs]
    for _ in range(WARM_UP):
        used = [forward(x, w, cfg, backend=backend, device=device).device for cfg, w in runs][0]
    seconds: tuple[list[float], list[float]] = ([], [])
    while len(seconds[0]) < repeats and (len(seconds[0]) < 3 or sum(map(sum, seconds)) < budget_s):
        for (cfg, w), times in zip(runs, seconds, strict=True):
            start = time.perf_counter()
            forward(x, w, cfg, backend=backend, device=device)
            times.append(time.perf_counter() - start)
    one, many = (float(np.median(times)) for times in seconds)
    return HeadTiming(n, d_model, n_heads, one, many, len(seconds[0]), used)
