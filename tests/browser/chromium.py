"""Driving the app in Debian's Chromium through Playwright (never a downloaded browser): when the app has settled,
what its head grid shows, a user's choice in a selectbox, the share link, and screenshots.

Importing this module skips the test module that imports it when /usr/bin/chromium or Playwright is missing, unless
REQUIRE_BROWSER=1 (CI), which makes that a failure. With SCREENSHOTS=1 the tests save what they saw in screenshots/
(ignored by git).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import ROOT

SCREENSHOTS = ROOT / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 # The tabs of one context share a renderer process, so the app's scripts are compiled once, not
                 # once per tab: the browser tests used about 10 % less CPU (a session is still one per tab).
                 "--process-per-site"]
REQUIRED = os.environ.get("REQUIRE_BROWSER") == "1"
LOAD_MS = 90_000     # first load of a page (the very first one imports torch and computes the example)
CHANGE_MS = 30_000   # one rerun after a widget change
SMALL = {"width": 1280, "height": 800}
# axe-core, the accessibility checker, from npm: .ci/run installs it here (AXE_VERSION), nothing is fetched at run time.
AXE_VERSION = "4.14.1"
AXE = ROOT / ".ci" / "node" / "node_modules" / "axe-core" / "axe.min.js"


def _unavailable(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(f"browser tests skipped: {reason} (set REQUIRE_BROWSER=1 to make this a failure)",
                allow_module_level=True)


if not Path(CHROMIUM).exists():
    _unavailable(f"{CHROMIUM} is missing (install Debian's chromium package; never a downloaded browser)")
try:
    from playwright.sync_api import expect, sync_playwright  # noqa: F401 (sync_playwright: conftest.py)
except ImportError:
    _unavailable("the playwright Python package is not installed (pip install -e .[test])")


# --- what the browser is asked ------------------------------------------------------------------------------------

# Idle: the script has finished (Streamlit's own e2e hook data-test-script-state), the websocket is connected, no
# element is left stale from the previous run, no spinner, no skeleton (an element whose code is still loading, as
# plotly's is for the first seconds in a new browser context), and every plotly chart on the page has been drawn.
IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.dataset.testScriptState !== 'notRunning' || app.dataset.testConnectionState !== 'CONNECTED')
    return false;
  if (document.querySelector('[data-stale="true"], [data-testid="stSpinner"], '
                             + '[data-testid="stStatusWidgetRunningIcon"], [data-testid="stSkeleton"]')) return false;
  if (!document.querySelector('h1')) return false;
  const charts = document.querySelectorAll('[data-testid="stPlotlyChart"]').length;
  return document.querySelectorAll('.js-plotly-plot .main-svg').length >= charts;
}"""

SETTLED_JS = """minMs => {
  const now = performance.now();
  if (!(IDLE)()) { window.__settledSince = null; return false; }
  if (window.__settledSince == null) window.__settledSince = now;
  return now - window.__settledSince >= minMs;
}""".replace("IDLE", IDLE_JS)

# The attention page's explorer (inside its component's shadow root): the heads it was sent, and whether it drew them.
GRID_JS = """() => {
  const el = [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
    .map(h => h.shadowRoot && h.shadowRoot.querySelector('.mha-explorer')).find(Boolean);
  if (!el || !el.dataset.heads) return null;
  return {heads: Number(el.dataset.heads), drawn: Number(el.dataset.draws) > 0};
}"""


def wait_settled(page, timeout_ms: int = LOAD_MS, quiet_ms: int = 400) -> None:
    """Wait (bounded) until the app has been idle, as IDLE_JS defines it, for quiet_ms in a row."""
    page.evaluate("window.__settledSince = null")
    page.wait_for_function(SETTLED_JS, arg=quiet_ms, timeout=timeout_ms, polling=100)


def reveal(page) -> None:
    """Press "Reveal the answer" on the page's prediction question, as a student may: what it hides then shows."""
    button = page.get_by_role("button", name="Reveal the answer")
    if button.count():
        button.first.click()
        wait_settled(page, CHANGE_MS)


def grid(page) -> dict | None:
    return page.evaluate(GRID_JS)


def wait_for_heads(page, heads: int, timeout_ms: int = CHANGE_MS) -> None:
    page.wait_for_function(
        f"n => {{ const g = ({GRID_JS})(); return !!g && g.heads === n && g.drawn; }}",
        arg=heads, timeout=timeout_ms, polling="raf")
    wait_settled(page, timeout_ms)


def choose(page, label: str, value) -> None:
    """Pick `value` in the selectbox `label` the way a user does: open it, click the option.

    The box is first scrolled to the middle of the sidebar so the option list opens fully in view: the list closes
    when anything scrolls, and a click meant for an option would then land on whatever lies underneath.
    """
    box = page.get_by_role("combobox", name=label, exact=True)
    box.evaluate("e => e.scrollIntoView({block: 'center'})")
    box.click()
    option = page.get_by_role("option", name=str(value), exact=True)
    expect(option).to_be_in_viewport()
    option.click()
    expect(box).to_have_value(str(value), timeout=CHANGE_MS)
    expect(box).to_have_attribute("aria-expanded", "false")


def needs_model(name: str) -> None:
    """Skip without the trained model `name` (fail under REQUIRE_MODELS=1, as in CI: models.txt installs it)."""
    from mha_app.state.settings import PRETRAINED

    if not PRETRAINED[name].installed():
        if os.environ.get("REQUIRE_MODELS") == "1":
            pytest.fail(f"REQUIRE_MODELS=1, but {name} is not installed: {PRETRAINED[name].install}")
        pytest.skip(f"{name} is not installed ({PRETRAINED[name].install})")


def go(page, app_page) -> None:
    """Open `app_page` from the top bar, as a user does: the same session, so the URL's settings stay."""
    nav = page.locator('[data-testid="stTopNav"]')
    if app_page.section:
        nav.get_by_text(app_page.section, exact=True).first.click()
    page.get_by_text(app_page.nav_title, exact=True).first.click()
    page.wait_for_function("p => location.pathname === '/' + p", arg=app_page.url_path, timeout=CHANGE_MS)
    wait_settled(page, CHANGE_MS)


# The theme's background, of the app (.streamlit/config.toml) and of every chart (mha_core.figures.base).
APP_BACKGROUND = {"light": "rgb(255, 255, 255)", "dark": "rgb(14, 17, 23)"}
THEMED_JS = """([app, chart]) => getComputedStyle(document.querySelector('.stApp')).backgroundColor === app
  && [...document.querySelectorAll('.js-plotly-plot')].every(e => e._fullLayout.paper_bgcolor === chart)"""


def wait_for_theme(page, theme: str) -> None:
    """Wait until the page and every chart on it are drawn in `theme` (after a switch, charts need a rerun)."""
    from mha_core.figures import base

    chart = {"light": base.LIGHT, "dark": base.DARK}[theme].background
    page.wait_for_function(THEMED_JS, arg=[APP_BACKGROUND[theme], chart], timeout=LOAD_MS, polling="raf")
    wait_settled(page)


def switch_theme(page, theme: str) -> None:
    """The system turns light or dark while the page is open (Streamlit follows it; mha_app.run.theme reruns the
    charts)."""
    page.emulate_media(color_scheme=theme)
    wait_for_theme(page, theme)


# --- the accessibility audit (axe-core) --------------------------------------------------------------------------

OTHER = {"light": "dark", "dark": "light"}
# Violations Streamlit itself causes, that the app cannot work around: rule id -> why (none in Streamlit 1.67 on
# these pages; axe leaves KaTeX's formula glyphs "incomplete", not violated: it cannot tell their background).
STREAMLIT_CAUSES: dict[str, str] = {}
AUDIT_JS = """async rules => {
  const options = {resultTypes: ['violations'], ...(rules ? {runOnly: {type: 'rule', values: rules}} : {})};
  const result = await axe.run(document, options);
  return result.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => ({rule: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ': ' + n.failureSummary)}));
}"""
# What a theme changes: colours. In a page's second theme only the rules about colour run again.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]


def audit(page, rules: list[str] | None = None) -> list[dict]:
    """The page's serious and critical violations of every rule (or of `rules`), less those recorded as Streamlit's.
    axe-core is put into the page once: it stays while the top bar changes pages."""
    if not AXE.is_file():
        reason = (f"axe-core is not installed at {AXE.parent} "
                  f"(npm install --prefix .ci/node axe-core@{AXE_VERSION}, as .ci/run does)")
        if REQUIRED:
            pytest.fail(f"REQUIRE_BROWSER=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    return [v for v in page.evaluate(AUDIT_JS, rules) if v["rule"] not in STREAMLIT_CAUSES]


def audit_both_themes(page) -> dict[str, list[dict]]:
    """The page's violations in its theme, then (the rules about colour) in the other one, which it is left in."""
    background = page.evaluate("() => getComputedStyle(document.querySelector('.stApp')).backgroundColor")
    theme = "dark" if background == APP_BACKGROUND["dark"] else "light"
    found = {theme: audit(page)}
    switch_theme(page, OTHER[theme])
    found[OTHER[theme]] = audit(page, COLOUR_RULES)
    return found


def share_link(page) -> str:
    code = page.locator('[data-testid="stSidebar"] [data-testid="stCode"] code').filter(has_text="http")
    return "".join(code.first.inner_text().split())


def no_exception(page) -> None:
    boxes = page.locator('[data-testid="stException"]')
    assert boxes.count() == 0, f"Streamlit exception on {page.url}: {boxes.first.inner_text()[:2000]}"


def screenshot(page, name: str, tall: bool = True) -> None:
    """With SCREENSHOTS=1 in the environment: name.png at the current viewport, and (tall) name-tall.png with a
    viewport 1280 wide and as tall as the page. Without it, nothing: a screenshot checks nothing, and costs a rerun."""
    if os.environ.get("SCREENSHOTS") != "1":
        return
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))
    if not tall:
        return
    height = page.evaluate("""() => Math.max(...['stMain', 'stAppViewContainer', 'stSidebarContent']
        .map(id => document.querySelector(`[data-testid="${id}"]`)).filter(Boolean).map(e => e.scrollHeight))""")
    page.set_viewport_size({"width": SMALL["width"], "height": int(min(max(height + 40, 800), 8000))})
    wait_settled(page, quiet_ms=600)
    page.screenshot(path=str(SCREENSHOTS / f"{name}-tall.png"))
    page.set_viewport_size(SMALL)
