"""Step 3: put the head outputs side by side."""

import numpy as np
import streamlit as st

from mha_app.copy.steps import CONCAT_COLOURS, concat_check, concat_heads_off, concat_intro
from mha_app.run.view import view
from mha_app.ui.asides import code_for_step, symbols
from mha_app.ui.charts import plot
from mha_app.ui.layout import expander, next_step
from mha_app.ui.notices import token_spelling, untrained_note
from mha_app.ui.questions import predict
from mha_core import figures

settings, ex = view()
tr, cfg = ex.trace, ex.cfg
n, h, d_v = tr.heads.shape[1], cfg.n_heads, cfg.d_k

st.title("Step 3 · Concatenate the heads")
st.markdown(concat_intro(h, d_v))
off = settings.spec.ablate
if predict("concat_width"):
    if off:
        st.info(concat_heads_off(off), icon=":material/block:")
    plot(figures.concat_figure(tr, ex.tokens), key="concat")
    st.caption(CONCAT_COLOURS)
    st.latex(r"\mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_{%d}) \in \mathbb{R}^{%d\times(%d\cdot%d)}"
             r" = \mathbb{R}^{%d\times%d}" % (h, n, h, d_v, n, h * d_v))
    gate = np.ones(h) if tr.head_mask is None else tr.head_mask
    same = all(np.array_equal(tr.concat[:, i * d_v:(i + 1) * d_v], tr.heads[i] * gate[i]) for i in range(h))
    st.caption(concat_check(same, bool(off)))
    with (box := expander("Each head's output on its own", key="heads_box")):
        if box.open:
            plot(figures.per_head_figure(tr.heads, ex.tokens, "head"), key="heads")
untrained_note(settings)
token_spelling(settings.spec)
symbols("\\mathrm{head}_i", "h", "i", "n", "d_v", "d_k", "d_{model}", "c")
code_for_step(3)
next_step("pages/output.py", "Step 4: output projection")
