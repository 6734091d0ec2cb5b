"""Inside one head: the query-key plane (mc.qk_plane), what each key really adds (mc.contributions) and attention
rollout (mc.rollout), each checked against a computation written differently: plain loops over heads, queries and
keys, explicit matrix products, the layer's own output, and the geometry of an orthogonal projection.

The plane's claim, in a form that can fail (see mha_core/query_key_plane.py): `explained` is the share of the points'
spread the plane keeps, which is the top two eigenvalues of their scatter over its trace; the lifted points' dot
products miss the true scores, beyond one number per query row, by exactly (a_t − P a_t) · (r_s − r_s') between two
keys, where r is a point's part outside the plane; so a pair of keys whose scores differ by more than
|a_t − P a_t| · |r_s − r_s'| keeps its order, and at explained = 1 every order is kept. No stronger promise (such as
"a share `explained` of the pairs keeps its order") holds for every head, so none is tested.
"""

from __future__ import annotations

import functools
import itertools
from types import SimpleNamespace

import numpy as np
import pytest

import mha_core as mc
from mha_core import figures as figure_functions
from mha_core.analysis import contributions as weighted_norms
from mha_core.analysis import head_stats
from mha_core.figures import inside
from references import biased_weights
from screen import PlotlyObjects

figures, inside_figures = PlotlyObjects(figure_functions), PlotlyObjects(inside)  # dict figures as plotly objects
RNG = np.random.default_rng(21)


def make(cfg: mc.MHAConfig, n: int, m: int | None = None, seed: int = 0, **kwargs):
    """(trace, weights) of one layer with nonzero biases, in float64; m keys from a second sequence when given."""
    w = biased_weights(cfg, np.float64, seed=seed)
    rng = np.random.default_rng(seed + 7)
    x = rng.normal(size=(n, cfg.d_model))
    kv = None if m is None else rng.normal(size=(m, cfg.d_model))
    return mc.forward(x, w, cfg, kv=kv, **kwargs), w


def blocked_first_row(n: int, m: int) -> np.ndarray:
    mask = np.zeros((n, m), bool)
    mask[0] = True  # query 0 sees no key at all: its weights are all 0
    mask[2, 1] = True
    return mask


CASES = {
    "self-attention": lambda: make(mc.MHAConfig(24, 4), 5),
    "cross-attention m != n": lambda: make(mc.MHAConfig(24, 4), 4, 7, seed=1),
    "grouped-query, causal": lambda: make(mc.MHAConfig(24, 6, n_kv_heads=2, causal=True), 6, seed=2),
    "masks, a fully blocked row": lambda: make(mc.MHAConfig(16, 2), 5, 6, seed=3,
                                               key_padding_mask=mc.padding_mask(6, 1),
                                               attn_mask=blocked_first_row(5, 6)),
    "rope, grouped-query, causal": lambda: make(mc.MHAConfig(32, 4, n_kv_heads=2, bias=False, causal=True,
                                                             rope_theta=10000.0), 7, seed=4),
    "head mask": lambda: make(mc.MHAConfig(24, 4), 5, seed=5, head_mask=np.array([1.0, 0.0, 0.5, -2.0])),
}


@pytest.fixture(params=list(CASES), scope="module")
def case(request):
    return CASES[request.param]()


# --- mc.contributions ------------------------------------------------------------------------------------------

def test_contributions_equal_the_size_of_each_weighted_transformed_value_computed_pair_by_pair(case):
    trace, w = case
    h, n, m = trace.weights.shape
    d_k = trace.q.shape[2]
    group = h // trace.v.shape[0]
    expected = np.zeros((h, n, m))
    for i in range(h):
        block = w.W_O[:, i * d_k:(i + 1) * d_k]                  # head i's d_k columns of W_O: (d_model, d_k)
        factor = 1.0 if trace.head_mask is None else trace.head_mask[i]
        for t in range(n):
            for s in range(m):
                vector = trace.weights[i, t, s] * factor * (block @ trace.v[i // group, s])
                expected[i, t, s] = np.sqrt(np.sum(vector * vector))
    got = mc.contributions(trace, w)
    assert got.shape == (h, n, m)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def test_weighted_transformed_values_summed_over_keys_and_heads_plus_the_bias_are_the_output(case):
    trace, w = case
    f = weighted_norms.transformed_values(trace, w)                 # (h, m, d_model)
    total = np.einsum("its,isd->td", trace.weights, f)              # sum over heads i and keys s: (n, d_model)
    if w.b_O is not None:
        total = total + w.b_O
    np.testing.assert_allclose(total, trace.output, rtol=1e-10, atol=1e-12)


def test_a_switched_off_head_keeps_its_values_and_only_its_contributions_are_0():
    """Step 3 multiplies a switched-off head's output by 0, not its values: value_sizes keeps its real ‖v_s W^O_i‖
    and only its contributions are 0."""
    trace, w = CASES["head mask"]()                                 # head 2 (index 1) off, head 4 gated by -2
    d_k = trace.q.shape[2]
    sizes = weighted_norms.value_sizes(trace, w)                    # (h, m)
    for i in range(4):
        block = w.W_O[:, i * d_k:(i + 1) * d_k]                     # (d_model, d_k)
        expected = [np.sqrt(np.sum((block @ trace.v[i, s]) ** 2)) for s in range(trace.v.shape[1])]
        np.testing.assert_allclose(sizes[i], expected, rtol=1e-12)
    assert (sizes[1] > 0).all(), "the switched-off head's values are computed as usual"
    np.testing.assert_array_equal(weighted_norms.head_gates(trace), [1.0, 0.0, 0.5, -2.0])
    assert (mc.contributions(trace, w)[1] == 0).all()


def test_contributions_refuse_weights_of_another_layer():
    trace, _ = make(mc.MHAConfig(24, 4), 3)
    _, other = make(mc.MHAConfig(32, 4), 3)
    with pytest.raises(mc.ConfigError, match="do not belong to this trace"):
        mc.contributions(trace, other)


def test_contribution_shares_are_rows_that_sum_to_one_or_stay_zero():
    trace, w = CASES["masks, a fully blocked row"]()
    shares = weighted_norms.contribution_shares(mc.contributions(trace, w))
    sums = shares.sum(axis=-1)                                      # (h, n)
    np.testing.assert_allclose(sums[:, 1:], 1.0, rtol=1e-12)
    assert (shares[:, 0] == 0).all()                                # the fully blocked query adds nothing


def _encoder_run(x: np.ndarray, cfg: mc.MHAConfig, w: mc.MHAWeights, tokens: list[str]):
    return SimpleNamespace(layers=[mc.forward(x, w, cfg)], tokens=tokens)


def test_equal_sized_values_make_contribution_shares_the_weights():
    # W_V = 0: every value is b_V, so every key's transformed value has the same size and shares are the weights.
    cfg = mc.MHAConfig(16, 2)
    w = biased_weights(cfg, np.float64, seed=3)
    w = mc.MHAWeights(**{**w.arrays(), "W_V": np.zeros_like(w.W_V)})
    tokens = ["[CLS]", "a", "b", "c", "[SEP]"]
    run = _encoder_run(RNG.normal(size=(5, 16)), cfg, w, tokens)
    shares = weighted_norms.contribution_shares(mc.contributions(run.layers[0], w))
    np.testing.assert_allclose(shares, run.layers[0].weights, rtol=1e-12)
    by_contribution = weighted_norms.contribution_summary(run, [w])
    by_weight = head_stats.head_summary(run)
    for a, b in zip(by_contribution, by_weight, strict=True):
        assert a == pytest.approx(b, rel=1e-10)


def test_a_key_with_a_zero_value_gets_weight_but_adds_nothing():
    # No biases and a zero input row for [CLS]: its value is 0, whatever weight it gets (Kobayashi et al.'s point).
    cfg = mc.MHAConfig(16, 2, bias=False)
    w = mc.init_weights(cfg, seed=4, dtype=np.float64)
    x = RNG.normal(size=(5, 16))
    x[0] = 0.0
    tokens = ["[CLS]", "a", "b", "c", "[SEP]"]
    run = _encoder_run(x, cfg, w, tokens)
    weight = weighted_norms.parked_share(head_stats.head_summary(run))
    contribution = weighted_norms.parked_share(weighted_norms.contribution_summary(run, [w]))
    cls = head_stats.summary_array(weighted_norms.contribution_summary(run, [w]), "cls")
    assert (cls == 0).all()
    assert (weight > contribution).all()


# --- mc.rollout ------------------------------------------------------------------------------------------------

def layers_of(cfg: mc.MHAConfig, n: int, count: int, head_masks=None):
    traces = []
    for l in range(count):
        trace, _ = make(cfg, n, seed=10 + l, head_mask=None if head_masks is None else head_masks[l])
        traces.append(trace)
    return traces


@pytest.mark.parametrize("residual", [0.0, 0.5, 0.8, 1.0])
@pytest.mark.parametrize("causal", [False, True])
def test_rollout_is_the_product_of_each_layers_mixing(residual, causal):
    traces = layers_of(mc.MHAConfig(16, 4, causal=causal), 6, 4)
    mixing = [residual * np.eye(6) + (1 - residual) * sum(t.weights[i] for i in range(4)) / 4 for t in traces]
    got = mc.rollout(SimpleNamespace(layers=traces), residual=residual)
    assert got.shape == (4, 6, 6)
    for l in range(4):
        # Ã_l ... Ã_0, the newest layer on the left, multiplied out one matrix at a time.
        expected = functools.reduce(np.matmul, mixing[l::-1]) if l else mixing[0]
        np.testing.assert_allclose(got[l], expected, rtol=1e-12, atol=1e-15)


def test_rollout_counts_heads_by_their_head_mask_factor():
    masks = [np.array([1.0, 0.0, 1.0, 0.0]), np.zeros(4)]   # layer 0: heads 1 and 3 on; layer 1: every head off
    traces = layers_of(mc.MHAConfig(16, 4), 5, 2, masks)
    on = (traces[0].weights[0] + traces[0].weights[2]) / 2
    expected_0 = 0.5 * np.eye(5) + 0.5 * on
    got = mc.rollout(traces)
    np.testing.assert_allclose(got[0], expected_0, rtol=1e-12)
    np.testing.assert_allclose(got[1], got[0], rtol=1e-12)  # a layer whose heads are all off moves nothing


@pytest.mark.parametrize("residual", [-0.1, 1.5, True, "0.5", float("nan")])
def test_rollout_refuses_a_residual_share_outside_0_to_1(residual):
    with pytest.raises(mc.ConfigError, match="from 0 to 1"):
        mc.rollout(layers_of(mc.MHAConfig(8, 2), 3, 1), residual=residual)


def test_rollout_refuses_cross_attention_and_no_layers():
    trace, _ = make(mc.MHAConfig(8, 2), 3, 4)
    with pytest.raises(mc.ConfigError, match="self-attention"):
        mc.rollout([trace])
    with pytest.raises(mc.ConfigError, match="no layers"):
        mc.rollout([])


# --- mc.qk_plane ----------------------------------------------------------------------------------------------

def lifted(plane: mc.QKPlane) -> tuple[np.ndarray, np.ndarray]:
    """The plane's queries and keys mapped back into the head's space: (n, d_k), (m, d_k)."""
    return plane.lift(plane.queries), plane.lift(plane.keys)


def heads_of(trace) -> range:
    return range(trace.q.shape[0])


def test_plane_points_are_the_heads_queries_and_keys_up_to_changes_softmax_ignores(case):
    trace, _ = case
    for head in heads_of(trace):
        plane = mc.qk_plane(trace, head)
        assert plane.kv_head == head // (trace.q.shape[0] // trace.k.shape[0])
        gap = plane.query_points @ plane.key_points.T - trace.scores[head]  # (n, m): one number per row
        np.testing.assert_allclose(gap - gap[:, :1], 0.0, atol=1e-10)


def test_explained_is_the_share_of_the_spread_the_plane_keeps_and_no_plane_keeps_more(case):
    trace, _ = case
    for head in heads_of(trace):
        plane = mc.qk_plane(trace, head)
        points = np.vstack([plane.query_points, plane.key_points])
        coordinates = np.vstack([plane.queries, plane.keys])
        centred = points - plane.centre
        np.testing.assert_allclose(centred.mean(axis=0), 0.0, atol=1e-12)   # the centre is the points' centre
        np.testing.assert_allclose(plane.axes @ plane.axes.T, np.eye(2), atol=1e-12)
        outside = points - plane.lift(coordinates)                         # each point's part outside the plane
        np.testing.assert_allclose(outside @ plane.axes.T, 0.0, atol=1e-10)  # an orthogonal projection
        total = np.square(centred).sum()
        assert np.square(outside).sum() == pytest.approx((1 - plane.explained) * total, rel=1e-9, abs=1e-12)
        eigenvalues = np.linalg.eigvalsh(centred.T @ centred)              # ascending
        assert plane.explained == pytest.approx(eigenvalues[-2:].sum() / eigenvalues.sum(), rel=1e-9)
        assert plane.explained_axes.sum() == pytest.approx(plane.explained)


def test_the_plane_keeps_every_pair_of_keys_in_order_that_its_error_bound_certifies(case):
    trace, _ = case
    for head in heads_of(trace):
        plane = mc.qk_plane(trace, head)
        lift_q, lift_k = lifted(plane)
        P = plane.axes.T @ plane.axes                                       # (d_k, d_k) projects onto the plane
        r_keys = plane.key_points - lift_k                                  # (m, d_k) keys' parts outside
        for t in range(trace.q.shape[1]):
            keys = np.flatnonzero(plane.visible(t))
            if len(keys) < 2:
                continue
            alpha = plane.query_points[t] - P @ plane.query_points[t]       # the query's part off the plane's span
            true, seen = trace.scores[head, t, keys], lift_k[keys] @ lift_q[t]
            s, s2 = np.triu_indices(len(keys), k=1)
            miss = (true[s] - true[s2]) - (seen[s] - seen[s2])
            np.testing.assert_allclose(miss, (r_keys[keys[s]] - r_keys[keys[s2]]) @ alpha, atol=1e-9)
            bound = np.linalg.norm(alpha) * np.linalg.norm(r_keys[keys[s]] - r_keys[keys[s2]], axis=1)
            certain = np.abs(true[s] - true[s2]) > bound + 1e-9
            assert (np.sign(true[s] - true[s2]) == np.sign(seen[s] - seen[s2]))[certain].all()


def test_a_plane_that_keeps_all_the_spread_keeps_every_querys_order():
    # Only the first two of each head's 8 query and key dimensions are nonzero: all points lie in one plane.
    cfg = mc.MHAConfig(16, 2, bias=False)
    w = mc.init_weights(cfg, seed=6, dtype=np.float64)
    keep = np.zeros((16, 1))
    keep[[0, 1, 8, 9]] = 1.0
    w = mc.MHAWeights(W_Q=w.W_Q * keep, W_K=w.W_K * keep, W_V=w.W_V, W_O=w.W_O)
    trace = mc.forward(RNG.normal(size=(9, 16)), w, cfg)
    for head in range(2):
        plane = mc.qk_plane(trace, head)
        assert plane.explained == pytest.approx(1.0, abs=1e-12)
        assert all(plane.order_kept(t) == 1.0 for t in range(9))


def kept_by_loop(true: np.ndarray, seen: np.ndarray) -> float:
    same = total = 0
    for a in range(len(true)):
        for b in range(a + 1, len(true)):
            if true[a] != true[b]:
                total += 1
                same += (true[a] > true[b]) == (seen[a] > seen[b])
    return same / total if total else 1.0


def test_order_kept_counts_the_pairs_each_reading_of_the_plane_gets_right(case):
    trace, _ = case
    plane = mc.qk_plane(trace, 0)
    for t in range(trace.q.shape[1]):
        keys = np.flatnonzero(plane.visible(t))
        true = trace.scores[0, t, keys]
        # Along the arrow from the space's zero to the query, and by nearness.
        arrow = (plane.keys[keys] - plane.origin) @ (plane.queries[t] - plane.origin)
        near = -np.linalg.norm(plane.keys[keys] - plane.queries[t], axis=1)
        assert plane.order_kept(t) == pytest.approx(kept_by_loop(true, arrow))
        assert plane.order_kept(t, by="distance") == pytest.approx(kept_by_loop(true, near))


def test_keys_before_rope_sit_in_the_same_plane_and_only_position_0_is_not_turned():
    trace, _ = CASES["rope, grouped-query, causal"]()
    plane = mc.qk_plane(trace, 3)
    before = plane.key_factor * trace.k_before_rope[plane.kv_head] + plane.key_shift  # (m, d_k)
    outside = before - plane.lift(plane.keys_before_rope)
    np.testing.assert_allclose(outside @ plane.axes.T, 0.0, atol=1e-10)
    np.testing.assert_allclose(plane.keys_before_rope[0], plane.keys[0], atol=1e-12)
    assert np.linalg.norm(plane.keys_before_rope[1:] - plane.keys[1:], axis=1).min() > 0
    plain, _ = CASES["self-attention"]()
    assert mc.qk_plane(plain, 0).keys_before_rope is None


@pytest.mark.parametrize("cfg, n", [(mc.MHAConfig(2, 2), 4), (mc.MHAConfig(8, 2), 1)], ids=["d_k = 1", "one token"])
def test_plane_of_a_degenerate_head_is_finite(cfg, n):
    trace, _ = make(cfg, n)
    plane = mc.qk_plane(trace, 1)
    assert plane.queries.shape == (n, 2) and np.isfinite(plane.queries).all() and np.isfinite(plane.keys).all()
    assert 0.0 <= plane.explained <= 1.0 and np.isfinite(plane.explained)


def test_plane_refuses_unknown_heads_methods_queries_and_readings():
    trace, _ = CASES["self-attention"]()
    with pytest.raises(mc.ConfigError, match="head = 4 does not exist"):
        mc.qk_plane(trace, 4)
    with pytest.raises(mc.ConfigError, match="method must be one of pca"):
        mc.qk_plane(trace, 0, method="tsne")
    plane = mc.qk_plane(trace, 0)
    with pytest.raises(mc.ConfigError, match="query = 5 does not exist"):
        plane.order_kept(5)
    with pytest.raises(mc.ConfigError, match="by must be one of"):
        plane.order_kept(0, by="angle")


# --- figures ---------------------------------------------------------------------------------------------------

def test_plane_figure_joins_the_query_to_its_strongest_keys_by_lines_as_wide_as_the_weight():
    trace, _ = CASES["grouped-query, causal"]()
    plane, query, top = mc.qk_plane(trace, 4), 5, 3
    tokens = [f"t{j}" for j in range(6)]
    fig = inside_figures.qk_plane_figure(plane, tokens, query, top=top, group_size=3)
    keys = next(t for t in fig.data if t.name == "keys")
    np.testing.assert_allclose(keys.marker.color, trace.weights[4, query])
    assert (keys.marker.cmin, keys.marker.cmax) == (0, 1)
    lines = [t for t in fig.data if t.mode == "lines" and t.legendgroup == "strongest"]
    strongest = np.argsort(-trace.weights[4, query])[:top]
    assert len(lines) == top
    # the legend says what the lines are
    assert [t.name for t in lines if t.showlegend is not False] == ["lines: its 3 strongest keys (width = weight)"]
    for line, s in zip(lines, strongest, strict=True):
        assert (line.x[1], line.y[1]) == tuple(plane.keys[s])
        assert (line.x[0], line.y[0]) == tuple(plane.queries[query])
        assert line.line.width == pytest.approx(1 + 9 * trace.weights[4, query, s])
    assert not any(t.name == "keys before RoPE" for t in fig.data)
    assert fig.layout.yaxis.scaleanchor == "x"                          # distances drawn true
    rope, _ = CASES["rope, grouped-query, causal"]()
    fig = inside_figures.qk_plane_figure(mc.qk_plane(rope, 0), [f"t{j}" for j in range(7)], 2)
    assert any(t.name == "keys before RoPE" for t in fig.data)


def test_query_row_figure_outlines_the_chosen_querys_row_also_when_pooled():
    trace, _ = CASES["self-attention"]()
    fig = inside_figures.query_row_figure(trace, 1, 3, [f"t{j}" for j in range(5)])
    outline = fig.layout.shapes[-1]
    assert (outline.y0, outline.y1, outline.x0, outline.x1) == (2.5, 3.5, -0.5, 4.5)
    assert outline.line.color == inside_figures.CHOSEN
    long, _ = make(mc.MHAConfig(8, 2), 300)
    fig = inside_figures.query_row_figure(long, 0, 250, [f"t{j}" for j in range(300)])
    step = -(-300 // len(fig.data[0].y))                               # 300 rows drawn as blocks of `step`
    assert step > 1 and fig.layout.shapes[-1].y0 == 250 // step - 0.5


@pytest.mark.parametrize("n", [5, 300], ids=["exact", "pooled"])
def test_contribution_grid_uses_the_weight_grids_layout_scale_and_pooling(n):
    cfg = mc.MHAConfig(24, 6, n_kv_heads=2)
    trace, w = make(cfg, n)
    tokens = [f"t{j}" for j in range(n)]
    shares = weighted_norms.contribution_shares(mc.contributions(trace, w))
    ours = inside_figures.contribution_grid_figure(shares, tokens, group_size=3)
    theirs = figures.head_grid_figure(trace, tokens, group_size=3)
    assert ours.layout.coloraxis.cmin == 0 and ours.layout.coloraxis.cmax == 1
    assert ours.layout.coloraxis.colorscale == theirs.layout.coloraxis.colorscale
    for axis in ("xaxis", "yaxis", "xaxis6", "yaxis6"):
        assert ours.layout[axis].domain == theirs.layout[axis].domain
    assert [a.text for a in ours.layout.annotations] == [a.text for a in theirs.layout.annotations]
    assert (ours.layout.meta or {}).get("pooled") == (theirs.layout.meta or {}).get("pooled")
    if n == 5:
        for i, panel in enumerate(ours.data):
            np.testing.assert_allclose(np.asarray(panel.z, float), shares[i])


def test_rollout_figure_shows_the_chosen_layers_on_the_weight_scale():
    assert inside_figures.rollout_layers(6) == [0, 1, 2, 3, 4, 5]
    assert inside_figures.rollout_layers(30) == [0, 6, 12, 17, 23, 29]
    traces = layers_of(mc.MHAConfig(8, 2), 4, 3)
    rollout = mc.rollout(traces)
    fig = inside_figures.rollout_figure(rollout, list("abcd"), layers=[0, 2])
    assert [a.text for a in fig.layout.annotations[:2]] == ["after layer 1", "after layer 3"]
    np.testing.assert_allclose(np.asarray(fig.data[1].z, float), rollout[2])
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0, 1)


def test_special_share_figure_puts_weight_beside_contribution_on_one_scale():
    weight, contribution = RNG.uniform(size=(6, 12)), RNG.uniform(size=(6, 12))
    fig = inside_figures.special_share_figure(weight, contribution)
    np.testing.assert_allclose(np.asarray(fig.data[0].z, float), weight)
    np.testing.assert_allclose(np.asarray(fig.data[1].z, float), contribution)
    assert [a.text for a in fig.layout.annotations[:2]] == ["share of weight on [CLS] + [SEP]",
                                                           "share of contribution on [CLS] + [SEP]"]
    decoder = inside_figures.special_share_figure(weight, contribution, head_stats.decoder_parts())
    assert decoder.layout.annotations[0].text == "share of weight on first token"


def test_weight_share_figure_puts_each_keys_weight_beside_its_share_on_one_axis():
    trace, w = CASES["self-attention"]()
    shares = weighted_norms.contribution_shares(mc.contributions(trace, w))[1, 3]
    tokens = ["a", "b", "c", "d", "e"]
    fig = inside_figures.weight_share_figure(trace.weights[1, 3], shares, 1, 3, tokens)
    assert [bar.name for bar in fig.data] == ["weight α_ts", "share of contribution"]
    np.testing.assert_array_equal(np.asarray(fig.data[0].y, float), trace.weights[1, 3])
    np.testing.assert_array_equal(np.asarray(fig.data[1].y, float), shares)
    assert list(fig.data[0].x) == ["1 a", "2 b", "3 c", "4 d", "5 e"] and fig.layout.barmode == "group"
    assert tuple(fig.layout.yaxis.range) == (0, 1) and fig.layout.title.text.startswith("Head 2, query 4 d:")


def label_boxes(fig) -> list[tuple[float, float, float, float]]:
    """The px box of every point name of a plane figure, worked out from its layout alone: px per unit = the plot
    area's height / the y range (the figure fixes both ranges for a plot area at least its minimum width), the
    name's centre = its point + (xshift, yshift), its width 0.6 em a character and its height 1.2 em."""
    x0, y0 = fig.layout.xaxis.range[0], fig.layout.yaxis.range[0]
    height = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    scale = height / (fig.layout.yaxis.range[1] - y0)
    boxes = []
    for a in fig.layout.annotations:
        if a.name != "point name":
            continue
        assert (a.xanchor, a.yanchor) == ("center", "middle")
        if a.showarrow:  # a name set off, joined to its point by a line: the text at (ax, ay) px (ay runs down)
            cx, cy = (a.x - x0) * scale + a.ax, (a.y - y0) * scale - a.ay
        else:
            cx, cy = (a.x - x0) * scale + a.xshift, (a.y - y0) * scale + a.yshift
        w, h = 0.6 * a.font.size * len(a.text), 1.2 * a.font.size
        boxes.append((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2))
    return boxes


@pytest.mark.parametrize("case, head, query", [("self-attention", 0, 2), ("grouped-query, causal", 4, 5),
                                               ("rope, grouped-query, causal", 0, 2)])
def test_plane_names_never_overlap_and_the_chosen_query_is_always_named(case, head, query):
    trace, _ = CASES[case]()
    n = trace.weights.shape[1]
    tokens = [f"word{j}" for j in range(n)]  # long names: the hardest case
    fig = inside_figures.qk_plane_figure(mc.qk_plane(trace, head), tokens, query)
    boxes = label_boxes(fig)
    for a, b in itertools.combinations(boxes, 2):
        assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
    named = [a for a in fig.layout.annotations if a.name == "point name"]
    assert named[0].text == tokens[query] and named[0].x == fig.layout.annotations[0].x  # the chosen query first
    assert len(named) >= 3


def test_the_planes_title_says_what_its_order_means():
    trace, _ = CASES["grouped-query, causal"]()
    plane = mc.qk_plane(trace, 4)
    title = inside_figures.qk_plane_figure(plane, [f"t{j}" for j in range(6)], 5, group_size=3).layout.title.text
    assert title.startswith(f"Head 5 (keys of K/V head 2): queries and keys in the plane that keeps "
                            f"{plane.explained:.0%} of their spread")
    assert (f": of two keys, the one further along its arrow scores higher for {plane.order_kept(5):.0%} of pairs, "
            f"the nearer one for {plane.order_kept(5, 'distance'):.0%} (50% would be chance)") in title


def test_plane_names_stay_apart_on_the_default_sentence():
    """No two names print on top of each other ("on/mat", "The/was", "sat/tired") on the app's own example, as
    lesson screen 12 draws it (head 1, the last query)."""
    from mha_app.state.example import build_example
    from mha_app.state.settings import Spec

    ex = build_example(Spec())
    fig = inside_figures.qk_plane_figure(mc.qk_plane(ex.trace, 0), ex.tokens, len(ex.tokens) - 1)
    boxes = label_boxes(fig)
    assert len(boxes) >= len(ex.tokens)  # most of the 22 points keep their name
    for a, b in itertools.combinations(boxes, 2):
        assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)


@pytest.mark.parametrize("size", [None, inside.PlaneSize(height=480, top=160, bottom=90, font=18)],
                         ids=["page", "presentation"])
def test_plane_names_every_key_the_query_leans_on_and_keeps_its_ranges_to_the_points(size):
    """Lesson screen 12 names every key the query's lines go to (10 tired, its largest weight, among them) rather
    than hide names that would overlap, and its x axis stays near the points (within -1.5 .. 1.2, not -6 .. 5)."""
    from mha_app.state.example import build_example
    from mha_app.state.settings import Spec

    ex = build_example(Spec())
    query = len(ex.tokens) - 1
    plane = mc.qk_plane(ex.trace, 0)
    fig = inside_figures.qk_plane_figure(plane, ex.tokens, query, size=size)
    named = {a.text for a in fig.layout.annotations if a.name == "point name"}
    weights = ex.trace.weights[0, query]
    strongest = np.argsort(-weights)[:inside_figures.TOP_KEYS]                 # the keys the lines go to
    assert {ex.tokens[s] for s in strongest} <= named, (sorted(named), [ex.tokens[s] for s in strongest])
    assert ex.tokens[int(np.argmax(weights))] in named
    for a, b in itertools.combinations(label_boxes(fig), 2):
        assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
    points = np.vstack([plane.queries, plane.keys, plane.origin[None]])
    x_range = fig.layout.xaxis.range
    assert fig.layout.xaxis.constrain == fig.layout.yaxis.constrain == "domain"  # plotly may not widen a range
    assert x_range[0] <= points[:, 0].min() and x_range[1] >= points[:, 0].max()
    assert x_range[1] - x_range[0] <= 1.5 * np.ptp(points[:, 0])


def test_plane_names_stay_apart_at_a_presentations_size():
    """Lesson screen 12 in presentation mode draws the plane lower, with a taller top and 18 px names."""
    trace, _ = CASES["self-attention"]()
    size = inside.PlaneSize(height=480, top=160, bottom=90, font=18)
    fig = inside_figures.qk_plane_figure(mc.qk_plane(trace, 0), [f"word{j}" for j in range(trace.weights.shape[1])],
                                         1, size=size)
    assert (fig.layout.height, fig.layout.margin.t, fig.layout.annotations[-1].font.size) == (480, 160, 18)
    boxes = label_boxes(fig)
    for a, b in itertools.combinations(boxes, 2):
        assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
