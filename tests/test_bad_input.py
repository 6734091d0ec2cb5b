"""Bad input, through the whole app (AppTest) and the engine: odd text is kept as typed, numbers stay finite.

What the page shows in a real browser (no markup interpreted, no script run) is checked in test_browser_hosting.py.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import mha_core as mc
from app_pages import app_pages, step_pages
from conftest import PlotlyObjects, run_app
from mha_app.settings import APP_MAX_TEXT_CHARS, APP_MAX_TOKENS, MAX_SEED
from mha_core import figures as figure_functions
from mha_core.analysis import pooling
from mha_core.pretrained import MODELS
from screen import messages, non_finite_in_figure, non_finite_on_screen

figures = PlotlyObjects(figure_functions)  # dict figures checked by plotly, read as its objects

PAGES = step_pages()
OWN_EXAMPLE = {p.script: p.own_example for p in app_pages()}  # pages whose token axes are their own examples

# Text a student may type, with its tokens written out: accents and vowel marks stay on their letter, an emoji keeps
# its skin tone and its joined family, invisible separators split like a space.
TEXTS = {
    "emoji": ("I 😀 👍🏽 👨\u200d👩\u200d👧 🇫🇷!", ["I", "😀", "👍🏽", "👨\u200d👩\u200d👧", "🇫🇷", "!"]),
    "arabic": ("قَرَأَ الوَلَدُ الكِتابَ.", ["قَرَأَ", "الوَلَدُ", "الكِتابَ", "."]),
    "hebrew": ("שָׁלוֹם, עוֹלָם", ["שָׁלוֹם", ",", "עוֹלָם"]),
    "hindi": ("नमस्ते दुनिया", ["नमस्ते", "दुनिया"]),
    "zero-width": ("one\u200btwo \u2060three\ufeff four\u200d", ["one", "two", "\u2060three", "four\u200d"]),
    "right-to-left override": ("\u202eabc def\u202c ghi", ["abc", "def", "ghi"]),
    "markup": ("<b>x</b> **y** $$z$$", ["<", "b", ">", "x", "<", "/", "b", ">", "*", "*", "y", "*", "*",
                                          "$", "$", "z", "$", "$"]),
    "backslashes": ("\\frac{a}{b} \\\\", ["\\", "frac", "{", "a", "}", "{", "b", "}", "\\", "\\"]),
    "quotes and entities": ("say \"hi\" it's &amp; &#60;", ["say", '"', "hi", '"', "it's", "&", "amp", ";", "&",
                                                         "#", "60", ";"]),
}


def assert_clean(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


@pytest.mark.parametrize("name", TEXTS)
@pytest.mark.parametrize("page", PAGES)
def test_odd_text_is_kept_as_typed(page, name):
    text, tokens = TEXTS[name]
    at = run_app({"text": text, "query": str(len(tokens))}, page)
    assert_clean(at)
    assert at.text_area(key="text").value == text
    settings, example = at.session_state["view"]
    assert settings.spec.text == text and example.tokens == tokens
    assert not non_finite_on_screen(at, text), non_finite_on_screen(at, text)
    labels = [label for spec in (json.loads(c.proto.spec) for c in at.get("plotly_chart"))
              for trace in spec["data"] for label in trace.get("y", []) if isinstance(label, str)]
    # Plotly reads labels as a little HTML and decodes only &lt; &gt; &amp; (plotly.js svg_text_utils): what it
    # shows after decoding those must be the token as typed.
    shown = [label.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") for label in labels]
    numbered = [(int(label.split(" ", 1)[0]), label.split(" ", 1)[1]) for label in shown
                if re.fullmatch(r"\d+ .+", label, re.S)]
    if OWN_EXAMPLE[page]:  # its token axes show its own examples' tokens
        return
    if numbered:  # a page with token axes (the cost page, for one, has none) labels the last token too
        assert f"{len(tokens)} {tokens[-1]}" in shown, labels[:5]
    assert all(tok == tokens[i - 1] for i, tok in numbered), [(i, t) for i, t in numbered if t != tokens[i - 1]]


@pytest.mark.parametrize("text", ["", " ", "\n\t  ", "\u200b\u200b", "\u3000"])
@pytest.mark.parametrize("page", PAGES)
def test_text_without_words_says_so(page, text):
    at = run_app({"text": text}, page)
    assert not at.exception
    assert any("no words" in e for e in messages(at, "error")), messages(at, "error")


def test_a_text_of_100k_characters_in_a_link_is_cut_with_a_message():
    at = run_app({"text": "x" * 100_000})
    assert not at.exception
    assert any("`text`" in w and f"{APP_MAX_TEXT_CHARS:,}" in w for w in messages(at, "warning"))
    assert at.text_area(key="text").value == "x" * APP_MAX_TEXT_CHARS


def test_a_link_with_more_tokens_than_the_app_shows_is_cut_to_them_with_a_message():
    at = run_app({"text": "." * 3000, "d_model": "8", "h": "1"})
    assert_clean(at)
    assert any(f"only the first {APP_MAX_TOKENS:,}" in w for w in messages(at, "warning")), messages(at, "warning")
    assert at.session_state["view"][1].tokens == ["."] * APP_MAX_TOKENS


def test_typed_text_over_the_token_limit_gets_a_clear_message():
    at = run_app()
    at.text_area(key="text").set_value("." * (APP_MAX_TOKENS + 1)).run()  # under max_chars: one token a character
    assert not at.exception
    assert any("limit" in e for e in messages(at, "error")), messages(at, "error")


@pytest.mark.parametrize("params", [
    {"seed": "0"}, {"seed": str(MAX_SEED)}, {"input": "random", "n": "40", "seed": str(MAX_SEED)},
    {"d_model": "1024", "h": "16", "seed": str(MAX_SEED)}, {"d_model": "1", "h": "1"},
    {"input": "random", "n": "2", "pad": "1", "causal": "true"}, {"input": "tiny", "pad": "2"},
], ids=["seed 0", "largest seed", "random input", "largest sizes", "d_model 1", "masks", "tiny, padded"])
@pytest.mark.parametrize("page", PAGES)
def test_extreme_numbers_never_show_nan_or_infinity(page, params):
    at = run_app(params, page)
    assert_clean(at)
    assert not non_finite_on_screen(at), non_finite_on_screen(at)


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
    made = [figures.head_grid_figure(trace, tokens), figures.entropy_figure(trace, tokens),
            figures.concat_figure(trace, tokens), figures.input_output_figure(trace.x, trace.output, tokens),
            figures.per_head_figure(trace.heads, tokens, "head")]
    for head in range(cfg.n_heads):
        made += [figures.query_weights_figure(trace, head, 1, tokens),
                 figures.value_mix_figure(trace, head, 1, tokens, cfg.group_size)]
        made += [figures.attention_figure(trace, head, tokens, stage, cfg.softmax_scale) for stage in pooling.STAGES]
    for fig in made:
        assert not non_finite_in_figure(fig.to_plotly_json()), non_finite_in_figure(fig.to_plotly_json())


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("scale", [1e3, 1e6, 1e15])
def test_large_inputs_give_finite_numbers(backend, scale):
    cfg = mc.MHAConfig(16, 4)
    x = mc.random_input(6, 16, seed=0).astype(np.float64) * scale
    trace = mc.forward(x, mc.init_weights(cfg, 0).astype(np.float64), cfg, backend=backend)
    assert np.isfinite(trace.weights).all() and np.isfinite(trace.output).all()
    np.testing.assert_allclose(trace.weights.sum(axis=-1), 1, rtol=1e-12)
    assert not non_finite_in_figure(figures.entropy_figure(trace, list("abcdef")).to_plotly_json())


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_inputs_too_large_for_the_dtype_are_refused_in_words(backend):
    cfg = mc.MHAConfig(16, 4)
    x = mc.random_input(6, 16, seed=0) * np.float32(1e30)  # Q K^T overflows float32
    with pytest.raises(mc.ConfigError, match="overflow float32"):
        mc.forward(x, mc.init_weights(cfg, 0), cfg, backend=backend)


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("page", [p.script for p in app_pages()])
def test_every_page_works_with_every_trained_model(page, model):
    """What a student can choose, each trained model on every page (with a head switched off, so the experiment
    sections show too): no exception, no error message, nothing that is not a number."""
    at = run_app({"model": model, "ablate": "1", "text": "The cat sat on the mat."}, page)
    assert_clean(at)
    assert not non_finite_on_screen(at), non_finite_on_screen(at)
