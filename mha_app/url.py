"""Settings that arrive in a link: each value checked against its field before any widget reads it.

`check` returns plain-words warnings and the parameters to use instead: values that cannot work are dropped (the
widget then shows its default) or, where one is plainly meant, replaced by the nearest value that works.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from mha_core import divisors
from mha_core.attention.inputs import token_spans
from mha_core.teaching.presets import TINY_TOKENS

from .settings import APP_MAX_HEADS, APP_MAX_TOKENS, FIELDS, Spec, control, default, to_url
from .text import quote

_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]{1,30}")
_NUMBER = re.compile(r"[+-]?([0-9]{1,30}(\.[0-9]{0,30})?|\.[0-9]{1,30})([eE][+-]?[0-9]{1,3})?")


def head_options(d_model: int) -> list[int]:
    """Head counts the app offers for this d_model: those that divide it, up to APP_MAX_HEADS."""
    return divisors(d_model, APP_MAX_HEADS)


def closest_head_count(d_model: int, wanted: int) -> int:
    """The valid head count nearest to `wanted` (the larger one on a tie)."""
    return min(head_options(d_model), key=lambda h: (abs(h - wanted), -h))


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
        return raw[: c.max_chars], (f"`{name}` in the link is longer than {c.max_chars:,} characters; only the "
                                    f"first {c.max_chars:,} are used.")
    return raw, None


def _cut_to_tokens(name: str, values: dict, kept: dict, get, problems: list[str]) -> int:
    """The number of tokens of a text setting; a text over APP_MAX_TOKENS tokens is cut to them, with a warning."""
    spans = token_spans(get(name))
    if len(spans) > APP_MAX_TOKENS:
        values[name] = get(name)[: spans[APP_MAX_TOKENS - 1][1]]
        kept[name] = values[name]
        problems.append(f"`{name}` in the link has {len(spans):,} tokens, more than the {APP_MAX_TOKENS:,} the app "
                        f"shows; only the first {APP_MAX_TOKENS:,} are used.")
    return min(len(spans), APP_MAX_TOKENS)


def _check_tokens(values: dict, kept: dict, get) -> list[str]:
    """Settings that depend on the number of tokens, with random weights (a trained model's tokenizer decides its
    own count, and says when it cuts a long text; the query token is then checked by the sidebar)."""
    problems: list[str] = []
    input_mode = get("input")
    if Spec(model=get("model")).card is not None:
        return problems
    if input_mode in ("sentence", "pair"):
        n = _cut_to_tokens("text", values, kept, get, problems)
    else:
        n = len(TINY_TOKENS) if input_mode == "tiny" else get("n")
    m = _cut_to_tokens("text_kv", values, kept, get, problems) if input_mode == "pair" else n
    if not n or not m:  # a text without words: the page says so
        return problems
    if "pad" in values and values["pad"] >= m:
        keys = "key tokens" if input_mode == "pair" else "tokens"
        problems.append(f"`pad` = {values['pad']} would mask every one of the {m} {keys}; no padding is used.")
        del values["pad"], kept["pad"]
    if "query" in values and values["query"] > n:
        problems.append(f"`query` = {values['query']} but there are only {n} tokens; showing the last one, {n}.")
        values["query"], kept["query"] = n, str(n)
    for name, count, what in (("zoom_query", n, "query rows"), ("zoom_key", m, "key columns")):
        if name in values and values[name] > count:
            problems.append(f"`{name}` = {values[name]} but there are only {count} {what}; the zoom window starts "
                            f"at the last one, {count}.")
            values[name], kept[name] = count, str(count)
    return problems


def check(params: Mapping[str, str | list[str]]) -> tuple[list[str], dict[str, str]]:
    """Warnings for the link's settings that cannot be used as given, and the parameters to use instead.

    A parameter given more than once (`?h=2&h=4`) counts with its last value, as Streamlit reads it.
    """
    problems: list[str] = []
    kept: dict[str, str] = {}
    values = {}
    for name, given in params.items():
        raws = [given] if isinstance(given, str) else list(given)
        if name not in FIELDS:
            problems.append(f"The link has an unknown setting {quote(name)}; it was ignored.")
            continue
        if len(raws) > 1:
            problems.append(f"`{name}` appears {len(raws)} times in the link; only the last one, "
                            f"{quote(raws[-1])}, is used.")
        raw = raws[-1]
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
    h = get("h")
    if random_weights and input_mode != "tiny" and get("d_model") % h:
        d_model, fixed = get("d_model"), closest_head_count(get("d_model"), h)
        if "h" in values:
            problems.append(
                f"`h` = {h} does not divide `d_model` = {d_model}: each head needs d_model / h whole dimensions. "
                f"Head counts that work: {', '.join(map(str, head_options(d_model)))}. Using h = {fixed} instead.")
            values["h"] = fixed
            kept["h"] = str(fixed)
        h = fixed  # without h in the link, the sidebar picks this same count: the checks below count these heads
    heads = Spec(model=model, input=input_mode, h=h if random_weights else default("h")).heads
    if "head" in values and values["head"] > heads:
        problems.append(f"`head` = {values['head']} but there are only {heads} heads; showing head 1.")
        del values["head"], kept["head"]
    card = Spec(model=model).card
    if card and "layer" in values and values["layer"] > card.n_layers:
        problems.append(f"`layer` = {values['layer']} but {card.name} has only {card.n_layers} layers; "
                        "showing layer 1.")
        del values["layer"], kept["layer"]
    problems += _check_tokens(values, kept, get)
    problems += _check_experiments(values, kept, card, input_mode, heads, h)
    return problems, kept


def _check_experiments(values: dict, kept: dict, card, input_mode: str, heads: int, h: int) -> list[str]:
    """The rules between the experiment settings (ablate, kv_heads, scale, plant) and the model; drops what fails."""
    problems = []

    def drop(name: str, problem: str) -> None:
        problems.append(problem)
        del values[name], kept[name]

    weights = f"{card.name}'s trained weights" if card else "the tiny example's fixed weights"
    if "ablate" in values and max(values["ablate"]) > heads:
        kept_heads = tuple(i for i in values["ablate"] if i <= heads)
        problems.append(f"`ablate` names head {max(values['ablate'])}, but there are only {heads} heads; "
                        + (f"switching off {to_url(kept_heads)} only." if kept_heads else "no head is switched off."))
        if kept_heads:
            values["ablate"], kept["ablate"] = kept_heads, to_url(kept_heads)
        else:
            del values["ablate"], kept["ablate"]
    if "kv_heads" in values:
        kv = values["kv_heads"]
        if card or input_mode == "tiny":
            own = ("one key/value head per query head" if not card or card.n_kv_heads == card.n_heads else
                   f"their own {card.n_kv_heads} key/value heads, each shared by {card.n_heads // card.n_kv_heads} "
                   "query heads")
            drop("kv_heads", f"`kv_heads` applies to random weights; {weights} have {own}, so it was ignored.")
        elif kv and h % kv:
            drop("kv_heads", f"`kv_heads` = {kv} does not divide h = {h}: every key/value head must serve the same "
                             f"number of query heads. Values that work: {', '.join(map(str, divisors(h)))}. "
                             "Using one key/value head per query head (plain multi-head attention).")
    if card and "scale" in values:
        drop("scale", f"`scale` applies to random weights; {card.name} was trained with the 1/√d_k scaling and "
                      "keeps it (the attention page compares both anyway).")
    if card and "plant" in values:
        drop("plant", f"`plant` applies to random weights; {card.name}'s heads are shown as trained.")
    if "plant_head" in values and values["plant_head"] > heads:
        drop("plant_head", f"`plant_head` = {values['plant_head']} but there are only {heads} heads; planting head 1.")
    if input_mode == "pair" and values.get("causal"):
        drop("causal", "A causal mask hides later tokens of the same sequence; in cross-attention the queries read "
                       "another sequence, which a decoder sees whole. The causal mask is off for `input` = pair.")
    return problems
