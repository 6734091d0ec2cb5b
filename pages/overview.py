"""Overview: the whole pipeline with live shapes, the output, and a live check against PyTorch."""

import streamlit as st

from mha_app.copy.cost import MULTIPLY_ADD, cost_rows, rope_note, what_grows
from mha_app.copy.markup import readable
from mha_app.copy.models import input_source, model_text, special_tokens_explained, token_notes
from mha_app.copy.notes import bias_note
from mha_app.run import compute
from mha_app.run.view import view
from mha_app.sections import decoder, experiments
from mha_app.ui.asides import symbols
from mha_app.ui.charts import plot
from mha_app.ui.layout import next_step, tabs
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
st.markdown(
    "Attention lets every token gather information from the other tokens. **Multi-head** attention does this "
    f"**h = {cfg.n_heads}** times in parallel: each head gets its own "
    + ("projections of the input" if cfg.group_size == 1 else "query projection of the input")
    + f" into a smaller space of **d_k = d_model / h = {cfg.d_k}** dimensions, so it can look for its own kind of "
    "relation" + ("; keys and values are shared (grouped-query attention): only " + (
        f"{cfg.kv_heads} key/value heads are made, each read by {cfg.group_size} heads" if cfg.kv_heads > 1 else
        f"one key/value head is made, read by all {cfg.group_size} heads") if cfg.group_size > 1 else "") + ". The "
    "heads' results are then placed side by side and mixed back to d_model by one more matrix, W_O (Vaswani et al. "
    "2017). The four steps below are the pages of this app; each shows the real numbers of this example."
    + (" The layer shown is a decoder's: a causal mask lets each token see only itself and the tokens before it, "
       "and RoPE turns every query and key by its position before they are compared (Step 1b)."
       if cfg.rope_theta and cfg.causal else "")
)
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
            st.caption("The source sentence's tokens: each becomes one row of Y (keys and values).")
            st.dataframe({"position": list(range(1, m + 1)), "token": ex.key_tokens}, hide_index=True,
                         height=min(740, 35 * m + 38), key="key_tokens")
        st.caption(("The sentence being written, split into tokens; each token is one row of X (the queries). "
                    if cross else "The input split into tokens; each token is one row of X. ")
                   + input_source(settings.spec, ex.layer))
        tokens = {"position": list(range(1, n + 1)), "token": ex.tokens}
        notes = token_notes(settings.spec, ex.tokens)
        if any(notes):
            tokens["what it is"] = notes
        st.dataframe(tokens, hide_index=True, height=min(740, 35 * n + 38))
        if special_tokens_explained(settings.spec):
            st.caption(special_tokens_explained(settings.spec))
with cost_tab:
    if cost_tab.open and not answered("heads_cost"):  # the cost page asks first: its answer waits for the student
        st.markdown(f"Does splitting d_model = {cfg.d_model} into h heads of d_k = d_model / h cost more "
                    f"multiply-adds ({MULTIPLY_ADD}) than one head of full width, fewer, or the same? Predict it on "
                    "the cost page: once you have answered there, this tab shows the counts of this example.")
        st.page_link("pages/cost.py", label="The cost of heads: predict, then count", icon=":material/calculate:")
    elif cost_tab.open:
        st.markdown("Splitting d_model across the heads keeps the parameters and the multiply-adds of the matrix "
                    f"products ({MULTIPLY_ADD}) exactly those of one head of full width; what grows with h is the "
                    "number of attention weights, and softmax's exponentials with them."
                    + (f" Here grouped-query attention shares each key/value head among {cfg.group_size} query heads, "
                       "so W_K and W_V, and the work of projecting K and V, are smaller still (Ainslie et al. 2023)."
                       if cfg.group_size > 1 else ""))
        st.dataframe(cost_rows(n, m, cfg.d_model, cfg.n_heads, cfg.bias, cfg.n_kv_heads, cross), hide_index=True,
                     width="stretch")
        rope = rope_note(n, m, cfg.d_model, cfg.n_heads, cfg.kv_heads, cfg.rope_theta is not None)
        st.caption(f"h = {cfg.n_heads}: {cfg.n_heads} heads of d_k = {cfg.d_k} each; h = 1: one head of d_k = "
                   f"{cfg.d_model}. {what_grows(n, m, cfg.n_heads)}" + (f" {rope}" if rope else ""))
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
    badge.caption(f":material/check_circle: Checked: PyTorch computes this layer its own way and gets the same "
                  f"output, up to rounding (largest difference {readable(diff, 3)}).")
else:
    badge.error(f"PyTorch, computing this layer its own way, gets another output: the largest difference is "
                f"{readable(diff, 3)}, more than rounding.", icon=":material/error:")
with badge.expander("How it was checked"):
    st.caption(f"{reference.HOW[torch_name]} The two outputs are compared number by number.")
