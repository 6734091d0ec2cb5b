"""Links: short stable keys, every older spelling still read the same way, and one form in the links the app writes.

The old spellings below are literal: they are what links shared before the keys existed (display labels), so these
tests fail if any of them stops opening the same view.
"""

from __future__ import annotations

import pytest

from mha_app.state import url
from mha_app.state.settings import FIELDS, Settings, control, to_url

# Values that links carried before the keys, and the key each one means now.
OLD_SPELLINGS = [
    ("stage", "softmax weights", "weights"), ("stage", "raw scores", "raw"), ("stage", "scaled scores", "scaled"),
    ("stage", "mask", "mask"),
    ("scale", "1/√d_k", "sqrt_dk"), ("scale", "none", "none"),
    ("backend", "NumPy", "numpy"), ("backend", "PyTorch", "torch"),
    ("model", "random weights", "random"), ("model", "all-MiniLM-L6-v2", "all-MiniLM-L6-v2"),
    ("model", "SmolLM2-135M-Instruct", "SmolLM2-135M-Instruct"),
    ("preset", "Transformer base", "transformer-base"), ("preset", "BERT-base", "bert-base"),
    ("preset", "GPT-3 175B", "gpt-3-175b"), ("preset", "Llama 2 70B", "llama-2-70b"),
    ("present", "1", True), ("present", "0", False),
]


@pytest.mark.parametrize(("name", "old", "key"), OLD_SPELLINGS)
def test_an_old_spelling_opens_the_same_view_without_a_warning(name, old, key):
    problems, kept = url.check({name: old})
    assert problems == []
    assert url.parse(name, old) == key
    assert kept == {name: to_url(key)}, "the link is rewritten with the key"


@pytest.mark.parametrize(("name", "old", "key"), [row for row in OLD_SPELLINGS if isinstance(row[2], str)])
def test_any_letter_case_reads_the_same(name, old, key):
    assert url.parse(name, old.upper()) == url.parse(name, old.lower()) == key


@pytest.mark.parametrize("raw", ["1", "true", "TRUE", "True", "yes", "Yes", "on", "ON", " 1 "])
def test_on_reads_from_every_usual_spelling(raw):
    assert url.parse("causal", raw) is True
    assert url.check({"causal": raw}) == ([], {"causal": "true"})


@pytest.mark.parametrize("raw", ["0", "false", "FALSE", "no", "No", "off", "Off"])
def test_off_reads_from_every_usual_spelling(raw):
    assert url.parse("pe", raw) is False
    assert url.check({"pe": raw}) == ([], {"pe": "false"})


@pytest.mark.parametrize("raw", ["2", "maybe", "", "tru"])
def test_an_unclear_on_or_off_is_explained_and_ignored(raw):
    problems, kept = url.check({"causal": raw})
    assert kept == {} and len(problems) == 1
    assert "1 or 0" in problems[0] and "using the default" in problems[0]


def test_choice_keys_are_short_words_a_link_spells_as_is():
    """A key needs no escaping in a URL and says what it is: letters, digits, '-', '_' (no spaces, no √)."""
    for name in FIELDS:
        for key in control(name).choices:
            assert key.replace("-", "").replace("_", "").isalnum() and key.isascii(), (name, key)


def test_links_the_app_writes_use_keys_and_one_form_of_on_off():
    s = Settings.of(stage="raw", scale="none", backend="torch", causal=True, pe=False, preset="gpt-3-175b",
                    present=True, ablate=(2, 5))
    link = s.share_url("http://host/attention")
    for part in ("stage=raw", "scale=none", "backend=torch", "causal=true", "pe=false", "preset=gpt-3-175b",
                 "present=true", "ablate=2,5"):
        assert part in link.split("?")[1].split("&"), (part, link)
    problems, kept = url.check(dict(p.split("=") for p in link.split("?")[1].split("&")))
    assert problems == [] and Settings.of(**{k: url.parse(k, v) for k, v in kept.items()}) == s


def test_an_unknown_choice_names_the_keys():
    problems, kept = url.check({"stage": "heatmap"})
    assert kept == {} and "raw, scaled, mask, weights" in problems[0]
