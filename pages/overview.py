"""Overview: the whole pipeline with live shapes, the output, and a live check against PyTorch."""

import streamlit as st

from mha_app.copy.cost import MULTIPLY_ADD, cost_rows, rope_note, what_grows
from mha_app.copy.models import input_source, model_text, special_tokens_explained, token_notes
from mha_app.copy.notes import bias_note
from mha_app.copy.steps import (
    SOURCE_TOKENS,
    cost_answer,
    cost_caption,
    cost_question,
    how_checked,
    overview_intro,
    tokens_caption,
    torch_check,
)
from mha_app.run import compute
from mha_app.run.view import view
from mha_app.sections import decoder, experiments
from mha_app.ui.asides import symbols
from mha_app.ui.charts import plot
from mha_app.ui.layout import next_step, table_height, tabs
from mha_app.ui.notices import token_spelling, untrained_note
from mha_app.ui.questions import answered
from mha_core import figures
from mha_core.analysis import reference
from mha_core.teaching import formulas, notation

settings, ex = view()
tr, cfg = ex.trace, ex.cfg
n, m = tr.weights.shape[1:]
cross = ex.key_tokens is not None

st.title("Multi-head attention, step by step")
badge = st.container()  # the check against PyTorch, filled in once it has run (below)
st.markdown(overview_intro(cfg.n_heads, cfg.d_k, cfg.kv_heads, cfg.group_size,
                           rope_decoder=bool(cfg.rope_theta and cfg.causal)))
untrained_note(settings)
token_spelling(settings.spec)
plot(figures.pipeline_figure(n, cfg.d_model, cfg.n_heads, cfg.d_k, m, scaled=cfg.scale != 1.0, cross=cross,
                             bias=cfg.bias, kv_heads=cfg.kv_heads, rope=cfg.rope_theta is not None), key="pipeline")
if settings.spec.card and model_text(settings.spec.card.name).weights:
    st.caption(model_text(settings.spec.card.name).weights)
for note in ex.notes:
    st.info(note)
experiments.cross_attention_note(ex)

formulas_tab, tokens_tab, cost_tab, result_tab = tabs(["The formulas", "The tokens", "What it costs", "The result"],
                                                       key="overview_tab")
with formulas_tab:
    if formulas_tab.open:
        st.latex(formulas.multihead(cfg, cross, tr.head_mask))
        st.latex(formulas.projection(cfg, cross))
        st.latex(formulas.mask(tr.mask))
        if cfg.group_size > 1:
            st.caption(notation.kv_head_rule(cfg.n_heads, cfg.group_size))
        st.caption(bias_note(ex))
        symbols("X", *(["Y"] if cross else []), "h", "i", "d_k", "d_{model}", "d",
                *notation.head_symbols(cfg.group_size),
                "M", "\\mathrm{head}_i", "W^O", *(["h_{kv}", "g", "j"] if cfg.group_size > 1 else []),
                *(["b"] if cfg.bias else []))
with tokens_tab:
    if tokens_tab.open:
        if cross:  # in reading order: the source first, then the sentence being written from it
            st.caption(SOURCE_TOKENS)
            st.dataframe({"position": list(range(1, m + 1)), "token": ex.key_tokens}, hide_index=True,
                         height=table_height(m, cap=740), key="key_tokens")
        st.caption(tokens_caption(cross, input_source(settings.spec, ex.layer)))
        tokens = {"position": list(range(1, n + 1)), "token": ex.tokens}
        notes = token_notes(settings.spec, ex.tokens)
        if any(notes):
            tokens["what it is"] = notes
        st.dataframe(tokens, hide_index=True, height=table_height(n, cap=740))
        if special_tokens_explained(settings.spec):
            st.caption(special_tokens_explained(settings.spec))
with cost_tab:
    if cost_tab.open and not answered("heads_cost"):  # the cost page asks first: its answer waits for the student
        st.markdown(cost_question(cfg.d_model, MULTIPLY_ADD))
        st.page_link("pages/cost.py", label="The cost of heads: predict, then count", icon=":material/calculate:")
    elif cost_tab.open:
        st.markdown(cost_answer(cfg.group_size, MULTIPLY_ADD))
        st.dataframe(cost_rows(n, m, cfg.d_model, cfg.n_heads, cfg.bias, cfg.n_kv_heads, cross), hide_index=True,
                     width="stretch")
        rope = rope_note(n, m, cfg.d_model, cfg.n_heads, cfg.kv_heads, cfg.rope_theta is not None)
        st.caption(cost_caption(cfg.n_heads, cfg.d_k, cfg.d_model, what_grows(n, m, cfg.n_heads), rope))
        st.page_link("pages/cost.py", label="The cost of heads in full: a timing, real models, the K/V cache",
                     icon=":material/calculate:")
with result_tab:
    if result_tab.open:
        plot(figures.input_output_figure(tr.x, tr.output, ex.tokens, cross), key="io")
        decoder.next_token_section(settings, ex)

next_step("pages/projection.py", "Step 1: projection")

with st.spinner("Checking against PyTorch…"):
    diff = compute.torch_difference(settings.spec, ex.layer)
ok = reference.agrees(diff, tr)
torch_name = reference.reference_name(tr, cfg)
if ok:
    badge.caption(torch_check(True, diff))
else:
    badge.error(torch_check(False, diff), icon=":material/error:")
with badge.expander("How it was checked"):
    st.caption(how_checked(reference.HOW[torch_name]))
