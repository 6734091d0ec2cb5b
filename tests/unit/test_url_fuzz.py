"""Crafted links (crafted_links.py) through mha_app.state.url.check alone, many of them: every value it cannot use is
named in a warning, every value it keeps is the one the link gave unless a warning names it, and what it keeps passes
the check again unchanged. app/test_links_fuzz.py runs a few of these links through the whole app."""

from __future__ import annotations

import re

from hypothesis import find, given, settings

from crafted_links import links, named, parsed, valid_values
from mha_app.state.settings import FIELDS
from mha_app.state.url import check

# A check is cheap next to a run of the whole app: six times the profile's examples (300 by default, 6,000 under
# `thorough`).
MANY = settings(max_examples=6 * settings.default.max_examples)


@MANY
@given(link=links())
def test_check_names_every_value_it_cannot_use_and_keeps_the_others_as_given(link):
    problems, kept = check(link.params)
    where = link.url()[:600]
    for problem in problems:
        assert "Traceback" not in problem and not re.search(r"\w+Error\b", problem), (where, problem)
    for name in link.refused:
        assert named(name, problems), (where, f"no warning names {name}", problems)
    assert set(kept) <= set(FIELDS), (where, kept)
    for name, raw in link.params.items():
        if name in link.refused or named(name, problems):
            continue
        assert name in kept and parsed(name, kept[name]) == parsed(name, raw), (where, name, kept.get(name), raw)
    assert check(kept) == ([], kept), (where, "what the check keeps passes it again, unchanged")


def test_every_setting_has_values_the_check_keeps_alone():
    """The fuzz is not degenerate: each setting's valid values include one that a link of that setting alone keeps."""
    for name in FIELDS:
        raw = find(valid_values(name), lambda raw, name=name: check({name: raw})[0] == [])
        assert parsed(name, check({name: raw})[1][name]) == parsed(name, raw), name
