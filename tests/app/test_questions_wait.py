"""Questions that wait: before a student answers or reveals, nothing on the page gives the answer away (no text that
states it, no figure that shows the weights asked about); after, the answer and the figures are there."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mha_app.copy.questions import not_yet
from mha_app.state.example import build_example
from mha_app.state.settings import Spec
from mha_core.teaching import questions
from mha_core.teaching.notation import symbol
from mha_core.teaching.source import step_source
from screen import as_array, figures, matrices, run_app

# (page, question kind, link): every page that asks, in a mode where the answer is easy to give away.
ASKED = [
    ("pages/projection.py", "q_shape", {}),
    ("pages/projection.py", "q_shape", {"kv_heads": "2"}),
    ("pages/attention.py", "strongest_key", {}),
    ("pages/attention.py", "strongest_key", {"model": "all-MiniLM-L6-v2", "query": "3"}),
    ("pages/by_hand.py", "cell_weight", {"input": "tiny"}),
    ("pages/by_hand.py", "cell_weight", {"key": "3"}),
    ("pages/concatenation.py", "concat_width", {}),
    ("pages/output.py", "w_o_size", {}),
    ("pages/cost.py", "heads_cost", {}),
    ("pages/lesson.py", "x_size", {"screen": "1"}),
    ("pages/lesson.py", "q_shape", {"screen": "2"}),
    ("pages/lesson.py", "strongest_share", {"screen": "4"}),
    ("pages/lesson.py", "concat_width", {"screen": "8"}),
    ("pages/lesson.py", "w_o_size", {"screen": "9"}),
    ("pages/lesson.py", "heads_cost", {"screen": "10"}),
]

STEP_CODE = {"pages/projection.py": 1, "pages/attention.py": 2, "pages/concatenation.py": 3, "pages/output.py": 4}


def shown_text(at) -> str:
    """Everything the page shows as text: Markdown, captions, formulas, tables, and every chart's spec."""
    parts = [str(e.value) for kind in ("title", "header", "subheader", "markdown", "caption", "latex", "code",
                                       "info", "warning", "success", "error") for e in getattr(at, kind)]
    parts += [json.dumps(json.loads(c.proto.spec)) for c in at.get("plotly_chart")]
    parts += [json.dumps(matrix) for matrix in matrices(at)]
    parts += [str(d.value) for d in at.dataframe]
    return "\n".join(parts)


def shows_row(at, row: np.ndarray) -> bool:
    """Whether a chart on the page draws these numbers (a query's attention weights) as a row or as bars."""
    for figure in figures(at):
        for trace in figure["data"]:
            for key in ("z", "y"):
                values = trace.get(key)
                if values is None:
                    continue
                try:
                    array = as_array(values) if isinstance(values, dict) else np.array(values, dtype=float)
                except (TypeError, ValueError):  # labels, not numbers
                    continue
                rows = array if array.ndim == 2 else array[None]
                for r in rows:
                    if len(r) == len(row) and np.allclose(np.asarray(r, dtype=float), row, atol=1e-6):
                        return True
    return False


@pytest.mark.parametrize(("page", "kind", "params"), ASKED, ids=[f"{p[6:-3]}-{k}-{len(q)}" for p, k, q in ASKED])
def test_nothing_gives_the_answer_away_until_it_is_answered(page, kind, params):
    """Nothing on the page states the answer before it is given, the "Symbols on this page" box included.

    Before the answer, Step 1's symbols box holds back "Q_i, K_i, V_i: … one row per token" and "d_k: the width of
    one head's queries and keys" (together Q_i's shape), and Step 4's "W^O: … h d_v × d_model". The expander "The
    code that computed this" waits too: its shape comments and note give the answer (Step 1 "# (h, n, d_k)", Step 3
    "reshape(n, h * d_k)", Step 4 "(d_model, h·d_k)")."""
    at = run_app(params, page, answered=False)
    assert not at.exception, at.exception
    example = build_example(Spec(model=params.get("model", "random"), input=params.get("input", "sentence"),
                                 kv_heads=int(params.get("kv_heads", 0))),
                            model=None if "model" not in params else _model(params["model"]))
    head, query = 0, int(params.get("query", 1)) - 1
    q = questions.ask(kind, example.trace, example.weights, example.tokens, head, query,
                      key=int(params.get("key", 1)) - 1)
    before = shown_text(at)
    # the introduction does not point at the figure while the figure waits for the answer
    assert "In the figure" not in before, "the text points at a figure that is not shown yet"
    for fact in q.facts:
        assert fact not in before, f"{fact!r} gives the answer away before it is asked for"
    listed = [name for name in q.symbols if f"${name}$:" in before]  # the held symbols this page lists
    for name in q.symbols:
        assert symbol(name).meaning not in before, f"the meaning of ${name}$ gives the answer away"
    if kind in ("strongest_key", "strongest_share"):
        assert not shows_row(at, example.trace.weights[head, query]), "a chart shows the weights asked about"
    code = STEP_CODE.get(page)  # the engine's lines a step page shows: none of them before the answer
    assert code is None or not [c for c in at.code if c.value == step_source(code)], "the code gives the answer away"
    charts = len(figures(at))
    next(b for b in at.button if b.label == "Reveal the answer").click().run()
    assert not at.exception, at.exception
    assert "Answer:" in shown_text(at)
    assert code is None or [c for c in at.code if c.value == step_source(code)], "the code comes with the answer"
    assert len(figures(at)) > charts, "the figure that shows the answer appears"
    assert all(symbol(name).meaning in shown_text(at) for name in listed), "the held meanings come with the answer"


# How the cost of heads depends on h, in words: each states the answer to "more, fewer or the same?"
COST_ANSWERS = ("does not grow", "do not grow", "does not depend on h", "What grows with h", "What does grow with h",
                "exactly those of one head", "similar to that of single-head", "share the work of one wide head")


@pytest.mark.parametrize(("page", "params"), [("pages/cost.py", {}), ("pages/cost.py", {"kv_heads": "2"}),
                                              ("pages/lesson.py", {"screen": "10"})])
def test_the_cost_of_heads_is_not_told_in_words_before_it_is_answered(page, params):
    """Below the waiting question, and on the overview's tab "What it costs", no words tell what grows with h (the
    attention weights, their memory) and what does not (the parameters, those of one head of full width)."""
    at = run_app(params, page, answered=False)
    before = shown_text(at)
    assert not [words for words in COST_ANSWERS if words in before]
    next(b for b in at.button if b.label == "Reveal the answer").click().run()
    assert [words for words in COST_ANSWERS if words in shown_text(at)], "the reasons come with the answer"
    tab = run_app(params, "pages/overview.py", answered=False, opened={"overview_tab": "What it costs"})
    assert not [words for words in COST_ANSWERS if words in shown_text(tab)]
    assert "Predict it on the cost page" in shown_text(tab)


def test_a_right_answer_opens_the_page_and_a_wrong_one_waits():
    at = run_app({}, "pages/projection.py", answered=False)
    ex = build_example(Spec())
    q = questions.ask("q_shape", ex.trace, ex.weights, ex.tokens, 0, 0)
    charts = len(figures(at))
    answer = at.button_group(key="answered_q_shape_given")
    answer.set_value("11 × 128").run()
    next(b for b in at.button if b.label == "Check my answer").click().run()
    assert len(figures(at)) == charts
    assert at.warning[0].value == not_yet(q.reason("11 × 128")), "a wrong pick is told what it is"
    at.button_group(key="answered_q_shape_given").set_value(q.correct).run()
    next(b for b in at.button if b.label == "Check my answer").click().run()
    assert "Right!" in shown_text(at) and len(figures(at)) > charts


def _model(name):
    from mha_core.pretrained import MODELS

    return MODELS[name].load()
