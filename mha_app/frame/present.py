"""Presentation mode (present=1 in the link): large type, the sidebar collapsed, no top navigation, and the lesson
(pages/lesson.py) one screen at a time, each screen its own link (screen=N).

app.py reads the link before anything else (st.set_page_config collapses the sidebar only there); the link's
values are checked later, with every other setting, by url.check.
"""

from __future__ import annotations

import dataclasses
import re

import streamlit as st

from mha_app.copy.lesson import SCREENS
from mha_app.state import url
from mha_app.state.settings import Settings
from mha_core.figures.base import SUBTITLE

LESSON_SCRIPT = "pages/lesson.py"

# Large type for a projector, sized in rem so Streamlit's own elements scale with it. A constant: no user text here.
# The screen starts near the top: the header holds only the sidebar's button, left of the column, so it is made
# see-through and the column no longer starts under it; little room is kept below the last element.
LARGE_TYPE = """<style>
html { font-size: 20px; }
[data-testid="stMainBlockContainer"] { max-width: 1500px; padding-top: 1.25rem; padding-bottom: 1rem; }
[data-testid="stHeader"] { background: transparent; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li { font-size: 1.15rem; line-height: 1.4; }
h1 { font-size: 2.1rem !important; padding-bottom: 0.5rem !important; }
.katex { font-size: 1.1em; }
.katex-display { margin: 0.3em 0 !important; }
[data-testid="stMainBlockContainer"] [data-testid="stVerticalBlock"] { gap: 0.4rem !important; }
</style>"""
FIGURE_FONT = 18   # px: every text of a plotly figure in presentation mode, at least (ticks, axis names, notes)
FIGURE_TITLE_FONT = 22
FIGURE_HEIGHT = 480  # px at most, so that a screen's figure fits under its text
PLANE_TOP = 160  # px: enlarge's top margin for a two-line title over a legend in a row
TITLE_ROOM = 48  # px: enlarge's top margin for a one-line title
LEGEND_ROW = 35  # px: one row of a legend above the plot, at FIGURE_FONT
# px: the most a legend above the plot takes in one row; wider, plotly wraps it over the title's second line, so it
# is drawn one entry a row. A 1024-px projector's figures are wider.
LEGEND_WIDTH = 700
CHAR_EM = 0.6  # a character's width in em, at most (Arial, Helvetica: about 0.5 on average): the legend's estimate
# The most each screen's figure may take under its title, text and formula, so that the whole screen fits a
# 1280 x 800 projector without scrolling (tests/browser/test_lesson_fit.py measures it, with random weights and a
# trained model).
SCREEN_FIGURE_HEIGHT = {"tokens": 400, "heads": 260, "scores": 350, "softmax": 200, "mix": 395, "grid": 310,
                        "concat": 320, "w_o": 290, "cost": 260, "cache": 230, "plane": 285, "adds": 230,
                        "rollout": 255}


def requested() -> bool:
    """Whether the link asks for presentation mode (a value that is not on or off is explained by url.check)."""
    return "present" in st.query_params and url.parse("present", st.query_params["present"]) is True


def large_type() -> None:
    st.html(LARGE_TYPE)


def scroll_to_top(screen: int) -> None:
    """Show a new screen from its title: Streamlit keeps the scroll position of the screen before.

    The script is a constant but for the screen number, which makes each one a new element that runs again.
    """
    st.html(f'<script>/* screen {int(screen)} */ document.querySelector(\'[data-testid="stMain"]\')'
            "?.scrollTo({top: 0});</script>", unsafe_allow_javascript=True)


def figure_height(screen: str) -> int:
    """The most a figure may take on this screen (its name in mha_app.copy.lesson.SCREENS), in px."""
    return SCREEN_FIGURE_HEIGHT.get(screen, FIGURE_HEIGHT)


def enlarge(fig, height: int = FIGURE_HEIGHT) -> dict:
    """A figure (a figure dict, or a go.Figure, made one) with fonts large enough to read from the back of a room:
    the title FIGURE_TITLE_FONT px, every other text at least FIGURE_FONT px, and at most `height` px tall. Each
    axis, colour bar, note and cell's numbers gets its size written out: layout.font alone is not enough, as
    Streamlit's chart theme sizes the ticks and axis names itself (15 px at this page's type) and a figure sizes
    its notes and numbers itself."""
    if not isinstance(fig, dict):
        fig = fig.to_plotly_json()
    layout = fig["layout"]
    layout["height"] = min(layout.get("height") or height, height)
    layout["font"] = _sized(layout.get("font"))
    title = layout.setdefault("title", {})
    title["font"] = _sized(title.get("font"), FIGURE_TITLE_FONT)
    two_lines = SUBTITLE in title.get("text", "")
    title["text"] = title.get("text", "").replace(SUBTITLE, SUBTITLE.replace("12px", f"{FIGURE_FONT}px"))
    legend = layout.get("legend", {})
    # a legend in a row goes above the plot: under it, it ran into the ticks
    above = legend.get("orientation") == "h" and layout.get("showlegend", True)
    rows = _legend_rows(fig) if above else 0
    margin = layout.setdefault("margin", {})
    title_room = PLANE_TOP - LEGEND_ROW if two_lines else TITLE_ROOM
    margin["t"] = max(margin.get("t") or 0, title_room + LEGEND_ROW * rows)  # the title's lines, then the legend's
    if rows > 1:  # the title in the middle of its own room over the legend's rows, not of the whole margin (plotly's)
        title.update(yref="container", y=1 - title_room / 2 / layout["height"], yanchor="middle")
    _keys_in_two_lines(fig)
    _every_row(fig, height)
    for name, part in layout.items():
        if name.startswith(("xaxis", "yaxis")):
            part["tickfont"] = _sized(part.get("tickfont"))
            part["title"] = {**part.get("title", {}), "font": _sized(part.get("title", {}).get("font"))}
    bars = [part["colorbar"] for name, part in layout.items() if name.startswith("coloraxis") and "colorbar" in part]
    for bar in bars + [trace["colorbar"] for trace in fig["data"] if "colorbar" in trace]:
        bar["tickfont"] = _sized(bar.get("tickfont"))
        bar["title"] = {**bar.get("title", {}), "font": _sized(bar.get("title", {}).get("font"))}
    for note in layout.get("annotations", []):
        note["font"] = _sized(note.get("font"))
    if "legend" in layout:
        layout["legend"]["font"] = _sized(legend.get("font"))
        if above:
            layout["legend"].update(x=0, xanchor="left", y=1, yanchor="bottom", orientation="h" if rows == 1 else "v")
    for trace in fig["data"]:
        if "text" in trace or "texttemplate" in trace:
            trace["textfont"] = _sized(trace.get("textfont"))
        if trace.get("type") == "bar":
            trace["constraintext"] = "both"  # a number no larger than its bar: uniformtext below hides a shrunk one
    layout["uniformtext"] = dict(minsize=FIGURE_FONT, mode="hide")  # a number that fits a bar only when shrunk: hidden
    return fig


def _legend_rows(fig: dict) -> int:
    """The rows a legend above the plot takes: 1 where its entries fit LEGEND_WIDTH side by side (each a symbol of
    about 40 px and its name), else one row for each entry, as enlarge then draws it."""
    names = [re.sub(r"<[^>]+>", "", trace["name"]) for trace in fig["data"]
             if trace.get("name") and trace.get("showlegend", True) and trace.get("type", "scatter") != "heatmap"]
    width = sum(40 + CHAR_EM * FIGURE_FONT * len(name) for name in names)
    return 1 if width <= LEGEND_WIDTH else len(names)


ROW_PX = FIGURE_FONT  # a row of a matrix needs this much height to carry its own label
AXIS_ROOM = 90  # px under the plot for the keys' names (two lines, see _keys_in_two_lines) and the axis's title


def _every_row(fig: dict, height: int = FIGURE_HEIGHT) -> None:
    """Name every row of a matrix (plotly's automatic ticks skip rows when labels are large), growing the figure up
    to `height` to give each row ROW_PX; a matrix with more rows than that keeps plotly's thinned labels."""
    layout = fig["layout"]
    axes = {}
    for trace in fig["data"]:
        name = "yaxis" + trace.get("yaxis", "y")[1:]
        axis = layout.get(name, {})
        if trace.get("type") == "heatmap" and axis.get("type") == "category" and trace.get("y") is not None:
            low, high = axis.get("domain", [0, 1])
            axes[name] = layout["margin"]["t"] + AXIS_ROOM + len(trace["y"]) * ROW_PX / (high - low)  # px needed
    if axes and max(axes.values()) <= height:
        layout["height"] = max(layout["height"], int(max(axes.values())))
        for name in axes:
            layout[name].update(tickmode="linear", tick0=0, dtick=1)


TOKEN_LABEL = re.compile(r"\d+ ")  # a token's axis label, "7 because" (figures.base.token_labels)


NAME_LINE = 13  # characters: a bar's name longer than this is broken into lines ("SmolLM2-135M-<br>Instruct")


def _keys_in_two_lines(fig: dict) -> None:
    """Level names under a matrix or under bars, where tilted at the projector's size they take more height than the
    plot (and a long one runs past the figure's edge): a key's name ("7 because") in two lines, position over token;
    a bar's name (a model's) broken at its spaces and hyphens. Small multiples keep plotly's thinned, tilted names:
    a narrow panel has no room for every key's."""
    layout = fig["layout"]
    kinds = [trace.get("type", "scatter") for trace in fig["data"]]
    if kinds.count("heatmap") != 1 and not (kinds and set(kinds) == {"bar"}):
        return
    for trace in fig["data"]:
        axis = layout.get("xaxis" + trace.get("xaxis", "x")[1:], {})
        labels = trace.get("x")
        if trace.get("type") not in ("heatmap", "bar") or trace.get("orientation") == "h" or labels is None \
                or "ticktext" in axis or not all(isinstance(t, str) for t in labels):
            continue
        if all(TOKEN_LABEL.match(t) for t in labels):
            lines = [t.replace(" ", "<br>", 1) for t in labels]
        elif trace.get("type") == "bar":
            lines = [_in_lines(t) for t in labels]
        else:
            continue
        axis.update(type="category", tickmode="array", tickvals=list(labels), tickangle=0, ticktext=lines)


def _in_lines(name: str) -> str:
    """A name in lines of about NAME_LINE characters, broken after a space or a hyphen."""
    lines, line = [], ""
    for part in re.findall(r"[^ -]+-?|[ ]", name):
        if line and len((line + part).strip()) > NAME_LINE:
            lines.append(line.strip())
            line = ""
        line += part
    return "<br>".join(lines + [line.strip()])


def _sized(font: dict | None, size: int = FIGURE_FONT) -> dict:
    """A plotly font at least `size` px, its other settings (colour, family) kept."""
    font = dict(font or {})
    font["size"] = max(font.get("size") or 0, size)
    return font


def screen_url(settings: Settings, base: str, screen: int, n: int, present: bool = True) -> str:
    """The link that opens `screen` (1-based) of the lesson on this example (n query tokens), in presentation mode
    by default; its questions ask before their figures show, whatever this session's Ask before showing."""
    view = dataclasses.replace(settings.view, screen=screen, present=present, ask=True)
    return Settings(settings.spec, view).share_url(base, n)


def go_to(screen: int) -> None:
    """Button callback: show another screen; the link in the address bar follows."""
    st.query_params["screen"] = str(max(1, min(screen, len(SCREENS))))


def leave() -> None:
    """Button callback: back to the app with its sidebar and navigation."""
    st.query_params.pop("present", None)
