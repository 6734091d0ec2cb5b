"""Model view: every head of the pretrained model on one sentence; pick one to step through."""

import streamlit as st

from mha_app import experiments
from mha_app.toolkit import needs_pretrained, open_head_in_step_through, plot, view
from mha_core import figures

settings, ex = view()
card = settings.spec.card
st.title(f"Model view: all {card.n_layers * card.n_heads} heads" if card else "Model view: every head of a model")
run = needs_pretrained(ex)
n_layers, n_heads = len(run.layers), ex.cfg.n_heads
st.markdown(
    f"A trained transformer runs attention {n_layers} times, once per layer, each time with {n_heads} heads. Below, "
    "each small square is one head's attention weights on your sentence (rows: the token that asks, columns: the "
    "token it looks at; darker = more weight). Trained heads are far from random: look for diagonal stripes "
    "(attend to the previous or next token), dark first or last columns (the attention parked on [CLS] or "
    "[SEP]), and scattered spots that link related words. Hover over a square for its tokens and numbers, or see "
    "one layer large, with its tokens, below."
)
experiments.model_ablation_note(settings)
layer, head = settings.view.layer, settings.view.head
plot(figures.model_grid_figure(run.attentions, run.tokens, selected=(layer - 1, head - 1)), key="grid")
st.caption(f"Outlined in red: layer {layer}, head {head}, the one the step-through pages show.")

st.subheader(f"Layer {layer}, large")
st.caption("The layer chosen in the sidebar (or below), with its tokens on the axes: big enough for a projector.")
plot(figures.head_grid_figure(run.layers[layer - 1], run.tokens, cols=3, panel_height=330,
                              title=f"Layer {layer}: all {n_heads} heads (rows: queries, columns: keys)"),
     key="layer_grid")
open_head_in_step_through(n_layers, n_heads, settings)
