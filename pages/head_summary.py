"""Head summary: per layer and head, how focused it is and where its attention goes."""

import math

import streamlit as st

from mha_app.copy.models import how_pages_count, pattern_caption, summary_intro, summary_reading
from mha_app.run import compute
from mha_app.run.view import view
from mha_app.sections import experiments, inside
from mha_app.ui.charts import plot
from mha_app.ui.notices import needs_pretrained
from mha_app.ui.pickers import open_head_in_step_through
from mha_core import figures
from mha_core.analysis.head_stats import (
    DOMINANT_MIN_SHARE,
    INDUCTION_MIN_SCORE,
    KIND_MEANINGS,
    dominant_pattern,
    induction_pairs,
    kind_counts,
    parts_for,
    summary_array,
    top_heads,
)

settings, ex = view()
st.title("Head summary: what each head does")
run = needs_pretrained(ex)
parts = parts_for(compute.pretrained_model(settings.spec.model))
st.markdown(summary_intro(parts))
experiments.model_ablation_note(settings)
rows = compute.head_summary(settings.spec, ex.layer)
if all(math.isnan(r["entropy"]) for r in rows):
    st.info("This text has no token to average over: " + ("the first token is left out as a query (it can only "
            "look at itself)" if parts.kind == "decoder" else f"only {parts.start} and {parts.end}, which are left "
            "out as queries") + ". Type a longer text in the sidebar.", icon=":material/short_text:")
counts = kind_counts(rows, parts)
for col, (kind, count) in zip(st.columns(len(counts)), counts.items(), strict=True):
    col.metric(f"heads: {kind}", f"{count} of {len(rows)}", help=f"{kind.capitalize()}: {KIND_MEANINGS[kind]}.")
metric = st.radio("Show", parts.stat_columns, format_func=parts.labels.get, horizontal=True, key="summary_metric")
plot(figures.head_summary_figure(summary_array(rows, metric), metric, parts), key="summary")

layer = settings.view.layer
plot(figures.head_split_figure([r for r in rows if r["layer"] == layer - 1],
                               f"Layer {layer} (chosen in the sidebar): where each head's attention goes (each bar "
                               "sums to 1)", parts), key="split")


def cell(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)


table = [{"layer": r["layer"] + 1, "head": r["head"] + 1, "pattern": dominant_pattern(r, parts=parts),
          **{name: cell(r[name]) for name in parts.stat_columns}} for r in rows]
columns = {name: st.column_config.ProgressColumn(parts.labels[name], min_value=0, max_value=1, format="%.2f",
                                                  width="medium") for name in (*parts.columns, *parts.extra)}
columns["entropy"] = st.column_config.NumberColumn(parts.labels["entropy"], format="%.3f", width="medium")
columns["layer"] = st.column_config.NumberColumn("layer", width="small")
columns["head"] = st.column_config.NumberColumn("head", width="small")
st.dataframe(table, hide_index=True, width="stretch", height=420, column_config=columns)
st.caption(pattern_caption(parts, DOMINANT_MIN_SHARE) + " " + how_pages_count(parts, "head summary"))
st.markdown(summary_reading(parts))
if "induction" in parts.extra:
    pairs = len(induction_pairs(run.tokens, parts.special)[0])
    best = top_heads(rows, "induction", INDUCTION_MIN_SCORE)
    if not pairs:
        st.info("Nothing in this text repeats (past the token just before), so no head has an induction score. "
                "Choose *Repeated phrase* under *Example sentences* in the sidebar.", icon=":material/repeat:")
    elif best:
        g = ex.cfg.group_size
        named = ", ".join(f"layer {r['layer'] + 1} head {r['head'] + 1}" + (f" (K/V {r['head'] // g + 1})" if g > 1
                          else "") + f": {r['induction']:.2f}" for r in best)
        st.success(f"On this text, {pairs} tokens were seen before. The heads with the highest induction score (the "
                   f"mean weight each puts on the token that followed the earlier copy): {named}. Open one in the "
                   "step-through below and look at the rows of the repeat.", icon=":material/repeat:")
    else:
        st.info(f"On this text, {pairs} tokens were seen before, but no head puts more than {INDUCTION_MIN_SCORE} of "
                "its weight on the token that followed the earlier copy.", icon=":material/repeat:")
inside.weight_and_contribution(settings, ex, parts, rows)
open_head_in_step_through(len(run.layers), ex.cfg.n_heads, settings)
