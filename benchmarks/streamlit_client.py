"""A Streamlit session without a browser: Streamlit's own websocket protocol, spoken with the BackMsg and ForwardMsg
protobufs that ship in the streamlit package.

A session does for each interaction what the browser's client does: it sends a rerun request (the page, the query
string, the values of the widgets the user changed), reads the elements the script sends back, and the interaction
is over when Streamlit reports that the script finished (a run that ends early because the script asked for a rerun
does not count: the next run follows). It draws nothing, so one process can drive many sessions against one server
(benchmarks.load); `python -m benchmarks.load --check` compares it with a real browser.

Before each websocket, a session makes the requests a browser makes (the page, then the frontend's health ping) and
keeps the cookies it is given, so that behind a proxy with sticky sessions it stays on one replica (`replica` names
it). When the connection is lost (a replica died), `reconnect()` does what the browser does: ping, open a new
websocket (the proxy sends it to a surviving replica) and rerun the page of the last finished run with its query
string and nothing else, since a new server knows none of the old session's widgets; `view` is what that run
showed, to compare with what the student saw before.

Widgets are found by their key (the app keys every control by its setting's name): Streamlit's widget id ends with
"-<key>". Values travel as the browser sends them: numbers as doubles, a selectbox or radio as the option's label.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.request
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode, urlsplit

import websockets
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

FINISHED = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR,
            ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}
MAIN, SIDEBAR = 0, 1  # the first index of an element's delta path: the container it stands in
TEXT_KINDS = ("markdown", "heading", "alert", "code", "text")  # elements whose text a user reads
REPLICA_COOKIE = "MHA_REPLICA"  # deploy/haproxy.cfg's sticky-session cookie: which replica holds the session
_HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy from the env


@dataclass
class Run:
    """What one interaction produced: how long until the app was idle, and what it showed."""

    seconds: float
    elements: dict[tuple, tuple[str, object]] = field(default_factory=dict)  # delta path -> (kind, proto)

    def of_kind(self, kind: str) -> list:
        """The elements of this kind, in the order they stand on the page (by delta path)."""
        return [proto for _, (k, proto) in sorted(self.elements.items()) if k == kind]

    @property
    def exceptions(self) -> list[str]:
        return [f"{e.type}: {e.message}" for e in self.of_kind("exception")]

    @property
    def errors(self) -> list[str]:
        return [a.body for a in self.of_kind("alert") if a.format == Alert.ERROR]

    @property
    def figures(self) -> list[dict]:
        return [json.loads(chart.spec) for chart in self.of_kind("plotly_chart")]

    def view(self) -> list[str]:
        """texts() without the sidebar's notices (info boxes): each reports a correction the app made in that run
        ("h is now 4"), and a new session opened at the corrected URL has nothing to report."""
        return [text for path, text in self._texts() if not (path[0] == SIDEBAR and text in self._notices)]

    @property
    def _notices(self) -> set[str]:
        return {a.body for path, (k, a) in self.elements.items() if k == "alert" and path[0] == SIDEBAR
                and a.format == Alert.INFO}

    def texts(self) -> list[str]:
        """Every text a user can read: Markdown, headings, alerts, code, chart titles and axis labels."""
        return [text for _, text in self._texts()]

    def _texts(self) -> list[tuple[tuple, str]]:
        out = []
        for path, (kind, proto) in sorted(self.elements.items()):  # in the order they stand on the page
            if kind in TEXT_KINDS:
                out.append((path, getattr(proto, "body", "") or getattr(proto, "code_text", "")))
        for fig in self.figures:
            out.append(((MAIN,), json.dumps(fig["layout"].get("title", {}))))
            out.extend(((MAIN,), json.dumps(trace.get(axis, ""))) for trace in fig["data"] for axis in ("x", "y"))
        return out


@dataclass
class Widget:
    key: str
    id: str
    kind: str
    proto: object


class Session:
    """One user's session: open(url), then set(key, value) and goto(url_path), each returning a Run."""

    def __init__(self, base: str, timeout_s: float = 120):
        self.base = base.rstrip("/")
        self.timeout_s = timeout_s
        self.ws = None
        self.widgets: dict[str, Widget] = {}
        self.pages: dict[str, str] = {}      # url path ("" for the default page) -> page script hash
        self.page = ""
        self.query: dict[str, str] = {}
        self.values: dict[str, object] = {}  # widget id -> (value type, value) sent with every rerun
        self.cookies: dict[str, str] = {}
        self.bound: set[str] = set()  # query parameters that widgets on screen are bound to (bind="query-params")
        self.view: tuple[str, dict[str, str], list[str]] | None = None  # page, query, Run.view() of the last run

    @property
    def replica(self) -> str:
        """The replica the proxy's cookie names ("" without a proxy)."""
        return self.cookies.get(REPLICA_COOKIE, "")

    async def open(self, url_path: str = "", params: dict[str, str] | None = None) -> Run:
        self.page, self.query = url_path, dict(params or {})
        await self._http_get(f"/{url_path}" + (f"?{urlencode(self.query)}" if self.query else ""))  # the page
        await self._connect()
        return await self._rerun(page_hash="")

    async def reconnect(self) -> Run:
        """After a lost connection: a new websocket (another replica, behind a proxy) and a rerun of the last finished
        run's page and query string, with no widget state."""
        with contextlib.suppress(Exception):
            await self.ws.close()
        self.page, self.query = (self.view[0], dict(self.view[1])) if self.view else (self.page, self.query)
        self.values = {}
        await self._connect()
        return await self._rerun(page_hash=self.pages.get(self.page, ""))

    def lost(self) -> asyncio.Future:
        """Resolves when the websocket closes (a browser notices at once, even while the student only reads)."""
        return asyncio.ensure_future(self.ws.wait_closed())

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    async def _connect(self) -> None:
        """The frontend's health ping, then the websocket, both with the cookies."""
        await self._http_get("/_stcore/health")
        parts = urlsplit(self.base)
        self.ws = await websockets.connect(f"ws://{parts.netloc}/_stcore/stream", subprotocols=["streamlit"],
                                           origin=self.base, max_size=None, open_timeout=self.timeout_s,
                                           additional_headers=self._cookie_header(), proxy=None)
        self._keep_cookies(self.ws.response.headers.get_all("Set-Cookie"))

    async def _http_get(self, path: str) -> None:
        request = urllib.request.Request(self.base + path, headers=self._cookie_header())

        def get() -> list[str]:
            with _HTTP.open(request, timeout=self.timeout_s) as response:
                response.read()
                return response.headers.get_all("Set-Cookie") or []

        self._keep_cookies(await asyncio.to_thread(get))

    def _cookie_header(self) -> dict[str, str]:
        return {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}

    def _keep_cookies(self, headers: list[str]) -> None:
        for header in headers:
            self.cookies.update({name: morsel.value for name, morsel in SimpleCookie(header).items()})

    async def goto(self, url_path: str) -> Run:
        """Open another page of the app, as its link in the navigation does.

        The server's new query string after a page switch leaves out bound widgets' values that came from the link;
        the browser keeps them in its address bar (seen in Chromium: /?model=X, then a click on a page in the
        navigation, gives /page?model=X), so this client keeps them too.
        """
        self.page = url_path
        return await self._send_and_wait(self._rerun_msg(self.pages[url_path]), keep_bound=True)

    async def set(self, key: str, value) -> Run:
        """Give the widget with this key a new value, as a user does, and wait for the app to finish."""
        widget = self.widgets[key]
        self.values[widget.id] = _state(widget, value)
        if getattr(widget.proto, "query_param_key", ""):  # the browser keeps bound widgets in its address bar,
            if _is_default(widget, value):                 # but not one at its default
                self.query.pop(widget.proto.query_param_key, None)
            else:
                self.query[widget.proto.query_param_key] = _url_value(widget, value)
        return await self._rerun(page_hash=self.pages.get(self.page, ""))

    async def click(self, key: str) -> Run:
        widget = self.widgets[key]
        msg = self._rerun_msg(self.pages.get(self.page, ""))
        msg.rerun_script.widget_states.widgets.add(id=widget.id, trigger_value=True)
        return await self._send_and_wait(msg)

    def _rerun_msg(self, page_hash: str) -> BackMsg:
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = urlencode(self.query)
        state.page_script_hash = page_hash
        state.page_name = self.page
        state.context_info.url = f"{self.base}/{self.page}"
        state.context_info.timezone = "UTC"
        state.context_info.locale = "en-GB"
        for widget_id, (value_type, value) in self.values.items():
            w = state.widget_states.widgets.add(id=widget_id)
            if value_type == "string_array_value":
                w.string_array_value.data.extend(value)
            else:
                setattr(w, value_type, value)
        return msg

    async def _rerun(self, page_hash: str) -> Run:
        return await self._send_and_wait(self._rerun_msg(page_hash))

    async def _send_and_wait(self, msg: BackMsg, keep_bound: bool = False) -> Run:
        start = time.perf_counter()
        before = dict(self.query)
        await self.ws.send(msg.SerializeToString())
        elements: dict[tuple, tuple[str, object]] = {}
        deadline = start + self.timeout_s
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), timeout=max(0.1, deadline - time.perf_counter()))
            fwd = ForwardMsg()
            fwd.ParseFromString(raw)
            kind = fwd.WhichOneof("type")
            if kind == "script_finished" and fwd.script_finished in FINISHED:
                break
            if kind == "script_finished":  # ended early for a rerun: the next run replaces what it sent
                elements = {}
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                element = fwd.delta.new_element
                element_kind = element.WhichOneof("type")
                elements[tuple(fwd.metadata.delta_path)] = (element_kind, getattr(element, element_kind))
            elif kind == "navigation":
                self.pages = {p.url_pathname: p.page_script_hash for p in fwd.navigation.app_pages}
            elif kind == "new_session" and fwd.new_session.app_pages:
                self.pages = {p.url_pathname: p.page_script_hash for p in fwd.new_session.app_pages}
            elif kind == "page_info_changed":
                self.query = dict(parse_qsl(fwd.page_info_changed.query_string, keep_blank_values=True))
                if keep_bound:
                    self.query |= {k: v for k, v in before.items() if k in self.bound and k not in self.query}
        run = Run(time.perf_counter() - start, elements)
        self.view = (self.page, dict(self.query), run.view())
        self.widgets = {}
        for kind, proto in elements.values():
            widget_id = getattr(proto, "id", "")
            if widget_id.startswith("$$ID-") and widget_id.count("-") >= 2:
                key = widget_id.split("-", 2)[2]
                self.widgets[key] = Widget(key, widget_id, kind, proto)
                if getattr(proto, "set_value", False) and widget_id in self.values:  # the script set it (st.session_
                    self.values[widget_id] = _state(self.widgets[key], _value(kind, proto))  # state): as the browser
                if getattr(proto, "query_param_key", ""):
                    self.bound.add(proto.query_param_key)
        return run


def _state(widget: Widget, value) -> tuple[str, object]:
    """The WidgetState field and value the browser sends for this kind of widget."""
    if widget.kind == "number_input":
        return "double_value", float(value)
    if widget.kind == "checkbox":
        return "bool_value", bool(value)
    if widget.kind == "button_group":
        return "string_array_value", [str(value)]
    return "string_value", str(value)  # selectbox, radio (the option's label), text_area, text_input


def _url_value(widget: Widget, value) -> str:
    return str(value).lower() if widget.kind == "checkbox" else str(value)


def _value(kind: str, proto):
    """The value a widget's element carries when the script set it."""
    if kind == "selectbox":
        return proto.raw_value
    return proto.raw_values[0] if kind == "button_group" else proto.value


def _is_default(widget: Widget, value) -> bool:
    """Whether value is the widget's default (Streamlit then leaves a bound widget out of the URL)."""
    proto = widget.proto
    if widget.kind == "selectbox":
        return 0 <= proto.default < len(proto.options) and proto.options[proto.default] == str(value)
    if widget.kind == "number_input":
        return float(proto.default) == float(value)
    if widget.kind in ("checkbox", "text_area", "text_input"):
        return proto.default == value
    return False
