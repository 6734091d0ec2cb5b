"""The notation table: every list of symbols a page shows defines every letter its meanings write."""

from __future__ import annotations

import re

import pytest

from mha_core.teaching import notation
from mha_core.teaching.notation import SYMBOLS, complete, symbol


def written(meaning: str) -> set[str]:
    """The table's names that a meaning writes in its formulas, read plainly: a name standing on its own, not part
    of a longer one (d in d_v or d_{model} is not d)."""
    maths = " ".join(re.findall(r"\$([^$]*)\$", meaning))
    names = {a for key in SYMBOLS for a in key.split(", ")}
    return {a for a in names if re.search(r"(?<![A-Za-z\\_^{])" + re.escape(a) + r"(?![A-Za-z0-9_^{])", maths)}


# The lists the pages start from (their symbols() calls), plain and with shared K/V heads
OVERVIEW = ["X", "h", "i", "d_k", "d_{model}", "d", *notation.head_symbols(1), "M", "\\mathrm{head}_i", "W^O"]
OVERVIEW_GQA = [*OVERVIEW[:6], *notation.head_symbols(2), "M", "\\mathrm{head}_i", "W^O", "h_{kv}", "g", "j"]
STEP_1 = ["X", "n", "d_{model}", "h", "i", "d_k", "d_v", "d", "c", *notation.head_symbols(1)]
STEP_4 = ["W^O", "\\mathrm{head}_i", "h", "i", "d_v", "d_{model}", "c", "d"]


@pytest.mark.parametrize("names", [OVERVIEW, OVERVIEW_GQA, STEP_1, STEP_4, *([key] for key in SYMBOLS)],
                         ids=["overview", "overview-gqa", "step1", "step4", *SYMBOLS])
def test_a_completed_list_defines_every_name_its_meanings_write(names):
    """A completed list defines every name its meanings write: α_ts and v_s (in head_i's), d_v (in W^O's)."""
    listed = complete([symbol(n) for n in names])
    defined = {a for e in listed for a in e.latex.split(", ")}
    for entry in listed:
        assert written(entry.meaning) <= defined, f"{entry.latex}: {written(entry.meaning) - defined} undefined"
    assert [e.latex for e in listed[:len(names)]] == names, "the page's own symbols first, in its order"


def test_the_overview_gains_the_symbols_its_meanings_use():
    added = {e.latex for e in complete([symbol(n) for n in OVERVIEW])} - set(OVERVIEW)
    assert {"\\alpha_{ts}", "q_t, k_s, v_s", "d_v", "t", "s", "n"} <= added
    assert not added & {"h_{kv}", "g", "j", *notation.head_symbols(2)}, "no grouped-query symbol in plain MHA"


def test_a_symbol_that_follows_the_example_keeps_its_own_meaning():
    unscaled = notation.score_symbol(1)
    listed = complete([symbol("\\alpha_{ts}"), unscaled])
    assert unscaled in listed and SYMBOLS["z_{ts}"] not in listed


def test_the_score_is_said_for_the_scale_used():
    assert notation.score_words() == "$q_t \\cdot k_s$, times the scale $1/\\sqrt{d_k}$"
    assert notation.score_words(1.0) == "$q_t \\cdot k_s$ itself (not scaled here)"
    assert notation.score_words(0.5) == "$q_t \\cdot k_s$, times 0.5"


def test_the_kv_head_rule_names_every_group_up_to_three_then_and_so_on():
    assert notation.kv_head_rule(9, 3).endswith(  # SmolLM2: 3 groups, the last one named too
        "so heads 1 to 3 read K/V head 1, heads 4 to 6 K/V head 2 and heads 7 to 9 K/V head 3.")
    assert notation.kv_head_rule(8, 4).endswith("so heads 1 to 4 read K/V head 1 and heads 5 to 8 K/V head 2.")
    assert notation.kv_head_rule(16, 2).endswith("heads 3 to 4 K/V head 2, and so on.")
    assert notation.kv_head_rule(4, 4).endswith("so every head reads K/V head 1.")
