"""User text inside Markdown: shown as typed, never read as markup."""

from __future__ import annotations

import re

import numpy as np

from mha_core.teaching.notation import readable  # noqa: F401 (the pages write numbers with it)

# Streamlit rewrites every ":material/" in a Markdown source into an icon before parsing, even inside code spans,
# so that one sequence is written outside the code spans, with its characters as HTML entities.
_ICON_PREFIX = ":material/"
_ICON_PREFIX_SHOWN = "&#58;material&#47;"
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def _code_span(text: str) -> str:
    """Inline code whose content Markdown shows literally: no emphasis, math, emoji codes, links or entities."""
    fence = "`" * (max(map(len, re.findall(r"`+", text)), default=0) + 1)
    # CommonMark strips one space at each end of a code span (when both ends have one): pad so that what is
    # stripped is the padding, and a value that starts or ends with a backtick does not merge with the fence.
    if text.strip(" ") and (text[0] in " `" or text[-1] in " `"):
        text = f" {text} "
    if _BIDI_CONTROLS.search(text):
        text = f"\u2068{text}\u2069"  # an isolate: a right-to-left override typed by the user ends with the value
    return f"{fence}{text}{fence}"


def quote(raw, limit: int = 24) -> str:
    """A value from a link or a token, shortened, as inline code: Markdown shows it exactly as typed.

    Escaping markup characters is not enough in Streamlit's Markdown: `:cat:` still becomes an emoji, `:red[x]`
    colours text, `&lt;` becomes "<" and `www.x.org` a link. Inside a code span none of that happens.
    """
    text = str(raw)
    text = text if len(text) <= limit else text[:limit] + "…"
    if not text:
        return "“” (empty)"
    return _ICON_PREFIX_SHOWN.join(_code_span(part) if part else "" for part in text.split(_ICON_PREFIX))


_CODE_SPAN = re.compile(r"(`+)(.*?)\1", re.S)


def plain(markdown: str) -> str:
    """The app's own Markdown as plain text, for a page that is not Markdown (the saved explorer): bold and icon
    codes dropped, and a value `quote` wrote as inline code in quotation marks, exactly as typed."""
    out, at = [], 0
    for span in _CODE_SPAN.finditer(markdown):
        out.append(_prose(markdown[at:span.start()]))
        inner = span.group(2)
        inner = inner[1:-1] if len(inner) > 1 and inner[0] == inner[-1] == " " and inner.strip(" ") else inner
        out.append(f"“{inner}”")
        at = span.end()
    out.append(_prose(markdown[at:]))
    text = "".join(out)
    for cut, joined in ((f"”{_ICON_PREFIX_SHOWN}“", _ICON_PREFIX), (f"{_ICON_PREFIX_SHOWN}“", f"“{_ICON_PREFIX}"),
                        (f"”{_ICON_PREFIX_SHOWN}", f"{_ICON_PREFIX}”")):  # a value quote cut at ":material/"
        text = text.replace(cut, joined)
    return text.replace(_ICON_PREFIX_SHOWN, _ICON_PREFIX).strip()


def _prose(text: str) -> str:
    return re.sub(r":material/[a-z_]+:\s*", "", text).replace("**", "")


_MARKUP = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>$:&])")


def escape(text) -> str:
    """The app's own words inside Markdown (a table cell, a header), shown as written: every character Markdown or
    Streamlit reads as markup (emphasis, math, emoji and icon codes, entities) is backslash-escaped. For user text,
    use `quote`."""
    return _MARKUP.sub(r"\\\1", str(text))


def table_number(x: float, digits: int = 4) -> str:
    """A number in a chart's table as the pages write it: a count with thousands separators (180,224, never
    180224.0), any other number to `digits` significant digits (3.144, never 3.143897)."""
    x = float(x)
    if not np.isfinite(x):
        return str(x)
    return f"{int(x):,}" if x.is_integer() else readable(x, digits)
