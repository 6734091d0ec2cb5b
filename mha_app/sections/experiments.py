"""Page sections for the experiments on heads: shared key/value heads, the 1/√d_k switch, planted and switched-off
heads. Each function draws one section of a step page from the example on view (text, metrics, figures); the
numbers come from mha_core, so the pages stay thin and no text is written twice.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from mha_app.copy.experiments import cross_attention_text, heads_off_text
from mha_app.copy.markup import quote, readable
from mha_app.copy.words import heads
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

# Sources, as cited in running text: "(Michel et al. 2019)".
MICHEL = "Michel et al. 2019"
AINSLIE = "Ainslie et al. 2023"
SHAZEER = "Shazeer 2019"
LLAMA = preset("llama-2-70b")  # the published model that shares K/V heads, cited where sharing is explained
VASWANI = "Vaswani et al. 2017"
# What a cosine is, said before the first one on the page (the output page's head experiments).
COSINE = ("The cosine of two vectors says how alike their directions are, whatever their lengths: 1 for the same "
          "direction, 0 for perpendicular ones (nothing in common), −1 for opposite ones.")


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
    h, kv, g, d_k = cfg.n_heads, cfg.kv_heads, cfg.group_size, cfg.d_k
    if kv == h:
        return
    groups = [f"query head{'s' if g > 1 else ''} {j * g + 1}{f'–{(j + 1) * g}' if g > 1 else ''} read"
              f"{'s' if g == 1 else ''} K/V head {j + 1}" for j in range(kv)]
    listed = "; ".join(groups) if kv <= 4 else "; ".join(groups[:2]) + "; and so on"
    st.markdown(
        f"Here the h = {h} query heads share **h_kv = {kv}** key/value head{'s' if kv > 1 else ''} "
        + (f"(multi-query attention, {SHAZEER}; grouped-query attention, {AINSLIE}, is the general case, with "
           f"several K/V heads: {LLAMA.name}'s {LLAMA.n_heads} query heads share {LLAMA.n_kv_heads})" if kv == 1 else
           f"(grouped-query attention, {AINSLIE}; {LLAMA.name}'s {LLAMA.n_heads} query heads share "
           f"{LLAMA.n_kv_heads} K/V heads)")
        + f": {listed}. Each query head still has its own "
        f"{d_k} columns of W_Q, but W_K and W_V have only **{kv} · {d_k} = {kv * d_k}** columns instead of "
        f"{h} · {d_k} = {h * d_k}. The lines mark the groups: each query head is joined to the K/V head it reads.")
    plot(xfig.kv_groups_figure(h, kv), key="kv_groups")
    full, shared = (_kv_parameters(cfg.d_model, h, n, cfg.bias) for n in (h, kv))
    cache_full, cache = (cost.kv_cache_bytes(1, n, d_k, 1, bytes_per_value=2) for n in (h, kv))
    left, middle, right = st.columns(3)
    # ASCII minus signs: Streamlit reads the sign to choose the arrow; "inverse" shows a saving in green.
    left.metric("K and V parameters", f"{shared:,}", f"-{full - shared:,} vs one K/V head per query head",
                delta_color="inverse")
    middle.metric("K/V cache per token and layer (16-bit)", f"{cache:,} bytes", f"-{cache_full - cache:,} bytes",
                  delta_color="inverse")
    right.metric("Saving on K, V and the cache", f"{h // kv}×")
    st.caption("A decoder keeps every past token's keys and values (the K/V cache) to write the next token; "
               f"with {kv} instead of {h} K/V heads it keeps {h // kv} times fewer. Counted by mha_core.cost.")


# --- The 1/√d_k switch -----------------------------------------------------------------------------------------

def scaling_comparison(settings: Settings, ex: Example) -> None:
    """The same raw scores softmaxed with and without 1/√d_k, side by side."""
    cfg, head = ex.cfg, settings.view.head - 1
    comparison = compute.scale_comparison(settings.spec, ex.layer, head)
    now = "without scaling" if cfg.scale == 1.0 else "with 1/√d_k"
    scaled = comparison.raw_std / math.sqrt(cfg.d_k)
    # Rounded first, so the product on screen is the product of the numbers on screen.
    q_rms, k_rms = (float(f"{size:.3g}") for size in (comparison.q_rms, comparison.k_rms))
    predicted = q_rms * k_rms
    st.markdown(
        f"{VASWANI} give one reason, and as a suspicion: “We suspect that for large values of d_k, the dot products "
        "grow large in magnitude, pushing the softmax function into regions where it has extremely small "
        "gradients.” Their footnote says why the products grow: if the d_k numbers of a query and a key are "
        "independent, with mean 0 and variance 1, their dot product has mean 0 and variance d_k. Dividing by √d_k "
        "brings that variance back to 1; this follows from the footnote's assumptions, which real queries and keys "
        f"need not meet. Here d_k = {cfg.d_k}: this layer's raw scores {score_product(cfg.group_size)} have a spread "
        f"(standard deviation) of **{comparison.raw_std:.3g}**, and **{scaled:.3g}** after dividing by "
        f"√{cfg.d_k} = {math.sqrt(cfg.d_k):.3g}. The footnote's 1 assumes every number of a query and a key has "
        "variance 1; here "
        f"their typical sizes (root mean square) are {q_rms:.3g} for the queries and {k_rms:.3g} for the keys, and "
        f"with these in place of 1 the same reasoning predicts {q_rms:.3g} × {k_rms:.3g} = **{predicted:.3g}**. "
        "What is left between prediction and measurement comes from numbers that are not independent or do not "
        "average to 0. Either way, dividing shrinks every score by the same factor. "
        + f"Below, the same raw scores are softmaxed both ways; the rest of this page is computed {now}."
        + (f" {settings.spec.card.name} was trained with the scaling: leaving it out here shows what these same "
           "scores would give without it, not how a model trained without it would behave (training would have "
           "found other weights)." if settings.spec.card else ""))
    st.caption(f"Over all {comparison.entropy[scaling.SCALES[0]].shape[0]} heads and every query of this layer "
               "(head by head in the chart below the next one):")
    cols = st.columns(4)
    for col, (label, values) in zip(cols, (
            ("mean entropy, with 1/√d_k", comparison.entropy[scaling.SCALES[0]]),
            ("mean entropy, without", comparison.entropy[scaling.SCALES[1]]),
            ("mean largest weight, with 1/√d_k", comparison.peak[scaling.SCALES[0]]),
            ("mean largest weight, without", comparison.peak[scaling.SCALES[1]])), strict=True):
        col.metric(label, f"{values.mean():.3f}" + (" bits" if "entropy" in label else ""),
                   help="The mean over every head and query token of this layer.")
    mask = None if ex.trace.mask is None else ex.trace.mask[comparison.head]
    plot(xfig.scale_weights_figure(comparison, ex.tokens, ex.key_tokens, mask), key="scale_weights")
    plot(xfig.scale_summary_figure(comparison), key="scale_summary")
    if settings.spec.card is None:
        st.caption("Switch the scaling under *Scale the scores by* in the sidebar"
                   + (", and change d_model or h to see how the gap grows with d_k." if settings.spec.input != "tiny"
                      else "."))


# --- Planted heads ---------------------------------------------------------------------------------------------

def planted_head(settings: Settings, ex: Example) -> None:
    """The planted head: the rule, the head's weights, and how closely least squares could follow the rule."""
    spec, cfg, tr = settings.spec, ex.cfg, ex.trace
    if spec.plant == default("plant"):
        if spec.card is None:
            st.caption("Some trained heads follow simple rules: Voita et al. (2019) find heads that look at the token "
                       "before or after; Clark et al. (2019) and Xiao et al. (2023) find heads that park their weight "
                       "on the first token. Choose *Plant a head* in the sidebar to build one by hand.")
        return
    head, pattern, strength = spec.plant_head - 1, spec.plant, spec.strength
    fit = plant.fit(tr, head, pattern, strength)
    n, m, d_k = tr.weights.shape[1], tr.weights.shape[2], cfg.d_k
    columns = f"{head * d_k + 1}–{(head + 1) * d_k}"
    st.header(f"Head {head + 1}, planted: {plant.PATTERNS[pattern]}")
    if pattern == "uniform":
        aim = ("The scores softmax sees (the *scaled scores* stage) should all read 0: equal scores give every key "
               "the same weight 1/m, whatever the strength")
    else:
        share = math.exp(strength) / (math.exp(strength) + m - 1)
        fraction = f"$e^{{{strength:g}}} / (e^{{{strength:g}}} + {m - 1})$"
        missing = {"previous": " A row with no key before it (the first token) spreads its weight evenly.",
                   "next": " A row with no key after it (the last token) spreads its weight evenly."}.get(pattern, "")
        aim = (f"The scores softmax sees (the *scaled scores* stage) should read **{strength:g}** on the rule's key "
               f"and 0 elsewhere; softmax then gives that key {fraction} = **{share:.3f}** of the row's weight when "
               f"all {m} keys are open (more when the mask hides some).{missing} Raise the strength to watch softmax "
               "sharpen towards one key, then saturate: past about 10 the weights hardly move")
    evidence = plant.EVIDENCE[pattern]
    st.markdown(
        f"{evidence} To plant it, only columns {columns} of W_Q (head {head + 1}'s block, as the projection page "
        f"draws it; rows in PyTorch's storage){f' and entries {columns} of b_Q' if cfg.bias else ''} were replaced: "
        f"by the best fit, found by {plant.LEAST_SQUARES}, of ${score_product(cfg.group_size, head, tex=True)} \\cdot "
        f"\\mathrm{{scale}} = \\mathrm{{strength}} \\cdot \\mathrm{{rule}}$ on this input. W_K, W_V, W_O and the "
        f"other heads are unchanged. {aim}.")
    tol = 1e-3 if tr.scores.dtype == np.float32 else 1e-8
    if fit.score_error <= tol:
        st.success(f"The fit is exact: the scores differ from strength · rule by at most {readable(fit.score_error)} "
                   "(rounding).", icon=":material/check_circle:")
    else:
        st.warning(
            f"The fit is only the closest one: the scores differ from strength · rule by up to {fit.score_error:.3g}, "
            f"and the weights from the rule's by up to {fit.weight_error:.3g}. An exact fit needs the {m} keys to be "
            f"independent vectors in the head's d_k = {d_k} dimensions (so m ≤ d_k) and the {n} inputs to be "
            "independent too" + (f"; here m = {m} > d_k = {d_k}." if m > d_k else "; here they are not quite."),
            icon=":material/straighten:")
    if cfg.causal and pattern == "next":
        st.info("The causal mask hides every token's next token, so this head cannot follow its rule: each row "
                "spreads its weight over the keys it may see.")
    plot(xfig.plant_figure(tr, head, fit, ex.tokens, ex.key_tokens), key="plant_rule")


# --- Switched-off heads ----------------------------------------------------------------------------------------


def heads_off_caption(settings: Settings, made: str) -> None:
    """heads_off_text, on Steps 1 and 2, as a caption (nothing when no head is off)."""
    if text := heads_off_text(settings.spec.ablate, made):
        st.caption(f":material/block: {text}")


def switched_off_note(settings: Settings, ex: Example) -> None:
    """On the attention page: the focused head is computed as usual even when it is switched off later."""
    if settings.view.head in settings.spec.ablate:
        st.info(f"Head {settings.view.head} is switched off: its weights and output are computed as usual in this "
                "step; Step 3 multiplies its output by 0, so W_O never sees it.", icon=":material/block:")


def model_ablation_note(settings: Settings) -> None:
    """On the trained model's own pages: the attention of later layers is that of the model with heads off."""
    off, layer = settings.spec.ablate, settings.view.layer
    if off and settings.spec.card:
        one = len(off) == 1
        st.info(f"{heads(off).capitalize()} of layer {layer} {'is' if one else 'are'} switched off "
                f"({'its' if one else 'their'} output is multiplied by 0 before W_O). Layers up to "
                f"{layer} attend as usual; the layers after it read the changed output, so their weights below are "
                f"those of the model with {'this head' if one else 'these heads'} off.", icon=":material/block:")


def _rank_button(settings: Settings) -> bool:
    """The "Rank the heads" button; the ranking stays shown for this spec and layer until they change.

    A callback records the click (it runs before the script, so a rerun cannot lose it).
    """
    key = (settings.spec, settings.view.layer)
    st.button("Rank the heads", key="rank", icon=":material/leaderboard:", on_click=_rank, args=(key,),
              help="Switch each head off alone and measure what changes.")
    return st.session_state.get("ranked") == key


def _rank(key) -> None:
    st.session_state.ranked = key


def ablation_results(settings: Settings, ex: Example) -> None:
    """On the output page: how far each token's output moved, the ranking of the heads, and in a trained model the
    later layers and the sentence vector."""
    spec, tr, w = settings.spec, ex.trace, ex.weights
    off = spec.ablate
    where = f" of layer {ex.layer}" if spec.card else ""
    st.header("Switching heads off")
    st.markdown(
        f"Many heads of a trained model can be switched off with little loss ({MICHEL})"
        + (". " if spec.card else "; the tiny example's weights are set by hand, not trained, and here each of its "
           "heads moves the output. " if spec.input == "tiny" else "; with random weights every head matters about "
           "as much as any other, so here each one moves the output. ")
        + "Here a switched-off head's output is multiplied by 0 before W_O (a head mask), so its block of the "
        "concatenation is zero and it adds nothing to the output; everything before Step 3 is computed as usual. "
        + (f"{COSINE} " if off or spec.card and spec.card.kind != "decoder" else "")
        + ("" if off else "Choose heads under *Switch heads off* in the sidebar."))
    if off:
        change = ablation.output_change(tr, w)
        moved = change.distance / np.maximum(np.linalg.norm(change.full, axis=-1), 1e-30)
        cos = change.cosine[np.isfinite(change.cosine)]
        left, right = st.columns(2)
        left.metric("Mean change of a token's output", f"{100 * moved.mean():.1f} % of its length")
        right.metric("Lowest cosine to the full output", f"{cos.min():.4f}" if cos.size else "undefined")
        plot(xfig.output_change_figure(change, ex.tokens, off), key="output_change")
        if len(off) == ex.cfg.n_heads:
            st.caption("Every head is off: the output is b_O for every token" + (" (zero here: no bias)."
                       if w.b_O is None else "."))
        if not cos.size or cos.size < change.cosine.size:
            st.caption("The cosine is left out where an output vector is zero: it has no direction to compare.")
    start = (f" Each is measured from the full {'model' if spec.card else 'layer'}, all {ex.cfg.n_heads} heads on "
             f"({heads(off)} too): so {'it gets a bar' if len(off) == 1 else 'they get bars'} here, while the chart "
             f"*How much each head adds to the output*, drawn with {'it' if len(off) == 1 else 'them'} off, "
             "shows 0." if off else "")
    st.markdown(f"**Which head{where} matters most?** Switch each one off alone, every other head kept, and "
                f"measure.{start}")
    if not _rank_button(settings):
        return
    if spec.card is None:
        plot(xfig.removal_figure(ablation.removal_effects(tr, w), "Switching one head off: how far the output moves",
                                 "mean |output change| per token", off), key="ranking")
        st.caption("In one layer this is exact and simple: the output is a sum of one part per head (see above), so "
                   "switching head i off moves every output row by exactly head i's part; the ranking is that of the "
                   "part sizes. In a trained model, later layers make it less simple: choose one under *Weights*.")
        return
    ranking = compute.model_head_ranking(spec, ex.layer)
    if ranking.next_probability is not None:  # a decoder: measured by its prediction of the next token
        token = quote(next_token_label(compute.full_example(spec, ex.layer).run.next_tokens[0]))
        drop = ranking.top_probability - ranking.next_probability
        plot(xfig.removal_figure(drop, f"Layer {ex.layer}, one head off: how much the probability of the predicted "
                                 f"next token drops (it is {ranking.top_probability:.3f} with every head)",
                                 "drop in probability", off), key="ranking")
        best = int(np.argmax(np.abs(drop)))  # either way: a head whose loss raises the probability matters too
        said = (f"On this text, switching off head {best + 1} of layer {ex.layer} changes the probability of the "
                f"predicted next token {token} most: {'down' if drop[best] > 0 else 'up'} by {abs(drop[best]):.4f}. "
                "The length of a bar, above or below 0, is how much the prediction depends on that head here: above "
                "0, the token gets a lower probability without the head; below 0, a higher one. A bar near 0 marks a "
                "head the model can lose on this text.")
    else:
        turn = 1 - ranking.embedding_cosine
        plot(xfig.removal_figure(turn, f"Layer {ex.layer}, one head off: how far the sentence vector turns (1 − its "
                                 "cosine to the full one)", "1 − cosine", off), key="ranking")
        said = (f"On this text, head {int(np.argmax(turn)) + 1} of layer {ex.layer} moves the sentence vector most "
                "when it is off; a tall bar marks a head the model leans on here, a short one a head it can lose "
                "(1 − cosine is 0 when the sentence vector does not turn at all, so no bar goes below 0).")
    plot(xfig.removal_figure(ranking.relative_change, f"Layer {ex.layer}, one head off: how far the last layer's "
                             "token vectors move (mean |change| / |vector|)", "relative change", off),
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
        after = ("each layer's output (the running sum of its input, its attention and its feed-forward part, which "
                 "a decoder normalises only on the way into each block)" if decoder else
                 "each layer's output (after its feed-forward part and LayerNorm)")
        st.caption(f"Layers before {layer} are untouched (zero); from layer {layer} on, {after} differs, and the "
                   "change can grow or fade as it travels.")
    if decoder:
        next_token_change(settings, ex)
        return
    st.markdown(f"**The sentence vector.** {spec.card.name} is used for sentence similarity: its sentence vector is "
                "the mean of the last layer's token vectors, scaled to length 1. Compare two sentences"
                + (f", with every head and with {heads(off)} of layer {layer} off:" if off else ":"))
    c = control("compare")
    other = st.text_input(c.label, value=default("compare"), max_chars=c.max_chars, key="compare", bind=widgets.BIND,
                          help=c.help)
    if not other.strip():
        st.info("Type a second sentence to compare with.")
        return
    try:
        full_cos, off_cos = compute.sentence_similarity(spec, layer, other)
    except ValueError as err:  # ConfigError: text the model cannot read
        st.warning(str(err))
        return
    left, right = st.columns(2)
    left.metric("Cosine similarity, every head", f"{full_cos:.4f}")
    if off:
        right.metric(f"With {heads(off)} off", f"{off_cos:.4f}", f"{off_cos - full_cos:+.4f}")
    st.caption(f"Your sentence and {quote(other, 60)}; 1 = same direction, 0 = unrelated.")


def next_token_change(settings: Settings, ex: Example) -> None:
    """For a decoder: the five most likely next tokens with every head, and with the switched-off heads off."""
    spec, off, layer = settings.spec, settings.spec.ablate, ex.layer
    st.markdown(f"**The next token.** {spec.card.name} is used to continue text, so what counts is its prediction "
                "of the token after yours (an encoder such as all-MiniLM-L6-v2 is compared by its sentence vector "
                "instead; a decoder has none)."
                + (f" With every head, and with {heads(off)} of layer {layer} off:" if off else
                   " Switch heads off in the sidebar to see it change."))
    if not off:
        return
    full = compute.full_example(spec, layer).run.next_tokens
    table = {"rank": list(range(1, len(full) + 1)),
             "every head": [next_token_label(t) for t in full],
             "p (every head)": [round(t.probability, 4) for t in full],
             f"{heads(off)} off": [next_token_label(t) for t in ex.run.next_tokens],
             f"p ({heads(off)} off)": [round(t.probability, 4) for t in ex.run.next_tokens]}
    st.dataframe(table, hide_index=True, key="next_token_change")
    before, after = full[0], ex.run.next_tokens[0]
    st.caption(("The most likely next token stays the same" if before.id == after.id else
                "The most likely next token changes")
               + f": {quote(next_token_label(before))} with every head, {quote(next_token_label(after))} with "
               f"{heads(off)} off.")
