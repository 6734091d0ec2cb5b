"""Dark mode and text alternatives in a real browser (Chromium): the charts follow the page's theme, also when the
system switches it while the page is open; every chart's label text keeps 4.5:1 against the chart's background; a
screen reader finds each chart by its words and its numbers in a table. Screenshots of both themes go to
screenshots/ (theme-*.png, and theme-*-tall.png of the whole page)."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from chromium import LOAD_MS, expect, reveal, screenshot, switch_theme, wait_for_theme, wait_settled
from mha_app.state.settings import MODELS
from mha_core.figures import base

pytestmark = pytest.mark.browser

DECODER = MODELS[2]
CHARTS = "() => [...document.querySelectorAll('.js-plotly-plot')]"
# Every text a chart draws outside its cells: title, axis titles and ticks, colour bars, legends, annotations.
LABELS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(plot => ({
  background: plot._fullLayout.paper_bgcolor,
  fills: [...plot.querySelectorAll('.gtitle, .g-xtitle text, .g-ytitle text, .xtick text, .ytick text, '
                                   + '.cbaxis text, .cbtitle text, .legendtext, .annotation-text')]
         .filter(t => t.textContent.trim()).map(t => getComputedStyle(t).fill)}))"""


def luminance(rgb: tuple[float, ...]) -> float:
    c = [v / 255 for v in rgb]
    c = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]


def parse(colour: str) -> tuple[float, ...]:
    if colour.startswith("#"):
        return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return tuple(float(v) for v in re.findall(r"[\d.]+", colour)[:3])


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(parse(a)), luminance(parse(b))), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def open_in(tabs, url: str, scheme: str):
    """A settled page in a new tab (a new session) whose system colour scheme is `scheme` from the start."""
    page = tabs.new_page()
    page.emulate_media(color_scheme=scheme)
    page.goto(url, timeout=LOAD_MS)
    wait_settled(page)
    reveal(page)
    return page


def labels_read(page) -> list[str]:
    """Every chart label whose contrast with its chart's background is below 4.5:1."""
    return [f"{fill} on {chart['background']}: {contrast(fill, chart['background']):.2f}"
            for chart in page.evaluate(LABELS_JS) for fill in chart["fills"]
            if contrast(fill, chart["background"]) < 4.5]


def test_charts_follow_a_theme_switch_while_the_page_is_open(server, tabs):
    page = open_in(tabs, f"{server}/projection", "light")
    try:
        wait_for_theme(page, "light")
        assert not labels_read(page), labels_read(page)
        screenshot(page, "theme-projection-light")
        switch_theme(page, "dark")  # Streamlit restyles the page without a rerun; mha_app.run.theme asks for one
        scales = page.evaluate(f"() => {CHARTS[6:]}.filter(e => e.layout.coloraxis?.colorscale)"
                               ".map(e => e.layout.coloraxis.colorscale.map(s => s[1]))")
        assert scales and all(scale in (list(base.DARK.sequential), list(base.DARK.diverging)) for scale in scales)
        assert not labels_read(page), labels_read(page)
        screenshot(page, "theme-projection-dark")
    finally:
        page.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_page_opened_in_either_theme_draws_its_charts_in_it_at_once(server, tabs, theme):
    """A trained decoder's model view: every head's causal mask leaves its upper triangle blank, not weight 0."""
    page = open_in(tabs, f"{server}/model_view?{urlencode({'model': DECODER})}", theme)
    try:
        wait_for_theme(page, theme)
        assert not labels_read(page), labels_read(page)
        bar = page.evaluate(f"() => {CHARTS[6:]}[0].layout.coloraxis.colorbar.title.text")
        assert "blocked" in bar
        screenshot(page, f"theme-model-view-{theme}")
    finally:
        page.close()


def test_a_screen_reader_finds_each_chart_by_its_words_and_its_numbers_in_a_table(server, tabs):
    page = open_in(tabs, f"{server}/attention?text=The+*cat*+sat", "light")
    try:
        figures = page.get_by_role("figure")
        names = [figures.nth(i).get_attribute("aria-label") for i in range(figures.count())]
        assert names and all(names), names
        explorer = page.get_by_role("img", name="Attention explorer, layer 1, head 1, query 'The' (1): most weight on")
        expect(explorer).to_have_count(1)  # the canvas in words, as the charts are
        assert page.get_by_role("table").count() == 0  # collapsed: nothing to wade through by default
        boxes = page.get_by_text("This chart in words and numbers")
        for i in range(boxes.count()):
            boxes.nth(i).click()
        tables = page.get_by_role("table")
        tables.first.wait_for()
        assert tables.count() == boxes.count() and tables.first.get_by_role("row").count() > 1
        cells = page.locator("table code").all_inner_texts()
        assert "'*' (2)" in cells, cells  # as typed: no emphasis, no markup
    finally:
        page.close()
