"""The lesson on a projector, in Chromium at 1280 x 800: every screen in presentation mode, its question answered,
shows its title, its words and its whole figure without scrolling, and every text of every chart lies inside the
chart. With random weights (every screen) and with all-MiniLM-L6-v2 (the model a teacher switches to). With
LESSON_SHOTS=DIR each screen is saved as DIR/<mode>-<screen>.png (and
-tall.png, all of it, where it does not fit)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chromium import CHANGE_MS, LOAD_MS, SMALL, needs_model, no_exception, reveal, wait_settled
from mha_app.copy.lesson import SCREENS

pytestmark = pytest.mark.browser

MODES = {"random": {}, "MiniLM": {"model": "all-MiniLM-L6-v2"}}
SLACK = 1  # px: rounding of the boxes
# The main block's height, the window's, and every chart text box (plotly's SVG and the app's SVG heatmap) that
# leaves its chart's box.
FIT_JS = """slack => {
  const main = document.querySelector('[data-testid="stMain"]');
  const out = [];
  const charts = [...document.querySelectorAll('.js-plotly-plot'),
                  ...[...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
                    .map(h => h.shadowRoot && h.shadowRoot.querySelector('.mha-matrix svg')).filter(Boolean)];
  for (const chart of charts) {
    const box = chart.getBoundingClientRect();
    const texts = chart.classList.contains('js-plotly-plot')
      ? chart.querySelectorAll('.main-svg text') : chart.querySelectorAll('text');
    for (const t of texts) {
      if (t.closest('.hoverlayer') || !t.textContent.trim()) continue;
      const r = t.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;  // not drawn (a hidden number)
      if (r.left < box.left - slack || r.right > box.right + slack || r.top < box.top - slack
          || r.bottom > box.bottom + slack)
        out.push({text: t.textContent.trim().slice(0, 40),
                  box: [r.left, r.top, r.right, r.bottom].map(Math.round),
                  chart: [box.left, box.top, box.right, box.bottom].map(Math.round)});
    }
  }
  return {height: main.scrollHeight, window: window.innerHeight,
          charts: charts.map(c => Math.round(c.getBoundingClientRect().height)), cut: out};
}"""


def wait_for_screen(page, number: int) -> None:
    page.wait_for_function("s => (document.querySelector('h1') || {}).innerText?.trim().startsWith(s)",
                           arg=f"{number} · ", timeout=CHANGE_MS, polling="raf")
    wait_settled(page, CHANGE_MS)


@pytest.mark.parametrize("mode", MODES)
def test_every_screen_fits_the_projector(server, tabs, mode):
    """Screen by screen, by its Next button, as the teacher steps through; each screen's question revealed."""
    if "model" in MODES[mode]:
        needs_model(MODES[mode]["model"])
    shots = os.environ.get("LESSON_SHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
    query = "".join(f"&{k}={v}" for k, v in MODES[mode].items())
    page = tabs.new_page()
    page.goto(f"{server}/lesson?present=1{query}", timeout=LOAD_MS)
    wait_settled(page)
    found = {}
    for number in range(1, len(SCREENS) + 1):
        if number > 1:
            page.get_by_role("button", name="Next").first.click()
        wait_for_screen(page, number)
        reveal(page)
        no_exception(page)
        page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTo({top: 0})")
        fit = page.evaluate(FIT_JS, SLACK)
        if shots:
            page.screenshot(path=f"{shots}/{mode}-{number:02d}.png")
            if fit["height"] > fit["window"]:  # and all of it, to see what did not fit
                page.set_viewport_size({**SMALL, "height": fit["height"]})
                wait_settled(page, CHANGE_MS)
                page.screenshot(path=f"{shots}/{mode}-{number:02d}-tall.png")
                page.set_viewport_size(SMALL)
                wait_settled(page, CHANGE_MS)
        found[number] = fit
    page.close()
    print(mode, {number: (fit["height"], fit["charts"]) for number, fit in found.items()})
    assert all(fit["window"] == SMALL["height"] for fit in found.values())
    tall = {number: fit["height"] for number, fit in found.items() if fit["height"] > fit["window"]}
    cut = {number: fit["cut"][:3] for number, fit in found.items() if fit["cut"]}
    assert not tall and not cut, f"screens that scroll at {SMALL}: {tall}; chart texts outside their chart: {cut}"
