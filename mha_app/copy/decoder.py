"""What the decoder's sections say: the RoPE rotation of Step 1 and the model's prediction of the next token."""

from __future__ import annotations

from mha_app.copy.words import count, readable

SU = "Su et al. 2021"
ROPE_HEADING = "Step 1b · Turn queries and keys by their position (RoPE)"


def rope_intro(name: str, d_k: int, theta: float, first: float, last: float) -> str:
    """What RoPE turns, by which angles (first, last: the first and last pair's radians per position), and what it
    keeps."""
    half = d_k // 2
    return (f"{name} adds no position signal to X. Instead, right after the projection, every query and key is turned "
            f"by an angle that grows with its position: rotary position embeddings (RoPE, {SU}, “RoFormer”). In each "
            f"head, the d_k = {d_k} components of a query or key form {half} pairs, component a with component "
            f"a + {half} (a = 1, …, {half}; counted from 1, as c1 … c{d_k} in the figures). The token at "
            "position t on screen (1 for the first) turns by p = t − 1 steps: pair a by the angle p·θ_a, so the first "
            f"token is not turned at all, with θ_a = {theta:,.0f}^(−2(a − 1)/{d_k}): the first pair by {first:g} "
            f"radian per position, the last by {readable(last)}. The values V are not turned. A turn keeps the length "
            "of every pair, so only the directions of the queries and keys change.")


ROPE_DISTANCE = (
    "Turning a query by p·θ and a key by p′·θ changes their product exactly as turning the key alone by "
    "(p′ − p)·θ would. So for **the same query vector and the same key vector**, the score depends only on "
    "their distance, not on where in the text the pair sits: the pair 3 places apart scores the same at "
    "positions 5 and 2 as at 50 and 47. The content still matters as much as ever: the query and key vectors "
    "come from the tokens, so other tokens at the same distance give other scores.")


def rope_caption(n: int, head: int, length_change: float) -> str:
    """Under the figure of Q before and after RoPE (head: 1-based; length_change: the largest change of a pair's
    length)."""
    return (f"Choose the head in the sidebar. Row 1 is the first token (p = 0), turned by nothing: it is the same "
            f"before and after. The change sits in the first dimensions of each half of d_k (the fast pairs) and "
            f"grows down the rows; the slow pairs hardly turn over {count(n, 'position')}. Every pair keeps its "
            f"length: the largest change of a pair's length in Q_{head} is {readable(length_change)} (rounding).")


def rope_distance_caption(head: int, query: int, q_token: str, key: int, k_token: str, weight: float,
                          spread: float, product: float, score: str, raw: float, unrotated: float) -> str:
    """Under the figure of one query-key pair at every pair of positions (head, query, key: 1-based; q_token, k_token:
    quoted; score: the raw score's name in the notation; raw: that score in Step 2)."""
    distance = query - key
    return (f"Head {head}'s query of the query token {q_token} (position {query}, chosen in the sidebar) and the "
            f"key of {k_token} (position {key}, the key it weights most: {weight:.3f}), both as projected, "
            "placed at every pair of positions. Each diagonal has one colour: within a diagonal the products differ "
            f"by at most {readable(spread)} (rounding). In the text they are {distance} apart, so their product is "
            f"{product:.4g}: the raw score {score} of that pair in Step 2 ({raw:.4g}). Without RoPE it would be "
            f"{unrotated:.4g} at any distance.")


NEXT_TOKEN_HEADING = "What the model predicts next"


def next_token_intro(n_layers: int, vocab: int, heads_off: bool) -> str:
    """How the last token's vector becomes the next token's probabilities (heads_off: heads are switched off)."""
    off = " These are the predictions of the model with the heads switched off in the sidebar." if heads_off else ""
    return (f"After all {n_layers} layers, a final RMSNorm (each vector divided by its root mean square, as before "
            "every block) and the output layer (the token embedding table, used a second time) turn the **last** "
            f"token's vector into a probability for each of the {vocab:,} tokens of the vocabulary: the model's "
            "guess for the token after your text. Thanks to the causal mask, the last row is the only one that has "
            f"seen the whole text; every other row has seen the text up to its own token.{off}")


def next_token_rest(others: int, rest: float) -> str:
    """Under the chart of the likeliest next tokens: the probability the others share."""
    return f"The other {count(others, 'token')} share the remaining {rest:.1%}."
