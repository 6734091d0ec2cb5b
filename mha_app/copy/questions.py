"""What the question box says (predict, then reveal): the questions themselves are mha_core.teaching.questions'."""

from __future__ import annotations

NO_ANSWER = "Pick or type an answer first."
WAITS = "The figure that shows the answer appears once you answer or reveal."


def ask_line(prompt: str) -> str:
    """The question while it waits."""
    return f"**Predict first.** {prompt}"


def answered_line(prompt: str, answer: str, right: bool) -> str:
    """The question once answered (right: the student's answer was right) or revealed, with its answer."""
    return f"{prompt} {'Right! ' if right else ''}Answer: {answer}"


def not_yet(reason: str) -> str:
    """A wrong answer: what the picked answer is instead (reason, "" when there is nothing to say), and what to do."""
    return f"Not yet{': ' + reason if reason else ''}. Try again, or reveal the answer."
