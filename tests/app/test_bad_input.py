"""Bad input, through the whole app (AppTest): odd text is kept as typed, numbers stay finite.

The engine's own refusals and finite numbers: unit/test_errors.py and unit/test_figures.py. What the page shows in a
real browser (no markup interpreted, no script run): browser/test_hosting.py.
"""

from __future__ import annotations

import itertools
import json
import re

import pytest

from app_pages import app_pages, step_pages
from mha_app.state.settings import APP_MAX_TEXT_CHARS, APP_MAX_TOKENS, MAX_SEED
from screen import assert_clean, matrices, messages, non_finite_on_screen, run_app

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


# Every text above in one sentence, separated by spaces: its tokens are theirs, one after the other.
ALL_TEXT = " ".join(text for text, _ in TEXTS.values())
ALL_TOKENS = [token for _, tokens in TEXTS.values() for token in tokens]


@pytest.mark.parametrize("page", PAGES)
def test_odd_text_is_kept_as_typed(page):
    text, tokens = ALL_TEXT, ALL_TOKENS
    at = run_app({"text": text, "query": str(len(tokens))}, page)
    assert_clean(at)
    assert at.text_area(key="text").value == text
    settings, example = at.session_state["view"]
    assert settings.spec.text == text and example.tokens == tokens
    assert not non_finite_on_screen(at, text), non_finite_on_screen(at, text)
    labels = [label for spec in (json.loads(c.proto.spec) for c in at.get("plotly_chart"))
              for trace in spec["data"] for label in trace.get("y", []) if isinstance(label, str)]
    # Plotly reads labels as a little HTML and decodes only &lt; &gt; &amp; (plotly.js svg_text_utils): what it
    # shows after decoding those must be the token as typed. An SVG heatmap (mha_app.components.matrix) sets its
    # labels as text.
    shown = [label.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") for label in labels] + [
        label for matrix in matrices(at) for label in matrix["y"]]
    numbered = [(int(label.split(" ", 1)[0]), label.split(" ", 1)[1]) for label in shown
                if re.fullmatch(r"\d+ .+", label, re.S)]
    if OWN_EXAMPLE[page]:  # its token axes show its own examples' tokens
        return
    if numbered:  # a page with token axes (the cost page, for one, has none) labels the last token too
        assert f"{len(tokens)} {tokens[-1]}" in shown, labels[:5]
    assert all(tok == tokens[i - 1] for i, tok in numbered), [(i, t) for i, t in numbered if t != tokens[i - 1]]


@pytest.mark.parametrize("page, text", list(zip(PAGES, itertools.cycle(["", " ", "\n\t  ", "\u200b\u200b", "\u3000"]))))
def test_text_without_words_says_so(page, text):
    """The message comes before any page draws: every page once, every blank text at least once."""
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


@pytest.mark.parametrize("params", [  # seed 0 is the default: every page in test_every_page.py
    {"seed": str(MAX_SEED)}, {"input": "random", "n": "40", "seed": str(MAX_SEED)},
    {"d_model": "1024", "h": "16", "seed": str(MAX_SEED)}, {"d_model": "1", "h": "1"},
    {"input": "random", "n": "2", "pad": "1", "causal": "true"}, {"input": "tiny", "pad": "2"},
], ids=["largest seed", "random input", "largest sizes", "d_model 1", "masks", "tiny, padded"])
@pytest.mark.parametrize("page", PAGES)
def test_extreme_numbers_never_show_nan_or_infinity(page, params):
    at = run_app(params, page)
    assert_clean(at)
    assert not non_finite_on_screen(at), non_finite_on_screen(at)
