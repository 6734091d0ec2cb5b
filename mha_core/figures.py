"""Plotly figures of a trace: pure functions (arrays in, figure out) that work in a notebook as in the app.

One colour scale for attention weights (sequential, fixed 0..1) and one for signed values (diverging, centred
at 0). Every axis carries token labels or dimension indices (every k-th one on long axes). No figure sends more
than MAX_CELLS numbers to the browser: larger matrices are averaged over blocks of neighbouring cells (to
OVERVIEW_CELLS, sent as float32), and the title, the axis labels and the hover text say so. The exact numbers of a
long matrix are in zoom_figure's window (float64). Pooling is a plain function of arrays (pool_stack, pool_heads,
pool_stage), so an app can compute it once and hand the result to the figure (the `pooled=` arguments).
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .head_stats import ENCODER, Parts
from .stats import row_entropy
from .trace import Trace

WEIGHT_SCALE = "Blues"      # attention weights, always on 0..1
SIGNED_SCALE = "RdBu_r"     # any signed value, centred at 0 (red positive, blue negative)
HEAD_COLOURS = ["#4c6ef5", "#f76707", "#2f9e44", "#e03131", "#7048e8", "#1098ad", "#d6336c", "#74b816",
                "#f59f00", "#495057", "#0b7285", "#ae3ec9", "#5c940d", "#c92a2a", "#364fc7", "#e8590c"]
MAX_CELLS = 250_000
# What a pooled overview keeps (200 x 200: about the pixels a chart has on a laptop screen). A page shows several
# figures, and a float32 cell is ~5.3 bytes of base64 JSON, so this keeps a page near 1 MB whatever n is.
OVERVIEW_CELLS = 40_000
MAX_LABELLED_CELLS = 150  # up to this many cells, each one shows its number (the tiny example, short sentences)
MAX_GROUP_ROW = 6  # groups of up to this many query heads (sharing one K/V head) get a row of panels each
FONT = dict(family="Inter, Segoe UI, Helvetica, Arial, sans-serif", size=13)


def group_rows(group_size: int) -> bool:
    """Whether small multiples of the query heads show one key/value group per row (grouped-query attention)."""
    return 1 < group_size <= MAX_GROUP_ROW


def head_colour(i: int) -> str:
    return HEAD_COLOURS[i % len(HEAD_COLOURS)]


def token_labels(tokens: list[str]) -> list[str]:
    """Unique axis labels "1 The", "2 cat", ... (plotly merges equal category names, so the position is kept).

    Plotly reads labels as a little HTML: <, > and & are escaped so that a token shows as typed. Quotes are not:
    plotly decodes only &lt; &gt; &amp; (and numeric entities), so "&quot;" would show as such.
    """
    return [f"{i + 1} {html.escape(tok, quote=False)}" for i, tok in enumerate(tokens)]


def dim_labels(n: int, prefix: str = "d") -> list[str]:
    return [f"{prefix}{j + 1}" for j in range(n)]


def block_step(rows: int, cols: int, max_cells: int) -> int:
    """The smallest s such that blocks of s x s cells leave at most max_cells of a (rows, cols) matrix."""
    step = max(1, int(np.sqrt(rows * cols / max_cells)))
    while -(-rows // step) * -(-cols // step) > max_cells:
        step += 1
    return step


def block_mean(z: np.ndarray, step: int) -> np.ndarray:
    """The mean of each step x step block of z (rows, cols), in float64; NaN cells are left out of their block's
    mean, and a block of NaN only is NaN. Edge blocks are smaller: each is the mean of the cells it has."""
    z = np.asarray(z, dtype=np.float64)
    starts_r, starts_c = np.arange(0, z.shape[0], step), np.arange(0, z.shape[1], step)
    finite = np.isfinite(z)

    def sums(a):
        return np.add.reduceat(np.add.reduceat(a, starts_r, axis=0), starts_c, axis=1)

    if finite.all():
        rows = np.diff(np.append(starts_r, z.shape[0]))
        cols = np.diff(np.append(starts_c, z.shape[1]))
        return sums(z) / np.outer(rows, cols)
    counts = sums(finite.astype(np.float64))
    with np.errstate(invalid="ignore"):
        return sums(np.where(finite, z, 0.0)) / np.where(counts > 0, counts, np.nan)


def pool(z: np.ndarray, max_cells: int = MAX_CELLS) -> tuple[np.ndarray, int, int]:
    """Average z (rows, cols) over blocks of s x s cells so that at most max_cells remain; returns (z, s, s)."""
    step = block_step(*z.shape, max_cells)
    if step == 1:
        return z, 1, 1
    return block_mean(z, step), step, step


def pool_stack(a: np.ndarray, max_cells: int) -> tuple[np.ndarray, int]:
    """Every matrix of a stack (..., rows, cols), e.g. each head's weights, averaged over blocks of s x s cells (one s
    for all) so that each keeps at most max_cells; returns (pooled, s). Pooled values are float32: they are only
    colours and a rounded mean on hover, and half the bytes to send. With s = 1, `a` itself (exact)."""
    step = block_step(*a.shape[-2:], max_cells)
    if step == 1:
        return a, 1
    out = np.empty(a.shape[:-2] + tuple(-(-d // step) for d in a.shape[-2:]), dtype=np.float32)
    for index in np.ndindex(a.shape[:-2]):  # one matrix at a time: a few n x m temporaries at most
        out[index] = block_mean(a[index], step)
    return out, step


def shown(z: np.ndarray, step: int) -> np.ndarray:
    """What a heatmap sends: exact values (float64) when nothing is pooled, else float32 block means."""
    return np.asarray(z, dtype=np.float64 if step == 1 else np.float32)


def _pooled_labels(labels: list[str], step: int) -> list[str]:
    if step == 1:
        return labels
    return [f"{i + 1}–{min(i + step, len(labels))}" for i in range(0, len(labels), step)]


def _finite_or_none(z: np.ndarray) -> np.ndarray:
    """Plotly shows NaN as a gap; -inf (a blocked score) becomes NaN so it is a gap too, never a number."""
    z = np.asarray(z, dtype=np.float64)
    return np.where(np.isfinite(z), z, np.nan)


def _cell_numbers(z: np.ndarray, panels: int = 1) -> dict:
    """Print each cell's value inside a small heatmap, so a student can check it by hand.

    With several panels side by side, the cells are narrower, so each panel gets a share of the budget.
    """
    if z.size > MAX_LABELLED_CELLS // panels:
        return {}
    return dict(text=[["" if np.isnan(v) else f"{v:.3g}" for v in row] for row in z], texttemplate="%{text}",
                textfont=dict(size=11))


def _mark_pooled(fig: go.Figure, step: int) -> None:
    """Remember that the figure shows block averages (s x s cells each): _layout then says so in the title."""
    if step > 1:
        fig.update_layout(meta=dict(pooled=max(step, (fig.layout.meta or {}).get("pooled", 1))))


def pooled_note(step: int) -> str:
    return f"  (averages over {step}×{step} blocks)"  # short: a long title is cut at the chart's edge


def _layout(fig: go.Figure, title: str, height: int | None = None) -> go.Figure:
    step = (fig.layout.meta or {}).get("pooled", 1)
    if step > 1:
        title += pooled_note(step)
    # No plotly template: Streamlit's own chart theme applies, and building one costs ~5 ms per figure.
    fig.update_layout(title=dict(text=title, x=0, xanchor="left"), font=FONT, margin=dict(l=10, r=10, t=60, b=10),
                      height=height)
    return fig


def heatmap(z: np.ndarray, x_labels: list[str], y_labels: list[str], title: str, signed: bool = True,
            x_title: str = "", y_title: str = "", zmax: float | None = None, max_cells: int = OVERVIEW_CELLS,
            height: int | None = None, value_name: str = "value", step: int | None = None) -> go.Figure:
    """One labelled heatmap: diverging around 0 when `signed`, else the 0..1 weight scale.

    step: z is already averaged over blocks of step x step cells (see pool_stack); None pools it here.
    """
    if step is None:
        z, step, _ = pool(_finite_or_none(z), max_cells)
    r_step = c_step = step
    pooled = r_step > 1
    z = shown(z, step)
    fig = go.Figure(go.Heatmap(
        z=z, x=_pooled_labels(x_labels, c_step), y=_pooled_labels(y_labels, r_step),
        colorscale=SIGNED_SCALE if signed else WEIGHT_SCALE,
        zmid=0 if signed else None, zmin=None if signed else 0, zmax=zmax if signed else 1,
        hovertemplate=f"{y_title or 'row'} %{{y}}<br>{x_title or 'column'} %{{x}}<br>"
                      f"{'mean ' if pooled else ''}{value_name} = %{{z:.6g}}<extra></extra>",
        colorbar=dict(thickness=12),
        **_cell_numbers(z),
    ))
    _mark_pooled(fig, r_step)
    fig.update_xaxes(title=x_title, type="category", tickangle=-45 if len(x_labels) > 6 else 0)
    fig.update_yaxes(title=y_title, type="category", autorange="reversed")
    return _layout(fig, title, height)


def _signed_axis(limit: float) -> dict:
    return dict(colorscale=SIGNED_SCALE, cmid=0, cmin=-limit, cmax=limit)


WEIGHT_AXIS = dict(colorscale=WEIGHT_SCALE, cmin=0, cmax=1)


def _panel_grid(panels: list[tuple[str, np.ndarray]], x_labels: list[str], y_labels: list[str], cols: int,
                coloraxis: dict, hover: str, spacing: float = 0.03, step: int | None = None) -> tuple[go.Figure, int]:
    """Small multiples: one heatmap per (title, z) panel on one shared colour axis; returns (figure, rows).

    `hover` is the plotly hover text of a cell, e.g. "query %{y}<br>key %{x}<br>weight = %{z:.6g}". step: every z
    is already averaged over blocks of step x step cells (see pool_heads); None pools each here.
    """
    rows = -(-len(panels) // cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[title for title, _ in panels],
                        horizontal_spacing=spacing, vertical_spacing=0.08 / rows + 0.03)
    given = step
    for i, (title, z) in enumerate(panels):
        if given is None:
            z, step, _ = pool(z, grid_budget(len(panels)))
        z = shown(z, step)
        _mark_pooled(fig, step)
        name = f"{title}, mean of a {step}×{step} block" if step > 1 else title
        fig.add_trace(go.Heatmap(z=z, x=_pooled_labels(x_labels, step), y=_pooled_labels(y_labels, step),
                                 coloraxis="coloraxis", hovertemplate=f"{name}<br>{hover}<extra></extra>",
                                 **_cell_numbers(z, len(panels))),
                      row=i // cols + 1, col=i % cols + 1)
    fig.update_layout(coloraxis=dict(colorbar=dict(thickness=12), **coloraxis))
    return fig, rows


def grid_budget(panels: int) -> int:
    """The cells each of `panels` small multiples keeps: one overview's worth for the whole figure."""
    return OVERVIEW_CELLS // panels


def _label_outer_panels(fig: go.Figure, rows: int, show_x: bool = True, show_y: bool = True) -> None:
    """Tick labels only under the bottom row and left of the first column of small multiples, so none overlap.

    On a long axis the browser shows every k-th label (plotly's automatic ticks, fitted to the drawn width):
    thinned, never dropped.
    """
    axes = {}  # one layout update for every axis: plotly's per-row/column selectors cost ~20 ms a figure
    for r, row in enumerate(fig._grid_ref, start=1):
        for c, cell in enumerate(row, start=1):
            x_key, y_key = cell[0].layout_keys
            axes[x_key] = dict(type="category", showticklabels=show_x and r == rows, tickangle=-45, automargin=True,
                               tickmode="auto")
            axes[y_key] = dict(type="category", autorange="reversed", showticklabels=show_y and c == 1,
                               tickmode="auto")
    fig.update_layout(axes)


def _mark_head_blocks(fig: go.Figure, n_heads: int, d_k: int, axis: str, span: int, row=None, col=None,
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


# --- Overview -----------------------------------------------------------------------------------------------

def _rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def pipeline_figure(n: int, d_model: int, n_heads: int, d_k: int, m: int | None = None, scaled: bool = True,
                    cross: bool = False, bias: bool = False, kv_heads: int | None = None,
                    rope: bool = False) -> go.Figure:
    """The whole pipeline as boxes and arrows, with the live shape under every box.

    scaled=False: the scores are not divided by √d_k; cross=True: keys and values come from a second input Y;
    bias=True: the projections add their biases; kv_heads: fewer key/value heads than query heads (grouped-query
    attention: query head i reads K/V head j); rope=True: queries and keys are turned by position (RoPE).
    """
    m = n if m is None else m
    kv_heads = kv_heads or n_heads
    j = "<sub>i</sub>" if kv_heads == n_heads else "<sub>j</sub>"

    def b(name: str, head: str = "<sub>i</sub>") -> str:
        return f" + b<sup>{name}</sup>{head}" if bias else ""

    def project(v: str) -> str:
        head = "<sub>i</sub>" if v == "Q" else j
        product = f"{'Y' if cross and v != 'Q' else 'X'} W<sup>{v}</sup>{head}{b(v, head)}"
        return f"{v}{head} = " + (f"RoPE({product})" if rope and v != "V" else product)

    heads_shape = (f"{n_heads} heads × ({n} × {d_k})" if kv_heads == n_heads else
                   f"Q: {n_heads} × ({n} × {d_k})<br>K, V: {kv_heads} × ({m} × {d_k})")
    reads = f", j = ⌈i/{n_heads // kv_heads}⌉" if kv_heads != n_heads else ", in each head"
    steps = [
        ("Input", "X and Y" if cross else "X", f"{n} × {d_model}" + (f", {m} × {d_model}" if cross else ""),
         "#495057"),
        ("1. Project", "<br>".join(project(v) for v in "QKV"), heads_shape, "#4c6ef5"),
        ("2. Attend", f"softmax(Q<sub>i</sub> K{j}<sup>T</sup>{' / √d<sub>k</sub>' if scaled else ''} + M)<br>"
                      f"times V{j}{reads}", f"weights {n} × {m}<br>head<sub>i</sub> {n} × {d_k}", "#2f9e44"),
        ("3. Concatenate", "[head<sub>1</sub> … head<sub>h</sub>]", f"{n} × {n_heads * d_k}", "#f76707"),
        ("4. Project", f"Concat W<sup>O</sup>{b('O', '')}", f"output {n} × {d_model}", "#e03131"),
    ]
    fig = go.Figure()
    width, gap = 1.0, 0.32
    for i, (name, formula, shape, colour) in enumerate(steps):
        x0 = i * (width + gap)
        fig.add_shape(type="rect", x0=x0, x1=x0 + width, y0=0, y1=1, line=dict(color=colour, width=2),
                      fillcolor=_rgba(colour, 0.08))
        fig.add_annotation(x=x0 + width / 2, y=0.85, text=f"<b>{name}</b>", showarrow=False,
                           font=dict(size=13, color=colour))
        fig.add_annotation(x=x0 + width / 2, y=0.55, text=formula, showarrow=False, font=dict(size=11, color="#212529"))
        fig.add_annotation(x=x0 + width / 2, y=0.15, text=shape, showarrow=False, font=dict(size=12, color="#495057"))
        if i:
            fig.add_annotation(x=x0 - 0.02, y=0.5, ax=x0 - gap + 0.02, ay=0.5, xref="x", yref="y", axref="x",
                               ayref="y", showarrow=True, arrowhead=3, arrowsize=1.2, arrowwidth=2,
                               arrowcolor="#495057", text="")
    total = len(steps) * width + (len(steps) - 1) * gap
    fig.update_xaxes(visible=False, range=[-0.02, total + 0.02])
    fig.update_yaxes(visible=False, range=[-0.05, 1.05])
    fig.update_layout(showlegend=False)
    kv = f" ({kv_heads} key/value heads)" if kv_heads != n_heads else ""
    return _layout(fig, f"The pipeline for d_model = {d_model}, h = {n_heads}{kv}, d_k = {d_k} (live shapes)",
                   height=260)


# --- Step 1: projections --------------------------------------------------------------------------------

def input_figure(x: np.ndarray, tokens: list[str], title: str = "Input X: one row per token") -> go.Figure:
    return heatmap(x, dim_labels(x.shape[1]), token_labels(tokens), title, x_title="dimension", y_title="token")


def projection_weight_figure(W: np.ndarray, n_heads: int, name: str, group_size: int = 1,
                             kv: bool = False) -> go.Figure:
    """W_name as used in X W (d_model x h*d_k), each head's slice of columns outlined in its colour.

    PyTorch stores the transpose, (h*d_k, d_model); this shows the paper's orientation. With grouped-query
    attention (group_size query heads per key/value head), every block takes the colour of its key/value head:
    for W_Q, n_heads query heads, head i coloured as K/V head i // group_size; for W_K and W_V (kv=True),
    n_heads key/value heads at their real, narrower width.
    """
    Wt = W.T                                                   # (d_model, n_heads*d_k)
    d_k = Wt.shape[1] // n_heads
    title = f"{name} ({Wt.shape[0]} × {Wt.shape[1]}): head i uses columns (i-1)·d_k+1 … i·d_k"
    names, colours = None, [head_colour(i if kv else i // group_size) for i in range(n_heads)]
    if kv and group_size > 1:
        names = [f"K/V {j + 1}" for j in range(n_heads)]
        title = (f"{name} ({Wt.shape[0]} × {Wt.shape[1]}): {n_heads} key/value head{'s' if n_heads > 1 else ''}, "
                 f"each shared by {group_size} query heads")
    fig = heatmap(Wt, dim_labels(Wt.shape[1], "c"), dim_labels(Wt.shape[0]), title,
                  x_title="output column", y_title="input dimension")
    step = (fig.layout.meta or {}).get("pooled", 1)  # a pooled matrix: blocks of step x step cells
    _mark_head_blocks(fig, n_heads, d_k / step, "x", -(-Wt.shape[0] // step), names=names, colours=colours)
    return fig


def per_head_figure(a: np.ndarray, tokens: list[str], name: str, max_heads: int = 16, group_size: int = 1,
                    kv: bool = False) -> go.Figure:
    """Small multiples of a per-head array (heads, tokens, d_k), e.g. Q_i for every head i.

    With grouped-query attention (group_size query heads per key/value head), the titles take the colour of the
    key/value head: for query heads (see group_rows) one row of panels per group; kv=True for K and V.
    """
    n_heads, n, d_k = a.shape
    panels = [(f"{name}_{i + 1}", a[i]) for i in range(min(n_heads, max_heads))]
    cols = group_size if group_rows(group_size) and not kv else min(len(panels), 4)
    fig, rows = _panel_grid(panels, dim_labels(d_k), token_labels(tokens), cols,
                            _signed_axis(float(np.abs(a).max()) or 1.0),
                            "token %{y}<br>dim %{x}<br>value = %{z:.6g}", spacing=0.04)
    if group_size > 1:
        for i, annotation in enumerate(fig.layout.annotations[:len(panels)]):
            annotation.font = dict(color=head_colour(i if kv else i // group_size))
    _label_outer_panels(fig, rows)
    return _layout(fig, f"{name}_i for each head: {n} tokens × d_k = {d_k} (one colour scale for all heads)",
                   height=max(260, 230 * rows))


# --- Step 2: attention per head -------------------------------------------------------------------------

# The stages of step 2: key -> (the name a control shows, the figure's title).
STAGES = {
    "raw": ("raw scores", "Raw scores Q_i K_iᵀ"),
    "scaled": ("scaled scores", "Scaled scores"),  # the title adds the scale used
    "mask": ("mask", "Mask (1 = blocked)"),
    "weights": ("softmax weights", "Attention weights softmax(…)"),
}


def stage_matrix(trace: Trace, head: int, stage: str) -> np.ndarray:
    """One head's (n, m) matrix at a stage of step 2."""
    if stage == "raw":
        return trace.raw_scores(head)
    if stage == "scaled":
        return trace.scores[head]
    if stage == "mask":
        mask = trace.mask[head] if trace.mask is not None else np.zeros(trace.scores.shape[1:], bool)
        return mask.astype(float)
    if stage == "weights":
        return trace.weights[head]
    raise ValueError(f"unknown stage {stage!r}; choose from {', '.join(STAGES)}")


def stage_values(trace: Trace, head: int, stage: str) -> np.ndarray:
    """What the figures of a stage show: stage_matrix, with a blocked cell blank (NaN) where its score is -inf."""
    z = stage_matrix(trace, head, stage)
    if stage == "scaled" and trace.mask is not None:
        z = np.where(trace.mask[head], np.nan, z)  # blocked cells show as gaps: softmax ignores them
    return z


def pool_stage(trace: Trace, head: int, stage: str) -> tuple[np.ndarray, int]:
    """One head's matrix at a stage as attention_figure's overview shows it: (values, block size)."""
    z, step, _ = pool(_finite_or_none(stage_values(trace, head, stage)), OVERVIEW_CELLS)
    return shown(z, step), step


def pool_heads(weights: np.ndarray) -> tuple[np.ndarray, int]:
    """Every head's (n, m) weights as head_grid_figure's panels show them: (values (h, ., .), block size)."""
    return pool_stack(weights, grid_budget(weights.shape[0]))


def _stage_title(trace: Trace, head: int, stage: str, scale: float) -> str:
    title = f"Head {head + 1}: {STAGES[stage][1]}"
    if stage == "scaled":
        title += f" Q_i K_iᵀ × {scale:.4g}"
    if stage == "scaled" and trace.mask is not None:
        title += " (blocked cells left blank)"
    return title


def _outline(fig: go.Figure, r0: float, r1: float, c0: float, c1: float, colour: str = "#e03131") -> None:
    """A rectangle around cells r0..r1-1 x c0..c1-1 of a heatmap on category axes (cell i is centred at i)."""
    fig.add_shape(type="rect", x0=c0 - 0.5, x1=c1 - 0.5, y0=r0 - 0.5, y1=r1 - 0.5, line=dict(color=colour, width=2))


def attention_figure(trace: Trace, head: int, tokens: list[str], stage: str = "weights", scale: float = 1.0,
                     key_tokens: list[str] | None = None, pooled: tuple[np.ndarray, int] | None = None,
                     window: tuple[int, int, int, int] | None = None) -> go.Figure:
    """One head, large: rows are queries, columns are keys, exact values on hover; `scale` is named in the title.

    A long input is shown in blocks (their mean); pooled = pool_stage(...) when it is already computed. window =
    zoom_window(...) outlines the cells that zoom_figure shows exactly.
    """
    z, step = pooled if pooled is not None else pool_stage(trace, head, stage)
    n = trace.weights.shape[1]
    fig = heatmap(z, token_labels(key_tokens or tokens), token_labels(tokens), _stage_title(trace, head, stage, scale),
                  signed=stage in ("raw", "scaled"), x_title="key", y_title="query",
                  value_name="weight" if stage == "weights" else "score", height=min(700, max(360, 28 * n + 160)),
                  step=step)
    if window is not None and step > 1:
        r0, r1, c0, c1 = window
        _outline(fig, r0 / step, r1 / step, c0 / step, c1 / step)
    return fig


ZOOM = 64  # the zoom window's side, in cells: every cell exact, every token named


def zoom_window(n: int, m: int, query: int, key: int, size: int = ZOOM) -> tuple[int, int, int, int]:
    """(r0, r1, c0, c1): the rows r0..r1-1 and columns c0..c1-1 (0-based) of the zoom window whose first query row
    and first key column are `query` and `key` (1-based): size x size cells at most, cut at the matrix's edge."""
    r0, c0 = min(max(query, 1), n) - 1, min(max(key, 1), m) - 1
    return r0, min(r0 + size, n), c0, min(c0 + size, m)


def zoom_figure(trace: Trace, head: int, tokens: list[str], stage: str, window: tuple[int, int, int, int],
                scale: float = 1.0, key_tokens: list[str] | None = None) -> go.Figure:
    """The cells of one head's matrix in `window` (zoom_window), exactly as the engine computed them, each named
    by its query and key token on hover."""
    r0, r1, c0, c1 = window
    z = _finite_or_none(stage_values(trace, head, stage)[r0:r1, c0:c1])
    title = (f"{_stage_title(trace, head, stage, scale)}: queries {r0 + 1}–{r1} × keys {c0 + 1}–{c1}, every cell "
             "exact")
    fig = heatmap(z, token_labels(key_tokens or tokens)[c0:c1], token_labels(tokens)[r0:r1], title,
                  signed=stage in ("raw", "scaled"), x_title="key", y_title="query",
                  value_name="weight" if stage == "weights" else "score",
                  height=min(760, max(360, 11 * (r1 - r0) + 200)), step=1)
    fig.update_traces(hoverongaps=False)  # a blocked cell is blank: no number to hover
    return fig


def head_grid_figure(trace: Trace, tokens: list[str], key_tokens: list[str] | None = None,
                     cols: int | None = None, title: str | None = None, group_size: int = 1,
                     panel_height: int = 260, pooled: tuple[np.ndarray, int] | None = None) -> go.Figure:
    """All heads' attention weights side by side, on the one shared 0..1 scale.

    With grouped-query attention (group_size > 1), each panel names the key/value head it reads, in that K/V
    head's colour, and (see group_rows) each row of panels is one group. Long inputs are shown in blocks
    (their mean); pooled = pool_heads(trace.weights) when it is already computed.
    """
    n_heads = trace.weights.shape[0]
    z, step = pooled if pooled is not None else pool_heads(trace.weights)
    names = [f"head {i + 1}" + (f" (K/V {i // group_size + 1})" if group_size > 1 else "") for i in range(n_heads)]
    panels = [(names[i], z[i]) for i in range(n_heads)]
    # With a few query heads per key/value head, one row of panels per K/V head.
    cols = cols or (group_size if group_rows(group_size) else min(n_heads, 4))
    fig, rows = _panel_grid(panels, token_labels(key_tokens or tokens), token_labels(tokens),
                            cols, WEIGHT_AXIS, "query %{y}<br>key %{x}<br>weight = %{z:.6g}", step=step)
    if group_size > 1:
        for i, annotation in enumerate(fig.layout.annotations[:n_heads]):
            annotation.font = dict(color=head_colour(i // group_size))
    _label_outer_panels(fig, rows)
    return _layout(fig, title or f"Attention weights of all {n_heads} heads (rows: queries, columns: keys)",
                   height=max(280, panel_height * rows))


def query_weights_figure(trace: Trace, head: int, query: int, tokens: list[str],
                         key_tokens: list[str] | None = None) -> go.Figure:
    """How much query token `query` attends to each key, in one head (a bar per key)."""
    w = trace.weights[head, query]
    labels = token_labels(key_tokens or tokens)
    fig = go.Figure(go.Bar(x=labels, y=w, marker_color=head_colour(head),
                           hovertemplate="key %{x}<br>weight = %{y:.6g}<extra></extra>"))
    fig.update_xaxes(title="key", type="category", tickangle=-45 if len(labels) > 6 else 0)
    fig.update_yaxes(title="weight", range=[0, 1])
    return _layout(fig, f"Head {head + 1}, query {token_labels(tokens)[query]}: its weights sum to "
                        f"{w.sum():.4f}", height=320)


MIX_KEYS = 24  # the value mix shows a row per key up to this many keys (every row label then fits its height)


def value_mix_figure(trace: Trace, head: int, query: int, tokens: list[str], group_size: int = 1,
                     key_tokens: list[str] | None = None) -> go.Figure:
    """weight_j · v_j for every key j (one row each) and their sum, which is head_i's output row for the query.

    With more than MIX_KEYS keys, the MIX_KEYS - 1 keys of largest weight get a row each (in key order) and one
    row adds up the w·v of all the others, so the rows still sum to the head's output.
    """
    v = trace.v[head // group_size]                             # (m, d_k)
    w = trace.weights[head, query]                              # (m,)
    mixed = w[:, None] * v                                      # (m, d_k)
    labels = [f"w·v {lab}" for lab in token_labels(key_tokens or tokens)]
    title = f"Head {head + 1}: weight × value for each key, and their sum"
    if len(w) > MIX_KEYS:
        top = np.sort(np.argsort(-w, kind="stable")[:MIX_KEYS - 1])
        rest = np.ones(len(w), bool)
        rest[top] = False
        mixed = np.vstack([mixed[top], mixed[rest].sum(axis=0)[None]])
        labels = [labels[j] for j in top] + [f"w·v of the other {int(rest.sum())} keys, added up"]
        title += (f"<br>(a row for each of the {MIX_KEYS - 1} keys of largest weight, one for the "
                  f"{int(rest.sum())} others)")
    z = np.vstack([mixed, trace.heads[head, query][None]])      # (rows + 1, d_k)
    rows = labels + ["= sum (head output)"]
    fig = heatmap(z, dim_labels(v.shape[1]), rows, title,
                  x_title=f"dimension of V_{head // group_size + 1}" if group_size > 1 else "dimension of V_i",
                  y_title="", height=min(600, max(300, 26 * len(rows) + 160)))
    if "<br>" in title:
        fig.update_layout(margin_t=84)  # room for the title's second line
    return fig


def entropy_figure(trace: Trace, tokens: list[str], entropy: np.ndarray | None = None) -> go.Figure:
    """Row entropy (bits) per head and query: 0 = focused on one key, log2(m) = spread evenly.

    entropy: row_entropy(trace.weights) when it is already computed.
    """
    ent = row_entropy(trace.weights) if entropy is None else entropy  # (h, n)
    m = trace.weights.shape[-1]
    top = float(np.log2(m))
    labels = [f"head {i + 1} (mean {e:.2f})" for i, e in enumerate(ent.mean(axis=1))]
    z, step, _ = pool(ent, OVERVIEW_CELLS)
    z = z.astype(np.float32)  # shown to 4 decimals: float32's 7 digits are plenty, at half the bytes
    ticks = [float(t) for t in range(int(top)) if top - t > 0.3 or t == 0] + [top]
    fig = go.Figure(go.Heatmap(
        z=z, x=_pooled_labels(token_labels(tokens), step), y=labels, colorscale="Viridis", zmin=0,
        zmax=max(top, 1e-9), colorbar=dict(thickness=12, title=dict(text="bits"), tickvals=ticks,
                                           ticktext=[f"{t:g}" for t in ticks[:-1]] + [f"max {top:.2f}"]),
        hovertemplate=f"%{{y}}<br>query %{{x}}<br>{'mean ' if step > 1 else ''}entropy = %{{z:.4f}} bits"
                      "<extra></extra>", **_cell_numbers(z)))
    _mark_pooled(fig, step)
    fig.update_xaxes(title="query token", type="category", tickangle=-45)
    fig.update_yaxes(type="category", autorange="reversed")
    return _layout(fig, f"How focused each head is: entropy of each weight row in bits (at most log2(m) = "
                        f"log2({m}) = {top:.2f})", height=max(240, 32 * len(labels) + 140))


# --- Step 3: concatenation ------------------------------------------------------------------------------

def concat_figure(trace: Trace, tokens: list[str]) -> go.Figure:
    """The n x (h*d_k) concatenation, each head's block of columns outlined and labelled in its colour."""
    n_heads, n, d_k = trace.heads.shape
    labels = [f"h{i + 1} d{j + 1}" for i in range(n_heads) for j in range(d_k)]
    fig = heatmap(trace.concat, labels, token_labels(tokens),
                  f"Concat(head_1, …, head_{n_heads}): {n} × {n_heads * d_k}",
                  x_title="column (h = head, d = its dimension)", y_title="token")
    step = (fig.layout.meta or {}).get("pooled", 1)
    _mark_head_blocks(fig, n_heads, d_k / step, "x", -(-n // step))
    return fig


# --- Step 4: output projection --------------------------------------------------------------------------

def output_weight_figure(W_O: np.ndarray, n_heads: int) -> go.Figure:
    """W_O as used in concat @ W_O (h*d_k x d_model): head i's block of d_k rows outlined in its colour."""
    Wt = W_O.T                                                  # (h*d_k, d_model)
    d_k = Wt.shape[0] // n_heads
    fig = heatmap(Wt, dim_labels(Wt.shape[1]), dim_labels(Wt.shape[0], "r"),
                  f"W_O ({Wt.shape[0]} × {Wt.shape[1]}): rows (i-1)·d_k+1 … i·d_k read head i",
                  x_title="output dimension", y_title="concat row")
    step = (fig.layout.meta or {}).get("pooled", 1)
    _mark_head_blocks(fig, n_heads, d_k / step, "y", -(-Wt.shape[1] // step))
    return fig


def contributions_figure(contributions: np.ndarray, output: np.ndarray, tokens: list[str],
                         bias: bool = True) -> go.Figure:
    """Each head's share head_i W_O[block i] side by side, then their sum plus the bias, if any (= the output)."""
    n_heads, n, d_model = contributions.shape
    total = "sum + b_O = output" if bias else "sum = output"
    panels = [(f"head {i + 1}", contributions[i]) for i in range(n_heads)] + [(total, output)]
    limit = float(max(np.abs(contributions).max(), np.abs(output).max())) or 1.0
    fig, rows = _panel_grid(panels, dim_labels(d_model), token_labels(tokens), min(len(panels), 5),
                            _signed_axis(limit), "token %{y}<br>dim %{x}<br>value = %{z:.6g}")
    _label_outer_panels(fig, rows)
    return _layout(fig, "What each head adds to the output (one colour scale for all panels)",
                   height=max(260, 240 * rows))


def contribution_size_figure(contributions: np.ndarray) -> go.Figure:
    """How much each head adds to the output: the mean length of its contribution vectors, one bar per head."""
    size = np.linalg.norm(contributions, axis=2).mean(axis=1)  # (h,)
    labels = [f"head {i + 1}" for i in range(len(size))]
    fig = go.Figure(go.Bar(x=labels, y=size, marker_color=[head_colour(i) for i in range(len(size))],
                           hovertemplate="%{x}<br>mean length = %{y:.4g}<extra></extra>"))
    fig.update_xaxes(title="head", type="category")
    fig.update_yaxes(title="mean length")
    return _layout(fig, "How much each head adds to the output (mean length of its contribution)", height=300)


def input_output_figure(x: np.ndarray, output: np.ndarray, tokens: list[str]) -> go.Figure:
    """Input X and the attention output side by side: same shape, n x d_model, each on its own centred scale.

    Their sizes can differ a lot (an embedding may reach 4 where the output stays below 1), so one shared scale
    would show the smaller one as blank; each colour bar says which panel it belongs to.
    """
    x_limit, out_limit = float(np.abs(x).max()) or 1.0, float(np.abs(output).max()) or 1.0
    fig, _ = _panel_grid([("input X", x), ("output MultiHead(X)", output)], dim_labels(x.shape[1]),
                         token_labels(tokens), 2, _signed_axis(x_limit), "token %{y}<br>dim %{x}<br>value = %{z:.6g}",
                         spacing=0.16)
    fig.data[1].coloraxis = "coloraxis2"
    fig.update_layout(coloraxis=dict(colorbar=dict(thickness=12, x=0.43, title=dict(text="X"))),
                      coloraxis2=dict(colorbar=dict(thickness=12, x=1.0, title=dict(text="output")),
                                      **_signed_axis(out_limit)))
    _label_outer_panels(fig, 1)
    return _layout(fig, f"Input and output, both {x.shape[0]} × {x.shape[1]}, each on its own colour scale",
                   height=min(640, max(300, 22 * len(tokens) + 160)))


# --- Pretrained model -----------------------------------------------------------------------------------

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
                      group_size: int = 1) -> go.Figure:
    """Every head of every layer, (layers, heads, n, n), as one mosaic of small heatmaps on the shared 0..1 scale.

    One heatmap with empty rows and columns between the panels (hundreds of subplots would be slow to build and to
    draw). `selected` = (layer, head), 0-based, is outlined. With grouped-query attention (group_size query heads
    per key/value head), the heads of one K/V head stand closer together and their titles share its colour.
    """
    n_layers, n_heads, n, _ = attentions.shape
    groups = n_heads // group_size
    step, size, gap = _mosaic_step(n, n_layers, n_heads, groups)
    labels = _pooled_labels(token_labels(tokens), step)
    col0 = [h * (size + gap) + (h // group_size) * 2 * gap * (group_size < n_heads) for h in range(n_heads)]
    row0 = [l * (size + gap) for l in range(n_layers)]
    z = np.full((row0[-1] + size, col0[-1] + size), np.nan, dtype=np.float32)  # half the bytes of float64
    for l in range(n_layers):
        for h in range(n_heads):
            z[row0[l]:row0[l] + size, col0[h]:col0[h] + size] = pool(attentions[l, h], size * size)[0] \
                if step > 1 else attentions[l, h]
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
    _mark_pooled(fig, step)
    # A colour bar of fixed length at the top: the figure can be thousands of pixels tall.
    fig.update_layout(coloraxis=dict(colorbar=dict(thickness=12, lenmode="pixels", len=320, y=1, yanchor="top"),
                                     **WEIGHT_AXIS), plot_bgcolor="rgba(0,0,0,0)")
    bare = dict(type="category", showticklabels=False, ticks="", showgrid=False, zeroline=False, showline=False)
    fig.update_xaxes(**bare)
    fig.update_yaxes(autorange="reversed", **bare)
    titles = [dict(x=c + (size - 1) / 2, y=1, yref="paper", yanchor="bottom", showarrow=False, text=f"head {h + 1}",
                   font=dict(size=12, color=head_colour(h // group_size) if group_size > 1 else None))
              for h, c in enumerate(col0)]
    if group_size > 1:  # one label over each group of query heads that share a key/value head
        titles += [dict(x=(col0[j * group_size] + col0[(j + 1) * group_size - 1] + size - 1) / 2, y=1,
                        yref="paper", yanchor="bottom", yshift=18, showarrow=False,
                        text=f"query heads {j * group_size + 1}–{(j + 1) * group_size}: K/V head {j + 1}",
                        font=dict(size=12, color=head_colour(j))) for j in range(groups)]
    titles += [dict(x=0, xref="paper", xanchor="right", xshift=-4, y=r + (size - 1) / 2, showarrow=False,
                    text=f"layer {l + 1}", font=dict(size=12)) for l, r in enumerate(row0)]
    fig.update_layout(annotations=titles)  # at once: one add_annotation each would take ~20 ms apiece
    if selected is not None:
        l, h = selected
        fig.add_shape(type="rect", x0=col0[h] - 0.5, x1=col0[h] + size - 0.5, y0=row0[l] - 0.5,
                      y1=row0[l] + size - 0.5, line=dict(color="#e03131", width=3))
    panel = min(110, max(60, 800 // n_heads))  # pixels per panel: about square on a page 800 pixels wide
    _layout(fig, f"All {n_layers} × {n_heads} heads on this sentence (rows: queries, columns: keys)",
            height=panel * n_layers + 130)
    fig.update_layout(margin=dict(l=70, t=110 if group_size > 1 else 90))
    return fig


def head_summary_figure(values: np.ndarray, metric: str, parts: Parts = ENCODER) -> go.Figure:
    """One summary number per (layer, head) as a layer x head heatmap; parts names the metric."""
    n_layers, n_heads = values.shape
    is_share = metric != "entropy"
    words = parts.labels[metric]
    label = f"mean {words}" if not is_share else words if metric in parts.extra else f"share: {words}"
    fig = go.Figure(go.Heatmap(
        z=values, x=[f"head {h + 1}" for h in range(n_heads)], y=[f"layer {l + 1}" for l in range(n_layers)],
        colorscale=WEIGHT_SCALE if is_share else "Viridis", zmin=0, zmax=1 if is_share else None,
        text=[["" if np.isnan(v) else f"{v:.2f}" for v in row] for row in values], texttemplate="%{text}",
        textfont=dict(size=10),
        hovertemplate=f"%{{y}}, %{{x}}<br>{label} = %{{z:.4f}}<extra></extra>",
        colorbar=dict(thickness=12)))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, f"{label[0].upper()}{label[1:]}, per layer and head", height=80 + (45 if n_layers <= 12
                                                                                           else 26) * n_layers)


# One colour per part of a head's attention: greys for the special tokens and the first token, greens and blues for
# the positions, orange for the rest.
PART_COLOURS = {"cls": "#868e96", "sep": "#ced4da", "first": "#868e96", "self": "#2f9e44", "prev": "#4c6ef5",
                "next": "#15aabf", "local": "#15aabf", "elsewhere": "#f76707"}


def head_split_figure(rows: list[dict], title: str, parts: Parts = ENCODER) -> go.Figure:
    """Where each head's attention goes, as one stacked bar per head: the shares of head_stats, which sum to 1.

    `rows` are head_summary rows (of one layer, say); a part whose token the text lacks (NaN) is drawn as 0.
    """
    heads = [f"head {r['head'] + 1}" for r in rows]
    fig = go.Figure()
    for name in parts.columns:
        share = [0.0 if np.isnan(r[name]) else r[name] for r in rows]
        label = html.escape(parts.labels[name])
        fig.add_trace(go.Bar(y=heads, x=share, name=label, orientation="h", marker_color=PART_COLOURS[name],
                             hovertemplate=f"%{{y}}<br>{label}: %{{x:.3f}}<extra></extra>"))
    fig.update_xaxes(title="share of the head's attention", range=[0, 1])
    fig.update_yaxes(type="category", autorange="reversed")
    _layout(fig, title, height=150 + 26 * len(rows))
    fig.update_layout(barmode="stack", margin_t=90,
                      legend=dict(orientation="h", x=0, y=1.0, yanchor="bottom", traceorder="normal"))
    return fig
