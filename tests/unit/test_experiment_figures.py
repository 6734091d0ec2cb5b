"""The experiment figures without Streamlit: what they carry, their colours and scales, against numbers worked out
here."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy.special import softmax
from scipy.stats import entropy as scipy_entropy

import mha_core as mc
from mha_core import figures
from mha_core.experiments import ablation, plant, scaling
from mha_core.figures import experiments
from screen import PlotlyObjects, as_array

F, X = PlotlyObjects(figures), PlotlyObjects(experiments)  # dict figures checked by plotly, read as its objects
TOKENS = ["the", "cat", "sat", "on", "the", "mat"]


def traced(h=4, d_model=32, n=6, **options):
    cfg = mc.MHAConfig(d_model, h, **options)
    w = mc.init_weights(cfg, seed=1)
    x = mc.random_input(n, d_model, seed=1)
    return x, w, cfg


@pytest.mark.parametrize("h, kv", [(8, 2), (6, 1), (4, 4), (12, 3)])
def test_kv_groups_figure_links_each_query_head_to_its_kv_head(h, kv):
    """Query heads in their head colours; K/V head j and its lines in a grey of the series (alternating), never a
    head's colour: K/V head 2 is not query head 2."""
    fig = X.kv_groups_figure(h, kv)
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    boxes = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(lines) == h and len(boxes) == h + kv
    g = h // kv
    for i, line in enumerate(lines):
        assert line.line.color == F.series_colour((i // g) % 2) == boxes[h + i // g].line.color
        kv_box = boxes[h + i // g]
        assert kv_box.x0 <= line.x1 <= kv_box.x1, "each line ends on its own K/V head"
    assert [b.line.color for b in boxes[:h]] == [F.head_colour(i) for i in range(h)]
    labels = [a.text for a in fig.layout.annotations]
    assert [f"Q{i + 1}" for i in range(h)] == [t for t in labels if t.startswith("Q")]
    assert [f"K/V {j + 1}" for j in range(kv)] == [t for t in labels if t.startswith("K/V")]


def test_kv_groups_figure_is_titled_by_its_kind_of_attention():
    assert X.kv_groups_figure(6, 2).layout.title.text == (
        "h = 6 query heads, h_kv = 2 key/value heads (grouped-query attention: 3 query heads per K/V head)")
    assert X.kv_groups_figure(6, 1).layout.title.text == (
        "h = 6 query heads, h_kv = 1 key/value head (multi-query attention: one K/V head for all)")
    assert X.kv_groups_figure(4, 4).layout.title.text.endswith("(plain multi-head attention: one K/V head each)")


def test_w_k_of_grouped_heads_is_drawn_at_its_real_width_and_named_by_kv_head():
    cfg = mc.MHAConfig(32, 8, n_kv_heads=2)
    w = mc.init_weights(cfg)
    fig = F.projection_weight_figure(w.W_K, 2, "W_K", group_size=4, kv=True)
    assert as_array(fig.to_plotly_json()["data"][0]["z"]).shape == (32, 8)
    assert [a.text for a in fig.layout.annotations] == ["K/V 1", "K/V 2"]
    assert [s.x1 - s.x0 for s in fig.layout.shapes] == [4, 4]   # K/V head j's d_k columns each
    # W_Q's blocks are query heads: named in their own colours, with or without groups (never the group's)
    for q in (F.projection_weight_figure(w.W_Q, 8, "W_Q", group_size=4), F.projection_weight_figure(w.W_Q, 8, "W_Q")):
        assert [a.font.color for a in q.layout.annotations] == [F.head_colour(i) for i in range(8)]


def test_scaling_figures_hold_both_softmaxes_of_the_raw_scores():
    x, w, cfg = traced()
    trace = mc.forward(x, w, cfg)
    cmp = scaling.compare_scaling(trace, cfg, head=2)
    raw = trace.q.astype(np.float64) @ trace.k.astype(np.float64).transpose(0, 2, 1)
    np.testing.assert_allclose(cmp.scaled, softmax(raw[2] / np.sqrt(cfg.d_k), axis=-1), atol=1e-6)
    np.testing.assert_allclose(cmp.unscaled, softmax(raw[2], axis=-1), atol=1e-6)
    np.testing.assert_allclose(cmp.entropy["none"], scipy_entropy(softmax(raw, axis=-1), base=2, axis=-1).mean(1),
                               atol=1e-5)
    np.testing.assert_allclose(cmp.peak["sqrt_dk"], softmax(raw / np.sqrt(cfg.d_k), axis=-1).max(-1).mean(1),
                               atol=1e-6)
    assert cmp.raw_std == pytest.approx(raw.std(), rel=1e-5)
    fig = X.scale_weights_figure(cmp, TOKENS)
    assert fig.layout.title.text.startswith("Head 3:")
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == 1
    np.testing.assert_allclose(as_array(fig.to_plotly_json()["data"][1]["z"]), cmp.unscaled, atol=1e-12)
    bars = X.scale_summary_figure(cmp)
    assert len(bars.data) == 4 and bars.layout.barmode == "group"
    assert bars.layout.title.text == "Every head, with and without 1/√d_k (d_k = 8)"


def test_the_scaled_spread_is_the_product_of_the_query_and_key_sizes_under_the_footnotes_assumptions():
    """Footnote 4 of Vaswani et al. with variances s_q², s_k² in place of 1: independent numbers with mean 0 give
    Q_i K_iᵀ / √d_k a spread of s_q · s_k. The comparison measures s_q and s_k, so the page can set that prediction
    beside the measured spread: one explanation for 0.77 and 0.814 alike, with no threshold."""
    rng = np.random.default_rng(0)
    h, n, d_k, s_q, s_k = 2, 300, 64, 2.0, 0.5
    _, w, cfg = traced()
    trace = mc.forward(mc.random_input(n, 32, seed=1), w, cfg)
    q, k = rng.normal(0, s_q, (h, n, d_k)), rng.normal(0, s_k, (h, n, d_k))
    fake = replace(trace, q=q, k=k, scores=np.zeros((h, n, n)), mask=None, blocked_rows=np.zeros((h, n), bool))
    cmp = scaling.compare_scaling(fake, mc.MHAConfig(h * d_k, h), head=0)
    assert cmp.q_rms == pytest.approx(s_q, rel=0.02) and cmp.k_rms == pytest.approx(s_k, rel=0.02)
    assert cmp.raw_std / np.sqrt(d_k) == pytest.approx(s_q * s_k, rel=0.03)
    # Masked cells take no part: keys no query may see, and queries that see no key, leave the sizes alone.
    mask = np.zeros((h, n, n), bool)
    mask[:, :, -10:] = True                        # the last 10 keys are blocked for every query
    k_big = k.copy()
    k_big[:, -10:] = 100.0
    masked = scaling.compare_scaling(replace(fake, k=k_big, mask=mask), mc.MHAConfig(h * d_k, h), head=0)
    assert masked.k_rms == pytest.approx(np.sqrt(np.square(k[:, :-10]).mean()), rel=1e-9)


def test_scaling_comparison_leaves_masked_keys_out():
    x, w, cfg = traced(causal=True)
    cmp = scaling.compare_scaling(mc.forward(x, w, cfg), cfg, head=1)
    assert (cmp.scaled[np.triu(np.ones((6, 6), bool), 1)] == 0).all()
    assert (cmp.unscaled[np.triu(np.ones((6, 6), bool), 1)] == 0).all()


def test_plant_figure_puts_the_rule_beside_the_result():
    x, w, cfg = traced(d_model=64)
    trace = mc.forward(x, mc.plant_head(w, cfg, 1, "next", 3.0, x), cfg)
    fit = plant.fit(trace, 1, "next", 3.0)
    fig = X.plant_figure(trace, 1, fit, [f"t{i}" for i in range(6)])
    rule, result = (as_array(t["z"]) for t in fig.to_plotly_json()["data"])
    e = np.exp(3.0)
    assert rule[0, 1] == pytest.approx(e / (e + 5)) and rule[5] == pytest.approx(np.full(6, 1 / 6))
    np.testing.assert_allclose(result, trace.weights[1], atol=1e-12)
    assert fig.layout.title.text == "Head 2, planted: the rule and the result"


def test_ablation_figures():
    x, w, cfg = traced()
    trace = mc.forward(x, w, cfg, head_mask=np.array([1.0, 0.0, 1.0, 1.0]))
    change = ablation.output_change(trace, w)
    fig = X.output_change_figure(change, TOKENS, (2,))
    assert fig.layout.title.text == "How far each token's output moved with head 2 switched off"
    assert X.output_change_figure(change, TOKENS, (2, 4)).layout.title.text == \
        "How far each token's output moved with heads 2 and 4 switched off"
    bars = {t.name: np.asarray(t.y) for t in fig.data if t.type == "bar"}
    np.testing.assert_allclose(bars["|change|"], change.distance)
    ranking = X.removal_figure(np.array([0.3, 0.1, 0.2, 0.4]), "t", "y", off=(2,))
    assert list(ranking.data[0].x) == ["head 1", "head 2 (off now)", "head 3", "head 4"]
    assert list(ranking.data[0].marker.color) == [F.head_colour(i) for i in range(4)]
    layers = ablation.LayerChange(relative=np.array([[0, 0], [0.1, 0.3], [0.2, 0.2]]), cosine=np.ones((3, 2)))
    fig = X.layer_change_figure(layers, 1)
    np.testing.assert_allclose(fig.data[0].y, [0, 0.2, 0.2])
    np.testing.assert_allclose(fig.data[1].y, [0, 0.3, 0.2])
    assert "layer 2" in fig.layout.title.text


def test_head_grid_names_the_kv_head_of_each_query_head():
    cfg = mc.MHAConfig(24, 6, n_kv_heads=3)
    trace = mc.forward(mc.random_input(4, 24), mc.init_weights(cfg), cfg)
    fig = F.head_grid_figure(trace, TOKENS[:4], group_size=2)
    titles = [a for a in fig.layout.annotations][:6]
    assert [a.text for a in titles] == [f"head {i + 1} (K/V {i // 2 + 1})" for i in range(6)]
    assert not {a.font.color for a in titles} & set(F.HEAD_COLOURS)  # a group is its row of panels, not a colour


def test_pipeline_says_what_changes():
    plain = " ".join(a.text for a in F.pipeline_figure(5, 32, 4, 8).layout.annotations)
    assert "√d<sub>k</sub>" in plain and "Y" not in plain
    other = " ".join(a.text for a in F.pipeline_figure(5, 32, 4, 8, m=7, scaled=False, cross=True).layout.annotations)
    assert "√d<sub>k</sub>" not in other and "7 × 32" in other
    assert "Q<sub>i</sub> = X W<sup>Q</sup>" in other and "K<sub>i</sub> = Y W<sup>K</sup>" in other
    assert "V<sub>i</sub> = Y W<sup>V</sup>" in other
    assert "Q: 4 × (5 × 8)<br>K, V: 4 × (7 × 8)" in other  # K_i and V_i have a row per key: m = 7, not n = 5


def test_keeping_another_head_changes_only_the_kept_weights():
    """compute.scale_comparison keeps every head's means once per layer and softmaxes only the head on view."""
    cfg = mc.MHAConfig(32, 4, causal=True)
    trace = mc.forward(mc.random_input(7, 32, seed=3), mc.init_weights(cfg, seed=3), cfg)
    other = scaling.with_head(scaling.compare_scaling(trace, cfg, head=0), trace, cfg, 2)
    direct = scaling.compare_scaling(trace, cfg, head=2)
    assert other.head == 2
    for name in ("scaled", "unscaled"):
        np.testing.assert_array_equal(getattr(other, name), getattr(direct, name))
    raw = (trace.q[2] @ trace.k[2].T).astype(np.float64) / np.sqrt(cfg.d_k)
    raw[np.triu_indices(7, 1)] = -np.inf
    expected = np.exp(raw - raw.max(axis=1, keepdims=True))
    np.testing.assert_allclose(other.scaled, expected / expected.sum(axis=1, keepdims=True), rtol=1e-6)
