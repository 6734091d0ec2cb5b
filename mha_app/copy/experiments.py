"""What the pages say about the experiments on heads: switched-off heads, cross-attention."""

from __future__ import annotations

from mha_app.copy.words import heads, verb


def heads_off_line(off) -> str:
    """The switched-off heads and where they are zeroed, for the top bar: "heads 2, 5 off (zeroed at Step 3)"."""
    return f"{heads(off)} off (zeroed at Step 3)"


def heads_off_text(off, made: str) -> str:
    """Which heads are switched off, that Steps 1 and 2 still compute them (`made`: what the step makes), and that
    Step 3 zeroes them ("" when none is)."""
    if not off:
        return ""
    n = len(off)
    return (f"Switched off: {heads(off)}. {verb(n, 'Its', 'Their')} {made} are computed as usual here; Step 3 "
            f"zeroes {verb(n, 'its', 'their')} output (multiplies it by 0), so W_O never sees "
            f"{verb(n, 'it', 'them')}.")


def cross_attention_text(n: int, m: int | None) -> str:
    """In pair mode, n queries reading m keys: where the queries and the keys/values come from ("" in self-attention,
    m None)."""
    if m is None:
        return ""
    return (f"Cross-attention, as in a translation model: the decoder writes one sentence while it reads another. "
            f"The **{m}** keys and values come from the source sentence (Y), the **{n}** queries from "
            "the sentence being written (X): each token being written asks what to take from the source. The "
            "projection "
            "matrices W_Q, W_K, W_V are d_model × d_model as before; only the matrices of scores and attention weights "
            f"change shape, to {n} × {m}: one row per query token, one column per key token.")
