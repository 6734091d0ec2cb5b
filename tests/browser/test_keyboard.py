"""The keyboard alone, in Chromium: Tab reaches every control, each showing its focus, and Tab, the arrows and Enter
walk the four steps (answering each question) and step through the lesson."""

from __future__ import annotations

import re

import pytest

from app_pages import app_pages
from chromium import CHANGE_MS, LOAD_MS, SMALL, expect, no_exception, wait_settled

pytestmark = pytest.mark.browser

PAGES = app_pages()
STEPS = [p for p in PAGES if p.step]
LESSON = next(p for p in PAGES if p.url_path == "lesson")
# The focused element, inside a component's shadow root too: kept as window.__focused for the next call.
FOCUSED_JS = """() => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  if (!el || el === document.body) return null;
  window.__focused = el;
  el.dataset.reached = '1';
  const r = el.getBoundingClientRect();
  return {name: (el.getAttribute('aria-label') || el.innerText || el.value || el.tagName).trim().replace(/\\s+/g, ' '),
          box: {x: r.x, y: r.y, width: r.width, height: r.height}};
}"""
# Every control a user could Tab to that no Tab reached: a radio group is one stop (its arrows move inside it).
UNREACHED_JS = """() => {
  const roots = [document, ...[...document.querySelectorAll('*')].map(e => e.shadowRoot).filter(Boolean)];
  const controls = 'a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), textarea, select, '
                   + '[tabindex]';
  return roots.flatMap(r => [...r.querySelectorAll(controls)])
    .filter(e => e.tabIndex >= 0 && e.checkVisibility({visibilityProperty: true}) && !e.dataset.reached)
    .filter(e => !((e.type === 'radio' || e.getAttribute('role') === 'radio')
                   && e.closest('[role=radiogroup]')?.querySelector('[data-reached]')))
    .map(e => (e.getAttribute('aria-label') || e.innerText || e.tagName).trim().slice(0, 60));
}"""


def focused(page) -> dict | None:
    return page.evaluate(FOCUSED_JS)


def focus_shows(page, stop: dict) -> bool:
    """Whether focus is visible: the focused control looks different once it loses focus."""
    box = stop["box"]
    x, y = max(box["x"] - 6, 0), max(box["y"] - 6, 0)
    clip = {"x": x, "y": y, "width": min(box["width"] + 12, SMALL["width"] - x),
            "height": min(box["height"] + 12, SMALL["height"] - y)}
    with_focus = page.screenshot(clip=clip)
    page.evaluate("() => window.__focused.blur()")
    without = page.screenshot(clip=clip)
    page.evaluate("() => window.__focused.focus({focusVisible: true})")
    return with_focus != without


def tab_to(page, name: str, limit: int = 150) -> dict:
    """Press Tab until a control whose name `name` (a regular expression) finds has focus; its focus must show."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        stop = focused(page)
        if stop and re.search(name, stop["name"]):
            assert focus_shows(page, stop), f"focus on {name!r} does not show"
            return stop
    raise AssertionError(f"{limit} presses of Tab never reached {name!r} on {page.url}")


def answer(page) -> None:
    """The page's question by keyboard: an answer chosen with the arrows and checked with Enter, else revealed."""
    reveal = page.get_by_role("button", name="Reveal the answer")
    if not reveal.count():
        return
    pills = page.locator('[data-testid="stMain"] [role=radiogroup] [role=radio]')
    if pills.count():
        tab_to(page, f"^{re.escape(pills.first.inner_text().strip())}$")
        page.keyboard.press("ArrowRight")
        tab_to(page, "^Check my answer$")
        page.keyboard.press("Enter")
        wait_settled(page, CHANGE_MS)
    if reveal.count():
        tab_to(page, "^Reveal the answer$")
        page.keyboard.press("Enter")
        wait_settled(page, CHANGE_MS)
    expect(reveal).to_have_count(0)


def round_the_page(page) -> list[str]:
    """Tab once round the whole page; the names of the controls whose focus does not show."""
    start, hidden = None, []
    for _ in range(300):
        page.keyboard.press("Tab")
        stop = focused(page)
        if stop is None:
            continue
        if stop == start:
            return hidden
        start = start or stop
        if not focus_shows(page, stop):
            hidden.append(stop["name"][:60])
    raise AssertionError("300 presses of Tab never came back to the first control")


def test_the_four_steps_and_the_lesson_by_keyboard_alone(server, tabs):
    """Tab reaches every control of the overview, each showing its focus; then Tab, the arrows and Enter alone
    choose h, answer each step's question, follow the four steps by their Next links, and step through the lesson
    by its Next button and its key."""
    page = tabs.new_page()
    try:
        page.goto(f"{server}/", timeout=LOAD_MS)
        wait_settled(page)
        hidden = round_the_page(page)
        assert not hidden, f"focus does not show on {hidden}"
        assert not page.evaluate(UNREACHED_JS), page.evaluate(UNREACHED_JS)

        tab_to(page, "^Heads h$")  # a list: the down arrow opens it, the arrows move, Enter picks
        page.keyboard.press("ArrowDown")
        for _ in range(8):
            option = page.locator("[role=option][data-focused]")
            option.wait_for()
            if option.inner_text().strip() == "4":
                break
            page.keyboard.press("ArrowUp")
        page.keyboard.press("Enter")
        page.wait_for_function("() => new URLSearchParams(location.search).get('h') === '4'", timeout=CHANGE_MS)
        wait_settled(page, CHANGE_MS)

        tab_to(page, f"{re.escape(STEPS[0].nav_title)}$")
        page.keyboard.press("Enter")
        for number, step in enumerate(STEPS, start=1):
            page.wait_for_function("p => location.pathname === '/' + p", arg=step.url_path, timeout=CHANGE_MS)
            wait_settled(page, CHANGE_MS)
            expect(page.locator("h1").first).to_contain_text(f"Step {number}")
            no_exception(page)
            answer(page)
            if number < len(STEPS):
                tab_to(page, "Next: ")
                page.keyboard.press("Enter")
        assert "h=4" in page.url, page.url  # the choice made by keyboard stayed through the steps

        tab_to(page, f"^{LESSON.section}$")  # the menu in the top bar: Enter opens it, the arrows move in it
        page.keyboard.press("Enter")
        for _ in range(len(PAGES)):
            stop = focused(page)
            if stop and stop["name"].endswith(LESSON.nav_title):
                break
            page.keyboard.press("ArrowDown")
        page.keyboard.press("Enter")
        page.wait_for_function("p => location.pathname === '/' + p", arg=LESSON.url_path, timeout=CHANGE_MS)
        wait_settled(page, CHANGE_MS)
        for number in (2, 3):  # a screen by its button, one by its key; every screen's buttons: app/test_classroom.py
            if number % 2:
                tab_to(page, "^Next\\b")  # its label, then its key: "Next →"
                page.keyboard.press("Enter")
            else:
                page.keyboard.press("ArrowRight")  # the Next button's shortcut
            page.wait_for_function("n => new URLSearchParams(location.search).get('screen') === String(n)",
                                   arg=number, timeout=CHANGE_MS)
            wait_settled(page, CHANGE_MS)
            expect(page.locator("h1").first).to_contain_text(f"{number} · ")
            no_exception(page)
    finally:
        page.close()
