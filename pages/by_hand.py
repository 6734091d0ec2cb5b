"""One attention weight by hand: the dot product term by term, the scale, the row's exponentials, the normalisation."""

import streamlit as st

from mha_app.copy.markup import quote
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
st.markdown(
    "Every number in the attention matrix comes from four small steps: multiply the query's and the key's numbers "
    "pair by pair and add them up (the dot product), scale the sum, take the exponential of every score in the "
    "row, and divide by their total (softmax). Pick a cell and follow it. "
    + ("In the tiny example every number is small enough to check with pencil and paper."
       if settings.spec.input == "tiny" and not settings.spec.card else
       "For numbers small enough to check with pencil and paper, choose random weights, then the *tiny* input, in "
       "the sidebar: the tiny example brings its own small hand-set weights in place of the random ones.")
)
head, query, key = pick_cell(settings, ex)
if predict("cell_weight"):
    cell = worked(ex, head, query, key)
    st.latex(r"\alpha_{ts} = \mathrm{softmax}_s\!\left(%s + M_{ts}\right),\qquad t = %d,\; s = %d,\qquad "
             r"q_t = Q_{%d}[t],\; k_s = K_{%d}[s]"
             % (scaled_latex(r"q_t \cdot k_s", cfg), query + 1, key + 1, head + 1, cell.kv_head + 1))
    if cfg.group_size > 1:
        st.caption(f"Query head {head + 1} reads K/V head {cell.kv_head + 1}, which it shares with "
                   f"{cfg.group_size - 1} other query head{'s' if cfg.group_size > 2 else ''}.")
    if cfg.rope_theta is not None:
        st.caption(f"q and k are the rotated ones (RoPE, Step 1b): the query turned by the angle of position "
                   f"{query + 1}, the key by that of position {key + 1}.")
    st.header(f"Query {query + 1} {quote(ex.tokens[query])} and key {key + 1} {quote(ex.keys[key])}")
    st.caption("Each score has the row's largest score subtracted before e^: that divides every e^ of the row by "
               "the same number, so the weights do not change, and no e^ can grow too large for the computer.")
    show_worked(cell, ex)
    st.header("The whole row")
    st.caption("Softmax needs every score of the row: the attention weight of one key depends on all the others.")
    row_table(cell, ex.keys)
    plot(figures.query_weights_figure(tr, head, query, ex.tokens, ex.key_tokens), key="row")
symbols("t", "s", "c", "q_t, k_s, v_s", "d_k", notation.score_symbol(cfg.scale), "M", "\\alpha_{ts}")
