"""One attention weight by hand: the dot product term by term, the scale, the row's exponentials, the normalisation."""

import streamlit as st

from mha_app.copy.by_hand import MAX_SUBTRACTED, WHOLE_ROW, cell_header, intro, rope_caption, shared_kv
from mha_app.run.view import view
from mha_app.sections.by_hand import row_table, scaled_latex, show_worked, worked
from mha_app.ui.asides import symbols
from mha_app.ui.charts import plot
from mha_app.ui.notices import token_spelling, untrained_note
from mha_app.ui.pickers import pick_cell
from mha_app.ui.questions import predict
from mha_core import figures
from mha_core.teaching import notation

settings, ex = view()
tr, cfg = ex.trace, ex.cfg

st.title("One attention weight, by hand")
untrained_note(settings)
token_spelling(settings.spec)
st.markdown(intro(tiny=settings.spec.input == "tiny" and not settings.spec.card))
head, query, key = pick_cell(settings, ex)
if predict("cell_weight"):
    cell = worked(ex, head, query, key)
    st.latex(r"\alpha_{ts} = \mathrm{softmax}_s\!\left(%s + M_{ts}\right),\qquad t = %d,\; s = %d,\qquad "
             r"q_t = Q_{%d}[t],\; k_s = K_{%d}[s]"
             % (scaled_latex(r"q_t \cdot k_s", cfg), query + 1, key + 1, head + 1, cell.kv_head + 1))
    if cfg.group_size > 1:
        st.caption(shared_kv(head + 1, cell.kv_head + 1, cfg.group_size))
    if cfg.rope_theta is not None:
        st.caption(rope_caption(query + 1, key + 1))
    st.header(cell_header(query + 1, ex.tokens[query], key + 1, ex.keys[key]))
    st.caption(MAX_SUBTRACTED)
    show_worked(cell, ex)
    st.header("The whole row")
    st.caption(WHOLE_ROW)
    row_table(cell, ex.keys)
    plot(figures.query_weights_figure(tr, head, query, ex.tokens, ex.key_tokens), key="row")
symbols("t", "s", "c", "q_t, k_s, v_s", "d_k", notation.score_symbol(cfg.scale), "M", "\\alpha_{ts}")
