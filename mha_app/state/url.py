"""Settings that arrive in a link: each value checked against its field before any widget reads it.

`check` returns plain-words warnings and the parameters to use instead: values that cannot work are dropped (the
widget then shows its default) or, where one is plainly meant, replaced by the nearest value that works. Links keep
working across releases: a choice is read by its key, its label or an older alias, in any letter case, and an
on/off setting from 1/0, true/false, yes/no or on/off.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from mha_app.copy import links
from mha_app.state.settings import (
    APP_MAX_TOKENS,
    DEFAULT_TEXT,
    FIELDS,
    Settings,
    Spec,
    asks_by_default,
    control,
    default,
    to_url,
)
from mha_core.attention.inputs import token_spans

_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]{1,30}")
_NUMBER = re.compile(r"[+-]?([0-9]{1,30}(\.[0-9]{0,30})?|\.[0-9]{1,30})([eE][+-]?[0-9]{1,3})?")
BOOLEANS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def _parse_tuple(name: str, raw: str):
    """A tuple setting, e.g. ablate=2,5: whole numbers in lo..hi, comma-separated; the others are dropped."""
    c = control(name)
    good, bad = set(), []
    for part in (p.strip() for p in raw.split(",")):
        if _WHOLE_NUMBER.fullmatch(part) and c.lo <= int(part) <= c.hi:
            good.add(int(part))
        elif part:
            bad.append(part)
    problem = links.bad_list(name, c.what or c.label, c.lo, c.hi, bad) if bad else None
    return tuple(sorted(good)) or None, problem


def parse(name: str, raw: str):
    """A setting's value read from the URL, or None when the text is not a valid value (see check for why)."""
    return _parse(name, str(raw))[0]


def _parse(name: str, raw: str):
    """(value, problem): the field's value read from the link, or None and a sentence saying why not."""
    c, kind = control(name), type(default(name))
    if kind is tuple:
        return _parse_tuple(name, raw)
    if kind is float:
        what = c.what or c.label
        if not _NUMBER.fullmatch(raw.strip()):
            return None, links.not_a_number(name, what, raw)
        value = float(raw)
        if not c.lo <= value <= c.hi:  # also catches 1e999, which reads as infinity
            return None, links.out_of_bounds(name, raw, c.lo, c.hi, what)
        return value, None
    if kind is bool:
        value = BOOLEANS.get(raw.strip().casefold())
        if value is None:
            return None, links.not_on_off(name, c.label, raw)
        return value, None
    if c.choices:
        value = c.choice(raw)
        if value is None:
            return None, links.not_a_choice(name, c.choices, raw)
        return value, None
    if kind is int:
        what = c.what or c.label
        if not _WHOLE_NUMBER.fullmatch(raw.strip()):
            return None, links.not_a_number(name, what, raw, whole=True)
        value = int(raw)
        if not c.lo <= value <= c.hi:
            return None, links.out_of_bounds(name, raw, c.lo, c.hi, what, value)
        return value, None
    if c.max_chars and len(raw) > c.max_chars:
        return raw[: c.max_chars], links.too_long(name, c.max_chars)
    return raw, None


def _cut_to_tokens(name: str, text: str) -> tuple[str, str | None]:
    """A text setting cut to APP_MAX_TOKENS tokens, and a warning when it was longer."""
    spans = token_spans(text)
    if len(spans) <= APP_MAX_TOKENS:
        return text, None
    return text[: spans[APP_MAX_TOKENS - 1][1]], links.too_many_tokens(name, len(spans), APP_MAX_TOKENS)


def _roles_as_now(params: Mapping[str, str | list[str]]) -> dict:
    """A link from before the source sentence came first in cross-attention, read as it was meant: there `text`
    made the queries and `text_kv` the keys and values; now `text` is the source (keys and values) and `text_q`
    the sentence being written (queries)."""
    params = dict(params)
    if "text_kv" in params:
        queries = params.pop("text", DEFAULT_TEXT)  # the old links' default sentence made the queries
        params["text"], params["text_q"] = params.pop("text_kv"), queries
    return params


def check(params: Mapping[str, str | list[str]]) -> tuple[list[str], dict[str, str]]:
    """Warnings for the link's settings that cannot be used as given, and the parameters to use instead.

    Each value is read on its own first (its type, bounds, choices); then the rules between settings
    (Settings.problems) fix what does not fit together, with a warning for each setting the link gave. The
    parameters come back in the form the app's own links use (keys, 1/0). A parameter given more than once
    (`?h=2&h=4`) counts with its last value, as Streamlit reads it.
    """
    problems: list[str] = []
    values = {}
    for name, given in _roles_as_now(params).items():
        raws = [given] if isinstance(given, str) else list(given)
        if name not in FIELDS:
            problems.append(links.unknown_setting(name))
            continue
        if len(raws) > 1:
            problems.append(links.repeated(name, len(raws), str(raws[-1])))
        value, problem = _parse(name, str(raws[-1]))
        if problem:
            problems.append(problem)
        if value is not None:
            values[name] = value
    random_weights = Spec(model=values.get("model", default("model"))).card is None
    for name in ("text", "text_q"):  # a trained model's tokenizer counts its own tokens, and says when it cuts
        if name in values and random_weights:
            values[name], problem = _cut_to_tokens(name, values[name])
            problems += [problem] if problem else []

    settings = Settings.of(**values)
    for problem in settings.problems():
        if problem.name in values:
            problems.append(links.link_problem(problem.name, problem.message))
            values[problem.name] = problem.fixed
    # A value equal to its field's default is kept too: some defaults depend on other settings (a planted head is
    # shown by default), so the link's explicit choice must stay. A value fixed to nothing (no head switched off: an
    # empty parameter) is left out, as a link without it reads the same.
    kept = {name: to_url(value) for name, value in values.items()}
    return problems, {name: raw for name, raw in kept.items() if _parse(name, raw)[0] is not None}


def link_asks(params: Mapping[str, str]) -> bool:
    """Whether a link's questions wait for an answer before their figures show: as its `ask` says, else as
    settings.asks_by_default decides (a presentation asks; a link that names a view opens it drawn)."""
    ask = parse("ask", params["ask"]) if "ask" in params else None
    present = "present" in params and parse("present", params["present"]) is True
    return asks_by_default(params, present) if ask is None else ask
