"""Step 4: W_O mixes the heads back into d_model dimensions."""

import numpy as np
import streamlit as st

from mha_app.copy.notes import bias_note
from mha_app.copy.steps import contributions_check, output_intro
from mha_app.run.view import view
from mha_app.sections import decoder, experiments
from mha_app.ui.asides import code_for_step, reproduce_in_pytorch, symbols
from mha_app.ui.charts import plot
from mha_app.ui.layout import expander, next_step
from mha_app.ui.notices import token_spelling, untrained_note
from mha_app.ui.questions import predict
from mha_core import figures
from mha_core.analysis.decompose import head_contributions
from mha_core.teaching import formulas

settings, ex = view()
tr, cfg, w = ex.trace, ex.cfg, ex.weights
n, h, d_v, d_model = tr.heads.shape[1], cfg.n_heads, cfg.d_k, cfg.d_model

st.title("Step 4 · Project back to d_model with W_O")
st.markdown(output_intro(d_v, cfg.bias))
revealed = predict("w_o_size")
if revealed:
    contributions = head_contributions(tr, w)
    left, right = st.columns(2)
    with left:
        plot(figures.output_weight_figure(w.W_O, h), key="W_O")
    with right:
        plot(figures.contribution_size_figure(contributions), key="sizes")
    # the shapes on a line of their own: on one line the formula is wider than the column at 1280 px, and a
    # formula that scrolls sideways cannot be scrolled with the keyboard
    shapes = rf"W^O \in \mathbb{{R}}^{{{h * d_v}\times{d_model}}},\quad W^O_i \in \mathbb{{R}}^{{{d_v}\times{d_model}}}"
    st.latex(rf"\begin{{gathered}}{formulas.output(cfg, tr.head_mask)}\\ {shapes}\end{{gathered}}")
    st.caption(bias_note(ex))
untrained_note(settings)
token_spelling(settings.spec)
symbols("W^O", "\\mathrm{head}_i", "h", "i", "d_v", "d_{model}", "c", "d", *(["b"] if cfg.bias else []))

if revealed:
    with (box := expander("What each head adds, and the output", key="contributions_box")):
        if box.open:
            plot(figures.contributions_figure(contributions, tr.output, ex.tokens, bias=cfg.bias), key="contrib")
            bias = 0 if w.b_O is None else w.b_O
            gap = float(np.abs(contributions.sum(axis=0) + bias - tr.output).max())
            st.caption(contributions_check(gap, cfg.bias))
            plot(figures.input_output_figure(tr.x, tr.output, ex.tokens, ex.key_tokens is not None), key="io")
decoder.next_token_section(settings, ex, "The model's prediction for the next token")
experiments.ablation_results(settings, ex)
experiments.model_effects(settings, ex)
code_for_step(4)
reproduce_in_pytorch(settings)
next_step("pages/lesson.py", "the whole story again, screen by screen: the lesson")
