"""Weight matrices kept in memory as llama.cpp stores them, and widened to float32 only while a layer runs.

Q4_1 (the format of SmolLM2's layers in its GGUF file) cuts each row of a matrix into blocks of 32 numbers and keeps,
per block, a scale d and a minimum m (float16) and 32 integers q of 4 bits: each weight is d * q + m. Held that way a
weight costs 0.75 bytes here (q packed two to a byte, d and m widened to float32 once at load) instead of 4.
`widen()` gives back the float32 matrix bit for bit as gguf's own `dequantize` computes it: (d * q) + m in float32,
which is also what transformers' GGUF loader (the tests' reference) holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .functional import frozen

BLOCK = 32       # numbers per Q4_1 block
BLOCK_BYTES = 20  # d (float16), m (float16), then 16 bytes of packed 4-bit q


@dataclass(frozen=True, eq=False)
class Q4_1Matrix:
    """A (rows, cols) float32 matrix held as Q4_1 blocks; widen() makes the float32 matrix."""

    shape: tuple[int, int]  # (out_features, in_features) once widened
    d: np.ndarray           # (blocks, 1) float32: each block's scale
    m: np.ndarray           # (blocks, 1) float32: each block's minimum
    q: np.ndarray           # (blocks, 16) uint8: q_j in the low 4 bits of byte j, q_(j+16) in its high 4 bits

    @classmethod
    def from_gguf(cls, data: np.ndarray, row_order: np.ndarray | None = None) -> Q4_1Matrix:
        """From a Q4_1 tensor's bytes as gguf reads them, (rows, cols / 32 * 20) uint8; row_order reorders the rows."""
        rows, row_bytes = data.shape
        if row_bytes % BLOCK_BYTES:
            raise ValueError(f"a Q4_1 row holds whole blocks of {BLOCK_BYTES} bytes, not {row_bytes} bytes")
        if row_order is not None:
            data = data[row_order]
        blocks = np.ascontiguousarray(data).reshape(-1, BLOCK_BYTES)                     # (blocks, 20)
        d = np.ascontiguousarray(blocks[:, 0:2]).view(np.float16).astype(np.float32)     # (blocks, 1)
        m = np.ascontiguousarray(blocks[:, 2:4]).view(np.float16).astype(np.float32)     # (blocks, 1)
        q = np.ascontiguousarray(blocks[:, 4:])                                           # (blocks, 16)
        return cls(shape=(rows, row_bytes // BLOCK_BYTES * BLOCK), d=frozen(d), m=frozen(m), q=frozen(q))

    @property
    def nbytes(self) -> int:
        return self.d.nbytes + self.m.nbytes + self.q.nbytes

    def widen(self) -> np.ndarray:
        """The float32 matrix (rows, cols), read-only: (d * q) + m for every weight, as gguf's dequantize."""
        q = np.empty((len(self.q), BLOCK), np.uint8)          # (blocks, 32) one 4-bit number per byte
        np.bitwise_and(self.q, 0x0F, out=q[:, :16])
        np.right_shift(self.q, 4, out=q[:, 16:])
        w = q.astype(np.float32)                               # (blocks, 32) exact: small integers
        w *= self.d                                            # exact too: an 11-bit d times a 4-bit q
        w += self.m                                            # the one rounding, as in gguf
        return frozen(w.reshape(self.shape))                  # (rows, cols)
