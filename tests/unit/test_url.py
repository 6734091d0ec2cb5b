"""Settings in URLs: the check that explains bad links, and the share link that reproduces a view."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest

from mha_app.copy.lesson import SCREENS
from mha_app.copy.markup import plain, quote
from mha_app.state.settings import Settings, default, to_url
from mha_app.state.url import check


def check_query_params(params: dict) -> list[str]:
    return check(params)[0]


def test_defaults_make_an_empty_query():
    assert Settings().query_params() == {}
    assert Settings().share_url("http://host/attention") == "http://host/attention"


def test_share_url_holds_exactly_the_changed_settings():
    s = Settings.of(h=4, text="a & b", causal=True, head=2)
    url = s.share_url("http://host/attention")
    parts = urlsplit(url)
    assert parts.path == "/attention"
    # ask=true too: a link that names a head opens it drawn unless it says to ask (settings.asks_by_default)
    assert dict(parse_qsl(parts.query)) == {"h": "4", "text": "a & b", "causal": "true", "head": "2", "ask": "true"}


def test_every_share_url_passes_the_check():
    s = Settings.of(model="all-MiniLM-L6-v2", input="random", n=100, d_model=768, h=12, seed=5, pe=False,
                 causal=True, pad=3, backend="PyTorch", layer=4, head=12, query=100)
    assert check_query_params(s.query_params()) == []


@pytest.mark.parametrize("params, words", [
    ({"h": "0"}, "outside 1…16"),
    ({"query": "-3"}, "outside 1…2048"),
    ({"seed": "1e99"}, "whole number"),
    ({"causal": "maybe"}, "1 or 0 (also true/false, yes/no, on/off)"),
    ({"seq_len": "0"}, "outside 1…1048576"), ({"batch": "abc"}, "whole number"),
    ({"preset": "GPT-5"}, "must be one of"), ({"key": "-1"}, "outside 1…2048"),
    ({"present": "2"}, "on or off"),
    ({"screen": "0"}, f"outside 1…{len(SCREENS)}"), ({"screen": "1e3"}, "whole number"),
    ({"h": "abc"}, "whole number"),
    ({"d_model": "31", "h": "4"}, "Head counts that work for d_model = 31: 1."),
    ({"d_model": "30", "h": "4"}, "1, 2, 3, 5, 6, 10, 15"),
    ({"n": "999999"}, "outside 1…2048"),
    ({"model": "gpt"}, "must be one of"),
    ({"pe": "perhaps"}, "on or off"),
    ({"colour": "red"}, "unknown setting"),
    ({"head": "9", "h": "8"}, "only 8 heads"),
    ({"input": "random", "n": "4", "pad": "4"}, "last 4 of 4 tokens"),
    ({"text": "x" * 5000}, "longer than"),
])
def test_bad_parameters_are_explained(params, words):
    problems = check_query_params(params)
    assert problems and any(words in p for p in problems), problems


@pytest.mark.parametrize("params", [
    {"h": "0"}, {"h": "abc"}, {"d_model": "31", "h": "4"}, {"input": "random", "n": "999999"},
    {"model": "gpt-17"}, {"causal": "maybe"}, {"mystery": "1"}, {"query": "-3"}, {"seed": "1e99"},
])
def test_malformed_links_are_explained_and_keep_a_head_count_that_divides_d_model(params):
    problems, kept = check(params)
    assert problems
    assert int(kept.get("d_model", default("d_model"))) % int(kept.get("h", default("h"))) == 0, kept


def test_user_values_reach_markdown_inside_a_code_span():
    problems = check_query_params({"h": "[click](http://evil)"})
    assert "`[click](http://evil)`" in problems[0]
    assert len(quote("x" * 100)) < 40
    assert quote("a`b") == "``a`b``" and quote("`") == "`` ` ``"  # a longer fence; padding that CommonMark strips
    assert ":material/" not in quote(":material/home:")  # Streamlit would turn it into an icon, even in code


@pytest.mark.parametrize("value", ["a`b", "`", " x ", "**bold**", ":material/home:", "[x](http://e)", "plain"])
def test_a_quoted_value_comes_back_as_typed_in_plain_text(value):
    """plain (the saved explorer's text) undoes quote's code span and the app's own bold and icons, nothing else."""
    assert plain(f":material/block: **Note**: {quote(value)} stays.") == f"Note: “{value}” stays."


def test_list_and_fractional_settings_are_spelled_as_typed_in_links():
    assert to_url((2, 5)) == "2,5" and to_url((3,)) == "3"
    assert to_url(4.0) == "4" and to_url(2.5) == "2.5" and to_url(0.1) == "0.1"
    s = Settings.of(ablate=(2, 5), strength=2.5, plant="previous", scale="none", kv_heads=2, input="pair")
    assert "ablate=2,5" in s.share_url("http://host/output")
    assert check(s.query_params()) == ([], s.query_params())


@pytest.mark.parametrize("raw, kept", [("2,5", "2,5"), ("5,2,2", "2,5"), (" 3 , 1 ", "1,3"), ("2,,5", "2,5")])
def test_ablate_is_read_sorted_and_without_repeats(raw, kept):
    problems, params = check({"ablate": raw})
    assert problems == [] and params == {"ablate": kept}


@pytest.mark.parametrize("params, words", [
    ({"ablate": "99"}, "left out"),
    ({"ablate": "0"}, "left out"),
    ({"ablate": "a,b"}, "`a`, `b` were left out"),
    ({"ablate": "12", "h": "8"}, "only 8 heads"),
    ({"kv_heads": "5", "h": "8"}, "Values that work: 1, 2, 4, 8"),
    ({"kv_heads": "3", "input": "tiny"}, "applies to random weights"),
    ({"plant": "foo"}, "must be one of none, previous, next, first, self, uniform"),
    ({"strength": "inf"}, "should be a number"),
    ({"strength": "nan"}, "should be a number"),
    ({"strength": "1e999"}, "outside 0…30"),
    ({"strength": "31"}, "outside 0…30"),
    ({"plant_head": "9", "h": "8"}, "only 8 heads"),
    ({"scale": "none", "model": "all-MiniLM-L6-v2"}, "trained with the 1/√d_k"),
    ({"plant": "self", "model": "all-MiniLM-L6-v2"}, "shown as trained"),
    ({"input": "pair", "causal": "true"}, "causal mask is off"),
    ({"ablate": "2,x"}, "`x` was left out"),
    ({"ablate": "9", "h": "8"}, "only 8 heads"),
    ({"kv_heads": "abc"}, "whole number"),
    ({"strength": "-3"}, "outside 0…30"),
    ({"plant_head": "99"}, "outside 1…16"),
    ({"scale": "sqrt"}, "must be one of"),
    ({"input": "tiny", "ablate": "3"}, "only 2 heads"),
    ({"model": "all-MiniLM-L6-v2", "ablate": "13"}, "only 12 heads"),
])
def test_bad_experiment_parameters_are_explained(params, words):
    problems = check_query_params(params)
    assert problems and any(words in p for p in problems), problems


@pytest.mark.parametrize(("old", "now"), [
    ({"input": "pair", "text": "a b c", "text_kv": "x y"}, {"input": "pair", "text": "x y", "text_q": "a b c"}),
    ({"input": "pair", "text_kv": "x y"},
     {"input": "pair", "text": "x y", "text_q": "The cat sat on the mat because it was tired."}),
    ({"input": "pair", "text": "a b c"}, {"input": "pair", "text": "a b c"}),
])
def test_an_old_cross_attention_link_keeps_its_roles(old, now):
    """Links from before the source sentence came first: there `text` made the queries and `text_kv` (the source)
    the keys and values, and the old default sentence made the queries when `text` was left out. Now `text` is the
    source and `text_q` the sentence being written; a link without text_kv is read the new way."""
    problems, kept = check(old)
    assert problems == [] and kept == now
