"""The colour language stays readable for everyone: under simulated colour-vision deficiencies and in both themes.

Distances are CAM02-UCS ΔE' (Luo, Cui & Li 2006), computed by colorspacious, whose CVD simulation (Machado, Oliveira
& Fernandes 2009; severity 100 = dichromacy) stands in for deuteranopia, protanopia and tritanopia. One ΔE' is
about one just-noticeable difference between two patches side by side; a heatmap asks more (cells are compared
across the chart and with the colour bar, on screens of unknown calibration), hence the margins below. Contrast is
WCAG 2.1's ratio, computed here from its definition, not with the app's helper.

Thresholds (ΔE'):
- SEQUENTIAL_STEP = 6: each 0.1 of weight must move the colour by six noticeable differences, so that weights
  read to one decimal stay apart. The old plotly "Blues" failed it (4.7 under protanopia, 5.2 in normal vision).
- DIVERGING_STEP = 5 per 0.1 of the signed range, and SIDES_APART = 15 between -t and +t for |t| >= 0.2: the two
  signs must never be confused. The old "RdBu_r" failed both under protanopia (4.0 and 14.3).
- BLANK = 5: a blank cell (a blocked pair: the background shows) differs from the scale's zero.
- NEIGHBOURS = 20: colours that stand next to each other as categories (heads i and i+1, the parts of a stacked
  bar) differ clearly; labels (head i, the legend) carry what colour alone does not. A colour of the series (the
  members of a comparison that is not of heads) differs from every head colour by as much in normal vision.
- SERIES_STEP = 15: the series' greys, told apart by lightness alone (which no colour-vision deficiency changes),
  each from the next; GREY = 3: their chroma (C' of CAM02-UCS) stays below it, so they never take a head's hue.
- GRAPHIC_CONTRAST = 3: WCAG 2.1's ratio for graphics (1.4.11) between the background and the series' first three
  greys, which a comparison of up to three uses (the fourth, for the pipeline's last box, is outlined in a box), and
  between a hatched bar's grey and its hatching.
- The highlight (the chosen query, the selected cells): NEIGHBOURS from every head colour and every colour of both
  scales in normal vision, so that it never reads as a head or a value; HIGHLIGHT_ANY = 8 from those and from the
  greys in every simulated vision (eight heads, two scales and the greys leave no colour farther in every vision;
  the chosen query is also the larger, named point, and an outline is a shape).
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import plotly.graph_objects as go
import pytest

try:
    import tomllib
except ImportError:  # Python 3.10: Streamlit's own TOML reader
    import toml as tomllib

from helpers import ROOT
from mha_app.components.explorer.standalone import ACCENT
from mha_app.run.theme import PRIMARY_LABEL
from mha_core import figures as F
from mha_core.analysis.head_stats import ENCODER, decoder_parts
from mha_core.figures import base
from mha_core.figures.models import PART_STYLES, head_split_figure
from mha_core.figures.theme import themed
from screen import as_array, as_figure

colorspacious = pytest.importorskip("colorspacious")

SIMULATIONS = {"normal vision": None, "deuteranopia": "deuteranomaly", "protanopia": "protanomaly",
               "tritanopia": "tritanomaly"}
SEQUENTIAL_STEP, DIVERGING_STEP, SIDES_APART, BLANK, NEIGHBOURS = 6.0, 5.0, 15.0, 5.0, 20.0
SERIES_STEP, GREY, GRAPHIC_CONTRAST, HIGHLIGHT_ANY = 15.0, 3.0, 3.0, 8.0
TEXT_CONTRAST = 4.5  # WCAG 2.1 AA, normal text
THEMES = {"light": base.LIGHT, "dark": base.DARK}


def rgb(colour: str) -> np.ndarray:
    return np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)]) / 255


def seen(colours, simulation: str) -> np.ndarray:
    """CAM02-UCS coordinates of sRGB colours (hex) as a viewer with `simulation` sees them."""
    srgb = np.array([rgb(c) for c in colours])
    cvd = SIMULATIONS[simulation]
    if cvd:
        srgb = np.clip(colorspacious.cspace_convert(srgb, {"name": "sRGB1+CVD", "cvd_type": cvd, "severity": 100},
                                                    "sRGB1"), 0, 1)
    return colorspacious.cspace_convert(srgb, "sRGB1", "CAM02-UCS")


def sample(stops: tuple[str, ...], ts) -> list[str]:
    """Colours of a scale with evenly spaced stops at positions ts in 0..1, by straight lines in sRGB (plotly's way)."""
    pos = np.linspace(0, 1, len(stops))
    channels = np.array([rgb(c) for c in stops])
    out = []
    for t in ts:
        c = [np.interp(t, pos, channels[:, k]) for k in range(3)]
        out.append("#" + "".join(f"{round(v * 255):02x}" for v in c))
    return out


def distance(a: str, b: str, simulation: str) -> float:
    u = seen([a, b], simulation)
    return float(np.linalg.norm(u[0] - u[1]))


def luminance(colour: str) -> float:
    c = rgb(colour)
    c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)  # WCAG 2.1's constants
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


both = pytest.mark.parametrize("theme", THEMES)
every_vision = pytest.mark.parametrize("simulation", SIMULATIONS)


# --- the sequential scale: weights, shares, entropy ---------------------------------------------------------------

@both
@every_vision
def test_each_tenth_of_weight_is_a_visible_step(theme, simulation):
    colours = sample(THEMES[theme].sequential, np.linspace(0, 1, 11))
    steps = [distance(a, b, simulation) for a, b in itertools.pairwise(colours)]
    assert min(steps) >= SEQUENTIAL_STEP, [round(s, 2) for s in steps]


@both
@every_vision
def test_more_weight_is_always_farther_from_the_background(theme, simulation):
    """Darker = more on a light page, brighter = more on a dark one: 0 never glares, and a blank cell (blocked)
    differs from weight 0."""
    palette = THEMES[theme]
    away = [distance(palette.background, c, simulation) for c in sample(palette.sequential, np.linspace(0, 1, 21))]
    assert all(b > a for a, b in itertools.pairwise(away)), [round(a, 1) for a in away]
    assert away[0] >= BLANK


@both
def test_the_words_for_more_weight_say_which_way_the_scale_runs(theme):
    """On the dark page more weight is brighter, on the light page darker: the words (figures.base.MORE_LOOKS)
    follow the scale's lightness (CAM02-UCS J') in each theme, and every trained model's "what to look for" takes
    its colour word from them."""
    from mha_app.copy.models import GENERIC, MODEL_TEXT

    stops = THEMES[theme].sequential
    lighter_with_more = seen([stops[-1]], "normal vision")[0][0] > seen([stops[0]], "normal vision")[0][0]
    adjective, comparative = base.MORE_LOOKS[theme]
    assert (adjective, comparative) == (("bright", "brighter") if lighter_with_more else ("dark", "darker"))
    wrong = "dark" if lighter_with_more else "bright"
    for text in (*MODEL_TEXT.values(), GENERIC):
        words = text.patterns.format(dark=adjective)
        assert re.search(rf"\b{adjective}\b", words) and not re.search(rf"\b{wrong}", words), words


# --- the diverging scale: scores, Q, K, V, outputs ----------------------------------------------------------------

@both
@every_vision
def test_each_tenth_of_a_signed_range_is_a_visible_step(theme, simulation):
    colours = sample(THEMES[theme].diverging, np.linspace(0, 1, 21))  # -1 .. 1 in steps of 0.1
    steps = [distance(a, b, simulation) for a, b in itertools.pairwise(colours)]
    assert min(steps) >= DIVERGING_STEP, [round(s, 2) for s in steps]


@both
@every_vision
def test_the_two_signs_stay_apart(theme, simulation):
    stops = THEMES[theme].diverging
    for t in np.linspace(0.2, 1, 9):
        negative, positive = sample(stops, [0.5 - t / 2, 0.5 + t / 2])
        assert distance(negative, positive, simulation) >= SIDES_APART, (t, negative, positive)


@both
@every_vision
def test_zero_differs_from_a_blank_cell(theme, simulation):
    palette = THEMES[theme]
    zero = sample(palette.diverging, [0.5])[0]
    assert distance(palette.background, zero, simulation) >= BLANK


# --- categories: heads, the parts of a head's attention -----------------------------------------------------------

@both
@every_vision
def test_neighbouring_heads_differ(theme, simulation):
    heads = THEMES[theme].heads
    pairs = list(zip(heads, heads[1:] + heads[:1], strict=True))  # head 8 stands next to head 9 = head 1's colour
    worst = min(distance(a, b, simulation) for a, b in pairs)
    assert worst >= NEIGHBOURS, worst


@both
def test_no_two_head_colours_are_alike_in_normal_vision(theme):
    """Heads i and i + 8 share a colour (and their labels); any two of the eight differ."""
    heads = THEMES[theme].heads
    assert len(set(heads)) == len(heads) == 8
    assert min(distance(a, b, "normal vision") for a, b in itertools.combinations(heads, 2)) >= 10


def part_bars(kind: str, theme: str) -> list[dict]:
    """The stacked bars of a head split (one per part, in order), as the app sends them in `theme`."""
    parts = ENCODER if kind == "encoder" else decoder_parts()
    rows = [{"head": 0, **{name: 1 / len(parts.columns) for name in parts.columns}}]
    return themed(head_split_figure(rows, "t", parts), theme)["data"]


@both
@every_vision
@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_neighbouring_parts_of_a_stacked_bar_differ(theme, simulation, kind):
    """Greys told apart by lightness (SERIES_STEP, which no colour-vision deficiency changes), each part with a look
    of its own (grey and hatching), and no grey near a head colour (head colours mean heads)."""
    bars = part_bars(kind, theme)
    looks = [(bar["marker"]["color"], bar["marker"].get("pattern", {}).get("shape", "")) for bar in bars]
    assert len(set(looks)) == len(looks), looks
    colours = [colour for colour, _ in looks]
    worst = min(distance(a, b, simulation) for a, b in itertools.pairwise(colours))
    assert worst >= SERIES_STEP, (looks, worst)
    assert min(distance(c, h, "normal vision") for c in colours for h in THEMES[theme].heads) >= NEIGHBOURS


@both
def test_a_hatched_part_shows_its_hatching(theme):
    for bar in part_bars("encoder", theme) + part_bars("decoder", theme):
        pattern = bar["marker"].get("pattern")
        if pattern:
            assert contrast(pattern["fgcolor"], bar["marker"]["color"]) >= GRAPHIC_CONTRAST, (bar["name"], pattern)


def test_the_parts_use_no_head_colour():
    heads = set(base.LIGHT.heads) | set(base.DARK.heads)
    assert not {colour for colour, _, _ in PART_STYLES.values()} & heads


# --- the highlight: what is chosen ----------------------------------------------------------------------------------

@both
def test_the_highlight_is_no_head_and_no_value(theme):
    """The chosen query and the selection's outline were head 8's red, beside red-orange values: now far from both."""
    palette = THEMES[theme]
    scales = sample(palette.sequential, np.linspace(0, 1, 41)) + sample(palette.diverging, np.linspace(0, 1, 41))
    near = min((distance(palette.highlight, c, "normal vision"), c) for c in [*palette.heads, *scales])
    assert near[0] >= NEIGHBOURS, near


@both
@every_vision
def test_the_highlight_differs_from_every_colour_in_every_vision(theme, simulation):
    palette = THEMES[theme]
    others = [*palette.heads, *sample(palette.sequential, np.linspace(0, 1, 41)),
              *sample(palette.diverging, np.linspace(0, 1, 41)), *palette.series, palette.text, palette.muted,
              palette.neutral, palette.pale]
    near = min((distance(palette.highlight, c, simulation), c) for c in others)
    assert near[0] >= HIGHLIGHT_ANY, near


# --- the series: comparisons that are not of heads ----------------------------------------------------------------

@both
def test_no_colour_of_the_series_looks_like_a_head(theme):
    """With / without 1/√d_k, MHA / GQA / MQA, the pipeline's steps, K/V heads: none may be read as head i."""
    palette = THEMES[theme]
    worst = min(distance(s, h, "normal vision") for s in palette.series for h in palette.heads)
    assert worst >= NEIGHBOURS, worst
    assert not set(palette.series) & {palette.highlight, palette.text, palette.muted, palette.neutral}


@both
@every_vision
def test_the_series_greys_differ_by_lightness_in_every_vision(theme, simulation):
    palette = THEMES[theme]
    coordinates = seen(palette.series, simulation)                 # (4, 3): J', a', b'
    assert np.hypot(coordinates[:, 1], coordinates[:, 2]).max() < GREY     # no hue, in any vision
    steps = [distance(a, b, simulation) for a, b in itertools.pairwise(palette.series)]
    assert min(steps) >= SERIES_STEP, [round(s, 1) for s in steps]
    away = [distance(palette.background, c, simulation) for c in palette.series]
    assert all(b < a for a, b in itertools.pairwise(away)), away     # most contrast with the page first


@both
def test_the_first_three_series_colours_stand_out_from_the_page(theme):
    palette = THEMES[theme]
    assert min(contrast(c, palette.background) for c in palette.series[:3]) >= GRAPHIC_CONTRAST


def test_no_comparison_of_things_that_are_not_heads_uses_a_head_colour():
    """The figures that compare other things than heads: the 1/√d_k switch, one head against h, MHA / GQA / MQA, the
    pipeline's steps, and the K/V heads of grouped-query attention; each in series colours, never a head's."""
    from test_theme import colours_in

    from figure_catalogue import catalogue

    figures = catalogue()
    heads = set(base.LIGHT.heads)
    for name in ("scale summary", "flops", "kv cache", "pipeline", "weight shapes"):
        assert not colours_in(figures[name]) & heads, (name, colours_in(figures[name]) & heads)
        assert colours_in(figures[name]) & set(base.LIGHT.series), name
    groups = as_figure(figures["kv groups"])
    kv_boxes = [s for s in groups.layout.shapes if s.type == "rect" and s.y0 == 0.0]
    assert kv_boxes and all(s.line.color in base.LIGHT.series for s in kv_boxes)
    query_boxes = [s for s in groups.layout.shapes if s.type == "rect" and s.y0 == 0.78]
    assert [s.line.color for s in query_boxes] == [base.head_colour(i) for i in range(len(query_boxes))]


# --- contrast: text and chart labels, both themes -----------------------------------------------------------------

@both
def test_every_text_colour_of_the_figures_reads_on_the_background(theme):
    palette = THEMES[theme]
    texts = {"text": palette.text, "muted": palette.muted, "neutral": palette.neutral,
             "highlight": palette.highlight, **{f"head {i + 1}": c for i, c in enumerate(palette.heads)}}
    low = {name: round(contrast(c, palette.background), 2) for name, c in texts.items()
           if contrast(c, palette.background) < TEXT_CONTRAST}
    assert not low, low


@both
@pytest.mark.parametrize("scale", ["sequential", "diverging"])
def test_numbers_printed_in_cells_read_on_every_colour_of_the_scales(theme, scale):
    for cell in sample(getattr(THEMES[theme], scale), np.linspace(0, 1, 201)):
        assert max(contrast(cell, "#000000"), contrast(cell, "#ffffff")) >= TEXT_CONTRAST, cell


@both
def test_the_figures_print_each_number_in_the_colour_that_reads_on_its_cell(theme):
    """The tiny example prints every cell: each number's colour against its cell's colour, recomputed here."""
    import mha_core as mc
    from mha_core.teaching.presets import TINY_CONFIG, TINY_TOKENS, tiny_example

    x, w = tiny_example()
    trace = mc.forward(x, w, TINY_CONFIG)
    for stage, stops in (("weights", THEMES[theme].sequential), ("raw", THEMES[theme].diverging)):
        fig = go.Figure(themed(F.attention_figure(trace, 0, TINY_TOKENS, stage, TINY_CONFIG.softmax_scale), theme))
        heat = fig.data[0]
        z = as_array(heat.z)
        lo, hi = heat.zmin, heat.zmax
        for value, text in zip(z.ravel(), np.asarray(heat.text).ravel(), strict=True):
            ink = re.fullmatch(r'<span style="color:(#[0-9a-f]{6})">.*</span>', text).group(1)
            cell = sample(stops, [(value - lo) / (hi - lo)])[0]
            assert contrast(ink, cell) >= TEXT_CONTRAST, (stage, value, ink, cell)


def app_theme() -> dict:
    return tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["theme"]


@both
def test_the_app_theme_matches_the_figures_and_its_text_reads(theme):
    """config.toml's two themes: the figures' background and text are the page's, and the page's text, on either
    background, and its accent colour (links, the selected control) keep 4.5:1."""
    config, palette = app_theme()[theme], THEMES[theme]
    assert "base" not in app_theme(), "a fixed base theme would keep the page light in dark mode"
    assert config["backgroundColor"] == palette.background and config["textColor"] == palette.text
    for background in (config["backgroundColor"], config["secondaryBackgroundColor"]):
        assert contrast(config["textColor"], background) >= TEXT_CONTRAST
        assert contrast(palette.muted, background) >= TEXT_CONTRAST
    assert contrast(config["primaryColor"], config["backgroundColor"]) >= TEXT_CONTRAST
    assert contrast(PRIMARY_LABEL[theme], config["primaryColor"]) >= TEXT_CONTRAST  # a primary button's label
    assert ACCENT[theme] == config["primaryColor"]  # the saved explorer page's accent (it has no Streamlit theme)


# --- one language: every colour a figure sets is the palette's ----------------------------------------------------

def test_the_light_and_dark_palettes_give_no_colour_two_roles():
    """The dark theme is a mapping from the light one: it must be a function both ways."""
    roles = {}
    for palette in THEMES.values():
        named = {**{r: getattr(palette, r) for r in ("background", "text", "muted", "neutral", "pale", "faint")},
                 **{f"head {i}": c for i, c in enumerate(palette.heads)},
                 **{f"series {k}": c for k, c in enumerate(palette.series)}}
        for role, colour in named.items():
            assert roles.setdefault(colour, role) == role, (colour, roles[colour], role)
