"""The accessibility audit (axe-core, chromium.audit) on every page of the app with each trained model, in the light
and the dark theme; with random weights, test_pages.py audits each page as it checks it. Any violation of impact
"serious" or "critical" fails.

Each trained model is one walk through the top bar in one session, as a student clicks through the app: a page is
audited as it opens (its question answered, so its figures show), then, for the rules about colour, again after the
system's theme switches. The next page opens in the theme the last one ended in, so each page sees both themes with
one switch.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from app_pages import app_pages
from chromium import (
    LOAD_MS,
    audit_both_themes,
    go,
    needs_model,
    no_exception,
    reveal,
    screenshot,
    wait_settled,
)
from mha_app.settings import MODELS

pytestmark = pytest.mark.browser

PAGES = app_pages()
@pytest.mark.parametrize("model", MODELS[1:])  # random weights: test_pages.py audits each page as it checks it
def test_every_page_passes_the_audit_in_both_themes(server, tabs, model):
    """Also what the top bar shows of each page in each mode: it opens without an error, every chart drawn."""
    needs_model(model)
    page = tabs.new_page()
    try:
        page.goto(f"{server}/?{urlencode({'model': model})}", timeout=LOAD_MS)
        wait_settled(page)
        found = {}
        for n, app_page in enumerate(PAGES):
            if n:
                go(page, app_page)
            reveal(page)
            no_exception(page)
            for theme, violations in audit_both_themes(page).items():
                found[f"{app_page.name}, {theme}"] = violations
                screenshot(page, f"audit-{app_page.name}-{model}-{theme}", tall=False)
        failed = {view: violations for view, violations in found.items() if violations}
        assert not failed, failed
    finally:
        page.close()
