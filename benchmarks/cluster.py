"""Several app replicas behind HAProxy on the loopback interface, as deploy/compose.yaml runs them on one machine.

Used by `python -m benchmarks.load --proxy`. The replicas are `streamlit run app.py` processes, or containers of a
built image (`--image`, run by podman with the host's network, each on its own loopback port). The proxy is Debian's
`haproxy` with deploy/haproxy.cfg itself: only the address it listens on and its servers change, from the compose
service's DNS names to this machine's loopback ports, so the sticky cookie, the health checks, the timeouts and the
redispatch measured here are the deployed ones. Everything listens on 127.0.0.1 and is stopped on the way out.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmarks.browser import ROOT, free_port, streamlit_process

HAPROXY_CFG = ROOT / "deploy" / "haproxy.cfg"
MAX_REPLICAS = 8


@dataclass
class Replica:
    name: str                   # HAProxy's server name, and the value of its sticky cookie
    base: str                   # its own address, http://127.0.0.1:port
    pid: int                    # the server's process on this machine (for memory and CPU)
    kill: Callable[[], None]    # SIGKILL, as a crashed or evicted replica


def loopback_config(servers: dict[str, int], port: int, text: str | None = None) -> str:
    """deploy/haproxy.cfg with its frontend on 127.0.0.1:port and one server per (name, loopback port).

    The compose file's DNS part goes: the `resolvers` section and the `server-template` line, whose place the
    servers take, each with its name as its cookie value.
    """
    text = HAPROXY_CFG.read_text() if text is None else text
    text = re.sub(r"^resolvers .*?(?=^\S)", "", text, flags=re.M | re.S)
    text, binds = re.subn(r"^(\s+)bind \S+", rf"\g<1>bind 127.0.0.1:{port}", text, flags=re.M)
    lines = "".join(f"    server {name} 127.0.0.1:{p} check cookie {name}\n" for name, p in servers.items())
    text, templates = re.subn(r"^\s+server-template .*\n", lambda _: lines, text, flags=re.M)
    if (binds, templates) != (1, 1):
        raise ValueError(f"{HAPROXY_CFG} must have one `bind` and one `server-template` line")
    return text


def _answers(url: str, deadline: float, what: str, alive: Callable[[], bool]) -> None:
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError as err:
            if not alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not answer at {url}") from err
            time.sleep(0.2)


@contextlib.contextmanager
def process_replicas(n: int, env: dict[str, str] | None = None) -> Iterator[list[Replica]]:
    """n `streamlit run app.py` servers, each on a free loopback port."""
    with contextlib.ExitStack() as stack:
        replicas = []
        for i in range(1, n + 1):
            base, proc = stack.enter_context(streamlit_process(env=env))
            replicas.append(Replica(f"app{i}", base, proc.pid,
                                    lambda pid=proc.pid: os.killpg(pid, signal.SIGKILL)))
        yield replicas


@contextlib.contextmanager
def container_replicas(n: int, image: str, start_timeout_s: float = 120) -> Iterator[list[Replica]]:
    """n containers of the image, run by podman on the host's network, each listening on its own loopback port."""
    if shutil.which("podman") is None:
        raise RuntimeError("--image needs podman (apt-get install podman runc)")
    ids = []
    try:
        replicas = []
        for i in range(1, n + 1):
            port = free_port()
            cid = subprocess.run(
                ["podman", "run", "-d", "--rm", "--network", "host", "--name", f"mha-bench-{port}", image, "mha-viz",
                 "--server.address=127.0.0.1", f"--server.port={port}", "--server.headless=true"],
                check=True, capture_output=True, text=True, timeout=60).stdout.strip()
            ids.append(cid)
            pid = int(subprocess.run(["podman", "inspect", "--format", "{{.State.Pid}}", cid], check=True,
                                     capture_output=True, text=True, timeout=30).stdout)
            replicas.append(Replica(f"app{i}", f"http://127.0.0.1:{port}", pid,
                                    lambda cid=cid: subprocess.run(["podman", "kill", cid], capture_output=True,
                                                                   timeout=30)))
        deadline = time.monotonic() + start_timeout_s
        for r in replicas:
            _answers(f"{r.base}/_stcore/health", deadline, f"container {r.name}", lambda: True)
        yield replicas
    finally:
        for cid in ids:
            subprocess.run(["podman", "rm", "-f", "-t", "2", cid], capture_output=True, timeout=60)


@contextlib.contextmanager
def haproxy(replicas: list[Replica], start_timeout_s: float = 20) -> Iterator[tuple[str, subprocess.Popen]]:
    """Debian's haproxy with deploy/haproxy.cfg in front of the replicas; yields (its address, its process)."""
    if shutil.which("haproxy") is None:
        raise RuntimeError("--proxy needs HAProxy (apt-get install haproxy)")
    port = free_port()
    servers = {r.name: int(r.base.rsplit(":", 1)[1]) for r in replicas}
    with tempfile.TemporaryDirectory(prefix="mha-bench-haproxy-") as tmp:
        cfg = Path(tmp) / "haproxy.cfg"
        cfg.write_text(loopback_config(servers, port))
        log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"mha-bench-haproxy-{port}.log"
        with log_path.open("w") as log:
            proc = subprocess.Popen(["haproxy", "-db", "-f", str(cfg)], stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            try:
                base = f"http://127.0.0.1:{port}"
                _answers(f"{base}/_stcore/health", time.monotonic() + start_timeout_s, "haproxy",
                         lambda: proc.poll() is None)
                yield base, proc
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14 and 15)
