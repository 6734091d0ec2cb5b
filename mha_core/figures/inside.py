"""Figures for looking inside a head: queries and keys as points (analysis.qk_plane), what each key really adds
(analysis.contributions) and attention followed through the layers (analysis.rollout). Pure functions, arrays in,
figure out, in the colour language of figures.base: weights and shares on the sequential 0..1 scale, queries as
rows, keys as columns; the chosen query in the highlight colour that attention figures use for outlines.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ..analysis.head_stats import ENCODER, Parts
from ..analysis.pooling import grid_budget, pool_heads, pool_stack, pool_stage
from ..analysis.qk_plane import QKPlane
from ..attention.trace import Trace
from . import describe
from .base import (
    BACKGROUND,
    FAINT,
    HIGHLIGHT,
    MUTED,
    NEUTRAL,
    SUBTITLE,
    TEXT,
    WEIGHT_AXIS,
    WEIGHT_SCALE,
    cell_numbers,
    colour_bar,
    described,
    head_colour,
    layout,
    outline,
    panel_grid,
    series_colour,
    token_labels,
)
from .steps import attention_figure, head_panels

CHOSEN = HIGHLIGHT          # the chosen query, here and in the score matrix (attention figures' outline colour)
QUERY_COLOUR = NEUTRAL
KEY_COLOUR = MUTED          # the keys' names (text colour: keys are not heads)
LINK_COLOUR = series_colour(1)  # the lines from the query to its strongest keys
TOP_KEYS = 5                # the chosen query's strongest keys that get a line
MAX_POINT_LABELS = 24       # up to this many tokens, points get their token's name where it fits; beyond, hover only
PLANE_MIN_WIDTH = 520      # px: the narrowest plot area the plane is drawn in (the main column at 1280 px is wider)


@dataclass(frozen=True)
class PlaneSize:
    """The plane's layout in px: names are placed apart for this height, these margins and this font, on a plot
    area at least PLANE_MIN_WIDTH wide (wider only adds room at the sides)."""

    height: int = 560
    top: int = 90
    bottom: int = 90
    font: int = 11          # a point's name
    brief: bool = False     # no legend, and a one-line title (where the text beside the figure says the rest)

    @property
    def plot_height(self) -> int:
        return self.height - self.top - self.bottom


CHAR_WIDTH, LABEL_PAD = 0.62, 3  # a name's width: 0.62 em a character (wider than Inter's mean), plus a margin
MARKER_ROOM = 7             # px around a point that no name covers
MAX_ROLLOUT_PANELS = 6


def _plane_hover(labels: list[str], what: str) -> list[str]:
    return [f"{what} {label}" for label in labels]


def qk_plane_figure(plane: QKPlane, tokens: list[str], query: int, key_tokens: list[str] | None = None,
                    top: int = TOP_KEYS, group_size: int = 1, size: PlaneSize | None = None) -> go.Figure:
    """The head's queries (●) and keys (◆) in one plane, keys coloured by the chosen query's weight (0..1); lines
    join the query to its `top` strongest visible keys, as wide as the weight. The arrow from the space's zero (✚) to
    the query is the direction along which its keys' scores grow. With RoPE, the keys before their rotary turn (○)
    are joined to where the turn took them. Axes keep equal units, so distances are drawn true to the plane.

    size: the figure's height, top margin and name font (PlaneSize()), for which the names are placed apart; a
    presentation draws larger.
    """
    size = size or PlaneSize()
    q_labels, k_labels = token_labels(tokens), token_labels(key_tokens or tokens)
    n, m = plane.queries.shape[0], plane.keys.shape[0]
    w = plane.weights[query].astype(np.float64)                       # (m,)
    visible = plane.visible(query)
    fig = go.Figure()
    if plane.keys_before_rope is not None:
        before, after = plane.keys_before_rope, plane.keys
        xs = np.column_stack([before[:, 0], after[:, 0], np.full(m, np.nan)]).ravel()  # before, after, gap per key
        ys = np.column_stack([before[:, 1], after[:, 1], np.full(m, np.nan)]).ravel()
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color=FAINT, width=1), hoverinfo="skip",
                                 name="rotary turn of each key", legendgroup="rope"))
        fig.add_trace(go.Scatter(x=before[:, 0], y=before[:, 1], mode="markers", name="keys before RoPE",
                                 legendgroup="rope", marker=dict(symbol="circle-open", size=7, color=NEUTRAL),
                                 text=_plane_hover(k_labels, "key before its turn:"),
                                 hovertemplate="%{text}<extra></extra>"))
    fig.add_trace(go.Scatter(x=plane.queries[:, 0], y=plane.queries[:, 1], name="queries", mode="markers",
                             marker=dict(symbol="circle", size=8, color=QUERY_COLOUR),
                             customdata=q_labels, hovertemplate="query %{customdata}<extra></extra>"))
    hover = [f"key {label}<br>weight = {weight:.4f}" if seen else f"key {label}<br>blocked for this query"
             for label, weight, seen in zip(k_labels, w, visible, strict=True)]
    fig.add_trace(go.Scatter(x=plane.keys[:, 0], y=plane.keys[:, 1], name="keys", mode="markers",
                             marker=dict(symbol="diamond", size=10, color=w, line=dict(color=MUTED, width=1),
                                         colorbar=colour_bar("weight"), **_marker_axis()),
                             customdata=hover, hovertemplate="%{customdata}<extra></extra>"))
    if not visible.all():  # a blocked key is no colour of the weight scale: hollow, in grey, over its diamond
        fig.add_trace(go.Scatter(x=plane.keys[~visible, 0], y=plane.keys[~visible, 1], mode="markers",
                                 name="keys blocked for this query",
                                 marker=dict(symbol="diamond", size=10, color=BACKGROUND,
                                             line=dict(color=NEUTRAL, width=1.5)),
                                 customdata=[h for h, seen in zip(hover, visible, strict=True) if not seen],
                                 hovertemplate="%{customdata}<extra></extra>"))
    # The query's strongest keys, each joined by a line as wide as its weight (one trace per line: plotly has one
    # width per line trace); the legend names them once.
    strongest = [s for s in np.argsort(-np.where(visible, w, -1.0), kind="stable")[:top] if visible[s] and w[s] > 0]
    origin, point = plane.origin, plane.queries[query]
    links = f"lines: its {len(strongest)} strongest key{'s' if len(strongest) > 1 else ''} (width = weight)"
    for rank, s in enumerate(strongest):
        fig.add_trace(go.Scatter(x=[point[0], plane.keys[s, 0]], y=[point[1], plane.keys[s, 1]], mode="lines",
                                 line=dict(color=LINK_COLOUR, width=1 + 9 * float(w[s])), opacity=0.7,
                                 name=links, legendgroup="strongest", showlegend=rank == 0, hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=[origin[0]], y=[origin[1]], mode="markers", name="zero of the space",
                             marker=dict(symbol="cross-thin", size=12, line=dict(color=TEXT, width=2)),
                             hovertemplate="the zero of the head's space<extra></extra>"))
    fig.add_trace(go.Scatter(x=[point[0]], y=[point[1]], mode="markers", name=f"query {q_labels[query]}",
                             marker=dict(symbol="circle", size=14, color=CHOSEN, line=dict(color=BACKGROUND, width=1)),
                             hovertemplate=f"chosen query {q_labels[query]}<extra></extra>"))
    fig.add_annotation(x=point[0], y=point[1], ax=origin[0], ay=origin[1], xref="x", yref="y", axref="x", ayref="y",
                       showarrow=True, arrowhead=3, arrowwidth=1.5, arrowcolor=CHOSEN, text="")
    share = plane.explained_axes
    drawn = [plane.queries, plane.keys, origin[None]] + ([] if plane.keys_before_rope is None
                                                         else [plane.keys_before_rope])
    points = np.vstack(drawn)                                               # (every point drawn, 2)
    x_range, y_range = plane_ranges(points, size)
    # Named always (by a line where no spot beside the point is free): the chosen query, the zero, and the keys the
    # lines go to, strongest first. Then, where a name fits, the other keys by weight and the other queries.
    names = [(point, html.escape(tokens[query], quote=False), CHOSEN, True), (origin, "0", TEXT, True)]
    key_names = [html.escape(t, quote=False) for t in (key_tokens or tokens)]
    names += [(plane.keys[s], key_names[s], KEY_COLOUR, True) for s in strongest]
    if m <= MAX_POINT_LABELS:
        rest = [s for s in np.argsort(-np.where(visible, w, -1.0), kind="stable") if s not in strongest]
        names += [(plane.keys[s], key_names[s], KEY_COLOUR, False) for s in rest]
    if n <= MAX_POINT_LABELS:
        names += [(plane.queries[t], html.escape(tokens[t], quote=False), QUERY_COLOUR, False) for t in range(n)
                  if t != query]
    placed = place_labels(names, points, x_range, y_range, size)
    fig.update_layout(annotations=[*fig.layout.annotations, *placed])
    left_off = len(names) - len(placed)
    fig.update_xaxes(title=f"plane axis 1 ({share[0]:.0%} of the spread)"
                     + (f"; {left_off} names of weak keys or other queries would overlap: hover their points"
                        if left_off else ""),
                     zeroline=False, range=list(x_range), constrain="domain")
    # Equal units, and the ranges stay those of the points: a wider plot area leaves room at the sides instead of
    # stretching the x range past the points (-6 .. 5 for points within -1.5 .. 1.2).
    # brief: the short title fits the height of a projector's screen (the text beside it gives the spread)
    fig.update_yaxes(title=f"axis 2 ({share[1]:.0%})" if size.brief else f"plane axis 2 ({share[1]:.0%} of the spread)",
                     zeroline=False, scaleanchor="x",
                     scaleratio=1, range=list(y_range), constrain="domain")
    reads = f" (keys of K/V head {plane.kv_head + 1})" if group_size > 1 else ""
    title = (f"Head {plane.head + 1}{reads}: queries and keys in the plane that keeps {plane.explained:.0%} of their "
             "spread")
    if not size.brief:
        title += (f"{SUBTITLE}query {q_labels[query]}: of two keys, the one further along its arrow scores higher "
                  f"for {plane.order_kept(query):.0%} of pairs, the nearer one for "
                  f"{plane.order_kept(query, 'distance'):.0%} (50% would be chance)</span>")
    layout(fig, title, height=size.height)
    fig.update_layout(margin_t=size.top, margin_b=size.bottom, showlegend=not size.brief,
                      legend=dict(orientation="h", x=0, y=-0.2, yanchor="top"))
    row = describe.weight_row(np.where(visible, w, np.nan), describe.names(tokens)[query],
                              describe.names(key_tokens or tokens), plane.head)
    return described(fig, describe.Description(
        f"{describe.plain(title)}. {row.alt}", row.columns, row.rows, row.text_columns))


def plane_ranges(points: np.ndarray, size: PlaneSize) -> tuple[tuple[float, float], tuple[float, float]]:
    """The x and y ranges of the plane: every point with a margin, the y range tall enough that on a plot area at
    least PLANE_MIN_WIDTH px wide the shared unit (scaleanchor) is set by the height: one px per unit for any width."""
    lo, hi = points.min(axis=0), points.max(axis=0)                        # (2,), (2,)
    span = np.maximum(hi - lo, 1e-9)
    lo, hi = lo - 0.12 * span.max(), hi + 0.12 * span.max()                 # room for names at the edges
    x_span, y_span = hi[0] - lo[0], hi[1] - lo[1]
    tall = x_span * size.plot_height / PLANE_MIN_WIDTH                      # the y span that fits the narrowest width
    if y_span < tall:
        mid = (lo[1] + hi[1]) / 2
        lo[1], hi[1] = mid - tall / 2, mid + tall / 2
    return (float(lo[0]), float(hi[0])), (float(lo[1]), float(hi[1]))


# Where a name may sit around its point, in order of preference: (x, y) direction of its centre from the point.
LABEL_SPOTS = ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, 1), (1, -1), (-1, -1))
# Where a name that must be shown may sit farther off, joined to its point by a line: distances (px) from the point,
# each tried in 16 directions, nearest first.
LEADER_RADII = tuple(range(28, 400, 14))
LEADER_ANGLES = np.linspace(np.pi / 2, np.pi / 2 + 2 * np.pi, 16, endpoint=False)  # straight up first


def place_labels(names: list[tuple[np.ndarray, str, str, bool]], points: np.ndarray, x_range: tuple[float, float],
                 y_range: tuple[float, float], size: PlaneSize) -> list[dict]:
    """Annotations naming points, none overlapping another or any point: each (point (2,), text, colour, must) in
    turn takes the first spot of LABEL_SPOTS that is free and inside the plot. A name that must be shown (the chosen
    query, the keys the text talks about) and finds none takes the nearest free spot farther off, with a line to
    its point; any other is left off (its point's hover names it).

    Boxes are measured in px at the scale plane_ranges fixes (plot height / y span px per unit)."""
    scale = size.plot_height / (y_range[1] - y_range[0])                   # px per unit
    width_px = (x_range[1] - x_range[0]) * scale

    def px(p) -> np.ndarray:
        return np.array([(p[0] - x_range[0]) * scale, (p[1] - y_range[0]) * scale])

    taken = [(*(px(p) - MARKER_ROOM), *(px(p) + MARKER_ROOM)) for p in points]  # (x0, y0, x1, y1) in px
    out = []
    for point, text, colour, must in names:
        w, h = CHAR_WIDTH * size.font * len(text) + 2 * LABEL_PAD, 1.3 * size.font
        centre = px(point)
        beside = [(dx * (MARKER_ROOM + w / 2 if dx else 0), dy * (MARKER_ROOM + h / 2)) for dx, dy in LABEL_SPOTS]
        farther = [(r * np.cos(a), r * np.sin(a)) for r in LEADER_RADII for a in LEADER_ANGLES] if must else []
        for k, (ox, oy) in enumerate(beside + farther):
            cx, cy = centre[0] + ox, centre[1] + oy
            box = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
            inside = box[0] >= 0 and box[2] <= width_px and box[1] >= 0 and box[3] <= size.plot_height
            if inside and not any(_overlap(box, other) for other in taken):
                taken.append(box)
                note = dict(x=float(point[0]), y=float(point[1]), xref="x", yref="y", text=text, xanchor="center",
                            yanchor="middle", name="point name", font=dict(size=size.font, color=colour))
                if k < len(beside):
                    note.update(showarrow=False, xshift=float(ox), yshift=float(oy))
                else:  # the text at (ax, ay) px from its point (plotly's ay runs down), a thin line between
                    note.update(showarrow=True, ax=float(ox), ay=float(-oy), axref="pixel", ayref="pixel",
                                arrowhead=0, arrowwidth=1, arrowcolor=MUTED, standoff=MARKER_ROOM)
                out.append(note)
                break
    return out


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _marker_axis() -> dict:
    """The weight scale for markers (figures.WEIGHT_AXIS is written for a colour axis)."""
    return dict(colorscale=WEIGHT_SCALE, cmin=0, cmax=1)


def query_row_figure(trace: Trace, head: int, query: int, tokens: list[str], stage: str = "scaled",
                     scale: float = 1.0, key_tokens: list[str] | None = None,
                     pooled: tuple[np.ndarray, int] | None = None) -> dict:
    """figures.attention_figure with the chosen query's row outlined in the plane's highlight colour, so the two
    figures show the same query. A pooled overview outlines the block row that holds it."""
    pooled = pooled if pooled is not None else pool_stage(trace, head, stage)
    fig = attention_figure(trace, head, tokens, stage=stage, scale=scale, key_tokens=key_tokens, pooled=pooled)
    step, m = pooled[1], trace.weights.shape[2]
    outline(fig, query // step, query // step + 1, 0, -(-m // step), colour=CHOSEN)
    return fig  # attention_figure's description; the outline adds no number


def contribution_grid_figure(shares: np.ndarray, tokens: list[str], key_tokens: list[str] | None = None,
                             group_size: int = 1, cols: int | None = None, title: str | None = None,
                             panel_height: int = 260, pooled: tuple[np.ndarray, int] | None = None,
                             mask: np.ndarray | None = None) -> dict:
    """Every head's contribution shares (weighted_norms.contribution_shares: ‖α_ts v_s W_O,iᵀ‖ over its row's sum)
    on the same grid, 0..1 scale and pooling as figures.head_grid_figure's weights, so a switch can swap the two.

    pooled = figures.pool_heads(shares, mask) when it is already computed; mask (h, n, m), a trace's: True =
    blocked, left blank.
    """
    z, step = pooled if pooled is not None else pool_heads(shares, mask)
    title = title or (f"What each key really adds, head by head: ‖weight × value W_O‖ as a share of its row (all "
                      f"{shares.shape[0]} heads)")
    fig = head_panels(z, step, tokens, key_tokens, title, group_size, cols, panel_height,
                      value_name="share of contribution", blocked=mask is not None)
    return described(fig, describe.head_weights(shares, describe.names(tokens), describe.names(key_tokens or tokens),
                                                title, value="share"))


def weight_share_figure(weights: np.ndarray, shares: np.ndarray, head: int, query: int, tokens: list[str],
                        key_tokens: list[str] | None = None) -> go.Figure:
    """One query's weights α_ts beside its contribution shares (weighted_norms.contribution_shares of its row),
    a pair of bars per key on the one 0..1 axis: a key whose share is far below its weight adds little."""
    labels = token_labels(key_tokens or tokens)
    fig = go.Figure([
        go.Bar(x=labels, y=weights, name="weight α_ts", marker_color="#ced4da",
               hovertemplate="key %{x}<br>weight = %{y:.6g}<extra></extra>"),
        go.Bar(x=labels, y=shares, name="share of contribution", marker_color=head_colour(head),
               hovertemplate="key %{x}<br>share of contribution = %{y:.6g}<extra></extra>"),
    ])
    fig.update_xaxes(title="key", type="category", tickangle=-45 if len(labels) > 6 else 0)
    fig.update_yaxes(range=[0, 1])
    layout(fig, f"Head {head + 1}, query {token_labels(tokens)[query]}: each key's weight, and its share of what "
                "the query receives", height=360)
    fig.update_layout(barmode="group", legend=dict(orientation="h", x=0, y=1.02, yanchor="bottom"), margin_t=90)
    return fig


def rollout_layers(n_layers: int, most: int = MAX_ROLLOUT_PANELS) -> list[int]:
    """The layers (0-based) a rollout figure shows by default: all of them, or `most` spread out, the last included."""
    if n_layers <= most:
        return list(range(n_layers))
    return sorted({round(i * (n_layers - 1) / (most - 1)) for i in range(most)})


def rollout_figure(rollout: np.ndarray, tokens: list[str], layers: list[int] | None = None,
                   residual: float = 0.5) -> dict:
    """attention_rollout.rollout (layers, n, n) after some layers (0-based; default rollout_layers), one 0..1 panel
    each: row t says how much of each input token (column) has reached position t."""
    layers = rollout_layers(rollout.shape[0]) if layers is None else list(layers)
    z, step = pool_stack(rollout[layers], grid_budget(len(layers)))
    labels = token_labels(tokens)
    fig, rows, step = panel_grid([(f"after layer {l + 1}", z[i]) for i, l in enumerate(layers)], labels, labels,
                                 min(len(layers), 3), WEIGHT_AXIS,
                                 "position %{y}<br>input token %{x}<br>share = %{z:.4f}", step=step,
                                 value_name="share")
    title = (f"Attention rollout: how much of each input token (columns) reaches each position (rows); "
             f"residual share {residual:g}")
    names = describe.names(tokens)
    return described(layout(fig, title, height=max(300, 300 * rows), pooled=step), describe.head_weights(
        rollout[layers], names, names, title, [f"after layer {l + 1}" for l in layers], value="share"))


def special_share_figure(weight_share: np.ndarray, contribution_share: np.ndarray,
                         parts: Parts = ENCODER) -> dict:
    """Each head's share on the parking tokens (weighted_norms.parked_share), of its weight beside of its
    contribution, as two (layers, heads) panels on the one 0..1 scale."""
    tokens = " + ".join(parts.labels[name] for name in parts.parked)
    n_layers, n_heads = weight_share.shape
    heads, layers = [f"head {h + 1}" for h in range(n_heads)], [f"layer {l + 1}" for l in range(n_layers)]
    fig, _, _ = panel_grid([(f"share of weight on {tokens}", weight_share),
                            (f"share of contribution on {tokens}", contribution_share)],
                           heads, layers, 2, WEIGHT_AXIS, "%{y}, %{x}<br>share = %{z:.3f}", spacing=0.08,
                           value_name="share")
    # Where the cells show their numbers (small models), two decimals fit in a cell.
    for trace, values in zip(fig["data"], (weight_share, contribution_share), strict=True):
        if trace.get("text") is not None:
            trace.update(**cell_numbers(values, WEIGHT_AXIS, panels=2, fmt="{:.2f}"))
            trace["textfont"]["size"] = 10
    title = f"Each head's share on {tokens}: of its weight (left), of what it really adds (right)"
    layout(fig, title, height=120 + (45 if n_layers <= 12 else 26) * n_layers)
    return described(fig, describe.grouped_bars(
        [f"{layer}, {head}" for layer in layers for head in heads],
        {"share of weight": weight_share.ravel(), "share of contribution": contribution_share.ravel()}, title))
