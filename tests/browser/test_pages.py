"""The app in a real Chromium: every page renders (with a sentence crafted to be read as markup, math or script, and
shown exactly as typed), the navigation, the head grid and links, presentation mode, the experiments' views.

One `streamlit run app.py` and one Chromium serve every browser test (conftest.py). Every page in every mode, and
what the pages compute, are checked through AppTest in app/; here what only a browser shows.
"""

from __future__ import annotations

import os
import re
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from app_pages import app_pages
from chromium import (
    CHANGE_MS,
    LOAD_MS,
    choose,
    expect,
    grid,
    no_exception,
    screenshot,
    share_link,
    wait_for_heads,
    wait_settled,
)
from mha_app.sentences import DECODER_SENTENCES
from mha_app.settings import MODELS
from mha_app.settings import PRETRAINED as CARDS
from mha_core.pretrained import MODELS as LOADERS

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

TOKEN_LABELS_JS = """() => [...document.querySelectorAll('.xtick text, .ytick text, .g-xtitle, .g-ytitle')]
    .map(t => t.textContent).filter(t => /^\\d+ /.test(t))"""


def test_app_has_pages():
    assert PAGES and PAGES[0].url_path == "" and any(p.url_path == "attention" for p in PAGES), PAGES


@pytest.mark.parametrize("app_page", PAGES, ids=[p.name for p in PAGES])
def test_every_page_renders_and_shows_crafted_text_exactly_as_typed(server, open_page, app_page):
    page = open_page(app_page.url(server, text=CRAFTED, query="2"))
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
    assert charts.count() > 0, "no plotly chart rendered"
    assert page.locator(".js-plotly-plot .main-svg").count() >= charts.count()
    # Nothing of the sentence is interpreted: no script runs, no markup, math, emoji code, colour or link is made.
    assert page.evaluate(INJECTED_JS) == NOTHING_INJECTED
    expect(page.get_by_role("textbox", name="Sentence")).to_have_value(CRAFTED)
    # Chart labels show the tokens as text, escaped exactly once: the token "<" reads "k <", never "k &lt;".
    # The trained model reads the text with its own tokenizer (lower case, word pieces): its tokens are the reference.
    tokens = LOADERS[PRETRAINED].load().run(CRAFTED).tokens if app_page.pretrained else CRAFTED_TOKENS
    ticks = page.evaluate("() => [...document.querySelectorAll('.ytick text, .xtick text')].map(t => t.textContent)")
    assert not any("&lt;" in tick or "&amp;" in tick for tick in ticks), ticks
    labels = [] if app_page.own_example else page.evaluate(TOKEN_LABELS_JS)  # its own tokens, not the sentence's
    wrong = [label for label in labels if label != f"{label.split(' ')[0]} {tokens[int(label.split(' ')[0]) - 1]}"]
    assert not wrong, wrong[:10]
    if labels and app_page.name != "model_view":  # the model view's axes are thinned
        assert any(label.endswith(" <") for label in labels), labels[:30]
    if not app_page.pretrained:
        caption = page.locator('[data-testid="stSidebar"] [data-testid="stCaptionContainer"]').filter(
            has_text="Query token 2")
        expect(caption.first).to_have_text("Query token 2: script")
    screenshot(page, app_page.name)


def test_navigation_shows_every_step_and_opens_the_menus(server, open_page):
    """At 1280 x 800 the top bar holds the overview, the four steps and one menu per section, with nothing folded
    away under "more"; a menu's page opens from its menu."""
    page = open_page(PAGES[0].url(server))
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


# The modes a student meets, on the page with the most figures (every page in every mode: app/test_every_page.py).
MODES = {"random-input": {"input": "random"}, "tiny": {"input": "tiny"}, "trained": {"model": PRETRAINED},
         "decoder": DECODER_VIEW}


@pytest.mark.parametrize("mode", MODES)
def test_attention_page_renders_in_every_mode(server, open_page, mode):
    if mode == "decoder":
        _decoder_installed()
    page = open_page(f"{server}/attention?{urlencode(MODES[mode])}")
    expect(page.locator("h1").first).to_be_visible()
    no_exception(page)
    charts = page.locator(".js-plotly-plot")
    assert charts.count() > 0 and page.locator(".js-plotly-plot .main-svg").count() >= charts.count()
    screenshot(page, f"attention-{mode}")


def _decoder_installed() -> None:
    if not CARDS[DECODER].installed():
        if os.environ.get("REQUIRE_MODELS") == "1":
            pytest.fail(f"REQUIRE_MODELS=1, but {DECODER} is not installed: {CARDS[DECODER].install}")
        pytest.skip(f"{DECODER} is not installed ({CARDS[DECODER].install})")


def test_decoder_model_view_on_a_projector(server, browser):
    """The model view of all 270 heads at 1920 x 1080 with the sidebar closed, as a projector shows it: every head
    and layer title drawn, none overlapping the next."""
    _decoder_installed()
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
    page.get_by_role("button", name=f"Switch to {PRETRAINED}").click()
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length > 0",
                           timeout=LOAD_MS, polling="raf")
    wait_settled(page)
    no_exception(page)
    assert parse_qs(urlparse(page.url).query).get("model") == [PRETRAINED], page.url


def test_heads_change_is_in_url_and_share_link(server, open_page, browser):
    page = open_page(f"{server}/attention")
    wait_for_heads(page, 8)
    choose(page, "Heads h", 4)
    wait_for_heads(page, 4)
    no_exception(page)
    assert grid(page) == {"heads": 4, "drawn": True}
    assert parse_qs(urlparse(page.url).query).get("h") == ["4"], page.url
    title = page.locator("h1").first.inner_text()
    link = share_link(page)
    assert urlparse(link).path == "/attention" and parse_qs(urlparse(link).query).get("h") == ["4"], link

    for url in (page.url, link):
        again = open_page(url)
        wait_for_heads(again, 4)
        expect(again.get_by_role("combobox", name="Heads h")).to_have_value("4")
        assert grid(again) == {"heads": 4, "drawn": True}, url
        assert again.locator("h1").first.inner_text() == title
        assert parse_qs(urlparse(again.url).query).get("h") == ["4"], again.url
        no_exception(again)


def test_malformed_url_warns_without_exception(server, open_page):
    page = open_page(f"{server}/attention?h=abc&d_model=31")
    warning = page.locator('[data-testid="stAlert"]').filter(has_text="should be a whole number")
    expect(warning.first).to_be_visible()
    no_exception(page)
    # d_model = 31 is kept; only h = 1 divides it, so the grid shows one head.
    expect(page.get_by_role("spinbutton", name="d_model")).to_have_value("31")
    expect(page.get_by_role("combobox", name="Heads h")).to_have_value("1")
    assert grid(page) == {"heads": 1, "drawn": True}


def test_unknown_page_says_so_and_shows_the_overview(server, open_page):
    page = open_page(f"{server}/no_such_page?h=4")
    expect(page.get_by_text("Page not found").first).to_be_visible()
    expect(page.locator("h1").first).to_have_text("Multi-head attention, step by step")
    expect(page.get_by_role("combobox", name="Heads h")).to_have_value("4")
    no_exception(page)


# --- presentation mode --------------------------------------------------------------------------------------------

PRESENT_JS = """() => ({
  path: location.pathname, query: location.search,
  heading: document.querySelector('h1').innerText.trim(),
  sidebarWidth: (document.querySelector('[data-testid="stSidebar"]') || {getBoundingClientRect: () => ({width: 0})})
                .getBoundingClientRect().width,
  nav: document.querySelectorAll('[data-testid="stTopNav"], [data-testid="stSidebarNav"]').length,
  text: parseFloat(getComputedStyle(document.querySelector(
    '[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] p')).fontSize),
})"""


def wait_for_heading(page, start: str) -> None:
    page.wait_for_function("s => (document.querySelector('h1') || {}).innerText?.trim().startsWith(s)", arg=start,
                           timeout=CHANGE_MS, polling="raf")
    wait_settled(page, CHANGE_MS)


def test_presentation_mode_is_large_and_steps_by_button_key_and_link(server, open_page):
    normal = open_page(f"{server}/lesson").evaluate(PRESENT_JS)
    page = open_page(f"{server}/attention?present=1&h=4")  # present=1 opens the lesson, whatever the page
    shown = page.evaluate(PRESENT_JS)
    assert shown["path"] == "/lesson" and parse_qs(shown["query"][1:])["present"] == ["true"], shown
    assert shown["heading"].startswith("1 · ") and shown["nav"] == 0 and shown["sidebarWidth"] < 5, shown
    assert shown["text"] >= 22 and shown["text"] >= 1.4 * normal["text"], (shown, normal)
    no_exception(page)
    screenshot(page, "present-1")
    page.get_by_role("button", name="Next").click()
    wait_for_heading(page, "2 · ")
    assert parse_qs(urlparse(page.url).query).get("screen") == ["2"], page.url
    assert page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTop") == 0, \
        "a new screen starts at its title, not where the Next button was"
    page.keyboard.press("ArrowRight")
    wait_for_heading(page, "3 · ")
    screenshot(page, "present-3")
    page.keyboard.press("ArrowLeft")
    wait_for_heading(page, "2 · ")
    link = page.url
    again = open_page(link)
    assert again.evaluate(PRESENT_JS)["heading"].startswith("2 · ")
    assert parse_qs(urlparse(again.url).query).get("h") == ["4"], again.url
    no_exception(again)


# --- the experiments on heads ---------------------------------------------------------------------------------------

EXPERIMENT_VIEWS = [  # screenshot name, page, URL parameters
    ("projection-gqa-pair", "projection", {"input": "pair", "kv_heads": "2", "pad": "1"}),
    ("attention-planted", "attention", {"d_model": "96", "plant": "previous", "plant_head": "3", "strength": "4"}),
    ("attention-unscaled-tiny", "attention", {"input": "tiny", "scale": "none", "ablate": "1"}),
    ("concatenation-ablated", "concatenation", {"ablate": "2,5"}),
    ("output-ablated", "output", {"ablate": "2,5"}),
    ("output-ablated-trained", "output", {"model": PRETRAINED, "ablate": "2,5", "layer": "3"}),
    ("model_view-ablated", "model_view", {"model": PRETRAINED, "ablate": "3", "layer": "2"}),
]


def figure_titles(page) -> list[str]:
    """The titles of the plotly figures on the page (Streamlit wraps them in <b>)."""
    return page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot')]"
                         ".map(e => (e.layout && e.layout.title && e.layout.title.text) || '')")


@pytest.mark.parametrize("name, path, params", EXPERIMENT_VIEWS, ids=[v[0] for v in EXPERIMENT_VIEWS])
def test_experiment_views_render_and_keep_their_link(server, open_page, name, path, params):
    page = open_page(f"{server}/{path}?{urlencode(params)}")
    no_exception(page)
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="link")).to_have_count(0)  # no link warning
    query = parse_qs(urlparse(share_link(page)).query)
    for key, value in params.items():
        if key != "strength":  # 4 is the default strength, so the link leaves it out
            assert query.get(key) == [value], (key, query)
    assert page.locator(".js-plotly-plot .main-svg").count() >= page.locator(".js-plotly-plot").count()
    screenshot(page, f"experiment-{name}")


def test_switching_heads_off_in_the_browser_writes_ablate_2_5_and_reopens(server, open_page):
    page = open_page(f"{server}/output?input=random&n=5")
    box = page.get_by_role("combobox", name="Switch heads off")
    for head in ("5", "2"):
        box.evaluate("e => e.scrollIntoView({block: 'center'})")
        box.click()
        page.get_by_role("option", name=head, exact=True).click()
        wait_settled(page, CHANGE_MS)
    page.keyboard.press("Escape")
    wait_settled(page, CHANGE_MS)
    no_exception(page)
    page.wait_for_function("() => location.search.includes('ablate=2%2C5') || location.search.includes('ablate=2,5')",
                           timeout=CHANGE_MS)
    link = share_link(page)
    assert "ablate=2,5" in link, link
    assert any("How far each token's output moved with heads 2, 5" in t for t in figure_titles(page))
    again = open_page(link)
    no_exception(again)
    assert any("How far each token's output moved with heads 2, 5" in t for t in figure_titles(again))
    again.get_by_role("button", name="Rank the heads").click()
    again.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot')].some(e => "
                            "/Switching one head off/.test((e.layout && e.layout.title && e.layout.title.text) || ''))",
                            timeout=CHANGE_MS)
    wait_settled(again, CHANGE_MS)
    no_exception(again)


def test_bad_experiment_link_warns_in_words(server, open_page):
    page = open_page(f"{server}/output?ablate=99&kv_heads=5&plant=foo&strength=inf")
    no_exception(page)
    alerts = page.locator('[data-testid="stAlert"]')
    for words in ("`ablate` lists", "`kv_heads`: Query heads are shared out evenly", "`plant` must be one of",
                  "`strength` should"):
        expect(alerts.filter(has_text=words.replace("`", "")).first).to_be_visible()
    assert "ablate" not in urlparse(share_link(page)).query


def test_long_input_overview_zoom_and_stage_move_the_link(server, open_page):
    """n = 2048: the attention page's explorer draws the overviews and the zoom window; its stage and the zoom
    controls move the address and the sidebar's share link along with what it draws."""
    page = open_page(f"{server}/attention?input=random&n=2048&d_model=1024&h=16")
    no_exception(page)
    expect(page.get_by_text("Zoom window", exact=False).first).to_be_visible()
    wait_for_heads(page, 16)
    screenshot(page, "attention-2048")
    explorer = page.locator(".mha-explorer")
    explorer.locator(".stages button[data-stage=mask]").click()
    expect(explorer).to_have_attribute("data-view", re.compile('"stage":"mask"'))
    page.wait_for_function("() => new URLSearchParams(location.search).get('stage') === 'mask'", timeout=CHANGE_MS)
    data = explorer.get_attribute("data-payload")
    zoom = page.get_by_role("spinbutton", name="Zoom: first query row")
    zoom.fill("129")
    zoom.press("Enter")
    expect(explorer).not_to_have_attribute("data-payload", data, timeout=LOAD_MS)  # the new window's cells
    wait_settled(page)
    no_exception(page)
    assert '"stage":"mask"' in explorer.get_attribute("data-view")
    query = parse_qs(urlparse(page.url).query)
    assert query.get("stage") == ["mask"] and query.get("zoom_query") == ["129"], page.url
    link = parse_qs(urlparse(share_link(page)).query)
    assert link.get("stage") == ["mask"] and link.get("zoom_query") == ["129"], share_link(page)
    screenshot(page, "attention-2048-zoom")
    # Back to the stage the page opened with: the link drops it again (the default needs no parameter).
    explorer.locator(".stages button[data-stage=weights]").click()
    page.wait_for_function("() => !new URLSearchParams(location.search).has('stage')", timeout=CHANGE_MS)
    wait_settled(page)
    link = parse_qs(urlparse(share_link(page)).query)
    assert "stage" not in link and link.get("zoom_query") == ["129"], share_link(page)


# --- one idea per screen ------------------------------------------------------------------------------------------

MAX_WORDS = 125   # "at most about 120 words" under the title
MIN_SEEN = 200    # px of the main figure on the first screen
# The page's main figure: the first chart or the attention explorer after the title.
MAIN_FIGURE = '[data-testid="stPlotlyChart"], .mha-explorer'
FIT_JS = """selector => {
  const main = document.querySelector('[data-testid="stMain"]');
  main.scrollTo(0, 0);
  const title = main.querySelector('h1');
  const text = title.closest('[data-testid="stElementContainer"]').nextElementSibling;
  const words = (text ? text.innerText : '').split(/\\s+/).filter(Boolean).length;
  const hosts = [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')].map(h => h.shadowRoot);
  const boxes = [document, ...hosts.filter(Boolean)].flatMap(r => [...r.querySelectorAll(selector)])
    .map(e => e.getBoundingClientRect()).filter(b => b.height > 0).sort((a, b) => a.top - b.top);
  const box = boxes[0] || null;  // the first figure down the page
  return {words, top: box && box.top, bottom: box && box.bottom, height: window.innerHeight};
}"""


@pytest.mark.parametrize("app_page", [p for p in PAGES if p.step or not p.url_path], ids=lambda p: p.name)
def test_title_text_and_main_figure_fit_one_screen(server, open_page, app_page):
    """One idea per screen: on 1280 x 800, a step page's title, its short text and the start of its main figure
    show without scrolling, once its question is answered (the whole figure fits on the overview only: issue 18)."""
    page = open_page(app_page.url(server))
    seen = page.evaluate(FIT_JS, MAIN_FIGURE)
    assert seen["words"] <= MAX_WORDS, f"{seen['words']} words under the title of {app_page.name}"
    assert seen["top"] is not None, f"no main figure on {app_page.name}"
    assert seen["top"] <= seen["height"] - MIN_SEEN, f"{app_page.name}: the main figure starts at {seen['top']:.0f} px"
