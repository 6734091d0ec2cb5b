"""The theme the page is shown in (light or dark), for the charts, and a rerun when it changes.

Streamlit says the theme in st.context.theme.type, read from the page's background colour with each rerun. It
does not rerun when the theme changes (its settings menu, or the system's dark mode): in Streamlit 1.67 the page
turns dark at once but the script does not run, so charts would keep the old theme's colours until the next click
(streamlit/streamlit#11920, #15287). `follow` mounts a small component that watches the page's background and asks
for one rerun when the theme it sees differs from the one the charts were drawn in.
"""

from __future__ import annotations

import streamlit as st

from mha_core.figures.base import MORE_LOOKS

# Trusted code, a constant: no user text reaches it. The page's background is dark when its luminance (Rec. 709
# weights, 0..255) is below the middle, as Streamlit decides. One request per theme seen (window.mhaThemeAsked):
# a remount with the previous run's data must not ask again.
WATCH_JS = """
export default function ({ data, setTriggerValue }) {
  const seen = () => {
    const app = document.querySelector(".stApp") || document.body;
    const [r, g, b] = getComputedStyle(app).backgroundColor.match(/[\\d.]+/g).map(Number);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b < 128 ? "dark" : "light";
  };
  const check = () => {
    const now = seen();
    if (now !== data.drawn && now !== window.mhaThemeAsked) {
      window.mhaThemeAsked = now;
      setTriggerValue("switched", now);
    }
  };
  const timer = setInterval(check, 300);
  return () => clearInterval(timer);
}
"""
# Streamlit writes a primary button's label in white in either theme. White cannot reach 4.5:1 on any accent that
# itself reaches 4.5:1 on the dark background (the two ratios multiply to at most white-on-background, 18.9 < 4.5²),
# so in the dark theme the label takes the background's colour instead: 6.4:1 on primaryColor (config.toml).
PRIMARY_LABEL = {"light": "#ffffff", "dark": "#0e1117"}
DARK_BUTTONS = ('<style>[data-testid^="stBaseButton-primary"], [data-testid^="stBaseButton-primary"] * '
                f'{{ color: {PRIMARY_LABEL["dark"]} !important; }}</style>')
_watch = None


def current() -> str:
    """"light" or "dark": the theme Streamlit reported with this rerun; light when it has not said (in a test run)."""
    return "dark" if st.context.theme.type == "dark" else "light"


def more_looks() -> tuple[str, str]:
    """How more weight looks in this theme, in words (adjective, comparative): ("dark", "darker") on the light page,
    ("bright", "brighter") on the dark one (figures.base.MORE_LOOKS); follow() reruns the page when the theme changes,
    so the sentences change with the charts."""
    return MORE_LOOKS[current()]


def follow() -> None:
    """Rerun once whenever the page's theme changes, so the charts are drawn again in its colours (in the sidebar,
    where a zero-height element leaves no gap); in the dark theme, primary buttons' labels in a colour that reads."""
    global _watch
    if _watch is None:  # registered once per server process: Streamlit warns about a second registration
        _watch = st.components.v2.component("mha_viz.theme_watch", js=WATCH_JS)
    with st.sidebar:
        _watch(data={"drawn": current()}, key="theme_watch", on_switched_change=_switched, height=0)
        if current() == "dark":
            st.html(DARK_BUTTONS)  # a constant: no user text


def _switched() -> None:
    """The component's request: nothing to do but the rerun it causes (st.context then has the new theme)."""
