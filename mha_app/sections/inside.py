"""Page sections for looking inside the heads: what each key really adds (Kobayashi et al. 2020), a head's queries
and keys as points (Yeh et al. 2023, AttentionViz) and attention followed through the layers (Abnar and Zuidema
2020). Each function draws one section from the example on view; the numbers come from mha_core through compute's
caches, and each source is cited here once, for the attention page, the trained-model pages and the lesson.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from mha_app.copy.markup import quote
from mha_app.copy.models import FEED_FORWARD, RESIDUAL
from mha_app.run import compute
from mha_app.state.example import Example
from mha_app.state.settings import Settings
from mha_app.ui.charts import plot
from mha_core import QKPlane, figures
from mha_core.analysis.contributions import contribution_shares, head_contributions, head_gates, parked_share
from mha_core.analysis.head_stats import Parts

# One sentence each: who found it, and what.
SOURCES = {
    "contributions": "Source: Kobayashi et al. (2020), “Attention is Not Only a Weight: Analyzing Transformers with "
                     "Vector Norms”, who showed in BERT that much of the attention weight adds little once the size "
                     "of each value is counted.",
    "plane": "Source: Yeh et al. (2023), “AttentionViz: A Global View of Transformer Attention”, who draw all of a "
             "head's queries and keys together as points in one picture.",
    "rollout": "Source: Abnar and Zuidema (2020), “Quantifying Attention Flow in Transformers”, who introduced "
               "attention rollout.",
}

CONTRIBUTION_LATEX = (r"\text{contribution}_{ts} = \lVert \alpha_{ts}\, v_s W^O_i \rVert,\qquad "
                      r"\text{share}_{ts} = \frac{\text{contribution}_{ts}}{\sum_{s'} \text{contribution}_{ts'}}")
ROLLOUT_LATEX = (r"\tilde A_l = r\, I + (1 - r)\, \bar A_l,\qquad "
                 r"R_l = \tilde A_l\, \tilde A_{l-1} \cdots \tilde A_1,\qquad r = 0.5")


def _token(tokens: list[str], position: int) -> str:
    """A token as the pages name it: its position (from 1) and its text, quoted."""
    return f"{position + 1} {quote(tokens[position])}"


# --- What each key really adds (Kobayashi et al. 2020) ------------------------------------------------------------

def query_contributions(settings: Settings, ex: Example) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For the head and query in focus, each key's (weight α_ts, size ‖v_s W^O_i‖, contribution, share); in a head
    switched off the sizes are the real ones (its values are computed as usual) and the contributions 0."""
    head, query = settings.view.head - 1, settings.view.query - 1
    sizes = compute.value_sizes(settings.spec, ex.layer)                     # (h, m) ‖v_s W^O_i‖
    weights = ex.trace.weights[head, query].astype(np.float64)               # (m,) α_ts
    added = head_contributions(ex.trace, sizes, head, query)                 # (m,) 0 in a head switched off
    return weights, sizes[head], added, contribution_shares(added)


GAP = 0.05  # a key whose weight exceeds its share by this much is named: "a large weight can add little"
DIGITS = 3  # the table's numbers, rounded as the sentence above it rounds them (also what a copy of the table gives)
ALL_ROWS = 24  # up to this many keys the table shows every one without scrolling, in the order of the text
ROW_PX = 35  # Streamlit's height of a table row (and of its header)


def contribution_sentence(settings: Settings, ex: Example) -> str:
    """This example's numbers in one or two sentences: the focused query's strongest key by weight, what it adds,
    and the key that adds most."""
    head, query = settings.view.head - 1, settings.view.query - 1
    weights, _, added, shares = query_contributions(settings, ex)
    who = f"In head {head + 1}, query {_token(ex.tokens, query)}"
    if not weights.any():
        return f"{who} sees no key (all are blocked), so nothing is added."
    if not head_gates(ex.trace)[head]:
        return (f"{who} has weights, but head {head + 1} is switched off: Step 3 multiplies its output by 0, so none "
                "of its keys reaches the output. The table shows its weights and the sizes $\\|v_s W^O_i\\|$ as "
                "computed; every contribution is 0, and a row of zeros has no shares.")
    if not added.any():
        return f"{who} has weights, but every key's vector $v_s W^O_i$ is 0 here, so it adds nothing."
    strongest, most = int(np.argmax(weights)), int(np.argmax(shares))
    text = (f"{who} puts its largest weight, {weights[strongest]:.3f}, on key {_token(ex.keys, strongest)}; that key "
            f"adds a share of {shares[strongest]:.3f} of what the query receives.")
    if most != strongest:
        text += (f" The key that adds most is {_token(ex.keys, most)}: a share of {shares[most]:.3f}, with a weight "
                 f"of {weights[most]:.3f}.")
    gap = int(np.argmax(weights - shares))
    if weights[gap] - shares[gap] >= GAP and gap != strongest:
        text += (f" Key {_token(ex.keys, gap)} has a weight of {weights[gap]:.3f} but adds a share of only "
                 f"{shares[gap]:.3f}: its vector $v_s W^O_i$ is short.")
    return text


def what_each_key_adds(settings: Settings, ex: Example) -> None:
    """The attention page's tab: the contribution, this example's numbers, and every key of the focused query."""
    head = settings.view.head
    st.markdown(
        "The weight $\\alpha_{ts}$ says how much query $t$ looks at key $s$. What key $s$ then adds to the query's "
        f"output is its value $v_s$ times that weight, passed through head {head}'s block of $W^O$ (the output "
        "matrix that mixes the heads, Step 4): the vector "
        "$\\alpha_{ts}\\, v_s W^O_i$. The length of that vector is the key's **contribution**. A key with a large "
        "weight but a short vector $v_s W^O_i$ "
        "adds little. The **contributions** button of the explorer above shows every head this way: each "
        "contribution as a share of its row, so that each row sums to 1, as the weights do, on the same colour scale."
    )
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
                 height=ROW_PX * (min(len(keys), ALL_ROWS) + 1) + 3, column_config={
        "weight α_ts": st.column_config.ProgressColumn(min_value=0, max_value=1, format=f"%.{DIGITS}f"),
        "share": st.column_config.ProgressColumn(min_value=0, max_value=1, format=f"%.{DIGITS}f"),
        "‖v_s W^O_i‖": st.column_config.NumberColumn(format=f"%.{DIGITS}f"),
        "contribution": st.column_config.NumberColumn(format=f"%.{DIGITS}f"),
    })
    if len(keys) > ALL_ROWS:
        st.caption(f"Sorted by share, largest first; the table shows {ALL_ROWS} of the {len(keys)} keys at a time.")
    bias = " The bias b_O is added once to the whole output, so it belongs to no key." if ex.cfg.bias else ""
    st.caption(f"Query {settings.view.query} in head {head}, every key.{bias} " + SOURCES["contributions"])


# --- Queries and keys as points (Yeh et al. 2023) -----------------------------------------------------------------

def plane_reading(plane: QKPlane, query: int, tokens: list[str]) -> str:
    """How to read the plane and how good it is here: the arrow's order and the distance's order for this query."""
    who = f"query {_token(tokens, query)}"
    text = (f"**How to read it.** Follow the arrow from ✚ (marked 0: where a vector of zeros would lie) to the "
            f"highlighted {who}. The further a key lies along that arrow, the higher its score, and so its weight. ")
    if plane.visible(query).sum() < 2:
        return text + f"Here {who} sees only one key, so there is no order to keep."
    return (text + f"In this plane the arrow puts the keys of {who} in the right order for "
            f"**{plane.order_kept(query):.0%}** of the pairs of keys (50 % would be chance). Ordered by distance "
            f"(nearer = higher score), they are right for **{plane.order_kept(query, 'distance'):.0%}** of the pairs. "
            f"{better_reading(plane, query)}\n\n"
            + (_whole_space(plane.axes.shape[1]) if whole_space(plane) else
               "**Neither reading is exact.** The score is a dot product over all d_k numbers: it grows with the "
               "length of the key as well as with its direction, so near the query does not always mean a high score; "
               f"and the plane leaves out {1 - plane.explained:.0%} of the spread, so even the arrow can swap two "
               "keys."))


def _whole_space(d_k: int) -> str:
    return (f"**Only the arrow is exact here.** With d_k = {d_k} the plane is the whole space, so the order along the "
            "arrow is exactly the order of the scores. Distance is not exact: the score grows with the length of the "
            "key as well as with its direction, so near the query does not always mean a high score.")


def whole_space(plane: QKPlane) -> bool:
    """Whether the plane holds every direction of the queries and keys (d_k ≤ 2): then it loses nothing."""
    return plane.axes.shape[1] <= 2


def better_reading(plane: QKPlane, query: int) -> str:
    """Which of the plane's two readings, the arrow or the distance, put this query's keys in order better here:
    a verdict read off the numbers, since either can win on a given example."""
    arrow, near = (plane.order_kept(query, by) for by in ("dot", "distance"))
    if f"{arrow:.0%}" == f"{near:.0%}":  # equal as the page shows them
        return "On this example the two readings do equally well."
    return "On this example " + ("the arrow does better than distance." if arrow > near else
                                 "distance does better than the arrow.")


def plane_intro(plane: QKPlane, d_k: int) -> str:
    intro = (f"Head {plane.head + 1} compares each query with each key by a dot product. Here all its queries (●) "
             f"and keys (◆) are points in one picture. ")
    if whole_space(plane):
        return intro + (f"Each has d_k = {d_k} number{'s' if d_k > 1 else ''}, so the picture holds them whole, "
                        "turned so that the points spread most along the first direction: nothing is lost.")
    return intro + (f"Each has d_k = {d_k} numbers, so the picture keeps only the two directions in which the points "
                    "spread most (principal component analysis). This plane keeps "
                    f"**{plane.explained:.0%}** of the spread; the rest is lost.")


ROPE_NOTE = ("**Keys before and after the rotary turn.** This model turns every query and key by its position "
             "(RoPE) before the dot product. An open circle (○) is a key before its turn, joined by a grey line to "
             "where the turn took it (◆). The scores come from the turned keys.")
PLANE_MADE = ("Before the projection, every query is multiplied by a number c and every key by 1/c, so that both "
              "clouds spread alike, and all keys are moved by one vector, so that both clouds share a centre. Neither "
              "changes any weight: a dot product keeps its value under c and 1/c, and softmax ignores a number added "
              "to a whole row. ")


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
    st.markdown(plane_intro(plane, ex.cfg.d_k))
    fig = figures.qk_plane_figure(plane, ex.tokens, query, ex.key_tokens, group_size=ex.cfg.group_size)
    fig.update_traces(selected_marker_opacity=1, unselected_marker_opacity=1)  # a click chooses; it dims nothing
    key = f"qk_plane_{head}_{query}"  # a new chart for another query: no selection left over
    plot(fig, key=key, on_select=lambda: _pick_query(key, _queries_curve(fig)), selection_mode="points")
    st.caption("Click a query (●) to choose it: here, in the scores below and in the explorer above.")
    st.markdown(plane_reading(plane, query, ex.tokens))
    if plane.keys_before_rope is not None:
        st.markdown(ROPE_NOTE)
    st.markdown(f"The true scores of head {head + 1}: the row of the same query is outlined, in the colour of the "
                "highlighted query above.")
    plot(figures.query_row_figure(ex.trace, head, query, ex.tokens, "scaled", ex.cfg.softmax_scale, ex.key_tokens),
         key="query_row")
    st.caption(PLANE_MADE + SOURCES["plane"])


# --- Weight and contribution on the special tokens (head summary) ---------------------------------------------------

def parked_tokens(parts: Parts) -> str:
    """The tokens where heads park their attention, in words: "[CLS] and [SEP]", "the first token"."""
    return "the first token" if parts.kind == "decoder" else " and ".join(parts.labels[p] for p in parts.parked)


def weight_and_contribution(settings: Settings, ex: Example, parts: Parts, rows: list[dict]) -> None:
    """The head summary's section: each head's share of weight beside its share of contribution on the tokens
    where heads park their attention."""
    weight = parked_share(rows, parts)                                                          # (layers, heads)
    contribution = parked_share(compute.contribution_summary(settings.spec, ex.layer), parts)  # (layers, heads)
    where = parked_tokens(parts)
    st.header(f"What the weight on {where} really adds")
    parking = ("Many heads put most of their weight on the first token (an attention sink)." if parts.kind == "decoder"
               else f"Many heads put most of their weight on {where} (*parks on* in the table).")
    st.markdown(
        f"{parking} A weight alone does not say what a key adds to the output: that is the key's value times its "
        "weight, passed through $W^O$ (the attention page's tab *What each key adds*). Left: each head's share of "
        f"weight on {where}. Right: its share of **contribution**, what those keys really add."
    )
    plot(figures.special_share_figure(weight, contribution, parts), key="special_shares")
    if np.isnan(weight).all():
        return
    mean_weight, mean_contribution = np.nanmean(weight), np.nanmean(contribution)
    less = "less than" if mean_contribution < mean_weight else "more than"
    st.markdown(f"On this text, a head puts on average **{mean_weight:.0%}** of its weight on {where}, but that "
                f"weight adds **{mean_contribution:.0%}** of what it passes on: {less} the weight says.")
    st.caption(SOURCES["contributions"] + (" Their finding is about BERT; for a decoder's first token the right "
                                           "panel shows what happens on your text." if parts.kind == "decoder" else ""))


# --- Attention rollout (Abnar and Zuidema 2020) -------------------------------------------------------------------

ROLLOUT_ASSUMPTIONS = (
    "Rollout makes four simplifications:\n"
    "1. In each layer, tokens mix by the **mean of the heads' attention weights**: every head counts the same, "
    "however much it adds.\n"
    "2. The **residual connection** adds each token's own vector back after attention. Rollout counts it as keeping "
    "**half** of each token: each layer's mixing is $\\tilde A = 0.5\\, I + 0.5\\, \\bar A$, where $\\bar A$ is the "
    "mean attention and $I$ (the identity) "
    "keeps every token where it is.\n"
    "3. The layers' mixings are **multiplied** through, layer after layer.\n"
    "4. It **leaves out** the rest of each layer: the feed-forward network and the normalisation, which work on each "
    "token alone, and the size of each value (what each key really adds: the attention page's tab *What each key "
    "adds*).\n\n"
    "So rollout shows where information **can** come from, not a measured cause."
)


def rollout_intro(n_layers: int) -> str:
    return ("One head's weights show one layer. Attention rollout follows the weights through all "
            f"{n_layers} layers: row t says how much of each input token (column s) has reached position t after "
            "layer l. Each row sums to 1.")


def rollout_sentence(flow: np.ndarray, tokens: list[str], t: int) -> str:
    """This text's numbers: what position t (0-based, the query in focus) holds after the last layer, of its own
    token and of the other input token that reached it most."""
    row = flow[-1, t]                                                                           # (n,)
    if len(tokens) < 2:
        return f"On this text, the only position keeps all of its own token: {row[t]:.0%}."
    s = int(np.argmax(np.where(np.arange(len(row)) == t, -1.0, row)))                         # the largest other
    return (f"On this text, after the last layer, position {_token(tokens, t)} holds {row[t]:.0%} of its own "
            f"token; the other input token that reached it most is {_token(tokens, s)}, with {row[s]:.0%}.")


def attention_rollout(settings: Settings, ex: Example) -> None:
    """The model view's section: the rollout after some layers, with its assumptions."""
    run = ex.run
    flow = compute.rollout(settings.spec, ex.layer)                                             # (layers, n, n)
    st.header("Across the layers: attention rollout")
    st.markdown(rollout_intro(len(run.layers)))
    st.latex(ROLLOUT_LATEX)
    st.caption("$\\bar A_l$: the mean of layer $l$'s heads' attention weights; $I$: the identity, which keeps every "
               f"token where it is; $r$: the share kept by the residual connection ({RESIDUAL}); $R_l$: the rollout "
               "after layer $l$.")
    plot(figures.rollout_figure(flow, run.tokens), key="rollout")
    st.markdown(rollout_sentence(flow, run.tokens, settings.view.query - 1))
    with st.expander("What rollout assumes", expanded=True):
        st.markdown(ROLLOUT_ASSUMPTIONS)
    st.caption(SOURCES["rollout"])


# --- The lesson's screens: one idea each, shorter than the pages' sections -----------------------------------------

def plane_in_brief(plane: QKPlane, query: int, tokens: list[str]) -> str:
    """The lesson's text for the plane: what it shows, the arrow, and how good both readings are here."""
    who = f"query {_token(tokens, query)}"
    text = (f"Head {plane.head + 1}'s queries (●) and keys (◆) as points in one plane, the one that keeps the most "
            f"of their spread: here {plane.explained:.0%}. Follow the arrow from 0 (✚) to the highlighted {who}: the "
            "further along it a key lies, the higher its score. Lines join the query to its strongest keys, each as "
            "wide as the key's weight.")
    if plane.keys_before_rope is not None:
        text += (" An open circle (○) is a key before its rotary turn (RoPE), joined by a grey line to where the turn "
                 "took it (◆).")
    if plane.visible(query).sum() < 2:
        return text
    return (text + f" Here the arrow puts its keys in the right order for {plane.order_kept(query):.0%} of the pairs "
            f"(50 % is chance), and distance (nearer = higher score) for {plane.order_kept(query, 'distance'):.0%}. "
            + better_reading(plane, query))


CONTRIBUTION_IN_BRIEF = (
    "The weight says how much a query looks at a key. What the key **adds** to the query's output is its value times "
    "that weight, passed through $W^O$: a vector, whose length is the key's **contribution**. A large weight on a key "
    "with a short value adds little."
)


ROLLOUT_IN_ONE = ("Rollout (Abnar and Zuidema 2020) follows attention back through the layers of a trained model: "
                  "it multiplies the layers' attention weights, averaged over the heads, to estimate how much of "
                  "each input token has reached each position.")


def rollout_in_brief(n_layers: int) -> str:
    return (f"One layer's weights show one step of mixing. Rollout follows all {n_layers} layers: it averages each "
            f"layer's heads, keeps half of each token for the residual connection ({RESIDUAL}), and multiplies the "
            "layers. Row t says how much of each input token has reached position t. It ignores the feed-forward "
            f"network ({FEED_FORWARD}) and the sizes of the values: it shows where information can come from, not a "
            "measured cause.")
