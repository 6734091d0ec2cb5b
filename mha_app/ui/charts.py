"""Charts on a page: the one way to show a figure, in the page's theme, with its words and numbers beside it."""

from __future__ import annotations

import functools

import pandas as pd
import plotly.io as pio
import streamlit as st
from plotly.basedatatypes import BaseFigure

from mha_app.copy.asides import CHART_WORDS, IMAGE_FORMAT_HELP, first_rows
from mha_app.copy.markup import escape, quote, table_number
from mha_app.run import theme
from mha_core.figures import Description, themed

IMAGE_FORMATS = ("PNG", "SVG")  # what a chart's camera icon saves (the sidebar's choice, st.session_state.image_format)


MAX_TABLE_ROWS = 100  # a chart's table lists this many rows at most (a long text has thousands of queries)


def plot(fig, key: str | None = None, **select) -> None:
    """The app's one way to show a figure (a plotly figure or its plain dict): in the colours of the page's theme,
    named for screen readers by its text alternative (figures.describe), with that text and its numbers in a table
    on request, collapsed; its camera icon saves it in the sidebar's format (PNG or SVG). select: st.plotly_chart's
    on_select and selection_mode, for a figure whose points can be clicked."""
    description = Description.of(fig)
    spec = themed(fig, theme.current())  # a copy: fig itself is left as it is
    spec["layout"].pop("meta", None)  # the description is shown below; the browser does not need a second copy
    spec["layout"].setdefault("template", _template(pio.templates.default))  # what a go.Figure carries
    image = st.session_state.get("image_format") or IMAGE_FORMATS[0]
    st.plotly_chart(_Checked(spec), width="stretch", key=key, alt=description.alt if description else None,
                    config={"displaylogo": False, "toImageButtonOptions": {"format": image.lower(), "scale": 2}},
                    **select)
    chart_words(description)


def chart_words(description: Description | None) -> None:
    """A chart's text alternative and its numbers, collapsed under it."""
    if description is not None and description.rows:
        with st.expander(CHART_WORDS, icon=":material/table_view:"):
            chart_table(description)


@functools.cache
def _template(name: str) -> dict:
    """Plotly's template `name` as JSON: a go.Figure carries its default template, a figure dict does not (plotly.io
    adds it when it shows one), and Streamlit's chart theme is applied over it."""
    return pio.templates[name].to_plotly_json()


class _Checked(BaseFigure):
    """A finished figure dict, handed to st.plotly_chart as it is.

    st.plotly_chart checks a dict again by building a plotly figure object from it (plotly.tools.
    return_figure_from_figure_or_data), which costs as much as building the figure did (benchmarks/README.md) and
    fails on a figure without traces (the pipeline's boxes); a plotly figure object it takes as checked, by its
    to_dict(). Every figure here was built by figures.* (checked by plotly where built with plotly's objects, by the
    unit tests where built as a dict) and then only recoloured (figures.theme), so it is taken as it is: nothing of
    plotly's object tree is built (no BaseFigure.__init__)."""

    def __init__(self, spec: dict):
        self._spec = spec

    def to_dict(self) -> dict:
        return self._spec

    to_plotly_json = to_dict


def image_format() -> None:
    """The format every chart's camera icon saves in: PNG, or SVG (vector: sharp at any size, editable)."""
    st.segmented_control("Charts save as", IMAGE_FORMATS, default=IMAGE_FORMATS[0], required=True, key="image_format",
                         help=IMAGE_FORMAT_HELP)


def chart_table(description: Description) -> None:
    """A chart's text alternative as plain text, and its numbers as a table a screen reader reads cell by cell
    (st.table is an HTML table; its cells are Markdown, so user text is quoted and the app's own words escaped)."""
    st.text(description.alt)
    rows = description.rows[:MAX_TABLE_ROWS]
    header = [escape(c) or " " * (i + 1) for i, c in enumerate(description.columns)]  # unique, even when blank
    cells = [[quote(v, limit=40) if i in description.text_columns else table_number(v) if isinstance(v, (int, float))
              else escape(v) for i, v in enumerate(row)] for row in rows]
    st.table(pd.DataFrame(cells, columns=header), hide_index=True)
    if len(description.rows) > MAX_TABLE_ROWS:
        st.caption(first_rows(MAX_TABLE_ROWS, len(description.rows)))
