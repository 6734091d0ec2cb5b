"""Small helpers every layer of the tests may use: the repository root, the trained models (a skip when one is not
installed, a failure under REQUIRE_MODELS=1), runs remembered per input, and Python in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.browser import free_port  # noqa: F401 (one rule for a test server's port)

ROOT = Path(__file__).resolve().parents[1]

# Python code that makes every network call fail, for tests that load a model "offline".
BLOCK_NETWORK = """
import socket
def blocked(*args, **kwargs):
    raise OSError("network access attempted")
socket.socket.connect = socket.socket.connect_ex = blocked
socket.create_connection = socket.getaddrinfo = blocked
"""


def load_pretrained(load):
    """A pretrained model from its loader; a skip when its weights package is not installed, unless the environment
    says REQUIRE_MODELS=1 (as CI does), which makes that a failure."""
    from mha_core.pretrained import ModelNotInstalledError

    try:
        return load()
    except ModelNotInstalledError as exc:
        if os.environ.get("REQUIRE_MODELS") == "1":
            pytest.fail(f"REQUIRE_MODELS=1, but: {exc}")
        pytest.skip(f"{exc} (REQUIRE_MODELS=1 turns this skip into a failure)")


def remembered_runs(model):
    """model.run, remembered per text, backend and head mask (runs are read-only, so sharing them is safe)."""
    cache = {}

    def run(text, backend="numpy", head_mask=None):
        key = (text, backend, None if head_mask is None else head_mask.tobytes())
        if key not in cache:
            cache[key] = model.run(text, backend=backend, head_mask=head_mask)
        return cache[key]

    return run


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    """Run code in a fresh interpreter at the repository root (extra environment variables in env)."""
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env})
