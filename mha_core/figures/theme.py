"""A finished figure in the colours of a theme.

Every figure is built in the light palette of figures.base. themed(fig, "dark") gives it the dark palette: the
backgrounds, text, grid and colour bars, both value scales (the sequential one turned round, so that 0 sits next to
the dark background), every head and role colour, and the black-or-white numbers inside cells, chosen again for
their cells' new colours. It works in a notebook as in the app, and maps from either palette to the other, so
theming twice is harmless. Fonts and sizes are left alone (Streamlit's chart theme sets them).
"""

from __future__ import annotations

import base64
import re

import numpy as np
import plotly.graph_objects as go

from .base import PALETTES, Figure, Palette, cell_text, rgba

ROLES = ("background", "text", "muted", "neutral", "pale", "faint", "highlight")
THEMES = tuple(PALETTES)
# The colour properties a trace may carry, as (parent, property) paths; `parent` "" is the trace itself.
TRACE_COLOURS = (("marker", "color"), ("line", "color"), ("textfont", "color"), ("", "fillcolor"))
_SPAN = re.compile(r'^<span style="color:#[0-9a-f]{6}">(.*)</span>$', re.S)
_RGBA = re.compile(r"^rgba\((\d+),(\d+),(\d+),([\d.]+)\)$")


def colour_map(target: Palette) -> dict[str, str]:
    """Every colour of every palette -> the colour of the same role in `target` (heads and series by position)."""
    out = {}
    for palette in PALETTES.values():
        for role in ROLES:
            out[getattr(palette, role)] = getattr(target, role)
        out.update(zip(palette.heads, target.heads, strict=True))
        out.update(zip(palette.series, target.series, strict=True))
    return out


def scale_map(target: Palette) -> dict[tuple[str, ...], tuple[str, ...]]:
    """The stops of every palette's value scales -> the stops of the same scale in `target`."""
    out = {}
    for palette in PALETTES.values():
        out[palette.sequential] = target.sequential
        out[palette.diverging] = target.diverging
    return out


def themed(fig: go.Figure | dict, theme: str) -> Figure:
    """A copy of fig in the colours of `theme` ("light" or "dark"), as a figure dict (plotly's JSON, which
    st.plotly_chart, plotly.io.show and go.Figure take, and a notebook draws); fig itself is left as it is.

    Plain JSON, not a new go.Figure: validating it again would cost as much as building the figure did. A go.Figure
    comes as its to_plotly_json(), a figure dict (figures.base) as plotly_json's copy. Colours outside the palettes
    (none in figures.*) are kept as they are.
    """
    if theme not in PALETTES:
        raise ValueError(f"unknown theme {theme!r}; choose from {', '.join(THEMES)}")
    target = PALETTES[theme]
    recolour = _Recolour(colour_map(target), scale_map(target))
    spec = plotly_json(fig) if isinstance(fig, dict) else fig.to_plotly_json()  # a copy, arrays as typed arrays
    layout = spec["layout"]
    bar = {"title": {"font": {"color": target.text}}, "tickfont": {"color": target.muted}}
    for trace in spec["data"]:
        for parent in ("marker", "line", "textfont"):
            part = trace.get(parent)
            if isinstance(part, dict) and "color" in part:
                part["color"] = recolour(part["color"])
        if "fillcolor" in trace:
            trace["fillcolor"] = recolour(trace["fillcolor"])
        marker = trace.get("marker", {})
        if isinstance(marker.get("line"), dict) and "color" in marker["line"]:
            marker["line"]["color"] = recolour(marker["line"]["color"])
        pattern = marker.get("pattern")  # a hatched bar: its ink and its ground
        for ink in ("fgcolor", "bgcolor"):
            if isinstance(pattern, dict) and ink in pattern:
                pattern[ink] = recolour(pattern[ink])
        for holder in (trace, marker):
            if holder.get("colorscale"):
                holder["colorscale"] = recolour.scale(holder["colorscale"])
            if "colorscale" in holder or "colorbar" in holder:
                _merge(holder.setdefault("colorbar", {}), bar)
    for name, value in layout.items():
        if name.startswith("coloraxis") and isinstance(value, dict):
            if value.get("colorscale"):
                value["colorscale"] = recolour.scale(value["colorscale"])
            _merge(value.setdefault("colorbar", {}), bar)
        elif name.startswith(("xaxis", "yaxis")) and isinstance(value, dict):
            _merge(value, {"gridcolor": target.faint, "zerolinecolor": target.faint, "linecolor": target.faint,
                           "tickfont": {"color": target.muted}, "title": {"font": {"color": target.text}}})
    _merge(layout, {"paper_bgcolor": target.background, "plot_bgcolor": target.background,
                    "font": {"color": target.text}, "title": {"font": {"color": target.text}},
                    "legend": {"font": {"color": target.text}},
                    "hoverlabel": {"bgcolor": target.background, "bordercolor": target.faint,
                                   "font": {"color": target.text}}})
    for shape in layout.get("shapes", []):
        if "fillcolor" in shape:
            shape["fillcolor"] = recolour(shape["fillcolor"])
        if "color" in shape.get("line", {}):
            shape["line"]["color"] = recolour(shape["line"]["color"])
    for note in layout.get("annotations", []):
        if "color" in note.get("font", {}):
            note["font"]["color"] = recolour(note["font"]["color"])
        if "arrowcolor" in note:
            note["arrowcolor"] = recolour(note["arrowcolor"])
    for trace in spec["data"]:  # after the scales: numbers follow their cells
        if trace.get("type") == "heatmap" and trace.get("text") is not None:
            axis = layout[trace["coloraxis"]] if trace.get("coloraxis") else {
                "colorscale": trace["colorscale"], "cmin": trace["zmin"], "cmax": trace["zmax"],
                "reversescale": trace.get("reversescale", False)}
            trace["text"] = cell_text(_values(trace["z"]), _plain(trace["text"]), axis)
    return Figure(spec)


# NumPy dtypes plotly.js reads as typed arrays, by the name plotly's JSON gives them.
TYPED = {"f8": "f8", "f4": "f4", "i4": "i4", "u4": "u4", "i2": "i2", "u2": "u2", "i1": "i1", "u1": "u1"}


def plotly_json(value):
    """A copy of a figure dict (or any part of one) as plotly's JSON, as go.Figure.to_plotly_json writes it: numeric
    NumPy arrays as plotly.js typed arrays (base64 of their little-endian bytes, a fraction of the size of a list of
    numbers in JSON), other arrays as lists, NumPy numbers as Python numbers. The figure itself is left as it is."""
    if isinstance(value, dict):
        return {key: plotly_json(v) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plotly_json(v) for v in value]
    if isinstance(value, np.ndarray):
        code = value.dtype.str[1:]
        if code not in TYPED or value.size == 0:
            return plotly_json(value.tolist())
        data = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("<"))
        spec = {"dtype": TYPED[code], "bdata": base64.b64encode(data.tobytes()).decode("ascii")}
        if value.ndim > 1:
            spec["shape"] = ", ".join(map(str, value.shape))
        return spec
    if isinstance(value, np.generic):
        return value.item()
    return value


class _Recolour:
    """Maps a colour (hex, or rgba of a palette colour) or a colour scale into the target palette."""

    def __init__(self, colours: dict[str, str], scales: dict[tuple[str, ...], tuple[str, ...]]):
        self.colours, self.scales = colours, scales

    def __call__(self, colour):
        if isinstance(colour, str):
            rgba_parts = _RGBA.match(colour.replace(" ", ""))
            if rgba_parts:
                r, g, b, alpha = rgba_parts.groups()
                hex_colour = "#%02x%02x%02x" % (int(r), int(g), int(b))
                return rgba(self.colours[hex_colour], float(alpha)) if hex_colour in self.colours else colour
            return self.colours.get(colour.lower(), colour)
        if isinstance(colour, (list, tuple)) and all(isinstance(c, str) for c in colour):
            return [self(c) for c in colour]
        return colour  # numbers on a colour scale

    def scale(self, scale) -> list[list]:
        stops = tuple(str(c).lower() for _, c in scale)
        new = self.scales.get(stops) or tuple(self(c) for c in stops)  # a value scale, or one of palette colours
        return [[p, c] for (p, _), c in zip(scale, new, strict=True)]


def _merge(into: dict, values: dict) -> None:
    """Set values in a nested dict, keeping the keys it has that `values` does not name."""
    for key, value in values.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = dict(value) if isinstance(value, dict) else value


def _values(z) -> np.ndarray:
    """A heatmap's z as floats, also when it is plotly's base64 typed array (a figure themed before)."""
    if isinstance(z, dict) and "bdata" in z:
        data = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
        return data.reshape([int(d) for d in str(z["shape"]).split(",")]).astype(float) if "shape" in z else data
    return np.asarray(z, dtype=float)


def _plain(texts) -> list[list[str]]:
    """Cell texts without the colour each was given for its cell."""
    return [[_SPAN.sub(r"\1", t) if isinstance(t, str) else "" for t in row] for row in texts]
