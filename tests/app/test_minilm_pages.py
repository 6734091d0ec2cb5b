"""The app with the real pretrained model (all-MiniLM-L6-v2), through AppTest."""

from __future__ import annotations

import numpy as np
import pytest

from app_pages import step_pages
from mha_app.copy.example import describe
from mha_app.copy.models import model_text
from mha_app.copy.sidebar import model_sizes_caption
from mha_app.copy.steps import how_checked
from mha_app.state.sentences import EXAMPLE_SENTENCES
from mha_app.state.settings import default
from mha_core.analysis import reference
from mha_core.pretrained import load_minilm
from screen import (
    as_array,
    assert_clean,
    explorer,
    explorer_matrix,
    figure_titled,
    figures,
    mosaic_outline,
    mosaic_panels,
    run_app,
)

REAL = {"model": "all-MiniLM-L6-v2"}
STEP_PAGES = step_pages()


@pytest.mark.parametrize("page", STEP_PAGES)
def test_step_pages_show_the_selected_layer_of_the_real_model(page_run, page):
    """The matrix's MiniLM mode (modes.py) is at layer 2: each page draws it (test_every_page.py) and says so."""
    at = page_run(REAL["model"], page)
    assert_clean(at)
    assert figures(at)
    settings, ex = at.session_state["view"]
    assert settings.view.layer == 2
    assert describe(settings, ex) in [c.value for c in at.caption]
    assert any("d_model = 384 · h = 12" in c.value for c in at.caption)


def test_attention_page_shows_the_real_weights_of_that_layer_and_head():
    text = "The cat sat on the mat because it was tired."
    at = run_app({**REAL, "layer": "1", "head": "3", "text": text}, "pages/attention.py")
    assert_clean(at)
    run = load_minilm().run(text)
    header, arrays, view = explorer(at)
    assert header["heads"] == 12 and view["layer"] == 1 and view["head"] == 3
    np.testing.assert_allclose(explorer_matrix(at), run.layers[0].weights[2], atol=1e-6)
    np.testing.assert_allclose(arrays["1/weights"], run.layers[0].weights, atol=1e-6)
    assert header["tokens"][0] == "[CLS]" and header["tokens"][-1] == "[SEP]" == run.tokens[-1]


def test_changing_the_layer_changes_the_numbers():
    at = run_app({**REAL, "text": "Heads learn patterns."}, "pages/attention.py")
    first = explorer_matrix(at, "weights", 1)
    at.selectbox(key="layer").set_value(5).run()
    assert_clean(at)
    fifth = explorer_matrix(at, "weights", 1)
    assert explorer(at)[2]["layer"] == 5
    assert first.shape == fifth.shape and not np.allclose(first, fifth)


def test_overview_badge_checks_the_real_layer_against_torch():
    at = run_app({**REAL, "layer": "4"})
    assert_clean(at)
    assert how_checked(reference.HOW[reference.MODULE]) in [c.value for c in at.caption]


def test_real_model_fixes_d_model_and_h_and_hides_random_only_controls():
    at = run_app(REAL)
    keys = {w.key for w in [*at.number_input, *at.selectbox, *at.radio, *at.checkbox]}
    assert "d_model" not in keys and "h" not in keys and "causal" not in keys and "layer" in keys
    sizes = model_sizes_caption(REAL["model"], 384, 12, 32, 12, model_text(REAL["model"]).weights_short)
    assert any(c.value == sizes for c in at.caption)


def test_model_view_shows_all_72_heads_and_opens_one():
    at = run_app(REAL, "pages/model_view.py")
    assert_clean(at)
    grid = figure_titled(at, "All 6 × 12 heads")
    panels = mosaic_panels(grid)
    run = load_minilm().run(default("text"))
    assert len(panels) == 72
    for (layer, head), z in panels.items():
        np.testing.assert_allclose(z, run.layers[layer - 1].weights[head - 1], atol=1e-6)
    assert mosaic_outline(grid) == (1, 1)
    at.selectbox(key="pick_layer").set_value(2).run()
    at.selectbox(key="pick_head").set_value(7).run()
    assert at.selectbox(key="layer").value == 2 and at.selectbox(key="head").value == 7
    links = [p.proto.label for p in at.get("page_link")]
    assert any("layer 2, head 7" in label for label in links)
    at.switch_page("pages/attention.py").run()
    assert explorer(at)[2] == {"layer": 2, "head": 7, "query": 2, "stage": "weights"}  # the first word, after [CLS]


def test_head_summary_table_and_chart_match_the_reference_statistics():
    text = EXAMPLE_SENTENCES["Repeated words"]
    at = run_app({**REAL, "text": text}, "pages/head_summary.py")
    assert_clean(at)
    run = load_minilm().run(text)
    words = slice(1, len(run.tokens) - 1)                             # the queries: [CLS] and [SEP] left out
    weights = run.attentions[:, :, words]                              # (6, 12, n - 2, n)
    chart = figure_titled(at, "Mean entropy")
    z = as_array(chart["data"][0]["z"])
    expected = -(np.where(weights > 0, weights * np.log2(np.where(weights > 0, weights, 1)), 0)).sum(-1).mean(-1)
    np.testing.assert_allclose(z, expected, atol=1e-5)
    at.radio(key="summary_metric").set_value("cls").run()
    z = as_array(figure_titled(at, "Share: [CLS]")["data"][0]["z"])
    np.testing.assert_allclose(z, weights[..., 0].mean(-1), atol=1e-5)
    table = at.dataframe[0].value
    assert len(table) == 72 and set(table.columns) >= {"layer", "head", "pattern", "entropy", "prev", "elsewhere"}


@pytest.mark.parametrize("page", ["pages/model_view.py", "pages/head_summary.py"])
def test_real_model_pages_explain_how_to_switch_when_weights_are_random(page):
    at = run_app({}, page)
    assert not at.exception
    assert any("all-MiniLM-L6-v2" in i.value for i in at.info)
    at.button[0].click().run()
    assert at.radio(key="model").value == "all-MiniLM-L6-v2"
    assert figures(at)


def test_example_sentence_picker_fills_the_text():
    at = run_app(REAL)
    label = next(iter(EXAMPLE_SENTENCES))
    at.selectbox(key="example").set_value(label).run()
    assert_clean(at)
    assert at.text_area(key="text").value == EXAMPLE_SENTENCES[label]


def test_bad_input_for_the_real_model():
    at = run_app({**REAL, "text": "   "})
    assert not at.exception
    assert any("empty" in e.value for e in at.error)
    at = run_app({**REAL, "text": "I love 🍕 and ☃"})
    assert not at.exception
    assert any("[UNK]" in i.value for i in at.info)
    long_text = "word " * 400
    at = run_app({**REAL, "text": long_text})
    assert not at.exception
    assert any("only the first 256" in i.value for i in at.info)
    assert at.number_input(key="query").proto.max == 256
