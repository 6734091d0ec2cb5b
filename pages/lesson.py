"""The lesson: multi-head attention one idea per screen, with this example's numbers. With present=1 in the link it
fills a projector: large type, no sidebar, Next and Back; every screen has its own link."""

import numpy as np
import streamlit as st

from mha_app.copy.lesson import SCREENS
from mha_app.copy.markup import quote
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
name, title = SCREENS[number - 1]
tr, cfg, tokens, keys = ex.trace, ex.cfg, ex.tokens, ex.key_tokens  # keys: None in self-attention
n, m = tr.weights.shape[1:]
h, d, d_k = cfg.n_heads, cfg.d_model, cfg.d_k
head, query = settings.view.head - 1, settings.view.query - 1
who = f"query {query + 1} {quote(tokens[query])}"


def show(fig, key: str) -> None:
    plot(present.enlarge(fig, present.figure_height(name)) if presenting else fig, key=key)




def navigation(suffix: str, shortcuts: bool = False) -> None:
    """Back, where we are, Next (the arrow keys press them when `shortcuts`: one row of buttons holds them)."""
    back, where, forward = st.columns([1, 2, 1], vertical_alignment="center")
    back.button("Back", key=f"back{suffix}", on_click=present.go_to, args=(number - 1,), disabled=number == 1,
                width="stretch", shortcut="Left" if shortcuts else None)
    where.markdown(f"Screen {number} of {len(SCREENS)}", text_alignment="center")
    forward.button("Next", key=f"next{suffix}", on_click=present.go_to, args=(number + 1,),
                   disabled=number == len(SCREENS), width="stretch", type="primary",
                   shortcut="Right" if shortcuts else None)


if presenting:  # a screen's question or figure can fill the projector: Next stays in view above it, without scrolling
    navigation("_top")
st.title(f"{number} · {title}")
if not presenting:
    untrained_note(settings)  # a presentation keeps to one idea a screen; its heads screen says it in a line
if not presenting or name == "tokens":  # presenting: where the tokens are first shown
    token_spelling(settings.spec)


def tokens_screen():
    st.markdown(f"The attention layer reads **{n} tokens**, each one a row of **d_model = {d} numbers**. "
                "Stacked, they form the matrix X." + ("" if keys is None else " They are the sentence being written; "
                                                      f"its keys and values come from the source sentence, {m} tokens "
                                                      "(cross-attention)."))
    if predict("x_size"):
        st.latex(r"X \in \mathbb{R}^{%d \times %d}" % (n, d))
        show(figures.input_figure(tr.x, tokens), "x")


def heads_screen():
    others = cfg.group_size - 1
    shared = ("its own W_Q, W_K and W_V" if others == 0 else
              f"its own W_Q, and shares W_K and W_V with {others} other head{'s' if others > 1 else ''}")
    rotated = cfg.rope_theta is not None
    st.markdown(f"Each of the **{h} head{'s' if h > 1 else ''}** gets {shared}, and works in **d_k = d_model / h** "
                "dimensions: a smaller space of its own."
                + (" Its queries and keys are then turned by their position (RoPE)." if rotated else ""))
    st.latex(r"d_k = \frac{d_{model}}{h} = \frac{%d}{%d} = %d,\qquad Q_i = %s"
             % (d, h, d_k, r"\mathrm{RoPE}(X W^Q_i)" if rotated else "X W^Q_i"))
    if predict("q_shape"):
        # presenting: the panels in one row, tall enough to name every token at the projector's size
        show(figures.per_head_figure(tr.q, tokens, "Q", cols=h if presenting and h <= 8 else None), "q")


def scores_screen():
    scaled = ("scaled by 1/√d_k so that its typical size does not grow with d_k (under the paper's assumptions: "
              "independent numbers of mean 0 and variance 1)" if cfg.scale is None else
              f"multiplied by {cfg.scale:g} instead of the usual 1/√d_k")
    st.markdown(f"Head {head + 1} compares every query with every key: one dot product per pair, {scaled}. "
                "A large score means a good match."
                + (" The causal mask hides every key after its query: those cells stay blank." if cfg.causal else ""))
    st.latex(r"Z_{%d} = %s \in \mathbb{R}^{%d \times %d},\qquad z_{ts} = %s"
             % (head + 1, scaled_latex(score_product(cfg.group_size, head, tex=True), cfg), n, m,
                scaled_latex(r"q_t \cdot k_s", cfg)))
    show(figures.attention_figure(tr, head, tokens, "scaled", cfg.softmax_scale, keys), "scores")


def softmax_screen():
    st.markdown(f"Softmax turns each row of scores into weights: all ≥ 0, summing to 1. Here is the row of {who} "
                f"in head {head + 1}.")
    st.latex(r"\alpha_{ts} = \frac{e^{z_{ts}}}{\sum_{s'} e^{z_{ts'}}}")
    if predict("strongest_share"):
        show(figures.query_weights_figure(tr, head, query, tokens, keys), "row")


def by_hand_screen():
    row = tr.weights[head, query]
    key = int(np.argmax(row))
    tied = int((row.max() - row <= questions.TIE).sum())
    strongest = "every key is blocked" if tr.blocked_rows[head, query] else (
        "its strongest" if tied == 1 else f"tied with {tied - 1} other{'s' if tied > 2 else ''} for its strongest")
    st.markdown(f"The weight of {who} on key {key + 1} {quote(ex.keys[key])} ({strongest}), in head {head + 1}: "
                "multiply, add, scale, exponentiate, normalise.")
    show_worked(worked(ex, head, query, key), ex, figure=False)


def mix_screen():
    st.markdown(f"The head's output for {who} is the sum of every key's value vector, each times its weight.")
    st.latex(r"\mathrm{head}_{%d}[t] = \sum_s \alpha_{ts}\, v_s,\qquad t = %d" % (head + 1, query + 1))
    show(figures.value_mix_figure(tr, head, query, tokens, cfg.group_size, keys), "mix")


def grid_screen():
    st.markdown(f"The {h} heads read the same tokens but weigh them differently: each asks its own queries."
                if h > 1 else "This example has one head; with more, each would weigh the tokens its own way.")
    # presenting: the panels in one row, tall enough to name every token at the projector's size
    show(figures.head_grid_figure(tr, tokens, keys, group_size=cfg.group_size,
                                  cols=h if presenting and h <= 8 else None), "grid")
    spec = settings.spec
    if spec.card is None and spec.input != "tiny" and spec.plant == "none":
        st.caption("These weights are random, not trained, so how the heads differ means nothing here. In a trained "
                   "model some heads specialise, and a few of them do most of the work (Voita et al. 2019); many "
                   "others can be removed with little loss (Michel et al. 2019). "
                   # presentation mode hides the sidebar: its buttons are the way to a trained model there
                   + ("Switch to a trained model with a button below." if presenting else
                      "Choose a trained model under Weights."))
        if presenting:
            switch_buttons()


def concat_screen():
    st.markdown("The heads' outputs are put side by side. Nothing is mixed yet: each column belongs to one head.")
    if not predict("concat_width"):
        return
    st.latex(r"\mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_{%d}) \in \mathbb{R}^{%d \times %d}"
             % (h, n, h * d_k))
    if settings.spec.ablate:
        st.caption(f"Switched off: head {', '.join(map(str, settings.spec.ablate))}. Their columns are multiplied by "
                   "0 here, so W_O never sees them.")
    show(figures.concat_figure(tr, tokens), "concat")


def w_o_screen():
    st.markdown("W_O is where the heads meet: every output number draws on every head's columns.")
    st.latex(formulas.multihead_output(cfg, keys is not None))  # with b^O where the answer counts biases
    if predict("w_o_size"):
        show(figures.output_weight_figure(ex.weights.W_O, h), "w_o")


def cost_screen():
    if not predict("heads_cost"):
        return
    plot_step_costs(ex, present.enlarge if presenting else None)
    st.markdown("With d_k = d_model / h the heads share the work of one wide head instead of adding to it: the "
                "scores of all heads take as many multiply-adds as one head of d_model.")
    st.latex(r"h \cdot n \cdot m \cdot d_k = %d \cdot %d \cdot %d \cdot %d = %s = n \cdot m \cdot d_{model}"
             % (h, n, m, d_k, cost.latex_count(h * n * m * d_k)))


def cache_screen():
    seq_len, batch = settings.view.seq_len, settings.view.batch
    st.markdown("To write each next token, a decoder keeps the keys and values of every earlier token, in every "
                "layer: the K/V cache, 2 · layers · h_kv · d_k numbers of 2 bytes per token (h_kv: the number of K/V "
                "heads). Sharing K/V heads among query heads (GQA, MQA) shrinks it.")
    for shape in (preset("gpt-3-175b"), preset("llama-2-70b")):
        st.latex(r"\text{%s (%s): } 2 \cdot %d \cdot %d \cdot %d \cdot 2 = %s\text{ bytes per token}"
                 % (shape.name, shape.attention, shape.n_layers, shape.n_kv_heads, shape.d_k,
                    cost.latex_count(shape.kv_cache_bytes())))
    show(kv_cache_figure(kv_cache_table(seq_len, batch), seq_len, batch), "kv_cache")
    encoders = [shape.name for shape in presets() if not shape.decoder]
    st.caption(f"Encoders ({', '.join(encoders)}) keep no cache: their bars show a decoder of the same shape. "
               f"{cache_length_note(seq_len)}")


def plane_screen():
    plane = compute.qk_plane(settings.spec, ex.layer, head)
    st.markdown(inside.plane_in_brief(plane, query, tokens))
    # presenting: no legend and a one-line title, since the text above names the marks and gives the numbers
    size = PlaneSize(present.figure_height(name), present.TITLE_ROOM, 70, present.FIGURE_FONT, brief=True) \
        if presenting else None
    show(figures.qk_plane_figure(plane, tokens, query, keys, group_size=cfg.group_size, size=size), "plane")
    st.caption(inside.SOURCES["plane"])


def adds_screen():
    st.markdown(inside.CONTRIBUTION_IN_BRIEF)
    st.latex(inside.CONTRIBUTION_LATEX)
    st.markdown(inside.contribution_sentence(settings, ex))
    weights, _, _, shares = inside.query_contributions(settings, ex)
    show(figures.weight_share_figure(weights, shares, head, query, tokens, keys), "adds")
    st.caption(inside.SOURCES["contributions"])


def rollout_screen():
    if ex.run is None:
        offer_trained(f"{inside.ROLLOUT_IN_ONE} This example is one layer of random weights, so there are no "
                      "layers to follow.", sidebar=not presenting)
        return
    layers = len(ex.run.layers)
    st.markdown(inside.rollout_in_brief(layers))
    flow = compute.rollout(settings.spec, ex.layer)
    show(figures.rollout_figure(flow, tokens, layers=sorted({0, layers // 2, layers - 1})), "rollout")
    st.markdown(inside.rollout_sentence(flow, tokens, query))
    st.caption(inside.SOURCES["rollout"])


SCREEN = {"tokens": tokens_screen, "heads": heads_screen, "scores": scores_screen, "softmax": softmax_screen,
          "by_hand": by_hand_screen, "mix": mix_screen, "grid": grid_screen, "concat": concat_screen,
          "w_o": w_o_screen, "cost": cost_screen, "cache": cache_screen, "plane": plane_screen, "adds": adds_screen,
          "rollout": rollout_screen}
SCREEN[name]()

st.divider()
navigation("", shortcuts=True)
base = (st.context.url or "http://localhost:8501/lesson").split("?")[0]
if presenting:
    st.button("Leave presentation mode", key="leave", on_click=present.leave, type="tertiary")
else:
    st.link_button("Present this lesson (opens a new tab: large type, no sidebar)",
                   present.screen_url(settings, base, number, ex.n), icon=":material/co_present:")
    with st.expander("A link for every screen (a lesson plan as a list of URLs)"):
        st.caption("Each link opens its screen in presentation mode, on this example (model, sentence, head, query).")
        st.code("\n".join(f"{i}. {t}\n{present.screen_url(settings, base, i, ex.n)}" for i, (_, t) in
                          enumerate(SCREENS, start=1)), language=None, wrap_lines=True)
