"""Step 2: scaled dot-product attention in every head: scores, scale, mask, softmax, mixing the values."""

import streamlit as st

from mha_app import experiments
from mha_app.classroom import predict
from mha_app.settings import STAGES, View
from mha_app.toolkit import BIND, code_for_step, next_step, plot, view
from mha_core import figures

settings, ex = view()
tr, cfg = ex.trace, ex.cfg
n, m = tr.weights.shape[1:]
head, query = settings.view.head - 1, settings.view.query - 1
blocked = int(tr.mask[0].sum()) if tr.mask is not None else 0
unscaled = cfg.scale == 1.0

st.title("Step 2 · Scaled dot-product attention, in every head")
st.markdown(
    "Each head compares every query with every key by a dot product: a large score means a good match. "
    + ("Here the scaling is switched off (scale = 1): the raw scores go to softmax as they are; the comparison "
       "below shows what 1/√d_k would change. " if unscaled else
       f"Scores are multiplied by **1/√d_k = 1/√{cfg.d_k} = {cfg.softmax_scale:.4f}** so that they do not grow with "
       "d_k and push softmax into near one-hot rows. ")
    + "Blocked pairs (the mask) are set to −∞, and softmax turns each "
    "row into weights that are ≥ 0 and sum to 1. The head's output for a token is the weighted sum of the value "
    "vectors. The heads never look at each other's numbers in this step."
)
# With grouped-query attention, query head i reads key/value head ceil(i / group size); without the scaling there is
# no √d_k.
K, V = (r"K_{\lceil i/%d \rceil}" % cfg.group_size, r"V_{\lceil i/%d \rceil}" % cfg.group_size) \
    if cfg.group_size > 1 else ("K_i", "V_i")
scores = r"Q_i %s^\top" % K
st.latex(r"\mathrm{head}_i = \mathrm{softmax}\!\left(%s + M\right) %s"
         r"\qquad %s \in \mathbb{R}^{%d\times%d},\; \mathrm{head}_i \in \mathbb{R}^{%d\times%d}"
         % (scores if unscaled else r"\frac{%s}{\sqrt{%d}}" % (scores, cfg.d_k), V, scores, n, m, n, cfg.d_k))
experiments.cross_attention_note(ex)
if blocked:
    st.caption(f"The mask M blocks {blocked} of the {n * m} query–key pairs (M = −∞ there, 0 elsewhere).")
if tr.blocked_rows.any():
    st.warning("Some query rows have every key blocked: their weights are all 0 and their head output is 0.")

predict("strongest_key")
plot(figures.head_grid_figure(tr, ex.tokens, ex.key_tokens, group_size=cfg.group_size), key="grid")
experiments.kv_sharing(ex)

st.subheader(f"Head {head + 1}, up close")
st.caption("Choose the head and the query token in the sidebar, and the stage of the computation here.")
stage = st.segmented_control("Stage", list(STAGES), default=View.stage, required=True, key="stage", bind=BIND)
plot(figures.attention_figure(tr, head, ex.tokens, STAGES[stage], cfg.softmax_scale, ex.key_tokens),
     key="stage_figure")
experiments.switched_off_note(settings, ex)

left, right = st.columns(2)
with left:
    plot(figures.query_weights_figure(tr, head, query, ex.tokens, ex.key_tokens), key="bar")
with right:
    plot(figures.value_mix_figure(tr, head, query, ex.tokens, cfg.group_size, ex.key_tokens), key="mix")

experiments.planted_head(settings, ex)

st.subheader("How focused is each head?")
st.caption("Entropy of each weight row in bits: 0 means all weight on one key; higher means spread out.")
plot(figures.entropy_figure(tr, ex.tokens), key="entropy")
experiments.scaling_comparison(settings, ex)
code_for_step(2)
next_step("pages/concatenation.py", "Step 3: concatenation")
