"""The attention explorer: every head of step 2 in the browser, so that another head, query, stage or layer needs no
server.

The page shows a Streamlit custom component (v2) that receives the example's data once (payload.py: every head at every
stage, binary, and what each key adds: the contributions stage) and draws the head grid, the focused head's matrix at
the chosen stage (and its zoom window) and the chosen query's weights (or contribution shares). Switching head, query,
stage or a sent layer redraws at once in the browser; the choice then goes back as component state, and `_follow` writes
it into the app's settings (the sidebar's head, query and layer, the link's stage), so the URL, the share link, the
sidebar and the other pages follow.

Why several elements. A component's `data` is its only way in from the server, and a rerun sends an element again
unless its message is unchanged (and at least global.minCachedMessageSize, 10 kB). So the large element
(`_EXPLORER`: the drawing code and the payload) never carries the view: its message is the same on every rerun of
an example, and the browser is sent a reference to the copy it has. The view the server holds travels in a second,
tiny element (`_VIEW`, a few hundred bytes, sent on every rerun), which hands it to the drawing code; a view that
the explorer already shows, or one older than a change made there since (`seq`), draws nothing. When a trained
model's layers do not all fit in the explorer's payload (all-MiniLM-L6-v2 past about 70 tokens: some 3.2 MB a layer at
150), `_EXPLORER` gets a frame without layers and each layer travels in a carrier element of its own (`_LAYER`,
layer.js: it hands its bytes to the explorer through the page's registry, window.__mhaExplorer, and draws nothing),
the layer on view first, then the others from the nearest, up to payload.CARRIERS_BUDGET (24 MiB: MiniLM's 6 layers
at 150 tokens, 13 of SmolLM2's 30); each carrier is a pure function of the example and its layer, so a rerun (a layer
change too) sends references for those the browser has and bytes for the others only, and the explorer draws a
layer as soon as its carrier has come ("Loading layer L…" until then; a layer further away than the budget reaches
comes with the rerun that its choice starts).

Canvas, not Plotly.js: the time from a head change to the drawn frame, measured in Chromium for the focused matrix
and the query's bars (benchmarks/explorer_draw.py; n = 64, 512 and 2048, the last two as 171² and 187² block
means), had medians of 64 to 210 ms with Plotly.react (maxima up to 580 ms) and 15 to 18 ms, one frame, with a
canvas, in two runs on a shared 2-core machine. The target is 100 ms from the click. Plotly.js would also be
4.8 MB of JavaScript inside the element's message. The same drawing code writes an SVG file for "Save SVG", and the
whole explorer, its code and the bytes the page holds, goes into one HTML file that opens with no server
("Save the explorer as a web page", standalone.py).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence

import numpy as np
import streamlit as st

from mha_app import components
from mha_app.components.explorer import payload
from mha_app.components.explorer.standalone import read, standalone_page
from mha_app.copy import example as example_copy
from mha_app.copy import explorer as say
from mha_app.copy.experiments import cross_attention_text, heads_off_text
from mha_app.copy.markup import plain
from mha_app.copy.models import input_source, spelling_note
from mha_app.copy.notes import untrained_line
from mha_app.run.compute import example, pretrained_model, shared
from mha_app.state.settings import Settings, Spec, default
from mha_app.ui.charts import chart_table
from mha_app.ui.layout import zoom_start
from mha_app.ui.questions import explored
from mha_core import figures
from mha_core.figures import describe

KEY = "explorer"        # the component's key: its state, {"view": {...}}, is st.session_state[KEY]
SIZES = "explorer_sizes"  # what _follow checks a view against: (heads, query tokens, layers)
OPENED_BY = "explorer_opened_by"  # the kind of question whose answer opened the explorer on its page


Window = tuple[int, int, int, int] | None  # a zoom window: its rows r0:r1 and columns c0:c1 (payload.zoom_arrays)
_EXPLORER = st.components.v2.component("mha_app.attention_explorer", html=read("explorer.html"),
                                       css=read("explorer.css"), js=read("explorer.js"))
# These two draw nothing and need none of the shared helpers: their code travels in every message they send.
_VIEW = st.components.v2.component("mha_app.attention_explorer_view", js=components.read(__package__, "view.js"))
_LAYER = st.components.v2.component("mha_app.attention_layer", js=components.read(__package__, "layer.js"))


def _weights(spec: Spec, ex) -> list:
    """Each layer's attention weights (MHAWeights) of the example: a trained model's every layer, else its own."""
    if ex.run is None:
        return [ex.weights]
    return [layer.attention for layer in pretrained_model(spec.model).layer_weights]


def _traces(spec: Spec, ablated_layer: int | None, layers: tuple[int, ...]) -> tuple:
    """(example, {layer: its trace}, {layer: its attention weights}) for these layers (1-based) of the example of
    spec."""
    ex = example(spec, ablated_layer or layers[0])
    traces = ex.run.layers if ex.run is not None else [ex.trace]
    weights = _weights(spec, ex)
    return (ex, {layer: traces[layer - 1] if len(traces) > 1 else ex.trace for layer in layers},
            {layer: weights[layer - 1] if len(weights) > 1 else weights[0] for layer in layers})


@shared(8, 256 * 2**20, "Averaging every head's matrices over blocks…")
def _overviews(spec: Spec, ablated_layer: int | None, layers: tuple[int, ...]) -> dict:
    """Each layer's payload.overview_arrays (and contributions): computed once per example, wherever the zoom window
    goes."""
    _, traces, weights = _traces(spec, ablated_layer, layers)
    return {layer: payload.overview_arrays(trace, weights[layer]) for layer, trace in traces.items()}


@shared(8, 256 * 2**20)
def _packed(spec: Spec, ablated_layer: int | None, layers: tuple[int, ...], window: Window) -> bytes:
    ex, traces, weights = _traces(spec, ablated_layer, layers)
    return payload.build_payload(traces, ex.tokens, ex.key_tokens,
                                 layer_count=len(ex.run.layers) if ex.run is not None else 1,
                                 scale=ex.cfg.softmax_scale, window=window, weights=weights,
                                 overviews=_overviews(spec, ablated_layer, layers))


def _carrier_id(spec: Spec, window: Window, layer: int) -> str:
    """A carrier's id, known before its bytes: a hash of what they are a pure function of (the settings that make
    the example, the zoom window, the layer), so the frame can name every layer's carrier without building them."""
    return hashlib.blake2b(repr((payload.VERSION, spec, window, layer)).encode(), digest_size=16).hexdigest()


@shared(64, 2**20)
def _all_fit(spec: Spec, window: Window) -> bool:
    """Whether a trained model's every layer fits in one payload (payload.layers_that_fit): decided once per example
    and window, since the layers alike in shape take the same bytes whichever is on view."""
    ex = example(spec, 1)
    return len(payload.layers_that_fit(ex.run.layers, 1, window, weights=_weights(spec, ex))) == len(ex.run.layers)


@shared(48, 512 * 2**20)
def _carrier(spec: Spec, window: Window, layer: int) -> bytes:
    """One layer's carrier bytes (payload.build_layer): built when it is first sent, once per example and window."""
    ex, traces, weights = _traces(spec, None, (layer,))
    return payload.build_layer(traces[layer], layer, scale=ex.cfg.softmax_scale, window=window,
                               weights=weights[layer], overview=_overviews(spec, None, (layer,))[layer],
                               name=_carrier_id(spec, window, layer))


@shared(8, 16 * 2**20)
def _frame(spec: Spec, layer_count: int, window: Window) -> bytes:
    ex = example(spec, 1)
    return payload.build_frame(ex.trace, ex.tokens, ex.key_tokens, scale=ex.cfg.softmax_scale, window=window,
                               carried={layer: _carrier_id(spec, window, layer) for layer in range(1, layer_count + 1)})


def explorer_payload(spec: Spec, layer: int, window=None) -> tuple[bytes, list]:
    """The explorer's bytes for the example of `spec` seen at `layer`, and its carriers (each one layer's arrays) as
    (layer, a function that builds its bytes), in the order they go. A trained model's every layer in one payload
    when all fit in payload.LAYERS_BUDGET (then the same bytes whatever the layer, and no carrier); when they do
    not, a frame without layers (also the same whatever the layer) and each layer in a carrier of its own, the layer
    on view first, then the others from the nearest, as many as payload.CARRIERS_BUDGET allows (each built only
    when it is sent, so the layer on view is drawn before the others are built). With heads switched off, the run
    depends on the layer they are in, so that layer alone is sent."""
    ex = example(spec, layer)
    if ex.run is None or spec.ablate:
        return _packed(spec, layer if spec.card and spec.ablate else None, (ex.layer,), window), []
    count = len(ex.run.layers)
    if _all_fit(spec, window):
        return _packed(spec, None, tuple(range(1, count + 1)), window), []
    size = len(_carrier(spec, window, layer))  # about every layer's: they have the same shapes
    sent = payload.carriers_to_send(dict.fromkeys(range(1, count + 1), size), layer)
    return _frame(spec, count, window), [(other, functools.partial(_carrier, spec, window, other)) for other in sent]


def _whole(value, lo: int, hi: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi


def _follow() -> None:
    """The explorer's choice (its state) into the settings, before the script reruns: the sidebar's head, query and
    layer (bound to the URL), and the stage, which no widget holds, into the link itself. Values that do not fit
    this example (a view sent by hand, say) are left out."""
    view = (st.session_state.get(KEY) or {}).get("view") or {}
    heads, n, layers = st.session_state.get(SIZES, (0, 0, 1))
    head, query, layer = (view.get(k) for k in ("head", "query", "layer"))
    question = st.session_state.get(OPENED_BY)
    if question and _whole(head, 1, heads) and _whole(query, 1, n) and (layers == 1 or _whole(layer, 1, layers)):
        explored(question, head, query, layer if layers > 1 else None)  # the drawn explorer shows its answer too
    if _whole(view.get("head"), 1, heads):
        st.session_state.head = view["head"]
    if _whole(view.get("query"), 1, n):
        st.session_state.query = view["query"]
    if layers > 1 and _whole(view.get("layer"), 1, layers):
        st.session_state.layer = view["layer"]
    if view.get("stage") in payload.STAGES:
        st.session_state.stage = view["stage"]
        if view["stage"] == default("stage"):
            st.query_params.pop("stage", None)
        else:
            st.query_params["stage"] = view["stage"]


def zoom_controls(n: int, m: int) -> tuple[int, int, int, int] | None:
    """Where the zoom window lies, by two number inputs, when the matrices are larger than it."""
    if n <= figures.ZOOM and m <= figures.ZOOM:
        return None
    st.markdown(say.zoom_intro(figures.ZOOM))
    rows, cols = st.columns(2)
    return figures.zoom_window(n, m, zoom_start(rows, "zoom_query", n), zoom_start(cols, "zoom_key", m))


def attention_explorer(settings: Settings, ex, opened_by: str | None = None) -> None:
    """The explorer for this example (Example), with its zoom window's controls when it needs one; opened_by: the
    kind of question whose answer it shows (another head or query chosen in it is then that question, revealed)."""
    st.session_state[OPENED_BY] = opened_by
    n, m = ex.trace.weights.shape[1:]
    window = zoom_controls(n, m)
    data, carriers = explorer_payload(settings.spec, ex.layer, window)
    layer_count = len(ex.run.layers) if ex.run is not None else 1
    st.session_state[SIZES] = (ex.cfg.n_heads, n, layer_count)
    seq = ((st.session_state.get(KEY) or {}).get("view") or {}).get("seq", 0)
    view = dict(layer=ex.layer, head=settings.view.head, query=settings.view.query,
                stage=settings.view.stage)
    with st.container(gap=None):
        _VIEW(key="explorer_view", data={"view": view, "seq": seq})
        _EXPLORER(key=KEY, data=data, on_view_change=_follow)
        for layer, carrier in carriers:  # keyed by what they carry, wherever they stand: one unchanged is not resent
            _LAYER(key=f"explorer_layer_{layer}", data=carrier())
    st.download_button("Save the explorer as a web page (.html, opens offline)",
                       functools.partial(saved_page, settings, ex, data, carriers, view),
                       file_name="attention_explorer.html", mime="text/html", on_click="ignore",
                       icon=":material/download:")
    describe_view(settings, ex)


def saved_page(settings: Settings, ex, data: bytes, carriers: list, view: dict) -> bytes:
    """web_page with what the page says about this example beside the explorer (built when the button is clicked)."""
    spec = settings.spec
    notes = [heads_off_text(spec.ablate, "attention weights"), cross_attention_text(ex.n, ex.m_source),
             *ex.notes, input_source(spec) if spec.input == "random" else "", untrained_line(spec),
             spelling_note(spec)]
    return web_page(data, carriers, view, example_copy.describe(settings, ex, layer=False), notes)


def web_page(data: bytes, carriers: list, view: dict, description: str, notes: Sequence[str] = ()) -> bytes:
    """The explorer as it is on the page, as one HTML file (standalone.py). description: what the example is
    (copy.example.describe); notes: what the page says about it (the app's Markdown, shown as plain text)."""
    header = payload.read_header(data)
    count, held = header["layer_count"], [layer for layer, _ in carriers] or header["layers"]
    about = [description, say.saved_choices(count, held), *map(plain, notes), say.SAVED_FROM]
    return standalone_page(data, [carrier() for _, carrier in carriers], view, "Attention explorer",
                           [text for text in about if text]).encode()


def describe_view(settings: Settings, ex) -> None:
    """The explorer's text alternative, from the server's copy of the view: the focused head's weights for the
    chosen query in words, and the row in a table (the canvas names itself in the browser, at every change)."""
    tr, head, query = ex.trace, settings.view.head - 1, settings.view.query - 1
    blocked = tr.mask[head, query] if tr.mask is not None else np.zeros(tr.weights.shape[2], bool)
    description = describe.weight_row(np.where(blocked, np.nan, tr.weights[head, query]),
                                      describe.names(ex.tokens)[query], describe.names(ex.keys), head)
    with st.expander("This chart in words and numbers", icon=":material/table_view:"):
        chart_table(description)
