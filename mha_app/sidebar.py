"""What app.py runs before every page: the link's check, the sidebar controls, the example, the share link, exports.

Every control is bound to the URL under its setting's name, and takes its label, help and bounds from the field in
settings.py. The result, `Settings` and the `Example` they describe, is left in the session for the page (see
toolkit.view).
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from mha_core import ConfigError, divisors
from mha_core.export import trace_npz
from mha_core.presets import TINY_CONFIG, TINY_TOKENS
from mha_core.pretrained import ModelNotInstalledError

from . import compute, url
from .about import footer
from .model_text import model_text, sentence_help, token_gloss
from .sentences import examples
from .settings import PRETRAINED, RANDOM, STAGES, Settings, Spec, View, control, default, to_url
from .snippets import settings_json
from .text import quote
from .toolkit import BIND

INPUT_CAPTIONS = ["your own words", "n random vectors",
                  f"{len(TINY_TOKENS)} tokens, d_model {TINY_CONFIG.d_model}: check by hand",
                  "two sentences: queries from one, keys and values from the other (cross-attention)"]


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


# --- widgets made from their settings' fields ------------------------------------------------------------------

def _number(container, name: str, **kw):
    c = control(name)
    kw.setdefault("help", c.help)
    return container.number_input(c.label, c.lo, c.hi, default(name), key=name, bind=BIND, **kw)


def _radio(container, name: str, **kw):
    c = control(name)
    kw.setdefault("help", c.help)
    return container.radio(c.label, c.choices, key=name, bind=BIND, **kw)


def _checkbox(container, name: str, **kw):
    c = control(name)
    kw.setdefault("help", c.help)
    return container.checkbox(c.label, default(name), key=name, bind=BIND, **kw)


def _select(container, name: str, options: list, **kw):
    """A selectbox over options that depend on other settings; a remembered value that is no longer one resets."""
    c = control(name)
    kw.setdefault("help", c.help)
    if name in st.session_state and st.session_state[name] not in options:
        st.session_state[name] = options[0]
    return container.selectbox(c.label, options, key=name, bind=BIND, **kw)


def _slider(container, name: str, **kw):
    c = control(name)
    kw.setdefault("help", c.help)
    return container.slider(c.label, c.lo, c.hi, default(name), key=name, bind=BIND, **kw)


def _multiselect(container, name: str, options: list, **kw) -> tuple:
    """A multiselect for a tuple setting. The URL keeps the value as one comma-separated parameter (ablate=2,5),
    which bind="query-params" would spell as a repeated one (ablate=2&ablate=5), so this widget syncs it itself."""
    c = control(name)
    kw.setdefault("help", c.help)
    if name not in st.session_state:  # the first run: the link's value (already checked by check_link)
        st.session_state[name] = list(url.parse(name, st.query_params[name]) or ()) if name in st.query_params \
            else list(default(name))
    st.session_state[name] = [v for v in st.session_state[name] if v in options]  # h may have changed
    value = tuple(sorted(container.multiselect(c.label, options, key=name, **kw)))
    if value and st.query_params.get(name) != to_url(value):
        st.query_params[name] = to_url(value)
    elif not value and name in st.query_params:
        del st.query_params[name]
    return value


def _head_count(sb, d_model: int) -> int:
    options = url.head_options(d_model)
    old = st.session_state.get("h")
    if old is not None and old not in options:
        st.session_state.h = url.closest_head_count(d_model, old)
        sb.info(f"h = {old} does not divide d_model = {d_model}, so h is now {st.session_state.h}.")
    return sb.selectbox(
        control("h").label, options, index=options.index(url.closest_head_count(d_model, default("h"))), key="h",
        bind=BIND, help=f"Only head counts that divide d_model = {d_model} are offered: each head gets d_model / h "
                        "dimensions.")


def _kv_heads(sb, h: int) -> int:
    """The key/value heads (a divisor of h, h first); 0 in the spec when it equals h (plain multi-head attention)."""
    options = divisors(h)[::-1]
    old = st.session_state.get("kv_heads")
    if old is not None and old == st.session_state.get("kv_heads_for_h") and old != h:
        st.session_state.kv_heads = h  # plain attention (kv = the old h) stays plain when h changes
    elif old is not None and old not in options:
        st.session_state.kv_heads = h
        sb.info(f"{old} key/value heads do not divide h = {h}, so each query head has its own again.")
    st.session_state.kv_heads_for_h = h
    kv = sb.selectbox(control("kv_heads").label, options, index=0, key="kv_heads", bind=BIND,
                      help=control("kv_heads").help + f" Only divisors of h = {h} work.")
    if kv == h:
        sb.caption("One key/value head per query head: plain multi-head attention.")
    else:
        sb.caption(f"{h} query heads share {kv} key/value head{'s' if kv > 1 else ''}: {h // kv} query heads each.")
    return 0 if kv == h else int(kv)


def model_captions() -> list[str]:
    """One line under each choice of weights: what it is, or, for a model not installed here, how to add it."""
    lines = ["any sizes; the patterns mean nothing"]
    for card in PRETRAINED.values():
        lines.append(model_text(card.name).about if card.installed() else
                     f"not installed here; add it with `{card.install}`")
    return lines


def not_installed(card) -> None:
    """Say that a chosen model is missing and how to add it, then stop the page (the sidebar stays usable)."""
    st.info(f"**{card.name}** is not installed on this server. Add it with one command, then reload the page:",
            icon=":material/download:")
    st.code(card.install, language="bash")
    st.stop()


def experiment_controls(sb, card, input_mode: str, heads: int, layer: int) -> dict:
    """The experiments on heads: the score scaling, switched-off heads, and a planted head (Spec values)."""
    d = Spec()
    sb.header("Experiments")
    values = dict(scale=d.scale, plant=d.plant, plant_head=d.plant_head, strength=d.strength)
    if card:
        effect = "the next token it predicts" if card.kind == "decoder" else "its sentence vector"
        sb.caption(f"With {card.name}: switch heads off and see what that does to the later layers and to "
                   f"{effect}. It keeps the 1/√d_k scaling it was trained with. Planting a head (its heads are "
                   "shown as trained), another number of key/value heads (its own are fixed) and cross-attention "
                   "(it reads one text) need random weights.")
    else:
        values["scale"] = _radio(sb, "scale", horizontal=True)
    where = f" (in layer {layer}, the one on view)" if card else ""
    values["ablate"] = _multiselect(sb, "ablate", list(range(1, heads + 1)), placeholder="no head is off")
    if values["ablate"]:
        sb.caption(f"Switched off{where}: head{'s' if len(values['ablate']) > 1 else ''} "
                   f"{', '.join(map(str, values['ablate']))}. Step 4 shows what changed.")
    if not card:
        values["plant"] = _select(sb, "plant", list(control("plant").choices))
        if values["plant"] != d.plant:
            values["plant_head"] = _select(sb, "plant_head", list(range(1, heads + 1)))
            values["strength"] = float(_slider(sb, "strength", step=0.5))
    return values


def _use_example(model: str) -> None:
    if st.session_state.example:
        st.session_state.text = examples(model)[st.session_state.example]


def spec_controls() -> tuple[Spec, int]:
    """Draw the controls that decide the computation; return the spec they hold and the chosen layer."""
    sb, d = st.sidebar, Spec()
    sb.header("Model")
    model = _radio(sb, "model", captions=model_captions())
    card = Spec(model=model).card
    layer = View.layer
    if card:
        layer = _select(sb, "layer", list(range(1, card.n_layers + 1)),
                        help=f"{card.name} has {card.n_layers} layers; the step-through pages show this layer's "
                             "attention.")
    sb.header("Input")
    input_mode = "sentence" if card else _radio(sb, "input", captions=INPUT_CAPTIONS, horizontal=False)
    text, n = d.text, d.n
    if card:
        if st.session_state.get("example") not in (None, *examples(model)):  # another model's example
            st.session_state.example = None
        sb.selectbox("Example sentences", list(examples(model)), index=None, key="example",
                     placeholder="Pick an example…", on_change=_use_example, args=(model,),
                     help="Fills the sentence box; you can edit it afterwards.")
    text_kv = d.text_kv
    if input_mode in ("sentence", "pair"):
        c = control("text")
        text = sb.text_area("Queries: the first sentence" if input_mode == "pair" else c.label, value=d.text,
                            max_chars=c.max_chars, key="text", bind=BIND,
                            help=sentence_help(Spec(model=model)))
        if input_mode == "pair":
            c = control("text_kv")
            text_kv = sb.text_area(c.label, value=d.text_kv, max_chars=c.max_chars, key="text_kv", bind=BIND,
                                   help=c.help)
    elif input_mode == "random":
        n = _number(sb, "n")
    d_model, h, kv_heads = d.d_model, d.h, d.kv_heads
    if card:
        kv = f", {card.n_kv_heads} key/value heads" if card.n_kv_heads != card.n_heads else ""
        sb.caption(f"{card.name} fixes d_model = {card.d_model} and h = {card.n_heads} (d_k = {card.d_k}{kv})."
                   + (f" {model_text(card.name).weights_short}" if model_text(card.name).weights_short else ""))
    elif input_mode == "tiny":
        t = TINY_CONFIG
        sb.caption(f"The tiny example fixes d_model = {t.d_model} and h = {t.n_heads} (d_k = {t.d_k}).")
    else:
        d_model = _number(sb, "d_model")
        h = _head_count(sb, d_model)
        sb.caption(f"Each head works in d_k = d_model / h = {d_model} / {h} = {d_model // h} dimensions.")
        kv_heads = _kv_heads(sb, h)
    seed, pe, causal, pad = d.seed, d.pe, d.causal, d.pad
    if card:
        sb.caption(model_text(card.name).masks)
    else:
        if input_mode != "tiny":
            seed = _number(sb, "seed")
        pe = _checkbox(sb, "pe", disabled=input_mode not in ("sentence", "pair"))
        sb.header("Masks")
        if input_mode == "pair":
            st.session_state.causal = causal = False
            _checkbox(sb, "causal", disabled=True, help="Cross-attention reads the whole other sentence, so there is "
                                                        "no causal mask here.")
            pad = _number(sb, "pad", help="Blocks the last keys (of the second sentence) for every query.")
        else:
            causal, pad = _checkbox(sb, "causal"), _number(sb, "pad")
    heads = card.n_heads if card else TINY_CONFIG.n_heads if input_mode == "tiny" else int(h)
    experiments = experiment_controls(sb, card, input_mode, heads, int(layer))
    backend = _radio(sb, "backend", horizontal=True)
    spec = Spec(model=model, input=input_mode, text=text, n=int(n), d_model=int(d_model), h=int(h), seed=int(seed),
                pe=bool(pe), causal=bool(causal), pad=int(pad), backend=backend, text_kv=text_kv,
                kv_heads=kv_heads, **experiments)
    return spec, int(layer)


def view_controls(layer: int, example, spec: Spec | None = None) -> View:
    """The selected head and query token, in the sidebar so they persist across pages (and in the URL)."""
    sb = st.sidebar
    sb.header("Focus")
    head = _select(sb, "head", list(range(1, example.cfg.n_heads + 1)))
    wanted = st.session_state.get("query") or int(st.query_params.get("query", 1))  # the link's, on a first run
    if wanted > example.n:
        st.session_state.query = example.n
        sb.info(f"Query token {wanted} is past the last token, so `query` is now {example.n}.")
    query = sb.number_input(control("query").label, 1, example.n, key="query", bind=BIND,
                            help=control("query").help)
    token = example.tokens[query - 1]
    gloss = token_gloss(spec or Spec(), example.tokens, query - 1)
    sb.caption(f"Query token {query}: {quote(token)}" + (f" ({gloss})" if gloss else ""))
    # The stage control lives on the attention page, which runs later; its value is already in the session state
    # (or, on the first run, only in the URL).
    stage = st.session_state.get("stage") or st.query_params.get("stage")
    compare = st.session_state.get("compare") or st.query_params.get("compare") or View.compare  # the output page's
    return View(layer=layer, head=int(head), query=int(query), stage=stage if stage in STAGES else View.stage,
                compare=compare, **page_settings())


# Settings without a sidebar widget: a page's own control (preset, seq_len, batch, zoom_query, zoom_key, the tiny
# model's task, task_h, task_d_model, task_seed; key, set by its page's callback), or a link and the lesson's buttons
# (present, screen).
PAGE_SETTINGS = ("key", "preset", "seq_len", "batch", "present", "screen", "zoom_query", "zoom_key", "task", "task_h",
                 "task_d_model", "task_seed")


def page_settings() -> dict:
    """The page settings' values: the page widget's (from its last run), else the link's (checked), else the default."""
    values = {}
    for name in PAGE_SETTINGS:
        value = st.session_state.get(name)
        if value is None and name in st.query_params:
            value = url.parse(name, st.query_params[name])
        values[name] = default(name) if value is None else value
    return values


def describe(settings: Settings, example) -> str:
    """One line that says what is computed: the weights, the tokens, the sizes."""
    spec, cfg = settings.spec, example.cfg
    if spec.card:
        weights = f"{spec.card.name}, layer {settings.view.layer} of {spec.card.n_layers}"
    else:
        weights = "tiny example" if spec.input == "tiny" else f"{RANDOM}, seed {spec.seed}"
    tokens = f"{example.n} tokens" if example.key_tokens is None else \
        f"{example.n} query tokens, {len(example.key_tokens)} key tokens"
    kv = f" · {cfg.kv_heads} K/V heads" if cfg.kv_heads != cfg.n_heads else ""
    return f"{weights} · {tokens} · d_model = {cfg.d_model} · h = {cfg.n_heads}{kv} · d_k = {cfg.d_k}"


def device_label(device: str) -> str:
    """'cpu' -> 'CPU', 'cuda:0' -> 'GPU (cuda:0)', 'mps' -> 'GPU (mps)'."""
    return "CPU" if device == "cpu" else f"GPU ({device})"


def share_and_export(settings: Settings, example, page_path: str) -> None:
    st.session_state.share_base = (st.context.url or f"http://localhost:8501/{page_path}").split("?")[0]
    with st.sidebar:
        st.header("Share")
        st.caption(f"Computed with {settings.spec.backend} on **{device_label(example.trace.device)}**.")
        st.caption("This link reopens exactly this view (copy button on the right):")
        link = st.empty()
        st.header("Export")
        st.download_button("Trace (.npz, every intermediate)", lambda: trace_npz(example.trace, example.tokens),
                           file_name="mha_trace.npz", mime="application/octet-stream", width="stretch",
                           on_click="ignore")
        st.session_state.share_slots = (link, st.empty())  # a page's fragment rewrites them (refresh_share_link)
        _fill_share_slots(settings, "settings_json")
        st.caption("Each chart's camera icon saves it as PNG.")


def _fill_share_slots(settings: Settings, key: str) -> None:
    link_slot, json_slot = st.session_state.share_slots
    link = settings.share_url(st.session_state.share_base)
    link_slot.code(link, language=None, wrap_lines=True)
    json_slot.download_button("Settings (.json)", settings_json(settings.values(), link),
                              file_name="mha_settings.json", mime="application/json", width="stretch",
                              on_click="ignore", key=key)


def refresh_share_link(settings: Settings, **view) -> None:
    """Rewrite the sidebar's share link and settings export with these View values (from a fragment, which reruns
    without the sidebar). A fragment writes them in every run, the app's included: Streamlit keeps an outside
    container's place for a fragment only if it wrote there in the last full run."""
    if "share_slots" in st.session_state:
        _fill_share_slots(dataclasses.replace(settings, view=dataclasses.replace(settings.view, **view)),
                          "settings_json_of_view")  # another key: the app's run wrote "settings_json" already


def prepare(page_path: str) -> None:
    """Run before the page: the link's check, the controls, the example, and the share link."""
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
