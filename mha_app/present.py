"""Presentation mode (present=1 in the link): large type, the sidebar collapsed, no top navigation, and the lesson
(pages/lesson.py) one screen at a time, each screen its own link (screen=N).

app.py reads the link before anything else (st.set_page_config collapses the sidebar only there); the link's
values are checked later, with every other setting, by url.check.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from . import url
from .lesson import SCREENS
from .settings import Settings

LESSON_SCRIPT = "pages/lesson.py"

# Large type for a projector, sized in rem so Streamlit's own elements scale with it. A constant: no user text here.
LARGE_TYPE = """<style>
html { font-size: 22px; }
[data-testid="stMainBlockContainer"] { max-width: 1500px; padding-top: 4rem; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li { font-size: 1.1rem; line-height: 1.45; }
h1 { font-size: 2.1rem !important; padding-bottom: 0.5rem !important; }
.katex { font-size: 1.25em; }
</style>"""
FIGURE_FONT = 18   # plotly figures in presentation mode
FIGURE_TITLE_FONT = 22
FIGURE_HEIGHT = 480  # px at most, so that a screen's figure fits under its text


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


def enlarge(fig):
    """A figure (a figure dict or a go.Figure, which it returns) with fonts large enough to read from the back of a
    room."""
    if not isinstance(fig, dict):
        height = min(fig.layout.height or FIGURE_HEIGHT, FIGURE_HEIGHT)
        return fig.update_layout(font_size=FIGURE_FONT, title_font_size=FIGURE_TITLE_FONT, height=height)
    layout = fig["layout"]
    layout["height"] = min(layout.get("height") or FIGURE_HEIGHT, FIGURE_HEIGHT)
    layout["font"] = {**layout.get("font", {}), "size": FIGURE_FONT}
    title = layout.setdefault("title", {})
    title["font"] = {**title.get("font", {}), "size": FIGURE_TITLE_FONT}
    return fig


def screen_url(settings: Settings, base: str, screen: int, n: int, present: bool = True) -> str:
    """The link that opens `screen` (1-based) of the lesson on this example (n query tokens), in presentation mode
    by default."""
    view = dataclasses.replace(settings.view, screen=screen, present=present)
    return Settings(settings.spec, view).share_url(base, n)


def go_to(screen: int) -> None:
    """Button callback: show another screen; the link in the address bar follows."""
    st.query_params["screen"] = str(max(1, min(screen, len(SCREENS))))


def leave() -> None:
    """Button callback: back to the app with its sidebar and navigation."""
    st.query_params.pop("present", None)
