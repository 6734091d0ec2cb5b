"""Ask or show, as a person drives it (AppTest): the sidebar's "Ask before showing", the Share box's two links, a
link to a view that opens drawn, an answer that counts for its own question only, and the lesson's feedback kept
over Back and Next. Which links ask is tested in unit/test_asking.py."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from mha_app.copy.questions import not_yet
from mha_app.copy.sidebar import SHARE_ASKING, SHARE_LINK
from mha_app.state.settings import control
from screen import asked, assert_clean, explorer, figures, run_app

SMALL = {"input": "random", "n": "5", "d_model": "32", "h": "4"}
ASK = control("ask").label


def waits(at) -> bool:
    """Whether the page's question waits (its Reveal button is there)."""
    return any(b.label == "Reveal the answer" for b in at.button)


def drawn(at) -> bool:
    """Whether the attention explorer is on the page."""
    return any(e.proto.component_name == "mha_app.attention_explorer" for e in at.get("bidi_component"))


def share_links(at) -> list[str]:
    return [c.value for c in at.code if c.value.startswith("http")]


def test_the_checkbox_decides_and_the_address_follows():
    at = run_app(SMALL, "pages/attention.py", answered=None)
    box = at.checkbox(key="ask")
    assert box.label == ASK and box.value is True and waits(at), "a link that names no view asks"
    assert not drawn(at), "the explorer waits"
    box.uncheck().run()
    assert_clean(at)
    assert not waits(at) and drawn(at), "unticked, the explorer is drawn at once"
    assert at.query_params["ask"] in ("false", ["false"])
    q = asked(at, "strongest_key")
    assert any(q.answer in m.value and "Right!" not in m.value for m in at.markdown), "the question shown answered"
    at.checkbox(key="ask").check().run()
    assert waits(at) and "ask" not in at.query_params


def test_the_share_box_offers_the_view_drawn_and_asking_first():
    at = run_app({**SMALL, "head": "2"}, "pages/attention.py", answered=None)
    drawn, asking = share_links(at)
    captions = [c.value for c in at.caption]
    assert captions.index(SHARE_LINK) < captions.index(SHARE_ASKING)
    for link, ask in ((drawn, "false"), (asking, "true")):
        query = parse_qs(urlsplit(link).query)
        assert query["ask"] == [ask] and query["head"] == ["2"] and query["h"] == ["4"], link


def test_a_link_to_a_view_opens_it_drawn_without_a_click():
    at = run_app({**SMALL, "head": "3", "query": "2", "stage": "raw"}, "pages/attention.py", answered=None)
    assert_clean(at)
    assert not waits(at) and at.checkbox(key="ask").value is False
    assert explorer(at)[2]["head"] == 3 and explorer(at)[2]["stage"] == "raw"
    again = run_app({**SMALL, "head": "3", "ask": "true"}, "pages/attention.py", answered=None)
    assert waits(again) and not drawn(again), "unless the link says to ask"


def test_the_open_tab_is_in_the_link_and_a_link_opens_it():
    at = run_app({**SMALL, "tab": "mask"}, "pages/attention.py", answered=None)
    assert_clean(at)
    assert at.tabs[0].label == "Mixing the values" and at.session_state["attention_tab"] == "The mask"
    assert "tab=mask" in share_links(at)[0]
    assert at.session_state["view"][0].view.tab == "mask"


def test_presentation_asks_unless_its_link_says_not_to():
    assert waits(run_app({**SMALL, "present": "1", "screen": "4", "head": "2"}, "pages/lesson.py", answered=None))
    assert not waits(run_app({**SMALL, "present": "1", "screen": "4", "ask": "false"}, "pages/lesson.py",
                             answered=None))


def test_an_answer_counts_for_its_own_question_only():
    """Answered right for head 1, the page says "Right!"; on head 2 (another question) it asks afresh, and on the
    way back to head 1 it says "Right!" again; revealed elsewhere, it says no "Right!"."""
    at = run_app(SMALL, "pages/attention.py", answered=False)
    q = asked(at, "strongest_key")
    at.button_group(key="answered_strongest_key_given").set_value(q.correct).run()
    at.button(key="answered_strongest_key_check").click().run()
    assert any("Right!" in m.value for m in at.markdown) and not waits(at)
    at.selectbox(key="head").set_value(2).run()
    assert_clean(at)
    assert waits(at) and not any("Right!" in m.value for m in at.markdown), "another head: another question"
    assert at.button_group(key="answered_strongest_key_given").value is None, "its answer box starts empty"
    at.button(key="answered_strongest_key_reveal").click().run()
    assert not waits(at) and not any("Right!" in m.value for m in at.markdown), "revealed, not answered right"
    at.selectbox(key="head").set_value(1).run()
    assert any("Right!" in m.value for m in at.markdown)
    at.number_input(key="seed").set_value(1).run()
    assert waits(at), "another model (seed): another question"


def test_the_lesson_keeps_its_feedback_over_back_and_next():
    at = run_app(SMALL, "pages/lesson.py", answered=False)
    at.query_params["screen"] = "4"
    at.run()
    q = asked(at, "strongest_share")
    wrong = next(c for c in q.choices if not q.check(c))
    at.button_group(key="answered_strongest_share_given").set_value(wrong).run()
    at.button(key="answered_strongest_share_check").click().run()
    said = not_yet(q.reason(wrong))
    assert [w.value for w in at.warning] == [said] and said != not_yet("")
    charts = len(figures(at))
    at.button(key="back").click().run()
    at.button(key="next").click().run()
    assert_clean(at)
    assert [w.value for w in at.warning] == [said], "the feedback given stays"
    assert at.button_group(key="answered_strongest_share_given").value == wrong
    assert waits(at) and len(figures(at)) == charts
