"""Page sections for a decoder (SmolLM2): the RoPE rotation in Step 1, and the model's prediction of the next token.

Each function draws one section from the example on view and returns at once when the example has no such part
(random weights and the encoder have no rotation; only a decoder predicts the next token).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from mha_app.copy.decoder import (
    NEXT_TOKEN_HEADING,
    ROPE_DISTANCE,
    ROPE_HEADING,
    next_token_intro,
    next_token_rest,
    rope_caption,
    rope_distance_caption,
    rope_intro,
)
from mha_app.copy.markup import quote
from mha_app.run import compute
from mha_app.state.example import Example
from mha_app.state.settings import Settings
from mha_app.ui.charts import plot
from mha_core.attention import rope
from mha_core.figures import decoder as dfig
from mha_core.teaching import formulas
from mha_core.teaching.notation import score_product

ROPE_POSITIONS = 16  # the distance figure places the pair at positions 1 ... max(n, 16) (at most 64)


def rope_section(settings: Settings, ex: Example) -> None:
    """Step 1b: queries and keys before and after RoPE, and why, for given vectors, their product depends only on the
    distance."""
    cfg, tr = ex.cfg, ex.trace
    if cfg.rope_theta is None:
        return
    head, query = settings.view.head - 1, settings.view.query - 1
    g = cfg.group_size
    freq = rope.frequencies(cfg.d_k, cfg.rope_theta)
    name = settings.spec.card.name if settings.spec.card else "This layer"
    st.header(ROPE_HEADING)
    st.markdown(rope_intro(name, cfg.d_k, cfg.rope_theta, freq[0], freq[-1]))
    st.latex(formulas.rope(cfg))
    st.markdown(ROPE_DISTANCE)
    st.latex(formulas.rope_product())
    plot(dfig.rope_figure(tr, head, ex.tokens, g), key="rope")
    lengths = np.abs(np.hypot(*np.split(tr.q[head], 2, axis=-1)) - np.hypot(*np.split(tr.q_before_rope[head], 2,
                                                                                       axis=-1))).max()
    st.caption(rope_caption(ex.n, head + 1, lengths))
    weights = tr.weights[head, query]
    key = int(np.argmax(weights))
    distance = query - key
    positions = max(min(64, max(ex.n, ROPE_POSITIONS)), distance + 1)
    rel = rope.relative_scores(tr.q_before_rope[head, query], tr.k_before_rope[head // g, key], cfg.rope_theta,
                               positions)
    q_token, k_token = quote(ex.tokens[query]), quote(ex.tokens[key])
    plot(dfig.rope_distance_figure(rel, f"“{ex.tokens[query]}”", f"“{ex.tokens[key]}”", head), key="rope_distance")
    st.caption(rope_distance_caption(head + 1, query + 1, q_token, key + 1, k_token, weights[key], rel.spread,
                                     rel.by_distance[distance], score_product(g, head),
                                     tr.raw_scores(head)[query, key], rel.unrotated))


def next_token_section(settings: Settings, ex: Example, heading: str = NEXT_TOKEN_HEADING) -> None:
    """The five most likely next tokens of a decoder's run, with their probabilities."""
    run = ex.run
    if run is None or not hasattr(run, "next_tokens"):
        return
    n_layers, vocab = len(run.layers), compute.pretrained_model(settings.spec.model).token_embeddings.shape[0]
    st.header(heading)
    st.markdown(next_token_intro(n_layers, vocab, heads_off=run.head_mask is not None))
    plot(dfig.next_token_figure(run.next_tokens, ex.tokens[-1]), key="next_tokens")
    rest = 1 - sum(t.probability for t in run.next_tokens)
    st.caption(next_token_rest(vocab - len(run.next_tokens), rest))
