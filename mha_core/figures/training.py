"""Figures of training runs and of the experiments on heads: pure functions (arrays in, plotly figure out).

The app's colour language: attention weights on the sequential 0..1 scale (figures.WEIGHT_SCALE, more = farther from
the background), one colour per head (figures.head_colour), queries as rows and keys as columns. Each head's pattern
through training is one figure with a slider: moving it only restyles the figure in the browser, no new computation.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from . import describe
from .base import NEUTRAL, WEIGHT_AXIS, described, head_colour, layout, series_colour, token_labels

LAYER_DASHES = ("solid", "dash", "dot", "dashdot")  # one line style per layer, one colour per head
SPREAD_ALPHA = 0.18  # the band between the lowest and the highest seed


def moving_average(values: np.ndarray, window: int) -> np.ndarray:
    """The mean of each value and the window - 1 before it (fewer at the start)."""
    values = np.asarray(values, dtype=np.float64)
    sums = np.cumsum(np.concatenate([[0.0], values]))
    i = np.arange(1, len(values) + 1)
    lo = np.maximum(0, i - window)
    return (sums[i] - sums[lo]) / (i - lo)


# --- One run ---------------------------------------------------------------------------------------------------

def loss_figure(losses: np.ndarray, steps: list[int], held_out_loss: list[float],
                held_out_accuracy: list[float]) -> go.Figure:
    """The training loss at every step (and its moving average), the held-out loss and accuracy at the checkpoints."""
    x = np.arange(1, len(losses) + 1)
    window = max(1, len(losses) // 30)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=x, y=losses, name="training loss (each step's batch)", mode="lines",
                             line=dict(color=series_colour(0), width=1), opacity=0.3,
                             hovertemplate="step %{x}<br>loss %{y:.4f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=moving_average(losses, window), name=f"training loss, mean of {window} steps",
                             mode="lines", line=dict(color=series_colour(0), width=2),
                             hovertemplate="step %{x}<br>mean loss %{y:.4f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=steps, y=held_out_loss, name="held-out loss", mode="markers",
                             marker=dict(color=series_colour(1), size=8, symbol="diamond"),
                             hovertemplate="step %{x}<br>held-out loss %{y:.4f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=steps, y=held_out_accuracy, name="held-out accuracy (right axis)", mode="lines+markers",
                             line=dict(color=series_colour(2), width=2, dash="dot"), marker=dict(size=4),
                             hovertemplate="step %{x}<br>accuracy %{y:.3f}<extra></extra>"), secondary_y=True)
    fig.update_xaxes(title="training step")
    fig.update_yaxes(title="loss (cross-entropy)", rangemode="tozero", secondary_y=False)
    fig.update_yaxes(title="accuracy", range=[0, 1.02], dtick=0.25, tickformat=".0%", secondary_y=True, showgrid=False)
    fig.update_layout(legend=dict(orientation="h", x=0, y=1.0, yanchor="bottom"))
    title = "Loss and accuracy while the model learns"
    layout(fig, title, height=380)
    fig.update_layout(margin_t=90)
    return described(fig, describe.Description(
        f"{title}: the training loss goes from {losses[0]:.3g} at step 1 to {losses[-1]:.3g} at step {len(losses)}; "
        f"held-out accuracy at the last checkpoint (step {steps[-1]}) {held_out_accuracy[-1]:.1%}.",
        ("step", "held-out loss", "held-out accuracy"),
        tuple((s, round(float(l), 4), round(float(a), 4)) for s, l, a in zip(steps, held_out_loss, held_out_accuracy,
                                                                           strict=True))))


LABEL_FONT = 12  # px: the panels' token labels
LABEL_PX = 24    # px a label needs along a panel's side (one line of LABEL_FONT, or a short label's width)
LABEL_ROOM = 16  # labels that fit side by side across the figure's width, all panels together (about 700 px)


def every_kth(n: int, room: int) -> int:
    """k such that every k-th of n labels fits in `room` labels (1: all of them)."""
    return max(1, -(-n // max(room, 1)))


def patterns_through_training(attentions: np.ndarray, tokens: list[str], steps: list[int],
                              accuracy: list[float]) -> go.Figure:
    """Every head's attention weights on one sequence, (checkpoints, n_layers, h, n, n), as small multiples (a row
    per layer, a column per head) on the one 0..1 scale, with a slider over the checkpoints that starts at the last
    (none for a single checkpoint). The figure holds every checkpoint, so the slider only restyles it in the
    browser."""
    _, n_layers, n_heads, n, _ = attentions.shape
    labels = token_labels(tokens)
    names = [f"layer {l + 1}, head {i + 1}" for l in range(n_layers) for i in range(n_heads)]
    fig = make_subplots(rows=n_layers, cols=n_heads, horizontal_spacing=0.02, vertical_spacing=0.12 / n_layers,
                        subplot_titles=names)
    last = attentions[-1].astype(np.float32)
    for l in range(n_layers):
        for i in range(n_heads):
            fig.add_trace(go.Heatmap(z=last[l, i], x=labels, y=labels, coloraxis="coloraxis",
                                     hovertemplate=f"layer {l + 1}, head {i + 1}<br>query %{{y}}<br>key %{{x}}<br>"
                                                   "weight = %{z:.3f}<extra></extra>"), row=l + 1, col=i + 1)
    for k, annotation in enumerate(fig.layout.annotations):
        annotation.font = dict(color=head_colour(k % n_heads), size=12)
    fig.update_xaxes(type="category", showticklabels=False)
    fig.update_yaxes(type="category", autorange="reversed", showticklabels=False)
    # Fewer, larger labels than plotly's (7 px, turned on end): every k-th token, level, as many as a panel's side
    # holds.
    across, down = every_kth(n, LABEL_ROOM // n_heads), every_kth(n, min(260, 14 * n + 90) // LABEL_PX)
    fig.update_xaxes(showticklabels=True, tickangle=0, tickfont=dict(size=LABEL_FONT), tickmode="array",
                     tickvals=labels[::across], row=n_layers)
    fig.update_yaxes(showticklabels=True, tickfont=dict(size=LABEL_FONT), tickmode="array", tickvals=labels[::down],
                     col=1)
    titles = [f"Step {step}: held-out accuracy {acc:.1%} (rows: queries, columns: keys)"
              for step, acc in zip(steps, accuracy, strict=True)]
    fig.update_layout(coloraxis=dict(colorbar=dict(thickness=12), **WEIGHT_AXIS))
    if len(steps) > 1:
        # Each slider position swaps in every panel's weights at that checkpoint, rounded to what the colours show.
        frames = [[np.round(a[l, i].astype(np.float64), 3) for l in range(n_layers) for i in range(n_heads)]
                  for a in attentions]
        fig.update_layout(sliders=[dict(
            active=len(steps) - 1, currentvalue=dict(prefix="training step "), pad=dict(t=40),
            steps=[dict(method="update", label=str(step), args=[{"z": z}, {"title.text": title}])
                   for step, z, title in zip(steps, frames, titles, strict=True)])])
    layout(fig, titles[-1], height=n_layers * min(260, 14 * n + 90) + (170 if len(steps) > 1 else 80))
    fig.update_layout(margin=dict(b=20))
    return described(fig, describe.head_weights(last.reshape(n_layers * n_heads, n, n), describe.names(tokens),
                                                describe.names(tokens), titles[-1], names))


def score_history_figure(history: np.ndarray, steps: list[int], label: str, share: bool = True) -> go.Figure:
    """One line per head: a statistic of its attention (checkpoints, n_layers, h) at each checkpoint. Heads keep
    their colour, layers their line style. share: the statistic is a share of the attention (0..1)."""
    _, n_layers, n_heads = history.shape
    fig = go.Figure()
    for l in range(n_layers):
        for i in range(n_heads):
            fig.add_trace(go.Scatter(
                x=steps, y=history[:, l, i], mode="lines", name=f"layer {l + 1}, head {i + 1}",
                line=dict(color=head_colour(i), dash=LAYER_DASHES[l % len(LAYER_DASHES)], width=2),
                hovertemplate=f"layer {l + 1}, head {i + 1}<br>step %{{x}}<br>{label} %{{y:.3f}}<extra></extra>"))
    fig.update_xaxes(title="training step")
    fig.update_yaxes(title=label, range=[0, 1.02] if share else None, rangemode="tozero")
    title = f"{label[0].upper()}{label[1:]} of each head while the model learns"
    last = history[-1].ravel()
    names = [f"layer {l + 1}, head {i + 1}" for l in range(n_layers) for i in range(n_heads)]
    return described(layout(fig, title, height=360),
                     describe.bars(names, last, f"{title}, at the last step ({steps[-1]})", column=label))


def head_patterns_figure(panels: list[tuple[str, np.ndarray, list[str]]], title: str) -> go.Figure:
    """A few heads side by side, each on its own tokens: panels of (name, weights (n, n), tokens), on the one 0..1
    scale, queries as rows and keys as columns (e.g. a learned head beside a real model's heads)."""
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[name for name, _, _ in panels],
                        horizontal_spacing=0.3 / len(panels))
    for k, (name, weights, tokens) in enumerate(panels):
        labels = token_labels(tokens)
        fig.add_trace(go.Heatmap(z=np.asarray(weights, np.float64), x=labels, y=labels, coloraxis="coloraxis",
                                 hovertemplate=f"{name}<br>query %{{y}}<br>key %{{x}}<br>weight = %{{z:.3f}}"
                                               "<extra></extra>"), row=1, col=k + 1)
    for k, annotation in enumerate(fig.layout.annotations):
        annotation.font = dict(color=head_colour(k), size=12)
    fig.update_xaxes(type="category", tickangle=-90, tickfont=dict(size=9))
    fig.update_yaxes(type="category", autorange="reversed", tickfont=dict(size=9))
    fig.update_layout(coloraxis=dict(colorbar=dict(thickness=12), **WEIGHT_AXIS))
    longest = max(len(tokens) for _, _, tokens in panels)
    parts = [describe.weights(np.asarray(w, np.float64), describe.names(t), describe.names(t), name).alt
             for name, w, t in panels]
    return described(layout(fig, title, height=min(560, max(340, 18 * longest + 200))),
                     describe.Description(f"{title}. " + " ".join(parts)))


def score_bars_figure(names: list[str], scores: list[float], label: str, colours: list[str]) -> go.Figure:
    """The same statistic for a few heads side by side, one bar each (e.g. a learned head beside a real model's)."""
    fig = go.Figure(go.Bar(x=names, y=scores, marker_color=colours, text=[f"{s:.2f}" for s in scores],
                           textposition="outside", hovertemplate="%{x}<br>" + label + " %{y:.3f}<extra></extra>"))
    fig.update_xaxes(type="category")
    fig.update_yaxes(title=label, range=[0, 1.1])
    title = f"The same statistic: {label}"
    return described(layout(fig, title, height=320), describe.bars(names, scores, title, column=label))


# --- The experiments -------------------------------------------------------------------------------------------

def _spread(fig: go.Figure, x, values: np.ndarray, name: str, colour: str, row: int | None = None,
            col: int | None = None, hover: str = "%{y:.3f}", showlegend: bool = True) -> None:
    """values (points, seeds): the mean over seeds as a line, every seed as a dot, the band from lowest to highest."""
    lo, hi, mean = np.nanmin(values, axis=1), np.nanmax(values, axis=1), np.nanmean(values, axis=1)
    where = dict(row=row, col=col) if row else {}
    fig.add_trace(go.Scatter(x=list(x) + list(x)[::-1], y=list(hi) + list(lo[::-1]), fill="toself",
                             fillcolor=colour, opacity=SPREAD_ALPHA, line=dict(width=0), hoverinfo="skip",
                             showlegend=False, legendgroup=name), **where)
    for s in range(values.shape[1]):
        fig.add_trace(go.Scatter(x=list(x), y=values[:, s], mode="markers", marker=dict(color=colour, size=6,
                                 opacity=0.55), name=f"{name}, seed {s + 1}", legendgroup=name, showlegend=False,
                                 hovertemplate=f"{name}, run {s + 1}<br>%{{x}}: {hover}<extra></extra>"), **where)
    fig.add_trace(go.Scatter(x=list(x), y=mean, mode="lines", line=dict(color=colour, width=3), name=name,
                             legendgroup=name, showlegend=showlegend,
                             hovertemplate=f"{name}, mean<br>%{{x}}: {hover}<extra></extra>"), **where)


def head_comparison_figure(heads: tuple[int, ...], d_model: int, final_loss: np.ndarray, accuracy: np.ndarray,
                           steps_to_solve: np.ndarray, steps: int) -> go.Figure:
    """One wide head against several narrow ones at the same d_model: final loss, accuracy and steps to solve, each
    (heads, seeds): every seed a dot, the mean a line, the band from lowest to highest. An unsolved run is drawn at
    the budget `steps` (its dot sits on the dashed line)."""
    x = [f"{h} × d_k {d_model // h}" for h in heads]
    solved = np.where(np.isnan(steps_to_solve), steps, steps_to_solve)
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.08,
                        subplot_titles=["loss at the end (held out)", "accuracy at the end (held out)",
                                        "steps until 99% right"])
    for col, values, hover in ((1, final_loss, "%{y:.4f}"), (2, accuracy, "%{y:.3f}"), (3, solved, "%{y:.0f}")):
        _spread(fig, x, values, "runs", series_colour(0), 1, col, hover, showlegend=False)
    fig.add_hline(y=steps, line=dict(color=NEUTRAL, dash="dash", width=1), row=1, col=3)
    fig.update_xaxes(title="heads × their width", type="category")
    fig.update_yaxes(rangemode="tozero", row=1, col=1)
    fig.update_yaxes(range=[0, 1.02], row=1, col=2)
    fig.update_yaxes(range=[0, steps * 1.05], row=1, col=3)
    title = (f"One head against several at d_model = {d_model} (the same parameters), {final_loss.shape[1]} seeds "
             "each")
    return described(layout(fig, title, height=380), describe.grouped_bars(
        x, {"mean final loss": np.nanmean(final_loss, axis=1), "mean accuracy": np.nanmean(accuracy, axis=1),
            "mean steps to 99%": np.nanmean(solved, axis=1)}, title))


def pruning_figure(curves: dict[str, list[tuple[np.ndarray, np.ndarray]]], label: str, title: str,
                   total: int) -> go.Figure:
    """Heads switched off one at a time, least important first. curves: for each ranking (a name), a list of
    (heads kept (points,), value (points,)) pairs, one per run: the mean is a line, the runs' band is shaded."""
    fig = go.Figure()
    for k, (name, runs) in enumerate(curves.items()):
        kept = runs[0][0]
        values = np.stack([v for _, v in runs], axis=1)                          # (points, runs)
        _spread(fig, kept, values, name, series_colour(k), hover="%{y:.3f}")
    fig.update_xaxes(title="heads still on", autorange="reversed", range=[total + 0.5, -0.5])
    fig.update_yaxes(title=label, rangemode="tozero")
    fig.update_layout(legend=dict(orientation="h", x=0, y=1.0, yanchor="bottom"))
    layout(fig, title, height=380)
    fig.update_layout(margin_t=90)
    kept = next(iter(curves.values()))[0][0]
    return described(fig, describe.grouped_bars(
        [f"{k} heads on" for k in kept], {name: np.mean([v for _, v in runs], axis=0) for name, runs in curves.items()},
        f"{title} ({label}, mean over the runs)"))
