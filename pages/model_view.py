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
    "(attend to the previous or next token), bright first or last columns (park the attention on [CLS] or "
    "[SEP]), and scattered spots that link related words."
)
experiments.model_ablation_note(settings)
layer, head = settings.view.layer, settings.view.head
plot(figures.model_grid_figure(run.attentions, run.tokens, selected=(layer - 1, head - 1)), key="grid")
st.caption(f"Outlined in red: layer {layer}, head {head}, the one the step-through pages show.")
open_head_in_step_through(n_layers, n_heads, settings)
