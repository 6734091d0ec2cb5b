"""Every page of app.py in every mode a student can meet (modes.py), and the lesson in presentation mode, through
AppTest: no exception, no error, nothing on screen that reads NaN, infinity, None or Traceback; the page's heading,
formula and main figure; that figure drawn from the example's own trace; and a share link that keeps the mode.

The one "every page renders" matrix of the app layer (browser/test_pages.py opens every page in Chromium). The
numbers themselves are checked against torch and transformers in reference/; here only that the page shows them.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

from app_pages import app_pages
from modes import MINILM, MODES
from screen import (
    as_array,
    assert_clean,
    explorer,
    figure_titled,
    figures,
    messages,
    mosaic_panels,
    non_finite_on_screen,
)

PAGES = app_pages()
STEPS = {p.script for p in PAGES if p.step}
# The main figure of each page: the start of its title, and the example's arrays its heatmaps show, in order.
MAIN = {
    "pages/overview.py": ("The pipeline", None),
    "pages/projection.py": ("Q_i for each head", lambda ex: list(ex.trace.q)),
    "pages/attention.py": (None, None),                # the explorer: checked against the trace below
    "pages/concatenation.py": ("Concat(", lambda ex: [ex.trace.concat]),
    "pages/output.py": ("Input and output", lambda ex: [ex.trace.x, ex.trace.output]),
    "pages/model_view.py": ("All ", None),           # checked panel by panel below
    "pages/head_summary.py": ("Mean entropy", None),  # its statistics: unit/ and reference/ tests
    "pages/cost.py": ("Multiply-adds of each step", None),
    "pages/by_hand.py": ("Head ", None),              # "Head i: q · k term by term"
    "pages/practice.py": ("", None),                  # "<preset>: the four matrices of one attention layer"
    "pages/lesson.py": ("Input X", lambda ex: [ex.trace.x]),
    "pages/heads_learn.py": ("Step 0", None),         # its own model: reference/test_training_reference.py
}
LEAKS = re.compile(r"\bNone\b|Traceback|\w+Error\b")
# Code, and what the explanations of code say of it ("`cfg.rope_theta` is None").
CODE = re.compile(r"`[^`]*`( is None\b)?")
GLUED = re.compile(r"\\(?!(?:quad|qquad|cdot|cdots|times|dots|ldots)(?![A-Za-z]))(?:quad|qquad|cdot|times|dots)")
SHOWN = ("title", "header", "subheader", "markdown", "caption", "latex", "info", "success", "warning")


# A Python format field left in a text ("{kv}", "{cfg.rope_theta:,.0f}"); maths ($…$) and LaTeX set braces of their own.
TEMPLATE = re.compile(r"\{[A-Za-z_][\w.]*(?:[:!][^{}]*)?\}")
MATHS = re.compile(r"\$[^$]*\$")


def template_fields(at) -> list[str]:
    """Format fields left unfilled in the page's words, its figures' titles and their axis labels."""
    said = [MATHS.sub("", text) for kind in SHOWN if kind != "latex" for text in messages(at, kind)]
    for fig in figures(at):
        said.append(str(fig["layout"].get("title", {}).get("text", "")))
        said += [str(label) for trace in fig["data"] for axis in ("x", "y") if isinstance(trace.get(axis), list)
                 for label in trace[axis] if isinstance(label, str)]
    return [text[:120] for text in said if TEMPLATE.search(text)]


def leaked_words(at) -> list[str]:
    """Python's words on screen outside code: None, a traceback or an exception's name."""
    texts = [text for kind in SHOWN for text in messages(at, kind)] + [f"{m.label} {m.value}" for m in at.metric]
    return [text[:120] for text in texts if LEAKS.search(CODE.sub("", text))]


def assert_weights_drawn(drawn: np.ndarray, weights: np.ndarray) -> None:
    """Attention weights as drawn: every value, and blocked pairs (weight 0) left empty (NaN) or drawn as 0."""
    assert (weights[np.isnan(drawn)] == 0).all(), "only blocked pairs are left empty"
    np.testing.assert_allclose(np.nan_to_num(drawn), weights, atol=1e-6)


def check_page(at, page, params: dict) -> None:
    assert_clean(at)
    assert not non_finite_on_screen(at, params.get("text", "")), non_finite_on_screen(at, params.get("text", ""))
    assert not leaked_words(at), leaked_words(at)
    assert not template_fields(at), template_fields(at)
    for latex in at.latex:  # a LaTeX command glued to the next word (\quadQ) renders as an error
        assert not GLUED.findall(latex.value), latex.value
    settings, example = at.session_state["view"]
    if page.pretrained and settings.spec.card is None:  # a trained model's page, with random weights: the way there
        assert any(MINILM in i for i in messages(at, "info")), messages(at, "info")
        assert f"Switch to {MINILM}" in [b.proto.label for b in at.button]
        return
    if not page.pretrained:
        # a formula on a line of its own, or inline in the words (the lesson's first screen: X's shape in its answer)
        assert at.latex or any(MATHS.search(m.value) for m in [*at.markdown, *at.caption]), "the page shows its formula"
    if page.step:
        assert [c.value for c in at.code if "=" in c.value and "(" in c.value], "a step shows the code that computed it"
    title, arrays = MAIN[page.script]
    if title is None:  # the explorer draws the focused layer's weights, every head
        _, shown, view = explorer(at)
        assert_weights_drawn(shown[f"{view['layer']}/weights"], example.trace.weights)
        return
    figure = figure_titled(at, title)
    if arrays:
        shown = [as_array(trace["z"]) for trace in figure["data"] if "z" in trace]
        expected = arrays(example)
        assert len(shown) == len(expected), (len(shown), len(expected))
        for z, a in zip(shown, expected, strict=True):
            np.testing.assert_allclose(z.reshape(a.shape), a, rtol=1e-6, atol=1e-6)
    if page.script == "pages/model_view.py":
        panels = mosaic_panels(figure)
        assert len(panels) == example.run.attentions.shape[0] * example.run.attentions.shape[1]
        for (layer, head), z in panels.items():
            assert_weights_drawn(z, example.run.attentions[layer - 1, head - 1])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_page_in_every_mode(page_run, page, mode):
    params = MODES[mode]
    at = page_run(mode, page.script)
    check_page(at, page, params)
    if page.heading:
        assert at.title[0].value.startswith(page.heading), at.title[0].value
    link = parse_qs(urlsplit(next(c.value for c in at.code if c.value.startswith("http"))).query)
    assert {name: [value] for name, value in params.items()}.items() <= link.items(), (params, link)


def test_the_lesson_in_presentation_mode(page_run):
    lesson = next(p for p in PAGES if p.script == "pages/lesson.py")
    at = page_run("presentation", lesson.script)
    check_page(at, lesson, {})
    assert at.title[0].value.startswith("1 · "), at.title[0].value
    assert figures(at)
