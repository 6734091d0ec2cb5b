"""Model view: every head of the pretrained model on one sentence; pick one to step through."""

import streamlit as st

from mha_app.copy.models import (
    how_pages_count,
    layer_grid_title,
    layer_large_caption,
    model_view_intro,
    model_view_title,
    outlined_caption,
)
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
st.title(model_view_title(card.n_layers * card.n_heads if card else None))
run = needs_pretrained(ex)
n_layers, n_heads, g = len(run.layers), ex.cfg.n_heads, ex.cfg.group_size
dark, darker = theme.more_looks()  # the words for more weight in this theme's colours
st.markdown(model_view_intro(card.name, n_layers, n_heads, ex.cfg.kv_heads, dark, darker))
token_spelling(settings.spec)
experiments.model_ablation_note(settings)
layer, head = settings.view.layer, settings.view.head
plot(figures.model_grid_figure(run.attentions, run.tokens, selected=(layer - 1, head - 1), group_size=g,
                               mask=run.layers[0].mask), key="grid")
st.caption(outlined_caption(layer, head, how_pages_count(parts_for(compute.pretrained_model(settings.spec.model)),
                                                         "model view")))

st.header(f"Layer {layer}, large")
st.caption(layer_large_caption(g, figures.group_rows(g)))
plot(figures.head_grid_figure(run.layers[layer - 1], run.tokens, cols=g if figures.group_rows(g) else 3,
                              panel_height=330, group_size=g,
                              title=layer_grid_title(layer, n_heads)),
     key="layer_grid")
inside.attention_rollout(settings, ex)
open_head_in_step_through(n_layers, n_heads, settings)
