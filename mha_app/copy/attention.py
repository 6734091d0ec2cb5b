"""What the attention page (Step 2) says: the scores, the scale, the mask, the softmax and how focused each row is."""

from __future__ import annotations

from mha_app.copy.words import count

ALL_BLOCKED = ("Some query rows have every key blocked: their attention weights are all 0 and their head output is "
               "0.")

STEP_THROUGH = "Open one head in the step-through"  # the header of the model pages' head picker


def intro(d_k: int, scale: float | None, blocked: bool, said_elsewhere: bool = False) -> str:
    """What a head computes: scores, the scale (scale None: 1/sqrt(d_k); 1.0: none), softmax and the mix of values.

    The mask clause ("a blocked pair gets 0") is said where the mask blocks some pair (blocked), unless the page says
    it elsewhere (said_elsewhere): in the answer's reason shown under the question, or as the answer of a waiting
    question about a row whose every key is blocked. With nothing blocked it is left out."""
    masked = not blocked or said_elsewhere
    scaled = ("Here the scores are not scaled. " if scale == 1.0 else
              f"Scores are multiplied by 1/√d_k = 1/√{d_k} = {d_k ** -0.5:.4f}. ")
    return ("Each head scores every query against every key (a dot product): a large **score**, a good match. "
            + scaled
            + "Softmax turns each query's row of scores into **attention weights**: all ≥ 0, summing to 1"
            + ("" if masked else "; a blocked pair (mask M) gets 0")
            + ". The head's output is the value vectors mixed by these weights.")


def group_caption(group_size: int) -> str:
    """Under the explorer's grid of grouped heads: a row of panels per key/value head."""
    return (f"Each row of panels is one group: the {group_size} query heads that read the same key/value head (row j "
            "reads K/V head j). They share K and V, yet their attention weights differ, because each has its own "
            "queries.")


def mask_caption(blocked: int, causal: int, pad: int, n: int, m: int) -> str:
    """How many of the n x m pairs the mask blocks (`blocked`), and why: `causal` of them by the causal mask, the rest
    by the `pad` padded keys; or that nothing is blocked."""
    if not blocked:
        return ("Nothing is blocked in this example: every query may look at every key. Switch on the causal mask or "
                "padding in the sidebar to see M at work.")
    parts = [f"{causal} by the causal mask (every key after its query)"] if causal else []
    if blocked > causal:
        parts.append(f"{blocked - causal}{' more' if causal else ''} by the {count(pad, 'padded key')} (the filler, "
                     "blocked for every query)")
    return (f"The mask M blocks {blocked} of the {n * m} query–key pairs (M = −∞ there, 0 elsewhere): "
            + " and ".join(parts) + ".")


def entropy_caption(m: int, cross: bool, blocked: bool) -> str:
    """What the entropy of a row of weights says, and its largest value for m keys (less where keys are blocked);
    cross: cross-attention, where no key is the query's own token."""
    return ("Entropy of each row of attention weights, in bits: 0 means all the weight is on one key"
            + ("" if cross else " (which may be the token itself)")
            + f"; the most is log2(m) = log2({m}) bits, every key weighted the same"
            + (", and less for a row whose keys are partly blocked: log2 of the number of keys it may see"
               if blocked else "")
            + ". That maximum grows with the number of tokens, so longer sentences give higher entropies: compare "
            "heads on the same sentence.")


def step_through_link(layer: int, head: int) -> str:
    """The link from a model page to one head's attention page."""
    return f"Step through layer {layer}, head {head}"
