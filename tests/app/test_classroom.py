"""The classroom pages as a user drives them (AppTest): the cost page, one weight by hand, predict-then-reveal,
practice answers, the lesson and presentation mode, and bad values in links to all of them."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

from helpers import load_pretrained
from mha_app.copy.by_hand import engine_check, shared_kv
from mha_app.copy.cost import SINGLE_HEAD, step_names
from mha_app.copy.inside import rollout_untrained
from mha_app.copy.lesson import SCREENS
from mha_app.copy.practice import SOURCE_BOX
from mha_app.copy.questions import ask_line
from mha_app.copy.steps import concat_heads_off
from mha_app.frame.present import LARGE_TYPE
from mha_app.frame.style import COMPACT
from mha_app.sections.by_hand import worked
from mha_app.sections.cost import step_costs
from mha_app.state.settings import MODELS
from mha_core.figures.lesson import flops_figure
from mha_core.pretrained import MODELS as MODELS_BY_NAME
from mha_core.teaching.worked import latex_lines
from screen import as_array, asked, assert_clean, explorer_matrix, figure_titled, figures, run_app, texts

PRETRAINED = MODELS[1]
SMALL = {"input": "random", "n": "5", "d_model": "32", "h": "4"}


def injected(at) -> set[str]:
    """The HTML the app injects (st.html): its compact stylesheet on every page, presentation mode's style, and its
    scroll to the top of a new screen."""
    return {h.proto.body for h in at.get("html")}


def scroll(screen: int) -> str:
    return (f'<script>/* screen {screen} */ document.querySelector(\'[data-testid="stMain"]\')'
            "?.scrollTo({top: 0});</script>")


# --- the cost page --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("page", ["pages/cost.py", "pages/lesson.py"])
def test_the_chart_under_the_heads_cost_answer_compares_what_the_question_asked(page):
    """The question counts both sides "with one K/V head per query head" and answers "The same", so the chart under
    it gives the h heads each their own K/V head, and draws the sharing as a third series named as such."""
    at = run_app({**SMALL, "kv_heads": "2", "screen": "10"}, page)
    assert_clean(at)
    n, d, kv, d_k = 5, 32, 2, 8  # h = 4
    bars = figure_titled(at, "Multiply-adds of each step: 1 head or 4 heads (the same in every step)")
    split = [n * d * d, n * d * d, n * d * d, n * n * d, n * n * d, n * d * d]   # any h, one K/V head per head
    shared = [n * d * d, n * d * kv * d_k, n * d * kv * d_k, n * n * d, n * n * d, n * d * d]
    _, one, many, shared_flops = step_costs(at.session_state["view"][1])
    named = flops_figure(one, many, d, 4, step_names(False, 2), shared_flops, kv)
    assert [t["name"] for t in bars["data"]] == [t.name for t in named.data] and len(named.data) == 3
    assert [list(as_array(t["x"])) for t in bars["data"]] == [split, split, shared]


def test_cost_page_counts_this_examples_steps():
    at = run_app(SMALL, "pages/cost.py")
    assert_clean(at)
    n, d, h = 5, 32, 4
    steps = at.dataframe[0].value
    expected = [n * d * d, n * d * d, n * d * d, n * n * d, n * n * d, n * d * d]  # written out: one product each
    with_concat = [*expected[:5], 0, expected[5], sum(expected)]  # step 3 only moves numbers
    assert list(steps["multiply-adds, h = 1"]) == list(steps["multiply-adds, h = 4"]) == [f"{v:,}" for v in with_concat]
    params = [d * d + d] * 3 + [0, 0, 0] + [d * d + d]
    assert list(steps["parameters, h = 4"]) == [f"{v:,}" for v in [*params, sum(params)]]
    bars = figure_titled(at, "Multiply-adds of each step")
    assert [list(as_array(t["x"])) for t in bars["data"]] == [expected, expected]
    words = at.table[0].value.to_numpy()  # that chart in words and numbers: counts as the table above writes them
    assert list(words[:, 1]) == list(words[:, 2]) == [f"{v:,}" for v in expected]
    kv = at.table[1].value.to_numpy()[:, 1:].ravel()  # the K/V cache chart's GiB: four significant digits at most
    assert all(len(re.sub(r"\D|^0\.0*", "", c)) <= 4 for c in kv), kv
    memory = at.dataframe[1].value
    assert list(memory["1 head of d_model = 32"]) == [f"{n * n:,}", f"{4 * n * n} bytes"]  # float32: 4 bytes each
    assert list(memory["4 heads of d_k = 8"]) == [f"{h * n * n:,}", f"{4 * h * n * n} bytes"]
    assert any(r"4 \cdot 5 \cdot 5 \cdot 8" in latex.value for latex in at.latex)
    code = [c.value for c in at.code if "mc.cost.attention_flops" in c.value]
    assert code and "n_heads=4" in code[0]


def test_cost_page_for_the_tiny_example_and_the_trained_model():
    tiny = run_app({"input": "tiny"}, "pages/cost.py")
    assert_clean(tiny)
    assert list(tiny.dataframe[0].value["parameters, h = 2"])[-1] == f"{4 * 4 * 4:,}"  # four 4 x 4 matrices, no bias
    trained = run_app({"model": PRETRAINED}, "pages/cost.py")
    assert_clean(trained)
    assert list(trained.dataframe[0].value["parameters, h = 12"])[-1] == f"{4 * 384 * 384 + 4 * 384:,}"


def test_cost_page_kv_cache_follows_its_controls():
    at = run_app({"preset": "llama-2-70b", "seq_len": "4096", "batch": "1"}, "pages/cost.py")
    assert_clean(at)
    table = at.dataframe[3].value
    llama = table[(table["model"] == "Llama 2 70B") & (table["attention"] == "GQA")].iloc[0]
    assert llama["per token"] == "320 KiB" and llama["at 4,096 tokens × 1"] == "1.25 GiB"
    assert llama["as published"] == "✓"
    formula = r"2 \cdot 80 \cdot 8 \cdot 128 \cdot 4{,}096 \cdot 1 \cdot 2 = 1{,}342{,}177{,}280"
    assert any(formula in latex.value for latex in at.latex)
    at.number_input(key="batch").set_value(4).run()
    at.selectbox(key="preset").set_value("gpt-3-175b").run()
    assert_clean(at)
    assert 2 * 96 * 96 * 128 * 4096 * 4 * 2 == 77_309_411_328
    gpt3 = r"2 \cdot 96 \cdot 96 \cdot 128 \cdot 4{,}096 \cdot 4 \cdot 2 = 77{,}309{,}411{,}328"
    assert any(gpt3 in latex.value for latex in at.latex)
    links = [c.value for c in at.code if c.value.startswith("http")]
    assert "batch=4" in links[0] and "preset=gpt-3-175b" in links[0]  # the preset's stable key


def test_measuring_runs_on_click_only():
    at = run_app(SMALL, "pages/cost.py")
    assert not at.metric
    at.button(key="measure").click().run()
    assert_clean(at)
    assert [m.label for m in at.metric] == ["1 head of d_model = 32", "4 heads of d_k = 8", "4 heads ÷ 1 head"]
    assert all(m.value.endswith("ms") for m in at.metric[:2]) and at.metric[2].value.endswith("×")
    single = run_app({**SMALL, "h": "1"}, "pages/cost.py")
    assert_clean(single)
    assert SINGLE_HEAD in [i.value for i in single.info]
    assert {"1 head of d_model = 32", "1 head of d_k = 32"} <= set(single.dataframe[1].value.columns)


def test_bad_link_values_of_the_classroom_settings_warn_and_fall_back():
    """Each value's own message: unit/test_url.py; here both pages warn, stay out of presentation mode, and the cost
    page's controls fall back to their defaults."""
    bad = {"seq_len": "0", "batch": "abc", "preset": "GPT-5", "key": "-1", "present": "2", "screen": "0"}
    for page in ("pages/cost.py", "pages/lesson.py"):
        at = run_app({**SMALL, **bad}, page)
        assert not at.exception, [e.value for e in at.exception]
        shown = " ".join(w.value for w in at.warning)
        assert all(f"`{name}`" in shown for name in bad), shown
        assert injected(at) == {COMPACT}, "a bad present value never turns presentation mode on"
    cost = run_app(bad, "pages/cost.py")
    assert cost.number_input(key="seq_len").value == 4096 and cost.number_input(key="batch").value == 1
    assert cost.selectbox(key="preset").value == "transformer-base"


# --- one weight by hand -------------------------------------------------------------------------------------

def agrees_with_the_engine(at) -> bool:
    """The page's check of its cell: the engine's own score and weight beside the worked ones, the same to the digits
    shown."""
    ex = at.session_state["view"][1]
    cell = worked(ex, *(at.selectbox(key=name).value - 1 for name in ("cell_head", "cell_query", "cell_key")))
    return engine_check(cell, True) in [s.value for s in at.success]


def test_by_hand_writes_out_the_tiny_cell_and_matches_the_engine():
    at = run_app({"input": "tiny", "head": "2", "key": "3"}, "pages/by_hand.py")
    assert_clean(at)
    lines = [latex.value.strip("$\n") for latex in at.latex]
    # head 2, query 1, key 3: the cell unit/test_worked.py writes out (q·k = 1, α_ts = 0.4011)
    cell = worked(at.session_state["view"][1], 1, 0, 2)
    assert [at.selectbox(key=name).value for name in ("cell_head", "cell_query", "cell_key")] == [2, 1, 3]
    assert set(latex_lines(cell)) <= set(lines)
    assert agrees_with_the_engine(at)
    row = at.dataframe[0].value
    assert list(row["attention weight α_ts"]) == ["0.1978", "0.4011", "0.4011"]
    assert list(row["note"])[2] == "◀ this cell"
    dot = figure_titled(at, "Head 2: q_t · k_s term by term")
    # one row per component c: q_t,c, k_s,c and their product (q = k = (1, 0))
    np.testing.assert_array_equal(as_array(dot["data"][0]["z"]), [[1, 1, 1], [0, 0, 0]])


def test_by_hand_pickers_move_the_selection():
    at = run_app(SMALL, "pages/by_hand.py")
    at.selectbox(key="cell_head").set_value(3).run()
    at.selectbox(key="cell_query").set_value(2).run()
    at.selectbox(key="cell_key").set_value(5).run()
    assert_clean(at)
    assert at.selectbox(key="head").value == 3 and at.number_input(key="query").value == 2
    assert figure_titled(at, "Head 3, query 2 t2")
    assert any(r"t = 2,\; s = 5" in latex.value and r"q_t = Q_{3}[t]" in latex.value for latex in at.latex)
    links = [c.value for c in at.code if c.value.startswith("http")]
    assert "key=5" in links[0] and "head=3" in links[0]


def test_by_hand_on_the_trained_model_and_a_key_past_the_end():
    at = run_app({"model": PRETRAINED, "head": "5", "query": "9"}, "pages/by_hand.py")
    assert_clean(at)
    assert agrees_with_the_engine(at)
    short = run_app({"input": "random", "n": "4", "key": "99"}, "pages/by_hand.py")
    assert not short.exception
    assert short.selectbox(key="cell_key").value == 4 and short.query_params["key"] == "4"


def test_by_hand_in_cross_attention_with_shared_kv_heads_and_no_scaling():
    at = run_app({**EXPERIMENTS, "d_model": "32", "h": "4", "head": "4"}, "pages/by_hand.py")
    assert_clean(at)
    keys = at.selectbox(key="cell_key").options
    assert keys[0].startswith("1 · ") and len(keys) == len(at.dataframe[0].value)
    assert any(r"k_s = K_{2}[s]" in latex.value for latex in at.latex), "query heads 3 and 4 read K/V head 2 of 2"
    assert any(r"\times \mathrm{scale}" in latex.value and r"\times 1 =" in latex.value for latex in at.latex)
    assert not any(r"\sqrt{" in latex.value for latex in at.latex)
    assert agrees_with_the_engine(at)
    assert shared_kv(4, 2, 2) in [c.value for c in at.caption]


# --- predict, then reveal -----------------------------------------------------------------------------------

def test_reveal_shows_the_strongest_key_of_the_row_on_click_only():
    at = run_app({**SMALL, "head": "2", "query": "3"}, "pages/attention.py", answered=False)
    assert_clean(at)
    view = at.session_state["view"][0].view
    assert (view.head, view.query) == (2, 3), "asked about the link's head and query"
    assert any(ask_line(asked(at, "strongest_key").prompt) in m.value for m in at.markdown)
    assert not any("Answer:" in m.value for m in at.markdown)

    def answers_with_the_strongest_key(head: int) -> bool:
        best = int(np.argmax(explorer_matrix(at, "weights", head)[2]))  # query 3's weights, as the explorer draws
        answer = next(m.value for m in at.markdown if "Answer:" in m.value)
        return f"**{best + 1} `t{best + 1}`**" in answer

    at.button(key="answered_strongest_key_reveal").click().run()
    assert_clean(at)
    assert answers_with_the_strongest_key(2)
    at.selectbox(key="head").set_value(1).run()
    assert_clean(at)
    assert not any("Answer:" in m.value for m in at.markdown), "another head is another question: it asks afresh"
    at.button(key="answered_strongest_key_reveal").click().run()
    assert answers_with_the_strongest_key(1), "another head's answer is that head's own"


@pytest.mark.parametrize("page, kind, answer", [
    ("pages/projection.py", "q_shape", "**5 × 8**"),
    ("pages/concatenation.py", "concat_width", "**32** = h · d_v = 4 · 8, which is d_model = 32 again."),
    ("pages/output.py", "w_o_size", "32 × 32 = **1,024** numbers; with its 32 biases, which the question leaves "
                                    "aside, 1,056 numbers."),  # the count the question asks for comes first
])
def test_every_step_page_asks_before_its_figure(page, kind, answer):
    at = run_app(SMALL, page, answered=False)
    assert any(m.value.startswith(f":material/lightbulb: {ask_line('')}") for m in at.markdown)
    assert not any(answer in m.value for m in at.markdown)
    at.button(key=f"answered_{kind}_reveal").click().run()
    assert_clean(at)
    assert any(answer in m.value for m in at.markdown), [m.value for m in at.markdown]


def test_revealed_answers_fit_the_tiny_example():
    at = run_app({"input": "tiny"}, "pages/output.py", answered=False)
    at.button(key="answered_w_o_size_reveal").click().run()
    assert any(asked(at, "w_o_size").answer in m.value for m in at.markdown)


# --- practice -----------------------------------------------------------------------------------------------

def _check(at, key: str, value):
    at.number_input(key=f"answer_{key}").set_value(value).run()
    at.button(key=f"check_{key}").click().run()
    assert_clean_but_errors(at)
    return at


def assert_clean_but_errors(at):
    assert not at.exception, [e.value for e in at.exception]


def test_practice_accepts_right_answers_and_explains_wrong_ones():
    at = run_app({}, "pages/practice.py")
    assert at.selectbox(key="preset").value == "transformer-base"
    _check(at, "d_k@Transformer base", 64)
    assert any(s.value == "Right: 64." for s in at.success)
    _check(at, "d_k@Transformer base", 32)
    assert any("32 is 2 times too small" in e.value for e in at.error)
    assert not at.success
    at.number_input(key="answer_d_k@Transformer base").set_value(48).run()
    assert not at.error, "a changed answer is not judged until it is checked"


def test_practice_on_a_gqa_model():
    at = run_app({"preset": "Llama 2 70B"}, "pages/practice.py")
    assert_clean(at)
    assert any(r"h_{kv} = 8" in latex.value for latex in at.latex)
    _check(at, "kv_token@Llama 2 70B", 327_680)
    assert any(s.value == "Right: 327,680 bytes." for s in at.success)
    _check(at, "kv_token@Llama 2 70B", 163_840)
    assert any("2 times too small" in e.value for e in at.error)
    _check(at, "kv_batch@Llama 2 70B", 10.0)
    assert any(s.value == "Right: 10 GiB." for s in at.success)
    at.button(key="check_group@Llama 2 70B").click().run()
    assert any(e.value == "Type a number first." for e in at.error)


def test_practice_hints_and_worked_answers_are_there():
    at = run_app({"preset": "GPT-3 175B"}, "pages/practice.py")
    labels = [e.label for e in at.expander]
    assert labels.count("Hint") == labels.count("Worked answer") == len([c for c in at.button if c.label == "Check"])
    assert any(r"12{,}288 / 96 = 128" in m.value for m in at.markdown)


# --- the lesson and presentation mode -----------------------------------------------------------------------

EXPERIMENTS = {"input": "pair", "kv_heads": "2", "scale": "none", "ablate": "2", "query": "3"}
DECODER = next((name for name, card in MODELS_BY_NAME.items() if card.kind == "decoder"), None)


@pytest.mark.parametrize("params", [{}, {"input": "tiny"}, {"model": PRETRAINED, "query": "9"},
                                    {"input": "random", "n": "4", "causal": "true", "pad": "1", "h": "1"},
                                    EXPERIMENTS, {"model": DECODER, "query": "5", "head": "4"}],
                         ids=["sentence", "tiny", "trained", "one head, masks", "cross, GQA, unscaled, head off",
                              "trained decoder"])
def test_presentation_steps_through_every_screen_and_back(params):
    if params.get("model") in MODELS_BY_NAME:
        load_pretrained(MODELS_BY_NAME[params["model"]].load)  # a skip when its package is not installed
    at = run_app({"present": "1", **params})
    trained = params.get("model") in MODELS_BY_NAME
    for number, (name, title) in enumerate(SCREENS, start=1):
        assert_clean(at)
        assert at.title[0].value == f"{number} · {title}"
        assert injected(at) == {COMPACT, LARGE_TYPE} | ({scroll(number)} if number > 1 else set())
        assert at.button(key="back").disabled == (number == 1)
        assert at.button(key="next").disabled == (number == len(SCREENS))
        assert at.query_params.get("screen", "1") == str(number), "each screen is its own link"
        # the sidebar is hidden: no screen sends the class there; a trained model is a button away where it matters
        said = " ".join(e.value for kind in ("markdown", "caption", "info", "warning") for e in getattr(at.main, kind))
        assert not re.search(r"sidebar|under \*?Weights", said), (name, said)
        if name == "concat" and "ablate" in params:  # the step page's sentence for heads zeroed at the concatenation
            assert concat_heads_off((int(params["ablate"]),)) in texts(at, "caption")
        if name == "grid" and not trained and params.get("input") != "tiny":  # random weights: say how to change
            assert at.main.button(key="switch_0").label.startswith("Switch to ")
        if name == "rollout" and not trained:  # rollout follows a trained model's layers: one layer offers one
            assert any(rollout_untrained() in i.value for i in at.info)
            assert at.button(key="switch_0").label.startswith("Switch to ")
        else:
            assert at.latex or figures(at)
            if name != "by_hand":
                assert figures(at), name
        if number < len(SCREENS):
            at.button(key="next").click().run()
    if params:
        return  # back through every screen once, in the first mode: the way back draws the same screens
    for number in range(len(SCREENS) - 1, 0, -1):
        at.button(key="back").click().run()
        assert_clean(at)
        assert at.title[0].value.startswith(f"{number} · ")
        assert injected(at) == {COMPACT, LARGE_TYPE, scroll(number)}
    assert at.query_params["screen"] == "1"


@pytest.mark.parametrize("number", [1, len(SCREENS) // 2 + 1, len(SCREENS)])
def test_a_screens_link_opens_that_screen(number):
    """The first, a middle and the last screen; the link of every screen is checked while stepping, above."""
    at = run_app({"present": "1", "screen": str(number), "h": "4", "head": "3"})
    assert_clean(at)
    assert at.title[0].value == f"{number} · {SCREENS[number - 1][1]}"
    assert not at.warning


@pytest.mark.parametrize("page", ["pages/attention.py", "pages/cost.py", "pages/model_view.py"])
def test_present_opens_the_lesson_from_any_page(page):
    at = run_app({"present": "1", "screen": "3"}, page)
    assert_clean(at)
    assert at.title[0].value.startswith("3 · ")


def test_presentation_mode_can_be_left():
    at = run_app({"present": "1", "screen": "3"}, "pages/lesson.py")
    at.button(key="leave").click().run()
    assert_clean(at)
    assert "present" not in at.query_params and injected(at) == {COMPACT}
    assert at.title[0].value.startswith("3 · "), "the same screen, now with the app around it"


def test_the_lesson_page_links_every_screen_in_presentation_mode():
    at = run_app({"h": "4", "query": "2"}, "pages/lesson.py")
    assert_clean(at)
    assert injected(at) == {COMPACT}, "large type only in presentation mode"
    present = at.get("link_button")[0].proto.url
    assert parse_qs(urlsplit(present).query) == {"present": ["true"], "h": ["4"], "query": ["2"]}
    plan = next(c.value for c in at.code if "screen=2" in c.value)
    urls = re.findall(r"http\S+", plan)
    assert len(urls) == len(SCREENS)
    for number, url in enumerate(urls, start=1):
        query = parse_qs(urlsplit(url).query)
        assert query["present"] == ["true"] and query["h"] == ["4"] and query.get("screen", ["1"]) == [str(number)]


def test_presentation_css_never_holds_user_text():
    markup = "<style>body{display:none}</style>"
    at = run_app({"present": "1", "text": markup})
    assert_clean(at)
    assert injected(at) == {COMPACT, LARGE_TYPE}
    assert "display:none" not in texts(at, "markdown", "caption", "success", "error", "info", "warning")
    at.button(key="next").click().run()
    assert injected(at) == {COMPACT, LARGE_TYPE, scroll(2)}


def test_practice_keeps_the_source_closed_until_the_questions_are_done():
    """The source line "h = 8, d_k = d_v = 64" stays in a closed expander: question 1 asks for d_k."""
    at = run_app({}, "pages/practice.py")
    shown = [c.value for c in at.caption if "d_k = d_v = 64" in c.value]
    source = at.expander[-1]
    assert source.label == SOURCE_BOX and not source.proto.expanded
    assert shown and all(c in [s.value for s in source.caption] for c in shown)


@pytest.mark.parametrize("params, bias", [({"screen": "9"}, True), ({"screen": "9", "input": "tiny"}, None)])
def test_the_w_o_screen_formula_has_the_bias_its_answer_counts(params, bias):
    """Lesson screen 9's formula has + b^O exactly when its answer counts the biases."""
    at = run_app(params, "pages/lesson.py", answered=False)
    at.button(key="answered_w_o_size_reveal").click().run()
    formula = next(x.value for x in at.latex if "MultiHead" in x.value)
    answer = next(m.value for m in at.markdown if "Answer:" in m.value)
    assert ("+ b^{O}" in formula) == (" biases, " in answer) == bool(bias), (formula, answer)
