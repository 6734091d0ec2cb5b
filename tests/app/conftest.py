"""AppTest runs of every page in every mode (modes.py), run once and shared by the tests that only read them
(test_every_page.py, test_texts.py)."""

from __future__ import annotations

import pytest

from helpers import load_pretrained
from mha_core.pretrained import MODELS as CARDS
from modes import MODES, PRESENTATION
from screen import run_app

# Lazy boxes the shared runs open: the output page's sum of the heads' contributions and the output itself.
OPENED = {"pages/output.py": {"contributions_box": True}}


@pytest.fixture(scope="session")
def page_run():
    """page_run(mode, page) -> the AppTest run of that page in that mode (a name in MODES, or "presentation"), run
    once for the session: a test may read it, never click or change it (a test that does runs its own). A mode with
    a trained model skips when the model is not installed (a failure under REQUIRE_MODELS=1)."""
    runs = {}

    def get(mode: str, page: str):
        params = PRESENTATION if mode == "presentation" else MODES[mode]
        if params.get("model") in CARDS:
            load_pretrained(CARDS[params["model"]].load)
        if (mode, page) not in runs:
            runs[mode, page] = run_app(params, page, opened=OPENED.get(page))
        return runs[mode, page]

    return get
