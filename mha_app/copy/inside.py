"""What the pages say when they look inside the heads: what each key really adds (Kobayashi et al. 2020), a head's
queries and keys as points (Yeh et al. 2023) and attention followed through the layers (Abnar and Zuidema 2020), on
the attention page, the trained-model pages and the lesson. Heads, queries and keys are 0-based positions here, as
the trace indexes them; the sentences name them from 1."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mha_app.copy.markup import quote
from mha_app.copy.models import FEED_FORWARD, RESIDUAL
from mha_app.copy.words import plural

if TYPE_CHECKING:
    from mha_core import QKPlane
    from mha_core.analysis.head_stats import Parts

# One sentence each: who found it, and what. Each source is cited here once.
SOURCES = {
    "contributions": "Source: Kobayashi et al. (2020), “Attention is Not Only a Weight: Analyzing Transformers with "
                     "Vector Norms”, who showed in BERT that much of the attention weight adds little once the size "
                     "of each value is counted.",
    "plane": "Source: Yeh et al. (2023), “AttentionViz: A Global View of Transformer Attention”, who draw all of a "
             "head's queries and keys together as points in one picture.",
    "rollout": "Source: Abnar and Zuidema (2020), “Quantifying Attention Flow in Transformers”, who introduced "
               "attention rollout.",
}


def token(tokens: list[str], position: int) -> str:
    """A token as the pages name it: its position (from 1) and its text, quoted: "3 `sat`"."""
    return f"{position + 1} {quote(tokens[position])}"


# --- What each key really adds (Kobayashi et al. 2020) ------------------------------------------------------------

GAP = 0.05  # a key whose weight exceeds its share by this much is named: "a large weight can add little"


def contribution_sentence(head: int, query: int, tokens: list[str], keys: list[str], weights: np.ndarray,
                          added: np.ndarray, shares: np.ndarray, switched_off: bool) -> str:
    """This example's numbers in one or two sentences: the query's strongest key by weight, what it adds, and the
    key that adds most. weights, added, shares: (m,) the query's row; switched_off: the head's output is zeroed."""
    who = f"In head {head + 1}, query {token(tokens, query)}"
    if not weights.any():
        return f"{who} sees no key (all are blocked), so nothing is added."
    if switched_off:
        return (f"{who} has weights, but head {head + 1} is switched off: Step 3 multiplies its output by 0, so none "
                "of its keys reaches the output. The table shows its weights and the sizes $\\|v_s W^O_i\\|$ as "
                "computed; every contribution is 0, and a row of zeros has no shares.")
    if not added.any():
        return f"{who} has weights, but every key's vector $v_s W^O_i$ is 0 here, so it adds nothing."
    strongest, most = int(np.argmax(weights)), int(np.argmax(shares))
    text = (f"{who} puts its largest weight, {weights[strongest]:.3f}, on key {token(keys, strongest)}; that key "
            f"adds a share of {shares[strongest]:.3f} of what the query receives.")
    if most != strongest:
        text += (f" The key that adds most is {token(keys, most)}: a share of {shares[most]:.3f}, with a weight "
                 f"of {weights[most]:.3f}.")
    gap = int(np.argmax(weights - shares))
    if weights[gap] - shares[gap] >= GAP and gap != strongest:
        text += (f" Key {token(keys, gap)} has a weight of {weights[gap]:.3f} but adds a share of only "
                 f"{shares[gap]:.3f}: its vector $v_s W^O_i$ is short.")
    return text


def key_adds_intro(head: int) -> str:
    """The attention page's tab: what a key adds, its contribution, and the explorer's button that shows it."""
    return ("The weight $\\alpha_{ts}$ says how much query $t$ looks at key $s$. What key $s$ then adds to the query's "
            f"output is its value $v_s$ times that weight, passed through head {head + 1}'s block of $W^O$ (the "
            "output matrix that mixes the heads, Step 4): the vector "
            "$\\alpha_{ts}\\, v_s W^O_i$. The length of that vector is the key's **contribution**. A key with a large "
            "weight but a short vector $v_s W^O_i$ "
            "adds little. The **contributions** button of the explorer above shows every head this way: each "
            "contribution as a share of its row, so that each row sums to 1, as the weights do, on the same colour "
            "scale.")


def sorted_keys_note(shown: int, total: int) -> str:
    """Under a table of many keys: its order, and how many rows it shows at a time."""
    return f"Sorted by share, largest first; the table shows {shown} of the {total} keys at a time."


def key_adds_caption(head: int, query: int, bias: bool) -> str:
    """Under the table: whose keys it lists, where the bias b_O goes (when the layer has one), and the source."""
    where = " The bias b_O is added once to the whole output, so it belongs to no key." if bias else ""
    return f"Query {query + 1} in head {head + 1}, every key.{where} " + SOURCES["contributions"]


# --- Queries and keys as points (Yeh et al. 2023) -----------------------------------------------------------------

def whole_space(plane: QKPlane) -> bool:
    """Whether the plane holds every direction of the queries and keys (d_k ≤ 2): then it loses nothing."""
    return plane.axes.shape[1] <= 2


def plane_intro(plane: QKPlane, d_k: int) -> str:
    """What the plane shows, and how much of the spread it keeps (all of it when d_k ≤ 2)."""
    intro = (f"Head {plane.head + 1} compares each query with each key by a dot product. Here all its queries (●) "
             f"and keys (◆) are points in one picture. ")
    if whole_space(plane):
        return intro + (f"Each has d_k = {d_k} {plural(d_k, 'number')}, so the picture holds them whole, "
                        "turned so that the points spread most along the first direction: nothing is lost.")
    return intro + (f"Each has d_k = {d_k} numbers, so the picture keeps only the two directions in which the points "
                    "spread most (principal component analysis). This plane keeps "
                    f"**{plane.explained:.0%}** of the spread; the rest is lost.")


def better_reading(plane: QKPlane, query: int) -> str:
    """Which of the plane's two readings, the arrow or the distance, put this query's keys in order better here:
    a verdict read off the numbers, since either can win on a given example."""
    arrow, near = (plane.order_kept(query, by) for by in ("dot", "distance"))
    if f"{arrow:.0%}" == f"{near:.0%}":  # equal as the page shows them
        return "On this example the two readings do equally well."
    return "On this example " + ("the arrow does better than distance." if arrow > near else
                                 "distance does better than the arrow.")


def _whole_space_reading(d_k: int) -> str:
    return (f"**Only the arrow is exact here.** With d_k = {d_k} the plane is the whole space, so the order along the "
            "arrow is exactly the order of the scores. Distance is not exact: the score grows with the length of the "
            "key as well as with its direction, so near the query does not always mean a high score.")


def plane_reading(plane: QKPlane, query: int, tokens: list[str]) -> str:
    """How to read the plane and how good it is here: the arrow's order and the distance's order for this query."""
    who = f"query {token(tokens, query)}"
    text = (f"**How to read it.** Follow the arrow from ✚ (marked 0: where a vector of zeros would lie) to the "
            f"highlighted {who}. The further a key lies along that arrow, the higher its score, and so its weight. ")
    if plane.visible(query).sum() < 2:
        return text + f"Here {who} sees only one key, so there is no order to keep."
    return (text + f"In this plane the arrow puts the keys of {who} in the right order for "
            f"**{plane.order_kept(query):.0%}** of the pairs of keys (50% would be chance). Ordered by distance "
            f"(nearer = higher score), they are right for **{plane.order_kept(query, 'distance'):.0%}** of the pairs. "
            f"{better_reading(plane, query)}\n\n"
            + (_whole_space_reading(plane.axes.shape[1]) if whole_space(plane) else
               "**Neither reading is exact.** The score is a dot product over all d_k numbers: it grows with the "
               "length of the key as well as with its direction, so near the query does not always mean a high score; "
               f"and the plane leaves out {1 - plane.explained:.0%} of the spread, so even the arrow can swap two "
               "keys."))


OPEN_CIRCLES = ("An open circle (○) is a key before its rotary turn (RoPE), joined by a grey line to where the turn "
                "took it (◆).")
ROPE_NOTE = ("**Keys before and after the rotary turn.** This model turns every query and key by its position before "
             f"the dot product. {OPEN_CIRCLES} The scores come from the turned keys.")
PLANE_CLICK = "Click a query (●) to choose it: here, in the scores below and in the explorer above."
PLANE_MADE = ("Before the projection, every query is multiplied by a number c and every key by 1/c, so that both "
              "clouds spread alike, and all keys are moved by one vector, so that both clouds share a centre. Neither "
              "changes any weight: a dot product keeps its value under c and 1/c, and softmax ignores a number added "
              "to a whole row. ")


def true_scores_note(head: int) -> str:
    """Above the row of scores beside the plane."""
    return (f"The true scores of head {head + 1}: the row of the same query is outlined, in the colour of the "
            "highlighted query above.")


# --- Weight and contribution on the special tokens (head summary) ---------------------------------------------------

def parked_tokens(parts: Parts) -> str:
    """The tokens where heads park their attention, in words: "[CLS] and [SEP]", "the first token"."""
    return "the first token" if parts.kind == "decoder" else " and ".join(parts.labels[p] for p in parts.parked)


def parked_header(parts: Parts) -> str:
    return f"What the weight on {parked_tokens(parts)} really adds"


def parked_intro(parts: Parts) -> str:
    """Where heads park their weight, and what the two panels show."""
    where = parked_tokens(parts)
    parking = ("Many heads put most of their weight on the first token (an attention sink)." if parts.kind == "decoder"
               else f"Many heads put most of their weight on {where} (shown as *parks on …* in the table).")
    return (f"{parking} A weight alone does not say what a key adds to the output: that is the key's value times its "
            "weight, passed through $W^O$ (the attention page's tab *What each key adds*). Left: each head's share of "
            f"weight on {where}. Right: its share of **contribution**, what those keys really add.")


def parked_sentence(parts: Parts, mean_weight: float, mean_contribution: float) -> str:
    """This text's averages: the weight on the parking tokens, and what it adds."""
    less = "less than" if mean_contribution < mean_weight else "more than"
    return (f"On this text, a head puts on average **{mean_weight:.0%}** of its weight on {parked_tokens(parts)}, but "
            f"that weight adds **{mean_contribution:.0%}** of what it passes on: {less} the weight says.")


def parked_caption(parts: Parts) -> str:
    """The source, and for a decoder that its finding was about BERT."""
    return SOURCES["contributions"] + (" Their finding is about BERT; for a decoder's first token the right panel "
                                       "shows what happens on your text." if parts.kind == "decoder" else "")


# --- Attention rollout (Abnar and Zuidema 2020) -------------------------------------------------------------------

ROLLOUT_HEADER = "Across the layers: attention rollout"
ROLLOUT_SYMBOLS = ("$\\bar A_l$: the mean of layer $l$'s heads' attention weights; $I$: the identity, which keeps "
                   "every token where it is; $r$: the share kept by the residual connection "
                   f"({RESIDUAL}); $R_l$: the rollout after layer $l$.")
ROLLOUT_ASSUMPTIONS_LABEL = "What rollout assumes"
ROLLOUT_ASSUMPTIONS = (
    "Rollout makes four simplifications:\n"
    "1. In each layer, tokens mix by the **mean of the heads' attention weights**: every head counts the same, "
    "however much it adds.\n"
    "2. The **residual connection** adds each token's own vector back after attention. Rollout counts it as keeping "
    "**half** of each token: each layer's mixing is $\\tilde A = 0.5\\, I + 0.5\\, \\bar A$, where $\\bar A$ is the "
    "mean attention and $I$ (the identity) "
    "keeps every token where it is.\n"
    "3. The layers' mixings are **multiplied** through, layer after layer.\n"
    "4. It **leaves out** the rest of each layer: the feed-forward network and the normalisation, which work on each "
    "token alone, and the size of each value (what each key really adds: the attention page's tab *What each key "
    "adds*).\n\n"
    "So rollout shows where information **can** come from, not a measured cause."
)


def rollout_intro(n_layers: int) -> str:
    return ("One head's weights show one layer. Attention rollout follows the weights through all "
            f"{n_layers} layers: row t says how much of each input token (column s) has reached position t after "
            "layer l. Each row sums to 1.")


def rollout_sentence(flow: np.ndarray, tokens: list[str], t: int) -> str:
    """This text's numbers: what position t (the query in focus) holds after the last layer, of its own token and
    of the other input token that reached it most. flow: (layers, n, n)."""
    row = flow[-1, t]                                                                           # (n,)
    if len(tokens) < 2:
        return f"On this text, the only position keeps all of its own token: {row[t]:.0%}."
    s = int(np.argmax(np.where(np.arange(len(row)) == t, -1.0, row)))                         # the largest other
    return (f"On this text, after the last layer, position {token(tokens, t)} holds {row[t]:.0%} of its own "
            f"token; the other input token that reached it most is {token(tokens, s)}, with {row[s]:.0%}.")


# --- The lesson's screens: one idea each, shorter than the pages' sections -----------------------------------------

def plane_in_brief(plane: QKPlane, query: int, tokens: list[str]) -> str:
    """The lesson's text for the plane: what it shows, the arrow, and how good both readings are here."""
    who = f"query {token(tokens, query)}"
    text = (f"Head {plane.head + 1}'s queries (●) and keys (◆) as points in one plane, the one that keeps the most "
            f"of their spread: here {plane.explained:.0%}. Follow the arrow from 0 (✚) to the highlighted {who}: the "
            "further along it a key lies, the higher its score. Lines join the query to its strongest keys, each as "
            "wide as the key's weight.")
    if plane.keys_before_rope is not None:
        text += f" {OPEN_CIRCLES}"
    if plane.visible(query).sum() < 2:
        return text
    return (text + f" Here the arrow puts its keys in the right order for {plane.order_kept(query):.0%} of the pairs "
            "(50% would be chance), and distance (nearer = higher score) for "
            f"{plane.order_kept(query, 'distance'):.0%}. "
            + better_reading(plane, query))


CONTRIBUTION_IN_BRIEF = (
    "The weight says how much a query looks at a key. What the key **adds** to the query's output is its value times "
    "that weight, passed through $W^O$: a vector, whose length is the key's **contribution**. A large weight on a key "
    "with a short value adds little."
)

ROLLOUT_IN_ONE = ("Rollout (Abnar and Zuidema 2020) follows attention back through the layers of a trained model: "
                  "it multiplies the layers' attention weights, averaged over the heads, to estimate how much of "
                  "each input token has reached each position.")


def rollout_untrained() -> str:
    """The lesson's rollout screen with random weights: what rollout is, and why there is nothing to follow here."""
    return f"{ROLLOUT_IN_ONE} This example is one layer of random weights, so there are no layers to follow."


def rollout_in_brief(n_layers: int) -> str:
    return (f"One layer's weights show one step of mixing. Rollout follows all {n_layers} layers: it averages each "
            f"layer's heads, keeps half of each token for the residual connection ({RESIDUAL}), and multiplies the "
            "layers. Row t says how much of each input token has reached position t. It ignores the feed-forward "
            f"network ({FEED_FORWARD}) and the sizes of the values: it shows where information can come from, not a "
            "measured cause.")
