"""The figures of the four steps: the pipeline, the projections, attention per head, concatenation and W_O.

Pure functions (a trace or arrays in, a plotly figure out) that work in a notebook as in the app, on the colour
language of figures.base.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..analysis.pooling import OVERVIEW_CELLS, finite_or_nan, pool, pool_heads, pool_stage, stage_values
from ..analysis.stats import row_entropy
from ..attention.trace import Trace
from .base import (
    WEIGHT_AXIS,
    cell_numbers,
    dim_labels,
    group_rows,
    head_colour,
    heatmap,
    layout,
    mark_head_blocks,
    outline,
    panel_grid,
    pooled_labels,
    rgba,
    signed_axis,
    token_labels,
)

# --- Overview -----------------------------------------------------------------------------------------------


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
                      fillcolor=rgba(colour, 0.08))
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
    return layout(fig, f"The pipeline for d_model = {d_model}, h = {n_heads}{kv}, d_k = {d_k} (live shapes)",
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
    z, step = pool(Wt, OVERVIEW_CELLS)                         # blocks of step x step cells when large
    fig = heatmap(z, dim_labels(Wt.shape[1], "c"), dim_labels(Wt.shape[0]), title,
                  x_title="output column", y_title="input dimension", step=step)
    mark_head_blocks(fig, n_heads, d_k / step, "x", -(-Wt.shape[0] // step), names=names, colours=colours)
    return fig


def per_head_figure(a: np.ndarray, tokens: list[str], name: str, max_heads: int = 16, group_size: int = 1,
                    kv: bool = False) -> go.Figure:
    """Small multiples of a per-head array (heads, tokens, width), e.g. Q_i for every head i.

    The width is d_k for queries and keys, d_v for values and head outputs (name "V" or "head"). With grouped-query
    attention (group_size query heads per key/value head), K and V (kv=True) are per key/value head j, and the
    titles take the colour of the key/value head: for query heads (see group_rows) one row of panels per group.
    """
    n_heads, n, width = a.shape
    index = "j" if kv and group_size > 1 else "i"
    width_name = "d_v" if name in ("V", "head") else "d_k"
    panels = [(f"{name}_{i + 1}", a[i]) for i in range(min(n_heads, max_heads))]
    cols = group_size if group_rows(group_size) and not kv else min(len(panels), 4)
    fig, rows, step = panel_grid(panels, dim_labels(width, "c"), token_labels(tokens), cols,
                                 signed_axis(float(np.abs(a).max()) or 1.0),
                                 "token %{y}<br>component %{x}<br>value = %{z:.6g}", spacing=0.04)
    if group_size > 1:
        for i, annotation in enumerate(fig.layout.annotations[:len(panels)]):
            annotation.font = dict(color=head_colour(i if kv else i // group_size))
    heads = "key/value head" if index == "j" else "head"
    return layout(fig, f"{name}_{index} for each {heads}: {n} tokens × {width_name} = {width} (one colour scale for "
                       "all)", height=max(260, 230 * rows), pooled=step)


# --- Step 2: attention per head -------------------------------------------------------------------------

# The title of each stage of step 2 (analysis.pooling.STAGES).
STAGE_TITLES = {
    "raw": "Raw scores Q_i K_iᵀ",
    "scaled": "Scaled scores",  # the title adds the scale used
    "mask": "Mask (1 = blocked)",
    "weights": "Attention weights softmax(…)",
}


def _stage_title(trace: Trace, head: int, stage: str, scale: float) -> str:
    title = f"Head {head + 1}: {STAGE_TITLES[stage]}"
    if stage == "scaled":
        title += f" Q_i K_iᵀ × {scale:.4g}"
    if stage == "scaled" and trace.mask is not None:
        title += " (blocked cells left blank)"
    return title


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
        outline(fig, r0 / step, r1 / step, c0 / step, c1 / step)
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
    z = finite_or_nan(stage_values(trace, head, stage)[r0:r1, c0:c1])
    title = (f"{_stage_title(trace, head, stage, scale)}: queries {r0 + 1}–{r1} × keys {c0 + 1}–{c1}, every cell "
             "exact")
    fig = heatmap(z, token_labels(key_tokens or tokens)[c0:c1], token_labels(tokens)[r0:r1], title,
                  signed=stage in ("raw", "scaled"), x_title="key", y_title="query",
                  value_name="weight" if stage == "weights" else "score",
                  height=min(760, max(360, 11 * (r1 - r0) + 200)), step=1)
    fig.update_traces(hoverongaps=False)  # a blocked cell is blank: no number to hover
    return fig


def head_panels(z: np.ndarray, step: int, tokens: list[str], key_tokens: list[str] | None, title: str,
                group_size: int = 1, cols: int | None = None, panel_height: int = 260,
                value_name: str = "weight") -> go.Figure:
    """One 0..1 panel per head of z (h, rows, cols), already pooled over step x step blocks: queries as rows, keys as
    columns, on one shared colour axis.

    With grouped-query attention (group_size > 1), each panel names the key/value head it reads, in that K/V head's
    colour, and (see group_rows) each row of panels is one group.
    """
    n_heads = z.shape[0]
    names = [f"head {i + 1}" + (f" (K/V {i // group_size + 1})" if group_size > 1 else "") for i in range(n_heads)]
    cols = cols or (group_size if group_rows(group_size) else min(n_heads, 4))
    fig, rows, step = panel_grid([(names[i], z[i]) for i in range(n_heads)], token_labels(key_tokens or tokens),
                                 token_labels(tokens), cols, WEIGHT_AXIS,
                                 f"query %{{y}}<br>key %{{x}}<br>{value_name} = %{{z:.6g}}", step=step)
    if group_size > 1:
        for i, annotation in enumerate(fig.layout.annotations[:n_heads]):
            annotation.font = dict(color=head_colour(i // group_size))
    return layout(fig, title, height=max(280, panel_height * rows), pooled=step)


def head_grid_figure(trace: Trace, tokens: list[str], key_tokens: list[str] | None = None,
                     cols: int | None = None, title: str | None = None, group_size: int = 1,
                     panel_height: int = 260, pooled: tuple[np.ndarray, int] | None = None) -> go.Figure:
    """All heads' attention weights side by side, on the one shared 0..1 scale (see head_panels).

    Long inputs are shown in blocks (their mean); pooled = pool_heads(trace.weights) when it is already computed.
    """
    z, step = pooled if pooled is not None else pool_heads(trace.weights)
    return head_panels(z, step, tokens, key_tokens,
                       title or f"Attention weights of all {z.shape[0]} heads (rows: queries, columns: keys)",
                       group_size, cols, panel_height)


def query_weights_figure(trace: Trace, head: int, query: int, tokens: list[str],
                         key_tokens: list[str] | None = None) -> go.Figure:
    """How much query token `query` attends to each key, in one head (a bar per key)."""
    w = trace.weights[head, query]
    labels = token_labels(key_tokens or tokens)
    fig = go.Figure(go.Bar(x=labels, y=w, marker_color=head_colour(head),
                           hovertemplate="key %{x}<br>weight = %{y:.6g}<extra></extra>"))
    fig.update_xaxes(title="key", type="category", tickangle=-45 if len(labels) > 6 else 0)
    fig.update_yaxes(title="weight", range=[0, 1])
    return layout(fig, f"Head {head + 1}, query {token_labels(tokens)[query]}: its weights sum to "
                        f"{w.sum():.4f}", height=320)


MIX_KEYS = 24  # the value mix shows a row per key up to this many keys (every row label then fits its height)


def value_mix_figure(trace: Trace, head: int, query: int, tokens: list[str], group_size: int = 1,
                     key_tokens: list[str] | None = None) -> go.Figure:
    """α_ts · v_s for every key s (one row each) and their sum, which is head_i's output row for the query t.

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
    z, step = pool(ent, OVERVIEW_CELLS)
    z = z.astype(np.float32)  # shown to 4 decimals: float32's 7 digits are plenty, at half the bytes
    ticks = [float(t) for t in range(int(top)) if top - t > 0.3 or t == 0] + [top]
    fig = go.Figure(go.Heatmap(
        z=z, x=pooled_labels(token_labels(tokens), step), y=labels, colorscale="Viridis", zmin=0,
        zmax=max(top, 1e-9), colorbar=dict(thickness=12, title=dict(text="bits"), tickvals=ticks,
                                           ticktext=[f"{t:g}" for t in ticks[:-1]] + [f"max {top:.2f}"]),
        hovertemplate=f"%{{y}}<br>query %{{x}}<br>{'mean ' if step > 1 else ''}entropy = %{{z:.4f}} bits"
                      "<extra></extra>", **cell_numbers(z)))
    fig.update_xaxes(title="query token", type="category", tickangle=-45)
    fig.update_yaxes(type="category", autorange="reversed")
    return layout(fig, f"How focused each head is: entropy of each weight row in bits (at most log2(m) = "
                       f"log2({m}) = {top:.2f})", height=max(240, 32 * len(labels) + 140), pooled=step)


# --- Step 3: concatenation ------------------------------------------------------------------------------

def concat_figure(trace: Trace, tokens: list[str]) -> go.Figure:
    """The n x (h*d_k) concatenation, each head's block of columns outlined and labelled in its colour."""
    n_heads, n, d_k = trace.heads.shape
    labels = [f"head {i + 1} · c{c + 1}" for i in range(n_heads) for c in range(d_k)]
    z, step = pool(trace.concat, OVERVIEW_CELLS)
    fig = heatmap(z, labels, token_labels(tokens), f"Concat(head_1, …, head_{n_heads}): {n} × {n_heads * d_k}",
                  x_title="column: head i, component c", y_title="token", step=step)
    mark_head_blocks(fig, n_heads, d_k / step, "x", -(-n // step))
    return fig


# --- Step 4: output projection --------------------------------------------------------------------------

def output_weight_figure(W_O: np.ndarray, n_heads: int) -> go.Figure:
    """W_O as used in concat @ W_O (h*d_k x d_model): head i's block of d_k rows outlined in its colour."""
    Wt = W_O.T                                                  # (h*d_k, d_model)
    d_k = Wt.shape[0] // n_heads
    z, step = pool(Wt, OVERVIEW_CELLS)
    fig = heatmap(z, dim_labels(Wt.shape[1]), dim_labels(Wt.shape[0], "r"),
                  f"W_O ({Wt.shape[0]} × {Wt.shape[1]}): rows (i-1)·d_k+1 … i·d_k read head i",
                  x_title="output dimension", y_title="concat row", step=step)
    mark_head_blocks(fig, n_heads, d_k / step, "y", -(-Wt.shape[1] // step))
    return fig


def contributions_figure(contributions: np.ndarray, output: np.ndarray, tokens: list[str],
                         bias: bool = True) -> go.Figure:
    """Each head's share head_i W_O[block i] side by side, then their sum plus the bias, if any (= the output)."""
    n_heads, n, d_model = contributions.shape
    total = "sum + b_O = output" if bias else "sum = output"
    panels = [(f"head {i + 1}", contributions[i]) for i in range(n_heads)] + [(total, output)]
    limit = float(max(np.abs(contributions).max(), np.abs(output).max())) or 1.0
    fig, rows, step = panel_grid(panels, dim_labels(d_model), token_labels(tokens), min(len(panels), 5),
                                 signed_axis(limit), "token %{y}<br>dim %{x}<br>value = %{z:.6g}")
    return layout(fig, "What each head adds to the output (one colour scale for all panels)",
                  height=max(260, 240 * rows), pooled=step)


def contribution_size_figure(contributions: np.ndarray) -> go.Figure:
    """How much each head adds to the output: the mean length of its contribution vectors, one bar per head."""
    size = np.linalg.norm(contributions, axis=2).mean(axis=1)  # (h,)
    labels = [f"head {i + 1}" for i in range(len(size))]
    fig = go.Figure(go.Bar(x=labels, y=size, marker_color=[head_colour(i) for i in range(len(size))],
                           hovertemplate="%{x}<br>mean length = %{y:.4g}<extra></extra>"))
    fig.update_xaxes(title="head", type="category")
    fig.update_yaxes(title="mean length")
    return layout(fig, "How much each head adds to the output (mean length of its contribution)", height=300)


def input_output_figure(x: np.ndarray, output: np.ndarray, tokens: list[str]) -> go.Figure:
    """Input X and the attention output side by side: same shape, n x d_model, each on its own centred scale.

    Their sizes can differ a lot (an embedding may reach 4 where the output stays below 1), so one shared scale
    would show the smaller one as blank; each colour bar says which panel it belongs to.
    """
    x_limit, out_limit = float(np.abs(x).max()) or 1.0, float(np.abs(output).max()) or 1.0
    fig, _, step = panel_grid([("input X", x), ("output MultiHead(X)", output)], dim_labels(x.shape[1]),
                              token_labels(tokens), 2, signed_axis(x_limit),
                              "token %{y}<br>dim %{x}<br>value = %{z:.6g}", spacing=0.16)
    fig.data[1].coloraxis = "coloraxis2"
    fig.update_layout(coloraxis=dict(colorbar=dict(thickness=12, x=0.43, title=dict(text="X"))),
                      coloraxis2=dict(colorbar=dict(thickness=12, x=1.0, title=dict(text="output")),
                                      **signed_axis(out_limit)))
    return layout(fig, f"Input and output, both {x.shape[0]} × {x.shape[1]}, each on its own colour scale",
                  height=min(640, max(300, 22 * len(tokens) + 160)), pooled=step)

