"""The app in a real Chromium: every page renders (with a sentence crafted to be read as markup, math or script, and
shown exactly as typed; the accessibility audit in both themes; its title, text and whole main figure on one screen),
the navigation, the trained models' pages (controls and links: test_links.py; the audit with each model: test_audit.py).

One `streamlit run app.py` per test worker and one Chromium per module (conftest.py). Every page in every mode, and
what the pages compute, are checked through AppTest in app/; here what only a browser shows.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from app_pages import app_pages
from chromium import (
    LOAD_MS,
    audit,
    audit_both_themes,
    expect,
    needs_model,
    no_exception,
    screenshot,
    wait_settled,
)
from mha_app.state.sentences import DECODER_SENTENCES
from mha_app.state.settings import MODELS

PAGES = app_pages()
PRETRAINED = MODELS[1]
DECODER = MODELS[2]
DECODER_VIEW = {"model": DECODER, "text": DECODER_SENTENCES["Repeated phrase (induction heads)"], "layer": "18",
                "head": "5", "query": "14"}

# Markup of every kind Streamlit, plotly or a browser might interpret, and scripts that would run if injected.
CRAFTED = ('<script>window.__pwned=1</script> <img src=x onerror="window.__pwned=2"> $$x^2$$ $y$ **b** '
           '\\alpha :cat: :red[r] &lt; [link](http://x) 😀👍🏽 שָׁלוֹם')
# Its tokens, written out: what every chart label must show, character for character.
CRAFTED_TOKENS = ["<", "script", ">", "window", ".", "__pwned", "=", "1", "<", "/", "script", ">", "<", "img",
                  "src", "=", "x", "onerror", "=", '"', "window", ".", "__pwned", "=", "2", '"', ">", "$", "$", "x",
                  "^", "2", "$", "$", "$", "y", "$", "*", "*", "b", "*", "*", "\\", "alpha", ":", "cat", ":", ":",
                  "red", "[", "r", "]", "&", "lt", ";", "[", "link", "]", "(", "http", ":", "/", "/", "x", ")",
                  "😀", "👍🏽", "שָׁלוֹם"]

INJECTED_JS = """() => ({
  pwned: window.__pwned === undefined ? null : window.__pwned,
  scripts: [...document.querySelectorAll('script')].filter(s => s.textContent.includes('__pwned')).length,
  onerror: document.querySelectorAll('[onerror]').length,
  images: [...document.querySelectorAll('img')].filter(i => i.getAttribute('src') === 'x').length,
  math: [...document.querySelectorAll('.katex annotation')]
        .filter(a => /x\\^2|\\\\alpha(?!_)/.test(a.textContent)).length,
  emoji: document.body.innerText.includes('🐱'),
  coloured: [...document.querySelectorAll('.stMarkdownColoredText')].length,
  bold: [...document.querySelectorAll('b, strong')].filter(e => /^(b|bold|star)$/.test(e.textContent.trim())).length,
  links: [...document.querySelectorAll('a')].filter(a => (a.getAttribute('href') || '').startsWith('http://x')
                                                         || a.textContent.trim() === 'link').length,
  svgLinks: document.querySelectorAll('svg a').length,
})"""
NOTHING_INJECTED = {"pwned": None, "scripts": 0, "onerror": 0, "images": 0, "math": 0, "emoji": False, "coloured": 0,
                    "bold": 0, "links": 0, "svgLinks": 0}

# Each tab strip: its right edge, its tabs' titles, and the right edge of its last tab (past the strip = hidden).
TAB_STRIPS_JS = """() => [...document.querySelectorAll('[role="tablist"]')].map(list => {
  const tabs = [...list.querySelectorAll('[role="tab"]')];
  return [list.getBoundingClientRect().right, tabs.map(t => t.innerText),
          Math.max(...tabs.map(t => t.getBoundingClientRect().right))];
})"""
# Each table (a canvas grid) wider than its frame, which would cut a header ("parameters per atte"): its columns'
# width and the frame's.
WIDE_TABLES_JS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"] .dvn-scroller')]
    .map(s => [s.scrollWidth, s.clientWidth]).filter(([inner, frame]) => inner > frame + 1)"""
MATRIX = ".mha-matrix"  # a heatmap drawn as SVG (mha_app.components.matrix), in its component's shadow root
# Token labels ("12 <"): a number, a space, the token; not a size on a bytes axis ("10 MiB", the cost page).
TOKEN_LABELS_JS = """() => [...document.querySelectorAll('.xtick text, .ytick text, .g-xtitle, .g-ytitle')]
    .map(t => t.textContent).filter(t => /^\\d+ /.test(t) && !/^\\d+ [KMGTP]?i?B$/.test(t))"""


def test_app_has_pages():
    assert PAGES and PAGES[0].url_path == "" and any(p.url_path == "attention" for p in PAGES), PAGES


# Every page but the trained models' (with random weights they show only the way to one: the switch test below).
TOKEN_PAGES = [p for p in PAGES if not p.pretrained]


@pytest.mark.parametrize("app_page", TOKEN_PAGES, ids=[p.name for p in TOKEN_PAGES])
def test_every_page_renders_and_shows_crafted_text_exactly_as_typed(walk, app_page):
    page = walk(app_page, text=CRAFTED, query="2")
    heading = page.locator("h1").first
    expect(heading).to_be_visible()
    if app_page.heading:
        assert heading.inner_text().strip().startswith(app_page.heading)
    else:
        assert heading.inner_text().strip()
    if app_page.nav_title:  # in the top bar itself, or under its menu's label there
        expect(page.locator('[data-testid="stTopNav"], [data-testid="stSidebarNav"]').first).to_contain_text(
            app_page.section or app_page.nav_title)
    no_exception(page)
    charts = page.locator(".js-plotly-plot")
    assert charts.count() + page.locator(f"{MATRIX} svg").count() > 0, "no chart drawn"
    assert page.locator(".js-plotly-plot .main-svg").count() >= charts.count()
    # Nothing of the sentence is interpreted: no script runs, no markup, math, emoji code, colour or link is made.
    assert page.evaluate(INJECTED_JS) == NOTHING_INJECTED
    assert not page.evaluate(WIDE_TABLES_JS), "a table wider than the page: its last column is cut"
    expect(page.get_by_role("textbox", name="Sentence")).to_have_value(CRAFTED)
    # Chart labels show the tokens as text, escaped exactly once: the token "<" reads "k <", never "k &lt;".
    tokens = CRAFTED_TOKENS
    ticks = page.evaluate("() => [...document.querySelectorAll('.ytick text, .xtick text')].map(t => t.textContent)")
    assert not any("&lt;" in tick or "&amp;" in tick for tick in ticks), ticks
    labels = [] if app_page.own_example else page.evaluate(TOKEN_LABELS_JS)  # its own tokens, not the sentence's
    wrong = [label for label in labels if label != f"{label.split(' ')[0]} {tokens[int(label.split(' ')[0]) - 1]}"]
    assert not wrong, wrong[:10]
    if labels:
        assert any(label.endswith(" <") for label in labels), labels[:30]
    # A heatmap drawn as SVG (mha_app.components.matrix) sets its labels as text: "α_ts v_s 12 <" for the key "<".
    texts = page.locator(f"{MATRIX} svg text").all_text_contents()
    keys = [(int(key[1]), key[2]) for key in (re.fullmatch(r"α_ts v_s (\d+) (.+)", t, re.S) for t in texts) if key]
    assert (len(keys) > 0) == (app_page.url_path == "attention"), keys  # "Mixing the values", its first tab
    assert all(token == tokens[k - 1] for k, token in keys), keys
    caption = page.locator('[data-testid="stSidebar"] [data-testid="stCaptionContainer"]').filter(
        has_text="Query token 2")
    expect(caption.first).to_have_text("Query token 2: script")
    # The accessibility audit in the light theme; test_audit.py audits every page in the dark one (with SmolLM2).
    screenshot(page, app_page.name)
    failed = audit(page)
    assert not failed, failed


@pytest.mark.parametrize("app_page", [p for p in PAGES if p.step or not p.url_path], ids=lambda p: p.name)
def test_title_text_and_main_figure_fit_one_screen(walk, app_page):
    """One idea per screen: on 1280 x 800, a step page's title, at most about 120 words and its whole main
    figure show without scrolling on the default example, once its question is answered."""
    page = walk(app_page)
    seen = page.evaluate(FIT_JS, MAIN_FIGURE)
    screenshot(page, f"fit-{app_page.name}", tall=False)
    assert seen["words"] <= MAX_WORDS, f"{seen['words']} words between the title and the figure of {app_page.name}"
    assert seen["top"] is not None, f"no main figure on {app_page.name}"
    assert seen["bottom"] <= seen["height"], \
        f"{app_page.name}: the main figure runs from {seen['top']:.0f} to {seen['bottom']:.0f} px of {seen['height']}"
    if app_page.url_path == "attention":  # its tabs: none hides behind a scroll arrow at 1280 px
        strips = page.evaluate(TAB_STRIPS_JS)
        assert strips and all(tabs and right <= edge + 1 for edge, tabs, right in strips), strips


def test_navigation_shows_every_step_and_opens_the_menus(walk):
    """At 1280 x 800 the top bar holds the overview, the four steps and one menu per section, with nothing folded
    away under "more"; a menu's page opens from its menu."""
    page = walk(PAGES[0])
    nav = page.locator('[data-testid="stTopNav"]')
    expect(nav).to_be_visible()
    for p in PAGES:
        label = p.section or p.nav_title
        expect(nav.get_by_text(label, exact=True).first).to_be_in_viewport()
    assert "more" not in nav.inner_text().lower()
    sectioned = [p for p in PAGES if p.section]
    assert sectioned, "app.py has menus"
    target = next(p for p in sectioned if p.heading)  # a page whose heading is known before it runs
    nav.get_by_text(target.section, exact=True).first.click()
    page.get_by_text(target.nav_title, exact=True).first.click()
    expect(page.locator("h1").first).to_contain_text(target.heading, timeout=60_000)
    assert page.url.split("?")[0].endswith("/" + target.url_path)
    no_exception(page)


def test_decoder_model_view_on_a_projector(server, browser):
    """The model view of all 270 heads at 1920 x 1080 with the sidebar closed, as a projector shows it: every head
    and layer title drawn, none overlapping the next."""
    needs_model(DECODER)
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        page = context.new_page()
        page.goto(f"{server}/model_view?{urlencode(DECODER_VIEW)}", timeout=LOAD_MS)
        wait_settled(page)
        page.locator('[data-testid="stSidebar"]').hover()  # the collapse button shows on hover
        page.locator('[data-testid="stSidebarCollapseButton"] button').first.click()
        wait_settled(page)
        no_exception(page)
        boxes = page.evaluate("""() => {
          const el = [...document.querySelectorAll('.js-plotly-plot')]
            .find(e => /All 30 × 9 heads/.test((e.layout && e.layout.title && e.layout.title.text) || ''));
          return [...el.querySelectorAll('.infolayer .annotation')].map(a => {
            const r = a.getBoundingClientRect(); return {text: a.textContent.trim(), x0: r.left, x1: r.right,
                                                          y0: r.top, y1: r.bottom}; });
        }""")
        heads = sorted((b for b in boxes if re.fullmatch(r"head \d", b["text"])), key=lambda b: b["x0"])
        layers = [b for b in boxes if re.fullmatch(r"layer \d+", b["text"])]
        assert len(heads) == 9 and len(layers) == 30
        assert all(a["x1"] <= b["x0"] for a, b in zip(heads, heads[1:], strict=False)), heads  # no overlap
        screenshot(page, "model_view-decoder-projector", tall=False)
    finally:
        context.close()


@pytest.mark.parametrize("app_page", [p for p in PAGES if p.pretrained], ids=lambda p: p.name)
def test_pretrained_page_offers_the_switch(server, open_page, app_page):
    """With random weights a trained-model page explains itself; its button switches the weights, as a user would."""
    page = open_page(f"{server}/{app_page.url_path}")
    no_exception(page)
    expect(page.locator('[data-testid="stAlert"]').filter(has_text=PRETRAINED).first).to_be_visible()
    failed = {theme: found for theme, found in audit_both_themes(page).items() if found}  # the page as it is here
    assert not failed, failed
    page.get_by_role("button", name=f"Switch to {PRETRAINED}").click()
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length > 0",
                           timeout=LOAD_MS, polling="raf")
    wait_settled(page)
    no_exception(page)
    assert parse_qs(urlparse(page.url).query).get("model") == [PRETRAINED], page.url


# --- one idea per screen ------------------------------------------------------------------------------------------

MAX_WORDS = 125   # "at most about 120 words" between the title and the main figure
# The page's main figure: the first chart or the attention explorer after the title.
MAIN_FIGURE = '[data-testid="stPlotlyChart"], .mha-explorer'
# The main figure's box at the top of the page, and the words of the text between the title and it (paragraphs,
# captions, the answered question, labels; a formula is not words).
FIT_JS = """selector => {
  const main = document.querySelector('[data-testid="stMain"]');
  main.scrollTo(0, 0);
  const title = main.querySelector('h1').getBoundingClientRect();
  const hosts = [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')].map(h => h.shadowRoot);
  const boxes = [document, ...hosts.filter(Boolean)].flatMap(r => [...r.querySelectorAll(selector)])
    .map(e => e.getBoundingClientRect()).filter(b => b.height > 0).sort((a, b) => a.top - b.top);
  const box = boxes[0] || null;  // the first figure down the page
  const above = box ? box.top : window.innerHeight;
  const words = [...main.querySelectorAll('[data-testid="stMarkdownContainer"]')]
    .filter(e => !e.querySelector('.katex-display'))
    .filter(e => { const r = e.getBoundingClientRect();
                   return r.height > 0 && r.top >= title.bottom - 1 && r.bottom <= above + 1; })
    .flatMap(e => e.innerText.split(/\\s+/).filter(Boolean)).length;
  return {words, top: box && box.top, bottom: box && box.bottom, height: window.innerHeight};
}"""
