"""Figures of the experiments on heads: grouped-query sharing, the 1/sqrt(d_k) switch, planted and ablated heads.

Pure functions like those of figures.py (arrays in, plotly figure out), with its colour scales: weights on the fixed
0..1 scale, one colour per head (with grouped-query attention, per key/value head).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..attention.trace import Trace
from ..experiments.ablation import LayerChange, OutputChange
from ..experiments.plant import PlantFit
from ..experiments.scaling import SCALES, ScaleComparison
from . import describe
from .base import (
    HIGHLIGHT,
    PALE,
    TEXT,
    WEIGHT_AXIS,
    described,
    head_colour,
    layout,
    panel_grid,
    rgba,
    series_colour,
    token_labels,
)

SCALE_COLOURS = {SCALES[0]: series_colour(0), SCALES[1]: series_colour(2)}  # with 1/sqrt(d_k), without: not heads


def _weights_side_by_side(panels: list[tuple[str, np.ndarray]], tokens: list[str], key_tokens: list[str] | None,
                          title: str, mask: np.ndarray | None = None) -> dict:
    """Two (n, m) matrices of attention weights next to each other on the shared 0..1 scale; mask (n, m): True =
    blocked, blank."""
    n = panels[0][1].shape[0]
    if mask is not None:
        panels = [(name, np.where(mask, np.nan, w)) for name, w in panels]
    fig, _, step = panel_grid(panels, token_labels(key_tokens or tokens), token_labels(tokens), 2, WEIGHT_AXIS,
                              "query %{y}<br>key %{x}<br>weight = %{z:.6g}", spacing=0.08, value_name="weight",
                              blocked=mask is not None)
    fig = layout(fig, title, height=min(640, max(320, 24 * n + 170)), pooled=step)
    return described(fig, describe.head_weights(np.stack([w for _, w in panels]), describe.names(tokens),
                                                describe.names(key_tokens or tokens), describe.plain(title),
                                                [name for name, _ in panels]))


# --- Grouped-query attention -----------------------------------------------------------------------------------

def kv_groups_figure(n_heads: int, n_kv_heads: int) -> go.Figure:
    """Which query heads read which key/value head: query head i reads K/V head i // (n_heads / n_kv_heads).

    The query heads in their head colours; the key/value heads, which are not query heads, in the greys of the
    series (alternating, so that neighbouring groups differ), named in the text colour."""
    group = n_heads // n_kv_heads
    fig = go.Figure()
    for i in range(n_heads):
        j = i // group
        kv_x = (j + 0.5) * group - 0.5  # each K/V box sits under the middle of its group
        fig.add_shape(type="line", x0=i, y0=0.78, x1=kv_x, y1=0.22, line=dict(color=series_colour(j % 2), width=1.5))
    for i in range(n_heads):
        colour = head_colour(i)
        fig.add_shape(type="rect", x0=i - 0.4, x1=i + 0.4, y0=0.78, y1=1.0, line=dict(color=colour, width=2),
                      fillcolor=rgba(colour, 0.15))
        fig.add_annotation(x=i, y=0.89, text=f"Q{i + 1}", showarrow=False, font=dict(color=colour, size=12))
    for j in range(n_kv_heads):
        colour, x = series_colour(j % 2), (j + 0.5) * group - 0.5
        half = max(0.4, group / 2 - 0.1)
        fig.add_shape(type="rect", x0=x - half, x1=x + half, y0=0.0, y1=0.22, line=dict(color=colour, width=2),
                      fillcolor=rgba(colour, 0.3))
        fig.add_annotation(x=x, y=0.11, text=f"K/V {j + 1}", showarrow=False, font=dict(color=TEXT, size=12))
    fig.add_annotation(x=-0.6, y=0.89, text="query heads", showarrow=False, xanchor="right", font=dict(size=12))
    fig.add_annotation(x=-0.6, y=0.11, text="key/value heads", showarrow=False, xanchor="right", font=dict(size=12))
    fig.update_xaxes(visible=False, range=[-3.2, n_heads - 0.4])
    fig.update_yaxes(visible=False, range=[-0.05, 1.05])
    kind = ("multi-query attention: one K/V head for all" if n_kv_heads == 1
            else "plain multi-head attention: one K/V head each" if n_kv_heads == n_heads
            else f"grouped-query attention: {group} query heads per K/V head")
    title = (f"h = {n_heads} query heads, h_kv = {n_kv_heads} key/value head{'s' if n_kv_heads > 1 else ''} "
             f"({kind})")
    rows = tuple((f"K/V head {j + 1}", f"query heads {j * group + 1}–{(j + 1) * group}" if group > 1
                  else f"query head {j + 1}") for j in range(n_kv_heads))
    return described(layout(fig, title, height=200), describe.Description(
        f"{title}. " + "; ".join(f"{kv} is read by {qs}" for kv, qs in rows[:4]) + ("; …" if len(rows) > 4 else "")
        + ".", ("key/value head", "read by"), rows))


# --- The 1/sqrt(d_k) switch ------------------------------------------------------------------------------------

def scale_weights_figure(comparison: ScaleComparison, tokens: list[str], key_tokens: list[str] | None = None,
                         mask: np.ndarray | None = None) -> dict:
    """The compared head's weights with 1/sqrt(d_k) and without, side by side; mask (n, m): that head's blocked pairs
    (True), left blank."""
    d_k, head = comparison.d_k, comparison.head
    return _weights_side_by_side(
        [(f"with 1/√d_k = 1/√{d_k}", comparison.scaled), ("without scaling", comparison.unscaled)],
        tokens, key_tokens, f"Head {head + 1}: the same raw scores, softmaxed with and without 1/√d_k (d_k = {d_k})",
        mask=mask)


def scale_summary_figure(comparison: ScaleComparison) -> go.Figure:
    """Per head: mean row entropy and mean largest weight, with 1/sqrt(d_k) and without."""
    n_heads = len(comparison.entropy[SCALES[0]])
    heads = [f"head {i + 1}" for i in range(n_heads)]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=["mean row entropy (bits): lower = more focused",
                                        "mean largest weight: 1 = all on one key"])
    for name in SCALES:
        label = "with 1/√d_k" if name == SCALES[0] else "without scaling"
        for col, values, fmt in ((1, comparison.entropy[name], ".3f"), (2, comparison.peak[name], ".3f")):
            fig.add_trace(go.Bar(x=heads, y=values, name=label, marker_color=SCALE_COLOURS[name],
                                 showlegend=col == 1, legendgroup=name,
                                 hovertemplate=f"%{{x}}<br>{label}: %{{y:{fmt}}}<extra></extra>"), row=1, col=col)
    fig.update_yaxes(range=[0, 1], row=1, col=2)
    fig.update_xaxes(type="category")
    fig.update_layout(barmode="group", legend=dict(orientation="h", y=-0.2))
    title = f"Every head, with and without 1/√d_k (d_k = {comparison.d_k})"
    series = {f"mean row entropy (bits) {'with' if name == SCALES[0] else 'without'} 1/√d_k": comparison.entropy[name]
              for name in SCALES}
    series |= {f"mean largest weight {'with' if name == SCALES[0] else 'without'} 1/√d_k": comparison.peak[name]
               for name in SCALES}
    return described(layout(fig, title, height=340), describe.grouped_bars(heads, series, title))


# --- Planted heads ---------------------------------------------------------------------------------------------

def plant_figure(trace: Trace, head: int, fit: PlantFit, tokens: list[str],
                 key_tokens: list[str] | None = None) -> dict:
    """The weights the rule asks for next to the planted head's real weights."""
    return _weights_side_by_side(
        [("the rule's weights: softmax(strength · rule)", fit.target_weights),
         (f"head {head + 1}'s weights, computed", trace.weights[head])],
        tokens, key_tokens, f"Head {head + 1}, planted: the rule and the result",
        mask=None if trace.mask is None else trace.mask[head])


# --- Switched-off heads ----------------------------------------------------------------------------------------

def output_change_figure(change: OutputChange, tokens: list[str], off: tuple[int, ...]) -> go.Figure:
    """Per token: how far the output moved (|difference|) and its cosine to the full output."""
    labels = token_labels(tokens)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        subplot_titles=["|output − full output| (0 = unchanged)",
                                        "cosine(output, full output) (1 = same direction)"])
    fig.add_trace(go.Bar(x=labels, y=np.linalg.norm(change.full, axis=-1), name="|full output|",
                         marker_color=PALE, hovertemplate="%{x}<br>|full output| = %{y:.4g}<extra></extra>"),
                  row=1, col=1)
    fig.add_trace(go.Bar(x=labels, y=change.distance, name="|change|", marker_color=HIGHLIGHT,
                         hovertemplate="%{x}<br>|change| = %{y:.4g}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=labels, y=change.cosine, mode="lines+markers", name="cosine",
                             line=dict(color=head_colour(0)), showlegend=False,
                             hovertemplate="%{x}<br>cosine = %{y:.6f}<extra></extra>"), row=2, col=1)
    low = np.nanmin(change.cosine) if np.isfinite(change.cosine).any() else 0.0
    fig.update_yaxes(range=[min(0.0, float(low)) - 0.05, 1.05], row=2, col=1)
    fig.update_xaxes(type="category", tickangle=-45 if len(labels) > 6 else 0)
    fig.update_layout(barmode="overlay", legend=dict(orientation="h", y=1.12, x=1, xanchor="right"))
    heads = " and ".join(filter(None, (", ".join(map(str, off[:-1])), str(off[-1]))))  # "2 and 5", "1, 3 and 5"
    title = f"How far each token's output moved with head{'s' if len(off) > 1 else ''} {heads} switched off"
    names = describe.names(tokens)
    return described(layout(fig, title, height=460), describe.grouped_bars(
        names, {"|full output|": np.linalg.norm(change.full, axis=-1), "|change|": change.distance,
                "cosine(output, full output)": change.cosine}, title))


def removal_figure(values: np.ndarray, title: str, y_title: str, off: tuple[int, ...] = ()) -> go.Figure:
    """One bar per head (1-based labels): the effect of switching that head alone off; `off` heads are marked."""
    labels = [f"head {i + 1}" + (" (off now)" if i + 1 in off else "") for i in range(len(values))]
    fig = go.Figure(go.Bar(x=labels, y=values, marker_color=[head_colour(i) for i in range(len(values))],
                           hovertemplate="%{x}<br>%{y:.4g}<extra></extra>"))
    fig.update_xaxes(title="switched off alone", type="category")
    fig.update_yaxes(title=y_title)
    return described(layout(fig, title, height=320),
                     describe.bars(labels, values, describe.plain(title), column=describe.plain(y_title)))


def layer_change_figure(change: LayerChange, layer: int) -> go.Figure:
    """Mean and largest relative change of each layer's output (0-based `layer` is where heads were switched off)."""
    n_layers = change.relative.shape[0]
    labels = [f"layer {l + 1}" for l in range(n_layers)]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=change.relative.mean(axis=1), name="mean over tokens",
                         marker_color=HIGHLIGHT,
                         hovertemplate="%{x}<br>mean relative change = %{y:.4g}<extra></extra>"))
    fig.add_trace(go.Scatter(x=labels, y=change.relative.max(axis=1), mode="markers", name="largest token",
                             marker=dict(color=TEXT, symbol="diamond", size=9),
                             hovertemplate="%{x}<br>largest relative change = %{y:.4g}<extra></extra>"))
    fig.update_xaxes(title="output of", type="category")
    fig.update_yaxes(title="|h changed − h| / |h|", rangemode="tozero")
    fig.update_layout(legend=dict(orientation="h", y=1.1, x=1, xanchor="right"))
    title = f"Heads switched off in layer {layer + 1}: how far every layer's output moved"
    return described(layout(fig, title, height=340), describe.grouped_bars(
        labels, {"mean relative change over tokens": change.relative.mean(axis=1),
                 "largest relative change of a token": change.relative.max(axis=1)}, title))
