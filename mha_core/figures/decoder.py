"""Figures of a decoder: the RoPE rotation of queries and keys, what it does to a product, the next-token prediction.

Pure functions like those of figures.py (arrays in, plotly figure out), on its colour scales: signed values on the
diverging scale centred at 0, probabilities on a fixed 0..1 axis.
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..attention.rope import RelativeScores
from ..attention.trace import Trace
from . import describe
from .base import (
    NEUTRAL,
    cell_numbers,
    colour_bar,
    described,
    dim_labels,
    head_colour,
    layout,
    panel_grid,
    series_colour,
    signed_axis,
    token_labels,
)


def next_token_label(token) -> str:
    """A NextToken as the token tables spell it (Ġ for a space, Ċ for a new line, <|im_end|> for a special token)."""
    return token.token


def rope_figure(trace: Trace, head: int, tokens: list[str], group_size: int = 1) -> dict:
    """Query head `head` (0-based) and the key head it reads, before and after the RoPE rotation, and the change
    (after − before): one row of three panels each, on one signed colour scale."""
    kv = head // group_size
    q0, q1, k0, k1 = trace.q_before_rope[head], trace.q[head], trace.k_before_rope[kv], trace.k[kv]
    panels = [(f"Q_{head + 1} before RoPE (X W_Q)", q0), (f"Q_{head + 1} after RoPE", q1),
              ("the change (after − before)", q1 - q0),
              (f"K_{kv + 1} before RoPE (X W_K)", k0), (f"K_{kv + 1} after RoPE", k1),
              ("the change (after − before)", k1 - k0)]
    limit = float(max(np.abs(z).max() for _, z in panels)) or 1.0
    d_k = trace.q.shape[-1]
    fig, rows, step = panel_grid(panels, dim_labels(d_k, "c"), token_labels(tokens), 3, signed_axis(limit),
                                 "token %{y}<br>component %{x}<br>value = %{z:.6g}", spacing=0.05)
    n = len(tokens)
    title = (f"Query head {head + 1} and key/value head {kv + 1}: each row turned by its position (row 1 not at "
             "all), one colour scale")
    fig = layout(fig, title, height=2 * min(420, max(220, 18 * n + 120)), pooled=step)
    return described(fig, describe.head_values([z for _, z in panels], [name for name, _ in panels], title))


def rope_distance_figure(rel: RelativeScores, query: str, key: str, head: int) -> go.Figure:
    """One query and one key vector placed at every pair of positions: what RoPE adds to their product (left, the
    same colour along each diagonal), and the product by distance (right)."""
    P = rel.products.shape[0]
    a, b = np.indices(rel.products.shape)
    z = np.where(a >= b, rel.products - rel.unrotated, np.nan)  # a decoder only computes keys at or before the query
    limit = float(np.nanmax(np.abs(z))) or 1.0
    positions = [str(p + 1) for p in range(P)]
    fig = make_subplots(rows=1, cols=2, column_widths=[0.42, 0.58], horizontal_spacing=0.2, subplot_titles=[
        "what RoPE adds to q · k (q at position t, k at position s)", "q · k by distance t − s"])
    axis = signed_axis(limit)
    fig.add_trace(go.Heatmap(z=z, x=positions, y=positions, customdata=rel.products, colorscale=axis["colorscale"],
                             zmid=0, zmin=-limit, zmax=limit, colorbar=colour_bar("change", blocked=True, x=0.36),
                             hoverongaps=False, **cell_numbers(z, axis),
                             hovertemplate="query at %{y}<br>key at %{x}<br>q·k after RoPE = %{customdata:.6g}<br>"
                                           "change from q·k = %{z:.6g}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=np.arange(P), y=rel.by_distance, mode="lines+markers", name="after RoPE",
                             line=dict(color=head_colour(head)),
                             hovertemplate="distance %{x}<br>q·k = %{y:.6g}<extra></extra>"), row=1, col=2)
    fig.add_trace(go.Scatter(x=[0, P - 1], y=[rel.unrotated] * 2, mode="lines", name="without RoPE (q · k)",
                             line=dict(color=NEUTRAL, dash="dash"),
                             hovertemplate="without RoPE: q·k = %{y:.6g}<extra></extra>"), row=1, col=2)
    fig.update_xaxes(title="key position s", type="category", row=1, col=1)
    fig.update_yaxes(title="query position t", type="category", autorange="reversed", row=1, col=1)
    fig.update_xaxes(title="distance t − s (tokens)", row=1, col=2)
    fig.update_yaxes(title="q · k", row=1, col=2)
    fig.update_layout(legend=dict(orientation="h", x=1, xanchor="right", y=-0.25))
    fig = layout(fig, f"Head {head + 1}: the query of {html.escape(query)} and the key of {html.escape(key)}, "
                      f"placed at every pair of positions 1 … {P}", height=440)
    distances = [f"distance {d}" for d in range(P)]
    what = (f"Head {head + 1}: q · k of the query of {query} and the key of {key} by distance t − s, with RoPE "
            f"(without RoPE it is {rel.unrotated:.3g} at every distance)")
    return described(fig, describe.bars(distances, rel.by_distance, what, column="q · k"))


def next_token_figure(next_tokens, last_token: str) -> go.Figure:
    """The most likely tokens after a text ending in `last_token` (NextToken: .text, .probability), most likely on
    top, on a 0..1 axis."""
    labels = [f"{i + 1}  {html.escape(next_token_label(t))}" for i, t in enumerate(next_tokens)]
    p = [t.probability for t in next_tokens]
    fig = go.Figure(go.Bar(y=labels, x=p, orientation="h", marker_color=series_colour(1), text=[f"{v:.1%}" for v in p],
                           textposition="outside", cliponaxis=False,
                           hovertemplate="%{y}<br>probability = %{x:.4f}<extra></extra>"))
    fig.update_xaxes(title="probability", range=[0, 1])
    fig.update_yaxes(type="category", autorange="reversed")
    fig = layout(fig, f"The {len(labels)} most likely next tokens after “{html.escape(last_token)}”",
                 height=110 + 34 * len(labels))
    names = [f"'{next_token_label(t)}'" for t in next_tokens]
    return described(fig, describe.bars(names, p, f"The most likely next tokens after '{last_token}'",
                                        fmt="{:.1%}", text_labels=True, column="probability"))
