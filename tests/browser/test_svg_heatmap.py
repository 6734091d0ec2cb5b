"""Charts in Chromium. A heatmap drawn as SVG (mha_app.components.matrix), "Mixing the values" on the attention page:
the number under the pointer is the engine's; an h change draws the new numbers into the same element (no chart
mounted anew); it saves as SVG and PNG; the page's scripts raise nothing. A plotly chart's camera saves in the
sidebar's format."""

from __future__ import annotations

from pathlib import Path

import pytest

from chromium import choose, screenshot, wait_settled
from mha_app.state.example import build_example
from mha_app.state.settings import Spec

pytestmark = pytest.mark.browser

MATRIX = ".mha-matrix"  # inside the component's shadow root: Playwright's CSS locators look into open ones


def hover(page, row: int, col: int, rows: int, cols: int) -> float:
    """The value the tooltip gives for cell (row, col) of a rows x cols heatmap, pointed at its middle."""
    box = page.locator(f"{MATRIX} image").bounding_box()
    page.mouse.move(box["x"] + (col + 0.5) * box["width"] / cols, box["y"] + (row + 0.5) * box["height"] / rows)
    tip = page.locator(f"{MATRIX} .tip")
    tip.wait_for(state="visible")
    return float(tip.inner_text().rsplit("= ", 1)[1])


def mixed(spec: Spec, key: int, component: int) -> float:
    """α_ts · v_s of head 1 and query 1 (the default view) for one key s, one component: the engine's float32."""
    trace = build_example(spec).trace
    return float(trace.weights[0, 0, key] * trace.v[0][key, component])


def test_the_value_under_the_pointer_is_the_engines_and_an_h_change_redraws_in_place(server, open_page):
    errors = []
    page = open_page(f"{server}/attention?ask=false")  # an h change is another question: here it does not wait
    page.on("pageerror", lambda error: errors.append(str(error)))
    view = page.locator(MATRIX)
    view.scroll_into_view_if_needed()
    keys = len(build_example(Spec()).tokens)
    for spec in (Spec(), Spec(h=4)):
        d_k = spec.d_model // spec.h
        for key, component in ((2, 5), (keys - 1, d_k - 1)):
            assert hover(page, key, component, keys + 1, d_k) == pytest.approx(mixed(spec, key, component), rel=1e-5)
        if spec.h == 8:
            view.evaluate("e => { e.kept = true; }")  # an element mounted anew would not keep it
            draws = int(view.get_attribute("data-draws"))
            choose(page, "Heads h", 4)
            wait_settled(page)
    assert view.evaluate("e => e.kept === true") and int(view.get_attribute("data-draws")) == draws + 1
    screenshot(page, "matrix-mixing-h4", tall=False)
    for kind in ("svg", "png"):
        with page.expect_download() as download:
            view.get_by_role("button", name=f"Save the chart as {kind.upper()}").click()
        data = Path(download.value.path()).read_bytes()
        assert download.value.suggested_filename == f"mix_head1_query1.{kind}"
        assert data.startswith(b"\x89PNG") if kind == "png" else b"<title>Head 1, query 'The' (1): weight" in data
    assert not errors, errors


def test_every_plotly_chart_saves_as_svg_when_asked(server, open_page):
    page = open_page(f"{server}/projection")
    page.locator('[data-testid="stSidebar"] [data-testid="stButtonGroup"]').get_by_text("SVG", exact=True).click()
    wait_settled(page)
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    chart.scroll_into_view_if_needed()
    chart.hover()
    with page.expect_download() as download:
        chart.locator(".modebar-btn[data-title^='Download plot']").click()
    assert download.value.suggested_filename.endswith(".svg")
    assert Path(download.value.path()).read_text().lstrip().startswith("<svg")
