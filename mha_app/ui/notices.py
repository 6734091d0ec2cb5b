"""Notices about the weights on view: random weights, a trained model needed, how its tokens spell a space."""

from __future__ import annotations

import streamlit as st

from mha_app.copy.models import spelling_note
from mha_app.copy.notes import NEEDS_TRAINED, offer_line, switch_label, untrained_line
from mha_app.state.example import Example
from mha_app.state.settings import MODELS, PRETRAINED, Settings, Spec


def untrained_note(settings: Settings) -> None:
    """untrained_line in one caption, beside a button that switches to the trained model."""
    text = untrained_line(settings.spec)
    if not text:
        return
    trained = MODELS[1]
    left, right = st.columns([4, 1], vertical_alignment="center")
    left.caption(f":material/casino: {text}")
    right.button(switch_label(trained), on_click=_switch_to, args=(trained,), key="switch_to_trained",
                 type="tertiary")


def token_spelling(spec: Spec) -> None:
    """How the tokens on the page spell a space (Ġ) and a new line, for a model that needs it: a page calls this
    where its tokens first appear."""
    note = spelling_note(spec)
    if note:
        st.caption(f":material/space_bar: {note}")


def offer_trained(why: str, sidebar: bool = True) -> None:
    """`why` a trained model is needed, how to choose one, and a button for each installed one. sidebar=False: the
    sidebar is hidden (presentation mode), so only the buttons are offered."""
    trained = _trained()
    st.info(offer_line(why, [(name, PRETRAINED[name].kind) for name in trained], sidebar))
    switch_buttons()


def switch_buttons() -> None:
    """A button for each installed trained model that switches the weights to it (where the sidebar is hidden, the
    way to another model)."""
    for i, name in enumerate(_trained()):
        st.button(switch_label(name), on_click=_switch_to, args=(name,), type="primary" if not i else "secondary",
                  key=f"switch_{i}")


def _trained() -> list[str]:
    """The trained models that are installed; the first one when none is (its button then says how to install it)."""
    return [name for name in MODELS[1:] if PRETRAINED[name].installed()] or [MODELS[1]]


def needs_pretrained(example: Example):
    """The example's run of a trained model; with random weights, say how to switch and stop the page."""
    if example.run is None:
        offer_trained(NEEDS_TRAINED)
        st.stop()
    for note in example.notes:
        st.info(note)
    return example.run


def _switch_to(model: str) -> None:
    st.session_state.model = model
