"""Page sections for the experiments on heads: shared key/value heads, the 1/√d_k switch, planted and switched-off
heads. Each function draws one section of a step page from the example on view (text, metrics, figures); the
numbers come from mha_core and the words from copy.experiments, so the pages stay thin and no text is written twice.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from mha_app.copy import experiments as say
from mha_app.copy.experiments import cross_attention_text, heads_off_text
from mha_app.copy.markup import quote, readable
from mha_app.run import compute
from mha_app.state.example import Example
from mha_app.state.settings import Settings, control, default
from mha_app.ui import widgets
from mha_app.ui.charts import plot
from mha_core import cost
from mha_core.experiments import ablation, plant, scaling
from mha_core.figures import experiments as xfig
from mha_core.figures.decoder import next_token_label
from mha_core.teaching.notation import score_product
from mha_core.teaching.published import preset

LLAMA = preset("llama-2-70b")  # the published model that shares K/V heads, cited where sharing is explained


# --- Cross-attention -------------------------------------------------------------------------------------------


def cross_attention_note(ex: Example) -> None:
    """cross_attention_text, in a box (nothing in self-attention)."""
    if text := cross_attention_text(ex.n, ex.m_source):
        st.info(text, icon=":material/compare_arrows:")


# --- Grouped-query attention -----------------------------------------------------------------------------------

def _kv_parameters(d_model: int, h: int, n_kv: int, bias: bool) -> int:
    shapes = cost.param_shapes(d_model, h, n_kv, bias)
    return sum(math.prod(shape) for name, shape in shapes.items() if name[-1] in "KV")


def kv_sharing(ex: Example) -> None:
    """With grouped-query attention: which query heads share each key/value head, and what that saves."""
    cfg = ex.cfg
    h, kv, d_k = cfg.n_heads, cfg.kv_heads, cfg.d_k
    if kv == h:
        return
    st.markdown(say.kv_sharing_text(h, kv, d_k, LLAMA.name, LLAMA.n_heads, LLAMA.n_kv_heads))
    plot(xfig.kv_groups_figure(h, kv), key="kv_groups")
    full, shared = (_kv_parameters(cfg.d_model, h, n, cfg.bias) for n in (h, kv))
    cache_full, cache = (cost.kv_cache_bytes(1, n, d_k, 1, bytes_per_value=2) for n in (h, kv))
    left, middle, right = st.columns(3)
    # ASCII minus signs: Streamlit reads the sign to choose the arrow; "inverse" shows a saving in green.
    left.metric("K and V parameters", f"{shared:,}", say.kv_saving_delta(full - shared), delta_color="inverse")
    middle.metric("K/V cache per token and layer (16-bit)", f"{cache:,} bytes", f"-{cache_full - cache:,} bytes",
                  delta_color="inverse")
    right.metric("Saving on K, V and the cache", f"{h // kv}×")
    st.caption(say.kv_cache_caption(h, kv))


# --- The 1/√d_k switch -----------------------------------------------------------------------------------------

def scaling_comparison(settings: Settings, ex: Example) -> None:
    """The same raw scores softmaxed with and without 1/√d_k, side by side."""
    cfg, head = ex.cfg, settings.view.head - 1
    comparison = compute.scale_comparison(settings.spec, ex.layer, head)
    # Rounded first, so the product on screen is the product of the numbers on screen.
    q_rms, k_rms = (float(f"{size:.3g}") for size in (comparison.q_rms, comparison.k_rms))
    st.markdown(say.scaling_text(cfg.d_k, score_product(cfg.group_size), comparison.raw_std, q_rms, k_rms,
                                 cfg.scale == 1.0, settings.spec.card.name if settings.spec.card else None))
    st.caption(say.scaling_over(comparison.entropy[scaling.SCALES[0]].shape[0]))
    cols = st.columns(4)
    for col, (label, values) in zip(cols, (
            ("mean entropy, with 1/√d_k", comparison.entropy[scaling.SCALES[0]]),
            ("mean entropy, without", comparison.entropy[scaling.SCALES[1]]),
            ("mean largest weight, with 1/√d_k", comparison.peak[scaling.SCALES[0]]),
            ("mean largest weight, without", comparison.peak[scaling.SCALES[1]])), strict=True):
        col.metric(label, f"{values.mean():.3f}" + (" bits" if "entropy" in label else ""),
                   help=say.MEAN_OVER_LAYER)
    mask = None if ex.trace.mask is None else ex.trace.mask[comparison.head]
    plot(xfig.scale_weights_figure(comparison, ex.tokens, ex.key_tokens, mask), key="scale_weights")
    plot(xfig.scale_summary_figure(comparison), key="scale_summary")
    if settings.spec.card is None:
        st.caption(say.scaling_switch_caption(settings.spec.input == "tiny"))


# --- Planted heads ---------------------------------------------------------------------------------------------

def planted_head(settings: Settings, ex: Example) -> None:
    """The planted head: the rule, the head's weights, and how closely least squares could follow the rule."""
    spec, cfg, tr = settings.spec, ex.cfg, ex.trace
    if spec.plant == default("plant"):
        if spec.card is None:
            st.caption(say.PLANT_INVITE)
        return
    head, pattern, strength = spec.plant_head - 1, spec.plant, spec.strength
    fit = plant.fit(tr, head, pattern, strength)
    n, m, d_k = tr.weights.shape[1], tr.weights.shape[2], cfg.d_k
    st.header(say.planted_title(head + 1, plant.PATTERNS[pattern]))
    st.markdown(say.planted_text(plant.EVIDENCE[pattern], head + 1, d_k, cfg.bias, plant.LEAST_SQUARES,
                                 score_product(cfg.group_size, head, tex=True), say.planted_aim(pattern, strength, m)))
    tol = 1e-3 if tr.scores.dtype == np.float32 else 1e-8
    if fit.score_error <= tol:
        st.success(say.fit_exact(readable(fit.score_error)), icon=":material/check_circle:")
    else:
        st.warning(say.fit_closest(fit.score_error, fit.weight_error, n, m, d_k), icon=":material/straighten:")
    if cfg.causal and pattern == "next":
        st.info(say.CAUSAL_NEXT)
    plot(xfig.plant_figure(tr, head, fit, ex.tokens, ex.key_tokens), key="plant_rule")


# --- Switched-off heads ----------------------------------------------------------------------------------------


def heads_off_caption(settings: Settings, made: str) -> None:
    """heads_off_text, on Steps 1 and 2, as a caption (nothing when no head is off)."""
    if text := heads_off_text(settings.spec.ablate, made):
        st.caption(f":material/block: {text}")


def switched_off_note(settings: Settings, ex: Example) -> None:
    """On the attention page: the focused head is computed as usual even when it is switched off later."""
    if settings.view.head in settings.spec.ablate:
        st.info(say.focused_head_off(settings.view.head), icon=":material/block:")


def model_ablation_note(settings: Settings) -> None:
    """On the trained model's own pages: the attention of later layers is that of the model with heads off."""
    off, layer = settings.spec.ablate, settings.view.layer
    if off and settings.spec.card:
        st.info(say.model_heads_off(off, layer), icon=":material/block:")


def _rank_button(settings: Settings) -> bool:
    """The "Rank the heads" button; the ranking stays shown for this spec and layer until they change.

    A callback records the click (it runs before the script, so a rerun cannot lose it).
    """
    key = (settings.spec, settings.view.layer)
    st.button("Rank the heads", key="rank", icon=":material/leaderboard:", on_click=_rank, args=(key,),
              help=say.RANK_HELP)
    return st.session_state.get("ranked") == key


def _rank(key) -> None:
    st.session_state.ranked = key


def ablation_results(settings: Settings, ex: Example) -> None:
    """On the output page: how far each token's output moved, the ranking of the heads, and in a trained model the
    later layers and the sentence vector."""
    spec, tr, w = settings.spec, ex.trace, ex.weights
    off = spec.ablate
    st.header("Switching heads off")
    weights = "trained" if spec.card else "tiny" if spec.input == "tiny" else "random"
    st.markdown(say.ablation_intro(weights, bool(off), bool(off or spec.card and spec.card.kind != "decoder")))
    if off:
        change = ablation.output_change(tr, w)
        moved = change.distance / np.maximum(np.linalg.norm(change.full, axis=-1), 1e-30)
        cos = change.cosine[np.isfinite(change.cosine)]
        left, right = st.columns(2)
        left.metric("Mean change of a token's output", f"{100 * moved.mean():.1f} % of its length")
        right.metric("Lowest cosine to the full output", f"{cos.min():.4f}" if cos.size else "undefined")
        plot(xfig.output_change_figure(change, ex.tokens, off), key="output_change")
        if len(off) == ex.cfg.n_heads:
            st.caption(say.all_heads_off(w.b_O is not None))
        if not cos.size or cos.size < change.cosine.size:
            st.caption(say.COSINE_LEFT_OUT)
    st.markdown(say.ranking_question(ex.layer if spec.card else None, off, spec.card is not None, ex.cfg.n_heads))
    if not _rank_button(settings):
        return
    if spec.card is None:
        plot(xfig.removal_figure(ablation.removal_effects(tr, w), say.RANKING_TITLE,
                                 "mean |output change| per token", off), key="ranking")
        st.caption(say.RANKING_ONE_LAYER)
        return
    ranking = compute.model_head_ranking(spec, ex.layer)
    if ranking.next_probability is not None:  # a decoder: measured by its prediction of the next token
        token = quote(next_token_label(compute.full_example(spec, ex.layer).run.next_tokens[0]))
        drop = ranking.top_probability - ranking.next_probability
        plot(xfig.removal_figure(drop, say.next_token_ranking_title(ex.layer, ranking.top_probability),
                                 "drop in probability", off), key="ranking")
        best = int(np.argmax(np.abs(drop)))  # either way: a head whose loss raises the probability matters too
        said = say.next_token_ranking(best + 1, ex.layer, token, float(drop[best]))
    else:
        turn = 1 - ranking.embedding_cosine
        plot(xfig.removal_figure(turn, say.sentence_vector_ranking_title(ex.layer), "1 − cosine", off), key="ranking")
        said = say.sentence_vector_ranking(int(np.argmax(turn)) + 1, ex.layer)
    plot(xfig.removal_figure(ranking.relative_change, say.last_layer_ranking_title(ex.layer), "relative change", off),
         key="ranking_last")
    st.caption(said)


def model_effects(settings: Settings, ex: Example) -> None:
    """For a trained model: the switched-off heads' effect on every later layer, and on what the model is used for:
    the sentence vector of an encoder like MiniLM, the next token of a decoder like SmolLM2."""
    spec = settings.spec
    if spec.card is None:
        return
    off, layer = spec.ablate, ex.layer
    decoder = spec.card.kind == "decoder"
    st.header("Through the rest of the model")
    if off:
        full = compute.full_example(spec, layer)
        change = ablation.hidden_change(full.run, ex.run)
        plot(xfig.layer_change_figure(change, layer - 1), key="layer_change")
        st.caption(say.layer_change_caption(layer, decoder))
    if decoder:
        next_token_change(settings, ex)
        return
    st.markdown(say.sentence_vector_text(spec.card.name, off, layer))
    c = control("compare")
    other = st.text_input(c.label, value=default("compare"), max_chars=c.max_chars, key="compare", bind=widgets.BIND,
                          help=c.help)
    if not other.strip():
        st.info(say.TYPE_COMPARE)
        return
    try:
        full_cos, off_cos = compute.sentence_similarity(spec, layer, other)
    except ValueError as err:  # ConfigError: text the model cannot read
        st.warning(str(err))
        return
    left, right = st.columns(2)
    left.metric("Cosine similarity, every head", f"{full_cos:.4f}")
    if off:
        right.metric(say.heads_off_label(off), f"{off_cos:.4f}", f"{off_cos - full_cos:+.4f}")
    st.caption(say.similarity_caption(other))


def next_token_change(settings: Settings, ex: Example) -> None:
    """For a decoder: the five most likely next tokens with every head, and with the switched-off heads off."""
    spec, off, layer = settings.spec, settings.spec.ablate, ex.layer
    st.markdown(say.next_token_text(spec.card.name, off, layer))
    if not off:
        return
    full = compute.full_example(spec, layer).run.next_tokens
    table = {"rank": list(range(1, len(full) + 1)),
             "every head": [next_token_label(t) for t in full],
             "p (every head)": [round(t.probability, 4) for t in full],
             say.heads_off_named(off): [next_token_label(t) for t in ex.run.next_tokens],
             f"p ({say.heads_off_named(off)})": [round(t.probability, 4) for t in ex.run.next_tokens]}
    st.dataframe(table, hide_index=True, key="next_token_change")
    before, after = full[0], ex.run.next_tokens[0]
    st.caption(say.next_token_caption(before.id == after.id, next_token_label(before), next_token_label(after), off))
