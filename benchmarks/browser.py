"""How fast the app feels in a real browser: every speed target (and the bytes of a rerun at any n), cold start, and
two references measured in the same run, with PASS or MISS for each target.

Run from the repository root:  python -m benchmarks.browser  [--rows default,n2048,...] [--quick]
                                 [--loads 5] [--changes 6] [--starts 3] [--no-profile] [--set runner.X=Y ...]
(--set passes a Streamlit config option to the app's server, to try a setting without editing .streamlit/config.toml;
--rows picks some of: default, n64, n512, n2048, minilm, minilm64, smollm2, minilm-model, cold, floor, bertviz.)
The whole run takes about 20 minutes on 2 quiet cores and stops after --max-minutes (default 40) in any case.

Starts `streamlit run app.py` on a free loopback port (within MHA_PORTS, e.g. 8680-8699, when set) and drives Debian's
headless Chromium (/usr/bin/chromium) through Playwright. Every time is taken inside the page with performance.now(),
checked on every animation frame (so the resolution is one frame, about 16 ms), and reported as median / min / max.
Every wait has a time limit. At the end, a table of the targets: each with its median, the reference it is judged
against where there is one (the bare-Streamlit floor, BertViz), and PASS (median within it) or MISS.

The cases: the default example (a sentence of 11 tokens, d_model 128, h 8) and random inputs of n = 64 (d_model 128,
h 8), n = 512 (d_model 768, h 12) and n = 2048 (d_model 1024, h 16) on the attention page; all-MiniLM-L6-v2 on texts
of 64 and 150 tokens, and SmolLM2-135M-Instruct on 150 tokens, on the attention page (and MiniLM's model view). The
texts are cut from one paragraph to exactly that many tokens by the model's own tokenizer (special tokens included).

What is measured
- first load: a fresh browser context (new Streamlit session, empty HTTP cache) opens the case's page.
  "ready" = navigation start -> the first animation frame from which the app stays idle for 500 ms: the script has
  finished (Streamlit's data-test-script-state = notRunning, websocket CONNECTED), no element is stale or still
  loading (stSkeleton), no spinner or running indicator, every plotly chart on the page drawn, and the page shows the
  case's settings. On step 2 a fresh session first sees the prediction question: its main figure, the
  attention explorer, waits for an answer. So "ready" is that page as a new student gets it, and "main figure" =
  navigation start -> the explorer drawn and the app idle (500 ms), with "Reveal the answer" clicked in the page as
  soon as it can be (the app idle, the button there): the first drawn view, compared with BertViz's. "first figure"
  = the first frame in which a plotly chart or the explorer has drawn. The warm-up load (first session for these
  settings: imports, the model, cold caches) is in the notes and left out of the statistics.
- change (sidebar): the sidebar selectbox ("Heads h", or "Layer" with a trained model) is opened, then an option is
  clicked, as a user does. The clock starts at the option's pointerdown and stops at the first frame in which the
  page shows the new value (the explorer drawn with the new number of heads; or "layer L of 6" in the caption, and on
  the model view the large grid titled "Layer L") and the app is idle as above; the state must then hold for 300 ms
  (not counted). h alternates between two values and the layer cycles 1 -> 2 -> 3 -> 1, so the first changes compute
  a new example and the later ones come from the caches (every change is in the notes). Each change is split in two
  with Chromium's own network timestamps (DevTools protocol): "server" = the websocket frame with the rerun request
  leaves the browser -> the last frame of the rerun arrives; "browser" = the rest. "bytes per rerun" = the websocket
  payload received during the change; it passes only if every rerun stays within 2 MB.
- explorer: in the attention explorer, a head key (2, 1, ...), a click on a query row, a stage button and,
  on the trained models, its layer picker: from the key or pointer press (as the page sees it) to the first frame in
  which the explorer has drawn the new view. The server is not waited for: these views are answered in the browser
  (a layer whose carrier has not arrived, or that comes from the server, is waited for; the changes start once the
  page is idle); between two changes the state sync that follows is let finish, and its websocket bytes are counted
  ("sync bytes", and apart for a layer change), as are the bytes received from navigation start until the page was
  idle, every layer sent with it in the browser (the first load, "Reveal" clicked at once).
- cold start: `streamlit run app.py` is launched (a fresh server each time) and the browser, already running, opens
  the address it prints as soon as the server answers: launch -> first figure, and -> ready (overview page).
- floor (the reference for our stack): the same cold start, a first load and a rerun of a bare Streamlit page with
  one plotly heatmap and one selectbox, with the app's .streamlit/config.toml. First loads are judged against
  1.25 x its first load.
- BertViz 1.4.1 (the reference tool, optional: `pip install -e ".[bench]"`, and npm): head_view (its default: layer
  1, all 12 heads) on the attention weights of our engine's run of all-MiniLM-L6-v2 on the same texts, served from a
  local HTTP server; its scripts (require.js 2.3.6, d3 5.7.0, jQuery, which BertViz loads from a CDN) come from the
  npm registry once (`npm pack`, kept in ~/.cache/mha-bench) and are answered locally. "drawn" = navigation start ->
  the first frame in which every head's lines are in the SVG (stable for 500 ms); "layer change" = the layer <select>
  changed (its change event) -> the frame in which the new layer is drawn. Ours: the main figure's first load, and
  the explorer's layer change, on the same text.
- profile (unless --no-profile): for the default and n=512 cases, the same rerun without a browser (streamlit.testing
  AppTest, in this process, the question answered): its median, and the functions of the app and of mha_core that
  take the most time in it (cProfile, cumulative, per rerun).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import http.server
import json
import logging
import os
import platform
import pstats
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 800}
LOAD_TIMEOUT_MS = 90_000
CHANGE_TIMEOUT_MS = 60_000
MINILM = "all-MiniLM-L6-v2"
SMOLLM2 = "SmolLM2-135M-Instruct"
MAX_RERUN_BYTES = 2_000_000  # bytes sent per rerun <= 2 MB at any n
FLOOR_FACTOR = 1.25          # a first load within 1.25 x the bare-Streamlit floor's, measured in this run
EXPLORER_TARGET = 0.1        # head, query, stage (and a MiniLM layer) <= 100 ms, click to drawn
REVEAL = "Reveal the answer"  # the prediction question's button (mha_app.ui.questions.predict)

# What "the page shows value v" means, as a JS expression with {v}; window.__idle() is always part of it.
HEADS_SHOWN = "window.__idle() && window.__heads({v})"
LAYER_SHOWN = "window.__idle() && window.__heads({h}) && window.__says('layer {v} of {layers}')"
MODEL_VIEW_LAYER_SHOWN = "window.__idle() && window.__says('layer {v} of 6') && window.__titled('Layer {v}: all 12')"
QUESTION_SHOWN = "window.__idle() && window.__asks()"


@dataclass(frozen=True)
class Case:
    """One case: a page and its settings; a sidebar selectbox changed on it (control), the explorer's changes, and
    the targets (seconds, None for no target) of each."""

    key: str                  # the name --rows takes
    name: str
    page: str                 # the page's url_path
    params: dict
    control: str | None       # the sidebar selectbox changed ("Heads h", "Layer"), or None
    values: tuple             # values[0] is in the URL; the sidebar changes cycle through the others
    shows: str                # JS expression: the page shows value {v} of the control
    target: float | None      # median sidebar change, s
    model: str = ""           # a trained model's name: the text is cut to `tokens` of its tokens
    tokens: int = 0
    explorer: bool = False    # head, query and stage in the explorer (attention page)
    layers: tuple = ()        # the explorer's layer picker cycles through these (from layers[0], the URL's)
    layer_target: float | None = None
    load_vs_floor: bool = False  # its first load is judged against FLOOR_FACTOR x the floor
    first_load: bool = False  # its first loads are measured (always with load_vs_floor)

    def shown(self, v) -> str:
        return self.shows.format(v=v)


def _layer_shown(heads: int, layers: int) -> str:
    return LAYER_SHOWN.replace("{h}", str(heads)).replace("{layers}", str(layers))


CASES = (
    Case("default", "default example (11 tokens, d_model 128)", "attention", {}, "Heads h", (8, 4), HEADS_SHOWN, 0.3,
         explorer=True, load_vs_floor=True),
    Case("n64", "random n=64, d_model 128", "attention", {"input": "random", "n": "64"}, None, (8,), HEADS_SHOWN,
         None, explorer=True),
    Case("n512", "random n=512, d_model 768", "attention", {"input": "random", "n": "512", "d_model": "768", "h": "12"},
         "Heads h", (12, 6), HEADS_SHOWN, 1.0, explorer=True),
    Case("n2048", "random n=2048, d_model 1024", "attention",
         {"input": "random", "n": "2048", "d_model": "1024", "h": "16"}, "Heads h", (16, 8), HEADS_SHOWN, 2.0,
         explorer=True),
    Case("minilm", f"{MINILM}, 150 tokens", "attention", {"model": MINILM, "layer": "1"}, "Layer", (1, 2, 3),
         _layer_shown(12, 6), 0.5, model=MINILM, tokens=150, explorer=True, layers=(1, 2, 3),
         layer_target=EXPLORER_TARGET, load_vs_floor=True),
    Case("minilm64", f"{MINILM}, 64 tokens", "attention", {"model": MINILM, "layer": "1"}, None, (1,),
         _layer_shown(12, 6), None, model=MINILM, tokens=64, layers=(1, 2, 3), layer_target=EXPLORER_TARGET,
         first_load=True),  # BertViz's first drawn view
    Case("smollm2", f"{SMOLLM2}, 150 tokens", "attention", {"model": SMOLLM2, "layer": "1"}, None, (1,),
         _layer_shown(9, 30), None, model=SMOLLM2, tokens=150, layers=(1, 2, 3), layer_target=0.5),
    Case("minilm-model", f"{MINILM}, 150 tokens, model view", "model_view", {"model": MINILM, "layer": "1"}, "Layer",
         (1, 2, 3), MODEL_VIEW_LAYER_SHOWN, 1.0, model=MINILM, tokens=150, first_load=True),
)
REFERENCES = ("cold", "floor", "bertviz")

# Cut to the wanted number of tokens (the tokenizer decides where): long enough for 256.
PARAGRAPH = (
    "When a student reads a sentence, every word is understood in the light of the words around it. A transformer "
    "does the same with attention: each token asks a question, every other token offers an answer, and the weights "
    "of a softmax decide how much of each answer flows into the new vector of the token that asked. One head learns "
    "one way of asking, so the model runs several heads side by side, each in a smaller space, and joins what they "
    "found before a last projection mixes it back into the width of the model. Some heads look at the previous "
    "word, some at the next one, some at the full stop or at the separator at the end, and a few follow the grammar "
    "of the sentence from a verb to its subject or from a pronoun back to the noun it stands for. Nobody wrote these "
    "rules down: they appeared while the model was trained to fill in missing words in millions of sentences from "
    "books, articles and web pages. Looking at the weights of every head, layer after layer, is one of the simplest "
    "ways to see what such a model pays attention to, and also a way to see how much of that picture changes when a "
    "single head is switched off, when the sentence grows longer, or when a word in the middle is replaced by "
    "another one that means nearly the same thing but sits differently in the sentence. Researchers found that many "
    "heads can be removed with little loss, while a few carry most of the work that the model needs to do."
)

# Injected before any page script: the checks used below, and the time of the first drawn figure.
PROBE = r"""
(() => {
  const charts = () => [...document.querySelectorAll('.js-plotly-plot')];
  const titleOf = el => (el.layout && el.layout.title && el.layout.title.text) || '';
  // The attention explorer's root, inside its component's shadow root (it draws the head grid on a canvas).
  window.__explorer = () => [...document.querySelectorAll('[data-testid="stBidiComponentIsolated"]')]
    .map(h => h.shadowRoot && h.shadowRoot.querySelector('.mha-explorer')).find(Boolean);
  window.__idle = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.dataset.testScriptState !== 'notRunning' || app.dataset.testConnectionState !== 'CONNECTED')
      return false;
    if (document.querySelector('[data-stale="true"], [data-testid="stSkeleton"], [data-testid="stSpinner"], '
                               + '[data-testid="stStatusWidgetRunningIcon"]')) return false;
    if (!document.querySelector('h1')) return false;
    const n = document.querySelectorAll('[data-testid="stPlotlyChart"]').length;
    return document.querySelectorAll('.js-plotly-plot .main-svg').length >= n;
  };
  window.__heads = n => { const e = window.__explorer();
                          return !!e && Number(e.dataset.heads) === n && Number(e.dataset.draws) > 0
                            && e.dataset.loading !== 'true'; };
  window.__says = text => [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
    .some(e => e.textContent.includes(text));
  window.__reveal = () => [...document.querySelectorAll('button')].find(b => b.textContent.trim() === 'REVEAL');
  window.__asks = () => !!window.__reveal();
  window.__titled = text => charts().some(e => titleOf(e).includes(text) && e.querySelector('.main-svg'));
  // BertViz's head_view: the <select id="layer"> shows layer l (0-based) and the SVG holds h x n x n lines.
  window.__bertviz = (l, h, n) => {
    const select = document.querySelector('#layer'), lines = document.querySelector('#vis #attention');
    if (!select || select.value !== String(l) || !lines || lines.childElementCount !== h) return false;
    const last = lines.lastElementChild;
    return last.childElementCount === n && last.lastElementChild.childElementCount === n;
  };
  // Our explorer saved as a web page (components/explorer/standalone.py): drawn, at layer l (1-based), nothing loading.
  window.__saved = l => {
    const e = document.querySelector('.mha-explorer');
    return !!e && Number(e.dataset.draws) > 0 && e.dataset.loading !== 'true' && JSON.parse(e.dataset.view).layer === l;
  };
  // Calls done(t) once cond() has held from frame time t for holdMs; a frame where it fails starts over.
  window.__watch = (cond, holdMs, done) => {
    let since = null;
    const frame = () => {
      const now = performance.now();
      if (cond()) { if (since === null) since = now; if (now - since >= holdMs) { done(since); return; } }
      else since = null;
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  };
  window.__firstFigure = null;
  window.__watch(() => !!document.querySelector('.js-plotly-plot .main-svg')
                       || Number(window.__explorer()?.dataset.draws) > 0, 0, t => { window.__firstFigure = t; });
})();
""".replace("REVEAL", REVEAL)

# Waits until `expr` has held for 500 ms. With reveal, clicks the prediction question's "Reveal the answer" as soon as
# the app is idle with the button on the page (once), as a student in a hurry would.
LOADED_JS = """([expr, reveal]) => {
  window.__loaded = null;
  const tick = () => {
    if (window.__loaded) return;
    if (window.__idle() && window.__asks()) { window.__reveal().click(); return; }
    requestAnimationFrame(tick);
  };
  if (reveal) requestAnimationFrame(tick);
  window.__watch(new Function('return ' + expr), 500,
    t => { window.__loaded = {firstFigure: window.__firstFigure, ready: t, origin: performance.timeOrigin}; });
}"""

# The explorer: starts the clock at the user's next key or pointer press (the page sees it as it enters the component)
# and stops it at the first frame in which the explorer has drawn again and shows `view` (its data-view, in part).
EXPLORER_ARM_JS = """view => {
  window.__change = null;
  const e = window.__explorer(), draws = Number(e.dataset.draws);
  const shows = () => { const v = JSON.parse(e.dataset.view);
                        return Object.entries(view).every(([k, x]) => v[k] === x); };
  const onEvent = () => {
    if (window.__change) return;
    window.__change = {t0: performance.now()};
    window.__watch(() => Number(e.dataset.draws) > draws && e.dataset.loading !== 'true' && shows(), 0,
                   t1 => { Object.assign(window.__change, {t1, done: true}); });
  };
  for (const type of ['keydown', 'pointerdown', 'change']) {  // a <select>'s change stays in the shadow root
    for (const target of [window, e]) {
      if (window.__onExplorer) target.removeEventListener(type, window.__onExplorer, {capture: true});
      target.addEventListener(type, onEvent, {capture: true});
    }
  }
  window.__onExplorer = onEvent;
}"""

# Starts the clock at the user's action: a pointerdown on a listed option (Streamlit's selectbox) or the change
# event of a native <select>; stops it once `expr` has held for 300 ms.
ARM_JS = """([expr, native]) => {
  window.__change = null;
  const cond = new Function('return ' + expr);
  const onEvent = e => {
    const onOption = native || e.composedPath().some(n => n.getAttribute && n.getAttribute('role') === 'option');
    if (!onOption || window.__change) return;
    window.__change = {t0: performance.now()};
    window.__watch(cond, 300, t1 => { Object.assign(window.__change, {t1, done: true}); });
  };
  for (const type of ['pointerdown', 'mousedown', 'change']) {
    if (window.__onEvent) window.removeEventListener(type, window.__onEvent, {capture: true});
    window.addEventListener(type, onEvent, {capture: true});
  }
  window.__onEvent = onEvent;
}"""


# --- server and browser -------------------------------------------------------------------------------------------

def free_port() -> int:
    """A free loopback port: within MHA_PORTS (e.g. 8620-8629) when it is set, else any."""
    span = os.environ.get("MHA_PORTS", "")
    for port in range(int(span.split("-")[0]), int(span.split("-")[1]) + 1) if "-" in span else [0]:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise RuntimeError(f"no free port in MHA_PORTS={span}")


@contextlib.contextmanager
def streamlit_server(options: dict[str, str] | None = None, start_timeout_s: float = 60):
    with streamlit_process(options, start_timeout_s) as (base, _):
        yield base


@contextlib.contextmanager
def streamlit_process(options: dict[str, str] | None = None, start_timeout_s: float = 60,
                      command: list[str] | None = None, cwd: Path = ROOT, env: dict[str, str] | None = None):
    """A Streamlit server on a free loopback port (`streamlit run app.py` unless `command` says otherwise);
    yields (base URL, process), and ends the process group afterwards."""
    port = free_port()
    log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"mha-bench-streamlit-{port}.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [*(command or [sys.executable, "-m", "streamlit", "run", "app.py"]), "--server.address", "127.0.0.1",
             "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false",
             *[arg for key, value in (options or {}).items() for arg in (f"--{key}", value)]],
            cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + start_timeout_s
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"streamlit exited with {proc.returncode}; see {log_path}")
                try:
                    with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2):
                        break
                except OSError as err:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"streamlit did not answer within {start_timeout_s} s; see {log_path}") \
                            from err
                    time.sleep(0.1)  # the cold start is timed from the launch: poll often
            yield base, proc
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


@contextlib.contextmanager
def _page(browser, setup=None):
    """A page in a fresh context (new session, empty HTTP cache) with the probe installed; setup(context) first."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        if setup:
            setup(context)
        context.add_init_script(PROBE)
        page = context.new_page()
        page.set_default_timeout(LOAD_TIMEOUT_MS)
        yield page
    finally:
        context.close()


def _open(page, url: str, ready: str, reveal: bool = False) -> dict:
    """Go to url and wait until `ready` (a JS expression) has held for 500 ms, with reveal clicking "Reveal the answer"
    at once; times in ms from navigation start."""
    page.goto(url, wait_until="commit", timeout=LOAD_TIMEOUT_MS)
    page.wait_for_function("() => typeof window.__watch === 'function'", timeout=LOAD_TIMEOUT_MS)
    page.evaluate(LOADED_JS, [ready, reveal])
    page.wait_for_function("() => window.__loaded", timeout=LOAD_TIMEOUT_MS, polling=100)
    return page.evaluate("window.__loaded")


def first_load(browser, url: str, ready: str, setup=None, reveal: bool = False) -> dict:
    """One first load in a fresh context: {firstFigure, ready} in ms from navigation start, origin (epoch ms)."""
    with _page(browser, setup) as page:
        return _open(page, url, ready, reveal)


def _websocket_frames(page) -> list[tuple[str, float, int]]:
    """A list that fills with (Sent or Received, Chromium's timestamp in s, payload bytes) of the page's websocket."""
    frames: list[tuple[str, float, int]] = []
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    for kind in ("Sent", "Received"):
        cdp.on(f"Network.webSocketFrame{kind}", lambda event, kind=kind: frames.append(
            (kind, event["timestamp"], len(event["response"]["payloadData"]) * 3 // 4)))
    return frames


def changes(browser, url: str, values: tuple, count: int, control: str = "Heads h", shows: str = HEADS_SHOWN,
            setup=None) -> list[dict]:
    """Change `control` `count` times, cycling through `values` from values[0] (the value in the URL), as a user:
    a Streamlit selectbox of the sidebar by its label (open it, click the option), or, for a control starting with
    "#", a native <select> by its id. Each change waits until `shows` (with {v}) holds. A prediction question on the
    page is answered first (Reveal), so that its figure shows.

    Besides the in-page time, the websocket frames are timed by Chromium's network layer (DevTools protocol), so the
    server's share does not depend on how busy the page's main thread is.
    """
    native = control.startswith(("#", "select"))
    with _page(browser, setup) as page:
        page.set_default_timeout(CHANGE_TIMEOUT_MS)
        frames = _websocket_frames(page)
        _open(page, url, shows.format(v=values[0]), reveal=not native)
        box = page.locator(control) if native else \
            page.get_by_test_id("stSidebar").get_by_role("combobox", name=control, exact=True)
        results = []
        for i in range(count):
            target = values[(i + 1) % len(values)]
            page.evaluate(ARM_JS, [shows.format(v=target), native])
            seen = len(frames)
            if native:
                box.select_option(str(target))
            else:
                # In the middle of the sidebar the option list opens fully in view: Playwright need not scroll, and
                # a scroll would close the list and send the click to whatever lies underneath.
                box.evaluate("e => e.scrollIntoView({block: 'center'})")
                box.click()
                option = page.get_by_role("option", name=str(target), exact=True)
                option.wait_for(state="visible")
                option.click()
            page.wait_for_function("() => window.__change && window.__change.done", timeout=CHANGE_TIMEOUT_MS,
                                   polling=50)
            change = page.evaluate("window.__change")
            total_s = (change["t1"] - change["t0"]) / 1000
            new = frames[seen:]
            sent = next((ts for kind, ts, _ in new if kind == "Sent"), None)
            replies = [(ts, size) for kind, ts, size in new
                       if kind == "Received" and sent is not None and sent <= ts <= sent + total_s]
            server_s = (replies[-1][0] - sent) if replies else float("nan")
            results.append({"total": total_s, "server": server_s, "browser": total_s - server_s,
                            "bytes": sum(size for _, size in replies), "to": target})
            if box.input_value() != str(target):
                raise RuntimeError(f"{control} shows {box.input_value()} after choosing {target}")
        return results


def explorer_changes(browser, url: str, count: int, ready: str, layers: tuple = (),
                     kinds: tuple = ("head", "query", "stage")) -> dict[str, list[float]]:
    """In the attention page's explorer, `count` times each of `kinds`: a head key (2, 1, ...), a click on a query row
    (rows 2 and 3 in turn), a stage button (raw scores, softmax weights) and, with `layers`, the layer picker
    (cycling from layers[0], the URL's): seconds from the key or pointer press to the first frame drawn with the new
    view. Each change waits for the state sync that follows (the app idle) before the next; "sync bytes" (and
    "layer sync bytes") hold what the websocket brought from the change's start until then, "load bytes" what it
    brought from navigation start until the page was idle (with the explorer drawn)."""
    with _page(browser) as page:
        page.set_default_timeout(CHANGE_TIMEOUT_MS)
        frames = _websocket_frames(page)
        _open(page, url, ready, reveal=True)  # idle: the layers sent with the page (their carriers) have arrived
        canvas = page.locator(".mha-explorer canvas.plot")
        canvas.focus()
        out = {kind: [] for kind in (*kinds, "layer", "sync bytes", "layer sync bytes")}
        out["load bytes"] = [sum(size for k, _, size in frames if k == "Received")]

        def timed(kind: str, act, view: dict) -> None:
            page.evaluate(EXPLORER_ARM_JS, view)
            seen = len(frames)
            act()
            page.wait_for_function("() => window.__change && window.__change.done", polling=50)
            change = page.evaluate("window.__change")
            page.wait_for_function("() => window.__idle()", polling=100)
            page.wait_for_timeout(300)  # the sync's rerun (after the explorer's 200 ms pause) is over too
            page.wait_for_function("() => window.__idle()", polling=100)
            out[kind].append((change["t1"] - change["t0"]) / 1000)
            out["layer sync bytes" if kind == "layer" else "sync bytes"].append(
                sum(size for k, _, size in frames[seen:] if k == "Received"))

        def row_point(row: int) -> tuple[float, float]:
            """Where query row `row` of the head's matrix is on the screen, scrolled first to the middle of the
            viewport: below Streamlit's sticky header, which would otherwise take the click (MiniLM's explorer
            starts under it once the page has scrolled to the explorer)."""
            region = next(r for r in json.loads(canvas.get_attribute("data-regions")) if r["kind"] == "matrix")
            for _ in range(12):
                box = canvas.bounding_box()
                x, y = box["x"] + region["x"] + region["w"] / 2, \
                    box["y"] + region["y"] + (row + 0.5) * region["h"] / region["rows"]
                if 120 <= y <= VIEWPORT["height"] - 60:
                    return x, y
                page.mouse.move(x, VIEWPORT["height"] / 2)
                page.mouse.wheel(0, y - VIEWPORT["height"] / 2)
                page.wait_for_timeout(150)
            raise RuntimeError(f"query row {row} of the explorer never came into view")

        stages = (("raw", "raw"), ("weights", "weights"))
        for i in range(count):
            if "head" in kinds:
                head = 2 - i % 2
                timed("head", lambda head=head: page.keyboard.press(str(head)), {"head": head})
            if "query" in kinds:
                row = 1 + i % 2  # another query each time (pooled: one in that block of queries)
                x, y = row_point(row)  # (not timed)
                timed("query", lambda x=x, y=y: page.mouse.click(x, y), {})
            if "stage" in kinds:
                button, stage = stages[i % 2]
                timed("stage", lambda button=button: page.locator(
                    f".mha-explorer .stages button[data-stage={button}]").click(), {"stage": stage})
            if layers:
                layer = layers[(i + 1) % len(layers)]
                timed("layer", lambda layer=layer: page.locator(".mha-explorer select.layer")
                      .select_option(str(layer)), {"layer": layer})
        return {kind: samples for kind, samples in out.items() if samples}


def cold_start(browser, ready: str, path: str = "", command: list[str] | None = None) -> dict:
    """Launch a fresh server, open its page once it answers: seconds from the launch to the server answering,
    to the first figure and to ready."""
    launched = time.time()
    with streamlit_process(command=command) as (base, _):
        up = time.time() - launched
        r = first_load(browser, f"{base}/{path}", ready)
    return {"up": up, "firstFigure": (r["origin"] + r["firstFigure"]) / 1000 - launched,
            "ready": (r["origin"] + r["ready"]) / 1000 - launched}


# --- the cases ----------------------------------------------------------------------------------------------------

@functools.cache
def model(name: str):
    from mha_core.pretrained import MODELS
    return MODELS[name].load()


def minilm():
    return model(MINILM)


@functools.cache
def text_of(name: str, tokens: int) -> str:
    """The longest start of PARAGRAPH that model `name` reads as exactly `tokens` tokens (special tokens too)."""
    words = PARAGRAPH.split()
    for end in range(len(words), 0, -1):
        text = " ".join(words[:end])
        if len(model(name).tokenize(text).tokens) == tokens:
            return text
    raise ValueError(f"no start of the paragraph has exactly {tokens} tokens for {name}")


def minilm_text(tokens: int) -> str:
    return text_of(MINILM, tokens)


def case_url(base: str, case: Case) -> str:
    params = {**case.params, **({"text": text_of(case.model, case.tokens)} if case.tokens else {})}
    return f"{base}/{case.page}?{urlencode(params)}" if params else f"{base}/{case.page}"


def case_ready(case: Case) -> str:
    """The page as a fresh session shows it: on step 2, the prediction question (its figure waits for an answer)."""
    return QUESTION_SHOWN if case.page == "attention" else case.shown(case.values[0])


def measure_case(browser, base: str, case: Case, loads: int, count: int, table: Table) -> None:
    url, ready, main = case_url(base, case), case_ready(case), case.shown(case.values[0])
    warm = first_load(browser, url, main, reveal=True)
    table.note(f"warm-up load, {case.name}: main figure {warm['ready']:.0f} ms (first session for these settings; "
               "not in the table)")
    if case.first_load or case.load_vs_floor:
        runs = [first_load(browser, url, ready) for _ in range(loads)]
        if case.page != "attention":
            table.add(f"first load, first figure: {case.name}", [r["firstFigure"] / 1000 for r in runs])
        table.add(f"first load, ready: {case.name}", [r["ready"] / 1000 for r in runs], key=("load", case.key))
    if (case.first_load or case.load_vs_floor) and case.page == "attention":
        runs = [first_load(browser, url, main, reveal=True) for _ in range(loads)]
        table.add(f"first load, main figure (Reveal at once): {case.name}", [r["ready"] / 1000 for r in runs],
                  key=("main", case.key))
    if case.control:
        runs = changes(browser, url, case.values, count, case.control, case.shows)
        steps = " <-> ".join(map(str, case.values)) if len(case.values) == 2 else \
            " -> ".join(map(str, (*case.values, case.values[0])))
        label = f"sidebar {case.control} {steps}: {case.name}"
        table.add(label, [r["total"] for r in runs], key=("control", case.key))
        table.add("  server: rerun request sent -> last reply frame", [r["server"] for r in runs])
        table.add("  browser: the rest (click handling, drawing)", [r["browser"] for r in runs])
        table.add("  bytes received per rerun", [r["bytes"] for r in runs], unit="MB", key=("bytes", case.key))
        table.note(f"{label}: each change " + ", ".join(f"{r['to']}: {r['total'] * 1000:.0f}" for r in runs)
                   + " ms (a value's first visit computes it)")
    if case.explorer or case.layers:
        times = explorer_changes(browser, url, count, main, case.layers,
                                 ("head", "query", "stage") if case.explorer else ())
        for what, samples in times.items():
            if what.endswith("bytes"):
                table.add({"sync bytes": "  explorer, sync after a head/query/stage change: bytes received",
                           "layer sync bytes": "  explorer, sync after a layer change: bytes received",
                           "load bytes": f"  first load (Reveal at once), bytes received: {case.name}"}
                          [what], samples, unit="MB")
                continue
            steps = " -> ".join(map(str, (*case.layers, case.layers[0]))) if what == "layer" else ""
            table.add(f"explorer {what}{' ' + steps if steps else ''}: {case.name}", samples,
                      key=("explorer", what, case.key))


def measure_cold(browser, starts: int, table: Table) -> None:
    runs = [cold_start(browser, "window.__idle()") for _ in range(starts)]
    table.add("cold start: streamlit run -> server answers", [r["up"] for r in runs])
    table.add("cold start: streamlit run -> first figure (overview)", [r["firstFigure"] for r in runs])
    table.add("cold start: streamlit run -> ready (overview)", [r["ready"] for r in runs])


FLOOR_APP = '''"""The floor of our stack: a bare Streamlit page with one plotly chart."""
import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.title("One chart")
n = st.sidebar.selectbox("Size", [64, 32])
z = np.random.default_rng(0).random((n, n))
st.plotly_chart(go.Figure(go.Heatmap(z=z), layout=dict(title=f"floor {n}")))
'''
FLOOR_SHOWS = "window.__idle() && window.__titled('floor {v}')"


def measure_floor(browser, starts: int, loads: int, count: int, table: Table) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "floor.py"
        script.write_text(FLOOR_APP)
        command = [sys.executable, "-m", "streamlit", "run", str(script)]  # from ROOT: the app's config.toml
        runs = [cold_start(browser, FLOOR_SHOWS.format(v=64), command=command) for _ in range(starts)]
        table.add("floor, cold start: streamlit run -> first figure", [r["firstFigure"] for r in runs])
        table.add("floor, cold start: streamlit run -> ready", [r["ready"] for r in runs])
        with streamlit_process(command=command) as (base, _):
            first_load(browser, base, FLOOR_SHOWS.format(v=64))  # warm-up
            runs = [first_load(browser, base, FLOOR_SHOWS.format(v=64)) for _ in range(loads)]
            table.add("floor, first load, ready", [r["ready"] / 1000 for r in runs], key=("floor",))
            runs = changes(browser, base, (64, 32), count, "Size", FLOOR_SHOWS)
            table.add("floor, rerun: Size 64 <-> 32", [r["total"] for r in runs])
            table.add("  bytes received per rerun", [r["bytes"] for r in runs], unit="MB")


# --- BertViz, the reference tool ----------------------------------------------------------------------------------

BERTVIZ_JS = {  # file name asked for by head_view -> (npm package, file in its tarball)
    "require.min.js": ("requirejs@2.3.6", "package/require.js"),
    "d3.min.js": ("d3@5.7.0", "package/dist/d3.min.js"),
    "jquery.min.js": ("jquery@2.1.0", "package/dist/jquery.min.js"),  # 2.0.0, BertViz's, is not on npm
}


def bertviz_scripts() -> dict[str, Path]:
    """BertViz's scripts, fetched once from the npm registry with `npm pack` into ~/.cache/mha-bench."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mha-bench" / "bertviz-js"
    cache.mkdir(parents=True, exist_ok=True)
    for name, (package, member) in BERTVIZ_JS.items():
        if (cache / name).exists():
            continue
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["npm", "pack", package, "--pack-destination", tmp], check=True, capture_output=True,
                           timeout=120)
            with tarfile.open(next(Path(tmp).glob("*.tgz"))) as tar:
                (cache / name).write_bytes(tar.extractfile(member).read())
    return {name: cache / name for name in BERTVIZ_JS}


def bertviz_html(tokens: int) -> tuple[str, int, int]:
    """head_view's page for our engine's all-MiniLM-L6-v2 run on the text of `tokens` tokens; (html, n, h)."""
    import torch
    from bertviz import head_view

    run = minilm().run(minilm_text(tokens))
    attention = [torch.from_numpy(trace.weights.copy())[None] for trace in run.layers]  # (1, h, n, n) per layer
    body = head_view(attention, list(run.tokens), html_action="return").data
    return f"<!doctype html><html><head><meta charset='utf-8'></head><body>{body}</body></html>", \
        len(run.tokens), attention[0].shape[1]


@contextlib.contextmanager
def static_server(folder: str):
    """A plain HTTP server for `folder` on a free loopback port, in a thread; yields its base URL."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), functools.partial(Quiet, directory=folder))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def measure_bertviz(browser, loads: int, count: int, table: Table) -> None:
    try:
        import bertviz  # noqa: F401
        scripts = bertviz_scripts()
    except (ImportError, OSError, subprocess.SubprocessError) as err:
        table.note(f"BertViz skipped: {err!r} (pip install -e '.[bench]'; npm for its scripts)")
        return

    def local_scripts(context):
        context.route("https://cdnjs.cloudflare.com/**",
                      lambda route: route.fulfill(path=str(scripts[route.request.url.rsplit("/", 1)[-1]]),
                                                  content_type="application/javascript"))

    with tempfile.TemporaryDirectory() as tmp, static_server(tmp) as base:
        for tokens in (64, 150):
            html, n, h = bertviz_html(tokens)
            (Path(tmp) / f"head_view_{tokens}.html").write_text(html)
            url, shows = f"{base}/head_view_{tokens}.html", f"window.__bertviz({{v}}, {h}, {n})"
            first_load(browser, url, shows.format(v=0), local_scripts)  # warm-up
            runs = [first_load(browser, url, shows.format(v=0), local_scripts) for _ in range(loads)]
            table.add(f"BertViz head_view, {tokens} tokens: first load, drawn", [r["ready"] / 1000 for r in runs],
                      key=("bertviz", "load", tokens))
            runs = changes(browser, url, (0, 1, 2), count, "#layer", shows, local_scripts)
            table.add(f"BertViz head_view, {tokens} tokens: layer 1 -> 2 -> 3", [r["total"] for r in runs],
                      key=("bertviz", "layer", tokens))
            table.note(f"BertViz head_view, {tokens} tokens: a page of {len(html.encode()) / 1e6:.1f} MB "
                       f"({h} heads x {n} x {n} lines per layer)")
            page = saved_explorer(tokens)
            (Path(tmp) / f"explorer_{tokens}.html").write_bytes(page)
            url, shows = f"{base}/explorer_{tokens}.html", "window.__saved({v})"
            first_load(browser, url, shows.format(v=1))  # warm-up
            runs = [first_load(browser, url, shows.format(v=1)) for _ in range(loads)]
            table.add(f"ours, saved as a web page, {tokens} tokens: first load, drawn",
                      [r["ready"] / 1000 for r in runs], key=("saved", "load", tokens))
            runs = changes(browser, url, (1, 2, 3), count, "select.layer", shows)
            table.add(f"ours, saved as a web page, {tokens} tokens: layer 1 -> 2 -> 3", [r["total"] for r in runs],
                      key=("saved", "layer", tokens))
            table.note(f"ours, saved as a web page, {tokens} tokens: {len(page) / 1e6:.1f} MB")


def saved_explorer(tokens: int) -> bytes:
    """The attention explorer saved as one web page ("Save the explorer as a web page") for all-MiniLM-L6-v2 on the
    text of `tokens` tokens, at layer 1, head 1, query 1: what BertViz's head_view is, a page with no server."""
    from mha_app.components.explorer import explorer_payload, web_page
    from mha_app.state.settings import Spec

    logging.getLogger("streamlit").setLevel(logging.ERROR)  # its caches warn that no server runs: none is needed

    data, carriers = explorer_payload(Spec(model=MINILM, text=minilm_text(tokens)), 1)
    view = {"layer": 1, "head": 1, "query": 1, "stage": "weights"}
    return web_page(data, carriers, view, f"{MINILM}, {tokens} tokens")


# --- report -------------------------------------------------------------------------------------------------------

UNITS = {"s": (1, "{:7.2f}"), "MB": (1e-6, "{:7.3f}")}


@dataclass
class Table:
    rows: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    samples: dict[tuple, list[float]] = field(default_factory=dict)  # by key, for the targets

    HEADER = f"{'measurement':<72} {'runs':>4} {'median':>7} {'min':>7} {'max':>7} {'unit':>4}"

    def add(self, name: str, samples: list[float], unit: str = "s", key: tuple | None = None) -> None:
        scale, fmt = UNITS[unit]
        med = statistics.median(samples)
        self.rows.append(f"{name:<72} {len(samples):>4} {fmt.format(med * scale)} {fmt.format(min(samples) * scale)} "
                         f"{fmt.format(max(samples) * scale)} {unit:>4}")
        print(self.rows[-1], flush=True)  # as it comes: a long run shows its progress
        if key is not None:
            self.samples[key] = samples

    def note(self, text: str) -> None:
        self.notes.append(text)

    def median(self, key: tuple) -> float | None:
        return statistics.median(self.samples[key]) if key in self.samples else None


def targets(table: Table) -> list[str]:
    """Every target that this run measured: the median, its reference, PASS or MISS."""
    lines = [f"{'target':<74} {'median':>8} {'limit':>8}  result  reference"]

    def row(what: str, value: float | None, limit: float | None, reference: str = "", unit: str = "s") -> None:
        if value is None or limit is None:
            return
        shown = (lambda v: f"{v:.3f} s") if unit == "s" else (lambda v: f"{v / 1e6:.2f} MB")
        lines.append(f"{what:<74} {shown(value):>8} {shown(limit):>8}  {'PASS' if value <= limit else 'MISS':<6}  "
                     f"{reference}")

    med = table.median
    floor = med(("floor",))
    for case in CASES:
        for kind in ("head", "query", "stage"):
            row(f"explorer {kind}, click to drawn: {case.name}", med(("explorer", kind, case.key)),
                EXPLORER_TARGET)
        row(f"explorer layer, click to drawn: {case.name}", med(("explorer", "layer", case.key)), case.layer_target)
        row(f"sidebar {case.control}, click to drawn: {case.name}", med(("control", case.key)), case.target)
        if ("bytes", case.key) in table.samples:  # every rerun, not the median
            row(f"bytes of every sidebar rerun: {case.name}", max(table.samples[("bytes", case.key)]),
                MAX_RERUN_BYTES, unit="MB")
        if case.load_vs_floor and floor is not None:
            reference = f"{FLOOR_FACTOR} x floor ({floor:.3f} s)"
            row(f"first load, ready (the page a new student sees): {case.name}", med(("load", case.key)),
                FLOOR_FACTOR * floor, reference)
            row(f"    first load, main figure (Reveal at once): {case.name}", med(("main", case.key)),
                FLOOR_FACTOR * floor, reference)
    for tokens, key in ((64, "minilm64"), (150, "minilm")):
        for ours, theirs, what in ((("main", key), ("bertviz", "load", tokens), "first drawn view"),
                                   (("explorer", "layer", key), ("bertviz", "layer", tokens), "layer change")):
            bertviz = med(theirs)
            row(f"faster than BertViz 1.4.1 head_view, {tokens} tokens: {what}", med(ours), bertviz,
                f"BertViz {bertviz:.3f} s" if bertviz is not None else "")
        for kind, what in (("load", "first drawn view"), ("layer", "layer change")):  # like for like: two pages
            bertviz = med(("bertviz", kind, tokens))
            row(f"19: faster than BertViz, both pages with no server, {tokens} tokens: {what}",
                med(("saved", kind, tokens)), bertviz, f"BertViz {bertviz:.3f} s" if bertviz is not None else "")
    return lines


def browser_benchmark(rows: list[str], loads: int, count: int, starts: int,
                      options: dict[str, str] | None = None) -> Table:
    from playwright.sync_api import sync_playwright

    table = Table()
    print(Table.HEADER)
    cases = [case for case in CASES if case.key in rows]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            if "floor" in rows:  # first: the reference of every first load
                measure_floor(browser, starts, loads, count, table)
            if cases:
                with streamlit_server(options) as base:
                    for case in cases:
                        measure_case(browser, base, case, loads, count, table)
            if "cold" in rows:
                measure_cold(browser, starts, table)
            if "bertviz" in rows:
                measure_bertviz(browser, loads, count, table)
        finally:
            browser.close()
    return table


# --- profile without a browser ------------------------------------------------------------------------------------

def profile(cases: list[Case], repeats: int = 5, top: int = 18) -> list[str]:
    """The rerun after a sidebar change in AppTest (server side only, the question answered): its median, and the
    functions of the app (app.py, pages/, mha_app, mha_core) that take the most cumulative time per rerun."""
    from streamlit.runtime.scriptrunner import script_runner
    from streamlit.testing.v1 import AppTest

    from mha_core.teaching.questions import KINDS

    profiler = {"on": False, "p": cProfile.Profile()}
    run_script = script_runner.ScriptRunner._run_script

    def profiled(self, *args, **kwargs):  # the script runs in its own thread: profile it there
        if not profiler["on"]:
            return run_script(self, *args, **kwargs)
        profiler["p"].enable()
        try:
            return run_script(self, *args, **kwargs)
        finally:
            profiler["p"].disable()

    lines = []
    script_runner.ScriptRunner._run_script = profiled
    try:
        for case in cases:
            profiler["p"] = cProfile.Profile()
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
            at.query_params.update(case.params)
            for kind in KINDS:
                at.session_state[f"answered_{kind}"] = "revealed"
            at.run()
            at.switch_page(f"pages/{case.page}.py").run()
            key = {"Heads h": "h", "Layer": "layer"}[case.control]
            for value in case.values[1:] + case.values[:1]:  # every value once: the caches hold them
                at.selectbox(key=key).set_value(value).run()
            times = []
            for i in range(2 * repeats):
                profiler["on"] = True
                start = time.perf_counter()
                at.selectbox(key=key).set_value(case.values[(i + 1) % len(case.values)]).run()
                times.append(time.perf_counter() - start)
                profiler["on"] = False
            assert not at.exception, at.exception
            specs = [len(chart.proto.spec) for chart in at.get("plotly_chart")]
            lines.append(f"{case.name}: AppTest rerun after changing {case.control} (cached example): median "
                         f"{statistics.median(times) * 1000:.0f} ms of {len(times)}; {len(specs)} charts, "
                         f"{sum(specs) / 1024:.0f} KiB of plotly JSON. Cumulative time per rerun:")
            stats = pstats.Stats(profiler["p"])
            ours = [(func, row[3]) for func, row in stats.stats.items()  # row[3]: cumulative seconds
                    if any(part in func[0] for part in ("/mha_app/", "/mha_core/", "/pages/", "app.py"))]
            for (path, line, name), cumulative in sorted(ours, key=lambda item: -item[1])[:top]:
                where = path[path.rfind("/", 0, path.rfind("/")) + 1:]
                lines.append(f"    {cumulative / len(times) * 1000:7.1f} ms  {name} ({where}:{line})")
    finally:
        script_runner.ScriptRunner._run_script = run_script
    return lines


def _stop(signum, frame):
    raise TimeoutError("the benchmark ran past --max-minutes")


def main(argv: list[str] | None = None) -> int:
    keys = [case.key for case in CASES] + list(REFERENCES)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default=",".join(keys), help=f"comma-separated, of: {', '.join(keys)} (all)")
    parser.add_argument("--quick", action="store_true",
                        help="a first look: 2 loads, 3 changes, 2 cold starts per row, no profile")
    parser.add_argument("--loads", type=int, default=5, help="fresh first loads per case (default 5)")
    parser.add_argument("--changes", type=int, default=6, help="changes per case (default 6)")
    parser.add_argument("--starts", type=int, default=3, help="fresh server starts for the cold start (default 3)")
    parser.add_argument("--max-minutes", type=float, default=40, help="stop the whole run after this (default 40)")
    parser.add_argument("--no-profile", action="store_true", help="skip the server-side profile")
    parser.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE",
                        help="a Streamlit config option for the app's server, e.g. runner.postScriptGC=false")
    args = parser.parse_args(argv)
    rows = args.rows.split(",")
    if unknown := set(rows) - set(keys):
        parser.error(f"unknown rows {sorted(unknown)}; choose from {', '.join(keys)}")
    if args.quick:
        args.loads, args.changes, args.starts, args.no_profile = 2, 3, 2, True
    options = dict(item.split("=", 1) for item in args.set)
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: install Debian's chromium package (never a downloaded browser).")
        return 2
    signal.signal(signal.SIGALRM, _stop)
    signal.alarm(int(args.max_minutes * 60))
    import plotly
    import streamlit

    started = time.monotonic()
    version = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    print(f"Browser benchmark, {time.strftime('%Y-%m-%d %H:%M %Z')}: {version} headless, {os.cpu_count()} CPU "
          f"cores, Python {platform.python_version()}, streamlit {streamlit.__version__}, plotly {plotly.__version__}; "
          f"viewport 1280x800; {args.loads} loads, {args.changes} changes, {args.starts} cold starts per row")
    print("Load average before: %.2f %.2f %.2f (other processes on these cores slow every number)" % os.getloadavg())
    if options:
        print(f"Streamlit options: {options}")
    print()
    table = browser_benchmark(rows, args.loads, args.changes, args.starts, options)
    print("\nLoad average after:  %.2f %.2f %.2f" % os.getloadavg())
    for name, tokens in sorted({(case.model, case.tokens) for case in CASES if case.tokens and case.key in rows}):
        print(f"The {tokens}-token text for {name}: {json.dumps(text_of(name, tokens))}")
    print("\n".join(table.notes))
    print("\nTargets (times: the median; bytes: every rerun):")
    print("\n".join(targets(table)))
    profiled = [case for case in CASES if case.key in rows and case.key in ("default", "n512")]
    if profiled and not args.no_profile:
        print("\nServer-side profile (no browser):")
        print("\n".join(profile(profiled)))
    signal.alarm(0)
    print(f"\nThe benchmark took {time.monotonic() - started:.0f} s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
