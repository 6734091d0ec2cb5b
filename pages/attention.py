"""Step 2: scaled dot-product attention in every head: scores, scale, mask, softmax, mixing the values."""

import streamlit as st

from mha_app import compute, experiments
from mha_app.classroom import predict
from mha_app.explorer import attention_explorer
from mha_app.toolkit import code_for_step, next_step, plot, untrained_note, view
from mha_core import figures, formulas

settings, ex = view()
tr, cfg = ex.trace, ex.cfg
n, m = tr.weights.shape[1:]
head, query = settings.view.head - 1, settings.view.query - 1
blocked = int(tr.mask[0].sum()) if tr.mask is not None else 0
unscaled = cfg.scale == 1.0

st.title("Step 2 · Scaled dot-product attention, in every head")
st.markdown(
    "Each head compares every query with every key by a dot product: a large score means a good match. "
    + ("Here the scaling is switched off (scale = 1): the raw scores go to softmax as they are. " if unscaled else
       f"Scores are multiplied by **1/√d_k = 1/√{cfg.d_k} = {cfg.softmax_scale:.4f}**. ")
    + ("The scale 1/√d_k has two reasons (Vaswani et al. 2017): if the d_k numbers of a query and a key are "
       "independent with mean 0 and variance 1, their dot product has mean 0 and **variance d_k**, so the wider the "
       "heads, the wider the scores spread; and large scores push softmax into near one-hot rows, where its "
       "**gradients are tiny** and learning stalls. Dividing by √d_k brings the variance back to 1"
       + ("; the comparison below shows what it would change. " if unscaled else ". "))
    + "Blocked pairs (the mask M) get −∞, hence weight 0, and softmax turns each row into weights that are ≥ 0 "
    "and sum to 1. The head's output for a token is the weighted sum of the value vectors. The heads never look "
    "at each other's numbers in this step."
)
untrained_note(settings)
st.latex(formulas.attention(cfg)
         + r"\qquad %s \in \mathbb{R}^{%d\times%d},\; \mathrm{head}_i \in \mathbb{R}^{%d\times%d}"
         % (formulas.raw_scores(cfg), n, m, n, cfg.d_k))
st.latex(formulas.mask(tr.mask))
experiments.cross_attention_note(ex)
if blocked:
    st.caption(f"The mask M blocks {blocked} of the {n * m} query–key pairs (M = −∞ there, 0 elsewhere)"
               + (": the causal mask blocks every key after its query, so each token sees itself and the tokens "
                  "before it." if cfg.causal else "."))
if tr.blocked_rows.any():
    st.warning("Some query rows have every key blocked: their weights are all 0 and their head output is 0.")

predict("strongest_key")
attention_explorer(settings, ex)  # every head at every stage, drawn in the browser: the grid, one head, a query's row
if figures.group_rows(cfg.group_size):
    st.caption(f"Each row of panels is one group: the {cfg.group_size} query heads that read the same key/value head "
               "(the colour of their titles). They share K and V, yet their weights differ, because each has its own "
               "queries.")
experiments.kv_sharing(ex)

st.subheader(f"Head {head + 1}, query {query + 1}: mixing the values")
experiments.switched_off_note(settings, ex)
plot(figures.value_mix_figure(tr, head, query, ex.tokens, cfg.group_size, ex.key_tokens), key="mix")

experiments.planted_head(settings, ex)

st.subheader("How focused is each head?")
st.caption("Entropy of each weight row in bits: 0 means all the weight is on one key (which may be the token "
           f"itself); the most is log2(m) = log2({m}) bits, every key weighted the same"
           + ((", and less for a row whose keys are partly blocked" + (": with the causal mask, the query at "
              "position j sees j keys, so its most is log2(j)" if cfg.causal else "")) if blocked else "")
           + ". That maximum grows with the number of tokens, so longer sentences give higher entropies: compare "
           "heads on the same sentence.")
plot(figures.entropy_figure(tr, ex.tokens, compute.entropy(settings.spec, ex.layer)), key="entropy")
experiments.scaling_comparison(settings, ex)
code_for_step(2)
next_step("pages/concatenation.py", "Step 3: concatenation")
