"""Every chart as the app shows it (AppTest): named for screen readers by its text alternative, its words and
numbers in a collapsed table with user text quoted, and drawn in the colours of the page's theme."""

from __future__ import annotations

import json

import pytest

from mha_app.copy.asides import CHART_WORDS
from mha_core.figures import base, describe, value_mix_figure
from mha_core.figures.describe import Description
from screen import matrices, run_app

TEXT = "The *cat* sat on $5 mat"  # Markdown and math that must stay text in the tables


@pytest.fixture(scope="module")
def attention():
    """Step 2 with its entropy tab open (tabs compute only the open one)."""
    return {theme: run_app({"text": TEXT}, "pages/attention.py", context={"theme": theme},
                           opened={"attention_tab": "How focused?"}) for theme in ("light", "dark")}


@pytest.fixture(scope="module")
def mixing():
    """Step 2 with its first tab open: "Mixing the values", a heatmap drawn as SVG (mha_app.components.matrix)."""
    return {theme: run_app({"text": TEXT}, "pages/attention.py", context={"theme": theme})
            for theme in ("light", "dark")}


def test_every_chart_is_named_by_its_text_alternative(attention):
    at = attention["light"]
    assert not at.exception
    charts = at.get("plotly_chart")
    assert charts and all(chart.proto.alt for chart in charts)
    explorer_words = [e for e in at.expander if e.label == CHART_WORDS][0]
    ex = at.session_state["view"][1]  # the view: head 1, query 1; no key blocked
    row = describe.weight_row(ex.trace.weights[0, 0], describe.names(ex.tokens)[0], describe.names(ex.keys), 0)
    assert row.alt in [str(t.value) for t in explorer_words.text], "the explorer's query row, in words"
    for chart in charts:  # the words go to the page, not a second time into the figure
        assert "meta" not in json.loads(chart.proto.spec)["layout"]


def test_a_heatmap_drawn_as_svg_is_named_and_has_its_table(mixing):
    at = mixing["light"]
    assert not at.exception and not at.get("plotly_chart")
    [mix] = matrices(at)
    ex = at.session_state["view"][1]
    assert mix["alt"] == Description.of(value_mix_figure(ex.trace, 0, 0, ex.tokens, ex.cfg.group_size)).alt
    boxes = [e for e in at.expander if e.label == CHART_WORDS]
    assert len(boxes) == 2 and not any(e.proto.expanded for e in boxes), "the heatmap's and the explorer's"
    cells = {str(v) for table in at.table for v in table.value.to_numpy().ravel()}
    assert any("'*'" in c for c in cells), "the table names the keys, user text quoted"


def test_each_chart_has_its_numbers_in_a_collapsed_table_with_user_text_quoted(attention):
    at = attention["light"]
    boxes = [e for e in at.expander if e.label == CHART_WORDS]
    assert len(boxes) == len(at.get("plotly_chart")) + 1, "every chart, and the explorer"
    assert all(not e.proto.expanded for e in boxes)
    cells = {str(v) for table in at.table for v in table.value.to_numpy().ravel()}
    assert "`'*' (2)`" in cells and "`'$' (7)`" in cells  # code spans: shown as typed, never read as markup
    assert not any(c.startswith("'*'") for c in cells)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_charts_take_the_colours_of_the_pages_theme(attention, mixing, theme):
    palette = base.LIGHT if theme == "light" else base.DARK
    specs = [json.loads(chart.proto.spec) for chart in attention[theme].get("plotly_chart")]
    assert all(spec["layout"]["paper_bgcolor"] == palette.background for spec in specs)
    entropy = next(s for s in specs if s["layout"]["title"]["text"].startswith("How focused each head is"))
    assert [c for _, c in entropy["data"][0]["colorscale"]] == list(palette.sequential)
    [mix] = matrices(mixing[theme])
    assert mix["colours"]["background"] == palette.background
    assert [c for _, c in mix["scale"]] == list(palette.diverging)
