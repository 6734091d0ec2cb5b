"""Model view: every head of the pretrained model on one sentence; pick one to step through."""

import streamlit as st

from mha_app.copy.models import how_pages_count, model_text
from mha_app.run import compute, theme
from mha_app.run.view import view
from mha_app.sections import experiments, inside
from mha_app.ui.charts import plot
from mha_app.ui.notices import needs_pretrained, token_spelling
from mha_app.ui.pickers import open_head_in_step_through
from mha_core import figures
from mha_core.analysis.head_stats import parts_for

settings, ex = view()
card = settings.spec.card
st.title(f"Model view: all {card.n_layers * card.n_heads} heads" if card else "Model view: every head of a model")
run = needs_pretrained(ex)
n_layers, n_heads, g = len(run.layers), ex.cfg.n_heads, ex.cfg.group_size
shared = (f" (here {n_heads} query heads share {ex.cfg.kv_heads} key/value heads: the heads of one group stand "
          "together, under a label that names their K/V head)" if g > 1 else "")
dark, darker = theme.more_looks()  # the words for more weight in this theme's colours
st.markdown(
    f"A trained transformer runs attention {n_layers} times, once per layer, each time with {n_heads} heads{shared}. "
    "Below, each small square is one head's attention weights on your text (rows: the token that asks, columns: "
    f"the token it looks at; {darker} = more weight). Training decides where each head's weight goes: "
    f"{model_text(card.name).patterns.format(dark=dark)}. Hover over a square for its tokens and numbers, or see one "
    "layer large, with its tokens, below."
)
token_spelling(settings.spec)
experiments.model_ablation_note(settings)
layer, head = settings.view.layer, settings.view.head
plot(figures.model_grid_figure(run.attentions, run.tokens, selected=(layer - 1, head - 1), group_size=g,
                               mask=run.layers[0].mask), key="grid")
st.caption(f"Outlined: layer {layer}, head {head}, the one the step-through pages show. "
           + how_pages_count(parts_for(compute.pretrained_model(settings.spec.model)), "model view"))

st.header(f"Layer {layer}, large")
st.caption("The layer chosen in the sidebar (or below), with its tokens on the axes: big enough for a projector."
           + (f" Each row of panels is one key/value group of {g} query heads." if figures.group_rows(g) else ""))
plot(figures.head_grid_figure(run.layers[layer - 1], run.tokens, cols=g if figures.group_rows(g) else 3,
                              panel_height=330, group_size=g,
                              title=f"Layer {layer}: all {n_heads} heads (rows: queries, columns: keys)"),
     key="layer_grid")
inside.attention_rollout(settings, ex)
open_head_in_step_through(n_layers, n_heads, settings)
