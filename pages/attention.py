"""Step 2: scaled dot-product attention in every head: scores, scale, mask, softmax, mixing the values."""

import streamlit as st

from mha_app.components.explorer import attention_explorer
from mha_app.components.matrix import matrix_view
from mha_app.copy.attention import ALL_BLOCKED, entropy_caption, group_caption, intro, mask_caption
from mha_app.run import compute
from mha_app.run.view import view
from mha_app.sections import experiments, inside
from mha_app.state.example import padding_note
from mha_app.ui.asides import code_for_step, symbols
from mha_app.ui.charts import plot
from mha_app.ui.layout import next_step, setting_tabs
from mha_app.ui.notices import token_spelling, untrained_note
from mha_app.ui.questions import predict
from mha_core import causal_mask, figures
from mha_core.teaching import formulas, notation

settings, ex = view()
tr, cfg = ex.trace, ex.cfg
n, m = tr.weights.shape[1:]
head, query = settings.view.head - 1, settings.view.query - 1
blocked = int(tr.mask[0].sum()) if tr.mask is not None else 0

st.title("Step 2 · Attention, in every head")
intro_slot = st.empty()  # filled once the question below says whether it waits (copy.attention.intro)
experiments.heads_off_caption(settings, "attention weights")
if tr.blocked_rows.any():
    st.warning(ALL_BLOCKED)
revealed = predict("strongest_key")
row_blocked = tr.mask is not None and bool(tr.mask[head, query].any())  # the answer's reason then says what they get
intro_slot.markdown(intro(cfg.d_k, cfg.scale, blocked=bool(blocked),
                          said_elsewhere=row_blocked if revealed else bool(tr.blocked_rows[head, query])))
if revealed:
    # every head at every stage, drawn in the browser: the grid, one head, a query
    attention_explorer(settings, ex, "strongest_key")
    if figures.group_rows(cfg.group_size):
        st.caption(group_caption(cfg.group_size))
# Under the figure, not above it: title, text and figure fit one 1280 x 800 screen (one idea per screen). The top bar
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
    extra = ((["shared_kv"] if cfg.group_size > 1 else []) + (["plant"] if settings.spec.card is None else []))
    mix_tab, adds_tab, plane_tab, mask_tab, focus_tab, scale_tab, *extra_tabs = setting_tabs(
        "tab", ["mix", "adds", "plane", "mask", "focus", "scale", *extra])  # labels: settings.ATTENTION_TABS
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
            causal = int(causal_mask(n, m).sum()) if cfg.causal else 0
            st.caption(mask_caption(blocked, causal, settings.spec.pad, n, m))
    with focus_tab:
        if focus_tab.open:
            st.caption(entropy_caption(m, cross=ex.key_tokens is not None, blocked=bool(blocked)))
            plot(figures.entropy_figure(tr, ex.tokens, compute.entropy(settings.spec, ex.layer)), key="entropy")
    with scale_tab:
        if scale_tab.open:
            experiments.scaling_comparison(settings, ex)
    for tab, name in zip(extra_tabs, extra, strict=True):
        with tab:
            if tab.open:
                if name == "shared_kv":
                    experiments.kv_sharing(ex)
                else:
                    experiments.planted_head(settings, ex)
code_for_step(2)
next_step("pages/concatenation.py", "Step 3: concatenation")
