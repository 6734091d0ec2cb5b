"""A class at once: many students on one `streamlit run` server, changing controls and pages.

Run from the repository root:  python -m benchmarks.load  [--sessions 20] [--seconds 60] [--seed 0]
                                                           [--link 'input=random&n=1024'] [--check]

Starts `streamlit run app.py` on a free loopback port (nothing else is contacted) and drives the sessions with
Streamlit's own websocket protocol (benchmarks.streamlit_client): 20 browsers would measure Chromium on this
machine's cores rather than the server. Half of the sessions use the trained model (all-MiniLM-L6-v2), half random
weights. Each session opens a random page, then, until the time is up, waits as a student reading the page would
(1 to 4 s) and makes one change: a control in the sidebar (h, d_model, the seed, the sentence, masks, the input,
the focused head and query token, the layer) or on the page (the stage of step 2), or another page. Everything is
bounded: at most 50 sessions and 10 minutes, every wait for the server 120 s, then the server is stopped. The
server inherits this process's environment (MALLOC_ARENA_MAX=2, as the Docker image sets it, can be tried so).

Reported: the number of changes, errors (exceptions, error messages, timeouts, lost connections: must be 0), the
time to idle after a change (the rerun request is sent -> Streamlit reports the script finished) as p50 / p95 / max,
and the server's resident memory (VmRSS of its process): idle before any session, after one warm-up session that
visits every page with both kinds of weights (imports, the trained model loaded, caches started), the peak during
the load, with every session still open 5 s after its last change, and 10 s after every session has closed.
"Per extra session" = (peak - warm) / sessions, and (open and idle - warm) / sessions.

--link QUERY: every session opens this same link (a teacher's link shared with the class) and then changes only
what is shown (pages, the focused head and query token, the stage), so every session needs the same example.

--check runs one session in a real Chromium (benchmarks.browser: the "Heads h" selectbox, clicked) and one with
this client, the same changes on the same server, and prints both: the client's time should match the browser's
server share (the browser adds its own drawing), and it must see the same number of heads.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import statistics
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode

from benchmarks.browser import CHROMIUM, CHROMIUM_ARGS, changes, streamlit_process
from benchmarks.streamlit_client import Run, Session
from mha_app.sentences import EXAMPLE_SENTENCES
from mha_app.settings import MODELS, STAGES

MAX_SESSIONS = 50
MAX_SECONDS = 600
THINK_S = (1.0, 4.0)
TRAINED = MODELS[1]
SENTENCES = [*EXAMPLE_SENTENCES.values(), "Attention lets every token look at every other token.",
             "The trophy did not fit in the suitcase because it was too big."]
PAGES = ["", "projection", "attention", "concatenation", "output", "model_view", "head_summary"]
FOCUS = ("head", "query", "stage")  # what only changes the view: a class given one link changes only these


@dataclass
class Tally:
    opens: list[float] = field(default_factory=list)
    changes: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    actions: dict[str, int] = field(default_factory=dict)

    def record(self, name: str, run: Run, opened: bool = False) -> None:
        (self.opens if opened else self.changes).append(run.seconds)
        self.actions[name] = self.actions.get(name, 0) + 1
        self.errors.extend(f"{name}: {text}" for text in run.exceptions + run.errors)


class Memory:
    """Samples the server's resident memory every 0.2 s in a thread."""

    def __init__(self, pid: int):
        self.pid, self.samples, self._stop = pid, [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def now(self) -> int:
        with open(f"/proc/{self.pid}/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.samples.append(self.now())

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def _options(session: Session, key: str) -> list[str]:
    return list(session.widgets[key].proto.options)


def next_action(session: Session, rng: random.Random, trained: bool) -> tuple[str, str, object]:
    """One thing a student does next, among the controls on screen now: ("goto", page, None) or ("set", key, v)."""
    w = session.widgets
    if rng.random() < 0.3 or not w:
        return "goto", rng.choice([p for p in PAGES if p != session.page]), None
    choices = []
    if "head" in w:
        choices.append(("head", rng.choice(_options(session, "head"))))
    if "query" in w:
        choices.append(("query", rng.randint(1, int(w["query"].proto.max))))
    if "stage" in w:
        choices.append(("stage", rng.choice(list(STAGES))))
    if "text" in w:
        choices.append(("text", rng.choice(SENTENCES)))
    if trained:
        if "layer" in w:
            choices += [("layer", rng.choice(_options(session, "layer")))] * 2
    else:
        for key, value in (("h", lambda: rng.choice(_options(session, "h"))),
                           ("d_model", lambda: rng.choice([32, 48, 64, 96, 128, 256])),
                           ("seed", lambda: rng.randint(0, 99)), ("causal", lambda: rng.random() < 0.5),
                           ("pad", lambda: rng.randint(0, 2)), ("n", lambda: rng.randint(4, 24)),
                           ("input", lambda: rng.choice(["sentence", "sentence", "random", "tiny"]))):
            if key in w:
                choices.append((key, value()))
    key, value = rng.choice(choices)
    return "set", key, value


async def student(session: Session, index: int, seed: int, deadline: float, tally: Tally,
                  link: dict | None) -> None:
    """One student's changes until the deadline; the session stays open (the caller closes it)."""
    rng = random.Random(seed * 1000 + index)
    trained = index % 2 == 1 and link is None
    try:
        page = rng.choice(PAGES)
        params = link if link is not None else {"model": TRAINED} if trained else {}
        tally.record("open", await session.open(page, params), opened=True)
        while True:
            await asyncio.sleep(rng.uniform(*THINK_S))
            if time.monotonic() >= deadline:
                break
            kind, key, value = next_action(session, rng, trained)
            if link is not None and key in session.widgets and key not in FOCUS:
                kind, key = "goto", rng.choice([p for p in PAGES if p != session.page])  # the class keeps the link
            run = await (session.goto(key) if kind == "goto" else session.set(key, value))
            tally.record("page" if kind == "goto" else key, run)
    except Exception as err:  # a timeout, a lost connection, a missing widget: counted, never hidden
        tally.errors.append(f"session {index}: {type(err).__name__}: {err}")


async def warm_up(base: str, tally: Tally) -> None:
    """One session that visits every page with random weights, then with the trained model."""
    session = Session(base)
    try:
        tally.record("warm-up", await session.open(), opened=True)
        for model in MODELS:
            await session.set("model", model)
            for page in PAGES:
                tally.record("warm-up", await session.goto(page))
    finally:
        await session.close()


def percentile(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1] if len(samples) > 1 else samples[0]


def _mb(nbytes: float) -> str:
    return f"{nbytes / 2**20:,.0f} MB"


def load(sessions: int, seconds: float, seed: int, link: dict | None = None) -> list[str]:
    with streamlit_process() as (base, proc), Memory(proc.pid) as memory:
        idle = memory.now()
        warm = Tally()
        asyncio.run(warm_up(base, warm))
        warmed = memory.now()
        tally = Tally()

        async def everyone() -> tuple[float, int]:
            deadline = time.monotonic() + seconds
            class_ = [Session(base) for _ in range(sessions)]
            try:
                await asyncio.gather(*(student(s, i, seed, deadline, tally, link) for i, s in enumerate(class_)))
                took = time.monotonic() - began
                await asyncio.sleep(5)  # every run is over; the sessions are still open
                return took, memory.now()
            finally:
                await asyncio.gather(*(s.close() for s in class_))

        start = len(memory.samples)
        began = time.monotonic()
        took, held = asyncio.run(everyone())
        peak = max(memory.samples[start:] + [memory.now()])
        time.sleep(10)
        end = memory.now()
    who = (f"all opening ?{urlencode(link)}, then changing pages, head, query and stage" if link is not None else
           f"{sessions - sessions // 2} random weights, {sessions // 2} {TRAINED}")
    lines = [f"{sessions} sessions ({who}) for "
             f"{seconds:.0f} s; think time {THINK_S[0]:.0f}-{THINK_S[1]:.0f} s; {os.cpu_count()} CPUs "
             f"{platform.machine()}, load average {os.getloadavg()[0]:.1f} at the end; Python "
             f"{platform.python_version()}",
             f"changes: {len(tally.changes)} in {took:.0f} s ({len(tally.changes) / took:.1f}/s), "
             f"by kind: {', '.join(f'{k} {v}' for k, v in sorted(tally.actions.items()))}",
             f"errors: {len(tally.errors) + len(warm.errors)}"]
    lines += [f"  {e}" for e in (warm.errors + tally.errors)[:20]]
    for name, samples in (("time to idle after a change", tally.changes), ("first page of a session", tally.opens)):
        if samples:
            lines.append(f"{name:<30} p50 {statistics.median(samples) * 1000:6.0f} ms   "
                         f"p95 {percentile(samples, 95) * 1000:6.0f} ms   max {max(samples) * 1000:6.0f} ms")
    lines.append(f"server memory (RSS): idle {_mb(idle)}, after one warm-up session {_mb(warmed)}, peak {_mb(peak)}, "
                 f"all {sessions} sessions open and idle {_mb(held)}, end (closed) {_mb(end)}")
    lines.append(f"per extra session: {_mb((peak - warmed) / sessions)} at the peak, {_mb((held - warmed) / sessions)} "
                 f"held while open (MALLOC_ARENA_MAX={os.environ.get('MALLOC_ARENA_MAX', 'unset')})")
    return lines


async def _client_changes(base: str, values: tuple[int, int], count: int) -> list[tuple[float, int]]:
    session = Session(base)
    try:
        await session.open("attention", {"h": str(values[0])})
        out = []
        for i in range(count):
            target = values[(i + 1) % 2]
            run = await session.set("h", target)
            grid = [f for f in run.figures if f["layout"]["title"]["text"].startswith("Attention weights of all")]
            out.append((run.seconds, sum(t["type"] == "heatmap" for t in grid[0]["data"])))
            if out[-1][1] != target:
                raise RuntimeError(f"the client sees {out[-1][1]} heads after choosing h = {target}")
        return out
    finally:
        await session.close()


def check(count: int = 10) -> list[str]:
    from playwright.sync_api import sync_playwright

    values = (8, 4)
    with streamlit_process() as (base, _):
        url = f"{base}/attention?h={values[0]}"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                changes(browser, url, values, 2)  # warm-up: imports, caches, plotly in the browser
                real = changes(browser, url, values, count)
            finally:
                browser.close()
        client = asyncio.run(_client_changes(base, values, count))
    med = statistics.median
    return [f"h alternating {values[0]} <-> {values[1]} on the attention page, {count} changes each (medians):",
            f"  Chromium: {med(r['total'] for r in real) * 1000:.0f} ms to idle, of which "
            f"{med(r['server'] for r in real) * 1000:.0f} ms server (websocket: request sent -> last reply frame)",
            f"  this client: {med(s for s, _ in client) * 1000:.0f} ms to idle; heads seen after each change: "
            f"{[heads for _, heads in client]}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check", action="store_true", help="compare the client with one real browser session")
    parser.add_argument("--link", help="a query string every session opens (a class given one link), e.g. "
                                       "'input=random&n=1024&d_model=256'; the sessions then change only the view")
    args = parser.parse_args(argv)
    if not (1 <= args.sessions <= MAX_SESSIONS and 1 <= args.seconds <= MAX_SECONDS):
        parser.error(f"--sessions must be 1..{MAX_SESSIONS} and --seconds 1..{MAX_SECONDS}")
    link = dict(parse_qsl(args.link)) if args.link is not None else None
    lines = check() if args.check else load(args.sessions, args.seconds, args.seed, link)
    print("\n".join(lines))
    return 0 if args.check or "errors: 0" in lines else 1


if __name__ == "__main__":
    raise SystemExit(main())
