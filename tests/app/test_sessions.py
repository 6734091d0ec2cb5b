"""Sessions through the whole app (AppTest): one read-only example for the same settings, never one for different
ones, and the shared cache bounded (the cache itself: unit/test_cache.py)."""

from __future__ import annotations

import dataclasses

import pytest

from mha_app.run import compute
from screen import run_app


def test_sessions_share_one_read_only_example_and_the_cache_stays_bounded():
    params = {"input": "random", "n": "7", "d_model": "24", "h": "3", "seed": "5"}
    a, b = run_app(params), run_app(params)
    ex_a, ex_b = a.session_state["view"][1], b.session_state["view"][1]
    assert ex_a is ex_b, "two sessions with the same settings hold one example, not a copy each"
    assert not ex_a.trace.weights.flags.writeable and not ex_a.weights.W_Q.flags.writeable
    with pytest.raises(ValueError):
        ex_a.trace.weights[0, 0, 0] = 1.0  # a session cannot change what another one sees
    settings = a.session_state["view"][0]
    for seed in range(compute.MAX_EXAMPLES + 4):  # more examples than the cache keeps, as more sessions would ask
        compute.example(dataclasses.replace(settings.spec, seed=seed))
    cache = compute._example.cache
    assert len(cache) == compute.MAX_EXAMPLES and cache.bytes <= compute.MAX_EXAMPLE_BYTES


def test_different_settings_never_share_an_example():
    a = run_app({"text": "alpha beta", "seed": "1"}).session_state["view"][1]
    b = run_app({"text": "gamma delta epsilon", "seed": "1"}).session_state["view"][1]
    assert a.tokens == ["alpha", "beta"] and b.tokens == ["gamma", "delta", "epsilon"]
