"""The browser layer's fixtures: one `streamlit run app.py` on a free local port and one Chromium for the session
(per xdist worker), and a fresh browser context (a new Streamlit session) per page a test opens."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from helpers import ROOT, free_port

SERVER_START_S = 60


@pytest.fixture(scope="session")
def server(request, tmp_path_factory) -> str:
    """`streamlit run app.py` on a free local port; the base URL. The process group is ended afterwards."""
    port = free_port()
    log = (tmp_path_factory.mktemp("streamlit") / "server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1", "--server.port",
         str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def stop() -> None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()

    request.addfinalizer(stop)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"streamlit exited with {proc.returncode}; see {log.name}")
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as answer:
                if answer.status == 200:
                    return base
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"streamlit did not answer on port {port} within {SERVER_START_S} s; see {log.name}")


@pytest.fixture(scope="module")  # Playwright's loop ends with the module, before a worker's next (AppTest) module
def browser():
    from playwright.sync_api import sync_playwright

    from chromium import CHROMIUM, CHROMIUM_ARGS  # imported here: its import skips a test module without Chromium

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def tabs(browser):
    """One browser context for a module's pages: each page is a new tab, so a new Streamlit session, while the
    context keeps the app's scripts in its HTTP cache (loading them again for every page took most of a load)."""
    from chromium import CHANGE_MS, SMALL

    context = browser.new_context(viewport=SMALL)
    context.set_default_timeout(CHANGE_MS)
    yield context
    context.close()


@pytest.fixture
def open_page(tabs):
    """open_page(url) -> a settled page in a new tab (a new Streamlit session), closed after the test; with
    `answered`, its prediction question answered by Reveal, so the whole page shows."""
    from chromium import LOAD_MS, reveal, wait_settled

    pages = []

    def _open(url: str, answered: bool = True):
        page = tabs.new_page()
        pages.append(page)
        page.goto(url, timeout=LOAD_MS)
        wait_settled(page)
        if answered:
            reveal(page)
        return page

    yield _open
    for page in pages:
        page.close()


@pytest.fixture(scope="module")
def walk(server, tabs):
    """walk(app_page, **params) -> the page opened from the top bar of one tab per set of URL parameters, as a user
    clicks through the app (one session: the URL's settings stay), settled, its question answered by Reveal.

    A page opened this way costs a rerun; a new tab costs a new session, its scripts and every chart drawn anew."""
    from urllib.parse import urlencode

    from chromium import LOAD_MS, go, reveal, wait_settled

    sessions = {}

    def _walk(app_page, **params):
        key = urlencode(params)
        if key in sessions:
            page = sessions[key]
            go(page, app_page)
        else:
            page = sessions[key] = tabs.new_page()
            page.goto(f"{server}/{app_page.url_path}" + (f"?{key}" if key else ""), timeout=LOAD_MS)
            wait_settled(page)
        reveal(page)
        return page

    yield _walk
    for page in sessions.values():
        page.close()
