"""What the app puts on screen, read the way a student sees it: an AppTest run of app.py, its messages, texts and
links, and every number a figure shows (plotly JSON, typed arrays included)."""

from __future__ import annotations

import base64
import json
import re

import numpy as np

from helpers import ROOT

NOT_A_NUMBER = re.compile(r"(?<![\w`])(nan|-?inf|-?infinity)(?![\w`])", re.IGNORECASE)
NUMERIC_KEYS = ("x", "y", "z", "values", "customdata")


def run_app(params: dict | None = None, page: str | None = None, answered: bool | None = True,
            context: dict | None = None, opened: dict | None = None):
    """Run app.py in AppTest with these URL query parameters, on this page file (default: the default page).

    The page is chosen before the first run, as a link to it does (every url_path is its file's name), so only that
    page runs. answered: the page's prediction questions do not wait (Ask before showing unticked), so the page
    shows everything with each answer (as for a student who has answered); False: they wait, whatever the link;
    None: as the link decides (mha_app.state.url.link_asks). context: what a browser
    would report in st.context (e.g. {"theme": "dark"}). opened: the lazy tabs and expanders to open, by key
    (mha_app.ui.layout.tabs and expander compute only what is open): {"attention_tab": "The mask", "input_box": True};
    closed, their content is not on the page."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update(params or {})
    if answered is not None:
        at.session_state["ask"] = not answered
    for key, value in (opened or {}).items():
        at.session_state[key] = value
    at.context.update(context or {})
    if page:
        at.switch_page(page)
    return at.run()


def explorer(at):
    """The attention explorer on the current page: (header, arrays, view), its payload decoded as the browser reads it
    (mha_app.components.explorer.payload.read_payload) with the arrays of every layer's carrier, where the layers go in
    carriers (parts a carrier leaves out for the browser to make, its header's `derived`, are not made here), and
    the view the server hands it (layer, head, query, stage)."""
    from mha_app.components.explorer.payload import read_payload

    elements = [e.proto for e in at.get("bidi_component")]
    parts = {e.component_name: e for e in elements}
    assert "mha_app.attention_explorer" in parts, f"no explorer on the page, only {sorted(parts)}"
    header, arrays = read_payload(parts["mha_app.attention_explorer"].bytes)
    for carrier in (e for e in elements if e.component_name == "mha_app.attention_layer"):
        arrays = arrays | read_payload(carrier.bytes)[1]
    return header, arrays, json.loads(parts["mha_app.attention_explorer_view"].json)["view"]


def explorer_matrix(at, stage: str | None = None, head: int | None = None):
    """One head's matrix (1-based head) at a stage as the explorer draws it (default: the view's head and stage)."""
    header, arrays, view = explorer(at)
    stack = arrays[f"{view['layer']}/{stage or view['stage']}"]
    return stack[0 if len(stack) == 1 else (head or view["head"]) - 1]  # a mask alike in every head is sent once


def assert_clean(at) -> None:
    """No exception and no error message on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def messages(at, kind: str) -> list[str]:
    """The text of every element of one kind (warning, info, error, caption, ...) on the page and in the sidebar."""
    return [element.value for element in getattr(at, kind)]


def texts(at, *kinds: str) -> str:
    """Everything of these element kinds (markdown, caption, latex, ...) on the page, as one string."""
    return "\n".join(value for kind in kinds for value in messages(at, kind))


SHOWN = ("title", "header", "subheader", "markdown", "caption", "latex", "info", "warning", "error", "success")


def page_text(at) -> str:
    """All the words on the page a student reads: headings, text, formulas and messages."""
    return texts(at, *SHOWN)


def share_link(at) -> str:
    """The sidebar's share link."""
    return next(c.value for c in at.code if c.value.startswith("http"))


def figures(at) -> list[dict]:
    """The figures on the current page: each plotly chart's spec, in order, then each heatmap drawn as SVG
    (mha_app.components.matrix) as a figure of its one heatmap: its cells (None where blank), labels and title lines."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")] + [
        {"data": [{"type": "heatmap", "z": d["z"], "x": d["x"], "y": d["y"]}],
         "layout": {"title": {"text": "<br>".join(d["title"])}}} for d in matrices(at)]


def matrices(at) -> list[dict]:
    """The data of each heatmap drawn as SVG on the current page (mha_app.components.matrix.matrix_data), in order."""
    return [json.loads(e.proto.json) for e in at.get("bidi_component") if e.proto.component_name == "mha_app.matrix"]


def figure_titled(at, prefix: str) -> dict:
    """The first figure on the page whose title starts with prefix."""
    matches = [f for f in figures(at) if f["layout"]["title"]["text"].startswith(prefix)]
    assert matches, f"no figure titled {prefix!r} in {[f['layout']['title']['text'] for f in figures(at)]}"
    return matches[0]


def as_figure(fig):
    """A figure function's result as plotly's object: a figure dict (mha_core.figures.base) is built into a go.Figure,
    which checks every property of it against plotly's schema; a go.Figure is returned as it is."""
    import plotly.graph_objects as go

    return go.Figure(fig) if isinstance(fig, dict) else fig


class PlotlyObjects:
    """A module of figure functions (mha_core.figures or one of its modules) whose figures come back as go.Figure
    objects (as_figure: a figure dict is checked by plotly on the way); everything else (labels, numbers, a go.Figure,
    the other parts of a tuple) as the function returns it. Tests of what a figure holds then read plotly's objects,
    whichever kind the function builds."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name: str):
        value = getattr(self._module, name)
        if not callable(value) or isinstance(value, type):
            return value

        def wrapped(*args, **kwargs):
            result = value(*args, **kwargs)
            if isinstance(result, tuple) and result and isinstance(result[0], dict) and "layout" in result[0]:
                return (as_figure(result[0]), *result[1:])
            return as_figure(result) if isinstance(result, dict) and "layout" in result else result

        return wrapped


def as_array(value) -> np.ndarray:
    """A plotly JSON array (plain list or base64 typed array) as NumPy."""
    if isinstance(value, dict) and "bdata" in value:
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            data = data.reshape([int(s) for s in str(shape).split(",")])
        return data
    return np.array(value, dtype=float)


def mosaic_panels(figure: dict) -> dict[tuple[int, int], np.ndarray]:
    """The model view's panels by (layer, head), 1-based, read back from its one heatmap: each column is labelled
    "head h, key ...", each row "layer l, query ..." (the empty gaps between panels have other labels)."""
    trace = figure["data"][0]
    z = as_array(trace["z"]).reshape(len(trace["y"]), len(trace["x"]))

    def blocks(labels: list[str], word: str) -> dict[int, list[int]]:
        found: dict[int, list[int]] = {}
        for i, label in enumerate(labels):
            match = re.match(rf"{word} (\d+), ", label)
            if match:
                found.setdefault(int(match.group(1)), []).append(i)
        return found

    rows, cols = blocks(trace["y"], "layer"), blocks(trace["x"], "head")
    return {(l, h): z[np.ix_(r, c)] for l, r in rows.items() for h, c in cols.items()}


def mosaic_outline(figure: dict) -> tuple[int, int]:
    """The (layer, head), 1-based, of the model view's panel that its red outline frames exactly."""
    trace, shape = figure["data"][0], figure["layout"]["shapes"][0]
    cells_x = [i for i in range(len(trace["x"])) if shape["x0"] < i < shape["x1"]]
    cells_y = [i for i in range(len(trace["y"])) if shape["y0"] < i < shape["y1"]]
    heads = {trace["x"][i].split(",")[0] for i in cells_x}
    layers = {trace["y"][i].split(",")[0] for i in cells_y}
    assert len(heads) == len(layers) == 1, (heads, layers)
    head, layer = heads.pop(), layers.pop()
    # the outline holds the whole panel: every column of that head and every row of that layer
    assert len(cells_x) == sum(label.startswith(head + ",") for label in trace["x"])
    assert len(cells_y) == sum(label.startswith(layer + ",") for label in trace["y"])
    return int(layer.split()[1]), int(head.split()[1])


def _numbers(value) -> np.ndarray | None:
    """A figure's data array as floats, or None when it holds labels (text)."""
    if isinstance(value, dict) and "bdata" in value:
        return as_array(value).astype(np.float64)
    flat = np.array(value, dtype=object).ravel() if isinstance(value, list) else np.array([value], dtype=object)
    if flat.size and all(v is None or isinstance(v, (int, float)) and not isinstance(v, bool) for v in flat):
        return np.array([np.nan if v is None else v for v in flat], dtype=np.float64)
    return None


def _strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict) and "bdata" not in node:  # a typed array: base64 numbers, checked as numbers
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def non_finite_in_figure(spec: dict, typed: set[str] = frozenset()) -> list[str]:
    """NaN or infinity a student could read in one plotly figure (as JSON): infinite numbers, NaN where a hover
    label would print it (customdata), and the words in titles, labels and cell texts. A NaN in x, y or z is drawn
    as nothing (a gap: a left-out bar, a blank heatmap cell). `typed`: words the user typed."""
    found = []
    title = spec["layout"].get("title", {}).get("text", "")
    for trace in spec["data"]:
        for key in NUMERIC_KEYS:
            numbers = _numbers(trace[key]) if key in trace else None
            if numbers is not None and (np.isinf(numbers).any() or key == "customdata" and np.isnan(numbers).any()):
                found.append(f"{title!r}: {key} is not finite")
    for text in _strings({k: v for k, v in spec.items() if k != "config"}):
        for word in NOT_A_NUMBER.findall(text):
            if word.lower().lstrip("-") not in typed:
                found.append(f"{title!r}: {text[:80]!r}")
    return found


def non_finite_on_screen(at, user_text: str = "") -> list[str]:
    """Every NaN or infinity a student could read on the page: in its figures, text and metrics.

    Words the user typed (user_text) are not counted: "nan" may be a token.
    """
    typed = {w.lower() for w in re.findall(r"\w+", user_text)}
    found = [problem for spec in figures(at) for problem in non_finite_in_figure(spec, typed)]
    for kind in ("title", "header", "subheader", "markdown", "caption", "latex", "info", "success"):
        for text in messages(at, kind):
            for word in NOT_A_NUMBER.findall(text):
                if word.lower().lstrip("-") not in typed:
                    found.append(f"{kind}: {text[:80]!r}")
    for metric in at.metric:
        if NOT_A_NUMBER.search(f"{metric.value} {metric.proto.delta}"):
            found.append(f"metric {metric.label}: {metric.value} {metric.proto.delta}")
    return found


def asked(at, kind: str):
    """The question `kind` (mha_core.teaching.questions.KINDS) about the page's example, as the page asks it
    (mha_app.ui.questions.predict: the view's head, query and key, tokens quoted)."""
    from mha_app.copy.markup import quote
    from mha_core.teaching import questions

    settings, ex = at.session_state["view"]
    labels = [quote(t, 40) for t in ex.tokens]
    key_labels = None if ex.key_tokens is None else [quote(t, 40) for t in ex.key_tokens]
    return questions.ask(kind, ex.trace, ex.weights, labels, settings.view.head - 1, settings.view.query - 1,
                         key_labels, ex.cfg.scale, key=min(settings.view.key, len(ex.keys)) - 1)
