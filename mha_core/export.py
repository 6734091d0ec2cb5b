"""A trace as one download: every intermediate array, plus the tokens, in a compressed .npz file."""

from __future__ import annotations

import io

import numpy as np

from .trace import Trace


def trace_npz(trace: Trace, tokens: list[str]) -> bytes:
    """Every intermediate of the trace, plus the tokens, in one compressed .npz file."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, tokens=np.array(tokens), **trace.arrays())
    return buffer.getvalue()
