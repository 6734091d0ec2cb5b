"""Step 4: W_O mixes the heads back into d_model dimensions."""

import numpy as np
import streamlit as st

from mha_app import decoder, experiments
from mha_app.classroom import predict
from mha_app.toolkit import bias_note, code_for_step, plot, reproduce_in_pytorch, untrained_note, view
from mha_core import figures
from mha_core.analysis.decompose import head_contributions
from mha_core.teaching import formulas

settings, ex = view()
tr, cfg, w = ex.trace, ex.cfg, ex.weights
n, h, d_k, d_model = tr.heads.shape[1], cfg.n_heads, cfg.d_k, cfg.d_model

st.title("Step 4 · Project back to d_model with W_O")
predict("w_o_size")
st.markdown(
    f"The last matrix, **W_O** ({h * d_k} × {d_model}), is where the heads finally meet. Because the "
    f"concatenation is split into head blocks, W_O splits into blocks of **{d_k} rows**, one per head: "
    "the output is the sum of each head's output times its own block of W_O"
    f"{', plus the bias b_O' if cfg.bias else ''}. "
    "Without W_O the heads would only sit next to each other; with it, every output number can draw on all heads."
)
untrained_note(settings)
st.latex(formulas.output(cfg) + r",\qquad W^O_{[i]} \in \mathbb{R}^{%d\times%d}" % (d_k, d_model))
st.caption(bias_note(ex))
plot(figures.output_weight_figure(w.W_O, h), key="W_O")
contributions = head_contributions(tr, w)
plot(figures.contributions_figure(contributions, tr.output, ex.tokens, bias=cfg.bias), key="contrib")
bias = 0 if w.b_O is None else w.b_O
gap = float(np.abs(contributions.sum(axis=0) + bias - tr.output).max())
st.caption(f"Check: the sum of the head contributions{' plus b_O' if cfg.bias else ''} differs from the output by "
           f"at most {gap:.1e} (rounding only).")
plot(figures.contribution_size_figure(contributions), key="sizes")
plot(figures.input_output_figure(tr.x, tr.output, ex.tokens), key="io")
decoder.next_token_section(settings, ex, "The model's prediction for the next token")
experiments.ablation_results(settings, ex)
experiments.model_effects(settings, ex)
code_for_step(4)
reproduce_in_pytorch(settings)
