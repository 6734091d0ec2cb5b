"""Controls and links in a real Chromium: a sidebar change moves the address and the share link, and a fresh
browser opening either shows the same view; bad links are explained in words; presentation mode steps by button,
key and link; the experiments' views keep their links; a long input's zoom and stage go into the address.

The same views' contents, in every mode, are checked through AppTest in app/; here what only a browser shows.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from chromium import (
    CHANGE_MS,
    LOAD_MS,
    choose,
    expect,
    grid,
    no_exception,
    reveal,
    screenshot,
    share_link,
    wait_for_heads,
    wait_settled,
)
from mha_app.frame.present import FIGURE_FONT, FIGURE_TITLE_FONT
from mha_app.state.settings import MODELS

PRETRAINED = MODELS[1]


def test_heads_change_is_in_url_and_share_link(server, open_page, browser):
    page = open_page(f"{server}/attention")
    wait_for_heads(page, 8)
    choose(page, "Heads h", 4)
    reveal(page)  # another model: its question asks afresh
    wait_for_heads(page, 4)
    no_exception(page)
    assert grid(page) == {"heads": 4, "drawn": True}
    assert parse_qs(urlparse(page.url).query).get("h") == ["4"], page.url
    title = page.locator("h1").first.inner_text()
    link = share_link(page)
    assert urlparse(link).path == "/attention" and parse_qs(urlparse(link).query).get("h") == ["4"], link

    for url in dict.fromkeys((page.url, link)):  # each once: the share link is often the address itself
        again = open_page(url)
        wait_for_heads(again, 4)
        expect(again.get_by_role("combobox", name="Heads h", exact=True)).to_have_value("4")
        assert grid(again) == {"heads": 4, "drawn": True}, url
        assert again.locator("h1").first.inner_text() == title
        assert parse_qs(urlparse(again.url).query).get("h") == ["4"], again.url
        no_exception(again)


def test_a_link_to_a_view_opens_it_drawn_and_another_head_asks_afresh(server, open_page):
    """A link that names a head, query and stage shows the explorer with no click (Ask before showing unticked); in
    a session that asks, an answer counts for its head: another head's question waits again."""
    page = open_page(f"{server}/attention?head=3&query=2&stage=raw", answered=False)
    wait_for_heads(page, 8)
    assert page.get_by_role("button", name="Reveal the answer").count() == 0
    expect(page.get_by_role("checkbox", name="Ask before showing")).not_to_be_checked()
    no_exception(page)

    asking = open_page(f"{server}/attention?h=4")  # names no view: it asks; open_page reveals the answer
    wait_for_heads(asking, 4)
    head = asking.locator('[data-testid="stSidebar"]').get_by_role("combobox", name="Head", exact=True)
    head.evaluate("e => e.scrollIntoView({block: 'center'})")
    head.click()
    asking.get_by_role("option", name="2", exact=True).click()
    expect(asking.get_by_role("button", name="Reveal the answer")).to_be_visible()
    assert grid(asking) is None, "the explorer waits for the new question's answer"
    no_exception(asking)


def test_malformed_url_warns_without_exception(server, open_page):
    page = open_page(f"{server}/attention?h=abc&d_model=31")
    warning = page.locator('[data-testid="stAlert"]').filter(has_text="should be a whole number")
    expect(warning.first).to_be_visible()
    no_exception(page)
    # d_model = 31 is kept; only h = 1 divides it, so the grid shows one head.
    expect(page.get_by_role("spinbutton", name="d_model")).to_have_value("31")
    expect(page.get_by_role("combobox", name="Heads h", exact=True)).to_have_value("1")
    assert grid(page) == {"heads": 1, "drawn": True}


def test_unknown_page_says_so_and_shows_the_overview(server, open_page):
    page = open_page(f"{server}/no_such_page?h=4")
    expect(page.get_by_text("Page not found").first).to_be_visible()
    expect(page.locator("h1").first).to_have_text("Multi-head attention, step by step")
    expect(page.get_by_role("combobox", name="Heads h", exact=True)).to_have_value("4")
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


# The charts' text as drawn (plotly's SVG: ticks, axis names, notes, colour bars, cells' numbers, legends; not the
# tooltips): the smallest font and the smallest title, in px.
CHART_TEXT_JS = """() => {
  const px = e => parseFloat(getComputedStyle(e).fontSize);
  const texts = [...document.querySelectorAll('.js-plotly-plot .main-svg text, .js-plotly-plot .main-svg tspan')]
    .filter(t => !t.closest('.hoverlayer') && t.textContent.trim())
    .filter(t => !(t.tagName === 'text' && t.querySelector('tspan')));  // its parts speak for it
  const titles = [...document.querySelectorAll('.js-plotly-plot .gtitle')];
  return {smallest: Math.min(...texts.map(px)), title: Math.min(...titles.map(px))};
}"""


def wait_for_heading(page, start: str) -> None:
    page.wait_for_function("s => (document.querySelector('h1') || {}).innerText?.trim().startsWith(s)", arg=start,
                           timeout=CHANGE_MS, polling="raf")
    wait_settled(page, CHANGE_MS)


def next_in_view(page) -> None:
    """A Next button lies wholly inside the 1280 x 800 window as the screen opens (before any Reveal): the presenter
    never scrolls to move on, from screen 2 too."""
    boxes = [b.bounding_box() for b in page.get_by_role("button", name="Next").all()]
    height = page.viewport_size["height"]
    assert any(b and b["y"] >= 0 and b["y"] + b["height"] <= height for b in boxes), (boxes, height)


def test_presentation_mode_is_large_and_steps_by_button_key_and_link(server, open_page):
    normal = open_page(f"{server}/lesson").evaluate(PRESENT_JS)
    page = open_page(f"{server}/attention?present=1&h=4")  # present=1 opens the lesson, whatever the page
    shown = page.evaluate(PRESENT_JS)
    assert shown["path"] == "/lesson" and parse_qs(shown["query"][1:])["present"] == ["true"], shown
    assert shown["heading"].startswith("1 · ") and shown["nav"] == 0 and shown["sidebarWidth"] < 5, shown
    assert shown["text"] >= 22 and shown["text"] >= 1.4 * normal["text"], (shown, normal)
    charts = page.evaluate(CHART_TEXT_JS)  # read from the back of the room
    assert charts["smallest"] >= FIGURE_FONT and charts["title"] >= FIGURE_TITLE_FONT, charts
    no_exception(page)
    screenshot(page, "present-1")
    next_in_view(page)
    page.get_by_role("button", name="Next").first.click()
    wait_for_heading(page, "2 · ")
    next_in_view(page)
    assert parse_qs(urlparse(page.url).query).get("screen") == ["2"], page.url
    assert page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTop") == 0, \
        "a new screen starts at its title, not where the Next button was"
    page.keyboard.press("ArrowRight")
    wait_for_heading(page, "3 · ")
    assert page.evaluate(CHART_TEXT_JS)["smallest"] >= FIGURE_FONT  # the scores: every cell's number, the colour bar
    next_in_view(page)
    # under the text and the formula, every row and every key's name lie inside the window
    chart = page.locator('[data-testid="stPlotlyChart"]').first.bounding_box()
    assert chart["y"] + chart["height"] <= page.viewport_size["height"], chart
    rows = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot .ytick text')].map(t => t.textContent)")
    assert len(rows) == 11, rows  # every query named
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
    ("output-ablated-trained", "output", {"model": PRETRAINED, "ablate": "2,5", "layer": "3"}),
]  # the other experiments' views and links in every mode: app/test_every_page.py, app/test_experiments.py


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
    assert any("How far each token's output moved with heads 2 and 5" in t for t in figure_titles(page))
    again = open_page(link)
    no_exception(again)
    assert any("How far each token's output moved with heads 2 and 5" in t for t in figure_titles(again))
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
    page = open_page(f"{server}/attention?input=random&n=2048&d_model=256&h=16")
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
