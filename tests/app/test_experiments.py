"""The experiments on heads in the app (AppTest): switched-off heads, planted heads, the √d_k switch, grouped-query
heads and cross-attention; each control and URL parameter, bad values included.

What the app computes is its example (reference/test_example.py checks it against torch and transformers); here each
experiment's figures and numbers are checked against the example's own inputs and weights, run again through the
engine with the experiment undone, and against formulas written out here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import mha_core as mc
from mha_app.copy import experiments as say
from mha_app.copy import links
from mha_app.copy.sidebar import PAIR_SOURCE
from mha_app.copy.steps import concat_check, how_checked
from mha_app.state.settings import control
from mha_core.analysis import reference
from mha_core.experiments import ablation, plant, scaling
from mha_core.figures import experiments as xfig
from mha_core.teaching.notation import score_product
from mha_core.teaching.published import preset
from screen import (
    as_array,
    as_figure,
    assert_clean,
    explorer,
    explorer_matrix,
    figure_titled,
    figures,
    run_app,
    share_link,
    texts,
)

REAL = "all-MiniLM-L6-v2"
CAT = "The cat sat on the mat because it was tired."
FRENCH = "Le chat s'est assis sur le tapis."


def grid(at) -> list[np.ndarray]:
    """The attention page's weights of every head, as its explorer is sent them."""
    header, arrays, view = explorer(at)
    return list(arrays[f"{view['layer']}/weights"])


def shown_output(at) -> np.ndarray:
    """The output page's output matrix, as drawn (second panel of "Input and output", in the expander it opens: its
    content is computed only when open)."""
    if not at.session_state["contributions_box"]:
        at.session_state["contributions_box"] = True
        at.run()
    return as_array(figure_titled(at, "Input and output")["data"][1]["z"])


def example(at):
    """The example the app computed for this run (inputs, weights, trace)."""
    return at.session_state["view"][1]


def title(fig) -> str:
    """A figure function's title, as the page's figure_titled looks it up."""
    return as_figure(fig).layout.title.text


def rerun(ex, factors=None) -> np.ndarray:
    """The example's output again, through the engine in float64, with these head factors (None: every head)."""
    return mc.forward(ex.trace.x.astype(np.float64), ex.weights.astype(np.float64), ex.cfg,
                      kv=ex.trace.x_kv.astype(np.float64), head_mask=factors).output


# --- switched-off heads ----------------------------------------------------------------------------------------

ABLATE = {"input": "random", "n": "5", "d_model": "32", "h": "4", "seed": "2", "ablate": "2,4"}


def test_ablation_in_the_app_reports_the_change_of_the_output():
    at = run_app(ABLATE, "pages/output.py")
    assert_clean(at)
    ex = example(at)
    full, off = rerun(ex), rerun(ex, factors=[1, 0, 1, 0])
    np.testing.assert_allclose(shown_output(at), off, atol=1e-5)
    change = figure_titled(at, "How far each token's output moved with heads 2 and 4")
    bars = {trace["name"]: as_array(trace["y"]) for trace in change["data"] if trace["type"] == "bar"}
    np.testing.assert_allclose(bars["|change|"], np.linalg.norm(off - full, axis=1), atol=1e-5)
    np.testing.assert_allclose(bars["|full output|"], np.linalg.norm(full, axis=1), atol=1e-5)
    cosine = as_array(next(t for t in change["data"] if t["type"] == "scatter")["y"])
    np.testing.assert_allclose(cosine, (off * full).sum(1) / np.linalg.norm(off, axis=1) / np.linalg.norm(full, axis=1),
                               atol=1e-5)
    assert any("Michel et al. 2019" in m.value for m in at.markdown)


def test_rank_the_heads_button_shows_the_change_of_each_head_alone():
    at = run_app(ABLATE, "pages/output.py")
    assert not [f for f in figures(at) if f["layout"]["title"]["text"].startswith("Switching one head off")]
    at.button(key="rank").click().run()
    assert_clean(at)
    bars = as_array(figure_titled(at, "Switching one head off")["data"][0]["y"])
    ex = example(at)
    full = rerun(ex)
    for i in range(4):
        factors = np.ones(4)
        factors[i] = 0
        alone = rerun(ex, factors)
        assert bars[i] == pytest.approx(np.linalg.norm(alone - full, axis=1).mean(), abs=1e-5), i
    at.number_input(key="query").set_value(3).run()  # another interaction keeps the ranking on screen
    assert figure_titled(at, "Switching one head off")
    at.multiselect(key="ablate").set_value([1]).run()  # a new computation asks for a new click
    assert not [f for f in figures(at) if f["layout"]["title"]["text"].startswith("Switching one head off")]


def test_switched_off_heads_are_zero_columns_of_the_concatenation_and_noted_on_step_2():
    at = run_app({**ABLATE, "head": "2"}, "pages/concatenation.py")
    assert_clean(at)
    concat = as_array(figure_titled(at, "Concat(")["data"][0]["z"])
    assert (concat[:, 8:16] == 0).all() and (concat[:, 24:32] == 0).all() and (concat[:, :8] != 0).any()
    assert concat_check(True, heads_off=True) in [c.value for c in at.caption]
    at.switch_page("pages/attention.py").run()
    assert any("Head 2 is switched off" in i.value for i in at.info)


def test_ablate_control_writes_the_url_and_the_share_link():
    at = run_app({"input": "random", "n": "4"}, "pages/output.py")
    assert at.multiselect(key="ablate").value == []
    at.multiselect(key="ablate").set_value([5, 2]).run()
    assert_clean(at)
    assert at.query_params["ablate"] in ("2,5", ["2,5"]), "one comma-separated parameter, sorted"
    assert "ablate=2,5" in share_link(at)
    ex = example(at)
    assert figure_titled(at, title(xfig.output_change_figure(ablation.output_change(ex.trace, ex.weights), ex.tokens,
                                                             (2, 5))))
    at.selectbox(key="h").set_value(4).run()  # head 5 no longer exists: it leaves the selection
    assert at.multiselect(key="ablate").value == [2]
    assert "ablate=2" in share_link(at) and "2,5" not in share_link(at)
    at.multiselect(key="ablate").set_value([]).run()
    assert "ablate" not in share_link(at)


# --- the trained model -----------------------------------------------------------------------------------------

def test_trained_model_ablation_reaches_every_later_layer_and_the_sentence_vector(minilm_run):
    at = run_app({"model": REAL, "text": CAT, "layer": "3", "ablate": "2,5"}, "pages/output.py")
    assert_clean(at)
    mask = np.ones((6, 12))
    mask[2, [1, 4]] = 0
    full, off = minilm_run(CAT).hidden_states, minilm_run(CAT, head_mask=mask).hidden_states
    relative = np.stack([np.linalg.norm(off[l] - full[l], axis=1) / np.linalg.norm(full[l], axis=1)
                         for l in range(1, 7)])                     # (6 layers, n)
    fig = figure_titled(at, "Heads switched off in layer 3")
    np.testing.assert_allclose(as_array(fig["data"][0]["y"]), relative.mean(axis=1), atol=1e-4)
    np.testing.assert_allclose(as_array(fig["data"][1]["y"]), relative.max(axis=1), atol=1e-4)
    assert (as_array(fig["data"][0]["y"])[:2] == 0).all()

    def vector(hidden):
        mean = hidden.astype(np.float64).mean(axis=0)
        return mean / np.linalg.norm(mean)

    rug = "A tired cat was lying on the rug."
    assert at.text_input(key="compare").value == rug
    full_rug, off_rug = minilm_run(rug).hidden_states, minilm_run(rug, head_mask=mask).hidden_states
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["Cosine similarity, every head"]) == pytest.approx(vector(full[-1]) @ vector(full_rug[-1]),
                                                                           abs=1e-4)
    assert float(metrics["With heads 2 and 5 off"]) == pytest.approx(vector(off[-1]) @ vector(off_rug[-1]), abs=1e-4)


def test_trained_model_ranking_and_compare_sentence(minilm_run):
    at = run_app({"model": REAL, "text": CAT, "layer": "6"}, "pages/output.py")
    at.button(key="rank").click().run()
    assert_clean(at)
    turned = as_array(figure_titled(at, say.sentence_vector_ranking_title(6))["data"][0]["y"])
    full = minilm_run(CAT).hidden_states[-1].astype(np.float64)
    for i in (0, 7):
        mask = np.ones((6, 12))
        mask[5, i] = 0
        off = minilm_run(CAT, head_mask=mask).hidden_states[-1].astype(np.float64)
        a, b = full.mean(0), off.mean(0)
        assert turned[i] == pytest.approx(1 - a @ b / np.linalg.norm(a) / np.linalg.norm(b), abs=1e-5)
    at.text_input(key="compare").set_value("Stock prices fell sharply today.").run()
    assert_clean(at)
    assert "compare=Stock" in share_link(at)


def test_trained_model_ablation_follows_the_layer_on_view():
    """With heads off, the layer on view decides the computation: the switched-off block moves with it."""
    at = run_app({"model": REAL, "text": "Heads can be pruned.", "layer": "2", "ablate": "1"},
                 "pages/concatenation.py")
    assert_clean(at)
    assert (as_array(figure_titled(at, "Concat(")["data"][0]["z"])[:, :32] == 0).all()
    at.selectbox(key="layer").set_value(4).run()
    assert_clean(at)
    assert any("layer 4 of 6" in c.value for c in at.caption)
    assert (as_array(figure_titled(at, "Concat(")["data"][0]["z"])[:, :32] == 0).all()
    at.switch_page("pages/model_view.py").run()
    assert any("of layer 4 is switched off" in i.value for i in at.info)


def test_the_cache_key_has_the_layer_only_when_heads_are_off(monkeypatch):
    from mha_app.run import compute
    from mha_app.state.settings import Spec

    built = []
    real = compute.build_example
    monkeypatch.setattr(compute, "build_example", lambda spec, model, layer=1: built.append(layer) or real(
        spec, model, layer=layer))
    compute._example.clear()
    plain = Spec(model=REAL, text="One two three.")
    for layer in (1, 4, 6):
        assert compute.example(plain, layer).layer == layer
    assert built == [1], "without switched-off heads one run serves every layer"
    off = Spec(model=REAL, text="One two three.", ablate=(3,))
    for layer in (2, 5, 2):
        ex = compute.example(off, layer)
        assert ex.layer == layer and ex.trace.head_mask[2] == 0
    assert built == [1, 2, 5], "with them, each layer on view is its own computation (and cached)"


# --- planted heads ---------------------------------------------------------------------------------------------

def test_planted_head_obeys_its_rule_in_the_heatmap():
    params = {"d_model": "128", "h": "8", "plant": "previous", "plant_head": "3", "strength": "4", "head": "3",
              "stage": "scaled scores"}
    at = run_app(params, "pages/attention.py", opened={"attention_tab": "Plant a head"})
    assert_clean(at)
    weights = grid(at)[2]
    m = weights.shape[1]
    rule_share = math.exp(4) / (math.exp(4) + m - 1)
    for i in range(1, m):
        assert weights[i, i - 1] == pytest.approx(rule_share, abs=1e-5)
    np.testing.assert_allclose(weights[0], 1 / m, atol=1e-6)  # the first token has no previous one
    scores = explorer_matrix(at, "scaled", 3)
    np.testing.assert_allclose(scores, 4 * np.eye(m, k=-1), atol=1e-4)
    assert any("The fit is exact" in s.value for s in at.success)
    assert any("columns 33–48 of W_Q" in m.value for m in at.markdown)  # head 3's block, d_k = 16
    ex = example(at)
    fit = plant.fit(ex.trace, 2, "previous", 4.0)
    assert figure_titled(at, title(xfig.plant_figure(ex.trace, 2, fit, ex.tokens)))


def test_planting_with_more_keys_than_d_k_says_how_close_it_got():
    at = run_app({"d_model": "64", "h": "8", "plant": "self", "plant_head": "1"}, "pages/attention.py",
                 opened={"attention_tab": "Plant a head"})
    assert_clean(at)
    assert any("only the closest one" in w.value and "m = 11 > d_k = 8" in w.value for w in at.warning)


def test_plant_controls_change_the_head():
    at = run_app({"d_model": "128", "h": "8"}, "pages/attention.py")
    assert "plant_head" not in {w.key for w in at.selectbox}
    at.selectbox(key="plant").set_value("first").run()
    at.selectbox(key="plant_head").set_value(5).run()
    at.slider(key="strength").set_value(8.0).run()
    assert_clean(at)
    first_col = grid(at)[4][:, 0]
    m = grid(at)[4].shape[1]
    np.testing.assert_allclose(first_col, math.exp(8) / (math.exp(8) + m - 1), atol=1e-5)
    link = share_link(at)
    assert "plant=first" in link and "plant_head=5" in link and "strength=8" in link


# --- the √d_k switch -------------------------------------------------------------------------------------------

def test_scale_none_removes_the_scaling_and_the_page_compares_both():
    params = {"input": "random", "n": "6", "d_model": "64", "h": "4", "seed": "1", "scale": "none"}
    at = run_app({**params, "stage": "scaled scores"}, "pages/attention.py",
                 opened={"attention_tab": "Why √d_k?"})
    assert_clean(at)
    trace = example(at).trace
    raw = trace.q.astype(np.float64) @ trace.k.astype(np.float64).transpose(0, 2, 1)  # (4, 6, 6), unscaled

    def softmax(s):
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    weights = softmax(raw)
    for i, z in enumerate(grid(at)):
        np.testing.assert_allclose(z, weights[i], atol=1e-5)
    assert explorer(at)[2]["stage"] == "scaled"
    np.testing.assert_array_equal(explorer_matrix(at, "raw", 1), explorer_matrix(at, "scaled", 1))
    assert not any(r"\sqrt" in latex.value for latex in at.latex if "head_i" in latex.value)
    comparison = figure_titled(at, "Head 1: the same raw scores, softmaxed with and without")
    np.testing.assert_allclose(as_array(comparison["data"][0]["z"]), softmax(raw[0] / 4), atol=1e-5)  # √16 = 4
    np.testing.assert_allclose(as_array(comparison["data"][1]["z"]), weights[0], atol=1e-5)
    metrics = {m.label: m.value for m in at.metric}
    peak = float(metrics["mean largest weight, without"])  # the label says what the number is: a mean
    assert say.scaling_over(4) in [c.value for c in at.caption]
    assert peak == pytest.approx(weights.max(axis=-1).mean(), abs=1e-3)
    at.radio(key="scale").set_value("sqrt_dk").run()
    assert "scale=" not in share_link(at)
    assert any(r"\sqrt{16}" in latex.value for latex in at.latex)


def test_scaling_comparison_is_shown_for_the_trained_model_too():
    at = run_app({"model": REAL, "text": CAT}, "pages/attention.py", opened={"attention_tab": "Why √d_k?"})
    assert_clean(at)
    ex = example(at)
    assert ex.cfg.d_k == 32
    assert figure_titled(at, title(xfig.scale_summary_figure(scaling.compare_scaling(ex.trace, ex.cfg, 0))))
    assert "scale" not in {w.key for w in at.radio}


# --- grouped-query attention -----------------------------------------------------------------------------------

GQA = {"input": "random", "n": "6", "d_model": "48", "h": "6", "kv_heads": "2", "seed": "3"}


def test_gqa_in_the_app_names_each_heads_kv_head_and_is_checked_against_sdpa():
    at = run_app(GQA, "pages/attention.py")
    assert_clean(at)
    header = explorer(at)[0]
    assert header["heads"] == 6 and header["group_size"] == 3  # the explorer names K/V head i // 3 + 1
    assert len(grid(at)) == 6 and example(at).trace.k.shape == (2, 6, 8)  # 6 query heads read 2 K/V heads
    # a group is its row of panels, not its titles' colour (head colours mean heads)
    assert "one group: the 3 query heads" in texts(at, "caption") and "colour" not in texts(at, "caption")
    at.switch_page("pages/output.py").run()
    np.testing.assert_allclose(shown_output(at), example(at).trace.output, atol=1e-6)
    at.session_state["input_box"] = True  # the expander that holds the inputs
    at.switch_page("pages/overview.py").run()
    assert how_checked(reference.HOW[reference.PER_HEAD]) in [c.value for c in at.caption]


def test_gqa_texts_write_the_scores_with_the_kv_heads_index():
    """With 6 query heads on 2 K/V heads the scores are Q_i K_jᵀ under "Why √d_k?" and for a planted head 5: head 5
    reads K/V head 2, and there is no K_5."""
    at = run_app(GQA, "pages/attention.py", opened={"attention_tab": "Why √d_k?"})
    ex, head = example(at), at.session_state["view"][0].view.head - 1
    cmp = scaling.with_head(scaling.compare_scaling(ex.trace, ex.cfg, 0), ex.trace, ex.cfg, head)
    product = score_product(ex.cfg.group_size)
    assert product == "Q_i K_jᵀ"
    assert say.scaling_text(ex.cfg.d_k, product, cmp.raw_std, float(f"{cmp.q_rms:.3g}"), float(f"{cmp.k_rms:.3g}"),
                            False) in [m.value for m in at.markdown]
    planted = {**GQA, "plant": "previous", "plant_head": "5"}
    at = run_app(planted, "pages/attention.py", opened={"attention_tab": "Plant a head"})
    assert_clean(at)
    fit = next(m.value for m in at.markdown if "by the best fit" in m.value)
    assert "Q_{5} K_{2}^\\top" in fit and "K_{5}" not in fit, fit


def test_gqa_projection_shows_narrow_w_k_and_the_savings():
    at = run_app(GQA, "pages/projection.py", opened={"projection_tab": "W_K → K_j", "kv_box": True})
    assert_clean(at)
    d_k = 8
    assert as_array(figure_titled(at, "W_K (48 × 16)")["data"][0]["z"]).shape == (48, 2 * d_k)
    assert figure_titled(at, title(xfig.kv_groups_figure(6, 2)))
    # the figure joins each query head to its K/V head by a grey line; no colour is shared between them
    words = texts(at, "markdown")
    assert "The lines mark the groups" in words and "colours mark" not in words
    metrics = {m.label: m.value for m in at.metric}
    # W_K and W_V (2*d_k x 48) and their biases (2*d_k,): written out.
    assert metrics["K and V parameters"] == f"{2 * (2 * d_k * 48 + 2 * d_k):,}"
    # K and V, 2 heads of d_k numbers, 2 bytes each, for one token in one layer.
    assert metrics["K/V cache per token and layer (16-bit)"] == f"{2 * 2 * d_k * 2} bytes"
    assert metrics["Saving on K, V and the cache"] == "3×"
    at.session_state["projection_tab"] = "W_Q → Q_i"  # the tab of W_Q: its content is computed only when open
    at.run()
    assert as_array(figure_titled(at, "W_Q (48 × 48)")["data"][0]["z"]).shape == (48, 6 * d_k)


def test_kv_heads_control_offers_the_divisors_of_h_and_resets_when_h_changes():
    at = run_app({"d_model": "48", "h": "6"}, "pages/projection.py", opened={"kv_box": True})
    box = at.selectbox(key="kv_heads")
    assert box.value == 6 and [int(o) for o in box.options] == [6, 3, 2, 1]
    box.set_value(1).run()
    assert_clean(at)
    assert "kv_heads=1" in share_link(at)
    assert figure_titled(at, title(xfig.kv_groups_figure(6, 1)))
    # one K/V head is multi-query attention (Shazeer 2019); Llama 2 70B shares 8 K/V heads, not one
    said = texts(at, "markdown")
    llama = preset("llama-2-70b")
    assert say.kv_sharing_text(6, 1, 8, llama.name, llama.n_heads, llama.n_kv_heads) in said  # d_k = 48 / 6
    assert (llama.name, llama.n_heads, llama.n_kv_heads) == ("Llama 2 70B", 64, 8) and "Llama 2 70B uses it" not in said
    at.selectbox(key="h").set_value(4).run()
    assert_clean(at)
    assert at.selectbox(key="kv_heads").value in (1, 4)
    at.selectbox(key="kv_heads").set_value(4).run()
    assert "kv_heads" not in share_link(at), "kv_heads = h is plain multi-head attention, the default"


# --- cross-attention -------------------------------------------------------------------------------------------

def test_cross_attention_in_the_app_reads_keys_and_values_from_the_source_sentence():
    params = {"input": "pair", "text": CAT, "text_q": FRENCH, "d_model": "32", "h": "4", "pad": "2"}
    at = run_app(params, "pages/attention.py")
    assert_clean(at)
    queries, keys = mc.tokenize(FRENCH), mc.tokenize(CAT)  # the translation being written reads the source
    n, m = len(queries), len(keys)
    assert n != m
    weights = example(at).trace.weights
    assert weights.shape == (4, n, m) and not weights[..., -2:].any(), "the last 2 keys are padding"
    header, arrays, _ = explorer(at)
    np.testing.assert_allclose(arrays["1/weights"], weights, atol=1e-6)
    assert header["key_tokens"] == keys, "keys: the source sentence"
    assert header["tokens"] == queries
    assert any("Cross-attention" in i.value for i in at.info)
    at.switch_page("pages/output.py").run()
    np.testing.assert_allclose(shown_output(at), example(at).trace.output, atol=1e-6)
    at.session_state["input_box"] = True  # the expander that holds the inputs
    at.switch_page("pages/projection.py").run()
    assert figure_titled(at, "Input Y (keys and values)")
    assert any("Y" in latex.value and "%d" % m in latex.value for latex in at.latex)


def test_pair_input_controls():
    at = run_app({"d_model": "32", "h": "4"}, "pages/attention.py")
    at.radio(key="input").set_value("pair").run()
    assert_clean(at)
    assert at.checkbox(key="causal").disabled
    at.text_area(key="text_q").set_value("Bonjour tout le monde").run()
    assert_clean(at)
    assert len(grid(at)[0]) == 4, "one row per query: the sentence being written"
    assert "text_q=Bonjour" in share_link(at)


def test_cross_attention_reads_the_source_first():
    """The source (keys and values) is the English sentence, first on every page, and the sentence being written
    (the queries) the French one: a decoder produces the second language from the first."""
    at = run_app({"input": "pair", "d_model": "32", "h": "4"}, "pages/overview.py",
                 opened={"overview_tab": "The tokens"})
    ex = example(at)
    written = mc.tokenize("Le chat s'est assis sur le tapis parce qu'il était fatigué.")
    assert ex.key_tokens == mc.tokenize(CAT) and ex.tokens == written, "English source, French written"
    captions = [c.value for c in at.caption]
    source = next(i for i, c in enumerate(captions) if c.startswith("The source sentence's tokens"))
    being_written = next(i for i, c in enumerate(captions) if c.startswith("The sentence being written"))
    assert source < being_written, "the source is listed first"
    labels = [t.label for t in at.sidebar.text_area]
    assert labels.index(PAIR_SOURCE) < labels.index(
        "The sentence being written: the queries")


# --- every new URL parameter, bad values included -------------------------------------------------------------
# Each value's own message is checked in unit/test_url.py; here that the page warns, still draws, and that each
# control falls back to a value that works.

@pytest.mark.parametrize("params, warnings, fallback", [
    ({"ablate": "2,x", "kv_heads": "abc", "plant": "previous", "strength": "inf", "plant_head": "99", "scale": "sqrt",
      "input": "pair", "causal": "true"},
     ["`ablate` lists", links.not_a_number("kv_heads", control("kv_heads").what, "abc", whole=True),
      "`strength` should be a number", links.out_of_bounds("plant_head", "99", 1, 16, control("plant_head").what, 99),
      "`scale` must be one of", "causal mask is off"],
     {"ablate": [2], "kv_heads": 8, "plant": "previous", "strength": 4.0, "plant_head": 1, "scale": "sqrt_dk",
      "causal": False}),
    ({"plant": "foo", "kv_heads": "5", "ablate": "9", "plant_head": "9"},
     [links.not_a_choice("plant", control("plant").choices, "foo"), "must divide h = 8; 5 does not", "only 8 heads"],
     {"plant": "none", "kv_heads": 8, "ablate": []}),
    ({"input": "tiny", "kv_heads": "1", "ablate": "3"}, ["applies to random weights", "only 2 heads"], {"ablate": []}),
    ({"model": REAL, "plant": "previous", "scale": "none", "ablate": "13"},
     ["applies to random weights", "trained with the 1/√d_k", "only 12 heads"], {"ablate": []}),
], ids=["random weights", "more heads than there are", "tiny", "trained"])
def test_bad_experiment_parameters_warn_and_fall_back(params, warnings, fallback):
    at = run_app(params, "pages/output.py")
    assert not at.exception, [e.value for e in at.exception]
    shown = [w.value for w in at.warning]
    for words in warnings:
        assert any(words in w for w in shown), (words, shown)
    assert figures(at)
    for key, value in fallback.items():
        widget = next(w for w in at.sidebar if getattr(w, "key", None) == key)
        assert widget.value == value, (key, widget.value)


@pytest.mark.parametrize("page", ["pages/overview.py", "pages/projection.py", "pages/attention.py",
                                  "pages/concatenation.py", "pages/output.py"])
@pytest.mark.parametrize("params", [
    {"input": "pair", "kv_heads": "2", "ablate": "1,8", "plant": "next", "plant_head": "8", "strength": "12.5",
     "scale": "none", "pad": "1"},
    {"input": "tiny", "ablate": "1,2", "plant": "self", "scale": "none"},
], ids=["pair-everything", "tiny-all-off"])
def test_every_step_page_renders_with_the_experiments_together(page, params):
    """The experiments one at a time are in the page × mode matrix (test_every_page.py); here all at once."""
    at = run_app(params, page)
    assert_clean(at)
    assert figures(at)
    link = share_link(at)
    for name, value in params.items():
        assert f"{name}={value}" in link, (name, link)
