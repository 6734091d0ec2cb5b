"""Predict, then reveal: a question about the example on view, and what the page keeps back until it is answered."""

from __future__ import annotations

import dataclasses

import streamlit as st

from mha_app.copy.markup import quote
from mha_app.copy.questions import NO_ANSWER, WAITS, answered_line, ask_line, not_yet
from mha_app.run.view import view
from mha_app.state import asked as state_asked
from mha_app.state.asked import Asked
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


ANSWERS = "answers"  # session key: {Asked: "right" or "revealed"}, each question answered in this session
TRIES = "tries"      # session key: {Asked: the answer last checked (None: none given)}, while it is not yet right
SHOWN = "shown"      # how a question stands when questions do not wait (Ask before showing unticked)


def _how(asked: Asked, ask: bool) -> str | None:
    """How this question stands: "right", "revealed", SHOWN (not asked: its answer shown), or None (it waits)."""
    return st.session_state.get(ANSWERS, {}).get(asked) or (None if ask else SHOWN)


def _asked(kind: str) -> Asked:
    settings, ex = view()
    return state_asked.asked(kind, settings, len(ex.keys))


def answered(kind: str) -> bool:
    """Whether the question `kind` about the example on view no longer waits: answered or revealed in this session
    (on any page), or not asked at all (Ask before showing unticked)."""
    return _how(_asked(kind), view()[0].view.ask) is not None


def predict(kind: str, key: str | None = None) -> bool:
    """Predict, then reveal: a question (questions.KINDS) about this example, answered by a pick or a number.

    Returns whether the question no longer waits: answered or revealed in this session, or not asked (Ask before
    showing unticked), when the page shows it with its answer. Until then, the page keeps back what would give the
    answer away (the figure, the shapes, the formula). The answer counts for this question alone (state.asked:
    this example, layer, head and query); key names its widgets (default: the kind).
    """
    settings, ex = view()
    labels = [quote(t, 40) for t in ex.tokens]
    key_labels = None if ex.key_tokens is None else [quote(t, 40) for t in ex.key_tokens]
    q = questions.ask(kind, ex.trace, ex.weights, labels, settings.view.head - 1, settings.view.query - 1, key_labels,
                      ex.cfg.scale, key=min(settings.view.key, len(ex.keys)) - 1)
    asked = state_asked.asked(kind, settings, len(ex.keys))
    state = f"answered_{key or kind}"
    how = _how(asked, settings.view.ask)
    if how:  # answered, or not asked: one line, so that the figure it opens fits on the screen
        st.markdown(f":material/lightbulb: {answered_line(q.prompt, q.answer, how == 'right')}")
        if q.why:  # on a projector the reason carries the idea: body type; a step page keeps its words to one screen
            (st.markdown if settings.view.present else st.caption)(q.why)
        return True
    _given_for(state, asked)
    hold_back(q.symbols)
    with st.container(border=True):
        st.markdown(f":material/lightbulb: {ask_line(q.prompt)}")
        if q.choices:
            st.pills("Your answer", q.choices, key=f"{state}_given", label_visibility="collapsed")
        else:
            st.number_input("Your answer", min_value=0, value=None, step=1, key=f"{state}_given",
                            placeholder="type a whole number", label_visibility="collapsed")
        check, reveal = st.columns([1, 1])
        check.button("Check my answer", key=f"{state}_check", width="stretch", on_click=_check,
                     args=(state, q, asked))
        reveal.button("Reveal the answer", key=f"{state}_reveal", width="stretch", type="tertiary",
                      on_click=_settle, args=(asked, "revealed"))
        tries = st.session_state.get(TRIES, {})
        if asked in tries:
            given = tries[asked]
            st.warning(NO_ANSWER if given is None else not_yet(q.reason(given)), icon=":material/replay:")
        st.caption(WAITS)
    return False


def _given_for(state: str, asked: Asked) -> None:
    """The answer box of this question: empty for a question not asked before (another head, model, ...), and the
    answer last checked for one asked before whose box was not on the last run (the lesson's Back and Next)."""
    given, last = f"{state}_given", f"{state}_asked"
    if st.session_state.get(last) != asked:
        st.session_state.pop(given, None)
    st.session_state[last] = asked
    if given not in st.session_state and st.session_state.get(TRIES, {}).get(asked) is not None:
        st.session_state[given] = st.session_state[TRIES][asked]


def _check(state: str, q: questions.Question, asked: Asked) -> None:
    """Button callback: a right answer opens the page; a wrong or missing one is said so, until it is right."""
    given = st.session_state.get(f"{state}_given")
    if given is not None and q.check(given):
        _settle(asked, "right")
    else:
        st.session_state.setdefault(TRIES, {})[asked] = given


def _settle(asked: Asked, how: str) -> None:
    """Button callback: this question is answered ("right") or revealed, for the rest of the session."""
    st.session_state.setdefault(ANSWERS, {})[asked] = how
    st.session_state.get(TRIES, {}).pop(asked, None)


def explored(kind: str, head: int, query: int, layer: int | None = None) -> None:
    """Callback, before the rerun: the student moved to another head, query or layer inside a figure that the answer
    to the question `kind` opened. That figure shows the new question's answer as it is drawn, so the new question
    counts as revealed: exploring is not asked again at each click (layer None: unchanged)."""
    shown = st.session_state.get("view")  # (settings, example) of the run the figure was drawn in
    if shown is None:
        return
    settings, ex = shown
    before = state_asked.asked(kind, settings, len(ex.keys))
    if _how(before, settings.view.ask) is None:  # the figure was not open: nothing was seen
        return
    moved = dataclasses.replace(before, head=head, query=query, layer=before.layer if layer is None else layer)
    st.session_state.setdefault(ANSWERS, {}).setdefault(moved, "revealed")
