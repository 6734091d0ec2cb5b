"""A finished figure in the colours of a theme.

Every figure is built in the light palette of figures.base. themed(fig, "dark") gives it the dark palette: the
backgrounds, text, grid and colour bars, both value scales (the sequential one turned round, so that 0 sits next to
the dark background), every head and role colour, and the black-or-white numbers inside cells, chosen again for
their cells' new colours. It works in a notebook as in the app, and maps from either palette to the other, so
theming twice is harmless. Fonts and sizes are left alone (Streamlit's chart theme sets them).
"""

from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go

from .base import PALETTES, Palette, cell_text, rgba

ROLES = ("background", "text", "muted", "neutral", "pale", "faint", "highlight")
THEMES = tuple(PALETTES)
# The colour properties a trace may carry, as (parent, property) paths; `parent` "" is the trace itself.
TRACE_COLOURS = (("marker", "color"), ("line", "color"), ("textfont", "color"), ("", "fillcolor"))
_SPAN = re.compile(r'^<span style="color:#[0-9a-f]{6}">(.*)</span>$', re.S)
_RGBA = re.compile(r"^rgba\((\d+),(\d+),(\d+),([\d.]+)\)$")


def colour_map(target: Palette) -> dict[str, str]:
    """Every colour of every palette -> the colour of the same role in `target` (heads by position)."""
    out = {}
    for palette in PALETTES.values():
        for role in ROLES:
            out[getattr(palette, role)] = getattr(target, role)
        out.update(zip(palette.heads, target.heads, strict=True))
    return out


def scale_map(target: Palette) -> dict[tuple[str, ...], tuple[str, ...]]:
    """The stops of every palette's value scales -> the stops of the same scale in `target`."""
    out = {}
    for palette in PALETTES.values():
        out[palette.sequential] = target.sequential
        out[palette.diverging] = target.diverging
    return out


def themed(fig: go.Figure, theme: str) -> go.Figure:
    """A copy of fig in the colours of `theme` ("light" or "dark"); fig itself is left as it is.

    Colours outside the palettes (none in figures.*) are kept as they are.
    """
    if theme not in PALETTES:
        raise ValueError(f"unknown theme {theme!r}; choose from {', '.join(THEMES)}")
    fig = go.Figure(fig)
    target = PALETTES[theme]
    colours, scales = colour_map(target), scale_map(target)

    def swap(colour):
        if isinstance(colour, str):
            rgba_parts = _RGBA.match(colour.replace(" ", ""))
            if rgba_parts:
                r, g, b, alpha = rgba_parts.groups()
                hex_colour = "#%02x%02x%02x" % (int(r), int(g), int(b))
                return rgba(colours[hex_colour], float(alpha)) if hex_colour in colours else colour
            return colours.get(colour.lower(), colour)
        if isinstance(colour, (list, tuple)) and all(isinstance(c, str) for c in colour):
            return [swap(c) for c in colour]
        return colour  # numbers on a colour scale, or unset

    def swap_scale(scale):
        if not scale:
            return scale
        stops = tuple(str(c).lower() for _, c in scale)
        new = scales.get(stops) or tuple(swap(c) for c in stops)  # a value scale, or one of palette colours
        return [[p, c] for (p, _), c in zip(scale, new, strict=True)]

    bar = dict(title_font_color=target.text, tickfont_color=target.muted)
    for trace in fig.data:
        for parent, prop in TRACE_COLOURS:
            if parent and parent not in trace:
                continue
            holder = trace[parent] if parent else trace
            if prop in holder and holder[prop] is not None:
                holder[prop] = swap(holder[prop])
        if "marker" in trace and "line" in trace.marker and trace.marker.line.color is not None:
            trace.marker.line.color = swap(trace.marker.line.color)
        if "colorscale" in trace and trace.colorscale is not None:
            trace.colorscale = swap_scale(trace.colorscale)
        if "marker" in trace and "colorscale" in trace.marker and trace.marker.colorscale is not None:
            trace.marker.colorscale = swap_scale(trace.marker.colorscale)
            trace.marker.colorbar.update(bar)
        if "colorbar" in trace:
            trace.colorbar.update(bar)
    layout = fig.layout.to_plotly_json()
    updates = {}
    for name in layout:
        if name.startswith("coloraxis"):
            axis = fig.layout[name]
            updates[name] = dict(colorscale=swap_scale(axis.colorscale), colorbar=bar)
        elif name.startswith(("xaxis", "yaxis")):
            updates[name] = dict(gridcolor=target.faint, zerolinecolor=target.faint, linecolor=target.faint,
                                 tickfont_color=target.muted, title_font_color=target.text)
    fig.update_layout(updates, paper_bgcolor=target.background, plot_bgcolor=target.background,
                      font_color=target.text, title_font_color=target.text, legend_font_color=target.text,
                      hoverlabel=dict(bgcolor=target.background, bordercolor=target.faint, font_color=target.text))
    for shape in fig.layout.shapes:
        shape.line.color, shape.fillcolor = swap(shape.line.color), swap(shape.fillcolor)
    for note in fig.layout.annotations:
        note.font.color, note.arrowcolor = swap(note.font.color), swap(note.arrowcolor)
    for trace in fig.data:  # after the scales: the numbers in the cells follow their cells' new colours
        if trace.type == "heatmap" and trace.text is not None:
            trace.text = cell_text(np.asarray(trace.z, dtype=float), _plain(trace.text), _axis_of(fig, trace))
    return fig


def _plain(texts) -> list[list[str]]:
    """Cell texts without the colour each was given for its cell."""
    return [[_SPAN.sub(r"\1", t) if isinstance(t, str) else "" for t in row] for row in texts]


def _axis_of(fig: go.Figure, trace) -> dict:
    """A heatmap's colour axis as figures.base.cell_text reads it: its own scale and range, or its coloraxis's."""
    if trace.coloraxis:
        axis = fig.layout[trace.coloraxis]
        return dict(colorscale=[list(s) for s in axis.colorscale], cmin=axis.cmin, cmax=axis.cmax)
    return dict(colorscale=[list(s) for s in trace.colorscale], cmin=trace.zmin, cmax=trace.zmax)

