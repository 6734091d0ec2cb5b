"""The browser code of the app's custom components (Streamlit components v2, and the explorer's saved page): each
component's files, read from the installed package, and the helpers their scripts share (shared.js), put in front of
each script, so that a component is still one inline ES module."""

from __future__ import annotations

from importlib import resources


def read(package: str, name: str) -> str:
    """One file of a component's package (its .js, .css or .html)."""
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


def script(package: str, name: str) -> str:
    """A component's script as the browser runs it: shared.js, then the script itself."""
    return read(__package__, "shared.js") + "\n" + read(package, name)
