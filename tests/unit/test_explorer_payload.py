"""The attention explorer's payload (mha_app.components.explorer.payload): every head at every stage, the engine's own
numbers where nothing is pooled, block means written out here where it is, the zoom window exact, and bounded in
bytes; with the layer's weights, what each key adds (contribution shares), against sizes of weighted values computed
here."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import mha_core as mc
from mha_app.components.explorer.payload import (
    LAYERS_BUDGET,
    build_frame,
    build_layer,
    build_payload,
    carriers_to_send,
    layer_bytes,
    layers_that_fit,
    read_payload,
)
from references import biased_weights

OVERVIEW_CELLS = 40_000  # the app's overviews: at most this many cells a matrix
ZOOM = 64


def run(n: int, h: int = 4, d_model: int = 32, m: int | None = None, seed: int = 0, **cfg):
    """A trace of random inputs, and its tokens (t1, t2, ...)."""
    config = mc.MHAConfig(d_model, h, **cfg)
    x = mc.random_input(n, d_model, seed=seed)
    kv = None if m is None else mc.random_input(m, d_model, seed=seed + 1)
    trace = mc.forward(x, mc.init_weights(config, seed=seed), config, kv=kv)
    return trace, [f"t{i + 1}" for i in range(n)]


def with_weights(n: int, h: int = 4, d_model: int = 32, m: int | None = None, seed: int = 0, head_mask=None,
                 **cfg):
    """A trace with nonzero biases, its weights and its tokens."""
    config = mc.MHAConfig(d_model, h, **cfg)
    w = biased_weights(config, np.float32, seed=seed)
    x = mc.random_input(n, d_model, seed=seed)
    kv = None if m is None else mc.random_input(m, d_model, seed=seed + 1)
    return mc.forward(x, w, config, kv=kv, head_mask=head_mask), w, [f"t{i + 1}" for i in range(n)]


def direct_shares(trace, w) -> np.ndarray:
    """(h, n, m): ‖α_ts v_s W_O,iᵀ‖ over its row's sum, each vector α_ts v_s W_O,iᵀ built in the output space (head
    i's block of W_O's columns, its K/V head's values, its head-mask factor), then measured."""
    h, n, m = trace.weights.shape
    d_k, group = trace.q.shape[2], h // trace.v.shape[0]
    out = np.zeros((h, n, m))
    for i in range(h):
        block = w.W_O[:, i * d_k:(i + 1) * d_k].astype(np.float64)                   # (d_model, d_k)
        factor = 1.0 if trace.head_mask is None else trace.head_mask[i]
        values = factor * trace.v[i // group].astype(np.float64) @ block.T            # (m, d_model)
        vectors = trace.weights[i].astype(np.float64)[:, :, None] * values[None]      # (n, m, d_model)
        sizes = np.sqrt((vectors ** 2).sum(axis=-1))                                  # (n, m)
        rows = sizes.sum(axis=-1, keepdims=True)
        out[i] = np.divide(sizes, rows, out=np.zeros_like(sizes), where=rows > 0)
    return out


def browser_shares(weights: np.ndarray, sizes: np.ndarray, totals: np.ndarray, gates: np.ndarray) -> np.ndarray:
    """What explorer.js makes of exact weights (h, rows, cols) and the sizes (h, cols), gates (h,) and row sums
    (h, rows) that go with them: gate × weight × size / row sum, 0 where a row adds nothing."""
    made = gates[:, None, None] * weights.astype(np.float64) * sizes[:, None, :]
    t = totals[:, :, None]
    return np.divide(made, t, out=np.zeros_like(made), where=t > 0)


def block_means(z: np.ndarray, s: int) -> np.ndarray:
    """The mean of each s x s block of z, NaN cells left out, written as a padded reshape (edge blocks smaller)."""
    rows, cols = -(-z.shape[0] // s), -(-z.shape[1] // s)
    padded = np.full((rows * s, cols * s), np.nan)
    padded[:z.shape[0], :z.shape[1]] = z
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a block of NaN only has no mean: NaN
        return np.nanmean(padded.reshape(rows, s, cols, s), axis=(1, 3))


def test_short_inputs_carry_every_head_at_every_stage_exactly():
    trace, tokens = run(12, h=4, n_kv_heads=2, causal=True)
    header, arrays = read_payload(build_payload({1: trace}, tokens, scale=0.25))
    assert header["tokens"] == tokens and header["key_tokens"] is None
    assert (header["n"], header["m"], header["heads"], header["group_size"], header["step"]) == (12, 12, 4, 2, 1)
    assert header["layers"] == [1] and header["window"] is None and header["scale"] == 0.25
    assert set(arrays) == {"1/raw", "1/scaled", "1/mask", "1/weights"}  # no grid and no zoom: nothing is pooled
    for name in ("1/raw", "1/scaled", "1/weights"):
        assert arrays[name].shape == (4, 12, 12) and arrays[name].dtype == trace.weights.dtype  # float32, not rounded
    # The engine's own numbers, bit for bit (raw scores: each query head with the key head it reads).
    np.testing.assert_array_equal(arrays["1/weights"], trace.weights)
    np.testing.assert_array_equal(arrays["1/scaled"], trace.scores)
    for i in range(4):
        np.testing.assert_array_equal(arrays["1/raw"][i], trace.q[i] @ trace.k[i // 2].T)
    # Q K^T written out in float64 agrees to float32 precision.
    q, k = trace.q.astype(np.float64), np.repeat(trace.k, 2, axis=0).astype(np.float64)
    np.testing.assert_allclose(arrays["1/raw"], np.einsum("hnd,hmd->hnm", q, k), rtol=1e-4, atol=1e-4)
    # The causal mask, the same in every head, is sent once: 1 above the diagonal.
    assert arrays["1/mask"].shape == (1, 12, 12) and arrays["1/mask"].dtype == np.uint8
    np.testing.assert_array_equal(arrays["1/mask"][0], np.triu(np.ones((12, 12)), 1))


def test_cross_attention_keeps_its_key_tokens_and_no_mask_is_sent_without_one():
    trace, tokens = run(5, m=7)
    keys = [f"k{j}" for j in range(7)]
    header, arrays = read_payload(build_payload({1: trace}, tokens, keys))
    assert header["key_tokens"] == keys and (header["n"], header["m"]) == (5, 7)
    assert arrays["1/weights"].shape == (4, 5, 7) and "1/mask" not in arrays and not header["masked"]


def test_long_inputs_are_block_means_and_the_zoom_window_is_exact():
    n = 301  # 301² cells: blocks of 2 × 2 leave 151² = 22,801 ≤ 40,000, with smaller blocks at the edges
    trace, tokens = run(n, h=2, causal=True)
    window = (249, 301, 9, 73)  # rows 250-301 (cut at the edge), columns 10-73
    header, arrays = read_payload(build_payload({1: trace}, tokens, window=window))
    assert header["step"] == 2 and header["window"] == list(window)
    for i in range(2):
        weights = np.where(trace.mask[i], np.nan, trace.weights[i].astype(np.float64))  # blocked: left out
        np.testing.assert_allclose(arrays["1/weights"][i], block_means(weights, 2), rtol=1e-6)
        scaled = np.where(trace.mask[i], np.nan, trace.scores[i].astype(np.float64))  # blocked: left out
        np.testing.assert_allclose(arrays["1/scaled"][i], block_means(scaled, 2), rtol=1e-5, atol=1e-7)
        assert np.isnan(arrays["1/scaled"][i][0, -1]), "a block that is all blocked has no mean"
        raw = (trace.q[i].astype(np.float64) @ trace.k[i].T.astype(np.float64))
        np.testing.assert_allclose(arrays["1/raw"][i], block_means(raw, 2), rtol=1e-4, atol=1e-4)
    # The share of each block that the causal mask blocks: 1/4 on the diagonal's 2 x 2 blocks, 1 above them.
    share = arrays["1/mask"][0]
    assert arrays["1/mask"].shape == (1, 151, 151)
    assert share[0, 0] == 0.25 and share[0, 1] == 1 and share[1, 0] == 0
    # The grid's panels: the weights again, in larger blocks (each panel 20,000 cells at most).
    s = header["grid_step"]
    assert s == 3 and arrays["1/grid"].shape == (2, 101, 101)
    np.testing.assert_allclose(arrays["1/grid"][1], block_means(np.where(trace.mask[1], np.nan, trace.weights[1]), s),
                               rtol=1e-6)
    # The zoom window: the engine's numbers, cut at the matrix's edge.
    r0, r1, c0, c1 = window
    assert arrays["1/zoom/weights"].shape == (2, 52, 64)
    np.testing.assert_array_equal(arrays["1/zoom/weights"], trace.weights[:, r0:r1, c0:c1])
    np.testing.assert_array_equal(arrays["1/zoom/scaled"], trace.scores[:, r0:r1, c0:c1])
    np.testing.assert_array_equal(arrays["1/zoom/raw"][1], (trace.q[1] @ trace.k[1].T)[r0:r1, c0:c1])
    np.testing.assert_array_equal(arrays["1/zoom/mask"][0], trace.mask[0, r0:r1, c0:c1])


def test_without_pooling_the_zoom_window_is_only_a_place():
    trace, tokens = run(100, h=2)  # 10,000 cells: every one is sent
    header, arrays = read_payload(build_payload({1: trace}, tokens, window=(0, 64, 36, 100)))
    assert header["step"] == 1 and header["window"] == [0, 64, 36, 100]
    assert not [name for name in arrays if "zoom" in name]


def test_a_payload_is_bounded_by_its_cells_whatever_n_is():
    trace, tokens = run(700, h=16, d_model=64, causal=True)
    blob = build_payload({1: trace}, tokens, window=(0, 64, 0, 64))
    header, arrays = read_payload(blob)
    for name, a in arrays.items():
        limit = ZOOM * ZOOM if "zoom" in name else OVERVIEW_CELLS // 16 if "grid" in name else OVERVIEW_CELLS
        assert a[0].size <= limit, name
        assert a.dtype.itemsize <= 4, name  # float32 (or the mask's bytes): never more than the engine's dtype
    # The bytes are the header and the arrays, each padded to 8 bytes, and nothing else.
    header_bytes = len(blob) - sum(-(-a.nbytes // 8) * 8 for a in arrays.values())
    assert 8 < header_bytes < 8 + 8 + 2000 + 20 * 700
    # At most: three stages of 16 heads at 40,000 float32 cells, the mask once, the grid, the zoom window's cells.
    bound = 3 * 16 * OVERVIEW_CELLS * 4 + OVERVIEW_CELLS * 4 + 2 * OVERVIEW_CELLS * 4 + 3 * 16 * ZOOM * ZOOM * 4 \
        + ZOOM * ZOOM + header_bytes
    assert len(blob) <= bound < 9e6  # about 9 MB at most with 16 heads, sent once per example
    assert len(blob) < 3 * trace.weights.nbytes / 4  # far less than the matrices themselves


def test_a_models_layers_all_go_when_they_fit_in_the_budget():
    layers = [run(40, seed=seed)[0] for seed in range(3)]  # three layers of one shape
    tokens = [f"t{i + 1}" for i in range(40)]
    one = layer_bytes(layers[0])
    assert one == 3 * 4 * 40 * 40 * 4  # three stages of 4 heads, float32, no mask
    assert layers_that_fit(layers, 2, budget=3 * one) == [1, 2, 3]
    assert layers_that_fit(layers, 2, budget=3 * one - 1) == [2]
    assert layers_that_fit(layers, 2) == [1, 2, 3] and 3 * one <= LAYERS_BUDGET
    header, arrays = read_payload(build_payload(dict(zip([1, 2, 3], layers, strict=True)), tokens, layer_count=3))
    assert header["layers"] == [1, 2, 3] and header["layer_count"] == 3
    for i, trace in enumerate(layers, start=1):
        np.testing.assert_array_equal(arrays[f"{i}/weights"], trace.weights)
    header, _ = read_payload(build_payload({2: layers[1]}, tokens, layer_count=3))
    assert header["layers"] == [2] and header["layer_count"] == 3


def test_layers_that_do_not_fit_go_each_in_a_carrier_that_the_frame_names():
    layers = [run(40, seed=seed, causal=True)[0] for seed in range(3)]  # d_k 8: 1/√8 is no power of two
    tokens = [f"t{i + 1}" for i in range(40)]
    scale = 8 ** -0.5
    carried = {i: build_layer(trace, i, scale=scale) for i, trace in enumerate(layers, start=1)}
    # A carrier is a pure function of the example and the layer: a rerun sends the same message.
    assert build_layer(layers[1], 2, scale=scale) == carried[2]
    for i, trace in enumerate(layers, start=1):
        header, arrays = read_payload(carried[i])
        assert header["layer"] == i and all(name.startswith(f"{i}/") for name in arrays)
        np.testing.assert_array_equal(arrays[f"{i}/raw"], trace.q @ trace.k.transpose(0, 2, 1))
        np.testing.assert_array_equal(arrays[f"{i}/weights"], trace.weights)
        np.testing.assert_array_equal(arrays[f"{i}/mask"][0], np.triu(np.ones((40, 40)), 1))
        if header["derived"] == []:  # else raw × scale is the engine's scaled scores bit for bit (next test)
            np.testing.assert_array_equal(arrays[f"{i}/scaled"], trace.scores)
    # The frame: no array, the same whichever layer gave it its shapes, and each carrier's id by layer.
    ids = {i: read_payload(blob)[0]["id"] for i, blob in carried.items()}
    assert len(set(ids.values())) == 3, "a hash of the numbers: another layer, another id"
    frame = build_frame(layers[0], tokens, carried=ids, scale=scale, contributions=False)
    header, arrays = read_payload(frame)
    assert arrays == {} and header["layers"] == [] and header["layer_count"] == 3 and header["n"] == 40
    assert header["carried"] == {str(i): name for i, name in ids.items()}
    assert build_frame(layers[2], tokens, carried=ids, scale=scale, contributions=False) == frame
    assert read_payload(build_frame(layers[0], tokens, carried=ids | {3: "another"}, scale=scale))[0]["id"] \
        != header["id"]
    # An id known before the bytes (the app's: a hash of the settings that make them) is the carrier's id.
    assert read_payload(build_layer(layers[0], 1, scale=scale, name="settings-hash"))[0]["id"] == "settings-hash"


def test_the_carriers_sent_are_the_layer_on_view_then_the_nearest_within_the_budget():
    six = dict.fromkeys(range(1, 7), 3_500_000)  # all-MiniLM-L6-v2 at 150 tokens: every layer goes
    assert carriers_to_send(six, 3) == [3, 2, 4, 1, 5, 6]
    thirty = dict.fromkeys(range(1, 31), 1_900_000)  # SmolLM2 at 150 tokens: as many as 24 MiB hold
    assert carriers_to_send(thirty, 1) == list(range(1, 14))
    assert carriers_to_send(thirty, 20) == [20, 19, 21, 18, 22, 17, 23, 16, 24, 15, 25, 14, 26]
    assert carriers_to_send(thirty, 30, budget=3_800_000) == [30, 29]
    assert carriers_to_send(thirty, 5, budget=1) == [5], "the layer on view goes, whatever its size"


def test_a_carrier_leaves_out_the_scaled_scores_only_where_the_browser_makes_them_bit_for_bit():
    for d_model, shown in ((64, False), (32, True)):  # d_k 16: scale 1/4, a power of two; d_k 8: 1/√8
        trace, _ = run(40, d_model=d_model, seed=2)
        scale = (d_model // 4) ** -0.5
        header, arrays = read_payload(build_layer(trace, 1, scale=scale))
        # What explorer.js does: Math.fround(raw × Math.fround(scale)), a float64 product rounded once to float32.
        made = (arrays["1/raw"].astype(np.float64) * np.float64(np.float32(scale))).astype(np.float32)
        if shown:
            assert not np.array_equal(made, trace.scores), "1/√8: the engine scales q first, so some differ"
            assert header["derived"] == [] and np.array_equal(arrays["1/scaled"], trace.scores)
        else:
            assert header["derived"] == ["scaled"] and "1/scaled" not in arrays
            assert np.array_equal(made, trace.scores), "the browser's scaled scores are the engine's"


def test_the_same_numbers_give_the_same_bytes_and_other_numbers_another_id():
    trace, tokens = run(10)
    a, b = build_payload({1: trace}, tokens), build_payload({1: trace}, tokens)
    assert a == b  # a rerun sends the same message, so the browser is sent a reference to its copy
    other, _ = run(10, seed=1)
    assert read_payload(a)[0]["id"] != read_payload(build_payload({1: other}, tokens))[0]["id"]
    assert read_payload(a)[0]["id"] != read_payload(build_payload({1: trace}, ["x"] * 10))[0]["id"]


def test_what_is_not_a_payload_is_refused():
    with pytest.raises(ValueError, match="not an explorer payload"):
        read_payload(b"PK\x03\x04 a zip file")


# --- what each key adds: the contributions stage --------------------------------------------------------------------

def test_contribution_shares_are_made_from_sizes_and_row_sums_sent_in_float64():
    trace, w, tokens = with_weights(9, h=4, n_kv_heads=2, causal=True, head_mask=np.array([1.0, 0.0, 0.5, 1.0]))
    header, arrays = read_payload(build_payload({1: trace}, tokens, weights={1: w}))
    assert [stage["key"] for stage in header["stages"]] == ["raw", "scaled", "mask", "weights", "contributions"]
    assert not next(stage for stage in header["stages"] if stage["key"] == "contributions")["signed"]
    sizes, totals = arrays["1/contributions/sizes"], arrays["1/contributions/totals"]
    assert sizes.shape == (4, 9) and totals.shape == (4, 9) and sizes.dtype == totals.dtype == np.float64
    assert "1/contributions" not in arrays, "nothing pooled: the browser makes every share from the exact weights"
    shares = browser_shares(arrays["1/weights"], sizes, totals, arrays["1/contributions/gates"])
    expected = direct_shares(trace, w)
    np.testing.assert_allclose(shares, expected, rtol=1e-12, atol=1e-15)
    assert (shares[1] == 0).all(), "the switched-off head adds nothing"
    # the switched-off head's sizes are its real ‖v_s W^O_i‖, from K/V head 1's values and head 2's block of W_O,
    # and its gate 0 is sent beside them.
    np.testing.assert_array_equal(arrays["1/contributions/gates"], [1.0, 0.0, 0.5, 1.0])
    block = w.W_O[:, 8:16].astype(np.float64)                                     # head 2's d_k = 8 columns
    np.testing.assert_allclose(sizes[1], np.linalg.norm(trace.v[0].astype(np.float64) @ block.T, axis=-1),
                               rtol=1e-12)
    np.testing.assert_allclose(shares[[0, 2, 3]].sum(axis=-1), 1.0, rtol=1e-12)  # every other row adds up to 1
    np.testing.assert_array_equal(np.triu(shares[0], 1), 0)  # a blocked key adds nothing


def test_cross_attention_sends_a_size_per_key_and_a_sum_per_query():
    trace, w, tokens = with_weights(5, m=7, seed=2)
    _, arrays = read_payload(build_payload({1: trace}, tokens, [f"k{j}" for j in range(7)], weights={1: w}))
    assert arrays["1/contributions/sizes"].shape == (4, 7) and arrays["1/contributions/totals"].shape == (4, 5)
    np.testing.assert_allclose(browser_shares(arrays["1/weights"], arrays["1/contributions/sizes"],
                                              arrays["1/contributions/totals"], arrays["1/contributions/gates"]),
                               direct_shares(trace, w), rtol=1e-12)


def test_pooled_contributions_are_block_means_of_the_shares_and_the_zoom_window_is_made_exact():
    n = 301
    trace, w, tokens = with_weights(n, h=2, causal=True, seed=3)
    window = (249, 301, 9, 73)
    header, arrays = read_payload(build_payload({1: trace}, tokens, window=window, weights={1: w}))
    expected = direct_shares(trace, w)                                                   # (2, 301, 301)
    step, grid_step = header["step"], header["grid_step"]
    assert (step, grid_step) == (2, 3)
    assert arrays["1/contributions"].shape == (2, 151, 151) and arrays["1/contributions"].dtype == np.float32
    assert arrays["1/grid/contributions"].shape == (2, 101, 101)
    for i in range(2):
        np.testing.assert_allclose(arrays["1/contributions"][i], block_means(expected[i], step), rtol=1e-5,
                                   atol=1e-8)
        np.testing.assert_allclose(arrays["1/grid/contributions"][i], block_means(expected[i], grid_step),
                                   rtol=1e-5, atol=1e-8)
    # The zoom window: its exact weights, with the sizes of its keys and the sums of its queries' whole rows.
    r0, r1, c0, c1 = window
    made = browser_shares(arrays["1/zoom/weights"], arrays["1/contributions/sizes"][:, c0:c1],
                          arrays["1/contributions/totals"][:, r0:r1], arrays["1/contributions/gates"])
    np.testing.assert_allclose(made, expected[:, r0:r1, c0:c1], rtol=1e-12, atol=1e-15)


def test_contributions_count_in_a_layers_bytes():
    trace, w, _ = with_weights(40, h=4)
    # three stages of 4 heads in float32, then a size per key, a sum per query and a gate, in float64, for each head
    assert layer_bytes(trace, weights=w) == 3 * 4 * 40 * 40 * 4 + 2 * 4 * 40 * 8 + 4 * 8
    assert layers_that_fit([trace] * 3, 1, budget=3 * layer_bytes(trace, weights=w) - 1, weights=[w] * 3) == [1]
    assert layers_that_fit([trace] * 3, 1, budget=3 * layer_bytes(trace), weights=None) == [1, 2, 3]


def test_a_payload_with_contributions_stays_bounded():
    trace, w, tokens = with_weights(700, h=16, d_model=64, causal=True)
    blob = build_payload({1: trace}, tokens, window=(0, 64, 0, 64), weights={1: w})
    _, arrays = read_payload(blob)
    cells = {name: a[0].size for name, a in arrays.items() if a.ndim == 3}
    assert cells["1/contributions"] <= OVERVIEW_CELLS and cells["1/grid/contributions"] <= OVERVIEW_CELLS // 16
    # Four float32 stages of 16 heads at 40,000 cells (the mask once), the grids of weights and of shares (and the
    # grid's mask), the zoom window, a size and a sum per token and head, and the header: about 12 MB at most, sent
    # once per example (9 MB without contributions, test_a_payload_is_bounded_by_its_cells_whatever_n_is).
    bound = (4 * 16 * OVERVIEW_CELLS * 4 + OVERVIEW_CELLS * 4 + 3 * OVERVIEW_CELLS * 4 + 3 * 16 * ZOOM * ZOOM * 4
             + ZOOM * ZOOM + 16 * 2 * 700 * 8 + 8 + 8 + 2000 + 20 * 700)
    assert len(blob) <= bound < 12.5e6


def test_the_weights_title_writes_its_formula_out():
    """The weights title writes the formula out, with M where there is a mask."""
    def title(**cfg):
        trace, tokens = run(5, **cfg)
        header, _ = read_payload(build_payload({1: trace}, tokens))
        return next(s["title"] for s in header["stages"] if s["key"] == "weights")

    assert title() == "Attention weights α_ts = softmax_s(z_ts)"
    assert title(causal=True) == "Attention weights α_ts = softmax_s(z_ts + M_ts)"


def test_the_mask_title_says_what_m_holds_and_leaves_the_drawing_to_the_explorer():
    """The mask title says what M holds; how a pair is drawn (open white, blocked hatched) is the explorer's
    subtitle and legend."""
    trace, tokens = run(5, causal=True)
    header, _ = read_payload(build_payload({1: trace}, tokens))
    title = next(s["title"] for s in header["stages"] if s["key"] == "mask")
    assert title == "Mask M: 0 where a pair is open, −∞ where it is blocked"


def test_without_scaling_the_scores_button_says_not_scaled():
    """With `scale=none` the scores' button says "not scaled", as its title does."""
    cfg = mc.MHAConfig(16, 4, scale=1.0)
    x = mc.random_input(5, 16, seed=0)
    trace = mc.forward(x, mc.init_weights(cfg, seed=0), cfg)
    np.testing.assert_allclose(trace.scores, np.einsum("hnd,hmd->hnm", trace.q, trace.k), rtol=1e-5)  # not scaled
    header, _ = read_payload(build_payload({1: trace}, list("abcde"), scale=1.0))
    stage = next(s for s in header["stages"] if s["key"] == "scaled")
    assert stage["label"] == "scores (not scaled)" and "(not scaled)" in stage["title"]


def test_a_saved_page_holds_the_explorer_its_bytes_and_the_view_and_no_user_markup():
    """standalone_page: the payload and carriers come back byte for byte from the page, the code ends in explorer.js
    itself, and no text (a token, the title) can close a script or add an element."""
    import base64
    import html.parser
    import json
    from importlib import resources

    from mha_app.components.explorer.standalone import standalone_page

    trace, _ = run(5)
    tokens = ["</script><script>alert(1)</script>", "<b>", "&amp;", "\u2028", "t5"]
    frame = build_frame(trace, tokens, carried={1: "a", 2: "b"})
    carriers = [build_layer(trace, 1, name="a"), build_layer(trace, 2, name="b")]
    view = {"layer": 2, "head": 3, "query": 4, "stage": "raw"}
    page = standalone_page(frame, carriers, view, "Title <i>x</i>", ["About </p><img src=x>"])

    class Parser(html.parser.HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.scripts, self.open = [], [], None

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)
            self.open = dict(attrs) if tag == "script" else None

        def handle_endtag(self, tag):
            self.open = None

        def handle_data(self, data):
            if self.open is not None:
                self.scripts.append((self.open, data))

    parser = Parser()
    parser.feed(page)
    assert "img" not in parser.tags and "i" not in parser.tags and parser.tags.count("script") == 6
    scripts = {attrs.get("id") or attrs.get("class"): data for attrs, data in parser.scripts}
    assert base64.b64decode(scripts["mha-payload"]) == frame
    assert [base64.b64decode(data) for attrs, data in parser.scripts if attrs.get("class") == "mha-layer"] == carriers
    explorer_js = resources.files("mha_app.components.explorer").joinpath("explorer.js").read_text(encoding="utf-8")
    assert json.loads(scripts["mha-code"]).endswith(explorer_js)
    assert json.loads(scripts["mha-view"]) == {"view": view, "seq": 0}
    assert "<title>Title &lt;i&gt;x&lt;/i&gt;</title>" in page
    assert "https:" not in page and "http:" not in page.replace("http://www.w3.org/2000/svg", "")  # nothing fetched


def test_a_saved_page_says_which_layers_it_holds_and_how_tokens_are_spelled():
    import functools

    from mha_app.components.explorer import web_page

    trace, tokens = run(5)
    view = {"layer": 5, "head": 1, "query": 1, "stage": "weights"}
    frame = build_frame(trace, tokens, carried={layer: str(layer) for layer in range(1, 31)})
    nearest = [(layer, functools.partial(build_layer, trace, layer, name=str(layer))) for layer in (5, 4, 6, 3, 7)]
    page = web_page(frame, nearest, view, "A model, 30 layers", ["Ġ is a space."]).decode()
    assert "choose a head, a query, a stage or a layer. This file holds layers 3 to 7 of 30;" in page
    assert "Ġ is a space." in page
    every = web_page(build_payload({1: trace, 2: trace}, tokens, layer_count=2), [], view, "Two layers").decode()
    assert "This file holds all 2 layers." in every
    ablated = web_page(build_payload({3: trace}, tokens, layer_count=6), [], view, "Heads off in layer 3").decode()
    assert "choose a head, a query or a stage. This file holds layer 3 of 6;" in ablated  # heads off: that layer
    one = web_page(build_payload({1: trace}, tokens), [], view, "Random weights").decode()
    assert "choose a head, a query or a stage.</p>" in one


def test_a_saved_page_carries_what_the_app_says_about_its_example():
    from mha_app.components.explorer import saved_page
    from mha_app.state.example import build_example
    from mha_app.state.settings import Settings

    settings = Settings.of(plant="previous", causal=True, pad=2, ablate=(2, 5), text="The cat sat on the mat.")
    ex = build_example(settings.spec)
    data = build_payload({1: ex.trace}, ex.tokens)
    page = saved_page(settings, ex, data, [], {"layer": 1, "head": 1, "query": 1, "stage": "weights"}).decode()
    for said in ("Switched off: heads 2 and 5. Their attention weights are computed as usual here; Step 3 zeroes",
                 "Head 1 is planted: each token attends to the token before it.", "A causal mask is on",
                 "Here the last 2 tokens of the sentence (“mat”, “.”) stand in for that filler",
                 "Random weights: every number and shape is exact, but the patterns mean nothing (but head 1, "
                 "planted by hand)"):
        assert said in page, said
    about = page.split('<div id="explorer">')[0]  # the paragraphs above the explorer
    assert "**" not in about and ":material/" not in about
    random = Settings.of(input="random", n=5)
    page = saved_page(random, ex := build_example(random.spec), build_payload({1: ex.trace}, ex.tokens), [],
                      {"layer": 1, "head": 1, "query": 1, "stage": "weights"}).decode()
    assert "t1, t2, … are only names for its rows" in page
