"""The app's pages, read from app.py (never listed again in the tests): script, path, title, heading."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from helpers import ROOT
from mha_app.state.settings import MODELS

PRETRAINED = MODELS[1]


@dataclass(frozen=True)
class AppPage:
    script: str       # e.g. "pages/attention.py"
    url_path: str     # "" for the default page
    nav_title: str    # the title in the navigation
    heading: str      # the start of the page's st.title text ("" when not a literal)
    pretrained: bool  # the page shows the trained model only (it calls needs_pretrained)
    step: bool = False  # the page is a step of the computation and shows the engine's code (calls code_for_step)
    draws_trace: bool = False  # the page draws the example's own numbers with mha_core.figures (not only counts)
    section: str = ""  # the navigation menu the page sits in ("" = shown in the top bar itself)
    own_example: bool = False  # the page shows examples of its own, not the sidebar's (it discards what view() gives)

    @property
    def name(self) -> str:
        return self.url_path or Path(self.script).stem

    def url(self, base: str, **params: str) -> str:
        """The page's address; pages of the trained model get model=all-MiniLM-L6-v2 so they have something to show."""
        if self.pretrained:
            params = {"model": PRETRAINED, **params}
        return f"{base}/{self.url_path}" + (f"?{urlencode(params)}" if params else "")


def _literal_start(node: ast.AST) -> str:
    """A string literal's text, or an f-string's literal start (up to its first {...})."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        start = ""
        for part in node.values:
            if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
                break
            start += part.value
        return start
    return ""


def _page_source(script: Path) -> str:
    return script.read_text(encoding="utf-8") if script.is_file() else ""


def _discards_view(source: str) -> bool:
    """Whether the page calls view() only for its side effects (a bare `view()` statement)."""
    return any(isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
               and getattr(node.value.func, "id", None) == "view" for node in ast.parse(source).body)


def _page_heading(source: str) -> str:
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "title"
                and node.args):
            return _literal_start(node.args[0]).strip()
    return ""


def app_pages() -> list[AppPage]:
    """Every st.Page(...) in app.py, in source order."""
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    sections = {}  # line of an st.Page -> the label of the menu (a key of the pages' dict) it is listed under
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(value, ast.List):
                    sections.update({item.lineno: key.value for item in value.elts})
    pages = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "Page"):
            continue
        kw = {k.arg: k.value for k in node.keywords}
        script = _literal_start(node.args[0]) if node.args else _literal_start(kw["page"])
        default = isinstance(kw.get("default"), ast.Constant) and kw["default"].value is True
        url_path = "" if default else _literal_start(kw["url_path"]) if "url_path" in kw else Path(script).stem
        title = _literal_start(kw["title"]) if "title" in kw else ""
        source = _page_source(ROOT / script)
        pages.append((node.lineno, AppPage(script, url_path, title, _page_heading(source),
                                           "needs_pretrained(" in source, "code_for_step(" in source,
                                           re.search(r"\bfigures\.\w+_figure\(", source) is not None,
                                           sections.get(node.lineno, ""), _discards_view(source))))
    return [p for _, p in sorted(pages, key=lambda item: item[0])]


def step_pages() -> list[str]:
    """The scripts of the pages that work with any weights (not only a trained model's)."""
    return [p.script for p in app_pages() if not p.pretrained]


def trace_pages() -> list[str]:
    """The pages that work with any weights and draw the example's own attention (not the cost or practice pages,
    which count from shapes): with random weights, they say that the patterns mean nothing."""
    return [p.script for p in app_pages() if not p.pretrained and p.draws_trace]
