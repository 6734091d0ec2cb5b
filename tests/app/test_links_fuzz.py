"""Crafted links (crafted_links.py) through the whole app (AppTest), on every page.

For every link: no exception, no traceback, a warning that names each value the app could not use, and the values
it could use are the ones the app shows. Each link runs the whole app, so the default profile draws two links per
page and `thorough` (pytest --hypothesis-profile=thorough) thirty, 330 in all; unit/test_url_fuzz.py puts many more
through mha_app.state.url.check alone.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app_pages import app_pages
from crafted_links import Link, links, named, parsed
from helpers import ROOT
from mha_app.state.settings import FIELDS, control, default
from screen import messages, non_finite_on_screen

PAGES = app_pages()
PER_PAGE = settings(max_examples=30 if settings.get_current_profile_name() == "thorough" else 2)


def run_link(link: Link):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update(link.params)
    at.switch_page(link.page.script)  # every url_path is its file's name, so the page is found before a first run
    return at.run()


def contradicted(link: Link, shown, example) -> set[str]:
    """Valid values that cannot work together with the rest, judged from what the app shows."""
    valid = {name: parsed(name, raw) for name, raw in link.params.items()
             if name in FIELDS and name not in link.refused}
    out = set()
    spec, card = shown.spec, shown.spec.card
    n, m, heads = len(example.tokens), len(example.key_tokens or example.tokens), example.cfg.n_heads
    if "head" in valid and valid["head"] > heads:
        out.add("head")
    if "query" in valid and valid["query"] > n:
        out.add("query")
    if card and "layer" in valid and valid["layer"] > card.n_layers:
        out.add("layer")
    if not card and "pad" in valid and valid["pad"] >= m:
        out.add("pad")
    if not card and spec.input != "tiny" and "h" in valid and spec.d_model % valid["h"]:
        out.add("h")
    # The experiments on heads: what a trained model or the tiny example cannot take, and heads that do not exist.
    if "ablate" in valid and max(valid["ablate"]) > heads:
        out.add("ablate")
    # A trained model and the tiny example keep their own shapes and scale: asking for the default is no conflict.
    changed = {name for name in ("kv_heads", "scale", "plant") if name in valid and valid[name] != default(name)}
    if "kv_heads" in changed and (card or spec.input == "tiny" or spec.h % valid["kv_heads"]):
        out.add("kv_heads")
    if card:
        out |= {"scale", "plant"} & changed
    if "plant_head" in valid and valid["plant_head"] > heads:
        out.add("plant_head")
    if spec.input == "pair" and valid.get("causal"):
        out.add("causal")
    return out


def used(shown) -> set[str]:
    """The settings that decide what this view shows (the others are not read in this mode)."""
    spec = shown.spec
    names = {"model", "backend", "head", "query", "stage"}
    if spec.card:
        return names | {"text", "layer"}
    names |= {"input", "causal", "pad"}
    if spec.input != "tiny":
        names |= {"d_model", "h", "seed"}
    inputs = {"sentence": {"text", "pe"}, "pair": {"text", "text_q", "pe"}, "random": {"n"}}
    return names | inputs.get(spec.input, set())


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
@PER_PAGE
@given(data=st.data())
def test_crafted_link(page, data):
    link = data.draw(links(pages=[page]), label="link")
    at = run_link(link)
    where = link.url()[:600]
    assert not at.exception, (where, [e.value for e in at.exception])
    warnings = messages(at, "warning")
    notes = warnings + messages(at, "info")
    for text in notes + messages(at, "error"):
        assert "Traceback" not in text and "Error:" not in text and not re.search(r"\w+Error\b", text), (where, text)

    texts = {name: link.params.get(name, default(name)) for name in ("text", "text_q")}
    texts = {name: value[-1] if isinstance(value, list) else value for name, value in texts.items()}
    text = texts["text"]
    errors = messages(at, "error")
    if errors:  # the one message that stops a page: a sentence with no words in it
        assert all("text" in e and ("no words" in e or "empty" in e) for e in errors), (where, errors)
        assert any(not re.sub(r"[\s\u200b\ufeff\u202a-\u202e]", "", t) for t in texts.values()), (where, errors)
        return
    shown, example = at.session_state["view"]
    for name in link.refused | contradicted(link, shown, example):
        assert named(name, notes), (where, f"no warning names {name}", notes)
    values = shown.values()
    for name, raw in link.params.items():
        if name in used(shown) and name not in link.refused | contradicted(link, shown, example):
            want = parsed(name, raw)
            if name == "text":
                assert values["text"] == want[: control("text").max_chars], where
            else:
                assert values[name] == want, (where, name, values[name], want)
    user_text = text if values.get("text") == text else ""
    assert not non_finite_on_screen(at, user_text), (where, non_finite_on_screen(at, user_text))
