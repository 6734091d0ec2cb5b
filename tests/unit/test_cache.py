"""The caches the sessions share: bounded in entries and bytes, keyed on inputs, read-only, nothing per user."""

from __future__ import annotations

import ast
import importlib
import threading
import time
from dataclasses import dataclass

import numpy as np
import pytest

from helpers import ROOT
from mha_app.run import compute
from mha_app.state.cache import BoundedCache, nbytes


def test_least_recently_used_goes_first_when_entries_run_out():
    cache = BoundedCache(max_entries=2, max_bytes=10**6)
    for key in "abc":
        cache.get(key, lambda key=key: np.zeros(10))
        if key == "b":
            cache.get("a", lambda: pytest.fail("a is cached"))  # a is now the most recent
    calls = []
    cache.get("b", lambda: calls.append("b") or np.zeros(10))
    assert calls == ["b"], "b was the least recently used, so c pushed it out"
    assert len(cache) == 2


def test_the_byte_budget_holds_and_a_value_larger_than_it_is_not_kept():
    cache = BoundedCache(max_entries=100, max_bytes=8000)
    for i in range(10):
        cache.get(i, lambda: np.zeros(300))  # 2400 bytes each
        assert cache.bytes <= 8000
    assert len(cache) == 3 and cache.bytes == 3 * 2400
    big = cache.get("big", lambda: np.zeros(2000))  # 16000 bytes: returned, not kept
    again = cache.get("big", lambda: np.ones(2000))
    assert big.shape == (2000,) and again[0] == 1 and len(cache) == 3


def test_a_key_asked_for_by_many_sessions_at_once_is_computed_once():
    cache = BoundedCache(max_entries=4, max_bytes=10**6)
    calls, results = [], []

    def slow():
        calls.append(1)
        time.sleep(0.2)
        return np.arange(3)

    threads = [threading.Thread(target=lambda: results.append(cache.get("k", slow))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(results) == 8 and all(r is results[0] for r in results)


def test_a_failed_computation_is_not_kept_and_leaves_nothing_behind():
    cache = BoundedCache(max_entries=4, max_bytes=10**6)
    for _ in range(3):
        with pytest.raises(ValueError):
            cache.get("bad", lambda: (_ for _ in ()).throw(ValueError("no")))
    assert len(cache) == 0 and cache._computing == {}


def test_nbytes_counts_each_array_once_through_dataclasses_and_containers():
    @dataclass
    class Holder:
        a: np.ndarray
        parts: tuple

    shared = np.zeros(100)                        # 800 bytes
    holder = Holder(shared, (shared, [np.ones(10, dtype=np.float32)], {"x": np.zeros(5)}))
    assert nbytes(holder) == 800 + 40 + 40


def _cached_functions(decorator: str):
    for path in [ROOT / "app.py", *(ROOT / "mha_app").rglob("*.py"), *(ROOT / "pages").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                for dec in node.decorator_list:
                    target = dec.func if isinstance(dec, ast.Call) else dec
                    if ast.unparse(target) == decorator:
                        yield path.relative_to(ROOT).as_posix(), node


def test_nothing_per_user_lives_in_cache_resource():
    """st.cache_resource is shared by every session: its functions take no argument but a model's name, so what
    they return cannot depend on one user's input."""
    found = {(path, fn.name): [a.arg for a in fn.args.args] for path, fn in _cached_functions("st.cache_resource")}
    assert found, "the pretrained model is a cache_resource"
    for (path, name), args in found.items():
        assert args in ([], ["name"]), f"{path}:{name}({', '.join(args)}) would keep per-user data for everyone"


def test_shared_caches_are_keyed_on_settings_only():
    """The results shared by every session are functions of the settings (a Spec, a layer, a head), never of a
    session's state, and each cache has a bound in entries and in bytes."""
    found = list(_cached_functions("shared"))
    assert {fn.name for _, fn in found} >= {"_example", "scale_comparison"}
    for path, fn in found:
        annotations = [ast.unparse(a.annotation) for a in fn.args.args]
        plain = {"Spec", "int", "int | None", "str", "tuple[int, ...]", "Window"}  # Window: four ints or None
        assert set(annotations) <= plain, f"{path}:{fn.name}{annotations}"
        assert "session_state" not in ast.unparse(fn), f"{path}:{fn.name} reads a session's state"
        module = importlib.import_module(path.removesuffix(".py").removesuffix("/__init__").replace("/", "."))
        cache = getattr(module, fn.name).cache
        assert 0 < cache.max_entries <= 64 and 0 < cache.max_bytes <= compute.MAX_EXAMPLE_BYTES, f"{path}:{fn.name}"


def test_every_cache_data_is_bounded_in_entries():
    for path, fn in _cached_functions("st.cache_data"):
        calls = [d for d in fn.decorator_list if isinstance(d, ast.Call)]
        assert any(k.arg == "max_entries" for d in calls for k in d.keywords), f"{path}:{fn.name} has no bound"
