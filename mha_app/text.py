"""User text inside Markdown: shown as typed, never read as markup."""

from __future__ import annotations

import re

_MARKUP = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$])")


def quote(raw, limit: int = 24) -> str:
    """A value from a link or a token, in curly quotes, shortened, with Markdown's markup characters escaped."""
    text = str(raw)
    text = text if len(text) <= limit else text[:limit] + "…"
    return "“" + _MARKUP.sub(r"\\\1", text) + "”"
