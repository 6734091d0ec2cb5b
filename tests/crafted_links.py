"""Crafted links, drawn by hypothesis: the strategy both link fuzzes share (unit/test_url_fuzz.py checks
mha_app.state.url.check on many of them; app/test_links_fuzz.py runs a few through the whole app) and their oracle.

Each link mixes missing, empty, huge, negative, infinite, NaN, non-numeric, unicode, repeated, contradictory and
unknown parameters. The pages come from app.py and the parameters, with their kinds and bounds, from
mha_app.state.settings.FIELDS, so a new page or setting is fuzzed as soon as it exists. Shrinking drops parameters (a
missing one is the simplest), so a failure prints a short link.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

from hypothesis import strategies as st

from app_pages import app_pages
from mha_app.state.settings import FIELDS, MODELS, control, default

PAGES = app_pages()

# Values that no number setting accepts: not a whole number written in ASCII digits.
NOT_WHOLE_NUMBERS = ["inf", "-inf", "+inf", "Infinity", "nan", "NaN", "1e309", "-1e309", "1e3", "8.0", "8.5", "0x10",
                     "", " ", "abc", "٣", "８", "⑧", "½", "8 8", "8;", "None", "null", "true", "[8]", "9" * 40,
                     "-" + "9" * 40, "💥", "8\u200b", "<script>alert(1)</script>"]
# Spellings no on/off setting accepts (1/0, true/false, yes/no, on/off in any case are accepted).
NOT_BOOLEANS = ["2", "-1", "", " ", "tru", "null", "oui", "y", "😀"]
BOOLEANS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}
UNKNOWN_NAMES = ["colour", "H", "D_MODEL", "d-model", "heads", "utm_source", "😀", "h ", "__proto__", "<b>x</b>",
                 "x" * 60, "layer[]", "$x$"]
# Sentences that must be shown exactly as typed (none uses the words nan or inf: those may not reach the screen).
TEXTS = ["The cat sat.", "😀 👍🏽 a family: 👨\u200d👩\u200d👧 and 🇫🇷", "مرحبا بالعالم، كيف الحال؟",
         "שָׁלוֹם עוֹלָם", "zero\u200bwidth\u200d join\u2060er \ufeff", "\u202eoverride\u202c then text",
         "<script>alert(1)</script> <img src=x onerror=alert(2)>", "$$x^2$$ and $y$ **bold** _it_ `code`",
         "back\\slash \\frac{1}{2} \\\\", ":cat: :red[red] :material/home: &lt; &amp;", "line\nbreak\r\nand\ttab",
         "ok " * 300, "", "   ", "\u3000\u2003"]
HEAVY = {"n": 64}  # a random input of up to 2048 tokens is valid but takes seconds: the fuzz stays small
# How a setting appears in a link, in proportion (hypothesis shrinks towards the first: a missing setting).
STATUS = ["missing"] * 11 + ["valid"] * 5 + ["refused"] * 3 + ["repeated"]


@dataclass
class Link:
    page: object
    params: dict = field(default_factory=dict)  # name -> str, or a list for a repeated parameter
    refused: set = field(default_factory=set)    # names whose value cannot be used as given

    def url(self) -> str:
        return f"/{self.page.url_path}?{urlencode(self.params, doseq=True)}"


def valid_values(name: str) -> st.SearchStrategy[str]:
    """Values the setting takes as they are, written as a person might."""
    c, d = control(name), default(name)
    if isinstance(d, bool):
        return st.sampled_from([*BOOLEANS, "True", "OFF", " yes "])
    if c.choices:  # a key, its label or an older alias, in any letter case
        spellings = [*c.choices, *(c.label_of(k) for k in c.choices), *c.aliases]
        return st.sampled_from(spellings).flatmap(lambda v: st.sampled_from([v, v.upper(), v.lower(), f" {v} "]))
    if isinstance(d, int):
        hi = min(c.hi, HEAVY.get(name, c.hi))
        values = st.one_of(st.sampled_from([c.lo, hi]), st.integers(c.lo, min(hi, c.lo + 64)))
        spelling = st.sampled_from(["{}", " {} ", "+{}", "0{}"])  # spaces, sign, leading zero
        return st.builds(lambda form, value: form.format(value), spelling, values)
    if isinstance(d, float):
        return st.floats(c.lo, c.hi).map(repr) if c.hi > c.lo else st.just(repr(d))
    if isinstance(d, tuple):  # whole numbers in lo..hi, comma-separated
        part = st.integers(c.lo, min(c.hi, c.lo + 3)).map(str)
        return st.lists(part, min_size=1, max_size=3).map(",".join)
    if c.max_chars:
        return st.sampled_from(TEXTS)
    return st.sampled_from([d, d + " more", "ünïcode ✓"])


def refused_values(name: str) -> st.SearchStrategy[str] | None:
    """Values the setting cannot take, or None for a free text setting without a length limit."""
    c, d = control(name), default(name)
    if isinstance(d, bool):
        return st.sampled_from(NOT_BOOLEANS)
    if c.choices:
        known = {v.casefold() for v in (*c.choices, *(c.label_of(k) for k in c.choices), *c.aliases)}

        def near(choice: str) -> list[str]:
            values = ["", "😀", "gpt-" + choice, choice.replace(" ", "+") + "+", choice + "s", "x" + choice]
            return [value for value in values if value.strip().casefold() not in known]
        return st.sampled_from(c.choices).flatmap(lambda choice: st.sampled_from(near(choice)))
    if isinstance(d, int):
        return st.sampled_from([*NOT_WHOLE_NUMBERS, c.lo - 1, c.hi + 1, -c.hi, 10**30, -(2**63)]).map(str)
    if isinstance(d, float):
        return st.sampled_from(["inf", "-inf", "nan", "1e309", "", "abc", "0x1p3", "½", str(c.hi + 1), str(c.lo - 1)])
    if isinstance(d, tuple):  # one part that is not a number in lo..hi
        return st.sampled_from([f"{c.lo},abc", f"{c.hi + 1}", "1;2", "inf", f"{c.lo},,{c.lo - 1}", "😀"])
    if c.max_chars:  # up to 100k characters (Streamlit ignores a query string over 512 KiB, before the app sees it)
        length = st.integers(c.max_chars + 1, 100_000)
        few_tokens = st.sampled_from(["x", "ab"])
        return st.builds(lambda unit, n: unit * (n // len(unit) + 1), few_tokens, length)
    return None


VALID = {name: valid_values(name) for name in FIELDS}    # built once: a strategy is slow to build, fast to draw
REFUSED = {name: refused_values(name) for name in FIELDS}
STATUSES = st.sampled_from(STATUS)
UNKNOWN = st.lists(st.sampled_from(UNKNOWN_NAMES), max_size=2, unique=True)
UNKNOWN_VALUES = st.sampled_from(["1", "", "x" * 300, "😀"])


@st.composite
def links(draw, pages=PAGES) -> Link:
    """A crafted link to one of `pages`."""
    link = Link(draw(st.sampled_from(pages)))
    if draw(st.booleans()):
        link.params["model"] = MODELS[1]
    for name in FIELDS:
        status, refused = draw(STATUSES), REFUSED[name]
        if status == "missing":
            continue
        if status == "valid" or refused is None:
            link.params[name] = draw(VALID[name])
        elif status == "refused":
            link.params[name] = draw(refused)
            link.refused.add(name)
        else:                                             # repeated: the last value counts, the others are ignored
            link.params[name] = [draw(refused), draw(VALID[name])]
            link.refused.add(name)
    for unknown in draw(UNKNOWN):
        link.params[unknown] = draw(UNKNOWN_VALUES)
        link.refused.add(unknown)
    return link


def parsed(name: str, raw: str):
    """The value a valid link value stands for (written out here, independently of url.py)."""
    c, d = control(name), default(name)
    if isinstance(d, bool):
        return BOOLEANS[raw.strip().casefold()]
    if c.choices:  # by key, label or alias, any letter case
        wanted = raw.strip().casefold()
        by_name = {**{k.casefold(): k for k in c.choices}, **{c.label_of(k).casefold(): k for k in c.choices},
                   **{a.casefold(): k for a, k in c.aliases.items()}}
        return by_name[wanted]
    if isinstance(d, int):
        return int(raw.strip())
    if isinstance(d, float):
        return float(raw)
    if isinstance(d, tuple):
        return tuple(sorted({int(part) for part in raw.split(",")}))
    return raw


# Warnings that name a setting in words instead of `name`. causal=true with input=pair: "The causal mask is off for
# `input` = pair" (mha_app/state/url.py; it would read better with `causal` in it).
SAID_IN_WORDS = {"causal": "The causal mask is off"}


def named(name: str, warnings: list[str]) -> bool:
    """Whether a warning names this parameter: a setting in backquotes, an unknown name as given (quote() shortens
    it), markdown's backslashes left out."""
    said = " ".join(warnings).replace("\\", "")
    if name not in FIELDS:
        return name[:24] in said
    return f"`{name}`" in said or SAID_IN_WORDS.get(name, f"`{name}`") in said
