"""A trace as one download: every intermediate array, plus the tokens, in a compressed .npz file."""

from __future__ import annotations

import io

import numpy as np

from ..attention.trace import Trace


def trace_arrays(trace: Trace) -> dict[str, np.ndarray]:
    """Every intermediate by name; the scores twice, under names that say which: `raw_scores` (Q_i K_i^T) and
    `scaled_scores` (times the scale, before the mask). `masked_scores` follows the mask."""
    arrays = trace.arrays()
    scaled = arrays.pop("scores")
    return {**arrays, "raw_scores": trace.raw_scores(), "scaled_scores": scaled}


def trace_npz(trace: Trace, tokens: list[str]) -> bytes:
    """Every intermediate of the trace (see trace_arrays), plus the tokens, in one compressed .npz file."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, tokens=np.array(tokens), **trace_arrays(trace))
    return buffer.getvalue()
