"""The views inside the heads on their pages, through AppTest: each renders, with this example's numbers (computed here
with mha_core from the example the page shows). The numerics themselves are checked in tests/unit/test_inside.py and
tests/reference/test_inside_reference.py; these tests check the wiring: the right head, query, layer and text.
"""

from __future__ import annotations

import numpy as np
import pytest

import mha_core as mc
from helpers import load_pretrained
from mha_app.copy import inside as say
from mha_app.copy.lesson import SCREENS
from mha_core.analysis import contributions as weighted_norms
from mha_core.analysis import head_stats
from mha_core.figures import base as figure_base
from screen import as_array, explorer, figure_titled, page_text, run_app

MINILM = {"model": "all-MiniLM-L6-v2"}


def shown(at):
    """The page's settings and example (what the sidebar and the link chose)."""
    return at.session_state["view"]


def panels(fig: dict) -> list[np.ndarray]:
    """The z of every heatmap of a figure, in order."""
    return [as_array(trace["z"]).reshape(np.array(trace["z"]["shape"].split(","), int)) if isinstance(trace["z"], dict)
            else np.array(trace["z"], dtype=float) for trace in fig["data"] if trace["type"] == "heatmap"]


@pytest.fixture(scope="module")
def minilm():
    from mha_core.pretrained import load_minilm

    return load_pretrained(load_minilm)


# --- the attention page ---------------------------------------------------------------------------------------------

ATTENTION = {"causal": "true", "head": "3", "query": "6"}  # the default example (random weights, causal)


@pytest.fixture(scope="module")
def attention():
    """The attention page on head 3, query 6."""
    return run_app(ATTENTION, "pages/attention.py")


@pytest.fixture(scope="module")
def adds():
    """The same, its tab "What each key adds" open."""
    return run_app(ATTENTION, "pages/attention.py", opened={"attention_tab": "What each key adds"})


@pytest.fixture(scope="module")
def plane():
    """The same, its tab "Queries and keys" open."""
    return run_app(ATTENTION, "pages/attention.py", opened={"attention_tab": "Queries and keys"})


def test_the_explorer_offers_contributions_of_this_example(attention):
    at = attention
    assert not at.exception, [e.value for e in at.exception]
    _, ex = shown(at)
    header, arrays, _ = explorer(at)
    assert header["stages"][-1]["key"] == "contributions"
    expected = mc.contributions(ex.trace, ex.weights)                              # (h, n, m)
    made = arrays["1/weights"].astype(np.float64) * arrays["1/contributions/sizes"][:, None, :]
    np.testing.assert_allclose(made, expected, rtol=1e-12)
    np.testing.assert_allclose(arrays["1/contributions/totals"], expected.sum(axis=-1), rtol=1e-12)


def test_what_each_key_adds_lists_the_focused_querys_keys(adds):
    at = adds
    settings, ex = shown(at)
    tab = next(t for t in at.tabs if t.label == "What each key adds")
    table = tab.dataframe[0].value
    shares = weighted_norms.contribution_shares(mc.contributions(ex.trace, ex.weights))[2, 5]   # head 3, query 6
    # rounded as the sentence rounds them (3 decimals, not 0.2685427665710449), every key in the text's order
    np.testing.assert_array_equal(table["key"].to_numpy(), np.arange(1, len(ex.keys) + 1))
    np.testing.assert_allclose(table["share"].to_numpy(), shares, atol=5e-4)
    np.testing.assert_allclose(table["weight α_ts"].to_numpy(), ex.trace.weights[2, 5], atol=5e-4)
    numbers = table[["weight α_ts", "‖v_s W^O_i‖", "contribution", "share"]].to_numpy(dtype=float)
    np.testing.assert_array_equal(numbers, np.round(numbers, 3))
    added = mc.contributions(ex.trace, ex.weights)[2, 5]
    said = " ".join(m.value for m in tab.markdown)
    assert say.contribution_sentence(2, 5, ex.tokens, ex.keys, ex.trace.weights[2, 5].astype(np.float64), added,
                                     shares, switched_off=False) in said
    assert say.key_adds_caption(2, 5, bool(ex.cfg.bias)) in " ".join(c.value for c in tab.caption)


def test_a_switched_off_head_keeps_its_values_and_says_step_3_multiplies_its_output_by_0():
    """With ablate=2,5, head 2's values are computed as usual (its ‖v_s W^O_i‖ are not 0), and the tab says that
    Step 3 multiplies its output by 0."""
    at = run_app({"ablate": "2,5", "head": "2"}, "pages/attention.py", opened={"attention_tab": "What each key adds"})
    assert not at.exception, [e.value for e in at.exception]
    settings, ex = shown(at)
    query = settings.view.query - 1
    tab = next(t for t in at.tabs if t.label == "What each key adds")
    said = " ".join(m.value for m in tab.markdown)
    weights, nothing = ex.trace.weights[1, query].astype(np.float64), np.zeros(len(ex.keys))
    assert say.contribution_sentence(1, query, ex.tokens, ex.keys, weights, nothing, nothing, switched_off=True) \
        in said
    assert "values are 0" not in said
    table = tab.dataframe[0].value
    d_k = ex.trace.q.shape[2]
    block = ex.weights.W_O[:, d_k:2 * d_k].astype(np.float64)                       # head 2's block of W_O
    sizes = np.linalg.norm(ex.trace.v[1].astype(np.float64) @ block.T, axis=-1)     # (m,) its real ‖v_s W^O_i‖
    np.testing.assert_allclose(table["‖v_s W^O_i‖"].to_numpy(dtype=float), sizes, atol=5e-4)
    assert (sizes > 0.01).all() and (table["contribution"].to_numpy(dtype=float) == 0).all()
    assert table["share"].isna().all(), "0 over 0 is no share: the column is left blank"
    _, arrays, _ = explorer(at)
    np.testing.assert_allclose(arrays["1/contributions/sizes"][1], sizes, rtol=1e-5)
    assert arrays["1/contributions/gates"][[1, 4]].tolist() == [0.0, 0.0]


def test_queries_and_keys_as_points_shows_the_focused_head_and_query(plane):
    at = plane
    _, ex = shown(at)
    plane = mc.qk_plane(ex.trace, 2)
    fig = figure_titled(at, "Head 3: queries and keys in the plane")
    assert f"keeps {plane.explained:.0%} of their spread" in fig["layout"]["title"]["text"]
    chosen = next(t for t in fig["data"] if t.get("name", "").startswith("query 6 "))
    assert chosen["name"] == f"query 6 {ex.tokens[5]}"
    assert (chosen["x"][0], chosen["y"][0]) == pytest.approx(tuple(plane.queries[5]))
    tab = next(t for t in at.tabs if t.label == "Queries and keys")
    said = " ".join(m.value for m in tab.markdown)
    assert not say.whole_space(plane), "d_k = 8: the plane keeps part of the spread, and neither reading is exact"
    assert say.plane_intro(plane, ex.cfg.d_k) in said and say.plane_reading(plane, 5, ex.tokens) in said
    assert say.PLANE_MADE + say.SOURCES["plane"] in " ".join(c.value for c in tab.caption)
    scores = figure_titled(at, "Head 3: Scaled scores")
    outline = scores["layout"]["shapes"][-1]
    assert (outline["y0"], outline["y1"], outline["line"]["color"]) == (4.5, 5.5, figure_base.HIGHLIGHT), \
        "query 6's row"


def test_when_the_plane_is_the_whole_space_the_arrow_is_said_to_be_exact():
    """With `input=tiny` (d_k = 2) the plane is the whole space: the page says the arrow is exact and nothing is
    lost, and along the arrow every pair of keys is in the scores' order."""
    at = run_app({"input": "tiny"}, "pages/attention.py", opened={"attention_tab": "Queries and keys"})
    assert not at.exception, [e.value for e in at.exception]
    _, ex = shown(at)
    assert ex.cfg.d_k == 2
    for head in range(ex.cfg.n_heads):  # the claim itself: along the arrow, every pair of keys in the scores' order
        plane = mc.qk_plane(ex.trace, head)
        along = plane.query_points @ plane.key_points.T                              # (n, m)
        scores = ex.trace.scores[head]                                               # (n, m)
        higher = scores[:, :, None] > scores[:, None, :] + 1e-9                       # (n, m, m): s1 above s2
        assert (along[:, :, None] > along[:, None, :])[higher].all()
    said = " ".join(m.value for m in next(t for t in at.tabs if t.label == "Queries and keys").markdown)
    assert "Only the arrow is exact here" in said and "nothing is lost" in said
    assert "the rest is lost" not in said and "even the arrow can swap" not in said

def test_on_smollm2_the_plane_shows_keys_before_and_after_the_rotary_turn():
    from mha_core.pretrained import load_smollm2

    load_pretrained(load_smollm2)
    at = run_app({"model": "SmolLM2-135M-Instruct", "layer": "3", "head": "2", "query": "5"}, "pages/attention.py",
                 opened={"attention_tab": "Queries and keys"})
    assert not at.exception, [e.value for e in at.exception]
    _, ex = shown(at)
    plane = mc.qk_plane(ex.run.layers[2], 1)
    fig = figure_titled(at, "Head 2 (keys of K/V head 1): queries and keys in the plane")
    before = next(t for t in fig["data"] if t.get("name") == "keys before RoPE")
    np.testing.assert_allclose(as_array(before["x"]), plane.keys_before_rope[:, 0], rtol=1e-9)
    said = page_text(at)
    assert say.ROPE_NOTE in said and say.plane_reading(plane, 4, ex.tokens) in said



# (head, query) of the default example where the arrow, the distance, or neither orders the keys better
@pytest.mark.parametrize(("page", "head", "query"), [("pages/attention.py", 1, 1), ("pages/attention.py", 2, 7),
                                                     ("pages/attention.py", 1, 2), ("pages/lesson.py", 2, 7)])
def test_the_plane_says_which_reading_did_better_on_this_example(page, head, query):
    """The plane says which reading, the arrow or distance, did better on this example, from the share of pairs
    each puts in order, and never calls distance a rough guide whatever the numbers."""
    params = {"head": str(head), "query": str(query)} | ({"screen": "12"} if page.endswith("lesson.py") else {})
    at = run_app(params, page, opened={"attention_tab": "Queries and keys"})
    _, ex = shown(at)
    plane = mc.qk_plane(ex.trace, head - 1)
    arrow, near = (round(100 * plane.order_kept(query - 1, by)) for by in ("dot", "distance"))
    said = page_text(at)
    assert say.better_reading(plane, query - 1) in said and "rough guide" not in said
    assert f"{arrow}%" in said.replace(" %", "%") and f"{near}%" in said.replace(" %", "%")


def test_the_lesson_plane_says_what_its_open_circles_are_with_rope():
    """SmolLM2's lesson screen 12 says that its open circles are the keys before RoPE."""
    at = run_app({"model": "SmolLM2-135M-Instruct", "screen": "12"}, "pages/lesson.py")
    settings, ex = shown(at)
    plane = mc.qk_plane(ex.trace, settings.view.head - 1)
    assert plane.keys_before_rope is not None
    assert say.plane_in_brief(plane, settings.view.query - 1, ex.tokens) in page_text(at)


# --- the trained-model pages -----------------------------------------------------------------------------------------

def test_the_head_summary_puts_each_heads_share_of_contribution_beside_its_share_of_weight(minilm):
    at = run_app(MINILM, "pages/head_summary.py")
    assert not at.exception, [e.value for e in at.exception]
    run = shown(at)[1].run
    weight = weighted_norms.parked_share(head_stats.head_summary(run))
    contribution = weighted_norms.parked_share(
        weighted_norms.contribution_summary(run, [layer.attention for layer in minilm.layer_weights]))
    left, right = panels(figure_titled(at, "Each head's share on [CLS] + [SEP]"))
    np.testing.assert_allclose(left, weight, rtol=1e-9)
    np.testing.assert_allclose(right, contribution, rtol=1e-9)
    said = page_text(at)
    parts = head_stats.parts_for(minilm)
    assert say.parked_tokens(parts) == "[CLS] and [SEP]"
    assert say.parked_header(parts) in said
    assert say.parked_sentence(parts, np.nanmean(weight), np.nanmean(contribution)) in said


def test_the_model_view_rolls_attention_out_and_says_what_that_assumes(minilm):
    at = run_app({**MINILM, "query": "4"}, "pages/model_view.py")
    assert not at.exception, [e.value for e in at.exception]
    run = shown(at)[1].run
    flow = mc.rollout(run)                                                       # (6, n, n)
    got = panels(figure_titled(at, "Attention rollout"))
    assert len(got) == 6
    for l in range(6):
        np.testing.assert_allclose(got[l], flow[l], rtol=1e-9)
    said = page_text(at)
    assert say.rollout_sentence(flow, run.tokens, 3) in said
    assert say.ROLLOUT_ASSUMPTIONS in said and say.SOURCES["rollout"] in said


# --- the lesson ------------------------------------------------------------------------------------------------------

NEW_SCREENS = {key: number for number, (key, _) in enumerate(SCREENS, start=1) if key in ("plane", "adds", "rollout")}


def test_the_lesson_ends_with_the_three_views_each_with_its_source(minilm):
    assert list(NEW_SCREENS.values()) == [12, 13, 14], "added at the end: the earlier screens keep their links"
    sources = {"plane": "Yeh et al. (2023)", "adds": "Kobayashi et al. (2020)", "rollout": "Abnar and Zuidema (2020)"}
    titles = {"plane": "Head 2: queries and keys in the plane", "adds": "Head ", "rollout": "Attention rollout"}
    for key, number in NEW_SCREENS.items():
        at = run_app({**MINILM, "screen": str(number), "head": "2", "query": "3"}, "pages/lesson.py")
        assert not at.exception, [e.value for e in at.exception]
        assert at.title[0].value == f"{number} · {SCREENS[number - 1][1]}"
        assert sources[key] in page_text(at)
        fig = figure_titled(at, titles[key])
        if key == "adds":  # the query where a large weight adds least, from the engine's contributions
            ex = shown(at)[1]
            shares = weighted_norms.contribution_shares(mc.contributions(ex.trace, ex.weights))   # (h, n, m)
            strongest = ex.trace.weights.argmax(-1)[..., None]                                    # (h, n, 1)
            gaps = np.take_along_axis(ex.trace.weights - shares, strongest, -1)[..., 0]          # (h, n)
            head = 1 if gaps[1].max() >= say.GAP else int(gaps.max(axis=1).argmax())
            query = int(gaps[head].argmax())
            assert fig["layout"]["title"]["text"].startswith(f"Head {head + 1}, query {query + 1} ")
            np.testing.assert_allclose(as_array(fig["data"][1]["y"]), shares[head, query], rtol=1e-9)
            weight = ex.trace.weights[head, query, strongest[head, query, 0]]
            assert f"largest weight, **{weight:.3f}**" in page_text(at) and gaps[head, query] >= say.GAP


def test_the_rollout_screen_asks_for_a_trained_model_when_the_weights_are_random():
    at = run_app({"screen": str(NEW_SCREENS["rollout"])}, "pages/lesson.py")
    assert not at.exception, [e.value for e in at.exception]
    assert say.rollout_untrained() in page_text(at), "rollout explained, not only named"
    assert at.button(key="switch_0").label == "Switch to all-MiniLM-L6-v2"
    assert at.button(key="next").disabled, "the last screen"
