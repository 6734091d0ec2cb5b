"""The attention explorer as one HTML file that opens in a browser with no server, offline: a page for a course site
or an e-mail, as BertViz's head view is.

The file holds the explorer's own code (explorer.js and .css, the same as in the app), its payload and carriers
(payload.py's bytes, base64) and the view to open at. The bytes are what the app sends for that view, so the file has
the layers the app would have in the browser (every layer of a trained model when they fit in
payload.CARRIERS_BUDGET; otherwise the one on view and those nearest it, and the file says which). Nothing in it is
fetched, and no text of the user is ever HTML: tokens travel inside the bytes and are only set as text; the title is
escaped.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Sequence

from mha_app import components
from mha_core import figures

# The accent of the app's two themes (.streamlit/config.toml's primaryColor; tests/unit/test_colours.py checks them).
ACCENT = {"light": "#3b5bdb", "dark": "#748ffc"}


def read(name: str) -> str:
    """One of the explorer's files (explorer.js, .css, .html, ...), as the app and a saved page both use them (with
    what the components share: components.source)."""
    return components.source(__package__, name)


def _script_json(value) -> str:
    """value as JSON that can stand inside a <script> element: no "<", so never a closing tag."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")


def _bytes_script(data: bytes, id_: str = "", cls: str = "") -> str:
    attributes = (f' id="{id_}"' if id_ else "") + (f' class="{cls}"' if cls else "")
    return f'<script type="application/octet-stream"{attributes}>{base64.b64encode(data).decode()}</script>'


def _theme_css() -> str:
    """The CSS variables explorer.css reads (Streamlit sets them in the app), for the light theme and the dark one."""
    def variables(theme: str) -> str:
        p = figures.PALETTES[theme]
        return (f":root {{ --st-background-color: {p.background}; --st-text-color: {p.text}; "
                f"--st-border-color: {p.pale}; --st-primary-color: {ACCENT[theme]}; }}")

    return f"{variables('light')}\n@media (prefers-color-scheme: dark) {{ {variables('dark')} }}"


def standalone_page(data: bytes, carriers: Sequence[bytes], view: dict, title: str,
                    about: Sequence[str] = ()) -> str:
    """One HTML page that draws the explorer from `data` (its payload) and `carriers` (its layers' bytes, when data is
    a frame), opened at `view` (layer, head and query 1-based, stage); title and about (paragraphs) are plain text."""
    parts = {
        "<!--TITLE-->": html.escape(title),
        "<!--ABOUT-->": "\n".join(f'<p class="about">{html.escape(text)}</p>' for text in about),
        "<!--THEME-->": _theme_css(),
        "<!--CSS-->": read("explorer.css"),
        "<!--HTML-->": read("explorer.html"),
        "<!--DATA-->": "\n".join([
            f'<script type="application/json" id="mha-code">{_script_json(read("explorer.js"))}</script>',
            f'<script type="application/json" id="mha-view">{_script_json({"view": view, "seq": 0})}</script>',
            _bytes_script(data, id_="mha-payload"),
            *(_bytes_script(carrier, cls="mha-layer") for carrier in carriers)]),
    }
    page = read("standalone.html")
    for marker, text in parts.items():
        page = page.replace(marker, text)
    return page
