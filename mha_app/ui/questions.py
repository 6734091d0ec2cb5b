"""Predict, then reveal: a question about the example on view, and what the page keeps back until it is answered."""

from __future__ import annotations

import streamlit as st

from mha_app.copy.markup import quote
from mha_app.copy.questions import NO_ANSWER, WAITS, answered_line, ask_line, not_yet
from mha_app.run.view import view
from mha_core.teaching import questions

HELD = "symbols_held"  # session key: the symbols whose meanings wait for a question on this run's page


WAITING = "question_waiting"  # session key: whether a question waits on this run's page (hold_back was called)


def new_page_run() -> None:
    """Before each run of a page: nothing is held back until the page asks its question (hold_back)."""
    st.session_state[HELD] = set()
    st.session_state[WAITING] = False


def hold_back(names: tuple[str, ...]) -> None:
    """A question waits on this page: for the rest of this run, keep these symbols' meanings out of 'Symbols on
    this page' (together they give its answer: Question.symbols), and the engine's code (code_for_step), whose
    shape comments and note give the shapes the step's question asks about."""
    st.session_state.setdefault(HELD, set()).update(names)
    st.session_state[WAITING] = True


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
        st.markdown(f":material/lightbulb: {answered_line(q.prompt, q.answer, st.session_state[state] == 'right')}")
        if q.why:
            st.caption(q.why)
        return True
    hold_back(q.symbols)
    with st.container(border=True):
        st.markdown(f":material/lightbulb: {ask_line(q.prompt)}")
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
            st.warning(not_yet(reason) if st.session_state[f"{state}_tried"] else NO_ANSWER, icon=":material/replay:")
        st.caption(WAITS)
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
