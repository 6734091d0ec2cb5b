"""Settings that arrive in a link: each value checked against its field before any widget reads it.

`check` returns plain-words warnings and the parameters to use instead: values that cannot work are dropped (the
widget then shows its default) or, where one is plainly meant, replaced by the nearest value that works.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from mha_core import divisors

from .settings import APP_MAX_HEADS, FIELDS, Spec, control, default, to_url
from .text import quote

_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]{1,30}")


def head_options(d_model: int) -> list[int]:
    """Head counts the app offers for this d_model: those that divide it, up to APP_MAX_HEADS."""
    return divisors(d_model, APP_MAX_HEADS)


def closest_head_count(d_model: int, wanted: int) -> int:
    """The valid head count nearest to `wanted` (the larger one on a tie)."""
    return min(head_options(d_model), key=lambda h: (abs(h - wanted), -h))


def _parse(name: str, raw: str):
    """(value, problem): the field's value read from the link, or None and a sentence saying why not."""
    c, kind = control(name), type(default(name))
    if kind is bool:
        if raw in ("true", "false"):
            return raw == "true", None
        return None, f"`{name}` must be one of true, false, but the link says {quote(raw)}; using the default."
    if c.choices:
        if raw in c.choices:
            return raw, None
        return None, (f"`{name}` must be one of {', '.join(c.choices)}, but the link says {quote(raw)}; "
                      "using the default.")
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
        return raw[: c.max_chars], f"The {name} in the link is longer than {c.max_chars:,} characters; it was cut."
    return raw, None


def parse(name: str, raw: str):
    """The value of setting `name` in a link, or None when it cannot be used (check explains why)."""
    return _parse(name, str(raw))[0]


def check(params: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """Warnings for the link's settings that cannot be used as given, and the parameters to use instead."""
    problems: list[str] = []
    kept: dict[str, str] = {}
    values = {}
    for name, raw in params.items():
        if name not in FIELDS:
            problems.append(f"The link has an unknown setting {quote(name)}; it was ignored.")
            continue
        value, problem = _parse(name, str(raw))
        if problem:
            problems.append(problem)
        if value is not None:
            values[name] = value
            kept[name] = to_url(value)

    def get(name):
        return values.get(name, default(name))

    # Settings that only make sense together.
    model, input_mode = get("model"), get("input")
    random_weights = Spec(model=model).card is None
    if random_weights and input_mode != "tiny" and "h" in values:
        d_model, h = get("d_model"), values["h"]
        if d_model % h:
            fixed = closest_head_count(d_model, h)
            problems.append(
                f"h = {h} does not divide d_model = {d_model}: each head needs d_model / h whole dimensions. "
                f"Head counts that work: {', '.join(map(str, head_options(d_model)))}. Using h = {fixed} instead.")
            values["h"] = fixed
            kept["h"] = str(fixed)
    heads = Spec(model=model, input=input_mode, h=get("h") if random_weights else default("h")).heads
    if "head" in values and values["head"] > heads:
        problems.append(f"`head` = {values['head']} but there are only {heads} heads; showing head 1.")
        del values["head"], kept["head"]
    card = Spec(model=model).card
    if card and "layer" in values and values["layer"] > card.n_layers:
        problems.append(f"`layer` = {values['layer']} but {card.name} has only {card.n_layers} layers; "
                        "showing layer 1.")
        del values["layer"], kept["layer"]
    if random_weights and input_mode == "random" and "pad" in values and values["pad"] >= get("n"):
        problems.append(f"`pad` = {values['pad']} would mask every one of the {get('n')} tokens; no padding is used.")
        del values["pad"], kept["pad"]
    return problems, kept
