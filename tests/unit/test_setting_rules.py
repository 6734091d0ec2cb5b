"""The rules between settings, written once (Spec.problems, View.problems): what each says and what it fixes, and
that the engine, the link check and the example all follow the same rule."""

from __future__ import annotations

import pytest

import mha_core as mc
from mha_app.state import url
from mha_app.state.example import build_example
from mha_app.state.settings import Settings, Spec, View, closest_head_count, head_options
from mha_core.attention.config import head_split_problem


def test_head_options_divide_d_model_and_stop_at_16():
    assert head_options(30) == [1, 2, 3, 5, 6, 10, 15]
    assert head_options(1024) == [1, 2, 4, 8, 16]


def test_closest_head_count_prefers_the_larger_on_a_tie():
    assert closest_head_count(30, 4) == 5  # 3 and 5 are equally close
    assert closest_head_count(31, 8) == 1
    assert closest_head_count(64, 8) == 8


def test_the_engine_and_the_settings_give_the_same_reason_for_h():
    with pytest.raises(mc.ConfigError) as err:
        mc.MHAConfig(d_model=128, n_heads=5)
    problem = {p.name: p for p in Spec(h=5).problems()}["h"]
    assert str(err.value) == head_split_problem(128, 5)
    assert problem.message.startswith(head_split_problem(128, 5, 16)) and problem.fixed == 4


@pytest.mark.parametrize(("spec", "name", "fixed", "words"), [
    (Spec(h=5), "h", 4, "must divide d_model"),
    (Spec(kv_heads=3), "kv_heads", 0, "must divide h = 8"),
    (Spec(input="tiny", kv_heads=1), "kv_heads", 0, "applies to random weights"),
    (Spec(model="all-MiniLM-L6-v2", scale="none"), "scale", "sqrt_dk", "trained with the 1/√d_k"),
    (Spec(model="all-MiniLM-L6-v2", plant="previous"), "plant", "none", "applies to random weights"),
    (Spec(h=4, plant="previous", plant_head=6), "plant_head", 1, "only 4 heads"),
    (Spec(h=4, ablate=(2, 9)), "ablate", (2,), "switching off 2 only"),
    (Spec(input="pair", causal=True), "causal", False, "cross-attention"),
    (Spec(text="one two three", pad=3), "pad", 0, "no token to attend to"),
])
def test_each_rule_says_why_and_what_it_uses_instead(spec, name, fixed, words):
    problems = {p.name: p for p in spec.problems()}
    assert set(problems) == {name}
    assert problems[name].fixed == fixed and words in problems[name].message
    assert getattr(spec.normalised(), name) == fixed and spec.normalised().problems() == []


def test_a_later_rule_sees_the_earlier_fix():
    """h = 5 becomes 4 for d_model = 128; then 2 key/value heads divide it, and head 4 exists."""
    spec = Spec(h=5, kv_heads=2, ablate=(4,))
    assert [p.name for p in spec.problems()] == ["h"]


@pytest.mark.parametrize(("view", "name", "fixed"), [
    (View(head=9), "head", 1), (View(query=50), "query", 11), (View(zoom_query=20), "zoom_query", 11),
])
def test_view_rules_follow_the_computed_spec(view, name, fixed):
    settings = Settings(Spec(), view)
    assert {p.name: p.fixed for p in settings.problems()} == {name: fixed}
    assert getattr(settings.normalised().view, name) == fixed


def test_the_layer_rule_knows_each_models_depth():
    assert [p.name for p in Settings(Spec(model="all-MiniLM-L6-v2"), View(layer=7)).problems()] == ["layer"]
    assert Settings(Spec(model="SmolLM2-135M-Instruct"), View(layer=30)).problems() == []


def test_the_link_check_warns_only_for_what_the_link_gave():
    problems, kept = url.check({"d_model": "100"})  # the default h = 8 does not divide 100: fixed without a word
    assert problems == [] and kept == {"d_model": "100"}
    problems, kept = url.check({"d_model": "100", "h": "8"})
    assert len(problems) == 1 and "`h`" in problems[0] and kept == {"d_model": "100", "h": "10"}


def test_the_example_computes_a_normalised_spec_and_the_engine_refuses_the_rest():
    ex = build_example(Spec(input="pair", causal=True).normalised())
    assert ex.trace.mask is None
    with pytest.raises(mc.ConfigError, match="no token to attend to"):
        build_example(Spec(text="one two three", pad=3))
