"""Head summary: per layer and head, how focused it is and where its attention goes."""

import math

import streamlit as st

from mha_app import experiments
from mha_app.toolkit import needs_pretrained, open_head_in_step_through, plot, view
from mha_core import figures
from mha_core.head_stats import COLUMNS, LABELS, SHARE_COLUMNS, dominant_pattern, head_summary, summary_array

settings, ex = view()
st.title("Head summary: what each head does")
run = needs_pretrained(ex)
st.markdown(
    "Each number below averages over the query tokens of your sentence. **Entropy** (in bits) says how spread "
    "out a head's attention is: 0 means every token looks at exactly one other token. The **shares** say where "
    "the attention lands: on [CLS] (the first token), on [SEP] (the last), on the token itself, or on its "
    "neighbours. A head whose attention mostly goes one way has *specialised*; many heads park unused attention "
    "on [SEP] or [CLS]."
)
experiments.model_ablation_note(settings)
rows = head_summary(run)
metric = st.radio("Show", COLUMNS, format_func=LABELS.get, horizontal=True, key="summary_metric")
plot(figures.head_summary_figure(summary_array(rows, metric), metric), key="summary")


def cell(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)


table = [{"layer": r["layer"] + 1, "head": r["head"] + 1, "pattern": dominant_pattern(r),
          **{name: cell(r[name]) for name in COLUMNS}} for r in rows]
columns = {name: st.column_config.ProgressColumn(LABELS[name], min_value=0, max_value=1, format="%.2f",
                                                  width="small") for name in SHARE_COLUMNS}
columns["entropy"] = st.column_config.NumberColumn(LABELS["entropy"], format="%.3f")
st.dataframe(table, hide_index=True, width="stretch", height=420, column_config=columns)
st.caption("“pattern” names the place that takes at least 40 % of a head's attention on average, else “broad”.")
open_head_in_step_through(len(run.layers), ex.cfg.n_heads, settings)
