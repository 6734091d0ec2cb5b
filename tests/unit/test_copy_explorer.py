"""copy.explorer: the sentences the attention explorer shows (its payload's header) and its saved page's lines. A
template is checked filled as the browser fills it (shared.js: fill replaces each {name}, as str.format does here)."""

from __future__ import annotations

import string

import pytest

from mha_app.copy import explorer as say


def test_a_switched_off_head_is_said_once_with_its_number():
    assert say.head_off(3) == ("head 3 is switched off: Step 3 multiplies its output by 0, so none of its keys "
                               "reaches the output")
    text = say.header_text(4, 1, 1, 1, None, scale=0.25)
    assert text["head_off"] == [say.head_off(i) for i in (1, 2, 3, 4)]


@pytest.mark.parametrize("stage, scale, sub", [
    ("raw", 0.25, "before the scale and the mask"), ("raw", 1.0, "not scaled here; before the mask"),
    ("mask", 0.25, "hatched = blocked (M = −∞)"), ("weights", 0.25, "hatched = blocked by the mask"),
    ("contributions", 1.0, "hatched = blocked by the mask"),
])
def test_each_stage_has_its_note(stage, scale, sub):
    assert say.stage_note(stage, scale) == f"rows: queries · columns: keys · {sub}"


def test_exact_matrices_need_no_pooling_or_zoom_sentences():
    text = say.header_text(2, 1, 1, 1, None, scale=0.25)
    assert text["matrix"] == {"whole": "Head {head}: {title}", "zoom": ""}
    assert text["bar_zoom"] == text["bar_pooled"] == ""
    assert text["grid"] == {"weights": "All 2 heads: softmax weights",
                            "contributions": "All 2 heads: contribution shares"}
    assert text["loading"] == ["Loading layer 1…"]


def test_pooled_matrices_say_their_blocks_and_the_zoom_window():
    text = say.header_text(12, 6, 4, 8, (64, 128, 0, 64), scale=0.125)
    assert say.pooled(4) == "(means of 4×4 blocks)"
    assert text["grid"]["weights"] == "All 12 heads: softmax weights (means of 8×8 blocks)"
    assert text["matrix"]["whole"].format(head=3, title="Softmax weights") == (
        "Head 3: Softmax weights  (means of 4×4 blocks)")
    assert text["matrix"]["zoom"].format(head=3, title="Softmax weights") == (
        "Head 3: Softmax weights: queries 65–128 × keys 1–64, every cell exact")
    assert text["bar_zoom"] == "keys 1–64 (the zoom window)"
    assert text["bar_pooled"] == "means of 4×4 blocks; move the zoom window over the query for its exact weights"
    assert say.bar_pooled(4, False) == "means of 4×4 blocks"
    assert text["loading"][5] == "Loading layer 6…" and len(text["loading"]) == 6


def test_shares_and_blocked_cells():
    assert say.shares_note(1).endswith("outlines: its weight")
    assert say.shares_note(3).endswith("outlines: the mean weight")
    assert say.header_text(2, 1, 1, 1, None, scale=1.0)["shares"] == say.forms(say.shares_note(1), say.shares_note(2))
    assert set(say.BLOCKED) == {"weights", "contributions", "scaled"}
    assert all(line.startswith("blocked by the mask") for line in say.BLOCKED.values())
    assert say.MASK_CELL == {"blocked": "blocked: M = −∞", "open": "open: M = 0"}


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def test_forms_hold_a_sentence_for_one_and_for_several():
    assert say.forms("1 key", "{count} keys") == {"one": "1 key", "many": "{count} keys"}


@pytest.mark.parametrize("layers, heads, set_, line", [
    (1, 4, "", "head 2 of 4 · softmax weights · query 1 “The”"),
    (6, 12, "", "Layer 3 · head 2 of 12 · softmax weights · query 1 “The”"),
    (1, 1, " · 3 queries in the set", "head 2 of 1 · softmax weights · query 1 “The” · 3 queries in the set"),
])
def test_the_status_line_names_the_layer_only_where_there_are_several(layers, heads, set_, line):
    template = say.status(layers, heads)
    assert template.format(layer=3, head=2, stage="softmax weights", query=1, token="“The”", set=set_) == line


def test_a_set_of_queries_is_counted_with_its_plural():
    assert say.in_set(3).format(count=3) == " · 3 queries in the set"
    assert say.in_set(1).format(count=1) == " · 1 query in the set"
    assert say.header_text(2, 1, 1, 1, None, scale=1.0)["in_set"] == say.forms(say.in_set(1), say.in_set(2))


def test_the_canvas_in_words_names_one_query_or_a_set_and_its_strongest_keys():
    one = say.DESCRIBE.format(layer=1, head=2, who=say.who(1).format(token="sat", query=3),
                              weights=say.strongest(2).format(key="'cat' (2)", weight="0.62", next="'The' (1)",
                                                              next_weight="0.21"))
    assert one == ("Attention explorer, layer 1, head 2, query 'sat' (3): most weight on 'cat' (2) (0.62), then "
                   "'The' (1) (0.21).")
    many = say.DESCRIBE.format(layer=4, head=1, who=say.who(2).format(queries="1, 5"),
                               weights=say.strongest(1).format(key=say.KEYS.format(keys="5–8"), weight="0.90"))
    assert many == "Attention explorer, layer 4, head 1, queries 1, 5 (their mean): most weight on keys 5–8 (0.90)."
    assert say.KEY_NAMED.format(token="cat", key=2) == "'cat' (2)"
    blocked = say.DESCRIBE.format(layer=1, head=1, who=say.who(1).format(token="a", query=1), weights=say.ALL_BLOCKED)
    assert blocked == "Attention explorer, layer 1, head 1, query 'a' (1): every key is blocked."


@pytest.mark.parametrize("what, queries, summed, title", [
    ("weights", 1, False, "Head 2, query 3 “sat”: its weights"),
    ("weights", 1, True, "Head 2, query 3 “sat”: its weights sum to 1.0000"),
    ("contribution shares", 1, True, "Head 2, query 3 “sat”: its contribution shares sum to 1.0000"),
    ("weights", 2, False, "Head 2, 2 queries (3 “sat”): their weights averaged (left axis) and summed (right axis)"),
    ("contribution shares", 5, False,
     "Head 2, 5 queries (3 “sat”): their contribution shares averaged (left axis) and summed (right axis)"),
    (None, 1, False, "Head 2, query 3 “sat”: no contribution shares"),   # a head switched off
    (None, 3, False, "Head 2, 3 queries (3 “sat”): no contribution shares"),
])
def test_the_bars_title_for_one_query_or_a_set(what, queries, summed, title):
    template = say.bar_title(what, queries, summed)
    assert template.format(head=2, names="3 “sat”", count=queries, total="1.0000") == title
    assert ("total" in placeholders(template)) == summed and ("count" in placeholders(template)) == (queries > 1)


def test_the_header_carries_each_bar_title_by_stage_and_count():
    bar = say.header_text(4, 1, 1, 1, None, scale=1.0)["bar"]
    assert bar["weights"] == say.forms(say.bar_title("weights", 1), say.bar_title("weights", 2))
    assert bar["contributions"]["many"] == say.bar_title("contribution shares", 2)
    assert bar["off"] == say.forms(say.bar_title(None, 1), say.bar_title(None, 2))
    assert bar["summed"] == {"weights": say.bar_title("weights", 1, True),
                             "contributions": say.bar_title("contribution shares", 1, True)}


@pytest.mark.parametrize("scale, scaled", [(0.25, "scaled score"), (1.0, "score (not scaled)")])
def test_a_tooltip_names_the_number_of_its_stage(scale, scaled):
    names = say.value_names(scale)
    assert names["scaled"] == scaled and names["raw"] == "raw score" and names["weights"] == "softmax weight"
    assert names["contributions"] == "contribution share" and names["alpha"] == "weight α"
    assert say.header_text(2, 1, 1, 1, None, scale=scale)["names"] == names


def test_tooltip_lines_about_cells_blocks_and_sets():
    tip = say.TIP
    assert tip["pair"].format(query=2, token="“cat”", key=1, key_token="“The”") == "query 2 “cat” → key 1 “The”"
    assert tip["head_value"].format(head=5, name="softmax weight") == "head 5 · softmax weight"
    assert tip["before_mask"].format(name="scaled score") == "scaled score before the mask"
    assert tip["block"].format(queries="1–4", keys="9–10") == "queries 1–4 × keys 9–10"
    assert tip["block_masked"].format(percent="37.5", rows=4, cols=2) == "37.5% of the 4×2 block blocked"
    assert tip["block_blocked"].format(rows=4, cols=4) == "the whole 4×4 block is blocked by the mask"
    assert tip["block_mean"].format(head=2, rows=4, cols=4, name="raw score", value="0.5") == (
        "head 2 · mean of the 4×4 block: raw score = 0.5")
    assert tip["row_mean"].format(name="weight", mean="0.25") == "mean of a block row: weight = 0.25"
    assert say.mean_over(3).format(name="weight", count=3, mean="0.2") == "weight: mean over 3 queries = 0.2"
    assert say.mean_over(1).format(name="weight", count=1, mean="0.2") == "weight: mean over 1 query = 0.2"
    assert tip["size"].format(size="1.5") == "‖v_s W^O_i‖ = 1.5"


def test_every_template_of_the_header_names_only_what_the_browser_fills():
    """The explorer fills these names (explorer.js); any other placeholder would show as written."""
    filled = {"layer", "head", "stage", "query", "token", "set", "count", "who", "weights", "key", "keys", "weight",
              "next", "next_weight", "queries", "names", "total", "title", "name", "key_token", "percent", "rows",
              "cols", "value", "mean", "sum", "size", "heads"}

    def templates(value):
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for v in value.values():
                yield from templates(v)
        elif isinstance(value, list):
            for v in value:
                yield from templates(v)

    for window, step in ((None, 1), ((64, 128, 0, 64), 4)):
        for template in templates(say.header_text(3, 2, step, step, window, scale=0.5)):
            assert placeholders(template) <= filled, template


def test_the_loading_canvas_is_named_for_a_screen_reader():
    assert say.loading_label(2) == "Attention explorer: Loading layer 2…"
    assert say.header_text(2, 3, 1, 1, None, scale=1.0)["loading_label"] == [say.loading_label(i) for i in (1, 2, 3)]


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


def test_the_lines_view_says_what_a_lines_opacity_is_at_each_stage():
    text = say.lines_text(0.5)
    assert text["views"] == {"heatmap": "Heatmap", "lines": "Lines"}
    assert text["note"]["weights"] == "opacity = the softmax weight · blocked pairs: no line"
    assert text["note"]["contributions"] == "opacity = the contribution share · blocked pairs: no line"
    assert text["note"]["raw"].endswith("· before the mask")
    assert "|scaled score| ÷ the head's largest |scaled score|" in text["note"]["scaled"]
    assert "score (not scaled)" in say.lines_text(1.0)["note"]["scaled"]
    assert text["title"]["many"].format(heads="1, 3") == "Heads 1, 3: each query (left) joined to each key (right)"
    assert text["query"].format(query=2, token="“cat”") == "query 2 “cat”: its lines alone"
