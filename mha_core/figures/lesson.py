"""Figures of the classroom pages: the cost of heads, the weight matrices of a model to scale, one dot product.

Pure functions like figures.py (numbers in, plotly figure out), on its colours: signed values on the diverging scale
centred at 0; what is compared here (one head or h, MHA / GQA / MQA, the four matrices) is no head, so it takes the
greys of the series, never a head's colour.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..analysis.cost import human_bytes
from ..teaching.published import ModelShape
from ..teaching.worked import WorkedCell, fmt
from . import describe
from .base import SUBTITLE, TEXT, cell_text, described, dim_labels, heatmap, layout, rgba, series_colour

ONE_HEAD_COLOUR, HEADS_COLOUR = series_colour(2), series_colour(0)  # one wide head, h narrow ones
MAX_PRINTED_TERMS = 16   # up to this many, every cell prints its number
# A bar's number goes beside it, at BAR_TEXT px whatever the bar's thickness (inside, plotly shrinks it to the bar:
# 4 px in 18 thin bars), each bar BAR_PX thick so that the numbers of neighbouring bars never touch, and
# the axis BAR_ROOM longer than the longest bar to hold its number.
BAR_PX, BAR_TEXT, BAR_GAP, BAR_ROOM = 14, 11, 0.2, 1.2


def flops_figure(one: dict[str, int], many: dict[str, int], d_model: int, n_heads: int,
                 step_names: dict[str, str], shared: dict[str, int] | None = None,
                 n_kv_heads: int | None = None) -> go.Figure:
    """Multiply-adds of each step (keys of cost.attention_flops, named by step_names) for one head of width d_model
    and for n_heads heads of d_model / n_heads, each with its own key/value head: splitting alone. shared: the same
    heads sharing n_kv_heads key/value heads (grouped-query attention), a third series named as such, since that
    saving is the sharing's, not the splitting's."""
    labels = [step_names[step] for step in one]
    heads = f"{n_heads} head{'s' if n_heads > 1 else ''} of d_k = {d_model // n_heads}"
    series = {f"1 head of d_model = {d_model}": (one, ONE_HEAD_COLOUR),
              heads + (", each with its own K/V head" if shared else ""): (many, HEADS_COLOUR)}
    if shared:
        series[f"{n_heads} heads sharing {n_kv_heads} K/V head{'s' if n_kv_heads > 1 else ''}"] = (
            shared, series_colour(1))
    fig = go.Figure()
    for name, (counts, colour) in series.items():
        fig.add_trace(go.Bar(y=labels, x=list(counts.values()), name=name, orientation="h", marker_color=colour,
                             text=[f"{v:,}" for v in counts.values()], textposition="outside",
                             textfont=dict(size=BAR_TEXT), constraintext="none", cliponaxis=False,
                             hovertemplate="%{y}<br>%{x:,} multiply-adds<extra>" + name + "</extra>"))
    fig.update_yaxes(autorange="reversed", title="")
    longest = max(max(counts.values()) for counts, _ in series.values())
    fig.update_xaxes(title="multiply-adds", range=[0, BAR_ROOM * longest])
    fig.update_layout(barmode="group", bargap=BAR_GAP, legend=dict(orientation="h", y=-0.2))
    same = "the same in every step" if one == many else "they differ"
    title = f"Multiply-adds of each step: 1 head or {n_heads} heads ({same})"
    if shared:
        title += (f"{SUBTITLE}and, a saving of its own, {n_heads} heads sharing {n_kv_heads} K/V "
                  f"head{'s' if n_kv_heads > 1 else ''}</span>")
    # Height: the title's lines, every bar's BAR_PX (and the gaps between steps), the axis and a legend row a series.
    bars = len(labels) * len(series) * BAR_PX / (1 - BAR_GAP)
    height = int((85 if shared else 60) + bars + 45 + 25 * len(series))
    return described(layout(fig, title, height=height), describe.grouped_bars(
        labels, {name: list(counts.values()) for name, (counts, _) in series.items()}, describe.plain(title),
        unit="multiply-adds", fmt="{:,.0f}"))


def weight_shapes_figure(shape: ModelShape) -> go.Figure:
    """W_Q, W_K, W_V and W_O of one attention block as rectangles to scale, split into their heads' blocks."""
    d, h, kv, d_k = shape.d_model, shape.n_heads, shape.n_kv_heads, shape.d_k
    # (name, width, height, blocks): the matrices as the formula uses them, X W_Q with W_Q of d_model x h*d_k.
    mats = [("W_Q", h * d_k, d, h, "d_model × h·d_k"), ("W_K", kv * d_k, d, kv, "d_model × h_kv·d_k"),
            ("W_V", kv * d_k, d, kv, "d_model × h_kv·d_k"), ("W_O", d, h * d_k, h, "h·d_k × d_model")]
    fig, x, gap = go.Figure(), 0.0, 0.15 * d
    for i, (name, width, height, blocks, label) in enumerate(mats):
        colour = series_colour(i % 2)  # the matrices are not heads: greys, neighbours apart
        fig.add_shape(type="rect", x0=x, x1=x + width, y0=0, y1=height, line=dict(color=colour, width=2),
                      fillcolor=rgba(colour, 0.12))
        if 1 < blocks <= 32:
            vertical = name != "W_O"  # W_O's head blocks are its rows
            for b in range(1, blocks):
                at = b * (width if vertical else height) / blocks
                line = dict(x0=x + at, x1=x + at, y0=0, y1=height) if vertical else dict(x0=x, x1=x + width,
                                                                                          y0=at, y1=at)
                fig.add_shape(type="line", **line, line=dict(color=colour, width=0.6))
        fig.add_annotation(x=x + width / 2, y=max(height, d) * 1.02, text=f"<b>{name}</b>", showarrow=False,
                           yanchor="bottom", font=dict(color=TEXT))
        # Shapes under the matrices, on two alternating lines: narrow matrices (GQA's W_K, W_V) sit close together.
        fig.add_annotation(x=x + width / 2, y=0, yshift=-8 - 18 * (i % 2), text=label, showarrow=False,
                           yanchor="top", font=dict(color=TEXT))
        x += width + gap
    fig.update_xaxes(visible=False, range=[-gap / 2, x - gap / 2], constrain="domain")
    fig.update_yaxes(visible=False, range=[-0.3 * d, 1.2 * d], scaleanchor="x")
    fig = layout(fig, f"{shape.name}: the four matrices of one attention block, to scale{SUBTITLE}"
                      f"d_model = {d:,}, h = {h}, h_kv = {kv}; thin lines: one block per head "
                      "(up to 32)</span>", height=360)
    rows = tuple((name, f"{height:,} × {width:,}", blocks) for name, width, height, blocks, _ in mats)
    return described(fig, describe.Description(
        f"{shape.name}, one attention block to scale (d_model = {d:,}, h = {h}, h_kv = {kv}): "
        + ", ".join(f"{name} {size}" for name, size, _ in rows) + ".", ("matrix", "rows × columns", "head blocks"),
        rows))


def dot_product_figure(cell: WorkedCell, query_label: str, key_label: str) -> dict:
    """The query's and the key's d_k numbers and their products (the terms of q·k), one row per component c: each
    term reads across its row, and every printed number has the width of its column (side by side, one column per
    component, they ran into each other)."""
    terms = np.vstack([cell.q, cell.k, cell.products]).T         # (d_k, 3): q_t,c, k_s,c and their product
    names = [f"q_t: query {query_label}", f"k_s: key {key_label}", "q_t,c × k_s,c"]
    components = dim_labels(cell.d_k, "c=")
    title = f"Head {cell.head + 1}: q_t · k_s term by term: the products add up to {fmt(cell.dot)}"
    fig = heatmap(terms, names, components, title, y_title="component c, from 1 to d_k",
                  height=max(220, min(460, 140 + 20 * cell.d_k)))
    if cell.d_k <= MAX_PRINTED_TERMS:  # every term, in the worked example's own digits
        trace = fig["data"][0]
        axis = dict(colorscale=trace["colorscale"], cmin=trace["zmin"], cmax=trace["zmax"])
        trace.update(text=cell_text(terms, [[fmt(v) for v in row] for row in terms], axis), texttemplate="%{text}")
    return described(fig, describe.values(terms, components, [describe.plain(name) for name in names],
                                          describe.plain(title), text_rows=False))


BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def size_ticks(low: float, high: float) -> tuple[list[float], list[str]]:
    """Tick values (bytes) and labels for a log axis from `low` to `high` bytes: 1, 10 and 100 of each binary unit
    ("1 MiB", "10 MiB", "100 MiB", "1 GiB", ...), every label a size with its unit (a bare "2" or "5" between
    decades reads as a level of its own); every other one when more than eight would crowd the axis."""
    values, labels = [], []
    for power, unit in enumerate(BYTE_UNITS):
        for factor in (1, 10, 100):
            value = factor * 1024.0 ** power
            if low / 3 <= value <= high * 3:
                values.append(value)
                labels.append(f"{factor} {unit}")
    if len(values) > 8:
        values, labels = values[::2], labels[::2]
    return values, labels


def kv_cache_figure(table: list[dict], seq_len: int, batch: int) -> go.Figure:
    """K/V cache bytes per model (x) for MHA, GQA and MQA (bars), on a log scale whose ticks are sizes with their
    units, from published.kv_cache_table; the bar of each model as published is starred.

    The three kinds are no heads: they take the greys of the series (a star, not an outline, marks a bar as
    published: an outline does not show on the darkest grey)."""
    colours = {"MHA": series_colour(0), "GQA": series_colour(1), "MQA": series_colour(2)}
    fig = go.Figure()
    for kind, colour in colours.items():
        rows = [r for r in table if r["attention"] == kind]
        fig.add_trace(go.Bar(x=[r["model"] for r in rows], y=[r["total"] for r in rows], name=kind,
                             marker=dict(color=colour), text=["★" if r["own"] else "" for r in rows],
                             textposition="outside", textfont=dict(color=TEXT, size=14), cliponaxis=False,
                             customdata=[[human_bytes(r["total"]), "as published" if r["own"] else "a variant"]
                                         for r in rows],
                             hovertemplate="%{x}<br>" + kind + ": %{customdata[0]} (%{customdata[1]})"
                                           "<extra></extra>"))
    totals = [r["total"] for r in table if r["total"] > 0]
    values, labels = size_ticks(min(totals), max(totals))
    fig.update_yaxes(type="log", title="cache size (log scale)", tickmode="array", tickvals=values, ticktext=labels,
                     minor=dict(showgrid=False, ticks=""))
    fig.update_xaxes(type="category")
    fig.update_layout(barmode="group", legend=dict(orientation="h", y=-0.25))
    title = f"K/V cache at {seq_len:,} tokens × batch {batch}, 16 bits per number; ★: each model as published"
    models = list(dict.fromkeys(r["model"] for r in table))
    sizes = {(r["model"], r["attention"]): r["total"] for r in table}  # bytes
    return described(layout(fig, title, height=380), describe.grouped_bars(
        models, {kind: [sizes.get((name, kind), np.nan) for name in models] for kind in colours}, title,
        show=lambda n: human_bytes(int(n))))  # in the units of the table beside it: "48 MiB", "1.5 GiB"

