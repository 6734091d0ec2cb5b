"""What the lesson says, the lesson that presentation mode shows: its screens, one idea each, in order (key, title),
and each screen's sentences. pages/lesson.py draws the screens in this order. Heads, queries and keys are 0-based
positions here, as the trace indexes them; the sentences name them from 1."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mha_app.copy.inside import GAP, OPEN_CIRCLES, better_reading, token
from mha_app.copy.words import count

if TYPE_CHECKING:
    from mha_core.analysis.qk_plane import QKPlane

SCREENS = (
    ("tokens", "A sentence becomes n vectors"),
    ("heads", "h heads, each d_k = d_model / h wide"),
    ("scores", "Scores: every query against every key"),
    ("softmax", "Softmax turns each row into weights"),
    ("by_hand", "One weight, by hand"),
    ("mix", "Each head mixes the values"),
    ("grid", "Every head looks its own way"),
    ("concat", "Concatenate the heads"),
    ("w_o", "W_O mixes the heads"),
    ("cost", "Do more heads cost more?"),
    ("cache", "Real models: the K/V cache"),
    # Inside the heads. Added at the end, so that every earlier screen keeps its number in shared links.
    ("plane", "Queries and keys as points"),
    ("adds", "A large weight can add little"),
    ("rollout", "Following attention through the layers"),
)


def screen_title(number: int) -> str:
    """A screen's heading, with its number (from 1): "3 · Scores: every query against every key"."""
    return f"{number} · {SCREENS[number - 1][1]}"


def where(number: int) -> str:
    """Between Back and Next."""
    return f"Screen {number} of {len(SCREENS)}"


PRESENT = "Present this lesson (opens a new tab: large type, no sidebar)"
LEAVE = "Leave presentation mode"
PLAN_LABEL = "A link for every screen (a lesson plan as a list of URLs)"
PLAN_NOTE = "Each link opens its screen in presentation mode, on this example (model, sentence, head, query)."


def lesson_plan(urls: list[str]) -> str:
    """Every screen's number, title and link, one screen after another: a lesson plan to copy."""
    return "\n".join(f"{i}. {title}\n{url}" for i, ((_, title), url) in enumerate(zip(SCREENS, urls, strict=True),
                                                                                  start=1))


def _query(tokens: list[str], query: int) -> str:
    return f"query {token(tokens, query)}"


# --- The screens, in order -----------------------------------------------------------------------------------------

def tokens_text(n: int, d_model: int, m: int | None) -> str:
    """The input: n tokens of d_model numbers; in cross-attention (m source tokens, else None) where the keys come
    from."""
    cross = "" if m is None else (" They are the sentence being written; its keys and values come from the source "
                                  f"sentence, {count(m, 'token')} (cross-attention).")
    return (f"The attention layer reads **{count(n, 'token')}**, each one a row of **d_model = {d_model} numbers**. "
            "Stacked, they form the matrix X." + cross)


def heads_text(h: int, group_size: int, rotated: bool) -> str:
    """The heads, their own (or shared) projections, their width d_k, and RoPE where the model turns them."""
    others = group_size - 1  # the other query heads that read the same K/V head
    shared = ("its own W_Q, W_K and W_V" if others == 0 else
              f"its own W_Q, and shares W_K and W_V with {count(others, 'other head')}")
    return (f"Each of the **{count(h, 'head')}** gets {shared}, and works in **d_k = d_model / h** dimensions: a "
            "smaller space of its own." + (" Its queries and keys are then turned by their position (RoPE)."
                                           if rotated else ""))


def scores_text(head: int, scale: float | None, causal: bool) -> str:
    """The scores of one head: a dot product per pair, scaled (by 1/√d_k, or by the layer's own `scale`), and the
    causal mask's blank cells."""
    scaled = ("scaled by 1/√d_k so that its typical size does not grow with d_k (under the paper's assumptions: "
              "independent numbers of mean 0 and variance 1)" if scale is None else
              f"multiplied by {scale:g} instead of the usual 1/√d_k")
    return (f"Head {head + 1} compares every query with every key: one dot product per pair, {scaled}. "
            "A large score means a good match."
            + (" The causal mask hides every key after its query: those cells stay blank." if causal else ""))


def softmax_text(head: int, query: int, tokens: list[str]) -> str:
    return (f"Softmax turns each row of scores into weights: all ≥ 0, summing to 1. Here is the row of "
            f"{_query(tokens, query)} in head {head + 1}.")


def by_hand_text(head: int, query: int, key: int, tokens: list[str], keys: list[str], tied: int,
                 blocked: bool) -> str:
    """The weight worked by hand: the query's strongest key (tied: how many keys share the largest weight; blocked:
    the query sees no key)."""
    strongest = "every key is blocked" if blocked else (
        "its strongest" if tied == 1 else f"tied with {count(tied - 1, 'other')} for its strongest")
    return (f"The weight of {_query(tokens, query)} on key {token(keys, key)} ({strongest}), in head {head + 1}: "
            "multiply, add, scale, exponentiate, normalise.")


def mix_text(query: int, tokens: list[str]) -> str:
    return (f"The head's output for {_query(tokens, query)} is the sum of every key's value vector, each times its "
            "weight.")


def grid_text(h: int) -> str:
    return (f"The {h} heads read the same tokens but weigh them differently: each asks its own queries." if h > 1 else
            "This example has one head; with more, each would weigh the tokens its own way.")


def random_heads_note(presenting: bool) -> str:
    """Under the random heads: their differences mean nothing, what trained heads do, and the way to a trained model
    (a button below in presentation mode, which hides the sidebar; the sidebar's Weights otherwise)."""
    return ("These weights are random, not trained, so how the heads differ means nothing here. In a trained model "
            "some heads specialise, and a few of them do most of the work (Voita et al. 2019); many others can be "
            "removed with little loss (Michel et al. 2019). "
            + ("Switch to a trained model with a button below." if presenting else
               "Choose a trained model under Weights."))


CONCAT_TEXT = "The heads' outputs are put side by side. Nothing is mixed yet: each column belongs to one head."
W_O_TEXT = "W_O is where the heads meet: every output number draws on every head's columns."
COST_TEXT = ("With d_k = d_model / h the heads share the work of one wide head instead of adding to it: the scores of "
             "all heads take as many multiply-adds as one head of d_model.")
CACHE_TEXT = ("To write each next token, a decoder keeps the keys and values of every earlier token, in every layer: "
              "the K/V cache, 2 · layers · h_kv · d_k · 2 bytes per token (h_kv: the number of K/V heads). "
              "Sharing K/V heads among query heads (GQA, MQA) shrinks it.")


def cache_note(encoders: list[str], length_note: str) -> str:
    """Under the cache's bars: the encoders, which keep no cache, and what the chosen length means (length_note)."""
    return (f"Encoders ({', '.join(encoders)}) keep no cache: their bars show a decoder of the same shape. "
            f"{length_note}")


# --- Inside the heads ----------------------------------------------------------------------------------------------

def plane_lines(plane: QKPlane, query: int, tokens: list[str]) -> str:
    """The plane on a projector, in short lines (a Markdown list): what the points are, how to read the arrow, and
    how good its two readings are on this query (copy.inside.plane_in_brief says the same as a paragraph)."""
    lines = [f"Head {plane.head + 1}'s queries (●) and keys (◆) as points in one plane: it keeps "
             f"**{plane.explained:.0%}** of their spread.",
             f"The arrow runs from 0 (✚) to {_query(tokens, query)}: the further along it a key lies, the higher its "
             "score.",
             "Lines join the query to its strongest keys, each as wide as the key's weight."]
    if plane.keys_before_rope is not None:
        lines.append(OPEN_CIRCLES)
    if plane.visible(query).sum() >= 2:
        lines.append(f"Keys in the right order: **{plane.order_kept(query):.0%}** of the pairs along the arrow, "
                     f"**{plane.order_kept(query, 'distance'):.0%}** by distance (50% would be chance). "
                     + better_reading(plane, query))
    return "\n".join(f"- {line}" for line in lines)


def adds_text(head: int, query: int, key: int, tokens: list[str], keys: list[str], weight: float, share: float,
              n_queries: int) -> str:
    """Screen 13's example, chosen from the numbers (sections.inside.weight_overstated): of a head's queries, the
    one whose strongest key (by weight, `key`) adds least for its weight; or, where no query's strongest key falls
    GAP below its weight in any head, that this example shows no such key."""
    queries, who = count(n_queries, "query", "queries"), _query(tokens, query)
    if weight - share < GAP:
        return (f"In every head, each of the {queries} gets about what its weights say: no strongest key adds a "
                f"share {GAP} or more below its weight (here {who}, key {token(keys, key)}: weight {weight:.3f}, "
                f"share {share:.3f}). A trained model may show it.")
    return (f"Chosen from the numbers of head {head + 1}'s {queries}: {who} gives key {token(keys, key)} its largest "
            f"weight, **{weight:.3f}**, yet that key adds a share of only **{share:.3f}** of what the query receives: "
            "less than its weight says, because the key's vector $v_s W^O_i$ is short.")
