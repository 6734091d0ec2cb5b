"""Hosted for a class, in a real Chromium: two sessions never mix, the footer (crafted text that runs nothing:
test_pages.py, on every page); and the class benchmark's browserless client keeps its URL as the browser does."""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
from urllib.parse import parse_qs, urlparse

from benchmarks.streamlit_client import Session
from chromium import CHANGE_MS, LOAD_MS, SMALL, choose, expect, no_exception, wait_settled
from mha_app.frame.about import app_version
from mha_app.state.settings import default


def _text_of(page) -> str:
    """Everything the page shows as text, chart labels and the address included."""
    return page.evaluate("() => document.body.innerText + ' ' + [...document.querySelectorAll('svg text')]"
                         ".map(t => t.textContent).join(' ') + ' ' + location.href")


def _type_sentence(page, text: str) -> None:
    box = page.get_by_role("textbox", name="Sentence")
    box.fill(text)
    box.press("Control+Enter")  # Streamlit's text area sends its value on Ctrl+Enter (or when it loses focus)
    wait_settled(page, CHANGE_MS)


def test_two_sessions_never_see_each_others_text_or_settings(server, browser):
    """Two students on one server, interleaved: each sees only their own sentence, sizes and head count."""
    contexts = [browser.new_context(viewport=SMALL) for _ in range(2)]
    try:
        alice, bob = (c.new_page() for c in contexts)
        alice.goto(f"{server}/attention?text=Alice+reads+quietly&d_model=64&h=2&seed=11", timeout=LOAD_MS)
        bob.goto(f"{server}/attention?text=Bob+types+loudly+there&d_model=32&h=4&seed=22", timeout=LOAD_MS)
        for page in (alice, bob):
            wait_settled(page)
            no_exception(page)
        mine = {id(alice): ("Alice", "quietly"), id(bob): ("Bob", "loudly")}
        theirs = {id(alice): ("Bob", "loudly", "Dave", "softly"), id(bob): ("Alice", "quietly")}

        def check(page, h: int, d_model: int) -> None:
            shown = _text_of(page)
            assert all(word in shown for word in mine[id(page)]), shown[:300]
            assert not [w for w in theirs[id(page)] if w in shown], [w for w in theirs[id(page)] if w in shown]
            expect(page.get_by_role("combobox", name="Heads h", exact=True)).to_have_value(str(h))
            expect(page.get_by_role("spinbutton", name="d_model")).to_have_value(str(d_model))
            query = parse_qs(urlparse(page.url).query)
            assert query.get("h", [str(default("h"))]) == [str(h)], page.url
            assert query.get("d_model", [str(default("d_model"))]) == [str(d_model)], page.url

        check(alice, 2, 64)
        check(bob, 4, 32)
        choose(bob, "Heads h", 8)                    # Bob changes his head count ...
        wait_settled(bob, CHANGE_MS)
        _type_sentence(alice, "Alice reads quietly again")  # ... while Alice edits her sentence
        check(alice, 2, 64)
        check(bob, 8, 32)
        mine[id(bob)] = ("Dave", "softly")
        _type_sentence(bob, "Dave speaks softly")
        alice.reload(timeout=LOAD_MS)                # a fresh run of Alice's session after Bob's change
        wait_settled(alice)
        check(alice, 2, 64)
        check(bob, 8, 32)
        assert "Bob" not in _text_of(bob), "Bob's old sentence is gone from his own page too"
    finally:
        for context in contexts:
            context.close()


def test_footer_shows_the_version_and_opens_the_readme(server, open_page):
    page = open_page(f"{server}/")
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.get_by_text(f"MHA Visualiser {app_version()}")).to_be_visible()
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", app_version()), app_version()
    sidebar.get_by_role("button", name="README").click()
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_role("heading", name=re.compile("MHA Visualiser"))).to_be_visible(timeout=CHANGE_MS)
    expect(dialog.get_by_text("Deploy", exact=True).first).to_be_visible()
    no_exception(page)


def test_the_load_clients_url_shows_its_view_after_the_app_corrects_a_value(server):
    """benchmarks.load's fault run reopens a session from its URL on another replica and compares the views, so the
    client must keep the URL as the browser does: a value the script sets (query 9 past a 4-token sentence becomes
    4) is the widget's value from then on, and a value set back to its default leaves the URL."""
    long_text, short_text = "The keys that the man who lives next door lost are here.", "Keys were lost."

    async def run() -> None:
        student, fresh = Session(server), Session(server)
        try:
            await student.open("", {"text": long_text})
            await student.set("query", 9)
            corrected = await student.set("text", short_text)
            assert any("so `query` is now 4" in text for text in corrected.texts())  # a notice of this run only
            assert student.query["query"] == "4" and "so `query` is now 4" not in " ".join(corrected.view())
            back = await student.set("text", long_text)  # query 9 exists again, but the widget holds 4
            assert student.query["query"] == "4" and any(t.startswith("Query token 4: ") for t in back.texts())
            await student.set("query", 1)  # the default: the browser's address bar drops it
            assert "query" not in student.query, student.query
            assert (await fresh.open("", student.query)).view() == student.view[2]
        finally:
            await student.close()
            await fresh.close()

    with concurrent.futures.ThreadPoolExecutor(1) as thread:  # Playwright's own loop may be running in this one
        thread.submit(asyncio.run, run()).result()
