"""What pages call: the settings and example of this run, and small layout helpers shared by the pages."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import plotly.io as pio
import streamlit as st
from plotly.basedatatypes import BaseFigure

from mha_core import figures
from mha_core.figures import Description, themed
from mha_core.teaching import notation
from mha_core.teaching.source import step_source

from . import theme, widgets
from .example import Example
from .model_text import spelling_note
from .settings import MODELS, PRETRAINED, Settings, Spec
from .snippets import torch_script
from .text import escape, quote, table_number

# One line under each step's code: the names in it that the pages have not introduced.
CODE_NAMES = {
    1: "`x` is X (n × d_model); `x_kv` is what the keys and values are made from: X itself in self-attention, "
       "another sequence of m tokens (Y) in cross-attention. `linear(x, W, b)` computes x @ W.T + b, with W stored as "
       "PyTorch stores it, (out, in); `split_heads` cuts the h·d_k columns into h blocks of d_k, one per head. "
       "`apply_rope` turns each query and key by its position; it runs only when `cfg.rope_theta` is set (RoPE, "
       "as in Llama-style decoders).",
    2: "`q`, `k`, `v` hold every head (head first); `m` is the number of keys. `cfg.group_size` is how many query "
       "heads share one key/value head: 1 in plain multi-head attention, more in grouped-query attention (Ainslie "
       "et al. 2023); `k_i`, `v_i` are the keys and values each query head reads. `mask` is True where a pair is "
       "blocked; `softmax_rows` turns each row into weights that sum to 1.",
    3: "`transpose(1, 0, 2)` puts the tokens first, (n, h, d_k); `reshape(n, h * d_k)` then lays each token's h "
       "head outputs side by side in one row.",
    4: "`linear(concat, w.W_O, w.b_O)` computes concat @ W_O.T + b_O, with W_O stored as PyTorch stores it, "
       "(d_model, h·d_k).",
}


def view() -> tuple[Settings, Example]:
    """The settings and example of this run (set by app.py, through sidebar.prepare, before it runs the page)."""
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory or "view" not in st.session_state:
        # Streamlit's older multipage mode ran this page without app.py: it does so for a server's very first
        # request (and in every AppTest run) because a pages/ folder exists. st.navigation in app.py ends that
        # mode, so switch it off and run again, through app.py. The flag is the server's: when several first
        # requests come at once, another session may have switched it off already, hence the check for the view.
        PagesManager.uses_pages_directory = False
        st.rerun()
    return st.session_state.view


IMAGE_FORMATS = ("PNG", "SVG")  # what a chart's camera icon saves (the sidebar's choice, st.session_state.image_format)
MAX_TABLE_ROWS = 100  # a chart's table lists this many rows at most (a long text has thousands of queries)


def plot(fig, key: str | None = None, **select) -> None:
    """The app's one way to show a figure (a plotly figure or its plain dict): in the colours of the page's theme,
    named for screen readers by its text alternative (figures.describe), with that text and its numbers in a table
    on request, collapsed; its camera icon saves it in the sidebar's format (PNG or SVG). select: st.plotly_chart's
    on_select and selection_mode, for a figure whose points can be clicked."""
    description = Description.of(fig)
    spec = themed(fig, theme.current())  # a copy: fig itself is left as it is
    spec["layout"].pop("meta", None)  # the description is shown below; the browser does not need a second copy
    spec["layout"].setdefault("template", _template(pio.templates.default))  # what a go.Figure carries
    image = st.session_state.get("image_format") or IMAGE_FORMATS[0]
    st.plotly_chart(_Checked(spec), width="stretch", key=key, alt=description.alt if description else None,
                    config={"displaylogo": False, "toImageButtonOptions": {"format": image.lower(), "scale": 2}},
                    **select)
    chart_words(description)


def chart_words(description: Description | None) -> None:
    """A chart's text alternative and its numbers, collapsed under it."""
    if description is not None and description.rows:
        with st.expander("This chart in words and numbers", icon=":material/table_view:"):
            chart_table(description)


@functools.cache
def _template(name: str) -> dict:
    """Plotly's template `name` as JSON: a go.Figure carries its default template, a figure dict does not (plotly.io
    adds it when it shows one), and Streamlit's chart theme is applied over it."""
    return pio.templates[name].to_plotly_json()


class _Checked(BaseFigure):
    """A finished figure dict, handed to st.plotly_chart as it is.

    st.plotly_chart checks a dict again by building a plotly figure object from it (plotly.tools.
    return_figure_from_figure_or_data), which costs as much as building the figure did (README, Performance) and
    fails on a figure without traces (the pipeline's boxes); a plotly figure object it takes as checked, by its
    to_dict(). Every figure here was built by figures.* (checked by plotly where built with plotly's objects, by the
    unit tests where built as a dict) and then only recoloured (figures.theme), so it is taken as it is: nothing of
    plotly's object tree is built (no BaseFigure.__init__)."""

    def __init__(self, spec: dict):
        self._spec = spec

    def to_dict(self) -> dict:
        return self._spec

    to_plotly_json = to_dict


def tabs(labels: list[str], key: str) -> list:
    """st.tabs whose hidden tabs compute nothing: put a tab's content under `if tab.open:`. Choosing a tab reruns
    the page (Streamlit's lazy tabs), so a first load and every change compute and draw the open tab alone."""
    return st.tabs(labels, key=key, on_change="rerun")


def expander(label: str, key: str, container=st, **kwargs):
    """A collapsed st.expander whose content is computed only while it is open: put it under `if box.open:`.
    Opening it reruns the page (Streamlit's lazy expanders)."""
    return container.expander(label, key=key, on_change="rerun", **kwargs)


def image_format() -> None:
    """The format every chart's camera icon saves in: PNG, or SVG (vector: sharp at any size, editable)."""
    st.segmented_control("Charts save as", IMAGE_FORMATS, default=IMAGE_FORMATS[0], required=True, key="image_format",
                         help="The camera icon over each chart saves it in this format. The attention explorer and "
                              "the chart of mixing the values on step 2 have a button for each.")


def chart_table(description: Description) -> None:
    """A chart's text alternative as plain text, and its numbers as a table a screen reader reads cell by cell
    (st.table is an HTML table; its cells are Markdown, so user text is quoted and the app's own words escaped)."""
    st.text(description.alt)
    rows = description.rows[:MAX_TABLE_ROWS]
    header = [escape(c) or " " * (i + 1) for i, c in enumerate(description.columns)]  # unique, even when blank
    cells = [[quote(v, limit=40) if i in description.text_columns else table_number(v) if isinstance(v, (int, float))
              else escape(v) for i, v in enumerate(row)] for row in rows]
    st.table(pd.DataFrame(cells, columns=header), hide_index=True)
    if len(description.rows) > MAX_TABLE_ROWS:
        st.caption(f"The first {MAX_TABLE_ROWS} of {len(description.rows)} rows.")


def zoom_start(container, name: str, count: int) -> int:
    """A zoom window's first row or column (zoom_query, zoom_key), 1..count, bound to the URL; a value past the last
    row or column (a shorter text since) moves to the last one."""
    wanted = st.session_state.get(name) or int(st.query_params.get(name, 1))  # the link's (checked), on a first run
    if wanted > count:
        st.session_state[name] = count
        container.info(f"The zoom window's start, {wanted}, is past the last one, {count}; it starts at {count}.")
    return widgets.number(container, name, 1, count, step=figures.ZOOM)


HELD = "symbols_held"  # session key: the symbols whose meanings wait for a question on this run's page
WAITING = "question_waiting"  # session key: whether a question waits on this run's page (hold_back was called)


def new_page_run() -> None:
    """Before each run of a page: nothing is held back until the page asks its question (hold_back)."""
    st.session_state[HELD] = set()
    st.session_state[WAITING] = False


def hold_back(names: tuple[str, ...]) -> None:
    """A question waits on this page: for the rest of this run, keep these symbols' meanings out of 'Symbols on
    this page' (together they give its answer: Question.symbols), and the engine's code (code_for_step), whose
    shape comments and note give the shapes the step's question asks about."""
    st.session_state.setdefault(HELD, set()).update(names)
    st.session_state[WAITING] = True


def symbols(*names: str | notation.Symbol, container=st) -> None:
    """'Symbols on this page': each symbol the page uses, with its one meaning in the whole app (teaching.notation;
    a Symbol itself where the meaning follows the example, as notation.score_symbol), and every symbol those
    meanings write (notation.complete). A symbol that gives away the answer to the page's waiting question is
    listed without its meaning until the student answers or reveals it."""
    shown = st.session_state.get("view")  # (settings, example) of the page: z_ts with the scale this example used
    variants = {} if shown is None else {"z_{ts}": notation.score_symbol(shown[1].cfg.scale)}
    entries = notation.complete([notation.symbol(s) if isinstance(s, str) else s for s in names], variants)
    held = st.session_state.get(HELD, set())
    with container.expander("Symbols on this page", icon=":material/function:"):
        st.markdown("\n".join(f"- ${s.latex}$: " + ("its meaning appears with the answer to the question above."
                                                    if s.latex in held else s.meaning) for s in entries))


def code_for_step(step: int, note: str = "") -> None:
    """The engine's real source lines for this step, and `note` on what they did in this example; while the page's
    question waits (hold_back), a line that says when they appear."""
    if st.session_state.get(WAITING):
        st.caption(":material/code: The code that computed this (mha_core/engine.py) appears once you answer or "
                   "reveal the question above.")
        return
    with st.expander("The code that computed this (mha_core/engine.py)", expanded=False):
        st.code(step_source(step), language="python", wrap_lines=True)
        st.caption(CODE_NAMES[step] + (f" {note}" if note else ""))


def next_step(page: str, label: str) -> None:
    st.divider()
    st.page_link(page, label=f"Next: {label} →", icon=":material/arrow_forward:")


def reproduce_in_pytorch(settings: Settings) -> None:
    card = settings.spec.card
    with st.expander("Reproduce in PyTorch"):
        if card is not None and card.kind == "decoder":
            st.caption(f"Rebuilds layer {settings.view.layer} of {card.name} in PyTorch, from the input of that layer, "
                       "and prints the output shown here: RMSNorm, the projections, RoPE, then causal grouped-query "
                       "attention by F.scaled_dot_product_attention(is_causal=True, enable_gqa=True) and W_O. "
                       "torch.nn.MultiheadAttention cannot compute this layer: it has no shared key/value heads and "
                       "no RoPE.")
            st.code(torch_script(settings.spec, settings.view.layer), language="python", wrap_lines=True)
            return
        st.caption("Rebuilds this exact example in PyTorch and prints the output shown here: with "
                   "torch.nn.MultiheadAttention, or head by head with F.scaled_dot_product_attention where the module "
                   "lacks an option used here (grouped-query heads, a head mask, another scale).")
        st.code(torch_script(settings.spec, settings.view.layer), language="python", wrap_lines=True)
        st.caption("`mha` is PyTorch's own layer, given the same weights; its `in_proj_weight` is W_Q, W_K and W_V "
                   "stacked. `attn_mask` and `key_padding_mask` are True where a pair or a key is blocked.")


def untrained_line(spec: Spec) -> str:
    """With random weights (not the tiny example's): that the patterns mean nothing, and where real heads are ("" with
    a trained model)."""
    if spec.card is not None or spec.input == "tiny":
        return ""
    planted = f" (but head {spec.plant_head}, planted by hand)" if spec.plant != "none" else ""
    return (f"**Random weights**: every number and shape is exact, but the patterns mean nothing{planted}; random "
            f"heads look alike. Real heads: **{MODELS[1]}**.")


def untrained_note(settings: Settings) -> None:
    """untrained_line in one caption, beside a button that switches to the trained model."""
    text = untrained_line(settings.spec)
    if not text:
        return
    trained = MODELS[1]
    left, right = st.columns([4, 1], vertical_alignment="center")
    left.caption(f":material/casino: {text}")
    right.button(f"Switch to {trained}", on_click=_switch_to, args=(trained,), key="switch_to_trained",
                 type="tertiary")


def token_spelling(spec: Spec) -> None:
    """How the tokens on the page spell a space (Ġ) and a new line, for a model that needs it: a page calls this
    where its tokens first appear."""
    note = spelling_note(spec)
    if note:
        st.caption(f":material/space_bar: {note}")


def bias_note(example: Example) -> str:
    """What the bias terms of the formulas are in this example: absent, all zero, or learned."""
    w = example.weights
    if w.b_Q is None:
        return "This example has no bias terms, so its formulas have none."
    if example.run is not None:
        return "The biases b are the model's own, learned in training."
    if not any(np.any(b) for b in (w.b_Q, w.b_K, w.b_V, w.b_O)):
        return ("The biases b are in the formulas because this layer has them, but here they are all 0: random "
                "weights start their biases at 0, as nn.MultiheadAttention does.")
    return ("Random weights start their biases at 0, as nn.MultiheadAttention does; the planted head's part of b_Q "
            "was solved for with its queries, so it is not 0.")


def offer_trained(why: str, sidebar: bool = True) -> None:
    """`why` a trained model is needed, how to choose one, and a button for each installed one. sidebar=False: the
    sidebar is hidden (presentation mode), so only the buttons are offered."""
    trained = _trained()
    st.info(f"{why} Choose "
            + " or ".join(f"**{name}** ({_a(PRETRAINED[name].kind)})" for name in trained)
            + (" under *Weights* in the sidebar, or use the button." if sidebar else " with its button below."))
    switch_buttons()


def switch_buttons() -> None:
    """A button for each installed trained model that switches the weights to it (where the sidebar is hidden, the
    way to another model)."""
    for i, name in enumerate(_trained()):
        st.button(f"Switch to {name}", on_click=_switch_to, args=(name,), type="primary" if not i else "secondary",
                  key=f"switch_{i}")


def _trained() -> list[str]:
    """The trained models that are installed; the first one when none is (its button then says how to install it)."""
    return [name for name in MODELS[1:] if PRETRAINED[name].installed()] or [MODELS[1]]


def needs_pretrained(example: Example):
    """The example's run of a trained model; with random weights, say how to switch and stop the page."""
    if example.run is None:
        offer_trained("This page shows a trained model.")
        st.stop()
    for note in example.notes:
        st.info(note)
    return example.run


def _a(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def _switch_to(model: str) -> None:
    st.session_state.model = model


def _pick_head() -> None:
    """Copy the page's layer/head pickers into the sidebar's (URL-bound) selection."""
    st.session_state.layer = st.session_state.pick_layer
    st.session_state.head = st.session_state.pick_head


def open_head_in_step_through(n_layers: int, n_heads: int, settings: Settings) -> None:
    """Layer and head pickers (they move the sidebar's selection), and a link to that head's attention page."""
    st.header("Open one head in the step-through")
    left, middle, right = st.columns([1, 1, 2], vertical_alignment="bottom")
    layer, head = settings.view.layer, settings.view.head
    left.selectbox("Layer", list(range(1, n_layers + 1)), index=layer - 1, key="pick_layer", on_change=_pick_head)
    middle.selectbox("Head", list(range(1, n_heads + 1)), index=head - 1, key="pick_head", on_change=_pick_head)
    with right:
        st.page_link("pages/attention.py", label=f"Step through layer {layer}, head {head}",
                     icon=":material/open_in_new:")
