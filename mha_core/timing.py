"""Measured time of one wide head against h heads of d_model / h, both computed by mc.forward on this machine.

The multiply-adds are the same (see cost.py); the time is not quite: h smaller matrix products, h score matrices
to write and read, and the engine's per-call work all take their share. This measures, it does not predict: run it
on click, never in a test.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .config import MHAConfig
from .engine import forward
from .weights import init_weights


@dataclass(frozen=True)
class HeadTiming:
    """Median seconds of one forward pass, for 1 head of d_model and for n_heads heads of d_model / n_heads."""

    n: int
    d_model: int
    n_heads: int
    one_head: float
    many_heads: float
    runs: int        # timed runs of each (the fewer of the two)
    device: str

    @property
    def ratio(self) -> float:
        """many_heads / one_head: 1 means the same time."""
        return self.many_heads / self.one_head


def _median_seconds(x: np.ndarray, cfg: MHAConfig, backend: str, device: str, repeats: int,
                    budget_s: float) -> tuple[float, int, str]:
    """(median seconds, runs, device): at least 3 runs, at most `repeats`, stopping once budget_s is spent."""
    w = init_weights(cfg, seed=0, dtype=x.dtype)
    used = forward(x, w, cfg, backend=backend, device=device).device   # warm-up: first calls allocate and load
    seconds: list[float] = []
    while len(seconds) < repeats and (len(seconds) < 3 or sum(seconds) < budget_s):
        start = time.perf_counter()
        forward(x, w, cfg, backend=backend, device=device)
        seconds.append(time.perf_counter() - start)
    return float(np.median(seconds)), len(seconds), used


def time_heads(x: np.ndarray, n_heads: int, backend: str = "numpy", device: str = "auto", causal: bool = False,
               repeats: int = 9, budget_s: float = 1.5) -> HeadTiming:
    """Time mc.forward on x (n, d_model) with one head of width d_model and with n_heads heads, same input."""
    n, d_model = x.shape
    one, runs_one, used = _median_seconds(x, MHAConfig(d_model, 1, causal=causal), backend, device, repeats, budget_s)
    many, runs_many, _ = _median_seconds(x, MHAConfig(d_model, n_heads, causal=causal), backend, device, repeats,
                                         budget_s)
    return HeadTiming(n, d_model, n_heads, one, many, min(runs_one, runs_many), used)
