"""What the pages say about the experiments on heads: switched-off heads, cross-attention."""

from __future__ import annotations

import math

from mha_app.copy.markup import quote
from mha_app.copy.words import heads, plural, verb


def heads_off_line(off) -> str:
    """The switched-off heads and where they are zeroed, for the top bar: "heads 2 and 5 off (zeroed at Step 3)"."""
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


# --- Sources, as cited in running text: "(Michel et al. 2019)" ---------------------------------------------------

MICHEL = "Michel et al. 2019"
AINSLIE = "Ainslie et al. 2023"
SHAZEER = "Shazeer 2019"
VASWANI = "Vaswani et al. 2017"
# What a cosine is, said before the first one on the page (the output page's head experiments).
COSINE = ("The cosine of two vectors says how alike their directions are, whatever their lengths: 1 for the same "
          "direction, 0 for perpendicular ones (nothing in common), −1 for opposite ones.")


# --- Grouped-query attention -------------------------------------------------------------------------------------


def kv_sharing_text(h: int, kv: int, d_k: int, model: str, model_heads: int, model_kv_heads: int) -> str:
    """How h query heads share kv key/value heads of d_k columns each; `model`: a published model that shares them
    (its query and K/V heads), cited as the example."""
    g = h // kv
    groups = [f"query {plural(g, 'head')} {j * g + 1}{f'–{(j + 1) * g}' if g > 1 else ''} {verb(g, 'reads', 'read')} "
              f"K/V head {j + 1}" for j in range(kv)]
    listed = "; ".join(groups) if kv <= 4 else "; ".join(groups[:2]) + "; and so on"
    cited = (f"(multi-query attention, {SHAZEER}; grouped-query attention, {AINSLIE}, is the general case, with "
             f"several K/V heads: {model}'s {model_heads} query heads share {model_kv_heads})" if kv == 1 else
             f"(grouped-query attention, {AINSLIE}; {model}'s {model_heads} query heads share {model_kv_heads} K/V "
             "heads)")
    return (f"Here the h = {h} query heads share **h_kv = {kv}** {plural(kv, 'key/value head')} {cited}: {listed}. "
            f"Each query head still has its own {d_k} columns of W_Q, but W_K and W_V have only "
            f"**{kv} · {d_k} = {kv * d_k}** columns instead of {h} · {d_k} = {h * d_k}. The lines mark the groups: "
            "each query head is joined to the K/V head it reads.")


def kv_saving_delta(saved: int) -> str:
    """The metric's change: the parameters saved (an ASCII minus: Streamlit reads the sign to choose the arrow)."""
    return f"-{saved:,} vs one K/V head per query head"


def kv_cache_caption(h: int, kv: int) -> str:
    return ("A decoder keeps every past token's keys and values (the K/V cache) to write the next token; "
            f"with {kv} instead of {h} K/V heads it keeps {h // kv} times fewer. Counted by mha_core.cost.")


# --- The 1/√d_k switch -------------------------------------------------------------------------------------------


def scaling_text(d_k: int, product: str, raw_std: float, q_rms: float, k_rms: float, scaled_off: bool,
                 model: str | None = None) -> str:
    """Why the scores are scaled (Vaswani et al.'s footnote), with this layer's spread of raw scores (`product`:
    their formula) before and after dividing by √d_k, and the prediction from the queries' and keys' sizes (q_rms,
    k_rms: rounded to 3 digits, so the product shown is that of the numbers shown); scaled_off: the page is computed
    without scaling; model: the trained model on view, trained with it (None: random weights)."""
    now = "without scaling" if scaled_off else "with 1/√d_k"
    root = math.sqrt(d_k)
    return (
        f"{VASWANI} give one reason, and as a suspicion: “We suspect that for large values of d_k, the dot products "
        "grow large in magnitude, pushing the softmax function into regions where it has extremely small "
        "gradients.” Their footnote says why the products grow: if the d_k numbers of a query and a key are "
        "independent, with mean 0 and variance 1, their dot product has mean 0 and variance d_k. Dividing by √d_k "
        "brings that variance back to 1; this follows from the footnote's assumptions, which real queries and keys "
        f"need not meet. Here d_k = {d_k}: this layer's raw scores {product} have a spread "
        f"(standard deviation) of **{raw_std:.3g}**, and **{raw_std / root:.3g}** after dividing by "
        f"√{d_k} = {root:.3g}. The footnote's prediction of 1 assumes every number of a query and a key has "
        f"variance 1; here "
        f"their typical sizes (root mean square) are {q_rms:.3g} for the queries and {k_rms:.3g} for the keys, and "
        f"with these in place of 1 the same reasoning predicts {q_rms:.3g} × {k_rms:.3g} = **{q_rms * k_rms:.3g}**. "
        "What is left between prediction and measurement comes from numbers that are not independent or do not "
        "average to 0. Either way, dividing shrinks every score by the same factor. "
        f"Below, the same raw scores are softmaxed both ways; the rest of this page is computed {now}."
        + (f" {model} was trained with the scaling: leaving it out here shows what these same scores would give "
           "without it, not how a model trained without it would behave (training would have found other weights)."
           if model else ""))


def scaling_over(heads: int) -> str:
    """The caption above the means over the layer's heads."""
    return f"Over all {heads} heads and every query of this layer (head by head in the chart below the next one):"


MEAN_OVER_LAYER = "The mean over every head and query token of this layer."


def scaling_switch_caption(sizes_fixed: bool) -> str:
    """Where to switch the scaling, with random weights; and, unless the sizes are fixed (the tiny example), how
    to see the gap grow."""
    return ("Switch the scaling under *Scale the scores by* in the sidebar"
            + ("." if sizes_fixed else ", and change d_model or h to see how the gap grows with d_k."))


# --- Planted heads -----------------------------------------------------------------------------------------------

PLANT_INVITE = ("Some trained heads follow simple rules: Voita et al. (2019) find heads that look at the token before "
                "or after; Clark et al. (2019) and Xiao et al. (2023) find heads that park their weight on the first "
                "token. Choose *Plant a head* in the sidebar to build one by hand.")


def planted_title(head: int, rule: str) -> str:
    return f"Head {head}, planted: {rule}"


def planted_aim(pattern: str, strength: float, m: int) -> str:
    """What the planted head's scores and weights should read: for a rule of one key, that key's share of the
    weight among m open keys (strength: the score on it); for `uniform`, equal weights."""
    if pattern == "uniform":
        return ("The scores softmax sees (the *scaled scores* stage) should all read 0: equal scores give every key "
                "the same weight 1/m, whatever the strength")
    share = math.exp(strength) / (math.exp(strength) + m - 1)
    fraction = f"$e^{{{strength:g}}} / (e^{{{strength:g}}} + {m - 1})$"
    missing = {"previous": " A row with no key before it (the first token) spreads its weight evenly.",
               "next": " A row with no key after it (the last token) spreads its weight evenly."}.get(pattern, "")
    return (f"The scores softmax sees (the *scaled scores* stage) should read **{strength:g}** on the rule's key "
            f"and 0 elsewhere; softmax then gives that key {fraction} = **{share:.3f}** of the row's weight when "
            f"all {m} keys are open (more when the mask hides some).{missing} Raise the strength to watch softmax "
            "sharpen towards one key, then saturate: past about 10 the weights hardly move")


def planted_text(evidence: str, head: int, d_k: int, bias: bool, method: str, product_tex: str, aim: str) -> str:
    """How the head (1-based) was planted: the evidence for its rule, the columns of W_Q replaced (of d_k each),
    the fit (method: how it was found; product_tex: the scores' formula in TeX), and what it should show (aim)."""
    columns = f"{(head - 1) * d_k + 1}–{head * d_k}"
    return (f"{evidence} To plant it, only columns {columns} of W_Q (head {head}'s block, as the projection page "
            f"draws it; rows in PyTorch's storage){f' and entries {columns} of b_Q' if bias else ''} were replaced: "
            f"by the best fit, found by {method}, of ${product_tex} \\cdot "
            f"\\mathrm{{scale}} = \\mathrm{{strength}} \\cdot \\mathrm{{rule}}$ on this input. W_K, W_V, W_O and the "
            f"other heads are unchanged. {aim}.")


def fit_exact(error: str) -> str:
    """The planted fit is exact up to rounding (error: the largest difference, as written)."""
    return f"The fit is exact: the scores differ from strength · rule by at most {error} (rounding)."


def fit_closest(score_error: float, weight_error: float, n: int, m: int, d_k: int) -> str:
    """The planted fit is only the closest one: by how much, and why (m keys in d_k dimensions, n inputs)."""
    return (f"The fit is only the closest one: the scores differ from strength · rule by up to {score_error:.3g}, "
            f"and the weights from the rule's by up to {weight_error:.3g}. An exact fit needs the {m} keys to be "
            f"independent vectors in the head's d_k = {d_k} dimensions (so m ≤ d_k) and the {n} inputs to be "
            "independent too" + (f"; here m = {m} > d_k = {d_k}." if m > d_k else "; here they are not quite."))


CAUSAL_NEXT = ("The causal mask hides every token's next token, so this head cannot follow its rule: each row "
               "spreads its weight over the keys it may see.")


# --- Switched-off heads ------------------------------------------------------------------------------------------


def focused_head_off(head: int) -> str:
    """On the attention page, when the head in focus is switched off."""
    return (f"Head {head} is switched off: its weights and output are computed as usual in this step; Step 3 "
            "multiplies its output by 0, so W_O never sees it.")


def model_heads_off(off, layer: int) -> str:
    """On a trained model's own pages: heads `off` of `layer` are switched off, and what that does to the layers."""
    n = len(off)
    return (f"{heads(off).capitalize()} of layer {layer} {verb(n, 'is', 'are')} switched off "
            f"({verb(n, 'its', 'their')} output is multiplied by 0 before W_O). Layers up to {layer} attend as usual; "
            "the layers after it read the changed output, so their weights below are those of the model with "
            f"{verb(n, 'this head', 'these heads')} off.")


def ablation_intro(weights: str, off: bool, cosine: bool) -> str:
    """What switching a head off does; weights: "trained", "tiny" or "random" (how much each head matters there);
    off: some head is off (else: where to choose one); cosine: say what a cosine is (before the first one)."""
    why = {"trained": ". ",
           "tiny": "; the tiny example's weights are set by hand, not trained, and here each of its heads moves the "
                   "output. ",
           "random": "; with random weights every head matters about as much as any other, so here each one moves "
                     "the output. "}[weights]
    return (f"Many heads of a trained model can be switched off with little loss ({MICHEL}){why}"
            "Here a switched-off head's output is multiplied by 0 before W_O (a head mask), so its block of the "
            "concatenation is zero and it adds nothing to the output; everything before Step 3 is computed as usual. "
            + (f"{COSINE} " if cosine else "")
            + ("" if off else "Choose heads under *Switch heads off* in the sidebar."))


def all_heads_off(bias: bool) -> str:
    return "Every head is off: the output is b_O for every token" + ("." if bias else " (zero here: no bias).")


COSINE_LEFT_OUT = "The cosine is left out where an output vector is zero: it has no direction to compare."


def ranking_question(layer: int | None, off, model: bool, n_heads: int) -> str:
    """The question before the ranking; layer: the trained model's layer (None: random weights); off: the heads
    switched off now, which the ranking measures with every head on."""
    where = f" of layer {layer}" if layer is not None else ""
    start = ""
    if off:
        one = len(off) == 1
        start = (f" Each is measured from the full {'model' if model else 'layer'}, all {n_heads} heads on "
                 f"({heads(off)} too): so {'it gets a bar' if one else 'they get bars'} here, while the chart "
                 f"*How much each head adds to the output*, drawn with {verb(len(off), 'it', 'them')} off, shows 0.")
    return (f"**Which head{where} matters most?** Switch each one off alone, every other head kept, and "
            f"measure.{start}")


RANK_HELP = "Switch each head off alone and measure what changes."
RANKING_TITLE = "Switching one head off: how far the output moves"
RANKING_ONE_LAYER = ("In one layer this is exact and simple: the output is a sum of one part per head (see above), so "
                     "switching head i off moves every output row by exactly head i's part; the ranking is that of "
                     "the part sizes. In a trained model, later layers make it less simple: choose one under "
                     "*Weights*.")


def next_token_ranking_title(layer: int, top: float) -> str:
    """A decoder's ranking: the drop in the predicted next token's probability (top: with every head)."""
    return (f"Layer {layer}, one head off: how much the probability of the predicted next token drops (it is "
            f"{top:.3f} with every head)")


def next_token_ranking(best: int, layer: int, token: str, drop: float) -> str:
    """The head (1-based) whose loss changes the probability of the predicted next token `token` (quoted) most,
    by `drop` (positive: down), and how to read the bars."""
    return (f"On this text, switching off head {best} of layer {layer} changes the probability of the "
            f"predicted next token {token} most: {'down' if drop > 0 else 'up'} by {abs(drop):.4f}. "
            "The length of a bar, above or below 0, is how much the prediction depends on that head here: above "
            "0, the token gets a lower probability without the head; below 0, a higher one. A bar near 0 marks a "
            "head the model can lose on this text.")


def sentence_vector_ranking_title(layer: int) -> str:
    return f"Layer {layer}, one head off: how far the sentence vector turns (1 − its cosine to the full one)"


def sentence_vector_ranking(best: int, layer: int) -> str:
    """An encoder's ranking: the head (1-based) whose loss turns the sentence vector most."""
    return (f"On this text, head {best} of layer {layer} moves the sentence vector most "
            "when it is off; a tall bar marks a head the model leans on here, a short one a head it can lose "
            "(1 − cosine is 0 when the sentence vector does not turn at all, so no bar goes below 0).")


def last_layer_ranking_title(layer: int) -> str:
    return f"Layer {layer}, one head off: how far the last layer's token vectors move (mean |change| / |vector|)"


def layer_change_caption(layer: int, decoder: bool) -> str:
    """Under the chart of how far each later layer moved when heads of `layer` are off."""
    after = ("each layer's output (the running sum of its input, its attention and its feed-forward part, which "
             "a decoder normalises only on the way into each block)" if decoder else
             "each layer's output (after its feed-forward part and LayerNorm)")
    return (f"Layers before {layer} are untouched (zero); from layer {layer} on, {after} differs, and the "
            "change can grow or fade as it travels.")


def sentence_vector_text(model: str, off, layer: int) -> str:
    """An encoder's sentence vector, compared for two sentences (with heads `off` of `layer` off, when any are)."""
    return (f"**The sentence vector.** {model} is used for sentence similarity: its sentence vector is "
            "the mean of the last layer's token vectors, scaled to length 1. Compare two sentences"
            + (f", with every head and with {heads(off)} of layer {layer} off:" if off else ":"))


TYPE_COMPARE = "Type a second sentence to compare with."


def heads_off_named(off) -> str:
    """The model with heads `off`, in a table's column: "heads 2 and 5 off"."""
    return f"{heads(off)} off"


def heads_off_label(off) -> str:
    """The model with heads `off`, in a metric: "With heads 2 and 5 off"."""
    return f"With {heads_off_named(off)}"


def similarity_caption(other: str) -> str:
    """Under the cosine similarities: the sentence compared with (quoted, as typed)."""
    return f"Your sentence and {quote(other, 60)}; 1 = same direction, 0 = unrelated."


def next_token_text(model: str, off, layer: int) -> str:
    """A decoder's next token, with every head and with heads `off` of `layer` off (or where to switch them)."""
    return (f"**The next token.** {model} is used to continue text, so what counts is its prediction "
            "of the token after yours (an encoder such as all-MiniLM-L6-v2 is compared by its sentence vector "
            "instead; a decoder has none)."
            + (f" With every head, and with {heads(off)} of layer {layer} off:" if off else
               " Switch heads off in the sidebar to see it change."))


def next_token_caption(same: bool, before: str, after: str, off) -> str:
    """Whether the most likely next token stays the same (before, after: the tokens, as typed) with heads off."""
    return (("The most likely next token stays the same" if same else "The most likely next token changes")
            + f": {quote(before)} with every head, {quote(after)} with {heads(off)} off.")
