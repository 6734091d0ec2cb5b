"""The app as a user drives it, through Streamlit's AppTest: every control, links in and out (every page in every
mode: test_every_page.py)."""

from __future__ import annotations

import numpy as np
import pytest

from mha_app.copy.steps import how_checked, torch_check
from mha_core.analysis import reference
from mha_core.figures import value_mix_figure
from screen import as_array, assert_clean, explorer, explorer_matrix, figure_titled, run_app


def grid_heads(at) -> int:
    """The heads the attention explorer is sent: one panel each in its grid."""
    header, arrays, view = explorer(at)
    return arrays[f"{view['layer']}/weights"].shape[0] if header["heads"] else 0


def test_changing_h_changes_the_number_of_head_heatmaps():
    at = run_app(page="pages/attention.py")
    assert grid_heads(at) == 8
    at.selectbox(key="h").set_value(4).run()
    assert_clean(at)
    assert grid_heads(at) == 4
    assert at.title[0].value.startswith("Step 2")


def test_changing_d_model_changes_the_shapes_shown():
    at = run_app(page="pages/projection.py", opened={"input_box": True})
    x_fig = figure_titled(at, "Input X")
    assert as_array(x_fig["data"][0]["z"]).shape[1] == 128
    at.number_input(key="d_model").set_value(32).run()
    assert_clean(at)
    x_fig = figure_titled(at, "Input X")
    assert as_array(x_fig["data"][0]["z"]).shape[1] == 32
    assert any("32" in latex.value for latex in at.latex)


def test_url_parameters_set_widgets_and_figures():
    params = {"input": "random", "n": "5", "d_model": "32", "h": "4", "head": "2", "query": "3", "seed": "7",
              "stage": "raw scores"}
    at = run_app(params, "pages/attention.py")
    assert_clean(at)
    assert at.radio(key="input").value == "random"
    assert at.number_input(key="n").value == 5
    assert at.number_input(key="d_model").value == 32
    assert at.selectbox(key="h").value == 4
    assert at.selectbox(key="head").value == 2
    assert at.number_input(key="query").value == 3
    assert grid_heads(at) == 4
    assert explorer(at)[2] == {"layer": 1, "head": 2, "query": 3, "stage": "raw"}
    assert explorer_matrix(at).shape == (5, 5)


def test_seed_in_url_changes_the_numbers():
    a = figure_titled(run_app({"seed": "1"}, "pages/projection.py", opened={"input_box": True}), "Input X")
    b = figure_titled(run_app({"seed": "2"}, "pages/projection.py", opened={"input_box": True}), "Input X")
    assert not np.allclose(as_array(a["data"][0]["z"]), as_array(b["data"][0]["z"]))


def test_malformed_url_parameters_warn_and_fall_back():
    """Each value's own message and fallback: unit/test_url.py; here the page shows them and still works."""
    params = {"h": "abc", "d_model": "31", "input": "random", "n": "999999", "model": "gpt-17", "causal": "maybe",
              "mystery": "1", "query": "-3", "seed": "1e99"}
    at = run_app(params, "pages/attention.py")
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(w.value for w in at.warning)
    for name in set(params) - {"d_model", "input"}:  # the link's two valid values
        assert f"`{name}`" in shown or name in shown, (name, shown)
    h = at.selectbox(key="h").value
    d_model = at.number_input(key="d_model").value
    assert d_model == 31 and h == 1
    assert grid_heads(at) == h


def test_head_count_that_does_not_divide_d_model_becomes_the_closest_valid_one():
    at = run_app({"d_model": "30", "h": "4"})
    assert not at.exception
    assert at.selectbox(key="h").value in (3, 5)
    assert any("h must divide d_model" in w.value for w in at.warning)
    at.number_input(key="d_model").set_value(28).run()
    assert 28 % at.selectbox(key="h").value == 0
    assert all(28 % int(o) == 0 for o in at.selectbox(key="h").options)


def test_changing_d_model_keeps_h_valid_and_says_so():
    at = run_app()
    at.number_input(key="d_model").set_value(30).run()
    assert_clean(at)
    assert 30 % at.selectbox(key="h").value == 0
    assert any("does not divide" in i.value for i in at.info)


def test_empty_sentence_gets_a_clear_message():
    at = run_app()
    at.text_area(key="text").set_value("   ").run()
    assert not at.exception
    assert any("at least one word" in e.value for e in at.error)


def test_padding_every_token_is_refused_in_words():
    at = run_app({"input": "random", "n": "4"})
    at.number_input(key="pad").set_value(4).run()
    assert_clean(at)
    assert any("no token to attend to" in w.value for w in at.warning)
    assert at.session_state["view"][0].spec.pad == 0, "the layer is computed without the padding, as the words say"


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_overview_badge_matches_torch_and_names_the_device(backend):
    at = run_app({"backend": backend})
    assert_clean(at)
    assert at.session_state["view"][1].trace.backend == backend
    assert any(c.value.startswith(torch_check(True, 0.0).removesuffix("0).")) for c in at.caption)
    assert how_checked(reference.HOW[reference.MODULE]) in [c.value for c in at.caption]
    assert any("on **CPU**" in c.value or "on **GPU (cuda" in c.value for c in at.caption)


def test_selected_head_and_query_follow_the_sidebar():
    at = run_app({"input": "random", "n": "5"}, "pages/attention.py")
    at.selectbox(key="head").set_value(3).run()
    at.number_input(key="query").set_value(4).run()
    assert_clean(at)
    assert explorer(at)[2] == {"layer": 1, "head": 3, "query": 4, "stage": "weights"}
    ex = at.session_state["view"][1]
    assert figure_titled(at, value_mix_figure(ex.trace, 2, 3, ex.tokens)["layout"]["title"]["text"])


def test_the_links_stage_reaches_the_explorer_and_the_share_link():
    at = run_app({"input": "random", "n": "4", "causal": "true", "stage": "mask"}, "pages/attention.py")
    assert_clean(at)
    assert explorer(at)[2]["stage"] == "mask"
    np.testing.assert_array_equal(explorer_matrix(at), np.triu(np.ones((4, 4)), 1))
    links = [c.value for c in at.code if c.value.startswith("http")]
    assert "stage=mask" in links[0]


def test_tiny_example_is_hand_checkable():
    at = run_app({"input": "tiny", "stage": "raw scores"}, "pages/attention.py")
    assert_clean(at)
    raw = explorer_matrix(at, "raw", 1)
    assert np.array_equal(raw, np.round(raw)), "raw scores of the tiny example are whole numbers"
    assert raw.shape == (3, 3)


def test_share_link_and_downloads_are_offered():
    at = run_app({"h": "4"}, "pages/attention.py")
    links = [c.value for c in at.code if c.value.startswith("http")]
    assert links and "h=4" in links[0] and "/attention" in links[0]
    first_run = run_app({"stage": "mask"}, "pages/attention.py")
    assert "stage=mask" in [c.value for c in first_run.code if c.value.startswith("http")][0]
    labels = [b.proto.label for b in at.get("download_button")]
    assert any(".npz" in label for label in labels) and any(".json" in label for label in labels)


def test_output_page_offers_a_pytorch_script():
    at = run_app(page="pages/output.py")
    scripts = [c.value for c in at.code if "nn.MultiheadAttention" in c.value]
    assert scripts and "print(output[0])" in scripts[0]


def test_user_text_is_never_rendered_as_markup():
    text = "<b>bold</b> **star** [link](http://example.com)"
    at = run_app({"text": text, "query": "2"})
    assert_clean(at)
    markdown = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "<b>" not in markdown and "](http" not in markdown


def test_plain_attention_stays_plain_when_h_changes_and_changes_back():
    """kv_heads = h means one K/V head per query head: after h 8 -> 4 -> 8, that is still so (not 4 shared heads)."""
    at = run_app({"d_model": "64", "h": "8"}, "pages/attention.py")
    for h in (4, 8):
        at.selectbox(key="h").set_value(h).run()
        assert_clean(at)
        assert at.selectbox(key="kv_heads").value == h
        assert at.session_state["view"][0].spec.kv_heads == 0, "plain multi-head attention"
    at.selectbox(key="kv_heads").set_value(2).run()
    at.selectbox(key="h").set_value(4).run()
    assert at.session_state["view"][0].spec.kv_heads == 2, "a chosen grouping that still divides h is kept"


@pytest.mark.parametrize("link", [{"input": "random"}, {"input": "random", "pe": "0"}, {"input": "tiny"}])
def test_positional_encoding_is_off_where_the_input_has_no_positions(link):
    """With input=random the "Positional encoding" box is unticked and greyed: X is random numbers with no position
    signal."""
    at = run_app(link, "pages/projection.py")
    assert_clean(at)
    box = next(c for c in at.checkbox if c.label == "Positional encoding")
    assert box.value is False and box.disabled and "no position signal" in box.help


def test_positional_encoding_stays_a_choice_for_a_sentence():
    at = run_app({"pe": "0"}, "pages/projection.py")
    box = next(c for c in at.checkbox if c.label == "Positional encoding")
    assert box.value is False and not box.disabled
    box.check().run()
    assert_clean(at)
    assert next(c for c in at.checkbox if c.label == "Positional encoding").value is True
