"""Several app replicas behind HAProxy on the loopback interface, as deploy/compose.yaml runs them on one machine.

Used by `python -m benchmarks.load --proxy`. The replicas are `streamlit run app.py` processes, or containers of a
built image (`--image`, run by podman with the host's network, each on its own loopback port). The proxy is Debian's
`haproxy` with deploy/haproxy.cfg itself: only the address it listens on and its servers change, from the compose
service's DNS names to this machine's loopback ports, so the sticky cookie, the health checks, the timeouts and the
redispatch measured here are the deployed ones. Everything listens on 127.0.0.1 and is stopped on the way out.

`--compose deploy/compose.yaml` runs the stack itself instead (compose_replicas): `podman-compose up -d` (or
`docker compose`), the proxy's published port on 127.0.0.1, and `down` at the end.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from benchmarks.browser import ROOT, free_port, streamlit_process

HAPROXY_CFG = ROOT / "deploy" / "haproxy.cfg"
MAX_REPLICAS = 8


@dataclass
class Replica:
    name: str                   # HAProxy's server name, and the value of its sticky cookie
    base: str                   # its own address, http://127.0.0.1:port
    pid: int                    # the server's process on this machine (for memory and CPU)
    kill: Callable[[], None]    # SIGKILL, as a crashed or evicted replica
    label: str = ""             # what the report calls it, if not its name (a compose container's name)


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


_M64 = 2**64 - 1
_P1, _P2, _P3, _P4, _P5 = (11400714785074694791, 14029467366897019727, 1609587929392839161, 9650029242287828579,
                           2870177450012600261)


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def _round(acc: int, lane: int) -> int:
    return _rotl((acc + lane * _P2) & _M64, 31) * _P1 & _M64


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64, the hash HAProxy's dynamic cookies are made of (the reference algorithm, written out)."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M64, (seed + _P2) & _M64, seed, (seed - _P1) & _M64]
        while i + 32 <= n:
            v = [_round(acc, lane) for acc, lane in zip(v, struct.unpack_from("<4Q", data, i), strict=True)]
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M64
        for acc in v:
            h = ((h ^ _round(0, acc)) * _P1 + _P4) & _M64
    else:
        h = (seed + _P5) & _M64
    h = (h + n) & _M64
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", data, i)[0]), 27) * _P1 + _P4) & _M64
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ (struct.unpack_from("<I", data, i)[0] * _P1 & _M64), 23) * _P2 + _P3) & _M64
        i += 4
    for byte in data[i:]:
        h = _rotl(h ^ (byte * _P5 & _M64), 11) * _P1 & _M64
    h = (h ^ (h >> 33)) * _P2 & _M64
    h = (h ^ (h >> 29)) * _P3 & _M64
    return h ^ (h >> 32)


def dynamic_cookie(key: str, ip: str, port: int) -> str:
    """The sticky cookie HAProxy gives a server under `cookie ... dynamic`: XXH64 of the `dynamic-cookie-key`, the
    server's IPv4 address and its port (4 bytes, network order), in hex (HAProxy's srv_set_dyncookie)."""
    return f"{xxh64(key.encode() + socket.inet_aton(ip) + struct.pack('>I', port)):016x}"


def compose_command() -> list[str]:
    """podman-compose (on PATH or beside this Python, as pip installs it), else Docker's `docker compose`."""
    beside = Path(sys.executable).parent / "podman-compose"
    for found in (shutil.which("podman-compose"), str(beside) if beside.exists() else None):
        if found:
            return [found]
    if shutil.which("docker"):
        return ["docker", "compose"]
    raise RuntimeError("--compose needs podman-compose (pip install podman-compose) or Docker Compose")


def _engine(tool: list[str]) -> str:
    return "docker" if tool[0] == "docker" else "podman"


def _inspect(engine: str, cid: str, fmt: str) -> str:
    return subprocess.run([engine, "inspect", "--format", fmt, cid], check=True, capture_output=True, text=True,
                          timeout=30).stdout.strip()


def main_process(pid: int) -> int:
    """HAProxy's worker under its master (`haproxy -W`), else the process itself: the one whose CPU counts."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return pid
    return int(children[0]) if children else pid


@contextlib.contextmanager
def compose_replicas(compose_file: Path, start_timeout_s: float = 300) -> Iterator[tuple[str, list[Replica], int]]:
    """The compose stack itself, up with its proxy's port published on 127.0.0.1; yields (the proxy's address, the
    app replicas, the proxy's pid) once every replica passes the compose health check and the proxy sends to each.

    A replica is named by the sticky cookie the proxy gives it (dynamic_cookie of its address), as the sessions see
    it; its `label` is the container's name. `down` at the end, whatever happened.
    """
    tool = compose_command()
    engine = _engine(tool)
    compose = yaml.safe_load(compose_file.read_text())
    project = compose.get("name") or compose_file.resolve().parent.name
    cfg = (compose_file.parent / compose["services"]["proxy"]["volumes"][0].split(":")[0]).read_text()
    key = re.search(r"^\s+dynamic-cookie-key (\S+)", cfg, re.M).group(1)
    app_port = int(re.search(r"^\s+server-template \S+ \d+ app:(\d+)", cfg, re.M).group(1))
    port = int(os.environ.get("MHA_PORT") or free_port())
    env = {**os.environ, "MHA_PORT": str(port), "MHA_ADDRESS": "127.0.0.1"}

    def compose_run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([*tool, "-f", str(compose_file), *args], env=env, check=check, capture_output=True,
                              text=True, timeout=start_timeout_s)

    def service(name: str) -> list[str]:
        return subprocess.run([engine, "ps", "-q", "--filter", f"label=com.docker.compose.project={project}",
                               "--filter", f"label=com.docker.compose.service={name}"], check=True,
                              capture_output=True, text=True, timeout=30).stdout.split()

    try:
        up = compose_run("up", "-d", check=False)
        if up.returncode != 0:
            raise RuntimeError(f"compose up failed:\n{up.stdout[-2000:]}{up.stderr[-2000:]}")
        deadline = time.monotonic() + start_timeout_s
        ids = service("app")
        if not ids or len(service("proxy")) != 1:
            raise RuntimeError(f"compose up started {len(ids)} app containers and {len(service('proxy'))} proxies")
        replicas = []
        for cid in ids:
            ip = _inspect(engine, cid, "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}")
            replicas.append(Replica(dynamic_cookie(key, ip, app_port), f"http://{ip}:{app_port}",
                                    int(_inspect(engine, cid, "{{.State.Pid}}")),
                                    lambda cid=cid: subprocess.run([engine, "kill", cid], capture_output=True,
                                                                   timeout=30),
                                    _inspect(engine, cid, "{{.Name}}").lstrip("/")))
        for cid, r in zip(ids, replicas, strict=True):  # the compose file's own health check, run now
            while subprocess.run([engine, "healthcheck", "run", cid] if engine == "podman" else
                                 [engine, "exec", cid, *compose["services"]["app"]["healthcheck"]["test"][1:]],
                                 capture_output=True, timeout=30).returncode != 0:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{r.label} did not pass its health check")
                time.sleep(1)
        base = f"http://127.0.0.1:{port}"
        wanted, seen = {r.name for r in replicas}, set()
        while seen != wanted:  # the proxy has found every replica in DNS and seen it healthy
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=5) as answer:
                    seen |= {c.split(";")[0].split("=", 1)[1] for c in answer.headers.get_all("Set-Cookie") or []
                             if c.startswith("MHA_REPLICA=")}
            except OSError:
                pass
            if not seen <= wanted:
                raise RuntimeError(f"the proxy's cookies {sorted(seen - wanted)} match no replica's address")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the proxy sends to {len(seen)} of {len(wanted)} replicas")
            time.sleep(0.3)
        yield base, replicas, main_process(int(_inspect(engine, service("proxy")[0], "{{.State.Pid}}")))
    finally:
        compose_run("down", "-t", "5", check=False)


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
