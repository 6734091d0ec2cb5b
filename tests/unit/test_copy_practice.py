"""What the practice page says around its questions."""

from __future__ import annotations

from mha_app.copy.practice import SOURCE_BOX, answer_label, source_line


def test_the_answer_label_names_the_unit_when_there_is_one():
    assert answer_label("") == "Your answer"
    assert answer_label("bytes") == "Your answer (bytes)"


def test_the_source_waits_for_the_questions():
    assert SOURCE_BOX.startswith("Source of these sizes") and "open it after the questions" in SOURCE_BOX
    assert source_line("Touvron et al. 2023") == "Source: Touvron et al. 2023"
