"""Settings that arrive in a link: each value checked against its field before any widget reads it.

`check` returns plain-words warnings and the parameters to use instead: values that cannot work are dropped (the
widget then shows its default) or, where one is plainly meant, replaced by the nearest value that works. Links keep
working across releases: a choice is read by its key, its label or an older alias, in any letter case, and an
on/off setting from 1/0, true/false, yes/no or on/off.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from mha_app.copy.markup import quote
from mha_app.state.settings import APP_MAX_TOKENS, DEFAULT_TEXT, FIELDS, Settings, Spec, control, default, to_url
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
    problem = None
    if bad:
        problem = (f"`{name}` lists {c.what or c.label} by number from {c.lo} to {c.hi}, separated by commas "
                   f"(e.g. {c.lo},{c.lo + 1}); the link's {', '.join(quote(b) for b in bad[:3])} "
                   f"{'was' if len(bad) == 1 else 'were'} left out.")
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
            return None, f"`{name}` should be a number ({what}), but the link says {quote(raw)}; using the default."
        value = float(raw)
        if not c.lo <= value <= c.hi:  # also catches 1e999, which reads as infinity
            return None, f"`{name}` = {quote(raw)} is outside {c.lo:g}…{c.hi:g} ({what}); using the default."
        return value, None
    if kind is bool:
        value = BOOLEANS.get(raw.strip().casefold())
        if value is None:
            return None, (f"`{name}` is on or off ({c.label}): 1 or 0 (also true/false, yes/no, on/off), but the link "
                          f"says {quote(raw)}; using the default.")
        return value, None
    if c.choices:
        value = c.choice(raw)
        if value is None:
            return None, (f"`{name}` must be one of {', '.join(c.choices)}, but the link says {quote(raw)}; "
                          "using the default.")
        return value, None
    if kind is int:
        what = c.what or c.label
        if not _WHOLE_NUMBER.fullmatch(raw.strip()):
            return None, (f"`{name}` should be a whole number ({what}), but the link says {quote(raw)}; "
                          "using the default.")
        value = int(raw)
        if not c.lo <= value <= c.hi:
            shown = quote(raw) if len(raw) > 12 else value
            return None, f"`{name}` = {shown} is outside {c.lo}…{c.hi} ({what}); using the default."
        return value, None
    if c.max_chars and len(raw) > c.max_chars:
        return raw[: c.max_chars], (f"`{name}` in the link is longer than {c.max_chars:,} characters; only the "
                                    f"first {c.max_chars:,} are used.")
    return raw, None


def _cut_to_tokens(name: str, text: str) -> tuple[str, str | None]:
    """A text setting cut to APP_MAX_TOKENS tokens, and a warning when it was longer."""
    spans = token_spans(text)
    if len(spans) <= APP_MAX_TOKENS:
        return text, None
    return text[: spans[APP_MAX_TOKENS - 1][1]], (
        f"`{name}` in the link has {len(spans):,} tokens, more than the {APP_MAX_TOKENS:,} the app shows; only the "
        f"first {APP_MAX_TOKENS:,} are used.")


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
            problems.append(f"The link has an unknown setting {quote(name)}; it was ignored.")
            continue
        if len(raws) > 1:
            problems.append(f"`{name}` appears {len(raws)} times in the link; only the last one, "
                            f"{quote(raws[-1])}, is used.")
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
            problems.append(f"`{problem.name}`: {problem.message}")
            values[problem.name] = problem.fixed
    # A value equal to its field's default is kept too: some defaults depend on other settings (a planted head is
    # shown by default), so the link's explicit choice must stay.
    return problems, {name: to_url(value) for name, value in values.items()}
