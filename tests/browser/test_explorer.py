"""The attention explorer in a real Chromium: head, query, stage and layer change in the browser before the server
answers; the state sync that follows redraws nothing and resends none of its data; the URL, the sidebar and a fresh
browser follow; the numbers under the pointer are the engine's, computed here with mha_core.

Every message from the server to the page goes through Playwright's websocket route, so a test can hold them back
(the server cannot answer) and count what arrives. Starts `streamlit run app.py` once for the module, on a port of
MHA_PORTS (e.g. 8620-8629) when set, else on any free one. Screenshots go to screenshots/ (ignored by git).
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest

import mha_core as mc
from chromium import CHANGE_MS, LOAD_MS, SCREENSHOTS, expect, reveal
from mha_app.components.explorer.payload import build_frame, build_layer
from mha_app.components.explorer.standalone import standalone_page
from mha_core.analysis.contributions import contribution_shares
from mha_core.figures.base import LIGHT

VIEWPORT = {"width": 1280, "height": 1000}
DEFAULT_TEXT = "The cat sat on the mat because it was tired."  # the app's default example: d_model 128, h 8, seed 0

pytestmark = pytest.mark.browser

# The app has finished its run (Streamlit's own e2e hook), is connected, and nothing on it is stale or loading.
IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.dataset.testScriptState === 'notRunning' && app.dataset.testConnectionState === 'CONNECTED'
    && !document.querySelector('[data-stale="true"], [data-testid="stSpinner"], [data-testid="stSkeleton"]');
}"""
EXPLORER = ".mha-explorer"  # inside the component's shadow root: Playwright's CSS locators look into open ones
# The explorer's root element in the page script's terms (document.querySelector does not look into shadow roots).
ROOT_JS = ("[...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]"
           ".map(h => h.shadowRoot && h.shadowRoot.querySelector('.mha-explorer')).find(Boolean)")


# --- the websocket ------------------------------------------------------------------------------------------------

class Socket:
    """Streamlit's websocket, routed through the test: every message from the server is counted, and held back while
    `hold` is on (the server cannot answer), until release(). Playwright's sync API delivers messages only while the
    test is inside one of its calls: wait with page.wait_for_timeout, never time.sleep."""

    def __init__(self, page, hold_over: int | None = None):
        self.received: list[bytes | str] = []
        self.held: list[bytes | str] = []
        self.hold = False
        self.hold_over = hold_over  # hold back from the first message of more bytes than this on (in order)
        self.lock = threading.Lock()
        self.route = None
        page.route_web_socket(re.compile(r".*/_stcore/stream$"), self._connect)

    def _connect(self, ws) -> None:
        self.route = ws
        server = ws.connect_to_server()  # the page's messages go on to the server as they are

        def to_page(message) -> None:
            with self.lock:
                self.received.append(message)
                if self.hold_over and len(message) > self.hold_over:
                    self.hold = True
                if self.hold:
                    self.held.append(message)
                    return
            ws.send(message)

        server.on_message(to_page)

    def release(self) -> None:
        with self.lock:
            self.hold, self.hold_over = False, None
            held, self.held = self.held, []
        for message in held:
            self.route.send(message)

    def since(self, start: int) -> list[bytes]:
        return [m if isinstance(m, bytes) else m.encode() for m in self.received[start:]]


@pytest.fixture(scope="module")
def context(browser):
    """One browser context for the module: each page a new tab, so a new Streamlit session (as a fresh browser
    opening the link is), while the app's scripts stay compiled."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(CHANGE_MS)
    yield context
    context.close()


@pytest.fixture
def open_page(context):
    """open_page(url) -> (page, socket): a new tab (a new session) whose explorer has drawn (drawn=False: is
    there), closed after; hold_over: the socket holds back every message from the first of more bytes than that
    on (Socket)."""
    pages, errors = [], []

    def _open(url: str, hold_over: int | None = None, drawn: bool = True):
        page = context.new_page()
        pages.append(page)
        page.on("pageerror", lambda error: errors.append(str(error)))
        sock = Socket(page, hold_over)
        page.goto(url, timeout=LOAD_MS)
        settle(page, LOAD_MS)
        if not drawn:  # the app will not be idle (the server's messages held back): reveal, and wait for no more
            page.get_by_role("button", name="Reveal the answer").first.click()
            page.wait_for_function(f"() => !!({ROOT_JS})?.dataset.loading", timeout=LOAD_MS)
            return page, sock
        reveal(page)
        page.wait_for_function(f"() => Number(({ROOT_JS})?.dataset.draws) > 0", timeout=LOAD_MS)
        settle(page)
        return page, sock

    yield _open
    for page in pages:
        page.close()
    assert not errors, f"errors in the page's scripts: {errors}"


def settle(page, timeout: int = CHANGE_MS, quiet_ms: int = 500) -> None:
    """Wait until the app has been idle for quiet_ms in a row."""
    deadline = time.monotonic() + timeout / 1000
    since = None
    while time.monotonic() < deadline:
        if page.evaluate(IDLE_JS):
            since = since or time.monotonic()
            if time.monotonic() - since >= quiet_ms / 1000:
                return
        else:
            since = None
        page.wait_for_timeout(50)  # (a sleep that lets Playwright deliver the websocket)
    raise TimeoutError("the app did not settle")


def state(page) -> dict:
    """What the explorer shows (its data attributes): view, draws, payload id."""
    root = page.locator(EXPLORER)
    return {"view": json.loads(root.get_attribute("data-view")), "draws": int(root.get_attribute("data-draws")),
            "payload": root.get_attribute("data-payload"), "loading": root.get_attribute("data-loading")}


def wait_view(page, **wanted) -> None:
    page.wait_for_function(
        f"""wanted => {{ const e = {ROOT_JS};
             if (!e || !e.dataset.view) return false;
             const v = JSON.parse(e.dataset.view);
             return Object.entries(wanted).every(([k, x]) => JSON.stringify(v[k]) === JSON.stringify(x)); }}""",
        arg=wanted, timeout=CHANGE_MS)


def point(page, kind: str, row: int, col: int) -> tuple[float, float]:
    """The page coordinates of cell (row, col) of a region of the explorer's canvas ("grid", "matrix", "zoom",
    "bar"; the first of that kind), scrolled into the viewport first."""
    canvas = page.locator(f"{EXPLORER} canvas.plot")
    region = next(r for r in json.loads(canvas.get_attribute("data-regions")) if r["kind"] == kind)
    for _ in range(12):
        box = canvas.bounding_box()
        x = box["x"] + region["x"] + (col + 0.5) * region["w"] / region["cols"]
        y = box["y"] + region["y"] + (row + 0.5) * region["h"] / region["rows"]
        if 120 <= y <= VIEWPORT["height"] - 60:
            return x, y
        page.mouse.move(VIEWPORT["width"] / 2, VIEWPORT["height"] / 2)
        page.mouse.wheel(0, y - VIEWPORT["height"] / 2)
        page.wait_for_timeout(150)
    raise AssertionError(f"cell {row}, {col} of {kind} never came into view")


PIXEL_JS = """([kind, row, col]) => {
  const root = ROOT, canvas = root.querySelector('canvas.plot');
  const region = JSON.parse(canvas.dataset.regions).find(r => r.kind === kind);
  const scale = canvas.width / canvas.clientWidth;
  const x = Math.floor((region.x + (col + 0.5) * region.w / region.cols) * scale);
  const y = Math.floor((region.y + (row + 0.5) * region.h / region.rows) * scale);
  return [...canvas.getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3)];
}""".replace("ROOT", ROOT_JS)


def pixel(page, kind: str, row: int, col: int) -> np.ndarray:
    """The colour (r, g, b) the canvas drew at the centre of cell (row, col) of a region."""
    return np.array(page.evaluate(PIXEL_JS, [kind, row, col]), dtype=float)


def scale_colour(stops: tuple[str, ...], value: float) -> np.ndarray:
    """A value in [0, 1] on a palette's scale of evenly spaced stops, interpolated in RGB as plotly does."""
    rgb = np.array([[int(c[i:i + 2], 16) for i in (1, 3, 5)] for c in stops], dtype=float)
    at = value * (len(stops) - 1)
    low = min(int(at), len(stops) - 2)
    return rgb[low] + (at - low) * (rgb[low + 1] - rgb[low])


def hover(page, kind: str, row: int, col: int) -> dict:
    """The tooltip over a cell: its text and what it names (value, query, key)."""
    page.mouse.move(*point(page, kind, row, col))
    tip = page.locator(f"{EXPLORER} .tip")
    expect(tip).to_be_visible()
    return {"text": tip.inner_text(), "value": tip.get_attribute("data-value"),
            "query": tip.get_attribute("data-query"), "key": tip.get_attribute("data-key")}


def screenshot(page, name: str) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    page.locator(EXPLORER).screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def default_trace(causal: bool = False, weights: bool = False, plant: tuple | None = None) -> tuple:
    """The app's default example, computed here with mha_core: its tokens and trace (and its weights); plant:
    (head, rule, strength) of a planted head, 0-based, as the link's plant_head - 1, plant and strength."""
    cfg = mc.MHAConfig(128, 8, causal=causal)
    tokens = mc.tokenize(DEFAULT_TEXT)
    x = mc.embed(tokens, 128, seed=0, positional=True)
    w = mc.init_weights(cfg, seed=0)
    if plant:
        w = mc.plant_head(w, cfg, *plant, x)
    return (tokens, mc.forward(x, w, cfg)) + ((w,) if weights else ())


POWERS = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
NUMBER = r"(-?[0-9.]+)(?: × 10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))?"  # 0.4821 or 2.08 × 10⁻⁷, as the tooltip writes numbers
SAID, EXACTLY = re.compile(rf"(=|≈) {NUMBER}"), re.compile(rf"\(exactly {NUMBER}\)")


def said(text: str, name: str) -> tuple[str, float, float | None]:
    """The number the tooltip says after `name`, read as a student reads it (2.08 × 10⁻⁷ is 2.08e-7): = or ≈, the
    number, and when it is rounded (≈) the exact value on the next line, else None."""
    def number(mantissa: str, power: str | None) -> float:
        return float(mantissa + (f"e{power.translate(POWERS)}" if power else ""))

    line, *rest = text[text.index(name) + len(name):].split("\n")
    shown = SAID.match(line.strip())
    assert shown, text
    exactly = EXACTLY.match(rest[0]) if rest else None
    return shown.group(1), number(*shown.groups()[1:]), number(*exactly.groups()) if exactly else None


# --- tests -------------------------------------------------------------------------------------------------------

def test_head_query_and_stage_change_in_the_browser_and_the_sync_redraws_and_resends_nothing(server, open_page):
    # ask=false: the sidebar's head change below is another question, which would wait; here only the change counts
    page, sock = open_page(f"{server}/attention?ask=false")
    before = state(page)
    assert before["view"] == {"layer": 1, "head": 1, "query": 1, "stage": "weights", "set": []}

    # The reference: the same kind of change made in the sidebar. The rerun brings what depends on the head further
    # down the page (the value mix, the scale comparison), and the explorer its new view.
    start = len(sock.received)
    sidebar = page.locator('[data-testid="stSidebar"]')
    box = sidebar.get_by_role("combobox", name="Head", exact=True)
    box.evaluate("e => e.scrollIntoView({block: 'center'})")
    box.click()
    page.get_by_role("option", name="2", exact=True).click()
    wait_view(page, head=2)
    settle(page)
    sidebar_change = sum(map(len, sock.since(start)))
    before = state(page)
    assert before["payload"] not in b"".join(sock.since(start)).decode("latin-1"), "not sent again"

    # The server cannot answer: each change is drawn all the same, and its sync (one rerun per pause of the user)
    # redraws nothing, never sends the explorer's data again, and brings what the sidebar's change brought.
    def held_change(make, wanted: dict, draws: int) -> int:
        start = len(sock.received)
        sock.hold = True
        make()
        wait_view(page, **wanted)
        assert state(page)["draws"] == draws, "one draw per change, none waiting for the server"
        deadline = time.monotonic() + CHANGE_MS / 1000
        while not sock.held and time.monotonic() < deadline:
            page.wait_for_timeout(50)
        assert sock.held, "the state went to the server, which answered (held here until now)"
        assert state(page)["draws"] == draws
        sock.release()
        settle(page)
        page.wait_for_timeout(500)
        after = state(page)
        assert after["draws"] == draws and after["payload"] == before["payload"], "the sync redrew nothing"
        synced = sock.since(start)
        assert not any(before["payload"].encode() in m for m in synced), "the explorer's data was not sent again"
        return sum(map(len, synced))

    canvas = page.locator(f"{EXPLORER} canvas.plot")
    brought = held_change(lambda: (canvas.focus(), page.keyboard.press("3")), {"head": 3}, before["draws"] + 1)
    assert brought <= sidebar_change + 4_000, (brought, sidebar_change)

    def query_and_stage():
        page.mouse.click(*point(page, "matrix", 4, 2))
        page.locator(f"{EXPLORER} .stages button[data-stage=raw]").click()

    held_change(query_and_stage, {"head": 3, "query": 5, "stage": "raw"}, before["draws"] + 3)

    # The settings followed: the URL, the sidebar, the share link.
    query = parse_qs(urlparse(page.url).query)
    assert query["head"] == ["3"] and query["query"] == ["5"] and query["stage"] == ["raw"], page.url
    expect(page.get_by_role("spinbutton", name="Query token (position)")).to_have_value("5")
    link = "".join(page.locator('[data-testid="stSidebar"] [data-testid="stCode"] code').first.inner_text().split())
    assert "head=3" in link and "query=5" in link and "stage=raw" in link, link
    screenshot(page, "explorer-default-head3-raw")

    # A fresh browser opening that link shows the same view.
    fresh, _ = open_page(page.url)
    assert state(fresh)["view"] == {"layer": 1, "head": 3, "query": 5, "stage": "raw", "set": []}
    assert state(fresh)["payload"] == before["payload"]


def test_the_numbers_under_the_pointer_are_the_engines(server, open_page):
    # Head 5 planted (its other heads as they were): its weights off the rule are about e^-30, a power of ten to read.
    tokens, trace = default_trace(causal=True, plant=(4, "previous", 30.0))
    page, _ = open_page(f"{server}/attention?causal=true&head=2&query=7&plant=previous&plant_head=5&strength=30")
    names = {"weights": "softmax weight", "scaled": "scaled score", "raw": "raw score"}
    for stage, values in (("weights", trace.weights[1]), ("scaled", trace.scores[1]), ("raw", trace.raw_scores(1))):
        page.locator(f"{EXPLORER} .stages button[data-stage={stage}]").click()
        wait_view(page, stage=stage)
        for q, k in ((6, 2), (10, 0), (3, 3)):
            tip = hover(page, "matrix", q, k)
            assert (tip["query"], tip["key"]) == (str(q + 1), str(k + 1))
            assert f"query {q + 1} “{tokens[q]}” → key {k + 1} “{tokens[k]}”" in tip["text"]
            assert np.float32(tip["value"]) == values[q, k], (stage, q, k, tip)  # the float32 itself
            relation, number, _ = said(tip["text"], f"head 2 · {names[stage]}")
            assert relation == "=" and np.float32(number) == values[q, k], (stage, q, k, tip)  # as a student reads it
    # A blocked pair (the causal mask) is said to be blocked, not given a number, after the mask.
    page.locator(f"{EXPLORER} .stages button[data-stage=weights]").click()
    wait_view(page, stage="weights")
    for q, k in ((10, 0), (3, 3), (10, 10)):  # each weight in the colour the legend gives it (figures.base)
        np.testing.assert_allclose(pixel(page, "matrix", q, k), scale_colour(LIGHT.sequential, trace.weights[1, q, k]),
                                   atol=3)
    tip = hover(page, "matrix", 2, 8)
    assert "blocked" in tip["text"] and not tip["value"]
    # The query's bars: query 7's weights in head 2.
    tip = hover(page, "bar", 0, 4)
    assert np.float32(tip["value"]) == trace.weights[1, 6, 4] and f"5 {tokens[4]}" in tip["text"]
    screenshot(page, "explorer-causal-hover")
    # A weight of about 10⁻¹³: said rounded, as a power of ten, with every digit of the float32 below it.
    page.locator(f"{EXPLORER} select.head").select_option("5")
    wait_view(page, head=5, stage="weights")
    tip, value = hover(page, "matrix", 6, 2), trace.weights[4, 6, 2]
    assert 0 < value < 1e-12 and "e-" not in tip["text"], tip
    relation, number, exactly = said(tip["text"], "head 5 · softmax weight")
    unit = 10.0 ** (np.floor(np.log10(value)) - 2)  # the last of 3 significant digits
    assert relation == "≈" and abs(number - value) <= unit / 2 * (1 + 1e-9), tip
    assert np.float32(exactly) == value and np.float32(tip["value"]) == value, tip
    screenshot(page, "explorer-small-number")


def test_keys_clicks_and_a_set_of_queries(server, open_page):
    tokens, trace = default_trace()
    page, _ = open_page(f"{server}/attention")
    page.mouse.click(*point(page, "matrix", 2, 0))  # pins query 3 and focuses the canvas
    wait_view(page, query=3)
    for key, query in (("ArrowDown", 4), ("ArrowDown", 5), ("ArrowUp", 4), ("End", len(tokens)), ("Home", 1)):
        page.keyboard.press(key)
        wait_view(page, query=query)
    page.keyboard.press("8")
    wait_view(page, head=8)
    page.keyboard.press("9")  # there are 8 heads: nothing happens
    page.locator(f"{EXPLORER} select.head").select_option("7")  # the picker, for any head
    wait_view(page, head=7)
    for row in (3, 5):
        x, y = point(page, "matrix", row, 1)  # scrolled into view first: a wheel with Shift held scrolls sideways
        page.keyboard.down("Shift")
        page.mouse.click(x, y)
        page.keyboard.up("Shift")
    wait_view(page, query=1, set=[1, 4, 6])
    tip = hover(page, "bar", 0, 2)
    rows = trace.weights[6, [0, 3, 5], 2].astype(np.float64)  # head 7, queries 1, 4 and 6, key 3
    shown = dict(re.findall(r"(mean over 3 queries|sum) = ([0-9.e-]+)", tip["text"]))
    assert float(shown["mean over 3 queries"]) == pytest.approx(rows.mean(), rel=1e-5), tip["text"]
    assert float(shown["sum"]) == pytest.approx(rows.sum(), rel=1e-5), tip["text"]
    screenshot(page, "explorer-set-of-queries")
    page.keyboard.press("Escape")
    wait_view(page, set=[])
    # Focus is visible: the canvas, reached by the keyboard, has an outline.
    page.locator(f"{EXPLORER} .stages button").first.focus()
    for _ in range(12):
        page.keyboard.press("Tab")
        if page.evaluate("() => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]"
                         ".some(h => h.shadowRoot?.activeElement?.matches('canvas.plot'))"):
            break
    outline = page.locator(f"{EXPLORER} canvas.plot").evaluate("c => getComputedStyle(c).outlineStyle")
    assert outline == "solid"


def text_of(model, tokens: int) -> str:
    """The longest start of a paragraph that `model` reads as `tokens` tokens (special tokens too)."""
    words = (" ".join(["When a student reads a sentence, every word is understood in the light of the words around it,"
                       " and the model does the same with numbers."] * 12)).split()
    return next(text for end in range(len(words), 0, -1)
                if len(model.tokenize(text := " ".join(words[:end])).tokens) == tokens)


def test_a_trained_models_layers_change_in_the_browser(server, open_page, minilm, minilm_run):
    # 100 tokens: about 1.4 MB a layer, 6 layers too many for one payload (4 MiB), so each layer comes in a carrier
    # of its own (each over hold_over: held back until released).
    text = text_of(minilm, 100)
    page, sock = open_page(f"{server}/attention?model=all-MiniLM-L6-v2&head=4&query=9&ask=true&"
                           f"text={urllib.request.quote(text)}", hold_over=1_000_000, drawn=False)
    # The carriers held back: the explorer says it is loading the layer, and shows no matrix (nothing to hover).
    expect(page.locator(f"{EXPLORER} .status")).to_have_text("Loading layer 1…")
    assert page.locator(EXPLORER).get_attribute("data-loading") == "true"
    assert page.locator(f"{EXPLORER} canvas.plot").get_attribute("data-regions") == "[]"
    sock.release()
    page.wait_for_function(f"() => ({ROOT_JS}).dataset.layers === '1 2 3 4 5 6'", timeout=LOAD_MS)
    settle(page)
    assert state(page)["loading"] == "false" and state(page)["view"]["layer"] == 1
    before = state(page)
    start = len(sock.received)
    sock.hold = True  # the server cannot answer: layer 5 is drawn from its carrier, already in the browser
    page.locator(f"{EXPLORER} select.layer").select_option("5")
    wait_view(page, layer=5, head=4)
    assert state(page)["loading"] == "false" and state(page)["draws"] == before["draws"] + 1
    run = minilm_run(text)
    tokens, trace = run.tokens, run.layers[4]
    for row, col in ((8, 3), (2, 95), (80, 60)):  # the engine's own float32, layer 5, head 4
        tip = hover(page, "matrix", row, col)
        q, k = int(tip["query"]) - 1, int(tip["key"]) - 1  # cells of 3 px: the pointer's, or its neighbour's
        assert abs(q - row) <= 1 and abs(k - col) <= 1, (row, col, tip)
        assert f"query {q + 1} “{tokens[q]}” → key {k + 1} “{tokens[k]}”" in tip["text"]
        assert np.float32(tip["value"]) == trace.weights[3, q, k], (q, k, tip)
    deadline = time.monotonic() + CHANGE_MS / 1000
    while not sock.held and time.monotonic() < deadline:  # the server's answer to the state, held
        page.wait_for_timeout(50)
    assert sock.held, "the state went to the server, which answered (held here until now)"
    sock.release()
    settle(page)
    page.wait_for_timeout(500)
    assert state(page)["draws"] == before["draws"] + 1, "the sync redrew nothing"
    synced = sock.since(start)
    assert max(map(len, synced)) < 100_000, "no carrier (1.5 MB) nor the explorer's data sent again"
    assert not any(before["payload"].encode() in m for m in synced)
    assert parse_qs(urlparse(page.url).query)["layer"] == ["5"], page.url
    expect(page.locator('[data-testid="stSidebar"]').get_by_role("combobox", name="Layer")).to_have_value("5")
    screenshot(page, "explorer-minilm-100-layer5")


def test_user_text_stays_text_and_the_explorer_saves_svg_png_and_a_web_page(server, open_page, context, tmp_path):
    text = "<img src=x onerror=alert(1)> & <b>bold</b>"
    page, _ = open_page(f"{server}/attention?kv_heads=2&text={urllib.request.quote(text)}")  # 8 heads, 2 K/V groups
    tokens = mc.tokenize(text)
    assert page.locator(f"{EXPLORER} img, {EXPLORER} b").count() == 0
    expect(page.locator(f"{EXPLORER} .query-name")).to_have_text(f"1 “{tokens[0]}”")
    tip = hover(page, "matrix", 0, 1)
    assert f"“{tokens[0]}” → key 2 “{tokens[1]}”" in tip["text"]
    with page.expect_download() as download:
        page.locator(f"{EXPLORER} button.svg").click()
    svg = Path(download.value.path()).read_text()
    assert download.value.suggested_filename == "attention_head1_weights.svg"
    assert svg.startswith("<svg") and "&lt;" in svg and "<img" not in svg
    # a group is its row of panels, and every panel name is in the text colour, never its K/V group's head colour
    names = re.findall(r'fill="([^"]+)"[^>]*>(head \d+(?: \(K/V \d+\))?)</text>', svg)
    assert len(names) == 8 and {fill for fill, _ in names} == {LIGHT.text}, names
    with page.expect_download() as download:
        page.locator(f"{EXPLORER} button.png").click()
    assert Path(download.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The whole explorer as one web page: it opens from the file with nothing fetched, at the same view, the same
    # numbers under the pointer, and the user's text still text.
    with page.expect_download() as download:
        page.get_by_role("button", name="Save the explorer as a web page").click()
    assert download.value.suggested_filename == "attention_explorer.html"
    download.value.save_as(saved := tmp_path / "attention_explorer.html")
    offline = open_saved(context, saved)
    assert json.loads(offline.locator(EXPLORER).get_attribute("data-view")) == state(page)["view"]
    assert offline.locator("img, b").count() == 0
    expect(offline.locator(f"{EXPLORER} .query-name")).to_have_text(f"1 “{tokens[0]}”")
    assert hover(offline, "matrix", 0, 1) == tip
    offline.close()


def open_saved(context, path: Path):
    """A saved explorer page opened from its file, drawn, which fetched nothing and raised no error."""
    page, errors, fetched = context.new_page(), [], []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("request", lambda request: fetched.append(request.url))
    page.goto(path.as_uri(), timeout=LOAD_MS)
    page.wait_for_function("() => Number(document.querySelector('.mha-explorer')?.dataset.draws) > 0", timeout=LOAD_MS)
    assert not errors and all(url.startswith(("file:", "data:", "blob:")) for url in fetched), (errors, fetched)
    return page


def test_a_saved_page_holds_the_layers_it_names_and_draws_them_without_a_server(context, minilm, minilm_run,
                                                                               tmp_path):
    # A trained model's layers 2 and 3 (as the app saves the layers nearest the one on view, when not all fit).
    run, scale = minilm_run("The keys to the cabinet are on the table."), minilm.config.softmax_scale
    frame = build_frame(run.layers[0], run.tokens, carried={layer: f"layer{layer}" for layer in range(1, 7)},
                        scale=scale)
    carriers = [build_layer(run.layers[layer - 1], layer, scale=scale, name=f"layer{layer}",
                            weights=minilm.layer_weights[layer - 1].attention) for layer in (3, 2)]
    (path := tmp_path / "explorer.html").write_text(
        standalone_page(frame, carriers, {"layer": 3, "head": 4, "query": 2, "stage": "weights"}, "MiniLM"))
    page = open_saved(context, path)
    assert json.loads(page.locator(EXPLORER).get_attribute("data-view")) == \
        {"layer": 3, "head": 4, "query": 2, "stage": "weights", "set": []}
    options = page.locator(f"{EXPLORER} select.layer option")
    assert options.evaluate_all("os => os.filter(o => o.disabled).map(o => o.value)") == ["1", "4", "5", "6"]
    for layer in (3, 2):
        if layer != 3:
            page.locator(f"{EXPLORER} select.layer").select_option(str(layer))
            page.wait_for_function(f"() => JSON.parse(document.querySelector('.mha-explorer').dataset.view).layer "
                                   f"=== {layer}")
        tip = hover(page, "matrix", 5, 1)  # the engine's own float32: layer, head 4, query 6, key 2
        assert np.float32(tip["value"]) == run.layers[layer - 1].weights[3, 5, 1], (layer, tip)
    page.close()


def test_the_contributions_stage_shows_what_each_key_adds_before_the_server_answers(server, open_page):
    tokens, trace, w = default_trace(weights=True)
    shares = contribution_shares(mc.contributions(trace, w))                        # (h, n, m), float64
    page, sock = open_page(f"{server}/attention?head=2&query=7")
    draws = state(page)["draws"]
    sock.hold = True  # the server cannot answer: everything below is drawn from the data the browser has
    page.locator(f"{EXPLORER} .stages button[data-stage=contributions]").click()
    wait_view(page, stage="contributions")
    assert state(page)["draws"] == draws + 1
    for q, k in ((6, 2), (0, 0), (10, 5)):  # the browser's share (weight x size / row sum) is mha_core's
        tip = hover(page, "matrix", q, k)
        assert f"query {q + 1} “{tokens[q]}” → key {k + 1} “{tokens[k]}”" in tip["text"]
        assert "contribution share" in tip["text"] and "weight α" in tip["text"]
        assert float(tip["value"]) == pytest.approx(shares[1, q, k], rel=1e-12, abs=0), (q, k, tip)
    assert "contribution share" in hover(page, "grid", 2, 3)["text"], "the grid shows shares too"
    page.locator(f"{EXPLORER} .tip").evaluate("t => { t.hidden = true; }")
    bar = page.locator(f"{EXPLORER} .tip")
    page.mouse.move(*point(page, "bar", 0, 4))
    expect(bar).to_be_visible()
    assert float(bar.get_attribute("data-value")) == pytest.approx(shares[1, 6, 4], rel=1e-12, abs=0)
    assert np.float32(bar.get_attribute("data-weight")) == trace.weights[1, 6, 4], "its weight, beside it"
    screenshot(page, "explorer-contributions")
    sock.release()
    settle(page)
    assert parse_qs(urlparse(page.url).query)["stage"] == ["contributions"], page.url
    fresh, _ = open_page(page.url)
    assert state(fresh)["view"]["stage"] == "contributions"


def test_a_click_on_a_query_in_the_plane_chooses_it_for_the_explorer_and_the_link(server, open_page):
    page, _ = open_page(f"{server}/attention?query=8")
    page.get_by_role("tab", name="Queries and keys").click()
    settle(page)
    chart = page.locator('[data-testid="stPlotlyChart"]').filter(has_text="queries and keys in the plane").first
    chart.scroll_into_view_if_needed()
    queries = chart.locator(".scatterlayer .trace").nth(0).locator("path.point")  # the queries (●), in token order
    queries.nth(2).click(force=True)
    wait_view(page, query=3)
    settle(page)
    assert parse_qs(urlparse(page.url).query)["query"] == ["3"], page.url


def lines(page) -> dict:
    """What the lines view drew (explorer.js linesSummary): count, heads, queries, keys (1-based), the strongest."""
    return json.loads(page.locator(f"{EXPLORER} canvas.plot").get_attribute("data-lines"))


def wait_lines(page, **wanted) -> dict:
    page.wait_for_function(
        f"""wanted => {{ const c = ({ROOT_JS})?.querySelector('canvas.plot');
             if (!c || !c.dataset.lines) return false;
             const d = JSON.parse(c.dataset.lines);
             return Object.entries(wanted).every(([k, x]) => JSON.stringify(d[k]) === JSON.stringify(x)); }}""",
        arg=wanted, timeout=CHANGE_MS)
    return lines(page)


def test_the_lines_view_draws_a_line_per_pair_at_its_weight_and_a_hover_isolates_a_token(server, open_page):
    tokens, trace = default_trace(causal=True)
    n = len(tokens)
    page, _ = open_page(f"{server}/attention?causal=true")
    heatmap = page.locator(f"{EXPLORER} .views button[data-display=heatmap]")
    assert heatmap.get_attribute("aria-pressed") == "true"
    heatmap.focus()  # the toggle is reached by the keyboard
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => ({ROOT_JS})?.dataset.display === 'lines'", timeout=CHANGE_MS)
    # Head 1: a line for each open pair (the causal mask leaves n(n+1)/2), the strongest at exactly its weight.
    drawn = wait_lines(page, heads=[1])
    assert drawn["count"] == n * (n + 1) // 2
    q, k = np.unravel_index(np.argmax(trace.weights[0]), (n, n))
    assert (drawn["strongest"]["query"], drawn["strongest"]["key"]) == (q + 1, k + 1)
    assert drawn["strongest"]["opacity"] == float(trace.weights[0, q, k])
    screenshot(page, "explorer-lines")
    # The pointer on query 4 leaves its 4 lines; on key 2, the n - 1 queries that may see it.
    page.mouse.move(*point(page, "queries", 3, 0))
    assert wait_lines(page, queries=[4])["keys"] == [1, 2, 3, 4]
    page.mouse.move(*point(page, "keys", 1, 0))
    assert wait_lines(page, keys=[2])["count"] == n - 1
    screenshot(page, "explorer-lines-hover")
    # Another head: a click on its square (and the view follows); shift-click adds a head beside it.
    page.mouse.click(*point(page, "heads", 0, 2))
    wait_view(page, head=3)
    page.mouse.move(10, 10)
    drawn = wait_lines(page, heads=[3])
    q, k = np.unravel_index(np.argmax(trace.weights[2]), (n, n))
    assert drawn["strongest"]["opacity"] == float(trace.weights[2, q, k])
    x, y = point(page, "heads", 0, 4)
    page.keyboard.down("Shift")
    page.mouse.click(x, y)
    page.keyboard.up("Shift")
    page.mouse.move(10, 10)
    assert wait_lines(page, heads=[3, 5])["count"] == n * (n + 1)
    screenshot(page, "explorer-lines-two-heads")
    # Saved as the screen shows it: an SVG line for each line drawn, each at its opacity; a PNG.
    with page.expect_download() as download:
        page.locator(f"{EXPLORER} button.svg").click()
    assert download.value.suggested_filename == "attention_head3_weights_lines.svg"
    opacities = re.findall(r'<line [^>]*stroke-opacity="([0-9.]+)"', Path(download.value.path()).read_text())
    assert len(opacities) == n * (n + 1) and max(map(float, opacities)) == round(float(trace.weights[[2, 4]].max()), 4)
    with page.expect_download() as download:
        page.locator(f"{EXPLORER} button.png").click()
    assert Path(download.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The heatmap again: no lines.
    heatmap.click()
    page.wait_for_function(f"() => ({ROOT_JS})?.dataset.display === 'heatmap'", timeout=CHANGE_MS)
    assert page.locator(f"{EXPLORER} canvas.plot").get_attribute("data-lines") is None
