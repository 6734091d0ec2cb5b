"""The browser code of the app's custom components (Streamlit components v2, and the explorer's saved page): each
component's files, read from the installed package, with what they share (shared.js, shared.css) put in front of each
script and style sheet, so that a component is still one inline ES module and one style sheet."""

from __future__ import annotations

from importlib import resources

SHARED = ("js", "css")  # the kinds of file with a shared part: shared.js, shared.css


def read(package: str, name: str) -> str:
    """One file of a package, as it is."""
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


def source(package: str, name: str) -> str:
    """A component's file as the browser gets it: a script or style sheet after the shared one of its kind."""
    kind = name.rsplit(".", 1)[-1]
    shared = read(__package__, f"shared.{kind}") + "\n" if kind in SHARED else ""
    return shared + read(package, name)
