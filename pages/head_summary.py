"""Head summary: per layer and head, how focused it is and where its attention goes."""

import math

import streamlit as st

from mha_app import experiments
from mha_app.toolkit import needs_pretrained, open_head_in_step_through, plot, view
from mha_core import figures
from mha_core.head_stats import (
    COLUMNS,
    DOMINANT_MIN_SHARE,
    LABELS,
    SHARE_COLUMNS,
    dominant_pattern,
    head_summary,
    kind_counts,
    summary_array,
)

settings, ex = view()
st.title("Head summary: what each head does")
run = needs_pretrained(ex)
st.markdown(
    "Each number below is an average over the **words of your sentence as queries**: [CLS] and [SEP] are left out "
    "as queries (they still count as keys). **Entropy** (in bits) says how spread out a query's attention is: 0 "
    "means all of its weight is on one key, which may be the token itself; the most is log2(n) bits, every key "
    "weighted the same, so it grows with sentence length. The **shares** split each query's attention into six "
    "parts that do not overlap and **sum to 1**, taken in this order: [CLS], [SEP], the token itself, the previous "
    "token, the next token, and elsewhere (every other word). A key counts in the first part that fits: the first "
    "word's previous token is [CLS], so that weight counts as [CLS], not as previous."
)
experiments.model_ablation_note(settings)
rows = head_summary(run)
counts = kind_counts(rows)
for col, (kind, count) in zip(st.columns(len(counts)), counts.items(), strict=True):
    col.metric(f"heads: {kind}", f"{count} of {len(rows)}")
metric = st.radio("Show", COLUMNS, format_func=LABELS.get, horizontal=True, key="summary_metric")
plot(figures.head_summary_figure(summary_array(rows, metric), metric), key="summary")

layer = settings.view.layer
plot(figures.head_split_figure([r for r in rows if r["layer"] == layer - 1],
                               f"Layer {layer} (chosen in the sidebar): where each head's attention goes (each bar "
                               "sums to 1)"), key="split")


def cell(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)


table = [{"layer": r["layer"] + 1, "head": r["head"] + 1, "pattern": dominant_pattern(r),
          **{name: cell(r[name]) for name in COLUMNS}} for r in rows]
columns = {name: st.column_config.ProgressColumn(LABELS[name], min_value=0, max_value=1, format="%.2f",
                                                  width="small") for name in SHARE_COLUMNS}
columns["entropy"] = st.column_config.NumberColumn(LABELS["entropy"], format="%.3f", width="small")
columns["layer"] = st.column_config.NumberColumn("layer", width="small")
columns["head"] = st.column_config.NumberColumn("head", width="small")
st.dataframe(table, hide_index=True, width="stretch", height=420, column_config=columns)
st.caption(
    f"**pattern** names where more than {DOMINANT_MIN_SHARE:.0%} of a head's attention goes, on average: *parks on "
    "[CLS]* or *parks on [SEP]* ([CLS] and [SEP] counted together, the larger named; the kind *special token*), "
    "*self*, *previous token* or *next token* (*positional*), *other words* (*content or broad*); *mixed* when no "
    "part takes more than half."
)
st.markdown(
    "**How to read the patterns.** *Special token*: the head puts most of its weight on [CLS] or [SEP]. Clark et "
    "al. (2019, “What Does BERT Look At?”) found many heads of BERT doing this with [SEP] and argue that it works "
    "as a **no-op**: a place to put the attention when the head's own pattern does not apply. *Positional*: the "
    "head looks at a neighbour (or at the token itself) whatever the words are; Voita et al. (2019) call heads "
    "that attend to an adjacent token positional heads. *Content or broad*: the weight goes to other words; that "
    "may be a content pattern (linking related words) or attention spread over the whole sentence. A low entropy "
    "means focused, a high one broad, and the head's heatmap on the attention page shows which words it links.\n\n"
    "**What these numbers can and cannot show.** They say where the weight goes, by position, on this one "
    "sentence. They cannot say what a head computes, nor whether the model needs it: a large weight on a token "
    "whose value vector is small passes on little (the output page shows how much each head adds), and Michel et "
    "al. (2019) removed many heads of trained models with little loss. A head's pattern can change with the "
    "sentence: try the examples in the sidebar."
)
open_head_in_step_through(len(run.layers), ex.cfg.n_heads, settings)
