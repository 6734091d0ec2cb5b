"""One colour language, in two themes: every colour a figure sets is a palette's, and figures.theme.themed moves a
figure wholly into the other palette (backgrounds, text, grid, both value scales, heads, the numbers in cells)."""

from __future__ import annotations

import json
import re

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from figure_catalogue import catalogue
from mha_core.figures import base
from mha_core.figures.theme import themed as themed_json
from screen import as_figure


def themed(fig, theme: str) -> go.Figure:
    """figures.theme.themed, its plain JSON read back into a figure (validated here, as the app needs not)."""
    return go.Figure(themed_json(fig, theme))

PALETTES = {"light": base.LIGHT, "dark": base.DARK}
HEX = re.compile(r"#[0-9a-fA-F]{6}\b")
RGBA = re.compile(r"rgba\((\d+),(\d+),(\d+),[\d.]+\)")
CELL_INK = re.compile(r'<span style="color:(#[0-9a-f]{6})">')


@pytest.fixture(scope="module")
def figures():
    return catalogue()


def palette_colours(palette: base.Palette) -> set[str]:
    return {palette.background, palette.text, palette.muted, palette.neutral, palette.pale, palette.faint,
            palette.highlight, *palette.sequential, *palette.diverging, *palette.heads, *palette.series}


def colours_in(fig) -> set[str]:
    """Every colour a figure's JSON names, as lower-case hex (rgba fills by their rgb), cell ink left out."""
    spec = as_figure(fig).to_plotly_json()
    spec["layout"].pop("template", None)  # plotly's default template, never what the app sends
    spec["layout"].pop("meta", None)      # the text alternative: words, not colours
    text = re.sub(r'<span style=\\"color:#[0-9a-f]{6}\\">', "", json.dumps(spec, default=str))  # as JSON writes it
    found = {c.lower() for c in HEX.findall(text)}
    found |= {"#%02x%02x%02x" % tuple(int(v) for v in m) for m in RGBA.findall(text.replace(" ", ""))}
    return found


def test_every_colour_a_figure_sets_is_the_light_palettes(figures):
    allowed = palette_colours(base.LIGHT)
    strays = {name: sorted(colours_in(fig) - allowed) for name, fig in figures.items() if colours_in(fig) - allowed}
    assert not strays, strays


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_themed_figures_use_only_that_themes_colours(figures, theme):
    allowed = palette_colours(PALETTES[theme])
    for name, fig in figures.items():
        styled = themed(themed(fig, "dark"), theme)  # through dark and back: a mapping both ways
        assert colours_in(styled) <= allowed, (name, sorted(colours_in(styled) - allowed))
        assert styled.layout.paper_bgcolor == styled.layout.plot_bgcolor == PALETTES[theme].background
        assert styled.layout.font.color == PALETTES[theme].text


def test_the_dark_theme_turns_the_weight_scale_round_and_keeps_the_signed_one_centred(figures):
    grid = themed(figures["head grid"], "dark")
    assert [c for _, c in grid.layout.coloraxis.colorscale] == list(base.DARK.sequential)
    assert grid.layout.coloraxis.colorscale[0][1] == base.LIGHT.sequential[-1]  # weight 0 sits next to the dark page
    raw = themed(figures["attention raw"], "dark").data[0]
    assert [c for _, c in raw.colorscale] == list(base.DARK.diverging) and raw.zmin == -raw.zmax


@pytest.mark.parametrize("name", ["attention weights", "head grid", "model grid"])  # dicts and a go.Figure
def test_themed_leaves_the_figure_it_was_given_alone(figures, name):
    fig = figures[name]
    before = pio.to_json(fig, validate=False)
    themed_json(fig, "dark")
    assert pio.to_json(fig, validate=False) == before


def test_numbers_in_cells_change_ink_with_their_cells(figures):
    """On the dark theme's weight scale small weights are dark cells: their numbers turn from black to white."""
    light = as_figure(figures["attention weights"]).data[0]
    dark = themed(figures["attention weights"], "dark").data[0]
    inks = [(CELL_INK.match(a), CELL_INK.match(b)) for a, b in zip(
        [t for row in light.text for t in row], [t for row in dark.text for t in row], strict=True) if a]
    assert any(a.group(1) != b.group(1) for a, b in inks)
    plain = [[re.sub(r"<[^>]+>", "", t) for t in row] for row in dark.text]
    assert plain == [[re.sub(r"<[^>]+>", "", t) for t in row] for row in light.text]  # the same numbers


def test_an_unknown_theme_is_refused_in_words(figures):
    with pytest.raises(ValueError, match="light, dark"):
        themed(figures["pipeline"], "sepia")
