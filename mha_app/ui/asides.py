"""The asides a step page offers, collapsed: the symbols it uses, the engine's code, the same example in PyTorch."""

from __future__ import annotations

import streamlit as st

from mha_app.copy.steps import CODE_NAMES
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
        st.markdown("\n".join(f"- ${s.latex}$: " + ("its meaning appears with the answer to the question above."
                                                    if s.latex in held else s.meaning) for s in entries))


def code_for_step(step: int, note: str = "") -> None:
    """The engine's real source lines for this step, and `note` on what they did in this example; while the page's
    question waits (hold_back), a line that says when they appear."""
    if st.session_state.get(WAITING):
        st.caption(":material/code: The code that computed this (mha_core/engine.py) appears once you answer or "
                   "reveal the question above.")
        return
    with st.expander("The code that computed this (mha_core/engine.py)", expanded=False):
        st.code(step_source(step), language="python", wrap_lines=True)
        st.caption(CODE_NAMES[step] + (f" {note}" if note else ""))


def reproduce_in_pytorch(settings: Settings) -> None:
    card = settings.spec.card
    with st.expander("Reproduce in PyTorch"):
        if card is not None and card.kind == "decoder":
            st.caption(f"Rebuilds layer {settings.view.layer} of {card.name} in PyTorch, from the input of that layer, "
                       "and prints the output shown here: RMSNorm, the projections, RoPE, then causal grouped-query "
                       "attention by F.scaled_dot_product_attention(is_causal=True, enable_gqa=True) and W_O. "
                       "torch.nn.MultiheadAttention cannot compute this layer: it has no shared key/value heads and "
                       "no RoPE.")
            st.code(torch_script(settings.spec, settings.view.layer), language="python", wrap_lines=True)
            return
        st.caption("Rebuilds this exact example in PyTorch and prints the output shown here: with "
                   "torch.nn.MultiheadAttention, or head by head with F.scaled_dot_product_attention where the module "
                   "lacks an option used here (grouped-query heads, a head mask, another scale).")
        st.code(torch_script(settings.spec, settings.view.layer), language="python", wrap_lines=True)
        st.caption("`mha` is PyTorch's own layer, given the same weights; its `in_proj_weight` is W_Q, W_K and W_V "
                   "stacked. `attn_mask` and `key_padding_mask` are True where a pair or a key is blocked.")
