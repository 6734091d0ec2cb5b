"""What pages call: the settings and example of this run, and small layout helpers shared by the pages."""

from __future__ import annotations

import streamlit as st

from mha_core.source import step_source

from .example import Example
from .settings import MODELS, Settings
from .snippets import torch_script

BIND = "query-params"  # every control's value lives in the URL


def view() -> tuple[Settings, Example]:
    """The settings and example of this run (set by app.py, through sidebar.prepare, before it runs the page)."""
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        # Streamlit's older multipage mode ran this page without app.py: it does so for a server's very first
        # request (and in every AppTest run) because a pages/ folder exists. st.navigation in app.py ends that
        # mode, so switch it off and run again, through app.py.
        PagesManager.uses_pages_directory = False
        st.rerun()
    return st.session_state.view


def plot(fig, key: str | None = None) -> None:
    st.plotly_chart(fig, width="stretch", key=key, config={"displaylogo": False, "toImageButtonOptions": {
        "format": "png", "scale": 2}})


def code_for_step(step: int) -> None:
    """The engine's real source lines for this step."""
    with st.expander("The code that computed this (mha_core/engine.py)", expanded=False):
        st.code(step_source(step), language="python")


def next_step(page: str, label: str) -> None:
    st.divider()
    st.page_link(page, label=f"Next: {label} →", icon=":material/arrow_forward:")


def reproduce_in_pytorch(settings: Settings) -> None:
    with st.expander("Reproduce in PyTorch"):
        st.caption("Rebuilds this exact example in PyTorch and prints the output shown here: with "
                   "torch.nn.MultiheadAttention, or head by head with F.scaled_dot_product_attention where the module "
                   "lacks an option used here (grouped-query heads, a head mask, another scale).")
        st.code(torch_script(settings.spec, settings.view.layer), language="python")


def needs_pretrained(example: Example):
    """The example's run of a trained model; with random weights, say how to switch and stop the page."""
    if example.run is None:
        trained = MODELS[1]
        st.info(f"This page shows a trained model. Choose **{trained}** under *Weights* in the sidebar, "
                "or use the button.")
        st.button(f"Switch to {trained}", on_click=_switch_to, args=(trained,), type="primary")
        st.stop()
    for note in example.notes:
        st.info(note)
    return example.run


def _switch_to(model: str) -> None:
    st.session_state.model = model


def _pick_head() -> None:
    """Copy the page's layer/head pickers into the sidebar's (URL-bound) selection."""
    st.session_state.layer = st.session_state.pick_layer
    st.session_state.head = st.session_state.pick_head


def open_head_in_step_through(n_layers: int, n_heads: int, settings: Settings) -> None:
    """Layer and head pickers (they move the sidebar's selection), and a link to that head's attention page."""
    st.subheader("Open one head in the step-through")
    left, middle, right = st.columns([1, 1, 2], vertical_alignment="bottom")
    layer, head = settings.view.layer, settings.view.head
    left.selectbox("Layer", list(range(1, n_layers + 1)), index=layer - 1, key="pick_layer", on_change=_pick_head)
    middle.selectbox("Head", list(range(1, n_heads + 1)), index=head - 1, key="pick_head", on_change=_pick_head)
    with right:
        st.page_link("pages/attention.py", label=f"Step through layer {layer}, head {head}",
                     icon=":material/open_in_new:")
