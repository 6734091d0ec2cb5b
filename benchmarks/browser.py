"""How fast the app feels in a real browser: first load, and changing h on the attention page.

Run from the repository root:  python -m benchmarks.browser  [--loads 5] [--changes 10] [--no-profile]
                                                                [--set runner.postScriptGC=false ...]
(--set passes a Streamlit config option to the server, to try a setting without editing .streamlit/config.toml.)

Starts `streamlit run app.py` on a free local port and drives Debian's headless Chromium (/usr/bin/chromium)
through Playwright. Every time is taken inside the page with performance.now(), checked on every animation frame
(so the resolution is one frame, about 16 ms), and reported as median / min / max.

What is measured
- first load: a fresh browser context (new Streamlit session, empty HTTP cache) opens the attention page.
  "first chart" = navigation start -> the first animation frame in which a plotly chart has drawn its SVG.
  "ready" = navigation start -> the first frame from which the app stays idle for 500 ms: the script has finished
  (Streamlit's data-test-script-state = notRunning, websocket CONNECTED), no element is stale or still loading
  (stSkeleton), no spinner or running indicator, every plotly chart on the page drawn, and the head-grid figure
  shows the expected number of heads. The warm-up load (first session of the server: imports, cold caches) is
  shown on its own line and left out of the statistics.
- change h: the "Heads h" selectbox is opened, then its option is clicked. The clock starts at the option's
  pointerdown and stops at the first frame in which (1) the head-grid figure "Attention weights of all N heads"
  has the new N in its title, N drawn "head k" subplot titles and N drawn heatmap images, and (2) the app is idle
  as above (script finished, nothing stale, every chart drawn); the state must then hold for 300 ms (not counted).
  Streamlit's "Running..." status widget (stStatusWidget) only appears once a run has taken 500 ms, so its absence
  alone would not show that a run is over; the script-state attribute does. h alternates between two values, so
  from the second change on the example comes from st.cache_data and the browser already holds the big figure
  messages (Streamlit then sends a reference instead of the message): those times are of the rerun and the
  drawing, not of the maths. Each change is also split in two, with Chromium's own network timestamps (DevTools
  protocol, independent of how busy the page is): "server" = the websocket frame with the rerun request leaves
  the browser -> the last frame of the rerun arrives (the script, Streamlit's work, and any wait for a CPU core);
  "browser" = the rest (handling the click, drawing the charts, one frame of polling). The bytes received per
  change are shown below the table.
- profile (unless --no-profile): the same rerun without a browser (streamlit.testing AppTest, in this process),
  and the time and JSON size of every figure the attention page builds, with the same inputs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 800}
LOAD_TIMEOUT_MS = 90_000
CHANGE_TIMEOUT_MS = 60_000

DEFAULT_CASE = ("default example (11 tokens, d_model 128)", {}, (8, 4), 0.300)
LARGE_CASE = ("random n=128, d_model 768", {"input": "random", "n": "128", "d_model": "768", "h": "12"}, (12, 6), 1.0)

# Injected before any page script: the checks used below, and the time of the first drawn chart.
PROBE = r"""
(() => {
  window.__grid = () => {
    const el = [...document.querySelectorAll('.js-plotly-plot')]
      .find(e => /Attention weights of all/.test((e.layout && e.layout.title && e.layout.title.text) || ''));
    if (!el) return null;
    const m = el.layout.title.text.match(/all (\d+) heads?/);
    return {title: m ? Number(m[1]) : null, heatmaps: el.querySelectorAll('.hm image').length,
            annotations: [...el.querySelectorAll('.infolayer .annotation-text')]
              .filter(a => /^head \d+$/.test(a.textContent.trim())).length};
  };
  window.__idle = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.dataset.testScriptState !== 'notRunning' || app.dataset.testConnectionState !== 'CONNECTED')
      return false;
    if (document.querySelector('[data-stale="true"], [data-testid="stSkeleton"], [data-testid="stSpinner"], '
                               + '[data-testid="stStatusWidgetRunningIcon"]')) return false;
    if (!document.querySelector('h1')) return false;
    const charts = document.querySelectorAll('[data-testid="stPlotlyChart"]').length;
    return charts > 0 && document.querySelectorAll('.js-plotly-plot .main-svg').length >= charts;
  };
  window.__heads = n => { const g = window.__grid(); return !!g && g.title === n && g.heatmaps === n
                                                            && g.annotations === n; };
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
  window.__firstChart = null;
  window.__watch(() => !!document.querySelector('.js-plotly-plot .main-svg'), 0, t => { window.__firstChart = t; });
})();
"""

LOADED_JS = """heads => new Promise(resolve => window.__watch(() => window.__idle() && window.__heads(heads), 500,
  t => resolve({firstChart: window.__firstChart, ready: t})))"""

ARM_JS = """heads => {
  window.__change = null;
  const onDown = e => {
    const onOption = e.composedPath().some(n => n.getAttribute && n.getAttribute('role') === 'option');
    if (!onOption || window.__change) return;
    const t0 = performance.now();
    window.__change = {t0};
    window.__watch(() => window.__idle() && window.__heads(heads), 300, t1 => {
      Object.assign(window.__change, {t1, done: true});
    });
  };
  for (const type of ['pointerdown', 'mousedown']) {
    if (window.__onDown) window.removeEventListener(type, window.__onDown, {capture: true});
    window.addEventListener(type, onDown, {capture: true});
  }
  window.__onDown = onDown;
}"""


# --- server and browser -------------------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(options: dict[str, str] | None = None, start_timeout_s: float = 60):
    port = _free_port()
    log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"mha-bench-streamlit-{port}.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1", "--server.port",
             str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false",
             *[arg for key, value in (options or {}).items() for arg in (f"--{key}", value)]],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
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
                    time.sleep(0.3)
            yield base
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def _url(base: str, params: dict) -> str:
    return f"{base}/attention" + (f"?{urlencode(params)}" if params else "")


def first_load(browser, url: str, heads: int) -> dict:
    context = browser.new_context(viewport=VIEWPORT)
    try:
        context.add_init_script(PROBE)
        page = context.new_page()
        page.set_default_timeout(LOAD_TIMEOUT_MS)
        page.goto(url, wait_until="commit", timeout=LOAD_TIMEOUT_MS)
        page.wait_for_function("() => typeof window.__watch === 'function'", timeout=LOAD_TIMEOUT_MS)
        return page.evaluate(LOADED_JS, heads)
    finally:
        context.close()


def changes(browser, url: str, values: tuple[int, int], count: int) -> list[dict]:
    """Alternate the "Heads h" selectbox between `values`, starting from values[0] (the value in the URL).

    Besides the in-page time, the websocket frames are timed by Chromium's network layer (DevTools protocol), so the
    server's share does not depend on how busy the page's main thread is.
    """
    context = browser.new_context(viewport=VIEWPORT)
    try:
        context.add_init_script(PROBE)
        page = context.new_page()
        page.set_default_timeout(CHANGE_TIMEOUT_MS)
        frames: list[tuple[str, float, int]] = []
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        for kind in ("Sent", "Received"):
            cdp.on(f"Network.webSocketFrame{kind}", lambda event, kind=kind: frames.append(
                (kind, event["timestamp"], len(event["response"]["payloadData"]) * 3 // 4)))
        page.goto(url, timeout=LOAD_TIMEOUT_MS)
        page.wait_for_function("() => typeof window.__watch === 'function'", timeout=LOAD_TIMEOUT_MS)
        page.evaluate(LOADED_JS, values[0])
        box = page.get_by_role("combobox", name="Heads h")
        results = []
        for i in range(count):
            target = values[(i + 1) % 2]
            page.evaluate(ARM_JS, target)
            seen = len(frames)
            # In the middle of the sidebar the option list opens fully in view: Playwright need not scroll, and a
            # scroll would close the list and send the click to whatever lies underneath.
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
                raise RuntimeError(f"Heads h shows {box.input_value()} after choosing {target}")
        return results
    finally:
        context.close()


# --- report -------------------------------------------------------------------------------------------------------

def _ms(seconds: float) -> str:
    return f"{seconds * 1000:7.0f}"


def _row(name: str, samples: list[float], target: float | None) -> str:
    med = statistics.median(samples)
    verdict = "—" if target is None else ("PASS" if med <= target else "MISS")
    tgt = "      —" if target is None else f"<={target * 1000:4.0f}"
    return (f"{name:<62} {len(samples):>4} {_ms(med)} {_ms(min(samples))} {_ms(max(samples))}  {tgt:>7}  "
            f"{verdict}")


HEADER = f"{'measurement (ms)':<62} {'runs':>4} {'median':>7} {'min':>7} {'max':>7}  {'target':>7}  result"


def browser_benchmark(loads: int, count: int, options: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    from playwright.sync_api import sync_playwright

    rows, notes = [HEADER, "-" * len(HEADER)], []
    with streamlit_server(options) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for name, params, values, _ in (DEFAULT_CASE, LARGE_CASE):
                url = _url(base, params)
                cold = first_load(browser, url, values[0])
                notes.append(f"warm-up load, {name}: first chart {cold['firstChart']:.0f} ms, "
                             f"ready {cold['ready']:.0f} ms (first session for these settings; not in the table)")
                runs = [first_load(browser, url, values[0]) for _ in range(loads)]
                rows.append(_row(f"first load, first chart: {name}", [r["firstChart"] / 1000 for r in runs], None))
                rows.append(_row(f"first load, ready: {name}", [r["ready"] / 1000 for r in runs], None))
            for name, params, values, target in (DEFAULT_CASE, LARGE_CASE):
                runs = changes(browser, _url(base, params), values, count)
                label = f"change h {values[0]}<->{values[1]}: {name}"
                rows.append(_row(label, [r["total"] for r in runs], target))
                rows.append(_row("  server: rerun request sent -> last reply frame", [r["server"] for r in runs], None))
                rows.append(_row("  browser: the rest (click handling, drawing)", [r["browser"] for r in runs], None))
                kib = statistics.median(r["bytes"] for r in runs) / 1024
                each = ", ".join(f"{r['total'] * 1000:.0f}" for r in runs)
                notes.append(f"{label}: each change {each} ms (the first one computes the new example); "
                             f"median {kib:.0f} KiB received per change")
        finally:
            browser.close()
    return rows, notes


# --- profile without a browser ------------------------------------------------------------------------------------

def profile(repeats: int = 5) -> list[str]:
    """The rerun in AppTest (server side only) and each attention-page figure: build time and JSON size."""
    import plotly.io as pio
    from streamlit.testing.v1 import AppTest

    from mha_app.example import build_example
    from mha_app.settings import Spec
    from mha_core import figures

    lines = []
    for name, params, values, _ in (DEFAULT_CASE, LARGE_CASE):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        at.query_params.update(params)
        at.run()
        at.switch_page("pages/attention.py").run()
        times = []
        for i in range(2 * repeats):
            start = time.perf_counter()
            at.selectbox(key="h").set_value(values[(i + 1) % 2]).run()
            times.append(time.perf_counter() - start)
        assert not at.exception, at.exception
        specs = [len(chart.proto.spec) for chart in at.get("plotly_chart")]
        lines.append(f"{name}: AppTest rerun after changing h (script + figures + serialising, cached example): "
                     f"median {statistics.median(times[1:]) * 1000:.0f} ms (first change, a cache miss: "
                     f"{times[0] * 1000:.0f} ms); {len(specs)} charts, "
                     f"{sum(specs) / 1024:.0f} KiB of plotly JSON")
        given = {k: (int(v) if v.isdigit() else v) for k, v in params.items() if k != "h"}
        for h in values:
            start = time.perf_counter()
            ex = build_example(Spec(**given, h=h))
            build = time.perf_counter() - start
            tr, tokens = ex.trace, ex.tokens
            builders = {"head_grid_figure": lambda tr=tr, tokens=tokens: figures.head_grid_figure(tr, tokens)}
            for stage in figures.STAGES:
                builders[f"attention_figure[{stage}]"] = (
                    lambda stage=stage, tr=tr, tokens=tokens, ex=ex:
                    figures.attention_figure(tr, 0, tokens, stage, ex.cfg.softmax_scale))
            builders["query_weights_figure"] = lambda tr=tr, tokens=tokens: figures.query_weights_figure(
                tr, 0, 0, tokens)
            builders["value_mix_figure"] = lambda tr=tr, tokens=tokens: figures.value_mix_figure(tr, 0, 0, tokens)
            builders["entropy_figure"] = lambda tr=tr, tokens=tokens: figures.entropy_figure(tr, tokens)
            parts = []
            for fname, make in builders.items():
                t_build, t_json = [], []
                for _ in range(repeats):
                    start = time.perf_counter()
                    fig = make()
                    t_build.append(time.perf_counter() - start)
                    start = time.perf_counter()
                    spec = pio.to_json(fig, validate=False)
                    t_json.append(time.perf_counter() - start)
                parts.append((fname, statistics.median(t_build), statistics.median(t_json), len(spec)))
            total = sum(b + j for _, b, j, _ in parts)
            lines.append(f"  h={h}: build_example {build * 1000:.0f} ms; figures {total * 1000:.0f} ms in all "
                         f"(build + to_json, median of {repeats}):")
            for fname, b, j, size in parts:
                lines.append(f"    {fname:<30} build {b * 1000:6.1f} ms  to_json {j * 1000:6.1f} ms  "
                             f"{size / 1024:7.1f} KiB")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, default=5, help="fresh first loads per case (default 5)")
    parser.add_argument("--changes", type=int, default=10, help="h changes per case (default 10)")
    parser.add_argument("--no-profile", action="store_true", help="skip the server-side profile")
    parser.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE",
                        help="a Streamlit config option for the server, e.g. runner.postScriptGC=false")
    args = parser.parse_args(argv)
    options = dict(item.split("=", 1) for item in args.set)
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: install Debian's chromium package (never a downloaded browser).")
        return 2
    import plotly
    import streamlit

    version = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    print(f"Browser benchmark: {version} headless, {os.cpu_count()} CPU cores, Python {platform.python_version()}, "
          f"streamlit {streamlit.__version__}, plotly {plotly.__version__}; viewport 1280x800, attention page")
    print("Load average before: %.2f %.2f %.2f (other processes on these cores slow every number)" % os.getloadavg())
    if options:
        print(f"Streamlit options: {options}")
    rows, notes = browser_benchmark(args.loads, args.changes, options)
    print("Load average after:  %.2f %.2f %.2f" % os.getloadavg())
    print()
    print("\n".join(rows))
    print()
    print("\n".join(notes))
    print("\nTargets: change h <= 300 ms at the default example, <= 1 s at n=128 / d_model 768 / h 12 (median).")
    if not args.no_profile:
        print("\nServer-side profile (no browser):")
        print("\n".join(profile()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
