"""Hosted for a class, in a real Chromium: crafted text runs nothing, two sessions never mix, the footer.

Uses the server, browser and page fixtures of test_pages.py (one `streamlit run app.py` for this module); skipped
like it when Chromium or Playwright is missing, unless REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from app_pages import PRETRAINED, app_pages
from mha_app.about import app_version
from mha_app.settings import default
from mha_core.pretrained import MODELS
from test_pages import CHANGE_MS, LOAD_MS, SMALL, browser, choose, no_exception, open_page, server, wait_settled  # noqa: F401

pytestmark = pytest.mark.browser
PAGES = app_pages()

# Markup of every kind Streamlit, plotly or a browser might interpret, and scripts that would run if injected.
CRAFTED = ('<script>window.__pwned=1</script> <img src=x onerror="window.__pwned=2"> $$x^2$$ $y$ **b** '
           '\\alpha :cat: :red[r] &lt; 😀👍🏽 שָׁלוֹם')
# Its tokens, written out: what every chart label must show, character for character.
CRAFTED_TOKENS = ["<", "script", ">", "window", ".", "__pwned", "=", "1", "<", "/", "script", ">", "<", "img",
                  "src", "=", "x", "onerror", "=", '"', "window", ".", "__pwned", "=", "2", '"', ">", "$", "$", "x",
                  "^", "2", "$", "$", "$", "y", "$", "*", "*", "b", "*", "*", "\\", "alpha", ":", "cat", ":", ":",
                  "red", "[", "r", "]", "&", "lt", ";", "😀", "👍🏽", "שָׁלוֹם"]

INJECTED_JS = """() => ({
  pwned: window.__pwned === undefined ? null : window.__pwned,
  scripts: [...document.querySelectorAll('script')].filter(s => s.textContent.includes('__pwned')).length,
  onerror: document.querySelectorAll('[onerror]').length,
  images: [...document.querySelectorAll('img')].filter(i => i.getAttribute('src') === 'x').length,
  math: [...document.querySelectorAll('.katex annotation')].filter(a => /x\\^2|\\\\alpha/.test(a.textContent)).length,
  emoji: document.body.innerText.includes('🐱'),
  coloured: [...document.querySelectorAll('.stMarkdownColoredText')].length,
  bold: [...document.querySelectorAll('b, strong')].filter(e => e.textContent.trim() === 'b').length,
})"""

TOKEN_LABELS_JS = """() => [...document.querySelectorAll('.xtick text, .ytick text, .g-xtitle, .g-ytitle')]
    .map(t => t.textContent).filter(t => /^\\d+ /.test(t))"""


@pytest.mark.parametrize("app_page", PAGES, ids=[p.name for p in PAGES])
def test_crafted_text_runs_nothing_and_is_shown_exactly_as_typed(server, open_page, app_page):  # noqa: F811
    page = open_page(app_page.url(server, text=CRAFTED, query="2"))
    no_exception(page)
    assert page.evaluate(INJECTED_JS) == {"pwned": None, "scripts": 0, "onerror": 0, "images": 0, "math": 0,
                                          "emoji": False, "coloured": 0, "bold": 0}
    expect(page.get_by_role("textbox", name="Sentence")).to_have_value(CRAFTED)
    labels = page.evaluate(TOKEN_LABELS_JS)
    # The trained model reads the text with its own tokenizer (lower case, word pieces): its tokens are the reference.
    tokens = MODELS[PRETRAINED].load().run(CRAFTED).tokens if app_page.pretrained else CRAFTED_TOKENS
    wrong = [label for label in labels if label != f"{label.split(' ')[0]} {tokens[int(label.split(' ')[0]) - 1]}"]
    assert not wrong, wrong[:10]
    if not app_page.pretrained:
        caption = page.locator('[data-testid="stSidebar"] [data-testid="stCaptionContainer"]').filter(
            has_text="Query token 2")
        expect(caption.first).to_have_text("Query token 2: script")


def _text_of(page) -> str:
    """Everything the page shows as text, chart labels and the address included."""
    return page.evaluate("() => document.body.innerText + ' ' + [...document.querySelectorAll('svg text')]"
                         ".map(t => t.textContent).join(' ') + ' ' + location.href")


def _type_sentence(page, text: str) -> None:
    box = page.get_by_role("textbox", name="Sentence")
    box.fill(text)
    box.press("Control+Enter")  # Streamlit's text area sends its value on Ctrl+Enter (or when it loses focus)
    wait_settled(page, CHANGE_MS)


def test_two_sessions_never_see_each_others_text_or_settings(server, browser):  # noqa: F811
    """Two students on one server, interleaved: each sees only their own sentence, sizes and head count."""
    contexts = [browser.new_context(viewport=SMALL) for _ in range(2)]
    try:
        alice, bob = (c.new_page() for c in contexts)
        alice.goto(f"{server}/attention?text=Alice+reads+quietly&d_model=64&h=2&seed=11", timeout=LOAD_MS)
        bob.goto(f"{server}/attention?text=Bob+types+loudly+there&d_model=32&h=4&seed=22", timeout=LOAD_MS)
        for page in (alice, bob):
            wait_settled(page)
            no_exception(page)
        mine = {id(alice): ("Alice", "quietly"), id(bob): ("Bob", "loudly")}
        theirs = {id(alice): ("Bob", "loudly", "Dave", "softly"), id(bob): ("Alice", "quietly")}

        def check(page, h: int, d_model: int) -> None:
            shown = _text_of(page)
            assert all(word in shown for word in mine[id(page)]), shown[:300]
            assert not [w for w in theirs[id(page)] if w in shown], [w for w in theirs[id(page)] if w in shown]
            expect(page.get_by_role("combobox", name="Heads h")).to_have_value(str(h))
            expect(page.get_by_role("spinbutton", name="d_model")).to_have_value(str(d_model))
            query = parse_qs(urlparse(page.url).query)
            assert query.get("h", [str(default("h"))]) == [str(h)], page.url
            assert query.get("d_model", [str(default("d_model"))]) == [str(d_model)], page.url

        check(alice, 2, 64)
        check(bob, 4, 32)
        choose(bob, "Heads h", 8)                    # Bob changes his head count ...
        wait_settled(bob, CHANGE_MS)
        _type_sentence(alice, "Alice reads quietly again")  # ... while Alice edits her sentence
        check(alice, 2, 64)
        check(bob, 8, 32)
        mine[id(bob)] = ("Dave", "softly")
        _type_sentence(bob, "Dave speaks softly")
        alice.reload(timeout=LOAD_MS)                # a fresh run of Alice's session after Bob's change
        wait_settled(alice)
        check(alice, 2, 64)
        check(bob, 8, 32)
        assert "Bob" not in _text_of(bob), "Bob's old sentence is gone from his own page too"
    finally:
        for context in contexts:
            context.close()


def test_footer_shows_the_version_and_opens_the_readme(server, open_page):  # noqa: F811
    page = open_page(f"{server}/")
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.get_by_text(f"MHA Visualiser {app_version()}")).to_be_visible()
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", app_version()), app_version()
    sidebar.get_by_role("button", name="README").click()
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_role("heading", name=re.compile("MHA Visualiser"))).to_be_visible(timeout=CHANGE_MS)
    expect(dialog.get_by_text("Deploy", exact=True).first).to_be_visible()
    no_exception(page)
