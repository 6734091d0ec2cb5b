"""Each chart's text alternative states the right numbers: every number here is recomputed from the trace another
way (Python loops and sorting, scipy), never with figures.describe. Tokens stay text: no markup is read."""

from __future__ import annotations

import re

import pytest
from scipy.stats import entropy as scipy_entropy

import mha_core as mc
from figure_catalogue import catalogue
from mha_core import figures as F
from mha_core.figures import describe
from mha_core.figures.describe import Description

TOKENS = ["The", "cat", "sat", "on", "the", "mat"]


def trace(causal: bool = False, h: int = 4, seed: int = 0, plant: str | None = None):
    cfg = mc.MHAConfig(16, h, causal=causal)
    w = mc.init_weights(cfg, seed=seed)
    x = mc.random_input(6, 16, seed=seed)
    if plant:
        w = mc.plant_head(w, cfg, 0, plant, 4.0, x)
    return mc.forward(x, w, cfg)


def name(tokens, j: int) -> str:
    return f"'{tokens[j]}' ({j + 1})"


def ranked(row) -> list[int]:
    """Key positions by weight, largest first (ties: the earlier key)."""
    return sorted(range(len(row)), key=lambda j: (-row[j], j))


def test_the_query_bar_says_where_the_query_looks_most():
    tr = trace()
    head, query = 2, 3
    row = [float(v) for v in tr.weights[head, query]]
    d = Description.of(F.query_weights_figure(tr, head, query, TOKENS))
    first, second, third = ranked(row)[:3]
    assert d.alt.startswith(f"Head 3, query 'on' (4): most weight on {name(TOKENS, first)} ({row[first]:.2f}), then "
                            f"{name(TOKENS, second)} ({row[second]:.2f}), then {name(TOKENS, third)} "
                            f"({row[third]:.2f}).")
    assert f"sum to {sum(row):.3f}" in d.alt
    assert [r[0] for r in d.rows] == [name(TOKENS, j) for j in ranked(row)]
    assert [r[1] for r in d.rows] == pytest.approx([row[j] for j in ranked(row)], abs=1e-4)


def test_blocked_keys_are_named_as_blocked_never_as_a_weight():
    tr = trace(causal=True)
    head, query = 1, 2  # the third token sees keys 1-3; keys 4-6 are blocked
    d = Description.of(F.query_weights_figure(tr, head, query, TOKENS))
    assert "3 keys blocked" in d.alt
    assert [r for r in d.rows if r[1] == "blocked"] == [(name(TOKENS, j), "blocked") for j in (3, 4, 5)]
    visible = [float(v) for v in tr.weights[head, query, :3]]
    assert f"sum to {sum(visible):.3f}" in d.alt


def test_the_weight_matrix_names_the_strongest_pair_and_each_querys_two_strongest_keys():
    tr = trace(causal=True)
    w = tr.weights[1].tolist()
    d = Description.of(F.attention_figure(tr, 1, TOKENS, "weights"))
    blocked = sum(1 for i in range(6) for j in range(6) if j > i)
    assert f"{blocked} pairs blocked (blank)" in d.alt
    q, k = max(((i, j) for i in range(6) for j in range(i + 1)), key=lambda p: (w[p[0]][p[1]], -p[0], -p[1]))
    assert f"Strongest: query {name(TOKENS, q)} on key {name(TOKENS, k)}, {w[q][k]:.2f}." in d.alt
    for i, row in enumerate(d.rows):
        seen = ranked(w[i][:i + 1])
        assert row[0] == name(TOKENS, i) and row[1] == name(TOKENS, seen[0])
        assert row[2] == pytest.approx(w[i][seen[0]], abs=1e-4)
        if i:  # the first query sees one key only
            assert row[3] == name(TOKENS, seen[1]) and row[4] == pytest.approx(w[i][seen[1]], abs=1e-4)
        else:
            assert row[3] == "none"


def test_a_head_planted_on_the_previous_token_is_said_to_follow_that_rule():
    tr = trace(plant="previous")
    w = tr.weights[0].tolist()
    hits = sum(1 for i in range(6) if ranked(w[i])[0] == i - 1)
    assert hits > 3, "the planted rule should hold for most queries"
    d = Description.of(F.attention_figure(tr, 0, TOKENS, "weights"))
    assert f"{hits} of 6 queries put most weight on the token before them." in d.alt



def test_a_head_planted_on_the_next_token_is_said_to_follow_that_rule():
    """A clean next-token diagonal is summed up as that rule, not as "no single rule"."""
    tr = trace(plant="next")
    w = tr.weights[0].tolist()
    hits = sum(1 for i in range(6) if ranked(w[i])[0] == i + 1 and w[i][i + 1] > sorted(w[i])[-2])
    assert hits > 3, "the planted rule should hold for most queries"
    grid = Description.of(F.head_grid_figure(tr, TOKENS))
    assert grid.rows[0][2] == f"{hits} of 6 queries put most weight on the token after them."


def test_a_tie_is_never_said_to_be_a_winner():
    """A uniform head (every weight 1/6) is summed up as a tie in every row, with no strongest key."""
    tr = trace(plant="uniform")
    assert max(abs(v - 1 / 6) for v in tr.weights[0].ravel()) < 1e-6  # the engine's weights: a tie in every row
    d = Description.of(F.attention_figure(tr, 0, TOKENS, "weights"))
    assert "6 of 6 queries have no single strongest key (a tie)." in d.alt and "first token" not in d.alt

def test_the_head_grid_ranks_heads_by_their_mean_largest_weight():
    tr = trace()
    focus = [sum(max(row) for row in tr.weights[i].tolist()) / 6 for i in range(4)]
    d = Description.of(F.head_grid_figure(tr, TOKENS))
    best, worst = focus.index(max(focus)), focus.index(min(focus))
    assert (f"Most focused: head {best + 1} (mean largest weight {focus[best]:.2f}); least: head {worst + 1} "
            f"({focus[worst]:.2f}).") in d.alt
    assert [r[1] for r in d.rows] == pytest.approx(focus, abs=1e-4)


def test_cross_attention_grid_says_why_no_key_rule_applies():
    """In cross-attention the key-rule column says why no position rule applies, in words no one reads as a key."""
    tr = trace()
    d = describe.head_weights(tr.weights, TOKENS, [f"s{j}" for j in range(6)], "Attention weights")
    assert [r[2] for r in d.rows] == ["no position rule: queries and keys come from two sentences"] * 4


def test_the_entropy_description_names_the_extremes_in_bits():
    tr = trace()
    bits = [[scipy_entropy(tr.weights[h, q], base=2) for h in range(4)] for q in range(6)]  # queries as rows
    d = Description.of(F.entropy_figure(tr, TOKENS))
    cells = [(bits[q][h], q, h) for q in range(6) for h in range(4)]
    low, high = min(cells), max(cells)
    assert f"lowest {low[0]:.2f} bits ({name(TOKENS, low[1])}, head {low[2] + 1})" in d.alt
    assert f"highest {high[0]:.2f} bits ({name(TOKENS, high[1])}, head {high[2] + 1})" in d.alt
    assert [list(r[1:]) for r in d.rows] == [pytest.approx(row, abs=1e-3) for row in bits]


def test_a_value_matrix_gives_its_range_and_where_the_extremes_are():
    tr = trace()
    x = tr.x.tolist()
    cells = [(x[i][j], i, j) for i in range(6) for j in range(16)]
    low, high = min(cells), max(cells)
    d = Description.of(F.input_figure(tr.x, TOKENS))
    assert (f"from {low[0]:.3g} (row {name(TOKENS, low[1])}, column d{low[2] + 1}) to {high[0]:.3g} "
            f"(row {name(TOKENS, high[1])}, column d{high[2] + 1})") in d.alt
    assert [r[1:] for r in d.rows] == [pytest.approx((min(row), max(row)), abs=1e-4) for row in x]


def test_the_mask_is_counted():
    tr = trace(causal=True)
    d = Description.of(F.attention_figure(tr, 0, TOKENS, "mask"))
    assert "15 of 36 query–key pairs blocked" in d.alt
    assert [r[1:] for r in d.rows] == [(i + 1, 5 - i) for i in range(6)]


def test_tokens_stay_text_in_words_and_table():
    """A token that looks like markup is said as typed; the table marks which columns hold user text."""
    tokens = ["<b>", "*cat*", "$5", "&amp;", ":material/home:", "mat"]
    d = Description.of(F.query_weights_figure(trace(), 0, 5, tokens))
    assert any(f"'{t}'" in d.alt for t in tokens)
    assert {r[0] for r in d.rows} == {name(tokens, j) for j in range(6)}
    assert d.text_columns == (0,)


def test_plain_undoes_plotlys_markup_only():
    assert describe.plain("W<sup>O</sup><sub>i</sub><br>token &lt;b&gt;") == "W^O_i; token <b>"


def test_every_figure_carries_a_text_alternative():
    for title, fig in catalogue().items():
        d = Description.of(fig)
        assert d is not None and len(d.alt) > 20, title
        assert "nan" not in d.alt.lower().replace("nano", ""), (title, d.alt)
        assert all(len(row) == len(d.columns) for row in d.rows), title


def test_no_text_alternative_carries_a_titles_markup():
    """A title's second line (figures.base.SUBTITLE) and plotly's tags are read as words, in every figure family.
    (The catalogue's tokens look like markup too, but none of them is one of these tags.)"""
    tags = re.compile(r"<br|<span|</span|<sub|</sub|<sup|</sup|style=")
    bad = []
    for title, fig in catalogue().items():
        d = Description.of(fig)
        texts = [d.alt, *map(str, d.columns), *(str(c) for row in d.rows for c in row)]
        bad += [(title, t) for t in texts if tags.search(t)]
    assert not bad


def test_a_small_bar_keeps_its_digits_in_the_table_as_in_the_sentence():
    """A small bar keeps its digits in the table as in the sentence, which writes it 2.14 × 10⁻⁵, not 2.14e-05."""
    d = describe.bars(["a", "b", "c", "d", "e", "f", "g"], [0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 2.14e-05], "scores")
    assert "smallest g (2.14 × 10⁻⁵)" in d.alt and "e-05" not in d.alt
    assert dict(d.rows)["g"] == pytest.approx(2.14e-05, rel=1e-9)


def test_a_count_keeps_every_digit_in_a_charts_table():
    """A count keeps every digit in a chart's table, as in the sentence: 3,649,536 = 11 · 576 · 576, never rounded
    to six significant digits."""
    d = describe.bars(["queries", "keys"], [11 * 576 * 576, 11 * 576 * 192], "multiply-adds")
    assert dict(d.rows) == {"queries": 3_649_536, "keys": 1_216_512}
    g = describe.grouped_bars(["queries"], {"1 head": [11 * 576 * 576], "9 heads": [11 * 576 * 576]}, "multiply-adds")
    assert g.rows == (("queries", 3_649_536, 3_649_536),)
