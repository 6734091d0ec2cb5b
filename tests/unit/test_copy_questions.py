"""What the question box says around its question."""

from __future__ import annotations

from mha_app.copy.questions import NO_ANSWER, WAITS, answered_line, ask_line, not_yet


def test_the_question_waits_then_gives_its_answer():
    assert ask_line("Which key?") == "**Predict first.** Which key?"
    assert answered_line("Which key?", "3 `sat`", right=True) == "Which key? Right! Answer: 3 `sat`"
    assert answered_line("Which key?", "3 `sat`", right=False) == "Which key? Answer: 3 `sat`"


def test_a_wrong_answer_is_told_what_it_is_when_that_is_known():
    assert not_yet("that is X's shape, 11 × 128") == ("Not yet: that is X's shape, 11 × 128. Try again, or reveal "
                                                      "the answer.")
    assert not_yet("") == "Not yet. Try again, or reveal the answer."
    assert NO_ANSWER == "Pick or type an answer first."
    assert "appears once you answer or reveal" in WAITS
