"""Figures of a trained model: every head of every layer at once, and per-head summaries.

Pure functions (arrays in, a plotly figure out), on the colour language of figures.base.
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from ..analysis.head_stats import ENCODER, Parts
from ..analysis.pooling import MAX_CELLS, pool
from . import describe
from .base import (
    BACKGROUND,
    FOCUS_BAR,
    HIGHLIGHT,
    TEXT,
    WEIGHT_AXIS,
    amount_axis,
    cell_numbers,
    colour_bar,
    described,
    layout,
    pooled_labels,
    series_colour,
    token_labels,
)


def _mosaic_step(n: int, n_layers: int, n_heads: int, groups: int) -> tuple[int, int, int]:
    """(pooling step, panel size, gap) so that the model view's mosaic, gaps included, stays within MAX_CELLS."""
    step = 1
    while True:
        size = -(-n // step)
        gap = max(1, size // 10)
        rows = n_layers * (size + gap) - gap
        cols = n_heads * (size + gap) - gap + (groups - 1) * 2 * gap  # a wider gap between K/V groups
        if rows * cols <= MAX_CELLS:
            return step, size, gap
        step += 1


def model_grid_figure(attentions: np.ndarray, tokens: list[str], selected: tuple[int, int] | None = None,
                      group_size: int = 1, mask: np.ndarray | None = None) -> go.Figure:
    """Every head of every layer, (layers, heads, n, n), as one mosaic of small heatmaps on the shared 0..1 scale.

    One heatmap with empty rows and columns between the panels (hundreds of subplots would be slow to build and to
    draw). `selected` = (layer, head), 0-based, is outlined. With grouped-query attention (group_size query heads
    per key/value head), the heads of one K/V head stand closer together under a label naming it. mask
    (n, n), or any (..., n, n) whose first matrix holds for all (a trace's mask): True = blocked, left blank.
    """
    n_layers, n_heads, n, _ = attentions.shape
    groups = n_heads // group_size
    step, size, gap = _mosaic_step(n, n_layers, n_heads, groups)
    labels = pooled_labels(token_labels(tokens), step)
    col0 = [h * (size + gap) + (h // group_size) * 2 * gap * (group_size < n_heads) for h in range(n_heads)]
    row0 = [l * (size + gap) for l in range(n_layers)]
    z = np.full((row0[-1] + size, col0[-1] + size), np.nan, dtype=np.float32)  # half the bytes of float64
    blocked = None if mask is None else np.asarray(mask).reshape(-1, n, n)[0]  # (n, n)
    for l in range(n_layers):
        for h in range(n_heads):
            w = attentions[l, h] if blocked is None else np.where(blocked, np.nan, attentions[l, h])
            z[row0[l]:row0[l] + size, col0[h]:col0[h] + size] = pool(w, size * size)[0] if step > 1 else w
    # Category labels for the hover text; each gap gets a distinct label of its own (its cells are empty, never
    # hovered, and no tick label is drawn).
    x = [f"·{i}" for i in range(z.shape[1])]
    y = [f"·{i}" for i in range(z.shape[0])]
    for h, c in enumerate(col0):
        x[c:c + size] = [f"head {h + 1}, key {label}" for label in labels]
    for l, r in enumerate(row0):
        y[r:r + size] = [f"layer {l + 1}, query {label}" for label in labels]
    mean = "mean " if step > 1 else ""
    fig = go.Figure(go.Heatmap(z=z, x=x, y=y, coloraxis="coloraxis", hoverongaps=False,
                               hovertemplate=f"%{{y}}<br>%{{x}}<br>{mean}weight = %{{z:.4f}}<extra></extra>"))
    # A colour bar of fixed length at the top: the figure can be thousands of pixels tall.
    fig.update_layout(coloraxis=dict(colorbar=colour_bar("weight", blocked is not None and blocked.any(),
                                                         lenmode="pixels", len=320, y=1, yanchor="top"),
                                     **WEIGHT_AXIS))
    bare = dict(type="category", showticklabels=False, ticks="", showgrid=False, zeroline=False, showline=False)
    fig.update_xaxes(**bare)
    fig.update_yaxes(autorange="reversed", **bare)
    titles = [dict(x=c + (size - 1) / 2, y=1, yref="paper", yanchor="bottom", showarrow=False, text=f"head {h + 1}",
                   font=dict(size=12))
              for h, c in enumerate(col0)]
    if group_size > 1:  # one label over each group of query heads that share a key/value head
        titles += [dict(x=(col0[j * group_size] + col0[(j + 1) * group_size - 1] + size - 1) / 2, y=1,
                        yref="paper", yanchor="bottom", yshift=18, showarrow=False,
                        text=f"query heads {j * group_size + 1}–{(j + 1) * group_size}: K/V head {j + 1}",
                        font=dict(size=12)) for j in range(groups)]
    titles += [dict(x=0, xref="paper", xanchor="right", xshift=-4, y=r + (size - 1) / 2, showarrow=False,
                    text=f"layer {l + 1}", font=dict(size=12)) for l, r in enumerate(row0)]
    fig.update_layout(annotations=titles)  # at once: add_annotation validates the whole layout on every call
    if selected is not None:
        l, h = selected
        fig.add_shape(type="rect", x0=col0[h] - 0.5, x1=col0[h] + size - 0.5, y0=row0[l] - 0.5,
                      y1=row0[l] + size - 0.5, line=dict(color=HIGHLIGHT, width=3))
    panel = min(110, max(60, 800 // n_heads))  # pixels per panel: about square on a page 800 pixels wide
    title = f"All {n_layers} × {n_heads} heads on this sentence (rows: queries, columns: keys)"
    layout(fig, title, height=panel * n_layers + 130, pooled=step)
    fig.update_layout(margin=dict(l=70, t=110 if group_size > 1 else 90))
    names = describe.names(tokens)
    return described(fig, describe.head_weights(
        attentions.reshape(n_layers * n_heads, n, n), names, names, title,
        [f"layer {l + 1}, head {h + 1}" for l in range(n_layers) for h in range(n_heads)]))


def head_summary_figure(values: np.ndarray, metric: str, parts: Parts = ENCODER) -> go.Figure:
    """One summary number per (layer, head) as a layer x head heatmap; parts names the metric."""
    n_layers, n_heads = values.shape
    is_share = metric != "entropy"
    words = parts.labels[metric]
    label = f"mean {words}" if not is_share else words if metric in parts.extra else f"share: {words}"
    # Shares on the fixed 0..1; entropy in bits from 0 to the largest here (its maximum depends on each text), on
    # the scale turned round: focused (low entropy) takes a large weight's end, as one key takes that row.
    finite = values[np.isfinite(values)]
    axis = amount_axis(1.0 if is_share or not finite.size else float(finite.max()))
    axis["reversescale"] = not is_share
    heads, layers = [f"head {h + 1}" for h in range(n_heads)], [f"layer {l + 1}" for l in range(n_layers)]
    fig = go.Figure(go.Heatmap(
        z=values, x=heads, y=layers, colorscale=axis["colorscale"], zmin=axis["cmin"], zmax=axis["cmax"],
        reversescale=axis["reversescale"],
        hoverongaps=False, hovertemplate=f"%{{y}}, %{{x}}<br>{label} = %{{z:.4f}}<extra></extra>",
        colorbar=colour_bar("share" if is_share else FOCUS_BAR),
        **cell_numbers(values, axis, fmt="{:.2f}", most=values.size)))
    fig.update_traces(textfont_size=10)
    fig.update_yaxes(autorange="reversed")
    title = f"{label[0].upper()}{label[1:]}, per layer and head"
    fig = layout(fig, title, height=80 + (45 if n_layers <= 12 else 26) * n_layers)
    return described(fig, describe.amounts(values, layers, heads, title, unit="" if is_share else "bits"))


# One look per part of a head's attention: a grey (a series colour, so never a head's: head colours mean heads) and,
# for the positional parts, a hatching. Four greys cannot name six parts, and lightness alone is all a grey has: the
# hatching's shape tells the parts apart whatever the viewer's colour vision, and neighbours in a stacked bar differ
# in lightness too (tests/unit/test_colours.py). The special tokens are solid and dark, the positions hatched, the
# rest (content) solid and light; the legend names each part with its look. (colour, hatching, the hatching's ink)
PART_STYLES = {"cls": (series_colour(0), "", None), "sep": (series_colour(2), "", None),
               "first": (series_colour(0), "", None),
               "self": (series_colour(1), "x", BACKGROUND), "prev": (series_colour(3), "/", TEXT),
               "next": (series_colour(1), "\\", BACKGROUND), "local": (series_colour(1), "\\", BACKGROUND),
               "elsewhere": (series_colour(3), "", None)}


def part_marker(name: str) -> dict:
    """The bar marker of one part: its grey, and its hatching (drawn in ink that reads on that grey) if any."""
    colour, shape, ink = PART_STYLES[name]
    marker = dict(color=colour, line=dict(color=BACKGROUND, width=1))
    if shape:
        marker["pattern"] = dict(shape=shape, fillmode="overlay", fgcolor=ink, fgopacity=1, size=7, solidity=0.3)
    return marker


def head_split_figure(rows: list[dict], title: str, parts: Parts = ENCODER) -> go.Figure:
    """Where each head's attention goes, as one stacked bar per head: the shares of head_stats, which sum to 1.

    `rows` are head_summary rows (of one layer, say); a part whose token the text lacks (NaN) is drawn as 0.
    """
    heads = [f"head {r['head'] + 1}" for r in rows]
    fig = go.Figure()
    for name in parts.columns:
        share = [0.0 if np.isnan(r[name]) else r[name] for r in rows]
        label = html.escape(parts.labels[name])
        fig.add_trace(go.Bar(y=heads, x=share, name=label, orientation="h", marker=part_marker(name),
                             hovertemplate=f"%{{y}}<br>{label}: %{{x:.3f}}<extra></extra>"))
    fig.update_xaxes(title="share of the head's attention", range=[0, 1])
    fig.update_yaxes(type="category", autorange="reversed")
    layout(fig, title, height=150 + 26 * len(rows))
    fig.update_layout(barmode="stack", margin_t=90,
                      legend=dict(orientation="h", x=0, y=1.0, yanchor="bottom", traceorder="normal"))
    return described(fig, describe.shares(heads, {parts.labels[name]: [r[name] for r in rows]
                                                  for name in parts.columns}, describe.plain(title)))
