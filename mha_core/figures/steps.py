"""The figures of the four steps: the pipeline, the projections, attention per head, concatenation and W_O.

Pure functions (a trace or arrays in, a figure out) that work in a notebook as in the app, on the colour language of
figures.base. Every figure here is a figures.base.Figure, a dict of plotly's JSON (building them with plotly's
validating objects was most of a step page's rerun); a notebook draws one, fig.to_plotly() makes it plotly's object.
"""

from __future__ import annotations

import html

import numpy as np

from ..analysis.pooling import OVERVIEW_CELLS, finite_or_nan, pool, pool_heads, pool_stage, stage_values
from ..analysis.stats import row_entropy
from ..attention.trace import Trace
from ..teaching.notation import score_product
from . import describe
from .base import (
    FOCUS_BAR,
    MUTED,
    PALE,
    SUBTITLE,
    TEXT,
    WEIGHT_AXIS,
    amount_axis,
    category_axis,
    cell_numbers,
    colour_bar,
    described,
    dim_labels,
    figure,
    group_rows,
    head_colour,
    heatmap,
    layout,
    mark_head_blocks,
    outline,
    panel_grid,
    pooled_labels,
    rgba,
    series_colour,
    signed_axis,
    token_labels,
)

# --- Overview -----------------------------------------------------------------------------------------------

# Input, then steps 1-4: the steps are not heads, so greys of the series (a head's colour here read as that head).
STEP_COLOURS = (MUTED, *(series_colour(k) for k in range(4)))
# px: a step's main figure, so that it fits under the page's title, text and answered question on a 1280 x 800 screen
# (one idea per screen)
MAIN_HEIGHT = 380


def pipeline_figure(n: int, d_model: int, n_heads: int, d_k: int, m: int | None = None, scaled: bool = True,
                    cross: bool = False, bias: bool = False, kv_heads: int | None = None,
                    rope: bool = False) -> dict:
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

    each = "head" if n_heads == 1 else "heads"
    heads_shape = (f"{n_heads} {each} × ({n} × {d_k})" if kv_heads == n_heads and m == n else  # else K, V differ
                   f"Q: {n_heads} × ({n} × {d_k})<br>K, V: {kv_heads} × ({m} × {d_k})")
    g = n_heads // kv_heads
    reads = f"j = ⌈i/{g}⌉<br>(i/{g} rounded up)" if kv_heads != n_heads else "in each head"
    steps = [
        ("Input", "X and Y" if cross else "X", f"{n} × {d_model}" + (f", {m} × {d_model}" if cross else ""),
         STEP_COLOURS[0]),
        ("1. Project", "<br>".join(project(v) for v in "QKV"), heads_shape, STEP_COLOURS[1]),
        ("2. Attend", f"softmax(Q<sub>i</sub> K{j}<sup>T</sup>{' / √d<sub>k</sub>' if scaled else ''} + M) "
                      f"V{j}<br>{reads}", f"weights {n} × {m}<br>head<sub>i</sub> {n} × {d_k}", STEP_COLOURS[2]),
        ("3. Concatenate", "[head<sub>1</sub> … head<sub>h</sub>]", f"{n} × {n_heads * d_k}", STEP_COLOURS[3]),
        ("4. Project", f"Concat W<sup>O</sup>{b('O', '')}", f"output {n} × {d_model}", STEP_COLOURS[4]),
    ]
    shapes, notes = [], []
    width, gap = 1.0, 0.32
    for i, (name, formula, shape, colour) in enumerate(steps):
        x0 = i * (width + gap)
        shapes.append(dict(type="rect", x0=x0, x1=x0 + width, y0=0, y1=1, line=dict(color=colour, width=2),
                           fillcolor=rgba(colour, 0.08)))
        notes.append(dict(x=x0 + width / 2, y=0.85, text=f"<b>{name}</b>", showarrow=False,
                          font=dict(size=13, color=TEXT)))
        notes.append(dict(x=x0 + width / 2, y=0.55, text=formula, showarrow=False, font=dict(size=11, color=TEXT)))
        notes.append(dict(x=x0 + width / 2, y=0.15, text=shape, showarrow=False, font=dict(size=12, color=MUTED)))
        if i:
            notes.append(dict(x=x0 - 0.02, y=0.5, ax=x0 - gap + 0.02, ay=0.5, xref="x", yref="y", axref="x",
                              ayref="y", showarrow=True, arrowhead=3, arrowsize=1.2, arrowwidth=2, arrowcolor=MUTED,
                              text=""))
    total = len(steps) * width + (len(steps) - 1) * gap
    fig = figure(shapes=shapes, annotations=notes, showlegend=False,
                 xaxis=dict(visible=False, range=[-0.02, total + 0.02]),
                 yaxis=dict(visible=False, range=[-0.05, 1.05]))
    kv = f", h_kv = {kv_heads}" if kv_heads != n_heads else ""
    title = f"The pipeline for d_model = {d_model}, h = {n_heads}{kv}, d_k = {d_k} (live shapes)"
    flow = " → ".join(f"{describe.plain(name)}: {describe.plain(shape)}" for name, _, shape, _ in steps)
    return described(layout(fig, title, height=260), describe.Description(
        f"{title}. {flow}.", ("step", "formula", "shape"),
        tuple((describe.plain(name), describe.plain(formula), describe.plain(shape)) for name, formula, shape, _
              in steps)))


# --- Step 1: projections --------------------------------------------------------------------------------

def input_figure(x: np.ndarray, tokens: list[str], title: str = "Input X: one row per token") -> dict:
    fig = heatmap(x, dim_labels(x.shape[1]), token_labels(tokens), title, x_title="dimension d", y_title="token")
    return described(fig, describe.values(x, describe.names(tokens), dim_labels(x.shape[1]), title))


def projection_weight_figure(W: np.ndarray, n_heads: int, name: str, group_size: int = 1,
                             kv: bool = False) -> dict:
    """W_name as used in X W (d_model x h*d_k), each head's slice of columns outlined in its colour.

    PyTorch stores the transpose, (h*d_k, d_model); this shows the paper's orientation. Query head i's block is
    named in head i's colour. With grouped-query attention (group_size query heads per key/value head), W_K and W_V
    (kv=True) have n_heads key/value heads at their real, narrower width, named "K/V j" in the text colour: a K/V
    head is not a query head, so it takes no head's colour.
    """
    Wt = W.T                                                   # (d_model, n_heads*d_k)
    d_k = Wt.shape[1] // n_heads
    title = f"{name} ({Wt.shape[0]} × {Wt.shape[1]}){SUBTITLE}head i uses columns (i-1)·d_k+1 … i·d_k</span>"
    names, colours = None, None
    if kv and group_size > 1:
        names, colours = [f"K/V {j + 1}" for j in range(n_heads)], [TEXT] * n_heads
        title = (f"{name} ({Wt.shape[0]} × {Wt.shape[1]}): h_kv = {n_heads} key/value "
                 f"head{'s' if n_heads > 1 else ''}, each shared by {group_size} query heads")
    z, step = pool(Wt, OVERVIEW_CELLS)                         # blocks of step x step cells when large
    head, index = ("K/V head", "j") if kv and group_size > 1 else ("head", "i")
    columns = component_labels(n_heads, d_k, head)
    fig = heatmap(z, columns, dim_labels(Wt.shape[0]), title, x_title=f"column: {head} {index}, component c",
                  y_title="input dimension d", step=step, height=MAIN_HEIGHT)
    component_ticks(fig, "x", n_heads, d_k, step)
    mark_head_blocks(fig, n_heads, d_k / step, "x", -(-Wt.shape[0] // step), names=names, colours=colours)
    return described(fig, describe.values(Wt, dim_labels(Wt.shape[0]), columns, describe.plain(title),
                                          text_rows=False))


def per_head_figure(a: np.ndarray, tokens: list[str], name: str, max_heads: int = 16, group_size: int = 1,
                    kv: bool = False, cols: int | None = None) -> dict:
    """Small multiples of a per-head array (heads, tokens, width), e.g. Q_i for every head i.

    The width is d_k for queries and keys, d_v for values and head outputs (name "V" or "head"). With grouped-query
    attention (group_size query heads per key/value head), K and V (kv=True) are per key/value head j; for query
    heads (see group_rows) each row of panels is one group. Titles stay in the text colour: head colours mean heads,
    and a group is shown by its row, not by a colour. cols: panels per row instead (one row leaves each token the
    most height, as a projector's large labels need).
    """
    n_heads, n, width = a.shape
    index = "j" if kv and group_size > 1 else "i"
    width_name = "d_v" if name in ("V", "head") else "d_k"
    panels = [(f"{name}_{i + 1}", a[i]) for i in range(min(n_heads, max_heads))]
    cols = cols or (group_size if group_rows(group_size) and not kv else min(len(panels), 4))
    fig, rows, step = panel_grid(panels, dim_labels(width, "c"), token_labels(tokens), cols,
                                 signed_axis(float(np.abs(a).max()) or 1.0),
                                 "token %{y}<br>component %{x}<br>value = %{z:.6g}", spacing=0.04, vertical=0.15)
    heads = "key/value head" if index == "j" else "head"
    title = (f"{name}_{index} for each {heads}{SUBTITLE}{n} tokens × {width_name} = {width}, one colour scale for "
             "all</span>")
    return described(layout(fig, title, height=max(MAIN_HEIGHT, 150 * rows), pooled=step),
                     describe.head_values([z for _, z in panels], [t for t, _ in panels], describe.plain(title)))


# --- Step 2: attention per head -------------------------------------------------------------------------

# The title of each stage of step 2 (analysis.pooling.STAGES); stage_title adds the scores' product.
STAGE_TITLES = {
    "raw": "Raw scores",
    "scaled": "Scaled scores",
    "mask": "Mask M: 0 where a pair is open, −∞ where it is blocked",
    "weights": "Attention weights α_ts = softmax_s(z_ts)",
}
STAGE_VALUES = {"raw": "score", "scaled": "score", "mask": "M", "weights": "weight"}  # what a cell holds


def stage_title(stage: str, group_size: int = 1, scale: float = 1.0, masked: bool = False) -> str:
    """A stage's title, the scores with their product: Q_i K_jᵀ where query heads share key/value heads (group_size
    > 1, head j = ⌈i/g⌉), else Q_i K_iᵀ; the scaled ones times the scale used, or said not scaled (scale 1); the
    weights with the mask M added to the scores when there is one."""
    product = " " + score_product(group_size) if stage in ("raw", "scaled") else ""
    if stage == "scaled" and scale == 1.0:  # no scaling chosen: "Scaled scores … × 1" would contradict the page
        return "Scores" + product + " (not scaled)"
    title = STAGE_TITLES[stage].replace("(z_ts)", "(z_ts + M_ts)") if masked else STAGE_TITLES[stage]
    return title + product + (f" × {scale:.4g}" if stage == "scaled" else "")


def _stage_title(trace: Trace, head: int, stage: str, scale: float) -> str:
    group = trace.q.shape[0] // trace.k.shape[0]
    title = f"Head {head + 1}: {stage_title(stage, group, scale, masked=trace.mask is not None)}"
    if stage == "scaled" and trace.mask is not None:
        title += " (blocked cells left blank)"
    if stage == "mask":  # how this figure draws it (the explorer hatches the blocked pairs, and says so)
        title += " (grey = open, blank = blocked)"
    return title


def _stage_figure(z: np.ndarray, keys: list[str], queries: list[str], title: str, stage: str, blocked: bool,
                  height: int, step: int) -> dict:
    """One head's matrix at a stage: scores on the signed scale, weights on the 0..1 scale, the mask as kept (one
    grey) or blank; blocked pairs always blank."""
    fig = heatmap(z, keys, queries, title, signed=stage in ("raw", "scaled"), x_title="key", y_title="query",
                  value_name=STAGE_VALUES[stage], height=height, step=step, blocked=blocked and stage != "raw")
    if stage == "mask":  # not a value scale: one grey for a kept pair (M = 0), the background for a blocked one
        trace = fig["data"][0]
        trace.update(colorscale=[[0, PALE], [1, PALE]], showscale=False)
        trace.pop("text", None)
        trace.pop("texttemplate", None)
    return fig


def _describe_stage(z: np.ndarray, queries: list[str], keys: list[str], stage: str,
                    what: str) -> describe.Description:
    """The text alternative of one head's exact matrix at a stage (blocked pairs NaN); queries and keys named."""
    if stage == "weights":
        return describe.weights(z, queries, keys, what)
    if stage == "mask":
        return describe.blocked(np.isnan(z), queries, keys, what)
    return describe.values(z, queries, keys, what)


def attention_figure(trace: Trace, head: int, tokens: list[str], stage: str = "weights", scale: float = 1.0,
                     key_tokens: list[str] | None = None, pooled: tuple[np.ndarray, int] | None = None,
                     window: tuple[int, int, int, int] | None = None) -> dict:
    """One head, large: rows are queries, columns are keys, exact values on hover; `scale` is named in the title.

    A long input is shown in blocks (their mean); pooled = pool_stage(...) when it is already computed. window =
    zoom_window(...) outlines the cells that zoom_figure shows exactly.
    """
    z, step = pooled if pooled is not None else pool_stage(trace, head, stage)
    n = trace.weights.shape[1]
    keys = key_tokens or tokens
    title = _stage_title(trace, head, stage, scale)
    fig = _stage_figure(z, token_labels(keys), token_labels(tokens), title, stage, trace.mask is not None,
                        height=min(700, max(360, 28 * n + 160)), step=step)
    if window is not None and step > 1:
        r0, r1, c0, c1 = window
        outline(fig, r0 / step, r1 / step, c0 / step, c1 / step)
    return described(fig, _describe_stage(finite_or_nan(stage_values(trace, head, stage)), describe.names(tokens),
                                          describe.names(keys), stage, describe.plain(title)))


ZOOM = 64  # the zoom window's side, in cells: every cell exact, every token named


def zoom_window(n: int, m: int, query: int, key: int, size: int = ZOOM) -> tuple[int, int, int, int]:
    """(r0, r1, c0, c1): the rows r0..r1-1 and columns c0..c1-1 (0-based) of the zoom window whose first query row
    and first key column are `query` and `key` (1-based): size x size cells at most, cut at the matrix's edge."""
    r0, c0 = min(max(query, 1), n) - 1, min(max(key, 1), m) - 1
    return r0, min(r0 + size, n), c0, min(c0 + size, m)


def zoom_figure(trace: Trace, head: int, tokens: list[str], stage: str, window: tuple[int, int, int, int],
                scale: float = 1.0, key_tokens: list[str] | None = None) -> dict:
    """The cells of one head's matrix in `window` (zoom_window), exactly as the engine computed them, each named
    by its query and key token on hover."""
    r0, r1, c0, c1 = window
    z = finite_or_nan(stage_values(trace, head, stage)[r0:r1, c0:c1])
    keys = key_tokens or tokens
    title = (f"{_stage_title(trace, head, stage, scale)}: queries {r0 + 1}–{r1} × keys {c0 + 1}–{c1}, every cell "
             "exact")
    fig = _stage_figure(z, token_labels(keys)[c0:c1], token_labels(tokens)[r0:r1], title, stage,
                        trace.mask is not None, height=min(760, max(360, 11 * (r1 - r0) + 200)), step=1)
    queries, key_names = describe.names(tokens)[r0:r1], describe.names(keys)[c0:c1]  # positions in the whole text
    return described(fig, _describe_stage(z, queries, key_names, stage, describe.plain(title)))


def head_panels(z: np.ndarray, step: int, tokens: list[str], key_tokens: list[str] | None, title: str,
                group_size: int = 1, cols: int | None = None, panel_height: int = 260,
                value_name: str = "weight", blocked: bool = False) -> dict:
    """One 0..1 panel per head of z (h, rows, cols), already pooled over step x step blocks: queries as rows, keys as
    columns, on one shared colour axis; blank cells are blocked pairs when `blocked`.

    With grouped-query attention (group_size > 1), each panel names the key/value head it reads, and (see
    group_rows) each row of panels is one group (no colour: head colours mean heads).
    """
    n_heads = z.shape[0]
    names = [f"head {i + 1}" + (f" (K/V {i // group_size + 1})" if group_size > 1 else "") for i in range(n_heads)]
    cols = cols or (group_size if group_rows(group_size) else min(n_heads, 4))
    fig, rows, step = panel_grid([(names[i], z[i]) for i in range(n_heads)], token_labels(key_tokens or tokens),
                                 token_labels(tokens), cols, WEIGHT_AXIS,
                                 f"query %{{y}}<br>key %{{x}}<br>{value_name} = %{{z:.6g}}", step=step,
                                 value_name=value_name.split(" ")[0], blocked=blocked)
    return layout(fig, title, height=max(280, panel_height * rows), pooled=step)


def head_grid_figure(trace: Trace, tokens: list[str], key_tokens: list[str] | None = None,
                     cols: int | None = None, title: str | None = None, group_size: int = 1,
                     panel_height: int = 260, pooled: tuple[np.ndarray, int] | None = None) -> dict:
    """All heads' attention weights side by side, on the one shared 0..1 scale (see head_panels), blocked pairs blank.

    Long inputs are shown in blocks (their mean); pooled = pool_heads(trace.weights, trace.mask) when it is already
    computed.
    """
    z, step = pooled if pooled is not None else pool_heads(trace.weights, trace.mask)
    title = title or f"Attention weights of all {z.shape[0]} heads (rows: queries, columns: keys)"
    fig = head_panels(z, step, tokens, key_tokens, title, group_size, cols, panel_height,
                      blocked=trace.mask is not None)
    # The description reads the exact weights: a blocked pair's weight is 0, never a row's largest.
    return described(fig, describe.head_weights(trace.weights, describe.names(tokens),
                                                describe.names(key_tokens or tokens), describe.plain(title)))


def query_weights_figure(trace: Trace, head: int, query: int, tokens: list[str],
                         key_tokens: list[str] | None = None) -> dict:
    """How much query token `query` attends to each key, in one head (a bar per key); a blocked key says so."""
    w = trace.weights[head, query]
    keys = key_tokens or tokens
    labels = token_labels(keys)
    blocked = trace.mask[head, query] if trace.mask is not None else np.zeros(len(w), bool)
    fig = figure([dict(type="bar", x=labels, y=w, marker=dict(color=head_colour(head)),
                       text=["blocked" if b else "" for b in blocked], textposition="outside",
                       hovertemplate="key %{x}<br>weight = %{y:.6g}<extra></extra>")],
                 xaxis=category_axis("key", tickangle=-45 if len(labels) > 6 else 0),
                 yaxis=dict(title=dict(text="weight"), range=[0, 1]))
    fig = layout(fig, f"Head {head + 1}, query {token_labels(tokens)[query]}: its weights sum to "
                      f"{w.sum():.4f}", height=320)
    return described(fig, describe.weight_row(np.where(blocked, np.nan, w), describe.names(tokens)[query],
                                              describe.names(keys), head))


MIX_KEYS = 24  # the value mix shows a row per key up to this many keys (every row label then fits its height)


def value_mix_figure(trace: Trace, head: int, query: int, tokens: list[str], group_size: int = 1,
                     key_tokens: list[str] | None = None, layer: int | None = None) -> dict:
    """α_ts · v_s for every key s (one row each) and their sum, which is head_i's output row for the query t.

    With more than MIX_KEYS keys, the MIX_KEYS - 1 keys of largest weight get a row each (in key order) and one
    row adds up the α_ts · v_s of all the others, so the rows still sum to the head's output. layer: a trained
    model's layer, named in the title.
    """
    v = trace.v[head // group_size]                             # (m, d_k)
    w = trace.weights[head, query]                              # (m,)
    mixed = w[:, None] * v                                      # (m, d_k)
    keys = key_tokens or tokens
    # The formula's names, s = the key; a blocked key (mask M) says so: its 0 is not a small contribution.
    blocked = trace.mask[head, query] if trace.mask is not None else np.zeros(len(w), bool)
    labels = [f"α_ts v_s {lab}{' (blocked)' if out else ''}" for lab, out in zip(token_labels(keys), blocked,
                                                                                 strict=True)]
    names = [f"α_ts v_s of {name}" for name in describe.names(keys)]
    query_name = html.escape(describe.token(tokens, query), quote=False)  # the token as typed, shown by plotly
    title = (f"{f'Layer {layer}, h' if layer else 'H'}ead {head + 1}, query {query_name}: weight α_ts × value v_s for "
             "each key s, and their sum")
    if len(w) > MIX_KEYS:
        top = np.sort(np.argsort(-w, kind="stable")[:MIX_KEYS - 1])
        rest = np.ones(len(w), bool)
        rest[top] = False
        mixed = np.vstack([mixed[top], mixed[rest].sum(axis=0)[None]])
        other = f"α_ts v_s of the other {int(rest.sum())} keys, added up"
        labels = [labels[j] for j in top] + [other]
        names = [names[j] for j in top] + [other]
        title += (f"<br>(a row for each of the {MIX_KEYS - 1} keys of largest weight, one for the "
                  f"{int(rest.sum())} others)")
    z = np.vstack([mixed, trace.heads[head, query][None]])      # (rows + 1, d_k)
    rows = labels + ["= sum (head output)"]
    j = head // group_size + 1  # the K/V head this query head reads
    x_title = f"component c of V_{j} (K/V head {j}, read by head {head + 1})" if group_size > 1 \
        else "component c of V_i"
    fig = heatmap(z, dim_labels(v.shape[1], "c"), rows, title, x_title=x_title, y_title="",
                  height=min(600, max(300, 26 * len(rows) + 160)),
                  value_name="α_ts v_s and<br>their sums")  # not "value": that is v_s's name in the title
    # A cell's number is named by its row (α_ts v_s of one key, or a sum of them): the tooltip adds no name of its own.
    fig["data"][0]["hovertemplate"] = f"%{{y}}<br>{x_title}: %{{x}}<br>= %{{z:.6g}}<extra></extra>"
    if "<br>" in title:
        fig["layout"]["margin"]["t"] = 84  # room for the title's second line
    what = describe.plain(title)
    return described(fig, describe.values(z, names + ["sum: the head's output"], dim_labels(v.shape[1], "c"), what))


def entropy_figure(trace: Trace, tokens: list[str], entropy: np.ndarray | None = None) -> dict:
    """Row entropy (bits) per query (rows) and head (columns): 0 = focused on one key, log2(m) = spread evenly.

    On the weights' sequential scale turned round, so that a focused row takes the end a large weight takes (dark
    on the light page, bright on the dark one) in either theme; the colour bar's title and its two ends say which
    end is focused.
    entropy: row_entropy(trace.weights) when it is already computed, (h, n).
    """
    ent = row_entropy(trace.weights) if entropy is None else entropy  # (h, n)
    m = trace.weights.shape[-1]
    top = float(np.log2(m))
    heads = [f"head {i + 1} (mean {e:.2f})" for i, e in enumerate(ent.mean(axis=1))]
    z, step = pool(ent.T, OVERVIEW_CELLS)                           # (n, h): queries as rows
    z = z.astype(np.float32)  # shown to 4 decimals: float32's 7 digits are plenty, at half the bytes
    ticks = [float(t) for t in range(int(top)) if top - t > 0.3 or t == 0] + [top]
    ticktext = ["0 focused"] + [f"{t:g}" for t in ticks[1:-1]] + [f"{top:.2f} spread"]
    axis = dict(amount_axis(max(top, 1e-9)), reversescale=True)     # 0 bits (focused) at a large weight's end
    fig = figure([dict(
        type="heatmap", z=z, x=pooled_labels(heads, step), y=pooled_labels(token_labels(tokens), step),
        colorscale=axis["colorscale"], reversescale=True, zmin=axis["cmin"], zmax=axis["cmax"], hoverongaps=False,
        colorbar=colour_bar(FOCUS_BAR, tickvals=ticks, ticktext=ticktext),
        hovertemplate=f"query %{{y}}<br>%{{x}}<br>{'mean ' if step > 1 else ''}entropy = %{{z:.4f}} bits"
                      "<extra></extra>", **cell_numbers(z, axis))],
        xaxis=category_axis("head", tickangle=-45 if len(heads) > 4 else 0),
        yaxis=category_axis("query token", autorange="reversed"))
    title = (f"How focused each head is: entropy of each weight row in bits (0 = all on one key, at most "
             f"log2(m) = log2({m}) = {top:.2f})")
    fig = layout(fig, title, height=min(700, max(260, 24 * z.shape[0] + 180)), pooled=step)
    return described(fig, describe.amounts(ent.T, describe.names(tokens), [f"head {i + 1}" for i in range(len(heads))],
                                           describe.plain(title), unit="bits", text_rows=True))


# --- Step 3: concatenation ------------------------------------------------------------------------------

CONCAT_TICKS = 16  # component labels under the concatenation at most: more ran into each other at 1280 px


def concat_figure(trace: Trace, tokens: list[str]) -> dict:
    """The n x (h*d_k) concatenation, each head's block of columns outlined and labelled in its colour.

    Each column is named "head i, c<component>" (in its hover text and its table); under the matrix only a few
    components of each block are written, as "c<component>", since the head's number stands over its block."""
    n_heads, n, d_k = trace.heads.shape
    labels = component_labels(n_heads, d_k)
    z, step = pool(trace.concat, OVERVIEW_CELLS)
    title = f"Concat(head_1, …, head_{n_heads}): {n} × {n_heads * d_k}"
    fig = heatmap(z, labels, token_labels(tokens), title, x_title="column: head i, component c", y_title="token",
                  step=step, height=min(MAIN_HEIGHT, 24 * n + 200))
    component_ticks(fig, "x", n_heads, d_k, step)
    mark_head_blocks(fig, n_heads, d_k / step, "x", -(-n // step))
    return described(fig, describe.values(trace.concat, describe.names(tokens), labels, title))


def component_labels(n_heads: int, d_k: int, head: str = "head") -> list[str]:
    """The names of the h·d_k columns of the concatenation (or of W_Q, or rows of W_O): "head i, c<component>",
    the component c counted within its head, from 1 to d_k, as everywhere else."""
    return [f"{head} {i + 1}, c{c + 1}" for i in range(n_heads) for c in range(d_k)]


def component_ticks(fig: dict, axis: str, n_heads: int, d_k: int, step: int) -> None:
    """Along `axis` ("x" or "y") of a one-panel figure dict whose cells are the h·d_k components of the heads
    (pooled by `step`), write a few components of each head's block as "c<component>": the head's name stands
    beside its block (mark_head_blocks), so "c3" reads as component 3 of that head."""
    every = -(-d_k // max(1, CONCAT_TICKS // n_heads))  # components between two labels within a block
    ticks = {i * d_k + c: f"c{c + 1}" for i in range(n_heads) for c in range(0, d_k, every)}  # cell -> label
    cells = fig["data"][0][axis]  # the shown cells' names (positions of blocks when pooled)
    shown = {}  # shown cell -> the label of the first labelled cell in it
    for cell, text in ticks.items():
        shown.setdefault(cell // step, text)
    fig["layout"][f"{axis}axis"].update(tickmode="array", tickvals=[cells[j] for j in shown],
                                        ticktext=list(shown.values()), tickangle=0)


# --- Step 4: output projection --------------------------------------------------------------------------

def output_weight_figure(W_O: np.ndarray, n_heads: int) -> dict:
    """W_O as used in concat @ W_O (h*d_k x d_model): head i's block of d_k rows outlined in its colour."""
    Wt = W_O.T                                                  # (h*d_k, d_model)
    d_k = Wt.shape[0] // n_heads
    z, step = pool(Wt, OVERVIEW_CELLS)
    title = f"W_O ({Wt.shape[0]} × {Wt.shape[1]}){SUBTITLE}rows (i-1)·d_v+1 … i·d_v read head i</span>"
    rows = component_labels(n_heads, d_k)                       # the concatenation's columns, one row each
    fig = heatmap(z, dim_labels(Wt.shape[1]), rows, title, x_title="output dimension d",
                  y_title="row: head i, component c", step=step, height=MAIN_HEIGHT)
    component_ticks(fig, "y", n_heads, d_k, step)
    mark_head_blocks(fig, n_heads, d_k / step, "y", -(-Wt.shape[1] // step))
    return described(fig, describe.values(Wt, rows, dim_labels(Wt.shape[1]), describe.plain(title),
                                          text_rows=False))


def contributions_figure(contributions: np.ndarray, output: np.ndarray, tokens: list[str],
                         bias: bool = True) -> dict:
    """Each head's share head_i W_O[block i] side by side, then their sum plus the bias, if any (= the output)."""
    n_heads, n, d_model = contributions.shape
    total = "sum + b_O = output" if bias else "sum = output"
    panels = [(f"head {i + 1}", contributions[i]) for i in range(n_heads)] + [(total, output)]
    limit = float(max(np.abs(contributions).max(), np.abs(output).max())) or 1.0
    fig, rows, step = panel_grid(panels, dim_labels(d_model), token_labels(tokens), min(len(panels), 5),
                                 signed_axis(limit), "token %{y}<br>dim %{x}<br>value = %{z:.6g}")
    title = "What each head adds to the output (one colour scale for all panels)"
    return described(layout(fig, title, height=max(260, 240 * rows), pooled=step),
                     describe.head_values([z for _, z in panels], [name for name, _ in panels], title))


def contribution_size_figure(contributions: np.ndarray) -> dict:
    """How much each head adds to the output: the length of its contribution head_i[t] W^O_i (d_model numbers),
    averaged over the tokens t, one bar per head. contributions: (h, n, d_model)."""
    size = np.linalg.norm(contributions, axis=2).mean(axis=1)  # (h,)
    labels = [f"head {i + 1}" for i in range(len(size))]
    fig = figure([dict(type="bar", x=labels, y=size, marker=dict(color=[head_colour(i) for i in range(len(size))]),
                       hovertemplate="%{x}<br>mean length = %{y:.4g}<extra></extra>")],
                 xaxis=category_axis("head", tickmode="array", tickvals=labels,  # the axis says "head": its number
                                     ticktext=[str(i + 1) for i in range(len(size))]),  # alone fits half a page
                 yaxis=dict(title=dict(text="mean length")))
    n = contributions.shape[1]
    what = (f"‖head_i[t] W^O_i‖: the length of what head i adds<br>to token t's output, averaged over the {n} "
            f"token{'s' if n > 1 else ''} t")  # which vector, and averaged over what
    fig = layout(fig, f"How much each head adds to the output{SUBTITLE}{what}</span>", height=MAIN_HEIGHT)
    fig["layout"]["margin"]["t"] = 100  # room for the subtitle's two lines
    return described(fig, describe.bars(labels, size, "How much each head adds to the output: "
                                        + what.replace("<br>", " "), column="mean length"))


def input_output_figure(x: np.ndarray, output: np.ndarray, tokens: list[str], cross: bool = False) -> dict:
    """Input X and the attention output side by side: same shape, n x d_model, each on its own centred scale
    (cross: the output is MultiHead(X, Y), Y the sentence that made the keys and values).

    Their sizes can differ a lot (an embedding may reach 4 where the output stays below 1), so one shared scale
    would show the smaller one as blank; each colour bar says which panel it belongs to.
    """
    x_limit, out_limit = float(np.abs(x).max()) or 1.0, float(np.abs(output).max()) or 1.0
    out = f"output MultiHead({'X, Y' if cross else 'X'})"
    fig, _, step = panel_grid([("input X", x), (out, output)], dim_labels(x.shape[1]),
                              token_labels(tokens), 2, signed_axis(x_limit),
                              "token %{y}<br>dim %{x}<br>value = %{z:.6g}", spacing=0.16)
    fig["data"][1]["coloraxis"] = "coloraxis2"
    fig["layout"]["coloraxis"]["colorbar"] = colour_bar("X", x=0.43)
    fig["layout"]["coloraxis2"] = dict(colorbar=colour_bar("output", x=1.0), **signed_axis(out_limit))
    title = f"Input and output, both {x.shape[0]} × {x.shape[1]}, each on its own colour scale"
    return described(layout(fig, title, height=min(640, max(300, 22 * len(tokens) + 160)), pooled=step),
                     describe.head_values([x, output], ["input X", out], title))

