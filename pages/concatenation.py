"""Step 3: put the head outputs side by side."""

import numpy as np
import streamlit as st

from mha_app.classroom import predict
from mha_app.toolkit import code_for_step, next_step, plot, untrained_note, view
from mha_core import figures

settings, ex = view()
tr, cfg = ex.trace, ex.cfg
n, h, d_k = tr.heads.shape[1], cfg.n_heads, cfg.d_k

st.title("Step 3 · Concatenate the heads")
predict("concat_width")
st.markdown(
    f"Each head produced a matrix of **{n} × {d_k}** numbers. Placing the {h} of them side by side gives one "
    f"**{n} × {h * d_k}** matrix: with d_k = d_model / h, that is again **d_model = {cfg.d_model}** columns. "
    "Nothing is added or mixed here: every column still belongs to exactly one head, shown by its colour."
)
untrained_note(settings)
st.latex(r"\mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_{%d}) \in \mathbb{R}^{%d\times(%d\cdot%d)}"
         r" = \mathbb{R}^{%d\times%d}" % (h, n, h, d_k, n, h * d_k))
off = settings.spec.ablate
if off:
    st.info(f"Switched off: head{'s' if len(off) > 1 else ''} {', '.join(map(str, off))}. Here each head's output is "
            "multiplied by its head-mask factor (0 for those, 1 for the others) as it goes in, so their columns of "
            "the concatenation are zero.", icon=":material/block:")
plot(figures.per_head_figure(tr.heads, ex.tokens, "head"), key="heads")
plot(figures.concat_figure(tr, ex.tokens), key="concat")
gate = np.ones(h) if tr.head_mask is None else tr.head_mask
same = all(np.array_equal(tr.concat[:, i * d_k:(i + 1) * d_k], tr.heads[i] * gate[i]) for i in range(h))
st.caption(f"Check: columns (i−1)·d_k+1 … i·d_k of the concatenation equal head i"
           f"{' times its head-mask factor' if off else ''} exactly: **{same}**.")
code_for_step(3)
next_step("pages/output.py", "Step 4: output projection")
