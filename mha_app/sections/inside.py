"""Page sections for looking inside the heads: what each key really adds (Kobayashi et al. 2020), a head's queries
and keys as points (Yeh et al. 2023, AttentionViz) and attention followed through the layers (Abnar and Zuidema
2020). Each function draws one section from the example on view; the numbers come from mha_core through compute's
caches, and every sentence (each source's citation among them) from mha_app.copy.inside.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from mha_app.copy import inside as say
from mha_app.run import compute
from mha_app.state.example import Example
from mha_app.state.settings import Settings
from mha_app.ui.charts import plot
from mha_app.ui.layout import table_height
from mha_core import figures
from mha_core.analysis.contributions import contribution_shares, head_contributions, head_gates, parked_share
from mha_core.analysis.head_stats import Parts

CONTRIBUTION_LATEX = (r"\text{contribution}_{ts} = \lVert \alpha_{ts}\, v_s W^O_i \rVert,\qquad "
                      r"\text{share}_{ts} = \frac{\text{contribution}_{ts}}{\sum_{s'} \text{contribution}_{ts'}}")
ROLLOUT_LATEX = (r"\tilde A_l = r\, I + (1 - r)\, \bar A_l,\qquad "
                 r"R_l = \tilde A_l\, \tilde A_{l-1} \cdots \tilde A_1,\qquad r = 0.5")


# --- What each key really adds (Kobayashi et al. 2020) ------------------------------------------------------------

def query_contributions(settings: Settings, ex: Example, query: int | None = None, head: int | None = None
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For the head and query in focus (or `head`, `query`, 0-based), each key's (weight α_ts, size ‖v_s W^O_i‖,
    contribution, share); in a head switched off the sizes are the real ones (its values are computed as usual)
    and the contributions 0."""
    head = settings.view.head - 1 if head is None else head
    query = settings.view.query - 1 if query is None else query
    sizes = compute.value_sizes(settings.spec, ex.layer)                     # (h, m) ‖v_s W^O_i‖
    weights = ex.trace.weights[head, query].astype(np.float64)               # (m,) α_ts
    added = head_contributions(ex.trace, sizes, head, query)                 # (m,) 0 in a head switched off
    return weights, sizes[head], added, contribution_shares(added)


def weight_overstated(settings: Settings, ex: Example) -> tuple[int, int, float]:
    """Where a large weight adds least: the query whose strongest key (by weight) has the largest α_ts − share_ts,
    in the head in focus, or in any head where none of its queries falls say.GAP short; (head, query, gap),
    0-based. The head and query in focus where they tie. A query that adds nothing (every key blocked, a head
    switched off) is never chosen."""
    focus_head, focus = settings.view.head - 1, settings.view.query - 1
    sizes = compute.value_sizes(settings.spec, ex.layer)                     # (h, m) ‖v_s W^O_i‖
    gaps = []
    for head in range(len(sizes)):
        weights = ex.trace.weights[head].astype(np.float64)                  # (n, m) α_ts
        shares = contribution_shares(head_contributions(ex.trace, sizes, head))  # (n, m)
        rows, strongest = np.arange(len(weights)), weights.argmax(axis=1)    # (n,) each query's strongest key
        gaps.append(np.where(shares.sum(axis=1) > 0, weights[rows, strongest] - shares[rows, strongest], -np.inf))
    gaps = np.array(gaps)                                                    # (h, n)
    head = focus_head if gaps[focus_head].max() >= say.GAP else int(np.argmax(gaps.max(axis=1)))
    query = focus if gaps[head, focus] >= gaps[head].max() else int(np.argmax(gaps[head]))
    return head, query, float(gaps[head, query])


DIGITS = 3  # the table's numbers, rounded as the sentence above it rounds them (also what a copy of the table gives)
ALL_ROWS = 24  # up to this many keys the table shows every one without scrolling, in the order of the text


def contribution_sentence(settings: Settings, ex: Example, query: int | None = None) -> str:
    """copy.inside.contribution_sentence for the head in focus and the query in focus (or `query`, 0-based)."""
    head = settings.view.head - 1
    query = settings.view.query - 1 if query is None else query
    weights, _, added, shares = query_contributions(settings, ex, query)
    return say.contribution_sentence(head, query, ex.tokens, ex.keys, weights, added, shares,
                                     switched_off=not head_gates(ex.trace)[head])


def what_each_key_adds(settings: Settings, ex: Example) -> None:
    """The attention page's tab: the contribution, this example's numbers, and every key of the focused query."""
    head = settings.view.head
    st.markdown(say.key_adds_intro(head - 1))
    st.latex(CONTRIBUTION_LATEX)
    st.markdown(contribution_sentence(settings, ex))
    weights, sizes, added, shares = query_contributions(settings, ex)
    keys = np.arange(len(ex.keys))
    if len(keys) > ALL_ROWS:  # a long text: the keys that add most first, so the ones the sentence names are in view
        keys = keys[np.argsort(-shares, kind="stable")]
    if not head_gates(ex.trace)[head - 1]:  # switched off: 0 over 0 is no share, so the column is left blank
        shares = np.full_like(shares, np.nan)
    rounded = {name: np.round(values[keys], DIGITS) for name, values in
               (("weight α_ts", weights), ("‖v_s W^O_i‖", sizes), ("contribution", added), ("share", shares))}
    st.dataframe({"key": keys + 1, "token": [ex.keys[k] for k in keys], **rounded}, hide_index=True,
                 height=table_height(min(len(keys), ALL_ROWS)), column_config={
        "weight α_ts": st.column_config.ProgressColumn(min_value=0, max_value=1, format=f"%.{DIGITS}f"),
        "share": st.column_config.ProgressColumn(min_value=0, max_value=1, format=f"%.{DIGITS}f"),
        "‖v_s W^O_i‖": st.column_config.NumberColumn(format=f"%.{DIGITS}f"),
        "contribution": st.column_config.NumberColumn(format=f"%.{DIGITS}f"),
    })
    if len(keys) > ALL_ROWS:
        st.caption(say.sorted_keys_note(ALL_ROWS, len(keys)))
    st.caption(say.key_adds_caption(head - 1, settings.view.query - 1, bool(ex.cfg.bias)))


# --- Queries and keys as points (Yeh et al. 2023) -----------------------------------------------------------------

def _queries_curve(fig) -> int:
    return next(i for i, trace in enumerate(fig.data) if trace.name == "queries")


def _pick_query(key: str, curve: int) -> None:
    """A click on a query point (●) chooses that query, in the sidebar and the link."""
    points = st.session_state[key].selection.points
    chosen = [p["point_index"] for p in points if p["curve_number"] == curve]
    if chosen:
        st.session_state.query = chosen[0] + 1


def queries_and_keys(settings: Settings, ex: Example) -> None:
    """The attention page's tab: the focused head's plane beside its scores, the query in focus in both."""
    head, query = settings.view.head - 1, settings.view.query - 1
    plane = compute.qk_plane(settings.spec, ex.layer, head)
    st.markdown(say.plane_intro(plane, ex.cfg.d_k))
    fig = figures.qk_plane_figure(plane, ex.tokens, query, ex.key_tokens, group_size=ex.cfg.group_size)
    fig.update_traces(selected_marker_opacity=1, unselected_marker_opacity=1)  # a click chooses; it dims nothing
    key = f"qk_plane_{head}_{query}"  # a new chart for another query: no selection left over
    plot(fig, key=key, on_select=lambda: _pick_query(key, _queries_curve(fig)), selection_mode="points")
    st.caption(say.PLANE_CLICK)
    st.markdown(say.plane_reading(plane, query, ex.tokens))
    if plane.keys_before_rope is not None:
        st.markdown(say.ROPE_NOTE)
    st.markdown(say.true_scores_note(head))
    plot(figures.query_row_figure(ex.trace, head, query, ex.tokens, "scaled", ex.cfg.softmax_scale, ex.key_tokens),
         key="query_row")
    st.caption(say.PLANE_MADE + say.SOURCES["plane"])


# --- Weight and contribution on the special tokens (head summary) ---------------------------------------------------

def weight_and_contribution(settings: Settings, ex: Example, parts: Parts, rows: list[dict]) -> None:
    """The head summary's section: each head's share of weight beside its share of contribution on the tokens
    where heads park their attention."""
    weight = parked_share(rows, parts)                                                          # (layers, heads)
    contribution = parked_share(compute.contribution_summary(settings.spec, ex.layer), parts)  # (layers, heads)
    st.header(say.parked_header(parts))
    st.markdown(say.parked_intro(parts))
    plot(figures.special_share_figure(weight, contribution, parts), key="special_shares")
    if np.isnan(weight).all():
        return
    st.markdown(say.parked_sentence(parts, np.nanmean(weight), np.nanmean(contribution)))
    st.caption(say.parked_caption(parts))


# --- Attention rollout (Abnar and Zuidema 2020) -------------------------------------------------------------------

def attention_rollout(settings: Settings, ex: Example) -> None:
    """The model view's section: the rollout after some layers, with its assumptions."""
    run = ex.run
    flow = compute.rollout(settings.spec, ex.layer)                                             # (layers, n, n)
    st.header(say.ROLLOUT_HEADER)
    st.markdown(say.rollout_intro(len(run.layers)))
    st.latex(ROLLOUT_LATEX)
    st.caption(say.ROLLOUT_SYMBOLS)
    plot(figures.rollout_figure(flow, run.tokens), key="rollout")
    st.markdown(say.rollout_sentence(flow, run.tokens, settings.view.query - 1))
    with st.expander(say.ROLLOUT_ASSUMPTIONS_LABEL, expanded=True):
        st.markdown(say.ROLLOUT_ASSUMPTIONS)
    st.caption(say.SOURCES["rollout"])
