"""What every page shares: the sidebar controls (bound to the URL), the cached example, and small layout helpers.

Not a page itself: app.py builds the controls before running the chosen page, and pages call `view()`.
"""

from __future__ import annotations

import streamlit as st

from mha_core import ConfigError
from mha_core.app_state import (
    APP_MAX_D_MODEL,
    APP_MAX_TEXT_CHARS,
    APP_MAX_TOKENS,
    BACKENDS,
    INPUTS,
    MAX_SEED,
    MODELS,
    STAGES,
    Settings,
    check_query_params,
    closest_head_count,
    head_options,
    quote,
)
from mha_core.example import Example, build_example, build_pretrained_example, torch_difference
from mha_core.export import example_snippet, settings_json, trace_npz
from mha_core.pretrained import EXAMPLE_SENTENCES
from mha_core.source import step_source

BIND = "query-params"
INPUT_CAPTIONS = ["your own words", "n random vectors", "3 tokens, d_model 4: check by hand"]


@st.cache_resource(show_spinner="Loading all-MiniLM-L6-v2…")
def minilm():
    """The pretrained model, loaded once per process and shared (it is never changed)."""
    from mha_core.pretrained import load_minilm

    return load_minilm()


@st.cache_data(max_entries=16, show_spinner="Computing attention…")
def cached_example(model: str, input_mode: str, text: str, n: int, d_model: int, n_heads: int, seed: int,
                   positional: bool, causal: bool, pad: int, backend: str, layer: int) -> Example:
    if model == MODELS[1]:
        return build_pretrained_example(minilm(), text, layer, backend)
    return build_example(input_mode, text, n, d_model, n_heads, seed, positional, causal, pad, backend)


@st.cache_data(max_entries=16, show_spinner=False)
def cached_torch_difference(*settings) -> float:
    return torch_difference(cached_example(*settings))


def _show_url_warnings() -> None:
    """Explain, once per session, any URL setting that could not be used as given."""
    if "url_checked" not in st.session_state:
        st.session_state.url_checked = True
        st.session_state.url_warnings = check_query_params(st.query_params.to_dict())
    for problem in st.session_state.url_warnings:
        st.warning(problem, icon=":material/warning:")


def _keep_valid(key: str, options: list, fallback) -> None:
    """Before a selectbox is drawn: if its remembered value is no longer an option, switch to `fallback`."""
    if key in st.session_state and st.session_state[key] not in options:
        st.session_state[key] = fallback


def _head_count_control(d_model: int) -> int:
    options = head_options(d_model)
    if "h" not in st.session_state and "h" in st.query_params:
        # First run from a link: an unusable h becomes the nearest head count that works, kept in the URL.
        raw = st.query_params["h"]
        wanted = int(raw) if raw.isdigit() else Settings.h
        if wanted not in options:
            st.session_state.h = closest_head_count(d_model, wanted)
    elif st.session_state.get("h") not in (None, *options):
        old = st.session_state.h
        st.session_state.h = closest_head_count(d_model, old)
        st.sidebar.info(f"h = {old} does not divide d_model = {d_model}, so h is now {st.session_state.h}.")
    return st.sidebar.selectbox(
        "Heads h", options, index=options.index(closest_head_count(d_model, Settings.h)), key="h", bind=BIND,
        help=f"Only head counts that divide d_model = {d_model} are offered: each head gets d_model / h dimensions.")


def _use_example() -> None:
    if st.session_state.example:
        st.session_state.text = EXAMPLE_SENTENCES[st.session_state.example]


def sidebar_controls() -> Settings:
    """Draw the shared controls (every one bound to the URL) and return the settings they hold."""
    sb = st.sidebar
    d = Settings()
    sb.header("Model")
    model = sb.radio("Weights", MODELS, key="model", bind=BIND,
                     help="Random weights show the mechanics at any size; the pretrained model shows real heads.")
    real = model == MODELS[1]
    layer = d.layer
    if real:
        layer = sb.selectbox("Layer", list(range(1, 7)), key="layer", bind=BIND,
                             help="MiniLM has 6 layers; the step-through pages show this layer's attention.")
    sb.header("Input")
    if real:
        input_mode = "sentence"
    else:
        input_mode = sb.radio("Input", INPUTS, key="input", bind=BIND, captions=INPUT_CAPTIONS, horizontal=False)
    text, n = d.text, d.n
    if real:
        sb.selectbox("Example sentences", list(EXAMPLE_SENTENCES), index=None, key="example",
                     placeholder="Pick an example…", on_change=_use_example,
                     help="Fills the sentence box; you can edit it afterwards.")
    if input_mode == "sentence":
        text = sb.text_area("Sentence", value=d.text, max_chars=APP_MAX_TEXT_CHARS, key="text", bind=BIND,
                            help="Split into words and punctuation marks; each one becomes a token.")
    elif input_mode == "random":
        n = sb.number_input("Tokens n", 1, APP_MAX_TOKENS, d.n, key="n", bind=BIND)
    d_model, h = d.d_model, d.h
    if real:
        sb.caption("all-MiniLM-L6-v2 fixes d_model = 384 and h = 12 (d_k = 32).")
    elif input_mode == "tiny":
        sb.caption("The tiny example fixes d_model = 4 and h = 2 (d_k = 2).")
    else:
        d_model = sb.number_input("d_model", 1, APP_MAX_D_MODEL, d.d_model, key="d_model", bind=BIND,
                                  help="Width of every token vector.")
        h = _head_count_control(d_model)
        sb.caption(f"Each head works in d_k = d_model / h = {d_model} / {h} = {d_model // h} dimensions.")
    seed, pe, causal, pad = d.seed, d.pe, d.causal, d.pad
    if real:
        sb.caption("The encoder's tokens see each other in both directions, so there are no masks here.")
    else:
        if input_mode != "tiny":
            seed = sb.number_input("Seed", 0, MAX_SEED, d.seed, key="seed", bind=BIND,
                                   help="Fixes the random weights and embeddings: same seed, same numbers.")
        pe = sb.checkbox("Positional encoding", d.pe, key="pe", bind=BIND, disabled=input_mode != "sentence",
                         help="Adds the sinusoidal position signal to sentence embeddings, so word order matters.")
        sb.header("Masks")
        causal = sb.checkbox("Causal mask", d.causal, key="causal", bind=BIND,
                             help="Each token may only look at itself and earlier tokens, as in a decoder.")
        pad = sb.number_input("Mask the last tokens as padding", 0, APP_MAX_TOKENS - 1, d.pad, key="pad",
                              bind=BIND, help="Blocks these keys for every query, as padding is blocked in a batch.")
    backend = sb.radio("Backend", list(BACKENDS), key="backend", bind=BIND, horizontal=True,
                       help="NumPy is the readable reference; PyTorch uses a GPU when one is available.")
    return Settings(model=model, input=input_mode, text=text, n=int(n), d_model=int(d_model), h=int(h),
                    seed=int(seed), pe=bool(pe), causal=bool(causal), pad=int(pad),
                    backend=backend, layer=int(layer))


def focus_controls(settings: Settings, example: Example) -> Settings:
    """The selected head and query token, in the sidebar so they persist across pages (and in the URL)."""
    sb = st.sidebar
    sb.header("Focus")
    heads = list(range(1, example.cfg.n_heads + 1))
    _keep_valid("head", heads, 1)
    head = sb.selectbox("Head", heads, key="head", bind=BIND)
    if st.session_state.get("query", 1) > example.n:
        st.session_state.query = example.n
    query = sb.number_input("Query token (position)", 1, example.n, 1, key="query", bind=BIND,
                            help="Pick a token by its position; the figures show its row.")
    sb.caption(f"Query token {query}: {quote(example.tokens[query - 1])}")
    # The stage control lives on the attention page, which runs later; its value is already in the session state
    # (or, on the first run, only in the URL).
    stage = st.session_state.get("stage") or st.query_params.get("stage")
    stage = stage if stage in STAGES else Settings.stage
    return Settings(**{**settings.__dict__, "head": int(head), "query": int(query), "stage": stage})


def device_label(device: str) -> str:
    """'cpu' -> 'CPU', 'cuda:0' -> 'GPU (cuda:0)', 'mps' -> 'GPU (mps)'."""
    return "CPU" if device == "cpu" else f"GPU ({device})"


def example_args(s: Settings) -> tuple:
    return (s.model, s.input, s.text, s.n, s.d_model, s.h, s.seed, s.pe, s.causal, s.pad, BACKENDS[s.backend],
            s.layer)


def setup(page_path: str) -> None:
    """Run before the page: warnings from the URL, controls, the example, and the share link."""
    _show_url_warnings()
    settings = sidebar_controls()
    try:
        example = cached_example(*example_args(settings))
    except ConfigError as err:
        st.error(str(err), icon=":material/block:")
        st.stop()
    settings = focus_controls(settings, example)
    st.session_state.view = (settings, example)
    cfg = example.cfg
    weights = f"all-MiniLM-L6-v2, layer {settings.layer} of 6" if example.run is not None else (
        "tiny example" if settings.input == "tiny" else f"random weights, seed {settings.seed}")
    st.caption(f"{weights} · {example.n} tokens · d_model = {cfg.d_model} · h = {cfg.n_heads} · d_k = {cfg.d_k}")
    base = (st.context.url or f"http://localhost:8501/{page_path}").split("?")[0]
    with st.sidebar:
        st.header("Share")
        st.caption(f"Computed with {settings.backend} on **{device_label(example.trace.device)}**.")
        st.caption("This link reopens exactly this view (copy button on the right):")
        url = settings.share_url(base)
        st.code(url, language=None, wrap_lines=True)
        _downloads(settings, example, url)


def _downloads(settings: Settings, example: Example, url: str) -> None:
    st.header("Export")
    st.download_button("Trace (.npz, every intermediate)", lambda: trace_npz(example.trace, example.tokens),
                       file_name="mha_trace.npz", mime="application/octet-stream", width="stretch",
                       on_click="ignore")
    st.download_button("Settings (.json)", settings_json(settings.__dict__, url), file_name="mha_settings.json",
                       mime="application/json", width="stretch", on_click="ignore")
    st.caption("Each chart's camera icon saves it as PNG.")


def torch_code(settings: Settings) -> str:
    """A script that rebuilds this example with torch.nn.MultiheadAttention and prints the same output."""
    real = settings.model == MODELS[1]
    return example_snippet(settings.input, settings.text, settings.n, settings.d_model, settings.h, settings.seed,
                           settings.pe, settings.causal, settings.pad, settings.layer if real else None)


def reproduce_in_pytorch(settings: Settings) -> None:
    with st.expander("Reproduce in PyTorch"):
        st.caption("Rebuilds this exact example with torch.nn.MultiheadAttention and prints the output shown here.")
        st.code(torch_code(settings), language="python")


def needs_pretrained(example: Example):
    """The example's MiniLMRun; with random weights, say how to switch and stop the page."""
    if example.run is None:
        st.info("This page shows a trained model. Choose **all-MiniLM-L6-v2** under *Weights* in the sidebar, "
                "or use the button.")
        st.button("Switch to all-MiniLM-L6-v2", on_click=_switch_to_pretrained, type="primary")
        st.stop()
    for note in example.notes:
        st.info(note)
    return example.run


def _switch_to_pretrained() -> None:
    st.session_state.model = MODELS[1]


def _pick_head() -> None:
    """Copy the page's layer/head pickers into the sidebar's (URL-bound) selection."""
    st.session_state.layer = st.session_state.pick_layer
    st.session_state.head = st.session_state.pick_head


def open_head_in_step_through(n_layers: int, n_heads: int, settings: Settings) -> None:
    """Layer and head pickers (they move the sidebar's selection), and a link to that head's attention page."""
    st.subheader("Open one head in the step-through")
    left, middle, right = st.columns([1, 1, 2], vertical_alignment="bottom")
    left.selectbox("Layer", list(range(1, n_layers + 1)), index=settings.layer - 1, key="pick_layer",
                   on_change=_pick_head)
    middle.selectbox("Head", list(range(1, n_heads + 1)), index=settings.head - 1, key="pick_head",
                     on_change=_pick_head)
    with right:
        st.page_link("pages/attention.py", label=f"Step through layer {settings.layer}, head {settings.head}",
                     icon=":material/open_in_new:")


def next_step(page: str, label: str) -> None:
    st.divider()
    st.page_link(page, label=f"Next: {label} →", icon=":material/arrow_forward:")


def view() -> tuple[Settings, Example]:
    """The settings and example of this run (set by app.py before it runs the page)."""
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        # Streamlit's older multipage mode ran this page without app.py: it does so for a server's very first
        # request (and in every AppTest run) because a pages/ folder exists. st.navigation in app.py ends that
        # mode, so switch it off and run again, through app.py.
        PagesManager.uses_pages_directory = False
        st.rerun()
    return st.session_state.view


def code_for_step(step: int) -> None:
    """The engine's real source lines for this step."""
    with st.expander("The code that computed this (mha_core/engine.py)", expanded=False):
        st.code(step_source(step), language="python")


def plot(fig, key: str | None = None) -> None:
    st.plotly_chart(fig, width="stretch", key=key, config={"displaylogo": False, "toImageButtonOptions": {
        "format": "png", "scale": 2}})
