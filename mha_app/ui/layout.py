"""Page layout pieces: lazy tabs and expanders, a table's height, a zoom window's start, the link to the next
step."""

from __future__ import annotations

import streamlit as st

from mha_app.copy.notes import zoom_moved
from mha_app.run.view import view
from mha_app.state.settings import control
from mha_app.ui import widgets
from mha_core import figures

ROW_PX = 35  # Streamlit's height of a table row, and of its header


def tabs(labels: list[str], key: str) -> list:
    """st.tabs whose hidden tabs compute nothing: put a tab's content under `if tab.open:`. Choosing a tab reruns
    the page (Streamlit's lazy tabs), so a first load and every change compute and draw the open tab alone."""
    return st.tabs(labels, key=key, on_change="rerun")


# A View field that holds which tab is open, and the key of the tabs that show it (their label, in session_state).
TABS = {"tab": "attention_tab"}


def setting_tabs(name: str, keys: list[str]) -> list:
    """Lazy tabs (see tabs) for the choices `keys` of the View field `name` (TABS) that this page offers, labelled
    as the field labels them. The view's tab opens first (a link's); one this page lacks opens the first; the link
    follows the tab that is open."""
    c, key = control(name), TABS[name]
    labels = [c.label_of(k) for k in keys]
    if st.session_state.get(key) not in labels:
        wanted = c.label_of(getattr(view()[0].view, name))
        st.session_state[key] = wanted if wanted in labels else labels[0]
    shown = tabs(labels, key)
    widgets.follow(name, c.choice(st.session_state[key]))
    return shown


def expander(label: str, key: str, container=st, **kwargs):
    """A collapsed st.expander whose content is computed only while it is open: put it under `if box.open:`.
    Opening it reruns the page (Streamlit's lazy expanders)."""
    return container.expander(label, key=key, on_change="rerun", **kwargs)


def table_height(rows: int, cap: int | None = None) -> int:
    """The height of an st.dataframe that shows its header and `rows` rows without a scroll bar (3 px for its
    border), at most `cap` px: a longer table scrolls."""
    height = ROW_PX * (rows + 1) + 3
    return height if cap is None else min(cap, height)


def zoom_start(container, name: str, count: int) -> int:
    """A zoom window's first row or column (zoom_query, zoom_key), 1..count, bound to the URL; a value past the last
    row or column (a shorter text since) moves to the last one."""
    wanted = st.session_state.get(name) or int(st.query_params.get(name, 1))  # the link's (checked), on a first run
    if wanted > count:
        st.session_state[name] = count
        container.info(zoom_moved(wanted, count))
    return widgets.number(container, name, 1, count, step=figures.ZOOM)


def next_step(page: str, label: str) -> None:
    st.divider()
    st.page_link(page, label=f"Next: {label} →", icon=":material/arrow_forward:")
