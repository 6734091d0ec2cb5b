"""Figure functions, without Streamlit: the data they carry, shapes, colour ranges and labels."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from scipy.stats import entropy as scipy_entropy

import mha_core as mc
from mha_core import figures
from mha_core.analysis import pooling
from mha_core.analysis.decompose import head_contributions
from screen import PlotlyObjects, as_array, mosaic_outline, mosaic_panels, non_finite_in_figure

F = PlotlyObjects(figures)  # dict figures checked by plotly, read as its objects
TOKENS = ["the", "cat", "sat", "on", "the", "mat"]


def example(h=4, d_model=16, n=6, causal=False, pad=0, seed=0):
    cfg = mc.MHAConfig(d_model, h, causal=causal)
    w = mc.init_weights(cfg, seed=seed)
    x = mc.random_input(n, d_model, seed=seed)
    kpm = mc.padding_mask(n, pad) if pad else None
    return mc.forward(x, w, cfg, key_padding_mask=kpm), w, cfg


def z_of(fig, i=0):
    return as_array(fig.to_plotly_json()["data"][i]["z"])


def cells(fig) -> int:
    return sum(np.asarray(trace.z, dtype=float).size for trace in fig.data if getattr(trace, "z", None) is not None)


def test_token_labels_are_unique_even_for_repeated_words():
    labels = F.token_labels(TOKENS)
    assert len(set(labels)) == len(TOKENS)
    assert labels[0] == "1 the" and labels[4] == "5 the"


def test_token_labels_escape_markup():
    assert "<b>" not in F.token_labels(["<b>"])[0]


def test_pool_keeps_small_matrices_and_averages_large_ones():
    z = np.arange(12.0).reshape(3, 4)
    same, r = pooling.pool(z, 100)
    assert r == 1 and np.array_equal(same, z)
    big = np.random.default_rng(0).random((1000, 1000))
    pooled, r = pooling.pool(big, 250_000)
    assert pooled.size <= 250_000 and r == 2
    np.testing.assert_allclose(pooled[0, 0], big[:2, :2].mean())
    np.testing.assert_allclose(pooled.mean(), big.mean(), rtol=1e-12)


def test_head_grid_has_one_panel_per_head_on_a_fixed_0_to_1_scale():
    tr, _, _ = example(h=4)
    fig = F.head_grid_figure(tr, TOKENS)
    assert len(fig.data) == 4
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == 1
    for i in range(4):
        np.testing.assert_array_equal(np.asarray(fig.data[i].z), tr.weights[i])
    assert list(fig.data[0].x) == F.token_labels(TOKENS)
    assert [a.text for a in fig.layout.annotations][:4] == [f"head {i}" for i in range(1, 5)]


@pytest.mark.parametrize("stage", ["raw", "scaled", "mask", "weights"])
def test_attention_stages(stage):
    tr, _, cfg = example(causal=True)
    fig = F.attention_figure(tr, 1, TOKENS, stage, cfg.softmax_scale)
    z = np.asarray(fig.data[0].z, dtype=float)
    if stage == "raw":
        d = tr.q.shape[-1]
        np.testing.assert_allclose(z, tr.q[1] @ tr.k[1].T, rtol=1e-5, atol=1e-5)
        assert fig.data[0].zmid == 0 and d == cfg.d_k
    elif stage == "scaled":
        later = np.triu(np.ones((6, 6), bool), 1)
        assert np.all(np.isnan(z[later])), "blocked scores are blank, not -inf"
        np.testing.assert_allclose(z[~later], (tr.q[1] @ tr.k[1].T / np.sqrt(cfg.d_k))[~later], rtol=1e-5, atol=1e-5)
    elif stage == "mask":  # blocked pairs blank, kept pairs M = 0, in one grey outside every value scale
        later = np.triu(np.ones((6, 6), bool), 1)
        assert np.all(np.isnan(z[later])) and np.all(z[~later] == 0)
        assert fig.data[0].showscale is False
    else:  # blocked pairs blank, never the colour of weight 0
        later = np.triu(np.ones((6, 6), bool), 1)
        assert np.all(np.isnan(z[later]))
        np.testing.assert_array_equal(z[~later], tr.weights[1][~later])
        assert fig.data[0].zmin == 0 and fig.data[0].zmax == 1
        assert "blocked" in fig.data[0].colorbar.title.text
    assert fig.layout.xaxis.title.text == "key" and fig.layout.yaxis.title.text == "query"
    assert fig.layout.title.text.startswith("Head 2")


def test_scores_without_scaling_are_not_titled_scaled():
    """With `?scale=none` the scores' title says "not scaled", as the page does, not "Scaled scores … × 1"."""
    tr, _, cfg = example()
    assert F.attention_figure(tr, 0, TOKENS, "scaled", 1.0).layout.title.text.startswith(
        "Head 1: Scores Q_i K_iᵀ (not scaled)")
    assert F.stage_title("scaled", 1, cfg.softmax_scale) == "Scaled scores Q_i K_iᵀ × 0.5"  # 1/√d_k, d_k = 16/4 = 4


def test_projection_weights_are_shown_as_in_the_formula_with_head_blocks():
    tr, w, cfg = example(h=4, d_model=16)
    fig = F.projection_weight_figure(w.W_Q, 4, "W_Q")
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), w.W_Q.T)
    assert len(fig.layout.shapes) == 4
    assert [s.x0 + 0.5 for s in fig.layout.shapes] == [0, 4, 8, 12]
    assert fig.data[0].zmid == 0


def test_per_head_small_multiples_share_one_signed_scale():
    tr, _, _ = example(h=4)
    fig = F.per_head_figure(tr.q, TOKENS, "Q")
    assert len(fig.data) == 4
    assert fig.layout.coloraxis.cmid == 0
    assert fig.layout.coloraxis.cmax == pytest.approx(float(np.abs(tr.q).max()))
    np.testing.assert_array_equal(np.asarray(fig.data[2].z), tr.q[2])


def test_query_bar_sums_to_one_and_value_mix_adds_up():
    tr, _, _ = example()
    bar = F.query_weights_figure(tr, 2, 3, TOKENS)
    assert np.asarray(bar.data[0].y).sum() == pytest.approx(1, abs=1e-6)
    mix = np.asarray(F.value_mix_figure(tr, 2, 3, TOKENS).data[0].z, dtype=float)
    np.testing.assert_allclose(mix[:-1].sum(axis=0), mix[-1], atol=1e-6)
    np.testing.assert_allclose(mix[-1], tr.heads[2, 3], atol=1e-7)


def test_entropy_matches_scipy():
    tr, _, _ = example()
    fig = F.entropy_figure(tr, TOKENS)
    z = np.asarray(fig.data[0].z, dtype=float)  # queries as rows, heads as columns
    expected = np.array([[scipy_entropy(row, base=2) for row in head] for head in tr.weights])
    np.testing.assert_allclose(z, expected.T, atol=1e-6)
    assert fig.layout.yaxis.title.text == "query token" and fig.layout.xaxis.title.text == "head"
    assert fig.data[0].zmin == 0 and fig.data[0].zmax == pytest.approx(np.log2(6))


def test_head_blocks_are_named_in_the_heads_colour_and_outlined_off_the_value_scale():
    """Concat, W_Q and W_O: each head's block is outlined in the text colour (a blue or red border on the blue-orange
    scale would read as a value) and named above or beside it in the head's colour."""
    tr, w, _ = example(h=4, d_model=16)
    fig = F.concat_figure(tr, TOKENS)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), tr.concat)
    values = {c.lower() for c in figures.base.LIGHT.diverging}
    for made in (fig, F.projection_weight_figure(w.W_Q, 4, "W_Q"), F.output_weight_figure(w.W_O, 4)):
        borders = {s.line.color for s in made.layout.shapes}
        assert borders == {figures.base.TEXT} and not borders & values
        assert [a.font.color for a in made.layout.annotations] == [F.head_colour(i) for i in range(4)]


def test_key_value_heads_of_grouped_attention_take_no_head_colour():
    """W_K of grouped-query attention: K/V head j is not query head j, so its name is in the text colour."""
    cfg = mc.MHAConfig(16, 4, n_kv_heads=2)
    w = mc.init_weights(cfg, seed=0)
    fig = F.projection_weight_figure(w.W_K, 2, "W_K", group_size=2, kv=True)
    assert [a.text for a in fig.layout.annotations] == ["K/V 1", "K/V 2"]
    assert {a.font.color for a in fig.layout.annotations} == {figures.base.TEXT}


def test_concat_columns_are_named_without_the_multiplication_dot():
    tr, _, _ = example(h=4, d_model=16)
    fig = F.concat_figure(tr, TOKENS)
    labels = list(fig.data[0].x)
    assert labels[:2] == ["head 1, c1", "head 1, c2"] and labels[4] == "head 2, c1"
    assert not any("·" in label for label in labels) and "·" not in fig.layout.xaxis.title.text
    assert fig.layout.xaxis.showticklabels is not False


def test_concat_writes_a_few_short_component_labels_per_head():
    """Under the 128 columns of the default example (h = 8, d_v = 16) the labels "head 1, c1", "head 1, c4", ... ran
    into each other: now c1 and c9 of each head's block, level; the head's number stands over its block, and every
    column keeps its full name for the pointer and the table."""
    tr, _, _ = example(h=8, d_model=128, n=11)
    fig = F.concat_figure(tr, [f"t{i}" for i in range(11)])
    axis = fig.layout.xaxis
    assert list(axis.tickvals) == [f"head {i}, c{c}" for i in range(1, 9) for c in (1, 9)]
    assert list(axis.ticktext) == ["c1", "c9"] * 8 and axis.tickangle == 0
    assert [a.text for a in fig.layout.annotations] == [str(i) for i in range(1, 9)]
    assert list(fig.data[0].x)[:2] == ["head 1, c1", "head 1, c2"] and len(fig.data[0].x) == 128
    pooled, _, _ = example(h=8, d_model=1024, n=50)  # 50 x 1024 cells: shown as means of 2 x 2 blocks
    fig = F.concat_figure(pooled, [f"t{i}" for i in range(50)])
    assert set(fig.layout.xaxis.tickvals) <= set(fig.data[0].x) and len(fig.layout.xaxis.tickvals) == 16


def test_dot_product_by_hand_reads_one_term_per_row():
    """By hand, the d_k = 16 terms of q·k side by side ran into each other (seven-character numbers in cells 40 px
    wide): one row per component c, with the query's number, the key's and their product across it, each printed in
    the worked example's own digits."""
    from mha_core.teaching.worked import fmt, work_cell

    tr, _, cfg = example(h=8, d_model=128, n=11)
    fig = F.dot_product_figure(work_cell(tr, 1, 3, 2, cfg.softmax_scale), "4 on", "3 sat")
    q, k = tr.q[1, 3].astype(np.float64), tr.k[1, 2].astype(np.float64)
    z = z_of(fig)
    np.testing.assert_array_equal(z, np.stack([q, k, q * k], axis=1))
    assert list(fig.data[0].y) == [f"c={c}" for c in range(1, 17)] and len(fig.data[0].x) == 3
    printed = [[re.sub(r"<[^>]+>", "", t) for t in row] for row in fig.data[0].text]  # each in black or white
    assert printed == [[fmt(v) for v in row] for row in z]


def test_output_projection_figures_add_up_to_the_output():
    tr, w, cfg = example(h=4, d_model=16)
    w_fig = F.output_weight_figure(w.W_O, 4)
    np.testing.assert_array_equal(np.asarray(w_fig.data[0].z), w.W_O.T)
    assert len(w_fig.layout.shapes) == 4 and w_fig.layout.shapes[1].y0 == 3.5
    contrib = head_contributions(tr, w)
    fig = F.contributions_figure(contrib, tr.output, TOKENS)
    assert len(fig.data) == 5
    panels = [np.asarray(t.z, dtype=float) for t in fig.data]
    np.testing.assert_allclose(sum(panels[:4]) + w.b_O, panels[4], atol=1e-5)


def test_input_and_output_each_have_their_own_centred_labelled_scale():
    """One shared scale drew the output blank next to X (X reached 4.6, the output 0.84): each has its own now."""
    tr, _, _ = example()
    fig = F.input_output_figure(tr.x, tr.output, TOKENS)
    x_axis, out_axis = fig.layout.coloraxis, fig.layout.coloraxis2
    assert [fig.data[0].coloraxis, fig.data[1].coloraxis] == ["coloraxis", "coloraxis2"]
    assert x_axis.cmid == 0 and x_axis.cmax == pytest.approx(np.abs(tr.x).max()) and x_axis.cmin == -x_axis.cmax
    assert out_axis.cmid == 0 and out_axis.cmax == pytest.approx(np.abs(tr.output).max())
    assert out_axis.cmin == -out_axis.cmax and out_axis.cmax < x_axis.cmax
    assert (x_axis.colorbar.title.text, out_axis.colorbar.title.text) == ("X", "output")
    assert x_axis.colorbar.x < out_axis.colorbar.x  # each bar beside its own panel
    panels = [a.text for a in fig.layout.annotations]
    assert "output MultiHead(X)" in panels
    cross = F.input_output_figure(tr.x, tr.output, TOKENS, cross=True)  # two inputs: X and Y
    assert "output MultiHead(X, Y)" in [a.text for a in cross.layout.annotations]


def test_pipeline_shows_live_shapes():
    fig = F.pipeline_figure(n=11, d_model=128, n_heads=8, d_k=16)
    texts = " ".join(a.text for a in fig.layout.annotations)
    assert "11 × 128" in texts and "8 heads × (11 × 16)" in texts and "11 × 11" in texts
    one = " ".join(a.text for a in F.pipeline_figure(n=11, d_model=128, n_heads=1, d_k=128).layout.annotations)
    assert "1 head × (11 × 128)" in one and "heads" not in one
    assert "+ M) V<sub>i</sub><br>in each head" in texts  # the formula, then the words, not ")times"
    assert fig.layout.title.text == "The pipeline for d_model = 128, h = 8, d_k = 16 (live shapes)"
    assert F.pipeline_figure(n=11, d_model=128, n_heads=8, d_k=16, kv_heads=2).layout.title.text == (
        "The pipeline for d_model = 128, h = 8, h_kv = 2, d_k = 16 (live shapes)")


def test_pipeline_writes_each_projection_and_the_bias_only_when_there_is_one():
    texts = " ".join(a.text for a in F.pipeline_figure(3, 4, 2, 2).layout.annotations)
    for name in "QKV":  # three formulas, not one "Q_i, K_i, V_i = X W_i"
        assert f"{name}<sub>i</sub> = X W<sup>{name}</sup><sub>i</sub>" in texts
    assert "b<sup>" not in texts and "+ M" in texts
    with_bias = " ".join(a.text for a in F.pipeline_figure(3, 4, 2, 2, bias=True).layout.annotations)
    assert "X W<sup>Q</sup><sub>i</sub> + b<sup>Q</sup><sub>i</sub>" in with_bias and "+ b<sup>O</sup>" in with_bias


def test_no_figure_carries_more_than_the_cell_budget_on_long_inputs():
    n, d_model, h = 1100, 64, 4
    tr, w, cfg = example(h=h, d_model=d_model, n=n)
    tokens = [f"t{i}" for i in range(n)]
    figs = [F.head_grid_figure(tr, tokens), F.attention_figure(tr, 0, tokens, "weights"),
            F.entropy_figure(tr, tokens), F.concat_figure(tr, tokens), F.per_head_figure(tr.q, tokens, "Q"),
            F.input_output_figure(tr.x, tr.output, tokens),
            F.contributions_figure(head_contributions(tr, w), tr.output, tokens)]
    for fig in figs:
        assert cells(fig) <= pooling.MAX_CELLS, fig.layout.title.text
    pooled = F.attention_figure(tr, 0, tokens, "weights")
    # 40,000 cells at most (pooling.OVERVIEW_CELLS): 5×5 blocks leave 220² = 48,400, 6×6 leave 184² = 33,856
    assert "averages over 6×6 blocks" in pooled.layout.title.text
    z = np.asarray(pooled.data[0].z, dtype=float)
    assert z.shape == (184, 184)
    np.testing.assert_allclose(z[0, 0], tr.weights[0, :6, :6].mean(), rtol=1e-6)
    np.testing.assert_allclose(z[-1, -1], tr.weights[0, -2:, -2:].mean(), rtol=1e-6)  # a partial edge block


def test_small_heatmaps_print_their_numbers_and_large_ones_do_not():
    from mha_core.teaching.presets import TINY_CONFIG, TINY_TOKENS, tiny_example

    x, w = tiny_example()
    tr = mc.forward(x, w, TINY_CONFIG)
    raw = F.attention_figure(tr, 0, TINY_TOKENS, "raw", TINY_CONFIG.softmax_scale)
    printed = [[re.sub(r"<[^>]+>", "", t) for t in row] for row in raw.data[0].text]  # each in black or white
    np.testing.assert_array_equal(np.array(printed, dtype=float), tr.scores[0] / TINY_CONFIG.softmax_scale)
    assert raw.data[0].texttemplate == "%{text}"
    big, _, _ = example(n=20)
    assert F.attention_figure(big, 0, [f"t{i}" for i in range(20)], "weights").data[0].text is None


def test_head_grid_thins_key_labels_instead_of_dropping_them():
    """The default MiniLM sentence has 13 tokens: its head grid thins the key labels rather than drop those past 12."""
    tokens = ["[CLS]", *"abcdefghijk", "[SEP]"]
    cfg = mc.MHAConfig(16, 8)
    tr = mc.forward(mc.random_input(13, 16), mc.init_weights(cfg), cfg)
    fig = F.head_grid_figure(tr, tokens).to_plotly_json()["layout"]  # 4 columns: heads 5-8 are the bottom row
    bottom = [fig[f"xaxis{i}"] for i in range(5, 9)]
    top = fig["xaxis"]
    assert bottom and all(axis["showticklabels"] and axis["tickmode"] == "auto" for axis in bottom)
    assert top["showticklabels"] is False  # inner panels stay bare, so labels never overlap


def test_pooled_panel_grids_say_they_show_averages():
    n = 1100
    tr, w, _ = example(h=4, d_model=128, n=n)
    tokens = [f"t{i}" for i in range(n)]
    for fig in (F.head_grid_figure(tr, tokens), F.input_output_figure(tr.x, tr.output, tokens),
                F.contributions_figure(head_contributions(tr, w), tr.output, tokens)):
        assert "averages over" in fig.layout.title.text, fig.layout.title.text
        assert "mean of a" in fig.data[0].hovertemplate
    small = F.head_grid_figure(example()[0], TOKENS)
    assert "average" not in small.layout.title.text and "mean of a" not in small.data[0].hovertemplate


def test_entropy_colour_bar_is_in_bits_and_says_which_end_is_focused():
    tr, _, _ = example(n=13)
    fig = F.entropy_figure(tr, [f"t{i}" for i in range(13)])
    bar = fig.data[0].colorbar
    assert bar.title.text == "bits (0 = focused)"
    assert bar.tickvals[0] == 0 and bar.ticktext[0] == "0 focused"
    assert bar.tickvals[-1] == pytest.approx(np.log2(13)) and bar.ticktext[-1] == f"{np.log2(13):.2f} spread"
    assert fig.data[0].zmax == pytest.approx(np.log2(13))


def test_a_focused_row_is_dark_in_the_entropy_map_as_its_weight_is_in_the_weight_map():
    """Dark means focused in both maps: the most focused row's entropy cell and that row's largest weight take the
    dark end of the sequential scale; an evenly spread row's entropy cell the light end (colours recomputed here
    from the scale's stops, as plotly draws a reversed scale)."""
    tr, _, _ = example(n=6)
    weights = tr.weights.copy()
    weights[0, 0] = np.eye(6)[2]          # head 1, query 1: all on key 3 (entropy 0)
    weights[0, 1] = np.full(6, 1 / 6)     # head 1, query 2: even (entropy log2 6)
    focused = dataclasses.replace(tr, weights=weights)
    fig = F.entropy_figure(focused, TOKENS)
    heat = fig.data[0]
    stops = [c for _, c in heat.colorscale]
    drawn = stops[::-1] if heat.reversescale else stops   # plotly: the colour of zmin is the first stop drawn
    z = np.asarray(heat.z, dtype=float)
    darkest, lightest = figures.base.LIGHT.sequential[-1], figures.base.LIGHT.sequential[0]
    assert z[0, 0] == pytest.approx(0, abs=1e-6) and drawn[0] == darkest       # entropy 0: the dark end
    assert z[1, 0] == pytest.approx(np.log2(6)) and drawn[-1] == lightest      # the most spread: the light end
    weight_map = F.attention_figure(focused, 0, TOKENS)
    assert not weight_map.data[0].reversescale and weight_map.data[0].colorscale[-1][1] == darkest  # weight 1


def test_raw_scores_are_the_products_themselves():
    tr, _, cfg = example(h=4, d_model=12)  # d_k = 3: 1/sqrt(3) is not exact, so scores / scale would not be Q K^T
    raw = np.asarray(F.attention_figure(tr, 2, TOKENS, "raw", cfg.softmax_scale).data[0].z, dtype=float)
    np.testing.assert_array_equal(raw, tr.q[2] @ tr.k[2].T)  # Q_i K_i^T itself, not the scaled scores / scale
    scaled = F.attention_figure(tr, 2, TOKENS, "scaled", cfg.softmax_scale)
    assert f"× {cfg.softmax_scale:.4g}" in scaled.layout.title.text
    assert "Q_i K_iᵀ" in scaled.layout.title.text


def test_shared_key_value_heads_are_named_j_in_the_score_titles():
    """Query head i reads key/value head j = ⌈i/g⌉ (trace.raw_scores): its scores are Q_i K_jᵀ, not Q_i K_iᵀ."""
    cfg = mc.MHAConfig(24, 6, n_kv_heads=2)
    tr = mc.forward(mc.random_input(6, 24, seed=1), mc.init_weights(cfg, seed=1), cfg)
    titles = [F.attention_figure(tr, 4, TOKENS, stage, cfg.softmax_scale).layout.title.text
              for stage in ("raw", "scaled")]
    assert all("Q_i K_jᵀ" in t and "K_i" not in t for t in titles), titles


def test_head_split_bars_stack_the_shares_to_one():
    from mha_core.analysis.head_stats import head_summary

    rng = np.random.default_rng(1)
    attn = rng.random((2, 3, 6, 6))
    attn /= attn.sum(-1, keepdims=True)
    tokens = ["[CLS]", "a", "b", "c", "d", "[SEP]"]
    rows = [r for r in head_summary(list(attn), tokens) if r["layer"] == 1]
    fig = F.head_split_figure(rows, "Layer 2")
    assert fig.layout.barmode == "stack" and len(fig.data) == 6
    totals = np.sum([np.asarray(bar.x, dtype=float) for bar in fig.data], axis=0)
    np.testing.assert_allclose(totals, 1, atol=1e-12)
    # The first head's [CLS] bar is its mean weight on key 0 over the word queries 1..4.
    np.testing.assert_allclose(fig.data[0].x[0], attn[1, 0, 1:5, 0].mean(), rtol=1e-12)
    assert list(fig.data[0].y) == ["head 1", "head 2", "head 3"]


def test_model_grid_has_every_layer_and_head_and_outlines_the_selected_one():
    rng = np.random.default_rng(0)
    attn = rng.random((3, 4, 5, 5))
    attn /= attn.sum(-1, keepdims=True)
    fig = F.model_grid_figure(attn, ["[CLS]", "a", "b", "c", "[SEP]"], selected=(1, 2)).to_plotly_json()
    assert len(fig["data"]) == 1  # one mosaic: hundreds of subplots were slow to build and to draw
    panels = mosaic_panels(fig)
    assert sorted(panels) == [(l, h) for l in (1, 2, 3) for h in (1, 2, 3, 4)]
    for (l, h), z in panels.items():
        np.testing.assert_allclose(z, attn[l - 1, h - 1], rtol=1e-6)  # float32
    assert fig["layout"]["coloraxis"]["cmin"] == 0 and fig["layout"]["coloraxis"]["cmax"] == 1
    assert len(fig["layout"]["shapes"]) == 1 and mosaic_outline(fig) == (2, 3)
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    assert "layer 3" in titles and "head 4" in titles
    # Between the panels, empty cells (NaN) keep them apart; hovering there shows nothing.
    z = as_array(fig["data"][0]["z"]).reshape(len(fig["data"][0]["y"]), -1)
    assert np.isnan(z).any() and fig["data"][0]["hoverongaps"] is False


def test_model_grid_groups_the_query_heads_of_one_key_value_head():
    attn = np.full((2, 9, 4, 4), 0.25)
    fig = F.model_grid_figure(attn, list("abcd"), group_size=3).to_plotly_json()
    x = fig["data"][0]["x"]
    start = {h: x.index(f"head {h}, key 1 a") for h in range(1, 10)}
    within, between = start[2] - start[1], start[4] - start[3]
    assert between > within  # a wider gap between the K/V groups
    labels = {a["text"]: a["font"].get("color") for a in fig["layout"]["annotations"]}
    # a group is shown by its gap and its label, not by a head's colour (head 2's orange is head 2's alone)
    assert labels["query heads 4–6: K/V head 2"] is None and labels["head 5"] is None


def test_model_grid_of_270_long_rows_stays_within_the_cell_budget():
    n = 256
    attn = np.random.default_rng(2).random((30, 9, n, n)).astype(np.float32)
    fig = F.model_grid_figure(attn, [f"t{i}" for i in range(n)], group_size=3)
    assert np.asarray(fig.data[0].z).size <= pooling.MAX_CELLS
    assert "averages over" in fig.layout.title.text and "mean weight" in fig.data[0].hovertemplate
    z = mosaic_panels(fig.to_plotly_json())[(1, 1)]
    step = -(-n // z.shape[0])
    np.testing.assert_allclose(z[0, 0], attn[0, 0, :step, :step].mean(), rtol=1e-5)


@pytest.mark.parametrize("metric", ["entropy", "cls", "prev"])
def test_head_summary_figure_shows_one_value_per_layer_and_head(metric):
    values = np.arange(12, dtype=float).reshape(3, 4) / 12
    values[0, 0] = np.nan
    fig = F.head_summary_figure(values, metric)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z, dtype=float)[1:], values[1:])
    assert fig.data[0].text[0][0] == "" and re.sub(r"<[^>]+>", "", fig.data[0].text[2][3]) == f"{values[2, 3]:.2f}"
    assert list(fig.data[0].y) == ["layer 1", "layer 2", "layer 3"]
    # shares on the fixed 0..1; entropy from 0 to the largest, in bits: both on the one sequential scale
    assert fig.data[0].zmax == (1 if metric != "entropy" else np.nanmax(values)) and fig.data[0].zmin == 0
    assert [c for _, c in fig.data[0].colorscale] == [c for _, c in F.WEIGHT_SCALE]
    # entropy turned round (focused at a large weight's end), with a bar that says so; shares as weights
    assert bool(fig.data[0].reversescale) == (metric == "entropy")
    assert fig.data[0].colorbar.title.text == ("bits (0 = focused)" if metric == "entropy"
                                               else "share")


def test_contribution_sizes_are_the_mean_vector_lengths():
    tr, w, _ = example(h=4, d_model=16)
    contrib = head_contributions(tr, w)
    fig = F.contribution_size_figure(contrib)
    expected = [np.mean([np.sqrt((contrib[i, t] ** 2).sum()) for t in range(6)]) for i in range(4)]
    np.testing.assert_allclose(np.asarray(fig.data[0].y, dtype=float), expected, rtol=1e-6)
    assert list(fig.data[0].x) == ["head 1", "head 2", "head 3", "head 4"]
    title = fig.layout.title.text  # was "the mean length of its contribution": which vector, averaged over what
    assert "‖head_i[t] W^O_i‖" in title and "averaged over the 6 tokens t" in title


def test_value_mix_of_many_keys_names_the_heaviest_and_still_adds_up():
    n = 200
    tr, _, _ = example(h=2, d_model=16, n=n)
    fig = F.value_mix_figure(tr, 1, 7, [f"t{i}" for i in range(n)])
    z, rows = np.asarray(fig.data[0].z, dtype=float), list(fig.data[0].y)
    assert len(rows) == F.MIX_KEYS + 1  # 23 keys, the others, the sum
    heaviest = np.argsort(-tr.weights[1, 7])[:F.MIX_KEYS - 1]
    assert rows[:-2] == [f"α_ts v_s {j + 1} t{j}" for j in sorted(heaviest)]  # the formula's names (was "w·v")
    assert rows[-2] == f"α_ts v_s of the other {n - F.MIX_KEYS + 1} keys, added up"
    np.testing.assert_allclose(z[:-1].sum(axis=0), tr.heads[1, 7], atol=1e-6)
    others = np.setdiff1d(np.arange(n), heaviest)
    np.testing.assert_allclose(z[-2], (tr.weights[1, 7, others, None] * tr.v[1, others]).sum(axis=0), atol=1e-6)


def test_value_mix_names_its_query_its_blocked_keys_and_what_a_cell_holds():
    """The value mix names its query in the title, marks a blocked key's row "(blocked)" (not a small contribution),
    titles the colour bar with the cells' own name (α_ts v_s and their sums), says under a grouped head which K/V
    head it reads, and names a trained model's layer."""
    tr, _, _ = example(n=5, causal=True, pad=1)
    fig = F.value_mix_figure(tr, 2, 1, ["a", "<b>", "c", "d", "e"])
    assert fig.layout.title.text.startswith("Head 3, query '&lt;b&gt;' (2): weight α_ts × value v_s")
    assert list(fig.data[0].y[:-1]) == ["α_ts v_s 1 a", "α_ts v_s 2 &lt;b&gt;", "α_ts v_s 3 c (blocked)",
                                        "α_ts v_s 4 d (blocked)", "α_ts v_s 5 e (blocked)"]  # causal; e is padding
    assert fig.data[0].colorbar.title.text == "α_ts v_s and<br>their sums"  # the sum row is no α_ts v_s
    assert fig.data[0].hovertemplate.startswith("%{y}<br>component c of V_i: %{x}<br>= %{z")  # named by its row
    cfg = mc.MHAConfig(16, 4, n_kv_heads=2)
    gqa = mc.forward(mc.random_input(3, 16, seed=1), mc.init_weights(cfg, seed=1), cfg)
    assert F.value_mix_figure(gqa, 2, 0, ["a", "b", "c"], 2).layout.xaxis.title.text == \
        "component c of V_2 (K/V head 2, read by head 3)"
    assert F.value_mix_figure(gqa, 0, 0, ["a", "b", "c"], 2, layer=4).layout.title.text.startswith(
        "Layer 4, head 1, query 'a' (1): ")


@pytest.fixture(scope="module")
def all_blocked():
    """A trace in which every key is blocked for every query (the engine gives such rows zero weights)."""
    cfg = mc.MHAConfig(8, 2, causal=True)
    x = mc.random_input(4, 8, seed=1)
    return mc.forward(x, mc.init_weights(cfg, 1), cfg, key_padding_mask=np.ones(4, dtype=bool)), cfg


def test_figures_of_a_fully_masked_trace_show_no_nan(all_blocked):
    trace, cfg = all_blocked
    tokens = ["a", "b", "c", "d"]
    assert trace.blocked_rows.all() and not trace.weights.any()
    made = [F.head_grid_figure(trace, tokens), F.entropy_figure(trace, tokens),
            F.concat_figure(trace, tokens), F.input_output_figure(trace.x, trace.output, tokens),
            F.per_head_figure(trace.heads, tokens, "head")]
    for head in range(cfg.n_heads):
        made += [F.query_weights_figure(trace, head, 1, tokens),
                 F.value_mix_figure(trace, head, 1, tokens, cfg.group_size)]
        made += [F.attention_figure(trace, head, tokens, stage, cfg.softmax_scale) for stage in pooling.STAGES]
    for fig in made:
        assert not non_finite_in_figure(fig.to_plotly_json()), non_finite_in_figure(fig.to_plotly_json())


def test_the_kv_cache_chart_ticks_are_sizes_with_units_and_its_bars_are_the_tables_bytes():
    """A log axis with only labelled ticks, each a size with its unit at its true byte count (1 MiB = 2**20 B, as
    published.kv_cache_table computes): no bare minor "2" or "5" between decades."""
    from mha_core.figures.lesson import kv_cache_figure
    from mha_core.teaching.published import kv_cache_table

    table = kv_cache_table(4096, 1)
    fig = kv_cache_figure(table, 4096, 1)
    axis = fig.layout.yaxis
    assert axis.type == "log" and axis.tickmode == "array" and axis.minor.ticks == ""
    units = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
    for value, text in zip(axis.tickvals, axis.ticktext, strict=True):
        number, unit = re.fullmatch(r"(1|10|100) (B|KiB|MiB|GiB|TiB)", text).groups()
        assert value == int(number) * units[unit]
    shown = sorted(y for bar in fig.data for y in bar.y)
    assert shown == sorted(r["total"] for r in table)
    assert min(axis.tickvals) <= 3 * shown[0] and max(axis.tickvals) >= shown[-1] / 3  # the ticks span the bars
    published = {(bar.name, x) for bar in fig.data for x, star in zip(bar.x, bar.text, strict=True) if star == "★"}
    assert published == {(r["attention"], r["model"]) for r in table if r["own"]}
    # the chart in words in the units of the table beside it ("48 MiB"), never unitless GiB decimals
    words = figures.Description.of(fig)
    base = next(row for row in words.rows if row[0] == "Transformer base")
    assert base[1] == "48 MiB", base  # 6 layers x 2 (K, V) x 4,096 tokens x 512 numbers x 2 bytes = 48 x 2**20 bytes
    assert all(re.fullmatch(r"\d[\d.,]* (KiB|MiB|GiB|TiB)", cell) for row in words.rows for cell in row[1:]), words.rows
    assert re.search(r"MQA: largest GPT-3 175B \(\d[\d.]* MiB\)", words.alt), words.alt


def test_cells_print_one_precision_and_a_projector_names_every_row():
    """Every cell prints one precision (never "0.000292" beside "3.67"), and on a projector every row is named
    (lesson screens 2 and 3)."""
    from mha_app.frame.present import enlarge

    tokens = [f"t{i}" for i in range(11)]
    tr, _, _ = example(h=8, d_model=128, n=11)
    scores = enlarge(figures.attention_figure(tr, 0, tokens, "scaled", 0.25))
    shown = [re.sub(r"<[^>]+>", "", t) for row in scores["data"][0]["text"] for t in row]
    assert shown and all(re.fullmatch(r"-?\d+\.\d\d", t) and t != "-0.00" for t in shown), shown
    assert scores["layout"]["yaxis"]["dtick"] == 1 and scores["layout"]["yaxis"]["tickmode"] == "linear"
    in_a_row = enlarge(figures.per_head_figure(tr.q, tokens, "Q", cols=8))
    assert in_a_row["layout"]["yaxis"]["dtick"] == 1
    stacked = enlarge(figures.per_head_figure(tr.q, tokens, "Q"))  # two rows of panels: no room for 11 labels each
    assert "dtick" not in stacked["layout"]["yaxis"]


def test_a_projectors_screen_with_text_and_a_formula_still_names_every_row_and_key():
    """Lesson screen 3 at 1280 x 800 keeps every row and every key's name inside the window: under its text and
    formula the scores take at most figure_height("scores") px, every row still named and the keys' names in
    two level lines (no tilted labels taller than the rows); the plane there drops its legend and second title line,
    which the screen's text says."""
    from mha_app.frame.present import enlarge, figure_height
    from mha_core.figures.inside import PlaneSize

    tokens = [f"t{i}" for i in range(11)]
    tr, _, _ = example(h=8, d_model=128, n=11)
    scores = enlarge(figures.attention_figure(tr, 0, tokens, "scaled", 0.25), figure_height("scores"))
    assert scores["layout"]["height"] <= figure_height("scores") < 400
    assert scores["layout"]["yaxis"]["dtick"] == 1 and scores["layout"]["yaxis"]["tickmode"] == "linear"
    assert scores["layout"]["xaxis"]["ticktext"] == [f"{i + 1}<br>t{i}" for i in range(11)]
    assert scores["layout"]["xaxis"]["tickangle"] == 0
    plane = figures.qk_plane_figure(mc.qk_plane(tr, 0), tokens, 3, size=PlaneSize(figure_height("plane"), brief=True))
    assert plane.layout.showlegend is False and "<br>" not in plane.layout.title.text


def _flops(d_model: int, h: int, kv: int | None = None, n: int = 11):
    """The lesson's "Multiply-adds of each step" for n tokens, h heads (sharing kv K/V heads: a third series)."""
    from mha_app.copy.cost import step_names
    from mha_core.figures.lesson import flops_figure

    one, many = mc.cost.attention_flops(n, n, d_model, 1), mc.cost.attention_flops(n, n, d_model, h)
    shared = mc.cost.attention_flops(n, n, d_model, h, kv) if kv else None
    return flops_figure(one, many, d_model, h, step_names(group_size=h // (kv or h)), shared, kv)


def test_the_cost_bars_name_each_series_by_its_heads_and_the_sharing_apart():
    """One head of d_model against h heads of d_k; with shared K/V heads the h heads are said to have their own
    K/V head each, and the sharing is a third series."""
    assert [t.name for t in _flops(32, 4, 2, n=5).data] == [
        "1 head of d_model = 32", "4 heads of d_k = 8, each with its own K/V head", "4 heads sharing 2 K/V heads"]
    assert [t.name for t in _flops(32, 4, 1, n=5).data][2] == "4 heads sharing 1 K/V head"
    assert [t.name for t in _flops(32, 4, n=5).data] == ["1 head of d_model = 32", "4 heads of d_k = 8"]
    assert [t.name for t in _flops(32, 1, n=5).data][1] == "1 head of d_k = 32"


def test_a_projectors_legend_too_wide_for_one_row_has_a_row_for_each_entry_under_the_title():
    """A legend too wide for one row (lesson screen 10 in presentation mode with SmolLM2: the three entries of
    "Multiply-adds of each step") gets a row for each entry, with the top margin to hold them under the title."""
    from mha_app.frame.present import FIGURE_FONT, enlarge

    fig = enlarge(_flops(576, 9, 3))                       # SmolLM2: 9 query heads share 3 K/V heads
    layout, entries = fig["layout"], [t["name"] for t in fig["data"]]
    assert len(entries) == 3 and layout["legend"]["orientation"] == "v"  # a row each, whatever the window's width
    # Room for the title's two lines (22 and 18 px type, about 30 px each with their spacing) and for three legend
    # rows 26.5 px apart as Chromium draws them at 18 px (the screenshot of screen 10), under the title.
    assert FIGURE_FONT == 18 and layout["margin"]["t"] >= 2 * 30 + 3 * 26.5, layout["margin"]
    assert layout["title"]["y"] * layout["height"] >= layout["height"] - layout["margin"]["t"] + 3 * 26.5
    two = enlarge(_flops(128, 8))                          # random weights: two short entries stay in one row
    assert two["layout"]["legend"]["orientation"] == "h" and "y" not in two["layout"]["title"]


def test_the_numbers_beside_the_cost_bars_keep_a_readable_size_for_every_model():
    """The numbers of "Multiply-adds of each step" go beside each bar, since plotly shrinks a number inside a bar to
    the bar's thickness: never shrunk, at least 10 px, each bar thick enough that neighbouring numbers do not touch,
    the axis long enough for the longest's."""
    for fig in (_flops(576, 9, 3), _flops(384, 12), _flops(128, 8), _flops(128, 8, 2)):
        bars = [t for t in fig.data if t.type == "bar"]
        for bar in bars:
            assert bar.textposition == "outside" and bar.constraintext == "none" and bar.textfont.size >= 10
        # The plot's height: the figure's less the title's margin and, below, about 45 px for the axis and 25 px for
        # each legend row (measured on the cost page's screenshot with SmolLM2: about 120 px for three rows).
        rows, plot = len(bars[0].y), fig.layout.height - fig.layout.margin.t - 45 - 25 * len(bars)
        assert plot * (1 - fig.layout.bargap) / (rows * len(bars)) >= bar.textfont.size + 2
        assert fig.layout.xaxis.range[1] >= 1.15 * max(max(b.x) for b in bars)


def test_each_tick_letter_means_one_thing_and_is_in_the_symbol_table():
    """Each tick letter means one thing: d = a dimension of d_model, c = a component within one head (counted again
    in each head's block), each in the notation table."""
    from mha_core.teaching import notation

    tr, w, _ = example(h=4, d_model=16)                               # d_k = 4
    d_model, d_k = 16, 4

    def letters(labels, top):
        """(the letters of the labels, whether every number is from 1 to top): "head 2, c3" -> ("c", 3)."""
        found = [re.fullmatch(r"(?:.+, )?([a-z])(\d+)", str(t)).groups() for t in labels]
        return {letter for letter, _ in found}, all(1 <= int(k) <= top for _, k in found)

    w_q = F.projection_weight_figure(w.W_Q, 4, "W_Q")
    assert letters(w_q.layout.xaxis.ticktext, d_k) == ({"c"}, True)  # components within each head's block
    assert list(w_q.data[0].x[:2]) == ["head 1, c1", "head 1, c2"] and w_q.data[0].x[d_k] == "head 2, c1"
    assert letters(w_q.data[0].y, d_model) == ({"d"}, True)
    w_o = F.output_weight_figure(w.W_O, 4)
    assert letters(w_o.layout.yaxis.ticktext, d_k) == ({"c"}, True)
    assert letters(w_o.data[0].x, d_model) == ({"d"}, True)
    mix = F.value_mix_figure(tr, 0, 0, TOKENS)
    assert letters(mix.data[0].x, d_k) == ({"c"}, True)
    for letter in ("c", "d"):
        assert notation.symbol(letter).meaning
