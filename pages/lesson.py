"""The lesson: multi-head attention one idea per screen, with this example's numbers. With present=1 in the link it
fills a projector: large type, no sidebar, Next and Back; every screen has its own link."""

import numpy as np
import streamlit as st

from mha_app.copy import lesson as say
from mha_app.copy.inside import (
    CONTRIBUTION_IN_BRIEF,
    SOURCES,
    plane_in_brief,
    rollout_in_brief,
    rollout_sentence,
    rollout_untrained,
)
from mha_app.copy.lesson import SCREENS
from mha_app.copy.steps import concat_heads_off
from mha_app.frame import present
from mha_app.run import compute
from mha_app.run.view import view
from mha_app.sections import inside
from mha_app.sections.by_hand import scaled_latex, show_worked, worked
from mha_app.sections.cost import plot_step_costs
from mha_app.ui.charts import plot
from mha_app.ui.notices import offer_trained, switch_buttons, token_spelling, untrained_note
from mha_app.ui.questions import predict
from mha_core import cost, figures
from mha_core.figures.inside import PlaneSize
from mha_core.figures.lesson import kv_cache_figure
from mha_core.teaching import formulas, questions
from mha_core.teaching.notation import score_product
from mha_core.teaching.published import cache_length_note, kv_cache_table, preset, presets

settings, ex = view()
presenting = settings.view.present
if presenting:
    present.large_type()
number = settings.view.screen
if st.session_state.get("lesson_screen", number) != number:
    present.scroll_to_top(number)
st.session_state.lesson_screen = number
name = SCREENS[number - 1][0]
tr, cfg, tokens, keys = ex.trace, ex.cfg, ex.tokens, ex.key_tokens  # keys: None in self-attention
n, m = tr.weights.shape[1:]
h, d, d_k = cfg.n_heads, cfg.d_model, cfg.d_k
head, query = settings.view.head - 1, settings.view.query - 1


def show(fig, key: str) -> None:
    plot(present.enlarge(fig, present.figure_height(name)) if presenting else fig, key=key)


def navigation(suffix: str, shortcuts: bool = False) -> None:
    """Back, where we are, Next (the arrow keys press them when `shortcuts`: one row of buttons holds them);
    presenting, the way out of presentation mode too, in the same row."""
    if presenting:
        back, where, leave, forward = st.columns([1, 1, 1, 1], vertical_alignment="center")
        leave.button(say.LEAVE, key="leave", on_click=present.leave, type="tertiary", width="stretch")
    else:
        back, where, forward = st.columns([1, 2, 1], vertical_alignment="center")
    back.button("Back", key=f"back{suffix}", on_click=present.go_to, args=(number - 1,), disabled=number == 1,
                width="stretch", shortcut="Left" if shortcuts else None)
    where.markdown(say.where(number), text_alignment="center")
    forward.button("Next", key=f"next{suffix}", on_click=present.go_to, args=(number + 1,),
                   disabled=number == len(SCREENS), width="stretch", type="primary",
                   shortcut="Right" if shortcuts else None)


if presenting:  # one row of buttons, above the screen: the presenter never scrolls to move on
    navigation("", shortcuts=True)
st.title(say.screen_title(number))
if not presenting:
    untrained_note(settings)  # a presentation keeps to one idea a screen; its heads screen says it in a line
if not presenting or name == "tokens":  # presenting: where the tokens are first shown
    token_spelling(settings.spec)


def tokens_screen():
    st.markdown(say.tokens_text(n, d, None if keys is None else m))
    if predict("x_size"):  # the answer gives X's shape as a formula
        show(figures.input_figure(tr.x, tokens), "x")


def heads_screen():
    rotated = cfg.rope_theta is not None
    st.markdown(say.heads_text(h, cfg.group_size, rotated))
    st.latex(r"d_k = \frac{d_{model}}{h} = \frac{%d}{%d} = %d,\qquad Q_i = %s"
             % (d, h, d_k, r"\mathrm{RoPE}(X W^Q_i)" if rotated else "X W^Q_i"))
    if predict("q_shape"):
        # presenting: the panels in one row, tall enough to name every token at the projector's size
        show(figures.per_head_figure(tr.q, tokens, "Q", cols=h if presenting and h <= 8 else None), "q")


def scores_screen():
    st.markdown(say.scores_text(head, cfg.scale, cfg.causal))
    st.latex(r"Z_{%d} = %s \in \mathbb{R}^{%d \times %d},\qquad z_{ts} = %s"
             % (head + 1, scaled_latex(score_product(cfg.group_size, head, tex=True), cfg), n, m,
                scaled_latex(r"q_t \cdot k_s", cfg)))
    show(figures.attention_figure(tr, head, tokens, "scaled", cfg.softmax_scale, keys), "scores")


def softmax_screen():
    st.markdown(say.softmax_text(head, query, tokens))
    st.latex(r"\alpha_{ts} = \frac{e^{z_{ts}}}{\sum_{s'} e^{z_{ts'}}}")
    if predict("strongest_share"):
        show(figures.query_weights_figure(tr, head, query, tokens, keys), "row")


def by_hand_screen():
    row = tr.weights[head, query]
    key = int(np.argmax(row))
    tied = int((row.max() - row <= questions.TIE).sum())
    st.markdown(say.by_hand_text(head, query, key, tokens, ex.keys, tied, bool(tr.blocked_rows[head, query])))
    show_worked(worked(ex, head, query, key), ex, figure=False)


def mix_screen():
    st.markdown(say.mix_text(query, tokens))
    st.latex(r"\mathrm{head}_{%d}[t] = \sum_s \alpha_{ts}\, v_s,\qquad t = %d" % (head + 1, query + 1))
    show(figures.value_mix_figure(tr, head, query, tokens, cfg.group_size, keys), "mix")


def grid_screen():
    st.markdown(say.grid_text(h))
    # presenting: the panels in one row, tall enough to name every token at the projector's size
    show(figures.head_grid_figure(tr, tokens, keys, group_size=cfg.group_size,
                                  cols=h if presenting and h <= 8 else None), "grid")
    spec = settings.spec
    if spec.card is None and spec.input != "tiny" and spec.plant == "none":
        st.caption(say.random_heads_note(presenting))
        if presenting:
            switch_buttons()


def concat_screen():
    st.markdown(say.CONCAT_TEXT)
    if not predict("concat_width"):
        return
    st.latex(r"\mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_{%d}) \in \mathbb{R}^{%d \times %d}"
             % (h, n, h * d_k))
    if settings.spec.ablate:
        st.caption(concat_heads_off(settings.spec.ablate))
    show(figures.concat_figure(tr, tokens), "concat")


def w_o_screen():
    st.markdown(say.W_O_TEXT)
    st.latex(formulas.multihead_output(cfg, keys is not None))  # with b^O where the answer counts biases
    if predict("w_o_size"):
        show(figures.output_weight_figure(ex.weights.W_O, h), "w_o")


def cost_screen():
    if not predict("heads_cost"):
        return
    plot_step_costs(ex, (lambda fig: present.enlarge(fig, present.figure_height(name))) if presenting else None)
    st.markdown(say.COST_TEXT)
    st.latex(r"h \cdot n \cdot m \cdot d_k = %d \cdot %d \cdot %d \cdot %d = %s = n \cdot m \cdot d_{model}"
             % (h, n, m, d_k, cost.latex_count(h * n * m * d_k)))


def cache_screen():
    seq_len, batch = settings.view.seq_len, settings.view.batch
    st.markdown(say.CACHE_TEXT)
    for shape in (preset("gpt-3-175b"), preset("llama-2-70b")):
        st.latex(r"\text{%s (%s): } 2 \cdot %d \cdot %d \cdot %d \cdot 2 = %s\text{ bytes per token}"
                 % (shape.name, shape.attention, shape.n_layers, shape.n_kv_heads, shape.d_k,
                    cost.latex_count(shape.kv_cache_bytes())))
    show(kv_cache_figure(kv_cache_table(seq_len, batch), seq_len, batch), "kv_cache")
    encoders = [shape.name for shape in presets() if not shape.decoder]
    st.caption(say.cache_note(encoders, cache_length_note(seq_len)))


def plane_screen():
    plane = compute.qk_plane(settings.spec, ex.layer, head)
    st.markdown(say.plane_lines(plane, query, tokens) if presenting else plane_in_brief(plane, query, tokens))
    # presenting: no legend and a one-line title, since the text above names the marks and gives the numbers
    size = PlaneSize(present.figure_height(name), present.TITLE_ROOM, 70, present.FIGURE_FONT, brief=True) \
        if presenting else None
    show(figures.qk_plane_figure(plane, tokens, query, keys, group_size=cfg.group_size, size=size), "plane")
    st.caption(SOURCES["plane"])


def adds_screen():
    st.markdown(CONTRIBUTION_IN_BRIEF)
    st.latex(inside.CONTRIBUTION_LATEX)
    shown, picked, _ = inside.weight_overstated(settings, ex)  # where the numbers show the title best
    weights, _, _, shares = inside.query_contributions(settings, ex, picked, shown)
    key = int(np.argmax(weights))
    st.markdown(say.adds_text(shown, picked, key, tokens, ex.keys, weights[key], shares[key], n))
    show(figures.weight_share_figure(weights, shares, shown, picked, tokens, keys), "adds")
    st.caption(SOURCES["contributions"])


def rollout_screen():
    if ex.run is None:
        offer_trained(rollout_untrained(), sidebar=not presenting)
        return
    layers = len(ex.run.layers)
    st.markdown(rollout_in_brief(layers))
    flow = compute.rollout(settings.spec, ex.layer)
    show(figures.rollout_figure(flow, tokens, layers=sorted({0, layers // 2, layers - 1})), "rollout")
    st.markdown(rollout_sentence(flow, tokens, query))
    st.caption(SOURCES["rollout"])


DRAW = {key: globals()[f"{key}_screen"] for key, _ in SCREENS}  # each screen of SCREENS is drawn by KEY_screen
DRAW[name]()

if not presenting:
    st.divider()
    navigation("", shortcuts=True)
    base = (st.context.url or "http://localhost:8501/lesson").split("?")[0]
    st.link_button(say.PRESENT, present.screen_url(settings, base, number, ex.n), icon=":material/co_present:")
    with st.expander(say.PLAN_LABEL):
        st.caption(say.PLAN_NOTE)
        urls = [present.screen_url(settings, base, i, ex.n) for i in range(1, len(SCREENS) + 1)]
        st.code(say.lesson_plan(urls), language=None, wrap_lines=True)
