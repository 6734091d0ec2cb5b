"""Overview: the whole pipeline with live shapes, the output, and a live check against PyTorch."""

import streamlit as st

from mha_app import compute, experiments
from mha_app.toolkit import next_step, plot, view
from mha_core import figures, reference

settings, ex = view()
tr, cfg = ex.trace, ex.cfg
n, m = tr.weights.shape[1:]

st.title("Multi-head attention, step by step")
badge = st.empty()
st.markdown(
    "Attention lets every token gather information from the other tokens. **Multi-head** attention does this "
    f"**h = {cfg.n_heads}** times in parallel: each head gets its own projections of the input into a "
    f"smaller space of **d_k = d_model / h = {cfg.d_k}** dimensions, so it can look for its own kind of relation. "
    "The heads' results are then placed side by side and mixed back to d_model by one more matrix, W_O. "
    "Splitting d_model across heads keeps the total cost close to that of one full-width head."
)
for note in ex.notes:
    st.info(note)
# Cross-attention reads keys and values from Y; without the scaling there is no √d_k; with grouped-query attention,
# query head i reads key/value head j = ceil(i / group size).
Y = "Y" if ex.key_tokens is not None else "X"
j = "j" if cfg.group_size > 1 else "i"
scores = r"%s W^Q_i (%s W^K_%s)^\top" % ("X", Y, j)
st.latex(r"\mathrm{MultiHead}(X%s) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_{%d})\,W^O,"
         r"\quad \mathrm{head}_i = \mathrm{softmax}\!\left(%s\right) %s W^V_%s"
         % (", Y" if Y == "Y" else "", cfg.n_heads,
            scores if cfg.scale == 1.0 else r"\frac{%s}{\sqrt{%d}}" % (scores, cfg.d_k), Y, j))
if cfg.group_size > 1:
    st.caption(f"Query head i reads key/value head j = ⌈i / {cfg.group_size}⌉ (grouped-query attention).")
experiments.cross_attention_note(ex)
plot(figures.pipeline_figure(n, cfg.d_model, cfg.n_heads, cfg.d_k, m, scaled=cfg.scale != 1.0,
                             cross=ex.key_tokens is not None))

cols = st.columns(4)
cols[0].metric("tokens n", n)
cols[1].metric("d_model", cfg.d_model)
cols[2].metric("heads h", cfg.n_heads)
cols[3].metric("d_k per head", cfg.d_k)

st.subheader("Tokens")
st.caption("The input split into tokens; each becomes one row of X.")
st.dataframe({"position": list(range(1, n + 1)), "token": ex.tokens}, hide_index=True, height=min(740, 35 * n + 38))
if ex.key_tokens is not None:
    st.caption("The second sentence's tokens: each becomes one row of Y (keys and values).")
    st.dataframe({"position": list(range(1, m + 1)), "token": ex.key_tokens}, hide_index=True,
                 height=min(740, 35 * m + 38), key="key_tokens")

st.subheader("The result")
plot(figures.input_output_figure(tr.x, tr.output, ex.tokens))

with st.spinner("Checking against PyTorch…"):
    diff = compute.torch_difference(settings.spec, ex.layer)
ok = diff <= (1e-5 if tr.output.dtype.itemsize == 4 else 1e-10)
torch_name = reference.reference_name(tr, cfg)
if ok:
    badge.success(f"Matches {torch_name}: max |difference| = {diff:.2e}", icon=":material/check_circle:")
else:
    badge.error(f"Differs from {torch_name}: max |difference| = {diff:.2e}", icon=":material/error:")
next_step("pages/projection.py", "Step 1: projection")
