"""Large matrices made small enough to draw: the mean over blocks of s × s neighbouring cells.

A plain function of arrays: each returns the pooled values together with the block size s it used (s = 1: the
values themselves, exact), so a figure can say what it shows and an app can pool once and reuse the result.
"""

from __future__ import annotations

import numpy as np

from ..attention.trace import Trace

MAX_CELLS = 250_000  # no figure sends more numbers than this to the browser
# What a pooled overview keeps (200 x 200: about the pixels a chart has on a laptop screen). A page shows several
# figures, and a float32 cell is about 5.3 bytes of base64 JSON, so this keeps a page near 1 MB whatever n is.
OVERVIEW_CELLS = 40_000
STAGES = ("raw", "scaled", "mask", "weights")  # the stages of step 2, in order


def block_step(rows: int, cols: int, max_cells: int) -> int:
    """The smallest s such that blocks of s x s cells leave at most max_cells of a (rows, cols) matrix."""
    step = max(1, int(np.sqrt(rows * cols / max_cells)))
    while -(-rows // step) * -(-cols // step) > max_cells:
        step += 1
    return step


def block_mean(z: np.ndarray, step: int) -> np.ndarray:
    """The mean of each step x step block of z (rows, cols), in float64; non-finite cells (NaN, a blocked pair's
    -inf) are left out of their block's mean, and a block without a finite cell is NaN. Edge blocks are smaller: each
    is the mean of the cells it has.

    The blocks are summed as a reshaped (blocks, step, blocks, step) array, accumulating in float64 whatever z's
    float type: a float32 matrix is not first copied to float64 (at n = 2048 that copy took longer than the sums).
    """
    z = np.asarray(z)
    if z.dtype not in (np.float32, np.float64):
        z = z.astype(np.float64)
    rows, cols = z.shape
    blocks_r, blocks_c = -(-rows // step), -(-cols // step)

    def sums(a: np.ndarray) -> np.ndarray:
        padded = np.zeros((blocks_r * step, blocks_c * step), dtype=a.dtype)  # edge blocks padded with 0
        padded[:rows, :cols] = a
        return padded.reshape(blocks_r, step, blocks_c, step).sum(axis=(1, 3), dtype=np.float64)

    finite = np.isfinite(z)
    if finite.all():
        ends_r, ends_c = np.minimum(np.arange(1, blocks_r + 1) * step, rows), np.minimum(
            np.arange(1, blocks_c + 1) * step, cols)
        counts = np.outer(np.diff(ends_r, prepend=0), np.diff(ends_c, prepend=0))  # cells in each block
        return sums(z) / counts
    counts = sums(finite.astype(np.float32))
    with np.errstate(invalid="ignore"):
        return sums(np.where(finite, z, 0)) / np.where(counts > 0, counts, np.nan)


def shown(z: np.ndarray, step: int) -> np.ndarray:
    """What a figure sends: exact values (float64) when nothing is pooled, else float32 block means (only colours
    and a rounded mean on hover, at half the bytes)."""
    return np.asarray(z, dtype=np.float64 if step == 1 else np.float32)


def pool(z: np.ndarray, max_cells: int = MAX_CELLS) -> tuple[np.ndarray, int]:
    """z (rows, cols) averaged over blocks of s x s cells so that at most max_cells remain: (values, s)."""
    step = block_step(*z.shape, max_cells)
    if step == 1:
        return z, 1
    return block_mean(z, step), step


def pool_stack(a: np.ndarray, max_cells: int) -> tuple[np.ndarray, int]:
    """Every matrix of a stack (..., rows, cols), e.g. each head's weights, averaged over blocks of s x s cells (one s
    for all) so that each keeps at most max_cells: (pooled, s). Pooled values are float32 (see `shown`); with
    s = 1, `a` itself (exact)."""
    step = block_step(*a.shape[-2:], max_cells)
    if step == 1:
        return a, 1
    out = np.empty(a.shape[:-2] + tuple(-(-d // step) for d in a.shape[-2:]), dtype=np.float32)
    for index in np.ndindex(a.shape[:-2]):  # one matrix at a time: a few n x m temporaries at most
        out[index] = block_mean(a[index], step)
    return out, step


def grid_budget(panels: int) -> int:
    """The cells each of `panels` small multiples keeps: one overview's worth for the whole figure."""
    return OVERVIEW_CELLS // panels


def finite_or_nan(z: np.ndarray) -> np.ndarray:
    """z in float64 with every infinite entry (a blocked score is -inf) as NaN: a gap in a figure, never a number."""
    z = np.asarray(z, dtype=np.float64)
    return np.where(np.isfinite(z), z, np.nan)


def stage_matrix(trace: Trace, head: int, stage: str) -> np.ndarray:
    """One head's (n, m) matrix at a stage of step 2: raw scores, scaled scores, the mask (1 = blocked), weights."""
    if stage == "raw":
        return trace.raw_scores(head)
    if stage == "scaled":
        return trace.scores[head]
    if stage == "mask":
        mask = trace.mask[head] if trace.mask is not None else np.zeros(trace.scores.shape[1:], bool)
        return mask.astype(float)
    if stage == "weights":
        return trace.weights[head]
    raise ValueError(f"unknown stage {stage!r}; choose from {', '.join(STAGES)}")


def stage_values(trace: Trace, head: int, stage: str) -> np.ndarray:
    """What the figures of a stage show: stage_matrix, with every blocked pair blank (NaN), never a number: the
    scaled scores and the weights there; the mask itself as 0 for a kept pair and blank for a blocked one."""
    z = stage_matrix(trace, head, stage)
    if stage == "mask":
        return np.where(z > 0, np.nan, 0.0)
    if stage in ("scaled", "weights") and trace.mask is not None:
        z = np.where(trace.mask[head], np.nan, z)  # blocked cells show as gaps: softmax ignores them
    return z


def pool_stage(trace: Trace, head: int, stage: str) -> tuple[np.ndarray, int]:
    """One head's matrix at a stage as the attention overview shows it: (values, block size). Blocked pairs are
    blank (NaN), and left out of a block's mean (block_mean skips them: no float64 copy of the matrix first)."""
    z, step = pool(stage_values(trace, head, stage), OVERVIEW_CELLS)
    return shown(finite_or_nan(z) if step == 1 else z, step), step


def pool_heads(weights: np.ndarray, mask: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Every head's (n, m) weights as the head grid's panels show them, blocked pairs (mask (h, n, m), True =
    blocked) blank: (values (h, ., .), block size)."""
    if mask is not None:
        weights = np.where(mask, np.nan, weights)
    return pool_stack(weights, grid_budget(weights.shape[0]))
