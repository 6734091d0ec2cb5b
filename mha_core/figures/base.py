"""What every figure shares: the colour language, axis labels, the layout, one heatmap, and small multiples.

One colour scale for attention weights (sequential, fixed 0..1, darker = more) and one for signed values
(diverging, centred at 0); each always means the same. Queries are rows, keys are columns. A matrix too large to
send is pooled first (mha_core.analysis.pooling) and every figure that shows block means says so in its title.
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..analysis.pooling import OVERVIEW_CELLS, finite_or_nan, grid_budget, pool, shown

WEIGHT_SCALE = "Blues"      # attention weights, always on 0..1
SIGNED_SCALE = "RdBu_r"     # any signed value, centred at 0 (red positive, blue negative)
WEIGHT_AXIS = dict(colorscale=WEIGHT_SCALE, cmin=0, cmax=1)
HEAD_COLOURS = ["#4c6ef5", "#f76707", "#2f9e44", "#e03131", "#7048e8", "#1098ad", "#d6336c", "#74b816",
                "#f59f00", "#495057", "#0b7285", "#ae3ec9", "#5c940d", "#c92a2a", "#364fc7", "#e8590c"]
HIGHLIGHT = "#e03131"     # the outline of the selected cells, head or layer
MAX_LABELLED_CELLS = 150  # up to this many cells, each one shows its number (the tiny example, short sentences)
MAX_GROUP_ROW = 6  # groups of up to this many query heads (sharing one K/V head) get a row of panels each
FONT = dict(family="Inter, Segoe UI, Helvetica, Arial, sans-serif", size=13)


def group_rows(group_size: int) -> bool:
    """Whether small multiples of the query heads show one key/value group per row (grouped-query attention)."""
    return 1 < group_size <= MAX_GROUP_ROW


def head_colour(i: int) -> str:
    return HEAD_COLOURS[i % len(HEAD_COLOURS)]


def rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def token_labels(tokens: list[str]) -> list[str]:
    """Unique axis labels "1 The", "2 cat", ... (plotly merges equal category names, so the position is kept).

    Plotly reads labels as a little HTML: <, > and & are escaped so that a token shows as typed. Quotes are not:
    plotly decodes only &lt; &gt; &amp; (and numeric entities), so "&quot;" would show as such.
    """
    return [f"{i + 1} {html.escape(tok, quote=False)}" for i, tok in enumerate(tokens)]


def dim_labels(n: int, prefix: str = "d") -> list[str]:
    return [f"{prefix}{j + 1}" for j in range(n)]


def pooled_labels(labels: list[str], step: int) -> list[str]:
    """Axis labels of a matrix pooled over blocks of `step` cells: the positions each block covers."""
    if step == 1:
        return labels
    return [f"{i + 1}–{min(i + step, len(labels))}" for i in range(0, len(labels), step)]


def cell_numbers(z: np.ndarray, panels: int = 1) -> dict:
    """Print each cell's value inside a small heatmap, so a student can check it by hand.

    With several panels side by side, the cells are narrower, so each panel gets a share of the budget.
    """
    if z.size > MAX_LABELLED_CELLS // panels:
        return {}
    return dict(text=[["" if np.isnan(v) else f"{v:.3g}" for v in row] for row in z], texttemplate="%{text}",
                textfont=dict(size=11))


def pooled_note(step: int) -> str:
    return f"  (averages over {step}×{step} blocks)"  # short: a long title is cut at the chart's edge


def layout(fig: go.Figure, title: str, height: int | None = None, pooled: int = 1) -> go.Figure:
    """The common layout: a left-aligned title (saying so when the figure shows block means), the font, margins."""
    if pooled > 1:
        title += pooled_note(pooled)
    # No plotly template: Streamlit's own chart theme applies, and building one costs time on every figure.
    fig.update_layout(title=dict(text=title, x=0, xanchor="left"), font=FONT, margin=dict(l=10, r=10, t=60, b=10),
                      height=height)
    return fig


def heatmap(z: np.ndarray, x_labels: list[str], y_labels: list[str], title: str, signed: bool = True,
            x_title: str = "", y_title: str = "", zmax: float | None = None, max_cells: int = OVERVIEW_CELLS,
            height: int | None = None, value_name: str = "value", step: int | None = None) -> go.Figure:
    """One labelled heatmap: diverging around 0 when `signed`, else the 0..1 weight scale.

    step: z is already averaged over blocks of step x step cells (see analysis.pooling); None pools it here.
    """
    if step is None:
        z, step = pool(finite_or_nan(z), max_cells)
    z = shown(z, step)
    fig = go.Figure(go.Heatmap(
        z=z, x=pooled_labels(x_labels, step), y=pooled_labels(y_labels, step),
        colorscale=SIGNED_SCALE if signed else WEIGHT_SCALE,
        zmid=0 if signed else None, zmin=None if signed else 0, zmax=zmax if signed else 1,
        hovertemplate=f"{y_title or 'row'} %{{y}}<br>{x_title or 'column'} %{{x}}<br>"
                      f"{'mean ' if step > 1 else ''}{value_name} = %{{z:.6g}}<extra></extra>",
        colorbar=dict(thickness=12),
        **cell_numbers(z),
    ))
    fig.update_xaxes(title=x_title, type="category", tickangle=-45 if len(x_labels) > 6 else 0, automargin=True)
    fig.update_yaxes(title=y_title, type="category", autorange="reversed")
    return layout(fig, title, height, pooled=step)


def signed_axis(limit: float) -> dict:
    """A colour axis for signed values: the diverging scale, centred at 0, from -limit to limit."""
    return dict(colorscale=SIGNED_SCALE, cmid=0, cmin=-limit, cmax=limit)


def panel_grid(panels: list[tuple[str, np.ndarray]], x_labels: list[str], y_labels: list[str], cols: int,
               coloraxis: dict, hover: str, spacing: float = 0.03,
               step: int | None = None) -> tuple[go.Figure, int, int]:
    """Small multiples: one heatmap per (title, z) panel on one shared colour axis, tick labels on the outer panels
    only; returns (figure, rows, step).

    `hover` is the plotly hover text of a cell, e.g. "query %{y}<br>key %{x}<br>weight = %{z:.6g}". step: every z
    is already averaged over blocks of step x step cells (see analysis.pooling.pool_heads); None pools each here
    (the panels share one shape, so one step).
    """
    rows = -(-len(panels) // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[title for title, _ in panels],
                        horizontal_spacing=spacing, vertical_spacing=0.08 / rows + 0.03)
    given, largest = step, 1
    for i, (title, z) in enumerate(panels):
        if given is None:
            z, step = pool(z, grid_budget(len(panels)))
        z = shown(z, step)
        largest = max(largest, step)
        name = f"{title}, mean of a {step}×{step} block" if step > 1 else title
        fig.add_trace(go.Heatmap(z=z, x=pooled_labels(x_labels, step), y=pooled_labels(y_labels, step),
                                 coloraxis="coloraxis", hovertemplate=f"{name}<br>{hover}<extra></extra>",
                                 **cell_numbers(z, len(panels))),
                      row=i // cols + 1, col=i % cols + 1)
    fig.update_layout(coloraxis=dict(colorbar=dict(thickness=12), **coloraxis))
    _label_outer_panels(fig, rows, cols)
    return fig, rows, largest


def _label_outer_panels(fig: go.Figure, rows: int, cols: int, show_x: bool = True, show_y: bool = True) -> None:
    """Tick labels only under the bottom row and left of the first column of small multiples, so none overlap.

    make_subplots numbers its axes row by row (xaxis, xaxis2, ...). On a long axis the browser shows every k-th
    label (plotly's automatic ticks, fitted to the drawn width): thinned, never dropped.
    """
    axes = {}  # one layout update for every axis: plotly's per-row/column selectors are slow
    for r in range(1, rows + 1):
        for c in range(1, cols + 1):
            suffix = "" if (r - 1) * cols + c == 1 else str((r - 1) * cols + c)
            axes[f"xaxis{suffix}"] = dict(type="category", showticklabels=show_x and r == rows, tickangle=-45,
                                          automargin=True, tickmode="auto")
            axes[f"yaxis{suffix}"] = dict(type="category", autorange="reversed", showticklabels=show_y and c == 1,
                                          tickmode="auto")
    fig.update_layout(axes)


def mark_head_blocks(fig: go.Figure, n_heads: int, d_k: float, axis: str, span: int, row=None, col=None,
                     names: list[str] | None = None, colours: list[str] | None = None) -> None:
    """Coloured outlines around each head's block of d_k columns (axis="x") or rows (axis="y").

    names and colours default to "head i" in head i's colour.
    """
    names = names or [f"head {i + 1}" for i in range(n_heads)]
    colours = colours or [head_colour(i) for i in range(n_heads)]
    for i in range(n_heads):
        lo, hi = i * d_k - 0.5, (i + 1) * d_k - 0.5
        box = dict(x0=lo, x1=hi, y0=-0.5, y1=span - 0.5) if axis == "x" else dict(x0=-0.5, x1=span - 0.5, y0=lo, y1=hi)
        fig.add_shape(type="rect", **box, line=dict(color=colours[i], width=2), row=row, col=col)
        label = dict(x=(lo + hi) / 2, y=-0.5, yshift=10) if axis == "x" else dict(x=span - 0.5, y=(lo + hi) / 2,
                                                                                     xanchor="left", xshift=4)
        fig.add_annotation(**label, text=names[i], showarrow=False, font=dict(color=colours[i], size=11),
                           row=row, col=col)


def outline(fig: go.Figure, r0: float, r1: float, c0: float, c1: float, colour: str = HIGHLIGHT) -> None:
    """A rectangle around cells r0..r1-1 x c0..c1-1 of a heatmap on category axes (cell i is centred at i)."""
    fig.add_shape(type="rect", x0=c0 - 0.5, x1=c1 - 0.5, y0=r0 - 0.5, y1=r1 - 0.5, line=dict(color=colour, width=2))
