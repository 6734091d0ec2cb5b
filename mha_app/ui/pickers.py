"""Pickers of a head, a cell or a page setting, bound to the sidebar's selection and the link."""

from __future__ import annotations

import streamlit as st

from mha_app.copy.attention import STEP_THROUGH, step_through_link
from mha_app.state.example import Example
from mha_app.state.settings import Settings, control
from mha_app.ui import widgets


def _pick_head() -> None:
    """Copy the page's layer/head pickers into the sidebar's (URL-bound) selection."""
    st.session_state.layer = st.session_state.pick_layer
    st.session_state.head = st.session_state.pick_head


def open_head_in_step_through(n_layers: int, n_heads: int, settings: Settings) -> None:
    """Layer and head pickers (they move the sidebar's selection), and a link to that head's attention page."""
    st.header(STEP_THROUGH)
    left, middle, right = st.columns([1, 1, 2], vertical_alignment="bottom")
    layer, head = settings.view.layer, settings.view.head
    left.selectbox("Layer", list(range(1, n_layers + 1)), index=layer - 1, key="pick_layer", on_change=_pick_head)
    middle.selectbox("Head", list(range(1, n_heads + 1)), index=head - 1, key="pick_head", on_change=_pick_head)
    with right:
        st.page_link("pages/attention.py", label=step_through_link(layer, head), icon=":material/open_in_new:")


def _copy(source: str, target: str) -> None:
    st.session_state[target] = st.session_state[source]


def _key_to_link() -> None:
    st.query_params["key"] = str(st.session_state.cell_key)


def pick_cell(settings: Settings, ex: Example) -> tuple[int, int, int]:
    """Head, query and key pickers side by side, 0-based result. Head and query move the sidebar's selection; the key
    goes to the link by its callback (a selectbox bound to the link would write the token's text there)."""
    h, n, m = ex.trace.weights.shape
    names = [f"{i + 1} · {token}" for i, token in enumerate(ex.tokens)]  # selectbox options are plain text
    key_names = [f"{j + 1} · {token}" for j, token in enumerate(ex.keys)]
    if settings.view.key > m:
        st.query_params["key"] = str(m)
    st.session_state.cell_head, st.session_state.cell_query = settings.view.head, settings.view.query
    st.session_state.cell_key = min(settings.view.key, m)
    left, middle, right = st.columns(3)
    head = left.selectbox("Head", list(range(1, h + 1)), key="cell_head", on_change=_copy, args=("cell_head", "head"))
    query = middle.selectbox(control("query").label, list(range(1, n + 1)), key="cell_query",
                             format_func=lambda i: names[i - 1], on_change=_copy, args=("cell_query", "query"))
    key = right.selectbox(control("key").label, list(range(1, m + 1)), key="cell_key",
                          format_func=lambda j: key_names[j - 1], on_change=_key_to_link, help=control("key").help)
    return head - 1, query - 1, key - 1


def setting_widget(name: str, container=st):
    """The widget of a page setting (a number or a choice), made from its field and kept in the link."""
    return widgets.choice(container, name) if control(name).choices else widgets.number(container, name)
