"""copy.explorer: the sentences the attention explorer shows (its payload's header) and its saved page's lines."""

from __future__ import annotations

import pytest

from mha_app.copy import explorer as say


def test_a_switched_off_head_is_said_once_with_its_number():
    assert say.head_off(3) == ("head 3 is switched off: Step 3 multiplies its output by 0, so none of its keys "
                               "reaches the output")
    text = say.header_text(4, 1, 1, 1, None)
    assert text["head_off"] == [say.head_off(i) for i in (1, 2, 3, 4)]


@pytest.mark.parametrize("stage, scale, sub", [
    ("raw", 0.25, "before the scale and the mask"), ("raw", 1.0, "not scaled here; before the mask"),
    ("mask", 0.25, "hatched = blocked (M = −∞)"), ("weights", 0.25, "hatched = blocked by the mask"),
    ("contributions", 1.0, "hatched = blocked by the mask"),
])
def test_each_stage_has_its_note(stage, scale, sub):
    assert say.stage_note(stage, scale) == f"rows: queries · columns: keys · {sub}"


def test_exact_matrices_need_no_pooling_or_zoom_sentences():
    text = say.header_text(2, 1, 1, 1, None)
    assert text["pooled"] == text["zoom"] == text["bar_zoom"] == text["bar_pooled"] == ""
    assert text["grid"] == {"weights": "All 2 heads: softmax weights",
                            "contributions": "All 2 heads: contribution shares"}
    assert text["loading"] == ["Loading layer 1…"]


def test_pooled_matrices_say_their_blocks_and_the_zoom_window():
    text = say.header_text(12, 6, 4, 8, (64, 128, 0, 64))
    assert text["pooled"] == "(means of 4×4 blocks)"
    assert text["grid"]["weights"] == "All 12 heads: softmax weights (means of 8×8 blocks)"
    assert text["zoom"] == "queries 65–128 × keys 1–64, every cell exact"
    assert text["bar_zoom"] == "keys 1–64 (the zoom window)"
    assert text["bar_pooled"] == "means of 4×4 blocks; move the zoom window over the query for its exact weights"
    assert say.bar_pooled(4, False) == "means of 4×4 blocks"
    assert text["loading"][5] == "Loading layer 6…" and len(text["loading"]) == 6


def test_shares_and_blocked_cells():
    assert say.shares_note(1).endswith("outlines: its weight")
    assert say.shares_note(3).endswith("outlines: the mean weight")
    assert set(say.BLOCKED) == {"weights", "contributions", "scaled"}
    assert all(line.startswith("blocked by the mask") for line in say.BLOCKED.values())
    assert say.MASK_CELL == {"blocked": "blocked: M = −∞", "open": "open: M = 0"}


def test_the_zoom_intro():
    assert say.zoom_intro(64).startswith("**Zoom window**: up to 64 × 64 cells")


@pytest.mark.parametrize("layers, text", [([3], "3"), ([1, 2], "1, 2"), ([1, 2, 3, 7], "1 to 3 and 7"),
                                          ([5, 1, 2, 3, 9, 10], "1 to 3, 5 and 9, 10")])
def test_spans_of_layers(layers, text):
    assert say.spans(layers) == text


@pytest.mark.parametrize("count, held, line", [
    (1, [1], "Step 2 of every head: choose a head, a query or a stage."),
    (6, [1, 2, 3, 4, 5, 6], "Step 2 of every head: choose a head, a query, a stage or a layer. This file holds all 6 "
                            "layers."),
    (30, [4], "Step 2 of every head: choose a head, a query or a stage. This file holds layer 4 of 30; the app has "
              "them all."),
    (30, [3, 4, 5], "choose a head, a query, a stage or a layer. This file holds layers 3 to 5 of 30;"),
])
def test_the_saved_page_says_what_it_holds(count, held, line):
    assert line in say.saved_choices(count, held)
