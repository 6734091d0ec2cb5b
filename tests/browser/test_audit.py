"""The accessibility audit: axe-core, the checker most audits use, on every page of the app, with random weights and
with each trained model, in the light and the dark theme. Any violation of impact "serious" or "critical" fails.

Each weights mode is one walk through the top bar in one session, as a student clicks through the app: a page is
audited as it opens (its question answered, so its figures show), then, for the rules about colour, again after the
system's theme switches. The next page opens in the theme the last one ended in, so each page sees both themes with
one switch.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from app_pages import app_pages
from chromium import (
    AXE,
    AXE_VERSION,
    LOAD_MS,
    REQUIRED,
    go,
    needs_model,
    no_exception,
    reveal,
    screenshot,
    switch_theme,
    wait_settled,
)
from mha_app.settings import MODELS, RANDOM

pytestmark = pytest.mark.browser

PAGES = app_pages()
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


@pytest.fixture(scope="module")
def axe() -> str:
    if not AXE.is_file():
        reason = (f"axe-core is not installed at {AXE.parent} "
                  f"(npm install --prefix .ci/node axe-core@{AXE_VERSION}, as .ci/run does)")
        if REQUIRED:
            pytest.fail(f"REQUIRE_BROWSER=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    return str(AXE)


def audit(page, rules: list[str] | None = None) -> list[dict]:
    """The page's serious and critical violations of every rule (or of `rules`), less those recorded as Streamlit's."""
    return [v for v in page.evaluate(AUDIT_JS, rules) if v["rule"] not in STREAMLIT_CAUSES]


@pytest.mark.parametrize("model", MODELS)
def test_every_page_passes_the_audit_in_both_themes(server, tabs, axe, model):
    """Also what the top bar shows of each page in each mode: it opens without an error, every chart drawn."""
    if model != RANDOM:
        needs_model(model)
    page = tabs.new_page()
    try:
        page.emulate_media(color_scheme="light")
        page.goto(f"{server}/?{urlencode({'model': model})}", timeout=LOAD_MS)
        wait_settled(page)
        page.add_script_tag(path=axe)  # stays for the walk: the top bar changes pages without loading one
        theme, found = "light", {}
        for n, app_page in enumerate(PAGES):
            if n:
                go(page, app_page)
            reveal(page)
            no_exception(page)
            for switch in (False, True):  # the theme the page opened in, then the other: the next page opens in it
                if switch:
                    theme = OTHER[theme]
                    switch_theme(page, theme)
                found[f"{app_page.name}, {theme}"] = audit(page, COLOUR_RULES if switch else None)
                screenshot(page, f"audit-{app_page.name}-{model}-{theme}", tall=False)
        failed = {view: violations for view, violations in found.items() if violations}
        assert not failed, failed
    finally:
        page.close()
