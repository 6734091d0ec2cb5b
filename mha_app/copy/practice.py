"""What the practice page says around its questions (the questions themselves: mha_core.teaching.practice)."""

from __future__ import annotations

INTRO = ("Work each number out from the sizes given (pencil, paper, a calculator), type it in and check it. Every "
         "question has a hint and the worked answer. Choose another model for new questions.")
SOURCE_BOX = "Source of these sizes (it gives some answers away: open it after the questions)"
COST_LINK = "The cost of heads: where these formulas come from"


def answer_label(unit: str) -> str:
    """The label of an answer's box, with the answer's unit when it has one."""
    return "Your answer" + (f" ({unit})" if unit else "")


def source_line(source: str) -> str:
    """Where the model's sizes are published."""
    return f"Source: {source}"
