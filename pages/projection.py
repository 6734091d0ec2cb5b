"""Step 1: project X into queries, keys and values, one d_k-wide slice per head."""

import streamlit as st

from mha_app.copy.models import input_source
from mha_app.copy.notes import bias_note
from mha_app.copy.steps import INPUT_X_TITLE, INPUT_Y_TITLE, projection_caption, projection_code_note, projection_intro
from mha_app.run.view import view
from mha_app.sections import decoder, experiments
from mha_app.ui.asides import code_for_step, symbols
from mha_app.ui.charts import plot
from mha_app.ui.layout import expander, next_step, tabs
from mha_app.ui.notices import token_spelling, untrained_note
from mha_app.ui.questions import predict
from mha_core import figures
from mha_core.teaching import formulas, notation

settings, ex = view()
tr, cfg, w = ex.trace, ex.cfg, ex.weights
n, d_model, h, d_k = len(ex.tokens), cfg.d_model, cfg.n_heads, cfg.d_k
kv, g, cross = cfg.kv_heads, cfg.group_size, ex.key_tokens is not None
Y, m = ("Y", len(ex.keys)) if cross else ("X", n)
j = "i" if kv == h else "j"

st.title("Step 1 · Project the input into Q, K and V for every head")
st.markdown(projection_intro(d_model, h, d_k, kv, cross, m, rope=cfg.rope_theta is not None))
experiments.heads_off_caption(settings, "queries, keys and values")
if predict("q_shape"):
    shown = tabs(["W_Q → Q_i", f"W_K → K_{j}", f"W_V → V_{j}"], key="projection_tab")
    for tab, name, W, per_head in zip(shown, "QKV", (w.W_Q, w.W_K, w.W_V), (tr.q, tr.k, tr.v), strict=True):
        with tab:
            if not tab.open:
                continue
            left, right = st.columns(2)
            with left:
                plot(figures.projection_weight_figure(W, per_head.shape[0], f"W_{name}", g, kv=name != "Q"),
                     key=f"W_{name}")
            with right:
                plot(figures.per_head_figure(per_head, ex.tokens if name == "Q" else ex.keys, name, group_size=g,
                                             kv=name != "Q"), key=f"{name}_heads")
    st.latex(formulas.projection(cfg, cross))
    st.latex(r"X \in \mathbb{R}^{%d\times%d},\quad W^Q_i, W^K_%s, W^V_%s \in \mathbb{R}^{%d\times%d},\quad "
             r"Q_i \in \mathbb{R}^{%d\times%d},\quad K_%s, V_%s \in \mathbb{R}^{%d\times%d}"
             % (n, d_model, j, j, d_model, d_k, n, d_k, j, j, m, d_k)
             + (r",\quad Y \in \mathbb{R}^{%d\times%d}" % (m, d_model) if cross else ""))
    if kv != h:
        st.caption(notation.kv_head_rule(h, g))
    st.caption(projection_caption(bias_note(ex), cfg.bias))
untrained_note(settings)
token_spelling(settings.spec)
symbols("X", *(["Y", "m"] if cross else []), "n", "d_{model}", "h", "i", "d_k", "d_v", "d", "c",
        *notation.head_symbols(g),
        *(["h_{kv}", "g", "j"] if kv != h else []), *(["b"] if cfg.bias else []),
        *(["p"] if cfg.rope_theta else []))

with (box := expander("The input X: where its rows come from", key="input_box")):
    if box.open:
        st.caption(input_source(settings.spec, ex.layer))
        plot(figures.input_figure(tr.x, ex.tokens, **({"title": INPUT_X_TITLE} if cross
                                                      else {})), key="X")
        if cross:
            plot(figures.input_figure(tr.x_kv, ex.keys, title=INPUT_Y_TITLE), key="Y")
experiments.cross_attention_note(ex)
if kv != h:
    with (box := expander("Grouped-query attention: query heads share keys and values", key="kv_box")):
        if box.open:
            experiments.kv_sharing(ex)
decoder.rope_section(settings, ex)
code_for_step(1, projection_code_note(cross, cfg.rope_theta))
next_step("pages/attention.py", "Step 2: attention per head")
