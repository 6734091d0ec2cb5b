"""Step 1: project X into queries, keys and values, one d_k-wide slice per head."""

import streamlit as st

from mha_app.classroom import predict
from mha_app.toolkit import code_for_step, next_step, plot, view
from mha_core import figures

settings, ex = view()
tr, cfg, w = ex.trace, ex.cfg, ex.weights
n, d_model, h, d_k = len(ex.tokens), cfg.d_model, cfg.n_heads, cfg.d_k

st.title("Step 1 · Project the input into Q, K and V for every head")
predict("q_shape")
st.markdown(
    f"Each of the **{n}** tokens is a row of X with **{d_model}** numbers. Three learned matrices turn X into "
    "queries (what a token is looking for), keys (what a token offers to be found by) and values (what it passes "
    f"on once found). Every matrix has **h · d_k = {h} · {d_k} = {h * d_k}** columns, and head *i* owns its own "
    f"block of **{d_k}** columns: the same input, {h} different views of it."
)
st.latex(r"Q_i = X\,W^Q_i + b^Q_i,\quad K_i = X\,W^K_i + b^K_i,\quad V_i = X\,W^V_i + b^V_i")
st.latex(r"X \in \mathbb{R}^{%d\times%d},\quad W^Q_i, W^K_i, W^V_i \in \mathbb{R}^{%d\times%d},\quad "
         r"Q_i, K_i, V_i \in \mathbb{R}^{%d\times%d}" % (n, d_model, d_model, d_k, n, d_k))
st.caption("PyTorch stores each matrix transposed, as (out_features, in_features), and computes x @ W.T + b; "
           "the figures show W the way the formula uses it.")

plot(figures.input_figure(tr.x, ex.tokens))
tabs = st.tabs(["W_Q → Q_i", "W_K → K_i", "W_V → V_i"])
for tab, name, W, per_head in zip(tabs, "QKV", (w.W_Q, w.W_K, w.W_V), (tr.q, tr.k, tr.v), strict=True):
    with tab:
        plot(figures.projection_weight_figure(W, per_head.shape[0], f"W_{name}"), key=f"W_{name}")
        plot(figures.per_head_figure(per_head, ex.tokens, name), key=f"{name}_heads")
code_for_step(1)
next_step("pages/attention.py", "Step 2: attention per head")
