"""Weight matrices kept in memory as llama.cpp stores them, and widened to float32 only while a layer runs.

Q4_1 (the format of SmolLM2's layers in its GGUF file) cuts each row of a matrix into blocks of 32 numbers and keeps,
per block, a scale d and a minimum m (float16) and 32 integers q of 4 bits: each weight is d * q + m. Held that way a
weight costs 0.75 bytes here (q packed two to a byte, d and m widened to float32 once at load) instead of 4.
`widen()` gives back the float32 matrix bit for bit as gguf's own `dequantize` computes it: (d * q) + m in float32,
which is also what transformers' GGUF loader (the tests' reference) holds.

The blocks are stored in the order of W^T, (block, position in the block, row), for two reasons measured on 2 cores
(one 1536 x 576 matrix, one thread):
- Widening then runs along whole rows of W^T, where each block's d and m repeat for every row: long contiguous
  passes, 0.41 ms instead of 0.82 ms in W's own order, 32 numbers at a time.
- The widened W^T is C-contiguous, and OpenBLAS computes x @ W^T from it faster than from a C-contiguous W (a
  float32 layer held as gguf gives it): 0.40 ms instead of 0.69 ms at 16 tokens, 2.4 instead of 2.6 at 128.
So `widen()` returns W as a transposed view of the W^T it fills: W.T, the operand of every x @ W.T, is contiguous.
WidenBuffers keeps such arrays for a run, which widens every layer into the same memory, with no new allocation
(nor its page faults) per layer.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .functional import frozen

BLOCK = 32       # numbers per Q4_1 block
BLOCK_BYTES = 20  # d (float16), m (float16), then 16 bytes of packed 4-bit q


@dataclass(frozen=True, eq=False)
class Q4_1Matrix:
    """A (rows, cols) float32 matrix W held as Q4_1 blocks in W^T's order; widen() makes the float32 matrix."""

    shape: tuple[int, int]  # (rows, cols) = (out_features, in_features) once widened
    d: np.ndarray           # (cols / 32, 1, rows) float32: the scale of block b of row r at [b, 0, r]
    m: np.ndarray           # (cols / 32, 1, rows) float32: its minimum
    q: np.ndarray           # (cols / 32, 16, rows) uint8: q_j of that block in the low 4 bits of [b, j, r] and
                            # q_(j+16) in the high 4 bits, as byte j of a block holds them in the file

    @classmethod
    def from_gguf(cls, data: np.ndarray, row_order: np.ndarray | None = None) -> Q4_1Matrix:
        """From a Q4_1 tensor's bytes as gguf reads them, (rows, cols / 32 * 20) uint8; row_order reorders the rows."""
        rows, row_bytes = data.shape
        if row_bytes % BLOCK_BYTES:
            raise ValueError(f"a Q4_1 row holds whole blocks of {BLOCK_BYTES} bytes, not {row_bytes} bytes")
        if row_order is not None:
            data = data[row_order]
        n_blocks = row_bytes // BLOCK_BYTES
        blocks = np.ascontiguousarray(data).reshape(rows, n_blocks, BLOCK_BYTES)  # (rows, blocks, 20)
        blocks = blocks.transpose(1, 0, 2)                                          # (blocks, rows, 20): W^T's order

        def floats(part: slice) -> np.ndarray:  # the float16 d or m of every block, as float32
            half = np.ascontiguousarray(blocks[:, :, part]).view(np.float16)        # (blocks, rows, 1)
            return frozen(np.ascontiguousarray(half.astype(np.float32).transpose(0, 2, 1)))  # (blocks, 1, rows)

        q = np.ascontiguousarray(blocks[:, :, 4:].transpose(0, 2, 1))               # (blocks, 16, rows)
        return cls(shape=(rows, n_blocks * BLOCK), d=floats(slice(0, 2)), m=floats(slice(2, 4)), q=frozen(q))

    @property
    def nbytes(self) -> int:
        return self.d.nbytes + self.m.nbytes + self.q.nbytes

    def widen(self, out: np.ndarray | None = None, scratch: np.ndarray | None = None) -> np.ndarray:
        """The float32 matrix W (rows, cols) as gguf's dequantize: (d * q) + m for every weight.

        W is a view of W^T (cols, rows), which is C-contiguous (see the module docstring). out: a float32 array of at
        least rows * cols numbers to fill, whose view W is then, writable as out is (None: a new array, and W
        read-only); scratch: a uint8 array of at least rows * cols numbers for the 4-bit integers (None: a new one).
        """
        rows, cols = self.shape
        size, shape = rows * cols, (cols // BLOCK, BLOCK, rows)
        q = (np.empty(size, np.uint8) if scratch is None else scratch[:size]).reshape(shape)    # (blocks, 32, rows)
        np.bitwise_and(self.q, 0x0F, out=q[:, :16])                                            # q_0 ... q_15
        np.right_shift(self.q, 4, out=q[:, 16:])                                               # q_16 ... q_31
        wt = (np.empty(size, np.float32) if out is None else out[:size]).reshape(shape)        # (blocks, 32, rows)
        np.copyto(wt, q)                 # exact: small integers
        np.multiply(wt, self.d, out=wt)  # exact too: an 11-bit d times a 4-bit q
        np.add(wt, self.m, out=wt)       # the one rounding, as in gguf
        w = wt.reshape(cols, rows).T     # (rows, cols)
        return frozen(w) if out is None else w

    def widen_with_torch(self, out: np.ndarray, scratch: np.ndarray) -> np.ndarray:
        """widen(out, scratch) with torch's kernels and threads (for the torch backend), the same numbers bit for bit:
        torch.addcmul rounds once, after the exact d * q, as the separate product and sum do."""
        import torch

        rows, cols = self.shape
        size, shape = rows * cols, (cols // BLOCK, BLOCK, rows)
        packed, d, m = self._torch_blocks
        q = torch.from_numpy(scratch[:size]).view(shape)                              # (blocks, 32, rows)
        torch.bitwise_and(packed, 0x0F, out=q[:, :16])
        torch.bitwise_right_shift(packed, 4, out=q[:, 16:])
        wt = torch.from_numpy(out[:size]).view(shape)                                 # (blocks, 32, rows)
        wt.copy_(q)
        torch.addcmul(m, wt, d, out=wt)                                               # m + q * d
        return out[:size].reshape(cols, rows).T                                       # (rows, cols), as widen()

    @functools.cached_property
    def _torch_blocks(self) -> tuple:
        """q, d and m as torch tensors sharing their memory, made on the first torch run (a view costs microseconds,
        and a run widens 210 matrices)."""
        from .common import torch_view

        return torch_view(self.q), torch_view(self.d), torch_view(self.m)


class WidenBuffers:
    """The float32 arrays a run widens its matrices into, by name, and one uint8 scratch for the 4-bit integers: made
    on first use, then reused matrix after matrix (and run after run).

    An array widened into these buffers is valid until the next matrix is widened into the same name.
    """

    def __init__(self) -> None:
        self._out: dict[str, np.ndarray] = {}
        self._scratch = np.empty(0, np.uint8)

    def widen(self, name: str, matrix: Q4_1Matrix, backend: str = "numpy") -> np.ndarray:
        """W (rows, cols) of matrix, widened into this name's buffer: a view of it, writable (the run's own memory,
        which torch then shares rather than copies). backend "torch" widens with torch's kernels
        (widen_with_torch), "numpy" with NumPy's."""
        size = matrix.shape[0] * matrix.shape[1]
        if name not in self._out or self._out[name].size < size:
            self._out[name] = np.empty(size, np.float32)
        if self._scratch.size < size:
            self._scratch = np.empty(size, np.uint8)
        if backend == "torch":
            return matrix.widen_with_torch(self._out[name], self._scratch)
        return matrix.widen(self._out[name], self._scratch)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self._out.values()) + self._scratch.nbytes
