"""Head summary: per layer and head, how focused it is and where its attention goes."""

import math

import streamlit as st

from mha_app.copy.models import (
    NO_REPEATS,
    how_pages_count,
    induction_found,
    induction_none,
    kind_help,
    no_queries_note,
    pattern_caption,
    split_title,
    summary_intro,
    summary_reading,
)
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
    st.info(no_queries_note(parts), icon=":material/short_text:")
counts = kind_counts(rows, parts)
for col, (kind, count) in zip(st.columns(len(counts)), counts.items(), strict=True):
    col.metric(f"heads: {kind}", f"{count} of {len(rows)}", help=kind_help(kind, KIND_MEANINGS[kind]))
metric = st.radio("Show", parts.stat_columns, format_func=parts.labels.get, horizontal=True, key="summary_metric")
plot(figures.head_summary_figure(summary_array(rows, metric), metric, parts), key="summary")

layer = settings.view.layer
plot(figures.head_split_figure([r for r in rows if r["layer"] == layer - 1], split_title(layer), parts), key="split")


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
        st.info(NO_REPEATS, icon=":material/repeat:")
    elif best:
        st.success(induction_found(pairs, best, ex.cfg.group_size), icon=":material/repeat:")
    else:
        st.info(induction_none(pairs, INDUCTION_MIN_SCORE), icon=":material/repeat:")
inside.weight_and_contribution(settings, ex, parts, rows)
open_head_in_step_through(len(run.layers), ex.cfg.n_heads, settings)
