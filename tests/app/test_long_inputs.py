"""Long inputs: at 2048 tokens every page renders within its budget of cells and bytes, and the attention
page's explorer is sent block means and a zoom window of exactly the engine's numbers, checked against attention
written out here (or against transformers for the trained model), with a causal mask, grouped-query heads and
cross-attention."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mha_core as mc
from app_pages import app_pages
from helpers import load_pretrained
from mha_app.copy import links
from mha_app.copy.notes import zoom_moved
from screen import as_array, explorer, figures, run_app

LONG = {"input": "random", "n": "2048", "d_model": "1024", "h": "16"}
MAX_CELLS = 250_000        # the architecture's bound on one figure
MAX_PAGE_BYTES = 2_000_000  # the most bytes sent per rerun, whatever n is


def explorer_budget(heads: int, n: int, m: int) -> int:
    """The most bytes of the explorer's data (sent once per example, a reference on a rerun): float32 overviews of
    at most 40,000 cells a head for its four stages (raw, scaled, weights, contributions), head-grid thumbnails of
    10,000 cells for two, the zoom window's three exact stages, float64 value sizes and row totals (contributions),
    and 200 kB for the tokens and the header."""
    return 4 * (4 * heads * 40_000 + 2 * heads * 10_000 + 3 * heads * ZOOM * ZOOM) + 8 * heads * (n + m) + 200_000
ZOOM = 64


def cells(figure: dict) -> int:
    return sum(as_array(trace["z"]).size for trace in figure["data"] if "z" in trace)


def page_bytes(at) -> int:
    """The JSON of every chart on the page, as sent to the browser (plotly's, and the SVG heatmaps')."""
    return (sum(len(chart.proto.spec) for chart in at.get("plotly_chart"))
            + sum(len(e.proto.json) for e in at.get("bidi_component") if e.proto.component_name == "mha_app.matrix"))


def reference_attention(x, x_kv, w, cfg, head: int, rows: slice):
    """(scaled scores, weights) of query rows `rows` against every key, in float64: softmax(Q K^T / sqrt(d_k)) with
    the causal mask written out (blocked = -inf, weight 0)."""
    d_k, group = cfg.d_k, cfg.n_heads // cfg.kv_heads
    q = x.astype(np.float64) @ w.W_Q.T.astype(np.float64)
    k = x_kv.astype(np.float64) @ w.W_K.T.astype(np.float64)
    if w.b_Q is not None:
        q, k = q + w.b_Q, k + w.b_K
    q = q[rows, head * d_k:(head + 1) * d_k]
    kv = head // group
    k = k[:, kv * d_k:(kv + 1) * d_k]
    scores = q @ k.T / np.sqrt(d_k)
    if cfg.causal:
        query_pos = np.arange(x.shape[0])[rows][:, None]
        scores = np.where(np.arange(k.shape[0])[None, :] > query_pos, -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return scores, weights / weights.sum(axis=1, keepdims=True)


def zoom(at, stage: str | None = None, head: int | None = None) -> tuple[np.ndarray, list[str], list[str]]:
    """The zoom window's cells of one head (1-based; default: the view's head and stage) as the explorer draws them,
    and its query and key labels: sent as such when the matrices are pooled, else cut from the whole matrix."""
    header, arrays, view = explorer(at)
    r0, r1, c0, c1 = header["window"]
    part = f"{view['layer']}/{stage or view['stage']}"
    stack = arrays[part.replace("/", "/zoom/", 1)] if header["step"] > 1 else arrays[part][:, r0:r1, c0:c1]
    cells = stack[0 if len(stack) == 1 else (head or view["head"]) - 1]  # a mask alike in every head is sent once
    keys = header["key_tokens"] or header["tokens"]
    queries = [f"{q + 1} {header['tokens'][q]}" for q in range(r0, r1)]
    return cells, queries, [f"{k + 1} {keys[k]}" for k in range(c0, c1)]


def explorer_bytes(at) -> int:
    return sum(len(e.proto.bytes) for e in at.get("bidi_component"))


def random_example(n: int, d_model: int, h: int, kv_heads: int | None = None, causal: bool = False):
    cfg = mc.MHAConfig(d_model, h, n_kv_heads=kv_heads, causal=causal)
    return mc.random_input(n, d_model, seed=0), mc.init_weights(cfg, seed=0), cfg


# --- 2048 tokens ---------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def long_page():
    return run_app({**LONG, "zoom_query": "1985", "zoom_key": "1"}, "pages/attention.py")


def test_attention_page_renders_2048_tokens_in_blocks_with_an_exact_zoom(long_page):
    at = long_page
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    x, w, cfg = random_example(2048, 1024, 16)
    # The overview: the smallest block size that leaves at most 40,000 cells: ceil(2048 / 11)² = 187² = 34,969,
    # while 10 would leave 205² = 42,025. Each cell is that block's mean, in every head and stage.
    header, arrays, _ = explorer(at)
    assert header["step"] == 11 and arrays["1/raw"].shape == arrays["1/weights"].shape == (16, 187, 187)
    z = arrays["1/weights"][0]
    _, first_rows = reference_attention(x, x, w, cfg, 0, slice(0, 11))
    np.testing.assert_allclose(z[0, 0], first_rows[:, :11].mean(), rtol=1e-5)
    np.testing.assert_allclose(z[0, 1], first_rows[:, 11:22].mean(), rtol=1e-5)
    _, last_rows = reference_attention(x, x, w, cfg, 0, slice(11 * 186, 2048))  # a partial edge block: 2 rows
    np.testing.assert_allclose(z[-1, -1], last_rows[:, 11 * 186:].mean(), rtol=1e-5)
    # The zoom window: rows 1985-2048, keys 1-64, every cell the engine's exact weight, every token named.
    assert header["window"] == [1984, 2048, 0, 64]
    cells_, queries, keys = zoom(at, "weights", 1)
    _, expected = reference_attention(x, x, w, cfg, 0, slice(1984, 2048))
    assert cells_.shape == (ZOOM, ZOOM)
    np.testing.assert_allclose(cells_, expected[:, :ZOOM], rtol=1e-4, atol=1e-9)
    assert queries[0] == "1985 t1985" and queries[-1] == "2048 t2048" and keys == [f"{j} t{j}" for j in range(1, 65)]


def test_every_page_at_2048_tokens_stays_within_cells_and_bytes(long_page):
    for page in app_pages():
        at = run_app(LONG, page.script)
        assert not at.exception, (page.script, [e.value for e in at.exception])
        for fig in figures(at):
            assert cells(fig) <= MAX_CELLS, (page.script, fig["layout"]["title"]["text"])
        assert page_bytes(at) <= MAX_PAGE_BYTES, (page.script, page_bytes(at))
        assert explorer_bytes(at) <= explorer_budget(16, 2048, 2048), (page.script, explorer_bytes(at))


# --- the zoom window in every mode -------------------------------------------------------------------------------

def test_zoom_with_the_causal_mask_leaves_blocked_scores_blank_and_their_weights_zero():
    params = {"input": "random", "n": "300", "d_model": "64", "h": "4", "causal": "true", "head": "2",
              "zoom_query": "100", "zoom_key": "90", "stage": "scaled scores"}
    at = run_app(params, "pages/attention.py")
    assert not at.exception
    x, w, cfg = random_example(300, 64, 4, causal=True)
    scores, weights = reference_attention(x, x, w, cfg, 1, slice(99, 163))
    assert explorer(at)[0]["window"] == [99, 163, 89, 153] and explorer(at)[2]["stage"] == "scaled"
    shown, _, _ = zoom(at)
    blocked = np.isinf(scores[:, 89:153])
    assert blocked.any() and (~blocked).any()
    np.testing.assert_array_equal(zoom(at, "mask")[0] == 1, blocked)  # drawn as blocked, never as a number
    np.testing.assert_allclose(shown[~blocked], scores[:, 89:153][~blocked], rtol=1e-4, atol=1e-5)
    shown, _, _ = zoom(at, "weights")
    np.testing.assert_allclose(shown, weights[:, 89:153], rtol=1e-4, atol=1e-9)
    assert (shown[blocked] == 0).all()


def test_zoom_of_a_grouped_query_head_reads_its_key_value_head():
    params = {"input": "random", "n": "200", "d_model": "64", "h": "8", "kv_heads": "2", "head": "6",
              "zoom_query": "50", "zoom_key": "150"}
    at = run_app(params, "pages/attention.py")
    assert not at.exception
    x, w, cfg = random_example(200, 64, 8, kv_heads=2)
    _, weights = reference_attention(x, x, w, cfg, 5, slice(49, 113))  # query head 6 reads K/V head 2
    assert explorer(at)[0]["window"] == [49, 113, 149, 200]
    shown, _, keys = zoom(at, "weights", 6)
    assert shown.shape == (64, 51) and keys[-1] == "200 t200"  # cut at the last key
    np.testing.assert_allclose(shown, weights[:, 149:200], rtol=1e-4, atol=1e-9)


def test_zoom_in_cross_attention_has_query_and_key_tokens_of_their_own():
    text = " ".join(f"q{i}" for i in range(80))       # the sentence being written: the queries
    text_kv = " ".join(f"k{i}" for i in range(100))   # the source sentence: the keys and values
    params = {"input": "pair", "text": text_kv, "text_q": text, "d_model": "64", "h": "4", "zoom_query": "10",
              "zoom_key": "30"}
    at = run_app(params, "pages/attention.py")
    assert not at.exception
    cfg = mc.MHAConfig(64, 4)
    tokens, key_tokens = mc.tokenize(text), mc.tokenize(text_kv)
    x, x_kv = mc.embed(tokens, 64, seed=0, positional=True), mc.embed(key_tokens, 64, seed=0, positional=True)
    _, weights = reference_attention(x, x_kv, mc.init_weights(cfg, seed=0), cfg, 0, slice(9, 73))
    assert explorer(at)[0]["window"] == [9, 73, 29, 93]
    shown, queries, keys = zoom(at, "weights", 1)
    np.testing.assert_allclose(shown, weights[:, 29:93], rtol=1e-4, atol=1e-9)
    assert queries[0] == "10 q9" and keys[0] == "30 k29"


def test_zoom_of_the_trained_model_shows_its_run(minilm_run):
    """The model's run (reference/test_pretrained.py: as transformers' BertModel computes it)."""
    text = " ".join(["the cat sat on the mat because it was tired and the dog slept"] * 8)
    at = run_app({"model": "all-MiniLM-L6-v2", "text": text, "layer": "2", "head": "3", "zoom_query": "30",
                  "zoom_key": "20"}, "pages/attention.py")
    assert not at.exception
    run = minilm_run(text)
    assert explorer(at)[0]["window"] == [29, 93, 19, 83]
    shown, queries, keys = zoom(at, "weights", 3)
    np.testing.assert_allclose(shown, run.layers[1].weights[2][29:93, 19:83], atol=1e-6)
    assert queries[0] == f"30 {run.tokens[29]}" and keys[-1] == f"83 {run.tokens[82]}"


@pytest.mark.parametrize("model", ["all-MiniLM-L6-v2", "SmolLM2-135M-Instruct"])
def test_trained_model_at_its_token_cap_stays_within_budget(model):
    """At the cap of 256 tokens: the attention page, model view and head summary render within cells and bytes."""
    from mha_core.pretrained import MODELS

    load_pretrained(MODELS[model].load)
    text = " ".join(f"word{i}" for i in range(400))  # cut to the model's cap
    for page in ("pages/attention.py", "pages/model_view.py", "pages/head_summary.py"):
        at = run_app({"model": model, "text": text}, page)
        assert not at.exception, (page, [e.value for e in at.exception])
        assert at.session_state["view"][1].n == 256
        for fig in figures(at):
            assert cells(fig) <= MAX_CELLS, (page, fig["layout"]["title"]["text"])
        assert page_bytes(at) <= MAX_PAGE_BYTES, (page, page_bytes(at))


# --- the zoom controls -----------------------------------------------------------------------------------------

def test_zoom_controls_move_the_window_and_go_into_the_link():
    at = run_app({"input": "random", "n": "100", "d_model": "32", "h": "2"}, "pages/attention.py")
    assert explorer(at)[0]["window"] == [0, 64, 0, 64]
    at.number_input(key="zoom_query").set_value(40).run()
    at.number_input(key="zoom_key").set_value(70).run()
    assert not at.exception
    assert explorer(at)[0]["window"] == [39, 100, 69, 100]
    link = [c.value for c in at.code if c.value.startswith("http")][0]
    assert "zoom_query=40" in link and "zoom_key=70" in link


def test_short_inputs_need_no_zoom_window():
    at = run_app({"input": "random", "n": "20", "d_model": "32", "h": "2"}, "pages/attention.py")
    assert not at.exception
    assert explorer(at)[0]["window"] is None
    assert not [w for w in at.number_input if w.key in ("zoom_query", "zoom_key")]


@pytest.mark.parametrize(("params", "words", "window"), [
    ({"zoom_query": "300"}, links.link_problem("zoom_query", links.zoom_missing(300, 100, "query row")),
     [99, 100, 0, 64]),
    ({"zoom_key": "5000"}, links.out_of_bounds("zoom_key", "5000", 1, 2048, "the zoom window's first key column", 5000),
     [0, 64, 0, 64]),
    ({"zoom_query": "two"}, links.not_a_number("zoom_query", "the zoom window's first query row", "two", whole=True),
     [0, 64, 0, 64]),
])
def test_bad_zoom_values_in_a_link_get_a_warning(params, words, window):
    at = run_app({"input": "random", "n": "100", "d_model": "32", "h": "2", **params}, "pages/attention.py")
    assert not at.exception and not at.error
    assert any(words in w.value for w in at.warning), [w.value for w in at.warning]
    assert explorer(at)[0]["window"] == window


def test_a_trained_models_zoom_past_its_last_token_moves_to_the_last_one():
    from mha_core.pretrained import load_minilm

    load_pretrained(load_minilm)
    text = " ".join(["the cat sat on the mat"] * 15)
    at = run_app({"model": "all-MiniLM-L6-v2", "text": text, "zoom_query": "900"}, "pages/attention.py")
    assert not at.exception
    n = at.session_state["view"][1].n
    assert explorer(at)[0]["window"][:2] == [n - 1, n]
    assert zoom_moved(900, n) in [i.value for i in at.info], [i.value for i in at.info]


def test_the_explorers_data_is_small_enough_to_send():
    """The pooled overviews are float32 block means; the zoom window's cells are the engine's own float32."""
    at = run_app({"input": "random", "n": "600", "d_model": "64", "h": "4"}, "pages/attention.py")
    header, arrays, _ = explorer(at)
    assert header["step"] == 3 and arrays["1/weights"].dtype == np.float32
    trace = at.session_state["view"][1].trace
    np.testing.assert_array_equal(arrays["1/zoom/weights"], trace.weights[:, :64, :64])
    assert explorer_bytes(at) < explorer_budget(4, 600, 600) < trace.weights.nbytes
    assert json.dumps(figures(at))  # the other charts: plain JSON
