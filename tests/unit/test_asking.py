"""Ask or show: which links ask their questions before the figures show, the links the app writes for each choice,
and which question an answer belongs to."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mha_app.state import url
from mha_app.state.asked import asked
from mha_app.state.settings import VIEW_NAMES, Settings, asks_by_default

# (link, whether its questions wait)
LINKS = [
    ({}, True),                                     # a visit to a step page, as today
    ({"h": "4", "model": "random"}, True),          # settings of the computation name no view
    ({"key": "3", "screen": "4"}, True),
    *(({name: "2"}, False) for name in VIEW_NAMES),  # a link to a view opens it drawn
    ({"tab": "mask"}, False),
    ({"head": "2", "ask": "true"}, True),           # ... unless it says to ask
    ({"ask": "false"}, False),
    ({"present": "true"}, True),                    # a presentation asks
    ({"present": "true", "head": "2"}, True),
    ({"present": "true", "ask": "false"}, False),   # ... unless it says not to
    ({"present": "false", "query": "3"}, False),
]


@pytest.mark.parametrize(("params", "asks"), LINKS, ids=[str(p) for p, _ in LINKS])
def test_which_links_ask(params, asks):
    assert url.link_asks(params) is asks


def test_the_defaults_rule_is_the_links_rule():
    assert asks_by_default([], present=False) and asks_by_default(["head"], present=True)
    assert not asks_by_default(["stage"], present=False)


@pytest.mark.parametrize("view", [{}, {"head": 2}, {"stage": "raw"}, {"tab": "plant"}, {"present": True},
                                  {"present": True, "query": 3}, {"layer": 2}])
@pytest.mark.parametrize("ask", [True, False])
def test_a_link_the_app_writes_asks_as_its_view_did(view, ask):
    """The share link (settings.query_params) reopens the view asking, or not, as it was; ask=false is always
    spelled out, ask=true only where the link would otherwise open drawn."""
    s = Settings.of(**view, ask=ask)
    params = s.query_params()
    assert url.link_asks(params) is ask, params
    assert url.check(params)[0] == []
    assert ("ask" in params) is (not ask or not asks_by_default(params, s.view.present))
    if not ask:
        assert params["ask"] == "false"


def test_the_link_of_a_default_view_that_asks_is_bare():
    assert Settings().share_url("http://host/attention") == "http://host/attention"
    assert Settings.of(ask=False).share_url("http://host/attention") == "http://host/attention?ask=false"


def test_ask_and_tab_are_checked_like_every_setting():
    assert url.check({"ask": "no", "tab": "Why √d_k?"}) == ([], {"ask": "false", "tab": "scale"})
    problems, kept = url.check({"ask": "maybe", "tab": "heatmap"})
    assert kept == {} and len(problems) == 2


# --- which question an answer belongs to ------------------------------------------------------------------------

BASE = Settings.of(head=2, query=3, key=4)


@pytest.mark.parametrize("changed", [
    {"spec": replace(BASE.spec, seed=1)}, {"spec": replace(BASE.spec, model="all-MiniLM-L6-v2")},
    {"spec": replace(BASE.spec, text="Another sentence.")},
    {"view": replace(BASE.view, head=3)}, {"view": replace(BASE.view, query=1)}, {"view": replace(BASE.view, layer=2)},
], ids=["seed", "model", "text", "head", "query", "layer"])
@pytest.mark.parametrize("kind", ["strongest_key", "x_size", "cell_weight"])
def test_another_example_layer_head_or_query_is_another_question(changed, kind):
    assert asked(kind, replace(BASE, **changed), keys=11) != asked(kind, BASE, keys=11)


def test_the_key_counts_only_for_a_question_about_one_cell():
    other_key = replace(BASE, view=replace(BASE.view, key=5))
    assert asked("cell_weight", other_key, keys=11) != asked("cell_weight", BASE, keys=11)
    assert asked("strongest_key", other_key, keys=11) == asked("strongest_key", BASE, keys=11)
    assert asked("cell_weight", BASE, keys=3).key == 3, "a key past the last is the last, as the page shows it"


def test_what_only_changes_the_display_is_the_same_question():
    shown = replace(BASE, view=replace(BASE.view, stage="raw", tab="mask", screen=4, ask=False, zoom_query=2))
    assert asked("strongest_key", shown, keys=11) == asked("strongest_key", BASE, keys=11)
    assert asked("strongest_key", BASE, keys=11) != asked("strongest_share", BASE, keys=11)
