"""Page sections for a decoder (SmolLM2): the RoPE rotation in Step 1, and the model's prediction of the next token.

Each function draws one section from the example on view and returns at once when the example has no such part
(random weights and the encoder have no rotation; only a decoder predicts the next token).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from mha_app.copy.markup import quote, readable
from mha_app.run import compute
from mha_app.state.example import Example
from mha_app.state.settings import Settings
from mha_app.ui.charts import plot
from mha_core.attention import rope
from mha_core.figures import decoder as dfig
from mha_core.teaching import formulas
from mha_core.teaching.notation import score_product

SU = "Su et al. 2021"
ROPE_POSITIONS = 16  # the distance figure places the pair at positions 1 ... max(n, 16) (at most 64)


def rope_section(settings: Settings, ex: Example) -> None:
    """Step 1b: queries and keys before and after RoPE, and why, for given vectors, their product depends only on the
    distance."""
    cfg, tr = ex.cfg, ex.trace
    if cfg.rope_theta is None:
        return
    head, query = settings.view.head - 1, settings.view.query - 1
    d_k, half, g = cfg.d_k, cfg.d_k // 2, cfg.group_size
    freq = rope.frequencies(d_k, cfg.rope_theta)
    name = settings.spec.card.name if settings.spec.card else "This layer"
    st.header("Step 1b · Turn queries and keys by their position (RoPE)")
    st.markdown(
        f"{name} adds no position signal to X. Instead, right after the projection, every query and key is turned "
        f"by an angle that grows with its position: rotary position embeddings (RoPE, {SU}, “RoFormer”). In each "
        f"head, the d_k = {d_k} components of a query or key form {half} pairs, component a with component "
        f"a + {half} (a = 1, …, {half}; counted from 1, as c1 … c{d_k} in the figures). The token at "
        "position t on screen (1 for the first) turns by p = t − 1 steps: pair a by the angle p·θ_a, so the first "
        f"token is not turned at all, with θ_a = {cfg.rope_theta:,.0f}^(−2(a − 1)/{d_k}):"
        f" the first pair by {freq[0]:g} radian per position, the last by {readable(freq[-1])}. The values V are not "
        "turned. A turn keeps the length of every pair, so only the directions of the queries and keys change.")
    st.latex(formulas.rope(cfg))
    st.markdown(
        "Turning a query by p·θ and a key by p′·θ changes their product exactly as turning the key alone by "
        "(p′ − p)·θ would. So for **the same query vector and the same key vector**, the score depends only on "
        "their distance, not on where in the text the pair sits: the pair 3 places apart scores the same at "
        "positions 5 and 2 as at 50 and 47. The content still matters as much as ever: the query and key vectors "
        "come from the tokens, so other tokens at the same distance give other scores.")
    st.latex(formulas.rope_product())
    plot(dfig.rope_figure(tr, head, ex.tokens, g), key="rope")
    lengths = np.abs(np.hypot(*np.split(tr.q[head], 2, axis=-1)) - np.hypot(*np.split(tr.q_before_rope[head], 2,
                                                                                       axis=-1))).max()
    st.caption(f"Choose the head in the sidebar. Row 1 is the first token (p = 0), turned by nothing: it is the same "
               f"before and after. The change sits in the first dimensions of each half of d_k (the fast pairs) and "
               f"grows down the rows; the slow pairs hardly turn over {ex.n} positions. Every pair keeps its length: "
               f"the largest change of a pair's length in Q_{head + 1} is {readable(lengths)} (rounding).")
    weights = tr.weights[head, query]
    key = int(np.argmax(weights))
    distance = query - key
    positions = max(min(64, max(ex.n, ROPE_POSITIONS)), distance + 1)
    rel = rope.relative_scores(tr.q_before_rope[head, query], tr.k_before_rope[head // g, key], cfg.rope_theta,
                               positions)
    q_token, k_token = quote(ex.tokens[query]), quote(ex.tokens[key])
    plot(dfig.rope_distance_figure(rel, f"“{ex.tokens[query]}”", f"“{ex.tokens[key]}”", head), key="rope_distance")
    st.caption(
        f"Head {head + 1}'s query of the query token {q_token} (position {query + 1}, chosen in the sidebar) and the "
        f"key of {k_token} (position {key + 1}, the key it weights most: {weights[key]:.3f}), both as projected, "
        f"placed at every pair of positions. Each diagonal has one colour: within a diagonal the products differ by "
        f"at most {readable(rel.spread)} (rounding). In the text they are {distance} apart, so their product is "
        f"{rel.by_distance[distance]:.4g}: the raw score {score_product(g, head)} of that pair in Step 2 "
        f"({tr.raw_scores(head)[query, key]:.4g}). Without RoPE it would be {rel.unrotated:.4g} at any distance.")


def next_token_section(settings: Settings, ex: Example, heading: str = "What the model predicts next") -> None:
    """The five most likely next tokens of a decoder's run, with their probabilities."""
    run = ex.run
    if run is None or not hasattr(run, "next_tokens"):
        return
    n_layers, vocab = len(run.layers), compute.pretrained_model(settings.spec.model).token_embeddings.shape[0]
    st.header(heading)
    off = run.head_mask is not None
    st.markdown(
        f"After all {n_layers} layers, a final RMSNorm (each vector divided by its root mean square, as before every "
        "block) and the output layer (the token embedding table, used a second "
        f"time) turn the **last** token's vector into a probability for each of the {vocab:,} tokens of the "
        "vocabulary: the model's guess for the token after your text. Thanks to the causal mask, the last row is "
        "the only one that has seen the whole text; every other row has seen the text up to its own token."
        + (" These are the predictions of the model with the heads switched off in the sidebar." if off else ""))
    plot(dfig.next_token_figure(run.next_tokens, ex.tokens[-1]), key="next_tokens")
    rest = 1 - sum(t.probability for t in run.next_tokens)
    st.caption(f"The other {vocab - len(run.next_tokens):,} tokens share the remaining "
               f"{rest:.1%}.")
