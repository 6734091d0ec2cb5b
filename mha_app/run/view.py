"""The settings and example of this run, left in the session by the frame (frame.sidebar.prepare) for the page."""

from __future__ import annotations

import streamlit as st

from mha_app.state.example import Example
from mha_app.state.settings import Settings


def view() -> tuple[Settings, Example]:
    """The settings and example of this run (set by app.py, through sidebar.prepare, before it runs the page)."""
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory or "view" not in st.session_state:
        # Streamlit's older multipage mode ran this page without app.py: it does so for a server's very first
        # request (and in every AppTest run) because a pages/ folder exists. st.navigation in app.py ends that
        # mode, so switch it off and run again, through app.py. The flag is the server's: when several first
        # requests come at once, another session may have switched it off already, hence the check for the view.
        PagesManager.uses_pages_directory = False
        st.rerun()
    return st.session_state.view
