"""Step 2: scaled dot-product attention in every head: scores, scale, mask, softmax, mixing the values."""

import streamlit as st

from mha_app.components.explorer import attention_explorer
from mha_app.components.matrix import matrix_view
from mha_app.run import compute
from mha_app.run.view import view
from mha_app.sections import experiments, inside
from mha_app.state.example import padding_note
from mha_app.ui.asides import code_for_step, symbols
from mha_app.ui.charts import plot
from mha_app.ui.layout import next_step, tabs
from mha_app.ui.notices import token_spelling, untrained_note
from mha_app.ui.questions import predict
from mha_core import causal_mask, figures
from mha_core.teaching import formulas, notation

settings, ex = view()
tr, cfg = ex.trace, ex.cfg
n, m = tr.weights.shape[1:]
head, query = settings.view.head - 1, settings.view.query - 1
blocked = int(tr.mask[0].sum()) if tr.mask is not None else 0
unscaled = cfg.scale == 1.0

st.title("Step 2 · Attention, in every head")
st.markdown(
    "Each head scores every query against every key (a dot product): a large **score**, a good match. "
    + ("Here the scores are not scaled. " if unscaled else
       f"Scores are multiplied by 1/√d_k = 1/√{cfg.d_k} = {cfg.softmax_scale:.4f}. ")
    + "Softmax turns each query's row of scores into **attention weights**: all ≥ 0, summing to 1"
    + ("; a blocked pair (mask M) gets 0" if tr.mask is None else "")  # else the answer's note says it, once
    + ". The head's output is the value vectors mixed by these weights."
)
experiments.heads_off_caption(settings, "attention weights")
if tr.blocked_rows.any():
    st.warning("Some query rows have every key blocked: their attention weights are all 0 and their head output "
               "is 0.")
revealed = predict("strongest_key")
if revealed:
    attention_explorer(settings, ex)  # every head at every stage, drawn in the browser: the grid, one head, a query
    if figures.group_rows(cfg.group_size):
        st.caption(f"Each row of panels is one group: the {cfg.group_size} query heads that read the same key/value "
                   "head (row j reads K/V head j). They share K and V, yet their attention weights differ, because "
                   "each has its own queries.")
# Under the figure, not above it: title, text and figure fit one 1280 x 800 screen (issue 18; read3 L1). The top bar
# names both sentences' lengths, and the hatched keys show the padding, before these notes explain them.
experiments.cross_attention_note(ex)
if settings.spec.pad and settings.spec.card is None:
    st.caption(padding_note(settings.spec, ex.tokens, ex.key_tokens))
st.latex(formulas.attention(cfg)
         + r"\qquad %s \in \mathbb{R}^{%d\times%d},\; \mathrm{head}_i \in \mathbb{R}^{%d\times%d}"
         % (formulas.raw_scores(cfg), n, m, n, cfg.d_k))
if cfg.group_size > 1:
    st.caption(notation.kv_head_rule(cfg.n_heads, cfg.group_size))
untrained_note(settings)
token_spelling(settings.spec)
symbols(notation.head_symbols(cfg.group_size)[1], "i", "t", "s", "n", "m", "d_k", "d_v", "c",
        notation.score_symbol(cfg.scale), "M", "\\alpha_{ts}", "\\mathrm{head}_i", "W^O",
        *(["g", "j"] if cfg.group_size > 1 else []))
if revealed:
    # Short titles: all eight fit the main column at 1280 px (longer ones hid the last behind a scroll arrow).
    extra = ((["Shared K/V"] if cfg.group_size > 1 else [])
             + (["Plant a head"] if settings.spec.card is None else []))
    mix_tab, adds_tab, plane_tab, mask_tab, focus_tab, scale_tab, *extra_tabs = tabs(
        ["Mixing the values", "What each key adds", "Queries and keys", "The mask", "How focused?", "Why √d_k?",
         *extra], key="attention_tab")
    with mix_tab:
        if mix_tab.open:
            experiments.switched_off_note(settings, ex)
            layer = ex.layer if ex.run is not None else None
            matrix_view(figures.value_mix_figure(tr, head, query, ex.tokens, cfg.group_size, ex.key_tokens, layer),
                        key="mix", name=f"mix_{f'layer{layer}_' if layer else ''}head{head + 1}_query{query + 1}")
    with adds_tab:
        if adds_tab.open:
            inside.what_each_key_adds(settings, ex)
    with plane_tab:
        if plane_tab.open:
            inside.queries_and_keys(settings, ex)
    with mask_tab:
        if mask_tab.open:
            st.latex(formulas.mask(tr.mask))
            if blocked:
                causal = int(causal_mask(n, m).sum()) if cfg.causal else 0
                parts = ([f"{causal} by the causal mask (every key after its query)"] if causal else []) + (
                    [f"{blocked - causal}{' more' if causal else ''} by the {settings.spec.pad} padded key"
                     f"{'s' if settings.spec.pad > 1 else ''} (the filler, blocked for every query)"]
                    if blocked > causal else [])
                st.caption(f"The mask M blocks {blocked} of the {n * m} query–key pairs (M = −∞ there, 0 elsewhere): "
                           + " and ".join(parts) + ".")
            else:
                st.caption("Nothing is blocked in this example: every query may look at every key. Switch on the "
                           "causal mask or padding in the sidebar to see M at work.")
    with focus_tab:
        if focus_tab.open:
            st.caption("Entropy of each row of attention weights, in bits: 0 means all the weight is on one key"
                       + ("" if ex.key_tokens is not None else " (which may be the token itself)")
                       + f"; the most is log2(m) = log2({m}) bits, every key weighted the same"
                       + (", and less for a row whose keys are partly blocked: log2 of the number of keys it may see"
                          if blocked else "")
                       + ". That maximum grows with the number of tokens, so longer sentences give higher entropies: "
                       "compare heads on the same sentence.")
            plot(figures.entropy_figure(tr, ex.tokens, compute.entropy(settings.spec, ex.layer)), key="entropy")
    with scale_tab:
        if scale_tab.open:
            experiments.scaling_comparison(settings, ex)
    for tab, name in zip(extra_tabs, extra, strict=True):
        with tab:
            if tab.open:
                if name == "Shared K/V":
                    experiments.kv_sharing(ex)
                else:
                    experiments.planted_head(settings, ex)
code_for_step(2)
next_step("pages/concatenation.py", "Step 3: concatenation")
