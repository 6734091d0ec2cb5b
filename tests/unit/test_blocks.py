"""Q4_1 blocks held in memory and widened on use (mha_core/pretrained/blocks.py), against gguf's own dequantize."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mha_core.pretrained.blocks import BLOCK_BYTES, Q4_1Matrix, WidenBuffers

gguf = pytest.importorskip("gguf")


def random_q4_1(rows: int, cols: int, seed: int = 0) -> np.ndarray:
    """Q4_1 bytes (rows, cols / 32 * 20) with every 4-bit value, finite float16 scales and minimums of any size
    (subnormal ones too) and signs: what a file may hold, not only what a quantizer makes."""
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, 256, (rows * cols // 32, BLOCK_BYTES), dtype=np.uint8)
    scales = (rng.standard_normal((len(blocks), 2)) * 10.0 ** rng.integers(-7, 2, (len(blocks), 2)))
    blocks[:, :4] = scales.astype(np.float16).view(np.uint8)  # d and m
    return blocks.reshape(rows, -1)


def test_widen_is_ggufs_dequantize_bit_for_bit():
    data = random_q4_1(48, 96)
    w = Q4_1Matrix.from_gguf(data).widen()
    expected = gguf.dequantize(data, gguf.GGMLQuantizationType.Q4_1)
    assert w.dtype == np.float32 and w.shape == expected.shape == (48, 96)
    np.testing.assert_array_equal(w, expected)
    assert not w.flags.writeable


def test_widening_into_buffers_reuses_their_memory_and_torch_gives_the_same_numbers():
    """Two matrices of one shape widened in turn into one WidenBuffers, with NumPy's kernels and with torch's: each is
    gguf's dequantize bit for bit (subnormal scales too), in the same memory, W.T contiguous for x @ W.T."""
    first, second = random_q4_1(48, 96, seed=4), random_q4_1(48, 96, seed=5)
    buffers = WidenBuffers()
    for backend in ("numpy", "torch"):
        w1 = buffers.widen("W_up", Q4_1Matrix.from_gguf(first), backend)
        np.testing.assert_array_equal(w1, gguf.dequantize(first, gguf.GGMLQuantizationType.Q4_1))
        w2 = buffers.widen("W_up", Q4_1Matrix.from_gguf(second), backend)
        np.testing.assert_array_equal(w2, gguf.dequantize(second, gguf.GGMLQuantizationType.Q4_1))
        assert np.shares_memory(w1, w2) and w2.T.flags.c_contiguous
    assert buffers.nbytes == 48 * 96 * (4 + 1)  # one float32 array, one byte a weight of scratch


def test_a_quantized_matrix_comes_back_within_its_blocks_step():
    """Through gguf's quantizer and back: each weight within half a step (d / 2) of the original."""
    x = np.random.default_rng(1).standard_normal((8, 64)).astype(np.float32)
    data = gguf.quantize(x, gguf.GGMLQuantizationType.Q4_1)
    w = Q4_1Matrix.from_gguf(data).widen()
    step = (x.reshape(-1, 32).max(1) - x.reshape(-1, 32).min(1)) / 15  # (blocks,)
    assert (np.abs(w - x).reshape(-1, 32) <= step[:, None] / 2 + 1e-3).all()


def test_row_order_reorders_the_widened_rows_and_memory_is_a_fifth():
    data = random_q4_1(12, 64, seed=2)
    order = np.random.default_rng(3).permutation(12)
    m = Q4_1Matrix.from_gguf(data, order)
    np.testing.assert_array_equal(m.widen(), gguf.dequantize(data, gguf.GGMLQuantizationType.Q4_1)[order])
    assert m.nbytes == 12 * 64 * 0.75  # 4 bits a weight, and a float32 scale and minimum per 32
    with pytest.raises(ValueError, match="whole blocks"):
        Q4_1Matrix.from_gguf(data[:, :-1])


def test_smollm2_holds_its_layers_in_blocks_and_runs_the_same_as_in_float32(smollm2):
    """The layers in 4-bit blocks take under a fifth of float32; a run, which widens them layer by layer into reused
    buffers (NumPy: the next in a worker thread; torch: with torch's kernels), gives bit for bit the numbers of the
    same model holding every layer widened once in float32 (in the same W^T order: a C-contiguous W changes the order
    of OpenBLAS's sums, and the last bits, of some rows)."""
    n_weights = sum(np.prod(m.shape) for w in smollm2.layer_weights
                    for m in (w.W_Q, w.W_K, w.W_V, w.W_O, w.gate, w.up, w.down))
    assert sum(w.nbytes for w in smollm2.layer_weights) < n_weights * 4 / 5
    held = dataclasses.replace(smollm2, layer_weights=tuple(w.widened() for w in smollm2.layer_weights))
    text = "The keys to the cabinet are on the table."
    for backend in ("numpy", "torch"):
        ours, wide = smollm2.run(text, backend=backend), held.run(text, backend=backend)
        for a, b in zip(ours.hidden_states, wide.hidden_states, strict=True):
            np.testing.assert_array_equal(a, b)
        assert ours.next_tokens == wide.next_tokens
