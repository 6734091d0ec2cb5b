"""What the classroom pages share: predict-then-reveal, the pickers of one cell, that cell worked by hand, the cost of
heads for this example. The numbers come from mha_core (questions, worked, cost); this module only lays them out.
"""

from __future__ import annotations

import streamlit as st

from mha_core import cost
from mha_core.figures import token_labels
from mha_core.figures.lesson import dot_product_figure, flops_figure
from mha_core.teaching import questions
from mha_core.teaching.worked import DECIMALS, WorkedCell, fmt, latex_lines, same_to, work_cell

from . import widgets
from .cost_table import step_names
from .example import Example
from .settings import Settings, control
from .text import quote
from .toolkit import hold_back, plot, view


def answered(kind: str) -> bool:
    """Whether the student has answered (or revealed) the question `kind` in this session, on any page."""
    return bool(st.session_state.get(f"answered_{kind}"))


def predict(kind: str, key: str | None = None) -> bool:
    """Predict, then reveal: a question (questions.KINDS) about this example, answered by a pick or a number.

    Returns whether the student has answered this kind of question (or pressed Reveal) in this session: until
    then, the page keeps back what would give the answer away (the figure, the shapes, the formula).
    """
    settings, ex = view()
    labels = [quote(t, 40) for t in ex.tokens]
    key_labels = None if ex.key_tokens is None else [quote(t, 40) for t in ex.key_tokens]
    q = questions.ask(kind, ex.trace, ex.weights, labels, settings.view.head - 1, settings.view.query - 1, key_labels,
                      ex.cfg.scale, key=min(settings.view.key, len(ex.keys)) - 1)
    state = f"answered_{key or kind}"
    if st.session_state.get(state):  # answered: one line, so that the figure it opens fits on the screen
        right = "Right! " if st.session_state[state] == "right" else ""
        st.markdown(f":material/lightbulb: {q.prompt} {right}Answer: {q.answer}")
        if q.why:
            st.caption(q.why)
        return True
    hold_back(q.symbols)
    with st.container(border=True):
        st.markdown(f":material/lightbulb: **Predict first.** {q.prompt}")
        if q.choices:
            st.pills("Your answer", q.choices, key=f"{state}_given", label_visibility="collapsed")
        else:
            st.number_input("Your answer", min_value=0, value=None, step=1, key=f"{state}_given",
                            placeholder="type a whole number", label_visibility="collapsed")
        check, reveal = st.columns([1, 1])
        check.button("Check my answer", key=f"{state}_check", width="stretch", on_click=_check, args=(state, q))
        reveal.button("Reveal the answer", key=f"{state}_reveal", width="stretch", type="tertiary",
                      on_click=_settle, args=(state, "revealed"))
        if st.session_state.get(f"{state}_tried") is not None:
            reason = q.reason(st.session_state.get(f"{state}_given"))
            st.warning(f"Not yet{': ' + reason if reason else ''}. Try again, or reveal the answer."
                       if st.session_state[f"{state}_tried"] else "Pick or type an answer first.",
                       icon=":material/replay:")
        st.caption("The figure that shows the answer appears once you answer or reveal.")
    return False


def _check(state: str, q: questions.Question) -> None:
    """Button callback: a right answer opens the page; a wrong or missing one is said so."""
    given = st.session_state.get(f"{state}_given")
    if given is not None and q.check(given):
        _settle(state, "right")
    else:
        st.session_state[f"{state}_tried"] = given is not None


def _settle(state: str, how: str) -> None:
    """Button callback: the question is answered ("right") or revealed, for the rest of the session."""
    st.session_state[state] = how
    st.session_state.pop(f"{state}_tried", None)


def _copy(source: str, target: str) -> None:
    st.session_state[target] = st.session_state[source]


def _key_to_link() -> None:
    st.query_params["key"] = str(st.session_state.cell_key)


def pick_cell(settings: Settings, ex: Example) -> tuple[int, int, int]:
    """Head, query and key pickers side by side, 0-based result. Head and query move the sidebar's selection; the key
    goes to the link by its callback (a selectbox bound to the link would write the token's text there)."""
    h, n, m = ex.trace.weights.shape
    names = [f"{i + 1} · {token}" for i, token in enumerate(ex.tokens)]  # selectbox options are plain text
    key_names = [f"{j + 1} · {token}" for j, token in enumerate(ex.keys)]
    if settings.view.key > m:
        st.query_params["key"] = str(m)
    st.session_state.cell_head, st.session_state.cell_query = settings.view.head, settings.view.query
    st.session_state.cell_key = min(settings.view.key, m)
    left, middle, right = st.columns(3)
    head = left.selectbox("Head", list(range(1, h + 1)), key="cell_head", on_change=_copy, args=("cell_head", "head"))
    query = middle.selectbox(control("query").label, list(range(1, n + 1)), key="cell_query",
                             format_func=lambda i: names[i - 1], on_change=_copy, args=("cell_query", "query"))
    key = right.selectbox(control("key").label, list(range(1, m + 1)), key="cell_key",
                          format_func=lambda j: key_names[j - 1], on_change=_key_to_link, help=control("key").help)
    return head - 1, query - 1, key - 1


def scaled_latex(numerator: str, cfg) -> str:
    """numerator / sqrt(d_k) in LaTeX, or numerator x scale when the configuration sets another scale."""
    return rf"\frac{{{numerator}}}{{\sqrt{{{cfg.d_k}}}}}" if cfg.scale is None else rf"{numerator} \times {cfg.scale:g}"


def worked(ex: Example, head: int, query: int, key: int) -> WorkedCell:
    cfg = ex.cfg
    return work_cell(ex.trace, head, query, key, cfg.softmax_scale, default_scale=cfg.scale is None)


def show_worked(cell: WorkedCell, ex: Example, figure: bool = True) -> None:
    """The cell's arithmetic line by line, and the engine's own cell beside it; first the terms as a figure."""
    if figure:
        query_label, key_label = token_labels(ex.tokens)[cell.query], token_labels(ex.keys)[cell.key]
        plot(dot_product_figure(cell, query_label, key_label), key="dot_product")
    for line in latex_lines(cell):
        st.latex(line)
    sd, wd = cell.score_decimals, cell.weight_decimals
    same = same_to(cell.score, cell.engine_score, sd) and same_to(cell.weight, cell.engine_weight, wd)
    message = (f"The engine's own cell: score {fmt(cell.engine_score, sd)}, weight {fmt(cell.engine_weight, wd)}; "
               f"by hand: {fmt(cell.score, sd)} and {fmt(cell.weight, wd)}.")
    if same:
        st.success(message + " The same to the last digit shown.", icon=":material/check_circle:")
    else:
        st.error(message + " They differ.", icon=":material/error:")
    if min(sd, wd) < DECIMALS:
        st.caption(f"Shown to fewer than {DECIMALS} decimals where the engine's float32 arithmetic (numbers kept to "
                   f"about 7 significant digits) rounds the {DECIMALS}th decimal the other way.")


def row_table(cell: WorkedCell, tokens: list[str]) -> None:
    """Every key of the query's row (tokens: the keys'): its score, exponential and weight; the worked key marked."""
    st.dataframe({
        "key": list(range(1, len(tokens) + 1)), "token": tokens,
        "score z_ts": [fmt(s) for s in cell.scores],
        "e^(z_ts − max)": [fmt(e) for e in cell.exps],
        "attention weight α_ts": [fmt(w) for w in cell.weights],
        "note": ["◀ this cell" if j == cell.key else "blocked" if cell.blocked[j] else "" for j in range(len(tokens))],
    }, hide_index=True, height=min(420, 35 * len(tokens) + 38))


def step_costs(ex: Example) -> tuple[dict[str, int], dict[str, int], dict[str, int], dict[str, int] | None]:
    """(sizes, multiply-adds with one head of d_model, with the example's heads each with its own K/V head, and with
    them sharing the example's K/V heads, None without sharing), from the engine's arrays. The question asks about
    splitting alone (questions.heads_cost), so `many` is counted without the sharing."""
    s = cost.trace_sizes(ex.trace)
    one = cost.attention_flops(s["n"], s["m"], s["d_model"], 1)
    many = cost.attention_flops(s["n"], s["m"], s["d_model"], s["n_heads"])
    shared = (cost.attention_flops(s["n"], s["m"], s["d_model"], s["n_heads"], s["n_kv_heads"])
              if s["n_kv_heads"] < s["n_heads"] else None)
    return s, one, many, shared


def plot_step_costs(ex: Example, enlarge=None) -> None:
    s, one, many, shared = step_costs(ex)
    names = step_names(ex.key_tokens is not None, s["n_heads"] // s["n_kv_heads"])
    fig = flops_figure(one, many, s["d_model"], s["n_heads"], names, shared, s["n_kv_heads"])
    plot(enlarge(fig) if enlarge else fig, key="flops")


def setting_widget(name: str, container=st):
    """The widget of a page setting (a number or a choice), made from its field and kept in the link."""
    return widgets.choice(container, name) if control(name).choices else widgets.number(container, name)
