"""What app.py runs before every page: the link's check, the sidebar controls, the example, the share link, exports.

Every control is bound to the URL under its setting's name, and takes its label, help and bounds from the field in
settings.py. The result, `Settings` and the `Example` they describe, is left in the session for the page (see
toolkit.view).
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from mha_app.copy import sidebar as say
from mha_app.copy.example import describe, device_label
from mha_app.copy.models import model_text, sentence_help, token_gloss
from mha_app.frame.about import footer
from mha_app.run import compute
from mha_app.state import url
from mha_app.state.sentences import examples
from mha_app.state.settings import (
    PRETRAINED,
    RANDOM,
    Settings,
    Spec,
    View,
    closest_head_count,
    control,
    default,
    head_options,
    to_url,
    view_defaults,
)
from mha_app.state.snippets import settings_json
from mha_app.ui import layout, widgets
from mha_app.ui.charts import image_format
from mha_app.ui.questions import new_page_run
from mha_core import ConfigError, divisors
from mha_core.analysis.export import trace_npz
from mha_core.pretrained import ModelNotInstalledError
from mha_core.teaching.presets import TINY_CONFIG, TINY_TOKENS

INPUT_CAPTIONS = say.input_captions(len(TINY_TOKENS), TINY_CONFIG.d_model)


def check_link() -> None:
    """On a session's first run, drop or fix the link's unusable values before any widget reads them; warn in words.

    Widgets bound to the URL read it on their first run only, so the fixed link is applied by one rerun.
    """
    if "url_warnings" not in st.session_state:
        params = {name: st.query_params.get_all(name) for name in st.query_params}
        problems, kept = url.check(params)
        st.session_state.url_warnings = problems
        if kept != {name: values[-1] for name, values in params.items() if len(values) == 1}:
            st.query_params.from_dict(kept)
            st.rerun()
    for problem in st.session_state.url_warnings:
        st.warning(problem, icon=":material/warning:")


def _head_count(sb, d_model: int) -> int:
    options = head_options(d_model)
    old = st.session_state.get("h")
    if old is not None and old not in options:
        st.session_state.h = closest_head_count(d_model, old)
        sb.info(say.head_count_changed(old, d_model, st.session_state.h))
    return sb.selectbox(
        control("h").label, options, index=options.index(closest_head_count(d_model, default("h"))), key="h",
        bind=widgets.BIND, help=say.head_count_help(d_model))


def _kv_heads(sb, h: int) -> int:
    """The key/value heads (a divisor of h, h first); 0 in the spec when it equals h (plain multi-head attention)."""
    options = divisors(h)[::-1]
    old = st.session_state.get("kv_heads")
    if old is not None and old == st.session_state.get("kv_heads_for_h") and old != h:
        st.session_state.kv_heads = h  # plain attention (kv = the old h) stays plain when h changes
    elif old is not None and old not in options:
        st.session_state.kv_heads = h
        sb.info(say.kv_heads_changed(old, h))
    st.session_state.kv_heads_for_h = h
    kv = sb.selectbox(control("kv_heads").label, options, index=0, key="kv_heads", bind=widgets.BIND,
                      help=say.kv_heads_help(control("kv_heads").help, h))
    sb.caption(say.kv_heads_caption(h, kv))
    return 0 if kv == h else int(kv)


TINY_WEIGHTS = {RANDOM: say.TINY_WEIGHTS}


def model_captions(tiny: bool = False) -> list[str]:
    """One line under each choice of weights: what it is, or, for a model not installed here, how to add it."""
    lines = [say.random_weights_caption(tiny)]
    for card in PRETRAINED.values():
        lines.append(model_text(card.name).about if card.installed() else say.not_installed_caption(card.install))
    return lines


def not_installed(card) -> None:
    """Say that a chosen model is missing and how to add it, then stop the page (the sidebar stays usable)."""
    st.info(say.not_installed_text(card.name), icon=":material/download:")
    st.code(card.install, language="bash")
    st.stop()


def experiment_controls(sb, card, input_mode: str, heads: int, layer: int) -> dict:
    """The experiments on heads: the score scaling, switched-off heads, and a planted head (Spec values)."""
    d = Spec()
    sb.header("Experiments")
    values = dict(scale=d.scale, plant=d.plant, plant_head=d.plant_head, strength=d.strength)
    if card:
        sb.caption(say.trained_experiments_caption(card.name, card.kind == "decoder"))
    else:
        values["scale"] = widgets.choice(sb, "scale", "radio", horizontal=True)
    values["ablate"] = widgets.multiselect(sb, "ablate", list(range(1, heads + 1)), placeholder="no head is off")
    if values["ablate"]:
        sb.caption(say.heads_off_caption(values["ablate"], layer if card else None))
    if not card:
        values["plant"] = widgets.select(sb, "plant", list(control("plant").choices))
        if values["plant"] != d.plant:
            values["plant_head"] = widgets.select(sb, "plant_head", list(range(1, heads + 1)))
            values["strength"] = float(widgets.slider(sb, "strength", step=0.5))
    return values


def _use_example(model: str) -> None:
    if st.session_state.example:
        st.session_state.text = examples(model)[st.session_state.example]


def spec_controls() -> tuple[Spec, int]:
    """Draw the controls that decide the computation; return the spec they hold and the chosen layer."""
    sb, d = st.sidebar, Spec()
    sb.header("Model")
    tiny = widgets.current("input") == "tiny"  # the input is chosen below; the tiny example brings its own weights
    model = widgets.choice(sb, "model", "radio", captions=model_captions(tiny), labels=TINY_WEIGHTS if tiny else None)
    card = Spec(model=model).card
    layer = View.layer
    if card:
        layer = widgets.select(sb, "layer", list(range(1, card.n_layers + 1)),
                        help=say.layer_help(card.name, card.n_layers))
    sb.header("Input")
    input_mode = "sentence" if card else widgets.choice(sb, "input", "radio", captions=INPUT_CAPTIONS)
    text, n = d.text, d.n
    if card:
        if st.session_state.get("example") not in (None, *examples(model)):  # another model's example
            st.session_state.example = None
        sb.selectbox("Example sentences", list(examples(model)), index=None, key="example",
                     placeholder=say.EXAMPLE_PLACEHOLDER, on_change=_use_example, args=(model,),
                     help=say.EXAMPLE_HELP)
    text_q = d.text_q
    if input_mode in ("sentence", "pair"):  # in pair mode, in reading order: the source, then what is written from it
        text = widgets.text(sb, "text", say.PAIR_SOURCE if input_mode == "pair" else None,
                            help=say.PAIR_SOURCE_HELP if input_mode == "pair" else sentence_help(Spec(model=model)))
    if input_mode == "pair":
        text_q = widgets.text(sb, "text_q")
    elif input_mode == "random":
        n = widgets.number(sb, "n")
    d_model, h, kv_heads = d.d_model, d.h, d.kv_heads
    if card:
        sb.caption(say.model_sizes_caption(card.name, card.d_model, card.n_heads, card.d_k, card.n_kv_heads,
                                             model_text(card.name).weights_short))
    elif input_mode == "tiny":
        t = TINY_CONFIG
        sb.caption(say.tiny_sizes_caption(t.d_model, t.n_heads, t.d_k))
    else:
        d_model = widgets.number(sb, "d_model")
        h = _head_count(sb, d_model)
        sb.caption(say.d_k_caption(d_model, h))
        kv_heads = _kv_heads(sb, h)
    seed, pe, causal, pad = d.seed, d.pe, d.causal, d.pad
    if card:
        sb.caption(model_text(card.name).masks)
    else:
        if input_mode != "tiny":
            seed = widgets.number(sb, "seed")
        if input_mode in ("sentence", "pair"):
            pe = widgets.checkbox(sb, "pe")
        else:  # no position signal to add: shown unticked, and the link's own choice kept for the sentence input
            sb.checkbox(control("pe").label, False, key="pe_none", disabled=True, help=say.NO_POSITIONS[input_mode])
        sb.header("Masks")
        if Spec(input=input_mode).allows(causal=True):
            causal = widgets.checkbox(sb, "causal")
        else:
            st.session_state.causal = False
            widgets.checkbox(sb, "causal", disabled=True, help=say.NO_CAUSAL_PAIR)
        pad = widgets.number(sb, "pad", **({"help": say.PAD_PAIR_HELP} if input_mode == "pair" else {}))
    heads = Spec(model=model, input=input_mode, h=int(h)).heads
    experiments = experiment_controls(sb, card, input_mode, heads, int(layer))
    backend = widgets.choice(sb, "backend", "radio", horizontal=True)
    spec = Spec(model=model, input=input_mode, text=text, n=int(n), d_model=int(d_model), h=int(h), seed=int(seed),
                pe=bool(pe), causal=bool(causal), pad=int(pad), backend=backend, text_q=text_q,
                kv_heads=kv_heads, **experiments)
    for problem in spec.problems():  # a control's value that the others rule out (padding every token): say so
        st.warning(problem.message, icon=":material/warning:")
    return spec.normalised(), int(layer)


def view_controls(layer: int, example, spec: Spec | None = None) -> View:
    """The selected head and query token, in the sidebar so they persist across pages (and in the URL)."""
    sb = st.sidebar
    sb.header("Focus")
    defaults = view_defaults(spec or Spec(), example.n)
    for name, value in defaults.items():  # a head or query left at its default follows it (a planted head, ...)
        old = st.session_state.get(f"{name}_default", value)
        if old != value and st.session_state.get(name, old) == old:
            st.session_state[name] = value
        st.session_state[f"{name}_default"] = value
    options = list(range(1, example.cfg.n_heads + 1))
    head = widgets.select(sb, "head", options, index=options.index(min(defaults["head"], options[-1])))
    first = defaults["query"]
    wanted = st.session_state.get("query") or url.parse("query", st.query_params.get("query", str(first)))
    if wanted is not None and wanted > example.n:
        st.session_state.query = example.n
        sb.info(say.query_changed(wanted, example.n))
    query = widgets.number(sb, "query", 1, example.n, start=first)
    token = example.tokens[query - 1]
    gloss = token_gloss(spec or Spec(), example.tokens, query - 1)
    sb.caption(say.query_caption(query, token, gloss))
    return View(layer=layer, head=int(head), query=int(query), ask=ask_control(sb), **page_settings())


ASK_CHOSEN = "ask_chosen"  # session key: the checkbox's value, kept over a run that stops before the sidebar's end


def ask_control(sb) -> bool:
    """Ask before showing: on a session's first run as its link says (url.link_asks), then as the person ticks it,
    for the rest of the session."""
    if "ask" not in st.session_state:
        st.session_state.ask = st.session_state.get(ASK_CHOSEN, url.link_asks(st.query_params))
    ask = sb.checkbox(control("ask").label, key="ask", help=control("ask").help)
    st.session_state[ASK_CHOSEN] = ask
    keep_ask_in_address()
    return ask


def keep_ask_in_address() -> None:
    """The address says `ask` where the session's choice differs from what the address would give without it, so
    that reloading it asks, or not, as the page does now."""
    if "ask" not in st.session_state:
        return
    others = {name: st.query_params[name] for name in st.query_params if name != "ask"}
    if st.session_state.ask == url.link_asks(others):
        st.query_params.pop("ask", None)
    else:
        st.query_params["ask"] = to_url(st.session_state.ask)


# Settings without a sidebar widget: a page's own control, drawn later in the run (stage, zoom_query, zoom_key,
# compare, preset, seq_len, batch, the tiny model's task, task_h, task_d_model, task_seed, the attention page's
# tab; key, set by its page's callback), or a link and the lesson's buttons (present, screen).
PAGE_SETTINGS = ("stage", "zoom_query", "zoom_key", "compare", "key", "preset", "seq_len", "batch", "present",
                 "screen", "task", "task_h", "task_d_model", "task_seed", "tab")


def page_settings() -> dict:
    """The page settings' values: the page widget's (from its last run), else the link's (checked), else the default."""
    values = {}
    for name in PAGE_SETTINGS:
        value = st.session_state.get(name)
        if name in layout.TABS:  # tabs hold their label under their own key
            value = control(name).choice(st.session_state.get(layout.TABS[name]) or "")
        if value is None and name in st.query_params:
            value = url.parse(name, st.query_params[name])
        values[name] = default(name) if value is None else value
    return values


def share_and_export(settings: Settings, example, page_path: str) -> None:
    base = (st.context.url or f"http://localhost:8501/{page_path}").split("?")[0]
    with st.sidebar:
        st.header("Share")
        st.caption(say.computed_with(settings.spec.backend, device_label(example.trace.device)))
        st.caption(say.SHARE_LINK)
        link = Settings(settings.spec, replace(settings.view, ask=False)).share_url(base, example.n)
        st.code(link, language=None, wrap_lines=True)
        st.caption(say.SHARE_ASKING)
        asking = Settings(settings.spec, replace(settings.view, ask=True)).share_url(base, example.n)
        st.code(asking, language=None, wrap_lines=True)
        st.header("Export")
        st.download_button("Trace (.npz, every intermediate)", lambda: trace_npz(example.trace, example.tokens),
                           file_name="mha_trace.npz", mime="application/octet-stream", width="stretch",
                           on_click="ignore")
        st.download_button("Settings (.json)", settings_json(settings.values(), link), file_name="mha_settings.json",
                           mime="application/json", width="stretch", on_click="ignore", key="settings_json")
        image_format()


def prepare(page_path: str) -> None:
    """Run before the page: the link's check, the controls, the example, and the share link."""
    new_page_run()
    check_link()
    spec, layer = spec_controls()
    if spec.card and not spec.card.installed():
        not_installed(spec.card)
    try:
        example = compute.example(spec, layer)
    except ModelNotInstalledError:
        not_installed(spec.card)
    except ConfigError as err:
        st.error(str(err), icon=":material/block:")
        footer()
        st.stop()
    settings = Settings(spec, view_controls(layer, example, spec))
    st.session_state.view = (settings, example)
    st.caption(describe(settings, example))
    share_and_export(settings, example, page_path)
    footer()
