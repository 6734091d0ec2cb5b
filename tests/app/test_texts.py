"""What the pages say holds in every mode (random weights on a sentence or on random input, the tiny example, the
trained model): formulas that match what was computed, and the words around them."""

from __future__ import annotations

import re

import numpy as np
import pytest

from app_pages import PRETRAINED, trace_pages
from mha_app.copy.attention import entropy_caption
from mha_app.copy.cost import what_grows
from mha_app.copy.example import describe
from mha_app.copy.models import input_source
from mha_app.copy.notes import switch_label, untrained_line
from mha_app.copy.sidebar import query_caption
from mha_app.state.settings import Spec
from mha_core.pretrained import load_minilm
from modes import MODES as MATRIX
from screen import as_array, assert_clean, explorer, figure_titled, mosaic_outline, run_app, texts

# The modes of the page × mode matrix (modes.py) these texts are read in, by the names used here.
MODES = {"sentence": "default", "random": "random input", "tiny": "tiny", "trained": PRETRAINED}
PARAMS = {mode: MATRIX[name] for mode, name in MODES.items()}
RANDOM_MODES = ("sentence", "random")
BIAS_PAGES = ("pages/overview.py", "pages/projection.py", "pages/output.py")


@pytest.fixture(scope="module")
def pages(page_run):
    """pages(mode, page) -> the shared run of that page in that mode (conftest.page_run)."""
    return lambda mode, page: page_run(MODES[mode], page)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("page", trace_pages())
def test_step_page_texts_hold_in_every_mode(pages, page, mode):
    at = pages(mode, page)
    assert_clean(at)
    captions = texts(at, "caption")
    # Random weights: the patterns mean nothing, and the trained model is one click away.
    untrained = untrained_line(Spec()) in captions
    assert untrained == (mode in RANDOM_MODES), captions
    assert (switch_label(PRETRAINED) in [b.proto.label for b in at.button]) == (mode in RANDOM_MODES)
    # The attention formula adds M: M is defined on the same page (its formula, or the page's symbols).
    latex = texts(at, "latex")
    if "+ M" in latex:
        defined = "M_{ts}" in latex and r"-\infty" in latex and "M = 0" in latex
        assert defined or "the mask: $M_{ts} = 0$" in texts(at, "markdown"), latex
    # Biases appear exactly when the weights have them (the tiny example has none), and the page says what they are.
    if page in BIAS_PAGES:
        assert ("b^{" in latex) == (mode != "tiny"), latex
        words = {"tiny": "no bias terms", "trained": "learned in training"}.get(mode, "they are all 0")
        assert words in texts(at, "caption"), texts(at, "caption")
    # Each code panel has a line under it on the names a student has not met.
    names = {"pages/projection.py": "`x_kv` is", "pages/attention.py": "`cfg.group_size` is",
             "pages/concatenation.py": "`transpose(1, 0, 2)` puts", "pages/output.py": "`linear(concat, w.W_O, w.b_O)`"}
    if page in names:
        assert names[page] in texts(at, "caption"), texts(at, "caption")


def test_default_sizes_are_all_different(pages):
    """d_model = 64, h = 8 made d_k = h = 8, so every 8 on screen was ambiguous."""
    at = pages("sentence", "pages/overview.py")
    settings, ex = at.session_state["view"]
    assert (ex.n, ex.cfg.d_model, ex.cfg.n_heads, ex.cfg.d_k) == (11, 128, 8, 16)
    assert describe(settings, ex) in [c.value for c in at.caption]
    assert "1/√16 = 0.2500" in texts(pages("sentence", "pages/attention.py"), "markdown")


def test_tiny_formulas_have_no_bias_and_random_ones_do(pages):
    tiny = texts(pages("tiny", "pages/projection.py"), "latex")
    assert "Q_i = X\\,W^{Q}_i," in tiny and "b^" not in tiny
    assert "+ b^{Q}_i" in texts(pages("sentence", "pages/projection.py"), "latex")


@pytest.mark.parametrize("mode", MODES)
def test_overview_counts_the_cost_of_h_heads_against_one(pages, mode):
    at = run_app(PARAMS[mode], "pages/overview.py", opened={"overview_tab": "What it costs"})
    assert "keeps the total cost close" not in texts(at, "markdown")
    table = at.dataframe[0].value
    n = int(re.search(r"(\d+) tokens", texts(at, "caption")).group(1))
    d_model, h = {"tiny": (4, 2), "trained": (384, 12)}.get(mode, (128, 8))
    bias = mode != "tiny"
    # Counted here by hand: each projection is d_model x d_model (+ d_model biases) whatever h is; the scores and
    # the weighted sum are n * n * d_model multiply-adds either way.
    projection, products = d_model * d_model + bias * d_model, n * n * d_model
    column = {name: list(table[name]) for name in table.columns}
    for heads in (h, 1):
        assert column[f"parameters, h = {heads}"][:7] == [f"{v:,}" for v in [projection] * 3 + [0, 0, 0, projection]]
        assert column[f"multiply-adds, h = {heads}"][:7] == [
            f"{v:,}" for v in [n * d_model * d_model] * 3 + [products, products, 0, n * d_model * d_model]]
        assert column[f"parameters, h = {heads}"][-1] == f"{4 * projection:,}"
    grows = texts(at, "caption")
    assert what_grows(n, n, h) in grows, grows


@pytest.mark.parametrize("mode, layer", [("sentence", 1), ("random", 1), ("tiny", 1), ("trained", 1), ("trained", 3)])
def test_overview_and_projection_say_where_x_comes_from(pages, mode, layer):
    """Both pages say where the rows of X come from, for the example's spec and layer (the words for each mode:
    unit/test_copy_models.py)."""
    opened = {"pages/overview.py": {"overview_tab": "The tokens"}, "pages/projection.py": {"input_box": True}}
    for page in ("pages/overview.py", "pages/projection.py"):
        params = {"model": PRETRAINED, "layer": str(layer)} if mode == "trained" else PARAMS[mode]
        at = run_app(params, page, opened=opened[page])
        settings, ex = at.session_state["view"]
        assert ex.layer == layer
        captions = texts(at, "caption")
        assert input_source(settings.spec, layer) in captions, captions


def test_the_sentence_box_says_how_each_model_splits_text(pages):
    trained = pages("trained", "pages/overview.py").text_area(key="text").proto.help
    assert "WordPiece" in trained and "“token”, “##ization”" in trained and "lower-cases" in trained
    assert "[CLS]" in trained and "[SEP]" in trained
    random = pages("sentence", "pages/overview.py").text_area(key="text").proto.help
    assert "words and punctuation marks" in random and "WordPiece" not in random


def test_special_tokens_and_word_pieces_are_explained_where_they_first_appear():
    # query=1: a link that names [CLS] as its query keeps it (the default is now the first word)
    at = run_app({"model": PRETRAINED, "text": "Tokenization matters.", "query": "1"},
                 opened={"overview_tab": "The tokens"})
    assert_clean(at)
    tokens = at.dataframe[0].value
    notes = dict(zip(tokens["token"], tokens["what it is"], strict=True))
    assert list(tokens["token"]) == ["[CLS]", "token", "##ization", "matters", ".", "[SEP]"]
    assert "added at the start" in notes["[CLS]"] and "added at the end" in notes["[SEP]"]
    assert "word piece" in notes["##ization"] and notes["matters"] == ""
    assert "“classification”" in texts(at, "caption") and "“separator”" in texts(at, "caption")
    assert any(c.value.startswith(query_caption(1, "[CLS]") + " (special token") for c in at.caption)
    plain = run_app(opened={"overview_tab": "The tokens"})
    assert list(plain.dataframe[0].value.columns) == ["position", "token"]


@pytest.mark.parametrize("mode", MODES)
def test_attention_page_gives_both_reasons_for_the_scale_and_reads_entropy_right(mode):
    scale = run_app(PARAMS[mode], "pages/attention.py", opened={"attention_tab": "Why √d_k?"})
    markdown = texts(scale, "markdown")
    assert "variance d_k" in markdown and "extremely small gradients" in markdown and "Vaswani et al." in markdown
    focus = run_app(PARAMS[mode], "pages/attention.py", opened={"attention_tab": "How focused?"})
    captions = texts(focus, "caption")
    ex = focus.session_state["view"][1]
    blocked = ex.trace.mask is not None and bool(ex.trace.mask.any())
    assert entropy_caption(ex.n, cross=False, blocked=blocked) in captions


def test_model_view_reads_its_colours_right_and_offers_a_large_layer():
    at = run_app({"model": PRETRAINED, "text": "The cat sat on the mat.", "layer": "2"}, "pages/model_view.py")
    assert_clean(at)
    markdown = texts(at, "markdown")
    assert "darker = more weight" in markdown and "bright" not in markdown and "dark first or last columns" in markdown
    dark = texts(run_app({"model": PRETRAINED, "text": "The cat sat on the mat.", "layer": "2"}, "pages/model_view.py",
                         context={"theme": "dark"}), "markdown")  # more weight is brighter on the dark page
    assert "brighter = more weight" in dark and "bright first or last columns" in dark and "dark" not in dark
    large = figure_titled(at, "Layer 2: all 12 heads")
    run = load_minilm().run("The cat sat on the mat.")
    assert len(large["data"]) == 12 and large["data"][0]["x"][0] == "1 [CLS]"
    np.testing.assert_allclose(as_array(large["data"][4]["z"]), run.layers[1].weights[4], atol=1e-6)
    assert mosaic_outline(figure_titled(at, "All 6 × 12 heads")) == (2, 1)  # around the chosen layer's panel


def test_head_summary_reads_as_a_split_and_says_what_it_cannot_show():
    at = run_app({"model": PRETRAINED, "text": "The cat sat on the mat because it was tired."},
                 "pages/head_summary.py")
    assert_clean(at)
    words = texts(at, "markdown", "caption")
    assert "exactly one other token" not in words and "*specialised*" not in words
    for phrase in ("left out as queries", "sum to 1", "which may be the token itself", "grows with sentence length",
                   "Clark et al. (2019", "no-op", "Voita et al. (2019)", "Michel et al. (2019)", "cannot say"):
        assert phrase in words, phrase
    counts = {m.label: m.value for m in at.metric}
    assert sum(int(v.split(" of ")[0]) for v in counts.values()) == 72
    assert int(counts["heads: special token"].split()[0]) > 0
    split = figure_titled(at, "Layer 1 (chosen in the sidebar)")
    totals = np.sum([as_array(bar["x"]) for bar in split["data"]], axis=0)
    np.testing.assert_allclose(totals, 1, atol=1e-6)
    patterns = set(at.dataframe[0].value["pattern"])
    assert "parks on [CLS]" in patterns and "[CLS]" not in patterns


@pytest.mark.parametrize("mode", RANDOM_MODES)
def test_the_switch_on_a_step_page_opens_the_trained_model(mode):
    at = run_app(PARAMS[mode], "pages/attention.py")
    at.button(key="switch_to_trained").click().run()
    assert_clean(at)
    assert at.radio(key="model").value == PRETRAINED
    assert explorer(at)[0]["heads"] == 12


@pytest.mark.parametrize("mode, wanted, unwanted", [
    ("cross-attention", [r"\mathrm{MultiHead}(X, Y)", r"K_i = Y\,W^{K}_i"], []),
    ("grouped K/V", [r"K_{\lceil i/4 \rceil}", r"K_j = X\,W^{K}_j"], []),
    ("no scaling", [r"\mathrm{softmax}\!\left(Q_i K_i^\top + M\right)"], [r"\sqrt"]),
    ({"input": "tiny", "scale": "none"}, ["Q_i K_i^\\top + M"], ["b^", r"\sqrt"]),
])
def test_formulas_follow_the_experiments(page_run, mode, wanted, unwanted):
    """In the matrix's modes (modes.py), and the tiny example unscaled."""
    for page in ("pages/overview.py", "pages/attention.py"):
        at = run_app(mode, page) if isinstance(mode, dict) else page_run(mode, page)
        assert_clean(at)
        latex = texts(at, "latex")
        if page == "pages/attention.py":
            wanted = [w for w in wanted if "W^{K}" not in w and "MultiHead" not in w]
        assert all(w in latex for w in wanted), (page, latex)
        assert not any(u in latex for u in unwanted), (page, latex)
        if page == "pages/overview.py":  # its formulas tab, open first; the attention page's mask is in a tab
            assert "M_{ts}" in latex


def test_a_planted_head_is_named_in_the_random_weights_note_and_its_bias_explained():
    at = run_app({"plant": "previous", "plant_head": "3"}, "pages/projection.py")
    assert_clean(at)
    assert "(but head 3, planted by hand)" in texts(at, "caption")
    assert "planted head's part of b_Q" in texts(at, "caption")


MAX_WORDS = 125  # "at most about 120 words", as tests/browser/test_pages.py counts them on screen
ICON_OR_MATH = re.compile(r":material/\w+:|\$[^$]+\$")  # an icon is no word; inline math, one


def words_above_the_figure(at) -> int:
    """The words a student reads between the page's title and its first figure (the explorer or a chart), in the
    page's order: paragraphs, captions, notes and the question; a formula on a line of its own is not words."""
    words, seen_title = 0, False

    def walk(node) -> bool:  # True once the first figure is reached
        nonlocal words, seen_title
        for child in getattr(node, "children", {}).values():
            kind = getattr(child, "type", None)
            if kind in ("bidi_component", "plotly_chart"):
                return True
            if kind == "title":
                seen_title = True
            elif seen_title and kind in ("markdown", "caption", "info", "warning", "success", "error"):
                words += len(ICON_OR_MATH.sub(lambda m: "" if m[0].startswith(":") else "x", str(child.value)).split())
            if walk(child):
                return True
        return False

    assert walk(at.main), "no figure on the page"
    return words


@pytest.mark.parametrize("mode", ["default", "cross-attention", "causal+padding"])
def test_step_2_keeps_its_title_words_and_figure_to_one_screen(page_run, mode):
    """One idea per screen, "title, at most about 120 words and the main figure on one 1280 x 800 screen", in the
    modes the browser test does not open, where the cross-attention box (75 words) and the padding paragraph add
    words above the weights. (The browser measures the default mode: tests/browser/test_pages.py.)"""
    at = page_run(mode, "pages/attention.py")
    assert words_above_the_figure(at) <= MAX_WORDS

