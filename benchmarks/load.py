"""A class at once: many students on one `streamlit run` server, changing controls and pages.

Run from the repository root:  python -m benchmarks.load  [--sessions 20] [--seconds 60] [--seed 0]
                                                           [--link 'input=random&n=1024'] [--check]
                               python -m benchmarks.load --proxy [--replicas 3] [--sessions 60] [--kill-one-at 30]
                                                           [--image mha-viz:check]
                               python -m benchmarks.load --compose deploy/compose.yaml [--sessions 60]
                                                           [--kill-one-at 30]

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

--proxy: a class behind HAProxy (Debian's package, with deploy/haproxy.cfg; benchmarks.cluster) in front of
--replicas servers (default 3), each warmed up on its own; every session first loads the page through the proxy
and keeps its sticky cookie, as a browser does. Reported per replica: the sessions it holds, the time to idle, its
memory and the CPU it used. --image runs the replicas as podman containers of a built image instead of processes.
--compose FILE: the compose stack itself (benchmarks.cluster.compose_replicas): `podman-compose -f FILE up -d` (or
`docker compose`), with the proxy's port published on 127.0.0.1 (MHA_PORT, else a free port); the class starts once
every app container passes the compose file's health check and the proxy hands out every replica's cookie; `down` at
the end. The replicas are the compose file's (deploy.replicas); --kill-one-at kills one with `podman kill`.
--kill-one-at SECONDS: that long into the class, the replica holding the most sessions is killed (SIGKILL). Its
sessions notice the closed websocket at once (as a browser does, even while reading), reconnect through the proxy
and rerun their last page with only its URL; each must land on a surviving replica and show exactly the texts it
showed before (every Markdown, heading, alert, chart title and axis label). Reported: how many came back, with
the same view, and how long after the kill (p50 / max); a session on a surviving replica that loses its connection
counts as an error.

--check runs one session in a real Chromium (benchmarks.browser: the "Heads h" selectbox, clicked) and one with
this client, the same changes on the same server, and prints both: the client's time should match the browser's
server share (the browser adds its own drawing), and it must see the same number of heads.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import random
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import websockets
import yaml

from benchmarks import cluster
from benchmarks.browser import CHROMIUM, CHROMIUM_ARGS, changes, streamlit_process
from benchmarks.streamlit_client import Run, Session
from mha_app.state.sentences import EXAMPLE_SENTENCES
from mha_app.state.settings import MODELS, STAGES

MAX_SESSIONS = 50  # per server
RECONNECT_TRIES = 20  # a browser keeps trying; here at most this many times, 0.5 s apart
MAX_SECONDS = 600
THINK_S = (1.0, 4.0)
TRAINED = MODELS[1]
SENTENCES = [*EXAMPLE_SENTENCES.values(), "Attention lets every token look at every other token.",
             "The trophy did not fit in the suitcase because it was too big."]
PAGES = ["", "projection", "attention", "concatenation", "output", "model_view", "head_summary"]
FOCUS = ("head", "query", "stage")  # what only changes the view: a class given one link changes only these


@dataclass
class Reconnect:
    """A session of the killed replica coming back."""

    index: int
    old: str          # the replica it was on
    new: str          # the replica it landed on
    noticed_s: float  # kill -> the closed websocket noticed
    shown_s: float    # kill -> its view shown again (the rerun finished)
    same_view: bool


@dataclass
class Fault:
    """--kill-one-at: when, which replica, and what its sessions saw."""

    at_s: float
    killed_at: float | None = None  # time.monotonic() of the kill
    victim: str = ""
    victims: set[int] = field(default_factory=set)  # the sessions it held
    reconnects: list[Reconnect] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)


@dataclass
class Tally:
    opens: list[float] = field(default_factory=list)
    changes: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    actions: dict[str, int] = field(default_factory=dict)
    by_replica: dict[str, list[float]] = field(default_factory=dict)  # time to idle of changes, per replica

    def record(self, name: str, run: Run, opened: bool = False, replica: str = "") -> None:
        (self.opens if opened else self.changes).append(run.seconds)
        if not opened:
            self.by_replica.setdefault(replica, []).append(run.seconds)
        self.actions[name] = self.actions.get(name, 0) + 1
        self.errors.extend(f"{name}: {text}" for text in run.exceptions + run.errors)


class Memory:
    """Samples the server's resident memory every 0.2 s in a thread."""

    def __init__(self, pid: int):
        self.pid, self.samples, self._stop = pid, [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def now(self) -> int:
        """VmRSS in bytes; 0 once the process is gone (a killed replica)."""
        try:
            with open(f"/proc/{self.pid}/status") as status:
                return next((int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:")), 0)
        except (FileNotFoundError, ProcessLookupError):
            return 0

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


LOST = (websockets.ConnectionClosed, ConnectionError, EOFError)  # a websocket whose server went away


async def think(session: Session, seconds: float) -> bool:
    """A student reading for `seconds`; True if the connection was lost meanwhile (the browser would show it)."""
    lost = session.lost()
    done, _ = await asyncio.wait({lost}, timeout=seconds)
    lost.cancel()
    return bool(done)


async def come_back(session: Session, index: int, tally: Tally, fault: Fault) -> None:
    """A session whose websocket closed after the kill: reconnect through the proxy and compare the view."""
    noticed = time.monotonic()
    old, before = session.replica, session.view
    if index not in fault.victims:
        raise RuntimeError(f"lost its connection to {old or 'the server'}, which was not the replica killed")
    for attempt in range(RECONNECT_TRIES):
        try:
            run = await session.reconnect()
            break
        except (*LOST, OSError, websockets.InvalidStatus, TimeoutError):
            if attempt == RECONNECT_TRIES - 1:
                raise
            await asyncio.sleep(0.5)
    shown = time.monotonic()
    tally.record("reconnect", run, replica=session.replica)
    same = before is None or run.view() == before[2]
    if not same:
        after = run.view()
        pairs = enumerate(zip(before[2], after, strict=False))
        first = next((i for i, (a, b) in pairs if a != b), min(len(before[2]), len(after)))
        fault.diffs.append(f"session {index} (/{before[0]}?{before[1]}): {len(before[2])} texts before, {len(after)} "
                           f"after; the first difference, text {first}: {before[2][first:first + 1]} -> "
                           f"{after[first:first + 1]}")
    fault.reconnects.append(Reconnect(index, old, session.replica, noticed - fault.killed_at,
                                      shown - fault.killed_at, same))


async def student(session: Session, index: int, seed: int, deadline: float, tally: Tally,
                  link: dict | None, fault: Fault | None = None) -> None:
    """One student's changes until the deadline; the session stays open (the caller closes it).

    With a fault, a connection lost after the kill is a reconnect (come_back), not an error, for the killed
    replica's sessions; the change that was under way is dropped, as a student would make it again.
    """
    rng = random.Random(seed * 1000 + index)
    trained = index % 2 == 1 and link is None
    try:
        page = rng.choice(PAGES)
        params = link if link is not None else {"model": TRAINED} if trained else {}
        try:
            tally.record("open", await session.open(page, params), opened=True, replica=session.replica)
        except LOST:
            if fault is None or fault.killed_at is None:
                raise
            await come_back(session, index, tally, fault)
        while True:
            lost = await think(session, rng.uniform(*THINK_S))
            if not lost and time.monotonic() >= deadline:
                break
            if not lost:
                kind, key, value = next_action(session, rng, trained)
                if link is not None and key in session.widgets and key not in FOCUS:
                    kind, key = "goto", rng.choice([p for p in PAGES if p != session.page])  # the class keeps the link
                try:
                    run = await (session.goto(key) if kind == "goto" else session.set(key, value))
                    tally.record("page" if kind == "goto" else key, run, replica=session.replica)
                    continue
                except LOST:
                    if fault is None or fault.killed_at is None:
                        raise
            if fault is None or fault.killed_at is None:
                raise ConnectionError("the websocket closed")
            await come_back(session, index, tally, fault)
    except Exception as err:  # a timeout, a lost connection, a missing widget: counted, never hidden
        tally.errors.append(f"session {index}{f' on {session.replica}' if session.replica else ''}: "
                            f"{type(err).__name__}: {err}")


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


def load_range(loads: list[float]) -> str:
    return f"{min(loads):.1f}-{max(loads):.1f} (median {statistics.median(loads):.1f})" if loads else "?"


def _mb(nbytes: float) -> str:
    return f"{nbytes / 2**20:,.0f} MB"


def _cpu_window(pids: list[int]) -> Callable[[], list[float]]:
    """Starts a CPU clock for each process; calling the result gives the cores each used since (CPU s / wall s)."""
    began, cpu = time.monotonic(), [cluster.cpu_seconds(pid) for pid in pids]

    def cores() -> list[float]:
        wall = time.monotonic() - began
        return [max(0.0, cluster.cpu_seconds(pid) - c) / wall for pid, c in zip(pids, cpu, strict=True)]

    return cores


@contextlib.contextmanager
def servers(replicas: int, image: str | None, compose: Path | None = None):
    """(the address the class uses, the replicas, the proxy's pid or None): one `streamlit run` server for
    --replicas 0, the compose stack, else the replicas (processes, or containers of the image) behind HAProxy."""
    if compose is not None:
        with cluster.compose_replicas(compose) as stack:
            yield stack
        return
    if replicas == 0:
        with streamlit_process() as (base, proc):
            yield base, [cluster.Replica("", base, proc.pid, lambda: None)], None
        return
    make = cluster.process_replicas(replicas) if image is None else cluster.container_replicas(replicas, image)
    with make as group, cluster.haproxy(group) as (base, proxy):
        yield base, group, proxy.pid


def load(sessions: int, seconds: float, seed: int, link: dict | None = None, replicas: int = 0,
         image: str | None = None, kill_at: float | None = None, compose: Path | None = None) -> list[str]:
    fault = Fault(kill_at) if kill_at is not None else None
    loads: list[float] = []  # the machine's 1-minute load average, every 5 s of the class
    with servers(replicas, image, compose) as (base, group, proxy_pid), contextlib.ExitStack() as stack:
        memory = {r.name: stack.enter_context(Memory(r.pid)) for r in group}
        idle = {name: m.now() for name, m in memory.items()}
        warm = Tally()

        async def warm_all():
            await asyncio.gather(*(warm_up(r.base, warm) for r in group))

        warm_began = time.monotonic()
        asyncio.run(warm_all())
        warm_s = time.monotonic() - warm_began
        warmed = {name: m.now() for name, m in memory.items()}
        tally = Tally()
        on: dict[str, int] = {}  # sessions per replica, once all are open

        async def kill(class_: list[Session]) -> None:
            await asyncio.sleep(fault.at_s)
            held = {r.name: [i for i, s in enumerate(class_) if s.replica == r.name] for r in group}
            victim = max(group, key=lambda r: len(held[r.name]))
            fault.victim, fault.victims = victim.name, set(held[victim.name])
            fault.killed_at = time.monotonic()
            await asyncio.to_thread(victim.kill)

        async def everyone() -> tuple[float, dict[str, int], list[float]]:
            deadline = time.monotonic() + seconds
            class_ = [Session(base) for _ in range(sessions)]
            killer = asyncio.ensure_future(kill(class_)) if fault is not None else None
            sampler = asyncio.ensure_future(sample_load(loads))
            try:
                await asyncio.gather(*(student(s, i, seed, deadline, tally, link, fault)
                                       for i, s in enumerate(class_)))
                took = time.monotonic() - began
                cores = cpu()
                await asyncio.sleep(5)  # every run is over; the sessions are still open
                for s in class_:
                    on[s.replica] = on.get(s.replica, 0) + 1
                return took, {name: m.now() for name, m in memory.items()}, cores
            finally:
                sampler.cancel()
                if killer is not None:
                    killer.cancel()
                await asyncio.gather(*(s.close() for s in class_))

        start = {name: len(m.samples) for name, m in memory.items()}
        cpu = _cpu_window([r.pid for r in group] + ([proxy_pid] if proxy_pid else []))
        began = time.monotonic()
        took, held, cores = asyncio.run(everyone())
        peak = {name: max(m.samples[start[name]:] + [m.now()]) for name, m in memory.items()}
        time.sleep(10)
        end = {name: m.now() for name, m in memory.items()}
    return report(sessions, seconds, link, group, tally, warm, took, warm_s, idle, warmed, peak, held, end, cores,
                  on, fault, image, compose, loads)


async def sample_load(loads: list[float]) -> None:
    while True:
        loads.append(os.getloadavg()[0])
        await asyncio.sleep(5)


def report(sessions, seconds, link, group, tally, warm, took, warm_s, idle, warmed, peak, held, end, cores, on,
           fault, image=None, compose=None, loads=()) -> list[str]:
    """The figures, one line each (see the module docstring)."""
    proxied = group[0].name != ""
    who = (f"all opening ?{urlencode(link)}, then changing pages, head, query and stage" if link is not None else
           f"{sessions - sessions // 2} random weights, {sessions // 2} {TRAINED}")
    where = f"{len(group)} replicas behind HAProxy (deploy/haproxy.cfg)" if proxied else "one server"
    where += f", containers of {image}" if image else ""
    if compose is not None:
        where = (f"the compose stack {compose} ({' '.join(cluster.compose_command())}: {len(group)} app containers "
                 f"behind its HAProxy container)")
    lines = [f"{sessions} sessions ({who}) on {where} for "
             f"{seconds:.0f} s; think time {THINK_S[0]:.0f}-{THINK_S[1]:.0f} s; {os.cpu_count()} CPUs "
             f"{platform.machine()}, load average {load_range(loads)} during the class; Python "
             f"{platform.python_version()}; warm-up {warm_s:.0f} s",
             f"changes: {len(tally.changes)} in {took:.0f} s ({len(tally.changes) / took:.1f}/s), "
             f"by kind: {', '.join(f'{k} {v}' for k, v in sorted(tally.actions.items()))}",
             f"errors: {len(tally.errors) + len(warm.errors)}"]
    lines += [f"  {e}" for e in (warm.errors + tally.errors)[:20]]
    for name, samples in (("time to idle after a change", tally.changes), ("first page of a session", tally.opens)):
        if samples:
            lines.append(f"{name:<30} p50 {statistics.median(samples) * 1000:6.0f} ms   "
                         f"p95 {percentile(samples, 95) * 1000:6.0f} ms   max {max(samples) * 1000:6.0f} ms")
    arena = "2, set by the image" if image or compose else os.environ.get("MALLOC_ARENA_MAX", "unset")
    for r, used in zip(group, cores, strict=False):
        name = r.name
        head = f"{r.label or name}: " if proxied else ""
        if proxied:
            samples = tally.by_replica.get(name, [])
            timing = (f"p50 {statistics.median(samples) * 1000:.0f} ms, p95 {percentile(samples, 95) * 1000:.0f} ms"
                      if samples else "no changes")
            gone = fault is not None and fault.victim == name
            cpu = "killed: its CPU time went with it" if gone else f"CPU {used:.2f} cores over the class"
            lines.append(f"{head}{on.get(name, 0)} sessions at the end, {len(samples)} changes, time to idle "
                         f"{timing}, {cpu}")
        else:
            lines.append(f"server CPU: {used:.2f} cores over the class (user + system time / wall time)")
        killed = fault is not None and fault.victim == name
        lines.append(f"{head}server memory (RSS): idle {_mb(idle[name])}, after one warm-up session "
                     f"{_mb(warmed[name])}, peak {_mb(peak[name])}" + (" (until it was killed)" if killed else
                     f", all sessions open and idle {_mb(held[name])}, end (closed) {_mb(end[name])}"))
        n = 0 if killed else on.get(name, 0) if proxied else sessions
        if n:
            lines.append(f"{head}per extra session: {_mb((peak[name] - warmed[name]) / n)} at the peak, "
                         f"{_mb((held[name] - warmed[name]) / n)} held while open (MALLOC_ARENA_MAX={arena})")
    if proxied:
        lines.append(f"HAProxy CPU: {cores[-1]:.2f} cores over the class")
    if fault is not None:
        lines += fault_report(fault, group)
    return lines


def fault_report(fault: Fault, group) -> list[str]:
    came = fault.reconnects
    same = sum(r.same_view for r in came)
    survivors = {r.name for r in group} - {fault.victim}
    landed = sum(r.new in survivors for r in came)
    names = {r.name: r.label or r.name for r in group}
    label = next((r.label for r in group if r.name == fault.victim and r.label), fault.victim)
    lines = [f"killed {label} (SIGKILL) at {fault.at_s:.0f} s, holding {len(fault.victims)} sessions: "
             f"{len(came)} reconnected, {landed} onto a surviving replica "
             f"({', '.join(f'{names[n]} {sum(r.new == n for r in came)}' for n in sorted(survivors))}), "
             f"{same} with the same view"]
    if came:
        noticed, shown = [r.noticed_s for r in came], [r.shown_s for r in came]
        lines.append(f"reconnect, after the kill: closed websocket noticed p50 {statistics.median(noticed):.2f} s, "
                     f"max {max(noticed):.2f} s; view shown again p50 {statistics.median(shown):.2f} s, "
                     f"p95 {percentile(shown, 95):.2f} s, max {max(shown):.2f} s")
    lines += [f"  view differs: {d}" for d in fault.diffs[:10]]
    lines.append(f"lost views: {len(fault.victims) - same}")
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
    parser.add_argument("--proxy", action="store_true", help="the class goes through HAProxy to --replicas servers")
    parser.add_argument("--replicas", type=int, help="servers behind the proxy (default 3; needs --proxy)")
    parser.add_argument("--image", help="run the replicas as podman containers of this image (needs --proxy)")
    parser.add_argument("--compose", type=Path, metavar="FILE",
                        help="bring this compose stack up (podman-compose), run the class through its proxy, bring "
                             "it down (instead of --proxy)")
    parser.add_argument("--kill-one-at", type=float, metavar="SECONDS",
                        help="kill the replica holding the most sessions this long into the class (needs --proxy)")
    args = parser.parse_args(argv)
    if args.compose is not None and (args.proxy or args.replicas is not None or args.image):
        parser.error("--compose runs the compose file's own replicas and proxy: no --proxy, --replicas or --image")
    if args.compose is not None and not args.compose.is_file():
        parser.error(f"{args.compose}: no such file")
    if not (args.proxy or args.compose) and (args.replicas is not None or args.image or args.kill_one_at is not None):
        parser.error("--replicas, --image and --kill-one-at need --proxy (--kill-one-at: or --compose)")
    replicas = (3 if args.replicas is None else args.replicas) if args.proxy else 0
    if args.compose is not None:
        replicas = yaml.safe_load(args.compose.read_text())["services"]["app"].get("deploy", {}).get("replicas", 1)
    if args.proxy and not 2 <= replicas <= cluster.MAX_REPLICAS:
        parser.error(f"--replicas must be 2..{cluster.MAX_REPLICAS}")
    if not (1 <= args.sessions <= MAX_SESSIONS * max(1, replicas) and 1 <= args.seconds <= MAX_SECONDS):
        parser.error(f"--sessions must be 1..{MAX_SESSIONS} per server and --seconds 1..{MAX_SECONDS}")
    if args.kill_one_at is not None and not 0 < args.kill_one_at < args.seconds:
        parser.error("--kill-one-at must fall inside --seconds")
    link = dict(parse_qsl(args.link)) if args.link is not None else None
    lines = check() if args.check else load(args.sessions, args.seconds, args.seed, link, replicas, args.image,
                                            args.kill_one_at, args.compose)
    print("\n".join(lines))
    ok = "errors: 0" in lines and all(line == "lost views: 0" for line in lines if line.startswith("lost views"))
    return 0 if args.check or ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
