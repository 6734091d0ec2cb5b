"""What the page 'One attention weight, by hand' says."""

from __future__ import annotations

import dataclasses

import mha_core as mc
from mha_app.copy.by_hand import cell_header, engine_check, fewer_decimals, intro, rope_caption, shared_kv
from mha_core.teaching.worked import fmt, work_cell


def test_the_intro_points_to_the_tiny_example_unless_it_is_on_view():
    here = intro(tiny=True)
    assert "In the tiny example every number is small enough to check with pencil and paper." in here
    elsewhere = intro(tiny=False)
    assert "choose random weights, then the *tiny* input" in elsewhere
    assert "its own small hand-set weights" in elsewhere and "In the tiny example" not in elsewhere
    assert here.startswith("Every number in the attention matrix comes from four small steps")


def test_shared_heads_say_other_query_head_in_the_singular_and_the_plural():
    assert shared_kv(2, 1, 2) == "Query head 2 reads K/V head 1, which it shares with 1 other query head."
    assert shared_kv(5, 2, 3) == "Query head 5 reads K/V head 2, which it shares with 2 other query heads."


def test_rope_names_both_positions():
    text = rope_caption(3, 7)
    assert text.startswith("q and k are the rotated ones (RoPE, Step 1b)")
    assert "angle of position 3, the key by that of position 7." in text


def test_the_cell_header_quotes_tokens_as_typed():
    assert cell_header(1, "The", 3, "sat") == "Query 1 `The` and key 3 `sat`"
    assert cell_header(2, "*x*", 1, ":cat:") == "Query 2 `*x*` and key 1 `:cat:`"  # no emphasis, no emoji


def _cell():
    cfg = mc.MHAConfig(16, 4)
    trace = mc.forward(mc.random_input(6, 16, seed=0), mc.init_weights(cfg, seed=0), cfg)
    return work_cell(trace, 1, 2, 3, cfg.softmax_scale, default_scale=True)


def test_the_engine_check_gives_both_cells_and_the_verdict():
    cell = _cell()
    same = engine_check(cell, True)
    assert same.startswith("The engine's own cell: score ") and "; by hand: " in same
    assert same.endswith(" The same to the last digit shown.")
    sd, wd = cell.score_decimals, cell.weight_decimals
    assert f"score {fmt(cell.engine_score, sd)}, weight {fmt(cell.engine_weight, wd)}" in same
    assert f"by hand: {fmt(cell.score, sd)} and {fmt(cell.weight, wd)}." in same
    off = dataclasses.replace(cell, engine_score=cell.engine_score + 1)
    differ = engine_check(off, False)
    assert differ.endswith(" They differ.") and f"score {fmt(off.engine_score, sd)}," in differ


def test_fewer_decimals_names_the_decimal():
    assert fewer_decimals(4) == ("Shown to fewer than 4 decimals where the engine's float32 arithmetic (numbers kept "
                                 "to about 7 significant digits) rounds the 4th decimal the other way.")
