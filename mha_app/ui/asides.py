"""The asides a step page offers, collapsed: the symbols it uses, the engine's code, the same example in PyTorch."""

from __future__ import annotations

import streamlit as st

from mha_app.copy.asides import (
    CODE_TITLE,
    CODE_WAITS,
    HELD_MEANING,
    PYTORCH_MODULE,
    PYTORCH_NAMES,
    PYTORCH_TITLE,
    code_caption,
    pytorch_decoder,
)
from mha_app.state.settings import Settings
from mha_app.state.snippets import torch_script
from mha_app.ui.questions import HELD, WAITING
from mha_core.teaching import notation
from mha_core.teaching.source import step_source


def symbols(*names: str | notation.Symbol, container=st) -> None:
    """'Symbols on this page': each symbol the page uses, with its one meaning in the whole app (teaching.notation;
    a Symbol itself where the meaning follows the example, as notation.score_symbol), and every symbol those
    meanings write (notation.complete). A symbol that gives away the answer to the page's waiting question is
    listed without its meaning until the student answers or reveals it."""
    shown = st.session_state.get("view")  # (settings, example) of the page: z_ts with the scale this example used
    variants = {} if shown is None else {"z_{ts}": notation.score_symbol(shown[1].cfg.scale)}
    entries = notation.complete([notation.symbol(s) if isinstance(s, str) else s for s in names], variants)
    held = st.session_state.get(HELD, set())
    with container.expander("Symbols on this page", icon=":material/function:"):
        st.markdown("\n".join(f"- ${s.latex}$: " + (HELD_MEANING if s.latex in held else s.meaning)
                               for s in entries))


def code_for_step(step: int, note: str = "") -> None:
    """The engine's real source lines for this step, and `note` on what they did in this example; while the page's
    question waits (hold_back), a line that says when they appear."""
    if st.session_state.get(WAITING):
        st.caption(f":material/code: {CODE_WAITS}")
        return
    with st.expander(CODE_TITLE, expanded=False):
        st.code(step_source(step), language="python", wrap_lines=True)
        st.caption(code_caption(step, note))


def reproduce_in_pytorch(settings: Settings) -> None:
    card = settings.spec.card
    with st.expander(PYTORCH_TITLE):
        if card is not None and card.kind == "decoder":
            st.caption(pytorch_decoder(settings.view.layer, card.name))
            st.code(torch_script(settings.spec, settings.view.layer), language="python", wrap_lines=True)
            return
        st.caption(PYTORCH_MODULE)
        st.code(torch_script(settings.spec, settings.view.layer), language="python", wrap_lines=True)
        st.caption(PYTORCH_NAMES)
