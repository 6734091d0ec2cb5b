"""The accessibility audit (axe-core, chromium.audit) on every page of the app with a trained model, in the light and
the dark theme; with random weights, test_pages.py audits each page in both themes as it checks it. Any violation of
impact "serious" or "critical" fails.

Each trained model is one walk through the top bar in one session, as a student clicks through the app, every page
audited as it opens (its question answered, so its figures show): all-MiniLM-L6-v2 in the light theme, SmolLM2 in the
dark one. So every page is audited with random weights and with a trained model, in each theme, and with each model.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from app_pages import app_pages
from chromium import (
    LOAD_MS,
    audit,
    go,
    needs_model,
    no_exception,
    reveal,
    screenshot,
    wait_for_theme,
)
from mha_app.state.settings import MODELS

pytestmark = pytest.mark.browser

PAGES = app_pages()
# Every page but the trained model's own is audited in the light theme with random weights (test_pages.py). Here
# SmolLM2 takes every page in the dark theme, and all-MiniLM-L6-v2 the pages only a trained model has (after the
# overview it opens on) in the light one: so every page in both themes.
MODEL_PAGES = {MODELS[2]: PAGES, MODELS[1]: [PAGES[0], *(p for p in PAGES if p.pretrained)]}


@pytest.mark.parametrize("model, theme", list(zip(MODELS[1:], ("light", "dark"), strict=True)))
def test_every_page_passes_the_audit_with_a_trained_model(server, tabs, model, theme):
    """Also what the top bar shows of each page in each mode: it opens without an error, every chart drawn."""
    needs_model(model)
    page = tabs.new_page()
    try:
        page.emulate_media(color_scheme=theme)
        page.goto(f"{server}/?{urlencode({'model': model})}", timeout=LOAD_MS)
        wait_for_theme(page, theme)
        found = {}
        for n, app_page in enumerate(MODEL_PAGES[model]):
            if n:
                go(page, app_page)
            reveal(page)
            no_exception(page)
            found[app_page.name] = audit(page)
            screenshot(page, f"audit-{app_page.name}-{model}-{theme}", tall=False)
        failed = {view: violations for view, violations in found.items() if violations}
        assert not failed, failed
    finally:
        page.close()
