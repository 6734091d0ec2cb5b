"""One heatmap drawn in the browser as SVG (a Streamlit custom component v2), redrawn in place when its numbers change.

Why not st.plotly_chart, for a chart that changes with every head, query and h: Streamlit names a plotly chart by a
hash of its figure, so a changed figure is a new chart and the browser mounts Plotly.js anew. On the attention page's
open tab ("Mixing the values") that mount was about a third of an h change on the default example (0.36 s with it,
0.24 s without; benchmarks/browser.py). A keyed component keeps its element, and the new numbers are drawn into it.

The figure is the same figure dict figures.* builds for plotly (figures.heatmap), so it works in a notebook as before;
matrix_data reads it, in the colours of the page's theme (figures.themed).
"""

from __future__ import annotations

import re

import numpy as np
import streamlit as st

from mha_app.components import source
from mha_app.run import theme
from mha_app.ui.charts import chart_words
from mha_core.figures import PALETTES, Description, themed
from mha_core.figures.describe import plain

_MATRIX = st.components.v2.component("mha_app.matrix", **{kind: source(__package__, f"matrix.{kind}")
                                                          for kind in ("html", "css", "js")})
_INK = re.compile(r'^<span style="color:(#[0-9a-f]{6})">(.*)</span>$', re.S)  # a cell's number (figures.cell_text)


def matrix_data(fig: dict, theme_name: str, name: str) -> dict:
    """What the browser draws of a one-heatmap figure dict, as JSON: its cells (None where blank), labels, titles,
    colour scale and hover text, each cell's printed number and its ink, the theme's colours, the text alternative.
    Labels and titles as plotly shows them (its little HTML undone), since the browser sets them as text.
    name: the saved file's name, without its extension."""
    spec = themed(fig, theme_name)
    raw, trace, layout = fig["data"][0], spec["data"][0], spec["layout"]
    z = np.asarray(raw["z"], dtype=float)
    text = [[_INK.match(cell) for cell in row] for row in trace["text"]] if "text" in trace else None
    palette = PALETTES[theme_name]
    description = Description.of(fig)
    return dict(
        z=[[float(v) if np.isfinite(v) else None for v in row] for row in z],
        x=[plain(str(label)) for label in raw["x"]], y=[plain(str(label)) for label in raw["y"]],  # set as text
        title=_lines(layout["title"]["text"]), bar=_lines(trace["colorbar"]["title"]["text"]),
        x_title=layout["xaxis"]["title"]["text"], y_title=layout["yaxis"]["title"]["text"],
        scale=[[float(p), c] for p, c in trace["colorscale"]], zmin=float(raw["zmin"]), zmax=float(raw["zmax"]),
        reverse=bool(raw.get("reversescale")), hover=raw["hovertemplate"],
        text=None if text is None else [[cell.group(2) if cell else "" for cell in row] for row in text],
        ink=None if text is None else [[cell.group(1) if cell else "" for cell in row] for row in text],
        height=int(layout.get("height") or 450), name=name, alt=description.alt if description else plain(
            layout["title"]["text"]),
        colours=dict(text=palette.text, muted=palette.muted, background=palette.background,
                     highlight=palette.highlight))


def _lines(title: str) -> list[str]:
    """A plotly title's lines (split at <br>), each as plain text."""
    return [line for line in (plain(part) for part in re.split(r"<br\s*/?>", title)) if line]


def matrix_view(fig: dict, key: str, name: str | None = None) -> None:
    """Show a one-heatmap figure dict (figures.heatmap's) as SVG, redrawn in place when it changes, with its text
    alternative and numbers under it, as plot() shows a plotly chart's. name: the saved file's (default: key)."""
    _MATRIX(key=key, data=matrix_data(fig, theme.current(), name or key))
    chart_words(Description.of(fig))
