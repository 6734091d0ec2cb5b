"""What the collapsed boxes beside a page say: the engine's code, PyTorch, a chart's table."""

from __future__ import annotations

import pytest

from mha_app.copy.asides import CODE_TITLE, CODE_WAITS, code_caption, first_rows, pytorch_decoder
from mha_app.copy.steps import CODE_NAMES


@pytest.mark.parametrize("step", [1, 2, 3, 4])
def test_each_steps_code_caption_and_its_note(step):
    assert code_caption(step) == CODE_NAMES[step]
    assert code_caption(step, "Here `x_kv` is Y.") == f"{CODE_NAMES[step]} Here `x_kv` is Y."


def test_the_waiting_code_names_the_box_it_opens():
    assert CODE_WAITS == f"{CODE_TITLE} appears once you answer or reveal the question above."


def test_the_pytorch_decoder_names_its_layer_and_model():
    text = pytorch_decoder(18, "SmolLM2-135M-Instruct")
    assert text.startswith("Rebuilds layer 18 of SmolLM2-135M-Instruct in PyTorch")
    assert "it has no shared key/value heads and no RoPE" in text


def test_a_cut_table_says_how_much_it_shows():
    assert first_rows(100, 2048) == "The first 100 of 2048 rows."
