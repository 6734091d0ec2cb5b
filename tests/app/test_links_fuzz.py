"""Crafted links: hundreds of seeded random URLs, on every page, through the whole app (AppTest).

Each link mixes missing, empty, huge, negative, infinite, NaN, non-numeric, unicode, repeated, contradictory and
unknown parameters. The pages come from app.py and the parameters, with their kinds and bounds, from
mha_app.settings.FIELDS, so a new page or setting is fuzzed as soon as it exists. For every link: no exception, no
traceback, a warning that names each value the app could not use, and the values it could use are the ones the app
shows. A failure prints its link; `pytest -k "link-17"` reruns it alone.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from urllib.parse import urlencode

import pytest

from app_pages import app_pages
from conftest import ROOT
from mha_app.settings import FIELDS, MODELS, control, default
from screen import messages, non_finite_on_screen

SEED = 20240612
LINKS = 320
PAGES = app_pages()

# Values that no number setting accepts: not a whole number written in ASCII digits.
NOT_WHOLE_NUMBERS = ["inf", "-inf", "+inf", "Infinity", "nan", "NaN", "1e309", "-1e309", "1e3", "8.0", "8.5", "0x10",
                     "", " ", "abc", "٣", "８", "⑧", "½", "8 8", "8;", "None", "null", "true", "[8]", "9" * 40,
                     "-" + "9" * 40, "💥", "8\u200b", "<script>alert(1)</script>"]
NOT_BOOLEANS = ["True", "FALSE", "1", "0", "yes", "on", "", " ", "tru", "null", "😀"]
UNKNOWN_NAMES = ["colour", "H", "D_MODEL", "d-model", "heads", "utm_source", "😀", "h ", "__proto__", "<b>x</b>",
                 "x" * 60, "layer[]", "$x$"]
# Sentences that must be shown exactly as typed (none uses the words nan or inf: those may not reach the screen).
TEXTS = ["The cat sat.", "😀 👍🏽 a family: 👨\u200d👩\u200d👧 and 🇫🇷", "مرحبا بالعالم، كيف الحال؟",
         "שָׁלוֹם עוֹלָם", "zero\u200bwidth\u200d join\u2060er \ufeff", "\u202eoverride\u202c then text",
         "<script>alert(1)</script> <img src=x onerror=alert(2)>", "$$x^2$$ and $y$ **bold** _it_ `code`",
         "back\\slash \\frac{1}{2} \\\\", ":cat: :red[red] :material/home: &lt; &amp;", "line\nbreak\r\nand\ttab",
         "ok " * 300, "", "   ", "\u3000\u2003"]
HEAVY = {"n": 64}  # a random input of up to 2048 tokens is valid but takes seconds: the fuzz stays small


@dataclass
class Link:
    page: object
    params: dict = field(default_factory=dict)  # name -> str, or a list for a repeated parameter
    refused: set = field(default_factory=set)    # names whose value cannot be used as given

    def url(self) -> str:
        return f"/{self.page.url_path}?{urlencode(self.params, doseq=True)}"


def _valid(name: str, rng: random.Random) -> str:
    c, d = control(name), default(name)
    if isinstance(d, bool):
        return rng.choice(["true", "false"])
    if c.choices:
        return rng.choice(c.choices)
    if isinstance(d, int):
        hi = min(c.hi, HEAVY.get(name, c.hi))
        value = rng.choice([c.lo, hi, rng.randint(c.lo, min(hi, c.lo + 64))])
        return rng.choice(["{}", "{}", "{}", " {} ", "+{}", "0{}"]).format(value)  # spaces, sign, leading zero
    if isinstance(d, float):
        return repr(rng.uniform(c.lo, c.hi)) if c.hi > c.lo else repr(d)
    if isinstance(d, tuple):  # whole numbers in lo..hi, comma-separated
        return ",".join(str(rng.randint(c.lo, min(c.hi, c.lo + 3))) for _ in range(rng.randint(1, 3)))
    if c.max_chars:
        return rng.choice(TEXTS)
    return rng.choice([d, d + " more", "ünïcode ✓"])


def _refused(name: str, rng: random.Random) -> str | None:
    """A value the setting cannot take, or None for a free text setting without a length limit."""
    c, d = control(name), default(name)
    if isinstance(d, bool):
        return rng.choice(NOT_BOOLEANS)
    if c.choices:
        choice = rng.choice(c.choices)
        near = [choice.upper(), choice.lower(), choice + " ", "", "😀", "gpt-" + choice, choice.replace(" ", "+") + "+"]
        return rng.choice([value for value in near if value not in c.choices])  # "GPT-3 175B".upper() is itself
    if isinstance(d, int):
        return str(rng.choice([*NOT_WHOLE_NUMBERS, c.lo - 1, c.hi + 1, -c.hi, 10**30, -(2**63)]))
    if isinstance(d, float):
        return rng.choice(["inf", "-inf", "nan", "1e309", "", "abc", "0x1p3", "½", str(c.hi + 1), str(c.lo - 1)])
    if isinstance(d, tuple):  # one part that is not a number in lo..hi
        return rng.choice([f"{c.lo},abc", f"{c.hi + 1}", "1;2", "inf", f"{c.lo},,{c.lo - 1}", "😀"])
    if c.max_chars:  # up to 100k characters (Streamlit ignores a query string over 512 KiB, before the app sees it)
        unit, length = rng.choice(["x", "ab"]), rng.randint(c.max_chars + 1, 100_000)  # few tokens: fast
        return unit * (length // len(unit) + 1)
    return None


def random_link(i: int) -> Link:
    rng = random.Random(SEED + i)
    link = Link(PAGES[i % len(PAGES)])
    if rng.random() < 0.4:
        link.params["model"] = MODELS[1]
    for name in FIELDS:
        roll, refused = rng.random(), _refused(name, rng)
        if roll < 0.55:
            continue                                      # missing
        if roll < 0.80 or refused is None:
            link.params[name] = _valid(name, rng)
        elif roll < 0.95:
            link.params[name] = refused
            link.refused.add(name)
        else:                                             # repeated: the last value counts, the others are ignored
            link.params[name] = [refused, _valid(name, rng)]
            link.refused.add(name)
    for _ in range(rng.choice([0, 0, 1, 2])):
        unknown = rng.choice(UNKNOWN_NAMES)
        link.params[unknown] = rng.choice(["1", "", "x" * 300, "😀"])
        link.refused.add(unknown)
    return link


def parsed(name: str, raw: str):
    """The value a valid link value stands for (written out here, independently of url.py)."""
    d = default(name)
    if isinstance(d, bool):
        return raw == "true"
    if isinstance(d, int):
        return int(raw.strip())
    if isinstance(d, float):
        return float(raw)
    if isinstance(d, tuple):
        return tuple(sorted({int(part) for part in raw.split(",")}))
    return raw


def run_link(link: Link):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update(link.params)
    at.switch_page(link.page.script)  # every url_path is its file's name, so the page is found before a first run
    return at.run()


def contradicted(link: Link, settings, example) -> set[str]:
    """Valid values that cannot work together with the rest, judged from what the app shows."""
    given = {name: parsed(name, raw) for name, raw in link.params.items()
             if name in FIELDS and name not in link.refused}
    out = set()
    spec, card = settings.spec, settings.spec.card
    n, m, heads = len(example.tokens), len(example.key_tokens or example.tokens), example.cfg.n_heads
    if "head" in given and given["head"] > heads:
        out.add("head")
    if "query" in given and given["query"] > n:
        out.add("query")
    if card and "layer" in given and given["layer"] > card.n_layers:
        out.add("layer")
    if not card and "pad" in given and given["pad"] >= m:
        out.add("pad")
    if not card and spec.input != "tiny" and "h" in given and spec.d_model % given["h"]:
        out.add("h")
    # The experiments on heads: what a trained model or the tiny example cannot take, and heads that do not exist.
    if "ablate" in given and max(given["ablate"]) > heads:
        out.add("ablate")
    if "kv_heads" in given and (card or spec.input == "tiny" or given["kv_heads"] and spec.h % given["kv_heads"]):
        out.add("kv_heads")
    if card:
        out |= {"scale", "plant"} & set(given)
    if "plant_head" in given and given["plant_head"] > heads:
        out.add("plant_head")
    if spec.input == "pair" and given.get("causal"):
        out.add("causal")
    return out


def used(settings) -> set[str]:
    """The settings that decide what this view shows (the others are not read in this mode)."""
    spec = settings.spec
    names = {"model", "backend", "head", "query", "stage"}
    if spec.card:
        return names | {"text", "layer"}
    names |= {"input", "causal", "pad"}
    if spec.input != "tiny":
        names |= {"d_model", "h", "seed"}
    inputs = {"sentence": {"text", "pe"}, "pair": {"text", "text_kv", "pe"}, "random": {"n"}}
    return names | inputs.get(spec.input, set())


def plain(text: str) -> str:
    return text.replace("\\", "")


LINK_IDS = [f"link-{i}-{PAGES[i % len(PAGES)].name}" for i in range(LINKS)]


@pytest.mark.parametrize("i", range(LINKS), ids=LINK_IDS)
def test_crafted_link(i):
    link = random_link(i)
    at = run_link(link)
    where = f"link {i}: {link.url()[:600]}"
    assert not at.exception, (where, [e.value for e in at.exception])
    warnings = messages(at, "warning")
    notes = warnings + messages(at, "info")
    for text in notes + messages(at, "error"):
        assert "Traceback" not in text and "Error:" not in text and not re.search(r"\w+Error\b", text), (where, text)

    texts = {name: link.params.get(name, default(name)) for name in ("text", "text_kv")}
    texts = {name: value[-1] if isinstance(value, list) else value for name, value in texts.items()}
    text = texts["text"]
    errors = messages(at, "error")
    if errors:  # the one message that stops a page: a sentence with no words in it
        assert all("text" in e and ("no words" in e or "empty" in e) for e in errors), (where, errors)
        assert any(not re.sub(r"[\s\u200b\ufeff\u202a-\u202e]", "", t) for t in texts.values()), (where, errors)
        return
    settings, example = at.session_state["view"]
    for name in link.refused | contradicted(link, settings, example):
        mention = f"`{name}`" if name in FIELDS else name[:24]  # quote() shortens long values
        assert any(mention in plain(note) for note in notes), (where, f"no warning names {name}", notes)
    values = settings.values()
    for name, raw in link.params.items():
        if name in used(settings) and name not in link.refused | contradicted(link, settings, example):
            want = parsed(name, raw)
            if name == "text":
                assert values["text"] == want[: control("text").max_chars], where
            else:
                assert values[name] == want, (where, name, values[name], want)
    user_text = text if values.get("text") == text else ""
    assert not non_finite_on_screen(at, user_text), (where, non_finite_on_screen(at, user_text))


def test_the_fuzz_covers_every_page_and_setting():
    links = [random_link(i) for i in range(LINKS)]
    assert {link.page.script for link in links} == {p.script for p in PAGES}
    for name in FIELDS:
        assert sum(name in link.params and name not in link.refused for link in links) >= 10, name
        assert sum(name in link.refused for link in links) >= 10, name
    assert sum(any(name not in FIELDS for name in link.params) for link in links) >= 30
    assert sum(any(isinstance(v, list) for v in link.params.values()) for link in links) >= 30
