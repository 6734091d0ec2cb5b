"""Figure functions, without Streamlit: the data they carry, shapes, colour ranges and labels."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import entropy as scipy_entropy

import mha_core as mc
from conftest import as_array
from mha_core import figures as F
from mha_core.decompose import head_contributions

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
    same, r, c = F.pool(z, 100)
    assert (r, c) == (1, 1) and np.array_equal(same, z)
    big = np.random.default_rng(0).random((1000, 1000))
    pooled, r, c = F.pool(big, 250_000)
    assert pooled.size <= 250_000 and r == c == 2
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
    elif stage == "mask":
        np.testing.assert_array_equal(z, np.triu(np.ones((6, 6)), 1))
    else:
        np.testing.assert_array_equal(z, tr.weights[1])
        assert fig.data[0].zmin == 0 and fig.data[0].zmax == 1
    assert fig.layout.xaxis.title.text == "key" and fig.layout.yaxis.title.text == "query"
    assert fig.layout.title.text.startswith("Head 2")


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
    z = np.asarray(fig.data[0].z, dtype=float)
    expected = np.array([[scipy_entropy(row, base=2) for row in head] for head in tr.weights])
    np.testing.assert_allclose(z, expected, atol=1e-6)
    assert fig.data[0].zmin == 0 and fig.data[0].zmax == pytest.approx(np.log2(6))


def test_concat_is_coloured_by_head():
    tr, _, _ = example(h=4, d_model=16)
    fig = F.concat_figure(tr, TOKENS)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), tr.concat)
    assert [s.line.color for s in fig.layout.shapes] == [F.head_colour(i) for i in range(4)]


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


def test_input_output_figure_shares_one_centred_scale():
    tr, _, _ = example()
    fig = F.input_output_figure(tr.x, tr.output, TOKENS)
    assert fig.layout.coloraxis.cmid == 0
    assert fig.layout.coloraxis.cmax == pytest.approx(max(np.abs(tr.x).max(), np.abs(tr.output).max()))


def test_pipeline_shows_live_shapes():
    fig = F.pipeline_figure(n=11, d_model=64, n_heads=8, d_k=8)
    texts = " ".join(a.text for a in fig.layout.annotations)
    assert "11 × 64" in texts and "8 heads × (11 × 8)" in texts and "11 × 11" in texts
    assert "d_model = 64" in fig.layout.title.text


def test_no_figure_carries_more_than_the_cell_budget_on_long_inputs():
    n, d_model, h = 1100, 64, 4
    tr, w, cfg = example(h=h, d_model=d_model, n=n)
    tokens = [f"t{i}" for i in range(n)]
    figs = [F.head_grid_figure(tr, tokens), F.attention_figure(tr, 0, tokens, "weights"),
            F.entropy_figure(tr, tokens), F.concat_figure(tr, tokens), F.per_head_figure(tr.q, tokens, "Q"),
            F.input_output_figure(tr.x, tr.output, tokens),
            F.contributions_figure(head_contributions(tr, w), tr.output, tokens)]
    for fig in figs:
        assert cells(fig) <= F.MAX_CELLS, fig.layout.title.text
    pooled = F.attention_figure(tr, 0, tokens, "weights")
    assert "averaged over 3×3 blocks" in pooled.layout.title.text
    z = np.asarray(pooled.data[0].z, dtype=float)
    assert z.shape == (367, 367)
    np.testing.assert_allclose(z[0, 0], tr.weights[0, :3, :3].mean(), rtol=1e-6)
    np.testing.assert_allclose(z[-1, -1], tr.weights[0, -2:, -2:].mean(), rtol=1e-6)  # a partial edge block


def test_small_heatmaps_print_their_numbers_and_large_ones_do_not():
    from mha_core.presets import TINY_CONFIG, TINY_TOKENS, tiny_example

    x, w = tiny_example()
    tr = mc.forward(x, w, TINY_CONFIG)
    raw = F.attention_figure(tr, 0, TINY_TOKENS, "raw", TINY_CONFIG.softmax_scale)
    np.testing.assert_array_equal(np.array(raw.data[0].text, dtype=float), tr.scores[0] / TINY_CONFIG.softmax_scale)
    assert raw.data[0].texttemplate == "%{text}"
    big, _, _ = example(n=20)
    assert F.attention_figure(big, 0, [f"t{i}" for i in range(20)], "weights").data[0].text is None


def test_model_grid_has_every_layer_and_head_and_outlines_the_selected_one():
    rng = np.random.default_rng(0)
    attn = rng.random((3, 4, 5, 5))
    attn /= attn.sum(-1, keepdims=True)
    fig = F.model_grid_figure(attn, ["[CLS]", "a", "b", "c", "[SEP]"], selected=(1, 2))
    assert len(fig.data) == 12
    np.testing.assert_array_equal(np.asarray(fig.data[1 * 4 + 2].z), attn[1, 2])
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == 1
    assert len(fig.layout.shapes) == 1
    titles = [a.text for a in fig.layout.annotations]
    assert "layer 3" in titles and "head 4" in titles


@pytest.mark.parametrize("metric", ["entropy", "cls", "prev"])
def test_head_summary_figure_shows_one_value_per_layer_and_head(metric):
    values = np.arange(12, dtype=float).reshape(3, 4) / 12
    values[0, 0] = np.nan
    fig = F.head_summary_figure(values, metric)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z, dtype=float)[1:], values[1:])
    assert fig.data[0].text[0][0] == "" and fig.data[0].text[2][3] == f"{values[2, 3]:.2f}"
    assert list(fig.data[0].y) == ["layer 1", "layer 2", "layer 3"]
    assert (fig.data[0].zmax == 1) == (metric != "entropy")


def test_contribution_sizes_are_the_mean_vector_lengths():
    tr, w, _ = example(h=4, d_model=16)
    contrib = head_contributions(tr, w)
    fig = F.contribution_size_figure(contrib)
    expected = [np.mean([np.sqrt((contrib[i, t] ** 2).sum()) for t in range(6)]) for i in range(4)]
    np.testing.assert_allclose(np.asarray(fig.data[0].y, dtype=float), expected, rtol=1e-6)
    assert list(fig.data[0].x) == ["head 1", "head 2", "head 3", "head 4"]
