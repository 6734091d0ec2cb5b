"""What every figure shares: the colour language, axis labels, the layout, one heatmap, and small multiples.

The colour language, defined here once and used by every figure (each always means the same):
- one sequential scale for amounts that cannot be negative: attention weights and shares on a fixed 0..1, other
  amounts (entropy in bits) from 0 to their largest value, always with a labelled colour bar. More is farther from
  the page's background: darker in the light theme, brighter in the dark one.
- one diverging scale for signed numbers (scores, X, Q, K, V, outputs), centred on 0: blue below, orange above.
- a blocked pair is never a colour of a scale: it is left blank (the background shows) and the colour bar says so.
- one colour per head (cycled after eight), each readable as text on the background; labels name the head too.
  Head colours mean heads only: in a title or label over a head, a line or bar of that head. The border of a head's
  block on a value heatmap is the neutral text colour (a blue or red border on the blue-orange scale would read as a
  value); the head's name above the block carries its colour.
- one highlight for what is chosen (the query in focus, the selected layer and head), a colour of no head and of
  neither scale.
- one series of greys for comparisons that are not heads (with / without 1/√d_k, one head against h, MHA / GQA / MQA,
  the steps of the pipeline, key/value heads): no hue, so never a head's colour, told apart by lightness (which every
  colour-vision deficiency keeps) and always named by a legend or label.
Queries are rows and keys are columns in every matrix. A matrix too large to send is pooled first
(mha_core.analysis.pooling) and every figure that shows block means says so in its title.

Two kinds of figure, both plotly's: the figures of the four steps and every small multiple are dicts of plotly's
JSON ({"data": [trace, ...], "layout": {...}}, made by `figure` below, which `heatmap` and `panel_grid` call), because
building plotly's validating objects cost as much as the rest of a rerun; the others are go.Figure objects. A figure
dict is a `Figure`: a plain dict to json and to Streamlit, which a notebook draws as a chart (and `show()`,
`to_plotly()` give plotly's own); the unit tests build every one as a go.Figure, so plotly checks each. `layout` and
`described` take either kind.

Figures are built in the light palette; figures.theme.themed gives a finished figure the dark one. The scales were
built in CAM02-UCS (lightness in even steps, hue and chroma kept inside sRGB) and are checked under simulated
colour-vision deficiencies by tests/unit/test_colours.py, which also holds every contrast ratio.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from ..analysis.pooling import OVERVIEW_CELLS, finite_or_nan, grid_budget, pool, shown


@dataclass(frozen=True)
class Palette:
    """Every colour a figure uses, by role, for one theme. Two palettes never give one colour two roles, so a
    figure's colours can be mapped from one theme to the other (figures.theme)."""

    background: str              # the page and the plot area; a blank cell (a blocked pair) shows it
    text: str                    # titles, labels, the numbers on bars
    muted: str                   # secondary text and strokes: tick labels, the shapes under the pipeline's boxes
    neutral: str                 # grey marks that belong to no head (one wide head, the queries in the plane); text too
    pale: str                    # a quiet grey fill: what a change is drawn against, a second special token
    faint: str                   # grid lines, thin guide lines
    sequential: tuple[str, ...]  # amounts, from 0 (next to the background) to the most (farthest from it)
    diverging: tuple[str, ...]   # signed values: -limit (blue) .. 0 (next to the background) .. +limit (orange)
    heads: tuple[str, ...]       # one per head, cycled; neighbours differ under every colour-vision deficiency
    series: tuple[str, ...]      # greys, most contrast first: the members of a comparison that is not one of heads
    highlight: str               # the outline of the selected cells, head or layer; the chosen query


# Ten even steps of lightness in CAM02-UCS (J' 95 to 18), hue from blue to indigo: every 0.1 of weight moves the colour
# by about 7.6 units in normal vision and under deuteranopia, protanopia and tritanopia alike.
_SEQUENTIAL = ("#e7effe", "#c3d8fc", "#a4c1f6", "#89aaf1", "#7494e7", "#637ed7", "#576abf", "#4c57a0", "#40467e",
               "#34365a", "#252538")
LIGHT = Palette(
    background="#ffffff", text="#1f2430", muted="#495057", neutral="#6c757d", pale="#ced4da", faint="#dee2e6",
    sequential=_SEQUENTIAL,
    # J' 93 at 0 (a light grey, so that a blank cell still differs from 0) to J' 28 at either end, in even steps.
    diverging=("#0c379b", "#325ab3", "#597bc5", "#859dd2", "#b4c0de", "#eae7e8", "#fba688", "#ef6e40", "#d23e02",
               "#9f2d01", "#6e1c00"),
    heads=("#1f5fbf", "#b35900", "#7b3fb5", "#3a7d00", "#a0008a", "#6b6b00", "#00758f", "#c0392b"),
    # J' 18 to 80 in even steps, no chroma: every one at least 20 ΔE' from every head colour.
    series=("#262626", "#595959", "#8c8c8c", "#bfbfbf"),
    # Deep green: at least 20 ΔE' from every head colour and every colour of both scales, so that an outline reads
    # as "chosen", never as head 8 or a large value (tests/unit/test_colours.py); the chosen query is also the larger
    # point and is named, since no one colour keeps clear of eight heads, two scales and the greys in every vision.
    highlight="#005038",
)
DARK = Palette(
    background="#0e1117", text="#e6e8ee", muted="#adb5bd", neutral="#8c959f", pale="#454c55", faint="#2b3038",
    sequential=_SEQUENTIAL[::-1],  # the same colours, 0 next to the dark background: no weight glares
    # J' 20 at 0 to J' 88 at either end: the same hues as the light scale, lighter as they grow.
    diverging=("#c6d9ff", "#88b3fe", "#6f8ec6", "#576c92", "#404b60", "#2b2b2c", "#6d3a23", "#a44c21", "#de5d1c",
               "#ff8952", "#fec9b2"),
    # The light theme's hues at J' 76: readable on the dark background.
    heads=("#8eb8fe", "#fe943e", "#cc9eff", "#80cb4e", "#ff80df", "#b8ba4e", "#6ec3df", "#fe8f7d"),
    series=("#ebebeb", "#b8b8b8", "#878787", "#575757"),  # the same order: most contrast with the dark page first
    highlight="#f0f000",  # yellow: by the same rule, the colour farthest from the dark theme's heads and scales
)
PALETTES = {"light": LIGHT, "dark": DARK}
# "More" on the sequential scale in words, per theme: more is farther from the page's background, so dark on the light
# page and bright on the dark one (DARK.sequential is LIGHT's turned round). Every sentence that names a direction of
# colour takes its words from here: (adjective, comparative), e.g. "a dark first column", "darker = more weight".
MORE_LOOKS = {"light": ("dark", "darker"), "dark": ("bright", "brighter")}
CELL_TEXT = ("#000000", "#ffffff")  # numbers printed inside a cell: whichever contrasts more with the cell (>= 4.58:1)


def colour_scale(stops: tuple[str, ...]) -> list[list]:
    """A plotly colour scale with the stops at even positions from 0 to 1."""
    return [[i / (len(stops) - 1), colour] for i, colour in enumerate(stops)]


WEIGHT_SCALE = colour_scale(LIGHT.sequential)  # attention weights and shares on 0..1; any other amount from 0
SIGNED_SCALE = colour_scale(LIGHT.diverging)   # any signed value, centred at 0
WEIGHT_AXIS = dict(colorscale=WEIGHT_SCALE, cmin=0, cmax=1)
HEAD_COLOURS = list(LIGHT.heads)
SERIES = list(LIGHT.series)  # a comparison that is not of heads: member k in SERIES[k]
HIGHLIGHT = LIGHT.highlight  # the outline of the selected cells, head or layer
TEXT, MUTED, NEUTRAL, PALE, FAINT, BACKGROUND = (LIGHT.text, LIGHT.muted, LIGHT.neutral, LIGHT.pale, LIGHT.faint,
                                                LIGHT.background)
BLOCKED_NOTE = "blank:<br>blocked"  # under a colour bar whose matrix has blocked pairs
FOCUS_BAR = "bits (0 = focused)"  # entropy's colour bar: its scale turned round, 0 bits at a large weight's end
MAX_LABELLED_CELLS = 150  # up to this many cells, each one shows its number (the tiny example, short sentences)
MAX_GROUP_ROW = 6  # groups of up to this many query heads (sharing one K/V head) get a row of panels each
FONT = dict(family="Inter, Segoe UI, Helvetica, Arial, sans-serif", size=13)


def group_rows(group_size: int) -> bool:
    """Whether small multiples of the query heads show one key/value group per row (grouped-query attention)."""
    return 1 < group_size <= MAX_GROUP_ROW


def head_colour(i: int) -> str:
    return HEAD_COLOURS[i % len(HEAD_COLOURS)]


def series_colour(k: int) -> str:
    """Member k of a comparison that is not of heads (cycled after four; a legend or label names each)."""
    return SERIES[k % len(SERIES)]


def rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = hex_rgb(hex_colour)
    return f"rgba({r},{g},{b},{alpha})"


def hex_rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def scale_colour(scale: list[list], t: float) -> str:
    """The colour a plotly colour scale gives to t in 0..1: straight lines between stops in sRGB, as plotly draws."""
    positions = [p for p, _ in scale]
    rgb = np.array([hex_rgb(c) for _, c in scale], dtype=float)
    t = float(np.clip(t, 0.0, 1.0))
    return "#%02x%02x%02x" % tuple(int(round(np.interp(t, positions, rgb[:, k]))) for k in range(3))


def _luminance(hex_colour: str) -> float:
    """WCAG 2.1 relative luminance."""
    c = np.array(hex_rgb(hex_colour)) / 255
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(c @ [0.2126, 0.7152, 0.0722])


def text_on(fill: str) -> str:
    """Black or white, whichever contrasts more with `fill` (WCAG 2.1): at least 4.58:1 for any fill."""
    return CELL_TEXT[0] if _luminance(fill) > 0.179 else CELL_TEXT[1]  # 0.179: where both ratios are equal


def cell_text(z: np.ndarray, texts: list[list[str]], axis: dict) -> list[list[str]]:
    """Each cell's text in black or white, whichever reads on the cell's colour on `axis` (colorscale, cmin, cmax,
    and reversescale when the scale runs from cmax to cmin)."""
    scale, lo, hi = axis["colorscale"], axis["cmin"], axis["cmax"]
    span = (hi - lo) or 1.0

    def at(v: float) -> float:  # the position of v on the colour scale
        return 1 - (v - lo) / span if axis.get("reversescale") else (v - lo) / span

    return [[f'<span style="color:{text_on(scale_colour(scale, at(v)))}">{t}</span>' if t else ""
             for v, t in zip(row, text_row, strict=True)] for row, text_row in zip(z, texts, strict=True)]


CELL_FORMAT = "{:.2f}"  # every number printed in a cell: one precision (never "0.000292" beside "3.67")


def cell_numbers(z: np.ndarray, axis: dict, panels: int = 1, fmt: str = CELL_FORMAT, most: int | None = None) -> dict:
    """Print each cell's value inside a small heatmap, so a student can check it by hand, in black or white to read
    on the cell's colour (axis: the colour axis, with colorscale, cmin and cmax).

    Up to `most` cells; by default MAX_LABELLED_CELLS shared by the panels side by side (their cells are narrower).
    """
    if z.size > (most or MAX_LABELLED_CELLS // panels):
        return {}
    texts = [["" if np.isnan(v) else _unsigned_zero(fmt.format(v)) for v in row] for row in np.asarray(z, dtype=float)]
    return dict(text=cell_text(np.asarray(z, dtype=float), texts, axis), texttemplate="%{text}",
                textfont=dict(size=11))


def _unsigned_zero(text: str) -> str:
    """"-0.00" (a small negative value, rounded) as "0.00"."""
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def colour_bar(title: str, blocked: bool = False, **more) -> dict:
    """A colour bar that names what it measures, and says so when blank cells are blocked pairs."""
    text = f"{title}<br><sub>{BLOCKED_NOTE}</sub>" if blocked else title
    return dict(thickness=12, title=dict(text=text), **more)


def amount_axis(top: float) -> dict:
    """The sequential scale for an amount from 0 to `top` (weights and shares: top = 1)."""
    return dict(colorscale=WEIGHT_SCALE, cmin=0, cmax=float(top) or 1.0)


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


def pooled_note(step: int) -> str:
    return f"  (averages over {step}×{step} blocks)"  # short: a long title is cut at the chart's edge


class Figure(dict):
    """A figure dict of plotly's JSON that draws itself in a notebook: a cell ending in it shows the chart.

    It stays a dict (json, Streamlit and go.Figure read it as one); only showing it builds plotly's object.
    """

    def to_plotly(self) -> go.Figure:
        """The same figure as plotly's validated object."""
        return go.Figure(self)

    def show(self, *args, **kwargs) -> None:
        """Draw it with plotly's renderers (plotly.io.show's arguments)."""
        self.to_plotly().show(*args, **kwargs)

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs) -> dict:
        return self.to_plotly()._repr_mimebundle_(include, exclude, **kwargs)

    def _ipython_display_(self) -> None:
        self.to_plotly()._ipython_display_()


def figure(data: list[dict] | None = None, **layout) -> Figure:
    """A figure dict of plotly's JSON: its traces (each a dict with its `type`) and its layout."""
    return Figure(data=list(data or []), layout=layout)


def category_axis(title: str = "", **more) -> dict:
    """An axis of named positions (tokens, dimensions, heads), titled."""
    return dict(title=dict(text=title), type="category", **more)


# A title's second, smaller line (closed by </span>): a long title would be cut at a half-width chart's edge.
# figures.describe reads it as "; " in the text alternative.
SUBTITLE = "<br><span style='font-size:12px'>"


def layout(fig, title: str, height: int | None = None, pooled: int = 1):
    """The common layout of a figure (dict or go.Figure, which it returns): a left-aligned title (saying so when the
    figure shows block means), the font, margins."""
    if pooled > 1:
        title += pooled_note(pooled)
    # No template is set here: plotly's default applies, and Streamlit's chart theme replaces its parts.
    top = 85 if SUBTITLE in title else 60  # room for a title's second line above the panels' own titles
    common = dict(title=dict(text=title, x=0, xanchor="left"), font=dict(FONT), margin=dict(l=10, r=10, t=top, b=10),
                  **({} if height is None else {"height": height}))
    if isinstance(fig, dict):
        fig["layout"].update(common)
    else:
        fig.update_layout(common)
    return fig


def heatmap(z: np.ndarray, x_labels: list[str], y_labels: list[str], title: str, signed: bool = True,
            x_title: str = "", y_title: str = "", zmax: float | None = None, max_cells: int = OVERVIEW_CELLS,
            height: int | None = None, value_name: str = "value", step: int | None = None,
            blocked: bool = False) -> dict:
    """One labelled heatmap, as a figure dict: diverging around 0 when `signed` (from -zmax to zmax, default the
    largest |z|), else the 0..1 weight scale. Blank (NaN) cells are blocked pairs when `blocked`: the colour bar
    says so.

    step: z is already averaged over blocks of step x step cells (see analysis.pooling); None pools it here.
    """
    if step is None:
        z, step = pool(finite_or_nan(z), max_cells)
    z = shown(z, step)
    axis = signed_axis(zmax or largest_size(z)) if signed else WEIGHT_AXIS
    trace = dict(type="heatmap", z=z, x=pooled_labels(x_labels, step), y=pooled_labels(y_labels, step),
                 colorscale=axis["colorscale"], zmin=axis["cmin"], zmax=axis["cmax"], hoverongaps=False,
                 hovertemplate=f"{y_title or 'row'} %{{y}}<br>{x_title or 'column'} %{{x}}<br>"
                               f"{'mean ' if step > 1 else ''}{value_name} = %{{z:.6g}}<extra></extra>",
                 colorbar=colour_bar(value_name, blocked), **cell_numbers(z, axis))
    if signed:
        trace["zmid"] = 0
    fig = figure([trace], xaxis=category_axis(x_title, tickangle=-45 if len(x_labels) > 6 else 0, automargin=True),
                 yaxis=category_axis(y_title, autorange="reversed"))
    return layout(fig, title, height, pooled=step)


def largest_size(z: np.ndarray) -> float:
    """The largest |value| of z, ignoring blank cells; 1 when there is none (a colour axis needs a range)."""
    z = np.asarray(z, dtype=float)
    finite = z[np.isfinite(z)]
    return float(np.abs(finite).max()) if finite.size and np.abs(finite).max() > 0 else 1.0


def signed_axis(limit: float) -> dict:
    """A colour axis for signed values: the diverging scale, centred at 0, from -limit to limit."""
    return dict(colorscale=SIGNED_SCALE, cmid=0, cmin=-limit, cmax=limit)


def subplots(rows: int, cols: int, titles: list[str], horizontal_spacing: float, vertical_spacing: float) -> dict:
    """An empty figure of rows x cols panels, each with its own x and y axes (xaxis, xaxis2, ... row by row), and a
    title above each of the first len(titles): the layout plotly.subplots.make_subplots makes."""
    width = (1 - horizontal_spacing * (cols - 1)) / cols
    height = (1 - vertical_spacing * (rows - 1)) / rows
    fig = figure(annotations=[])
    for i in range(rows * cols):
        r, c = divmod(i, cols)
        x0, y1 = c * (width + horizontal_spacing), 1 - r * (height + vertical_spacing)
        suffix = str(i + 1) if i else ""
        fig["layout"][f"xaxis{suffix}"] = dict(anchor=f"y{suffix}", domain=[x0, x0 + width])
        fig["layout"][f"yaxis{suffix}"] = dict(anchor=f"x{suffix}", domain=[y1 - height, y1])
        if i < len(titles):
            fig["layout"]["annotations"].append(dict(
                font=dict(size=16), showarrow=False, text=titles[i], x=x0 + width / 2, xanchor="center", xref="paper",
                y=y1, yanchor="bottom", yref="paper"))
    return fig


def panel_grid(panels: list[tuple[str, np.ndarray]], x_labels: list[str], y_labels: list[str], cols: int,
               coloraxis: dict, hover: str, spacing: float = 0.03, step: int | None = None,
               value_name: str = "value", blocked: bool = False,
               vertical: float | None = None) -> tuple[dict, int, int]:
    """Small multiples: one heatmap per (title, z) panel on one shared colour axis (colorscale, cmin, cmax), tick
    labels on the outer panels only; returns (figure dict, rows, step). Blank cells are blocked pairs when `blocked`.

    `hover` is the plotly hover text of a cell, e.g. "query %{y}<br>key %{x}<br>weight = %{z:.6g}". spacing and
    vertical: the gaps between panels, as fractions of the width and the height (vertical: by default less as the
    rows grow, 0.07 for two). step: every z
    is already averaged over blocks of step x step cells (see analysis.pooling.pool_heads); None pools each here
    (the panels share one shape, so one step).
    """
    rows = -(-len(panels) // cols)
    fig = subplots(rows, cols, [title for title, _ in panels], spacing, 0.08 / rows + 0.03 if vertical is None
                   else vertical)
    given, largest = step, 1
    for i, (title, z) in enumerate(panels):
        if given is None:
            z, step = pool(z, grid_budget(len(panels)))
        z = shown(z, step)
        largest = max(largest, step)
        name = f"{title}, mean of a {step}×{step} block" if step > 1 else title
        suffix = str(i + 1) if i else ""
        fig["data"].append(dict(type="heatmap", z=z, x=pooled_labels(x_labels, step), y=pooled_labels(y_labels, step),
                                coloraxis="coloraxis", hoverongaps=False,
                                hovertemplate=f"{name}<br>{hover}<extra></extra>", xaxis=f"x{suffix}",
                                yaxis=f"y{suffix}", **cell_numbers(z, coloraxis, len(panels))))
    fig["layout"]["coloraxis"] = dict(colorbar=colour_bar(value_name, blocked), **coloraxis)
    _label_outer_panels(fig, rows, cols)
    return fig, rows, largest


def _label_outer_panels(fig: dict, rows: int, cols: int, show_x: bool = True, show_y: bool = True) -> None:
    """Tick labels only under the bottom row and left of the first column of small multiples, so none overlap.

    subplots numbers the axes row by row (xaxis, xaxis2, ...). On a long axis the browser shows every k-th label
    (plotly's automatic ticks, fitted to the drawn width): thinned, never dropped.
    """
    for r in range(1, rows + 1):
        for c in range(1, cols + 1):
            suffix = "" if (r - 1) * cols + c == 1 else str((r - 1) * cols + c)
            fig["layout"][f"xaxis{suffix}"].update(type="category", showticklabels=show_x and r == rows,
                                                   tickangle=-45, automargin=True, tickmode="auto")
            fig["layout"][f"yaxis{suffix}"].update(type="category", autorange="reversed",
                                                   showticklabels=show_y and c == 1, tickmode="auto")


def mark_head_blocks(fig: dict, n_heads: int, d_k: float, axis: str, span: int, names: list[str] | None = None,
                     colours: list[str] | None = None) -> None:
    """Outlines around each head's block of d_k columns (axis="x") or rows (axis="y") of a one-panel figure dict,
    each named beside its block.

    The outlines are the text colour: on the blue-orange value scale a blue or red border would read as a value. The
    names carry the colour: names and colours default to "head i" in head i's colour; along x, more than 4 heads are
    named by their number alone (the figure's title says what it counts), so that neighbouring names do not run into
    each other.
    """
    short = axis == "x" and n_heads > 4
    names = names or [f"{i + 1}" if short else f"head {i + 1}" for i in range(n_heads)]
    colours = colours or [head_colour(i) for i in range(n_heads)]
    shapes, notes = fig["layout"].setdefault("shapes", []), fig["layout"].setdefault("annotations", [])
    for i in range(n_heads):
        lo, hi = i * d_k - 0.5, (i + 1) * d_k - 0.5
        box = dict(x0=lo, x1=hi, y0=-0.5, y1=span - 0.5) if axis == "x" else dict(x0=-0.5, x1=span - 0.5, y0=lo, y1=hi)
        shapes.append(dict(type="rect", **box, line=dict(color=TEXT, width=1.5)))
        label = dict(x=(lo + hi) / 2, y=-0.5, yshift=10) if axis == "x" else dict(x=span - 0.5, y=(lo + hi) / 2,
                                                                                     xanchor="left", xshift=4)
        notes.append(dict(**label, text=names[i], showarrow=False, font=dict(color=colours[i], size=11)))


def outline(fig: dict, r0: float, r1: float, c0: float, c1: float, colour: str = HIGHLIGHT) -> None:
    """A rectangle around cells r0..r1-1 x c0..c1-1 of a heatmap (a figure dict) on category axes (cell i is centred
    at i)."""
    fig["layout"].setdefault("shapes", []).append(
        dict(type="rect", x0=c0 - 0.5, x1=c1 - 0.5, y0=r0 - 0.5, y1=r1 - 0.5, line=dict(color=colour, width=2)))


def described(fig, description):
    """fig (dict or go.Figure, which it returns) carrying its text alternative (a figures.describe.Description) in
    layout.meta, where the app's plotting helper reads it (figures.describe.Description.of) and a notebook can too."""
    if isinstance(fig, dict):
        fig["layout"]["meta"] = description.as_meta()
    else:
        fig.layout.meta = description.as_meta()
    return fig
