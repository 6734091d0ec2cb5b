"""Predict, then reveal: a question about the next figure, answered from the example's own numbers.

Every answer is read off the trace and the weights (shapes, weights, array sizes), never assumed, so it holds for
random weights, the tiny example and every trained model. Token text comes in as `labels`, already made safe for
Markdown by the caller (this package does not know how the app displays text).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis import cost
from ..attention.trace import Trace
from ..attention.weights import MHAWeights
from .notation import head_symbols, score_words

TIE = 1e-6  # weights closer than this count as a tie
KINDS = ("x_size", "q_shape", "strongest_key", "strongest_share", "cell_weight", "concat_width", "w_o_size",
         "heads_cost")
SHARES = ("under 0.25", "0.25 to 0.5", "0.5 to 0.75", "over 0.75")  # the choices of strongest_share, low to high


@dataclass(frozen=True)
class Question:
    """A question, its answer and the reason, in Markdown ($...$ for formulas).

    A student answers by picking one of `choices` (when there are some) or by typing a whole number; `correct` is
    the right choice or number, `also_right` other choices that are right too (a tie). `facts` are the plain texts
    that state the answer (e.g. "7 × 16"): a page keeps them out of sight until the question is answered or
    revealed. `symbols` are the entries of the notation table (notation.SYMBOLS) whose meanings, read together, give
    the answer (Q_i "one row per token" and d_k "the width of one head's queries" are Q_i's shape): a page's
    "Symbols on this page" holds their meanings back until then too. `wrong` pairs a wrong choice (or a typed
    number) with one line saying what it is instead ("that is X's shape, 11 × 128"), shown when a student picks it.
    """

    prompt: str
    answer: str
    why: str = ""
    choices: tuple[str, ...] = ()
    correct: str | int = ""
    facts: tuple[str, ...] = ()
    also_right: tuple[str, ...] = ()
    wrong: tuple[tuple[str | int, str], ...] = ()
    symbols: tuple[str, ...] = ()

    def reason(self, given) -> str:
        """The line that says what a wrong answer is instead ("" when there is none for it)."""
        if not self.choices and given is not None:
            given = int(given)
        return next((why for choice, why in self.wrong if choice == given), "")

    def check(self, given) -> bool:
        """Whether a student's answer (a choice, or a number) is the right one."""
        if self.choices:
            return given == self.correct or given in self.also_right
        return given is not None and int(given) == int(self.correct)


def _numbers(value: int) -> tuple[str, ...]:
    """The ways a page may write a count: 1408 and 1,408."""
    return tuple({f"{value}", f"{value:,}"})


def _shapes(rows: int, cols: int) -> tuple[str, ...]:
    """The ways a page may write a shape: 7 × 16, 7×16, (7, 16), 7\\times16 in LaTeX."""
    return (f"{rows} × {cols}", f"{rows}×{cols}", f"({rows}, {cols})", f"{rows}\\times{cols}",
            f"{rows} \\times {cols}")


def _options(correct: str, *others: str) -> tuple[str, ...]:
    """The choices of a question in a fixed order that does not give the answer away (sorted as text)."""
    return tuple(sorted(dict.fromkeys((correct, *others))))


def _reasons(correct, *pairs) -> tuple[tuple[str | int, str], ...]:
    """(wrong answer, what it is) pairs, leaving out any that coincide with the right answer or an earlier one."""
    kept: dict = {}
    for given, why in pairs:
        if given != correct and given not in kept:
            kept[given] = why
    return tuple(kept.items())


def x_size(trace: Trace) -> Question:
    n, d_model = trace.x.shape
    return Question(
        "How many numbers does the input X hold?",
        f"**{n * d_model:,}**: {n} tokens × {d_model} numbers each.",
        f"X has one row per token and one column per dimension: $X \\in \\mathbb{{R}}^{{{n}\\times{d_model}}}$.",
        correct=n * d_model, facts=_numbers(n * d_model) + _shapes(n, d_model), symbols=("X",),
        wrong=_reasons(n * d_model, (n, "that is the number of tokens: each brings a row of numbers"),
                       (d_model, "that is one token's numbers, d_model: X has one such row per token"),
                       (n + d_model, "that adds rows and columns: a table holds rows times columns")))


def q_shape(trace: Trace, head: int) -> Question:
    h, n, d_k = trace.q.shape
    d_model = trace.x.shape[1]
    right = f"{n} × {d_k}"
    return Question(
        f"What is the shape of $Q_{{{head + 1}}}$, the queries of head {head + 1}?",
        f"**{right}**: one row per token, d_k = {d_k} columns.",
        f"Each of the {h} heads gets d_k = d_model / h = {d_model} / {h} = {d_k} of the projection's columns." if h > 1
        else f"The one head gets all d_k = d_model = {d_k} of the projection's columns.",
        choices=_options(right, f"{n} × {d_model}", f"{d_model} × {d_k}", f"{d_k} × {n}"), correct=right,
        facts=_shapes(n, d_k), symbols=(*head_symbols(1)[1:], *head_symbols(2)[1:], "d_k"),
        wrong=_reasons(right, (f"{n} × {d_model}", f"that is X's shape, {n} × {d_model}: every token's d_model "
                                                   "numbers, before the split into heads"),
                       (f"{d_model} × {d_k}", f"that is the shape of the head's weight matrix $W^Q_{{{head + 1}}}$, "
                                              f"{d_model} × {d_k}, not of its queries"),
                       (f"{d_k} × {n}", f"that is $Q_{{{head + 1}}}^\\top$: the queries are rows, one per token")))


def _score_decimals(scores: np.ndarray, order: np.ndarray, tied: int) -> int:
    """Enough decimals (2 to 6) that the largest score shown differs from the next one that is not tied with it."""
    if tied >= len(order):
        return 2
    top, runner_up = scores[order[0]], scores[order[tied]]
    return next((d for d in range(2, 7) if f"{top:.{d}f}" != f"{runner_up:.{d}f}"), 6)


def _weight_decimals(top: float, runner_up: float) -> int:
    """Decimals for the weights (4 to 8): enough that the largest weight shown differs from the next one."""
    return next((d for d in range(4, 9) if f"{top:.{d}f}" != f"{runner_up:.{d}f}"), 8)


def _runner_up(row: np.ndarray, rest: list[int], keys: list[str], places: int) -> str:
    """The key(s) after the largest, by weight (rest: open keys, largest first). Keys whose weights are equal, or
    read the same at `places` decimals, are named as a tie, never one of them as "next"."""
    shown = f"{row[rest[0]]:.{places}f}"
    tie = sorted(j for j in rest if f"{row[j]:.{places}f}" == shown or row[rest[0]] - row[j] <= TIE)
    if len(tie) == 1:
        return f"Next comes {tie[0] + 1} {keys[tie[0]]} with {shown}."
    if len(tie) == len(rest):
        return f"The other {len(tie)} keys tie at {shown}."
    return f"Next come {len(tie)} keys that tie at {shown}: " + ", ".join(f"{j + 1} {keys[j]}" for j in tie) + "."


def strongest_key(trace: Trace, labels: list[str], head: int, query: int,
                  key_labels: list[str] | None = None, scale: float | None = None) -> Question:
    """Which key the query weights most in this head (ties and the runner-up named); blocked rows asked otherwise.

    The question can be reasoned, not guessed: each choice shows its key's score z_ts (the scaled score, before
    the mask) and whether the mask blocks it, and the page has taught that softmax keeps the order of the scores
    and gives a blocked key 0. labels, key_labels: the tokens as the page shows them (key_labels: the keys' in
    cross-attention, None: the queries' own). The choices are the keys by position, token and score. scale:
    MHAConfig.scale (None: 1/√d_k), said with the scores."""
    row = trace.weights[head, query]
    keys = labels if key_labels is None else key_labels
    who = f"query {query + 1} {labels[query]}"
    if trace.blocked_rows[head, query]:
        return Question(
            f"In head {head + 1}, the mask blocks every key for {who}. What will its weights be?",
            "**All 0.** With no key left to attend to, there is nothing to share out.",
            "Softmax of a row that is all −∞ would be 0/0; the engine returns zero weights (and a zero head output) "
            "instead of NaN.", choices=("all 0", "all equal, 1/m each", "NaN (not a number)"), correct="all 0",
            wrong=(("all equal, 1/m each", "that would be a row whose keys are all open with equal scores"),
                   ("NaN (not a number)", "softmax of a row of −∞ is 0/0, but the engine returns 0 instead")))
    scores, open_ = _open_scores(trace, head, query)                            # (m,) z_ts before the mask
    blocked = ~open_
    order = np.argsort(-row, kind="stable")
    top = row[order[0]]
    tied = sorted(j for j in order if top - row[j] <= TIE)  # a tie is named in position order
    decimals = _score_decimals(np.where(blocked, -np.inf, scores), order, len(tied))
    rest = [j for j in order if j not in tied and not blocked[j]]
    places = _weight_decimals(top, row[rest[0]]) if rest else 4
    names = " and ".join(f"{j + 1} {keys[j]}" for j in tied)
    answer = f"**{names}**, with weight {top:.{places}f}" + (" each (a tie)." if len(tied) > 1 else ".")
    why = "Softmax keeps the order of the scores: the key with the largest score $z_{ts}$ gets the largest weight."
    if blocked.any():
        why += " A blocked key gets weight 0, whatever its score."
    if rest:
        why += " " + _runner_up(row, rest, keys, places)
    choices = tuple(f"{j + 1} {keys[j]}: z = {scores[j]:.{decimals}f}" + (", blocked" if blocked[j] else "")
                    for j in range(len(keys)))
    best = scores[np.flatnonzero(~blocked)].max() if (~blocked).any() else 0.0
    wrong = tuple((choices[j], "the mask blocks this key: it gets weight 0, whatever its score" if blocked[j] else
                   f"a key with a larger score (z = {best:.{decimals}f}) gets more: softmax keeps the order")
                  for j in range(len(keys)) if j not in tied)
    return Question(f"In head {head + 1}, which token will {who} attend to most, given each key's score $z_{{ts}}$ "
                    f"({score_words(scale)}: the number softmax turns into a weight)?", answer, why,
                    choices=choices, correct=choices[tied[0]], facts=(f"{top:.{places}f}",),
                    also_right=tuple(choices[j] for j in tied[1:]), wrong=wrong)


def _open_scores(trace: Trace, head: int, query: int) -> tuple[np.ndarray, np.ndarray]:
    """(z, open): the query's scores z_ts before the mask (m,) and which keys the mask leaves open (m,)."""
    scores = trace.scores[head, query].astype(np.float64)                     # (m,)
    blocked = np.zeros(len(scores), bool) if trace.mask is None else trace.mask[head, query]
    return scores, ~blocked


def strongest_share(trace: Trace, labels: list[str], head: int, query: int,
                    key_labels: list[str] | None = None, scale: float | None = None) -> Question:
    """How much weight softmax gives the query's strongest key, as one of four ranges (SHARES), from its scores.

    Not which key wins (strongest_key asks that) but by how much: the student weighs the gap between the largest
    score and the others, knowing that e^z grows fast and the weights sum to 1."""
    if trace.blocked_rows[head, query]:
        return strongest_key(trace, labels, head, query, key_labels, scale)
    keys = labels if key_labels is None else key_labels
    scores, open_ = _open_scores(trace, head, query)
    top = float(trace.weights[head, query].max())
    shown = [f"{j + 1} {keys[j]}: {scores[j]:.2f}" for j in np.flatnonzero(open_)]
    if len(shown) > 12:
        order = np.argsort(-np.where(open_, scores, -np.inf), kind="stable")[:8]
        shown = [f"{j + 1} {keys[j]}: {scores[j]:.2f}" for j in sorted(order)] + [
            f"… ({int(open_.sum()) - 8} more keys, each below {np.sort(scores[open_])[-8]:.2f})"]
    correct = SHARES[min(int(top / 0.25), 3)]
    below, above = SHARES[:SHARES.index(correct)], SHARES[SHARES.index(correct) + 1:]
    return Question(
        f"In head {head + 1}, softmax turns the scores $z_{{ts}}$ of query {query + 1} {labels[query]} "
        f"({score_words(scale)}) into weights that sum to 1. The scores: {'; '.join(shown)}. How much weight will "
        "its strongest key get?",
        f"**{correct}**: {top:.4f}.",
        "Softmax takes e^z of every score, then divides by their sum: a score 1 above another gets e ≈ 2.7 times "
        "its weight, so a clear lead wins most of the weight, and close scores share it.",
        choices=SHARES, correct=correct, facts=(f"{top:.4f}",),
        wrong=tuple((c, "that is too little. Its eᶻ makes the largest score stand out more than the scores "
                        "themselves do")
                    for c in below) + tuple(
            (c, "that is too much. The other keys' eᶻ add up to a good part of the row's sum") for c in above))


def cell_weight(trace: Trace, labels: list[str], head: int, query: int, key: int,
                key_labels: list[str] | None = None, scale: float | None = None) -> Question:
    """One attention weight α_ts from its score, the row's largest score and the row's sum of exponentials: the
    arithmetic the By hand page then writes out. Each wrong choice is a usual slip."""
    keys = labels if key_labels is None else key_labels
    scores, open_ = _open_scores(trace, head, query)
    m = len(scores)
    who = f"query {query + 1} {labels[query]} give key {key + 1} {keys[key]}"
    if not open_[key]:
        return Question(
            f"In head {head + 1}, the mask blocks key {key + 1} {keys[key]} for query {query + 1} {labels[query]}. "
            "What weight $\\alpha_{ts}$ does it get?",
            "**0.**", "The mask adds −∞ to a blocked score, and e^−∞ = 0.",
            choices=("0", f"{1 / m:.4f}", "NaN (not a number)"), correct="0",
            wrong=((f"{1 / m:.4f}", f"that is 1/m = 1/{m}: every key the same weight, as if there were no mask"),
                   ("NaN (not a number)", "only a row with every key blocked has no weights to share out; "
                                          "the engine gives it 0 too")))
    z, z_max = scores[key], scores[open_].max()
    total = float(np.exp(scores[open_] - z_max).sum())
    alpha = float(trace.weights[head, query, key])
    right = f"{alpha:.4f}"
    slips = _reasons(right, (f"{np.exp(z - z_max):.4f}", "that is $e^{z_{ts} - \\max}$: it still has to be "
                                                             "divided by the row's sum"),
                     (f"{z / total:.4f}", "that divides the score itself: softmax divides $e^{z_{ts} - \\max}$"),
                     (f"{1 / int(open_.sum()):.4f}", "that is an equal share for every open key: the scores differ"))
    return Question(
        f"In head {head + 1}, what weight $\\alpha_{{ts}}$ does {who}? Its score is $z_{{ts}}$ = {z:.4f} "
        f"({score_words(scale)}); the row's largest score is {z_max:.4f}, and the row's "
        f"$\\sum_{{s'}} e^{{z_{{ts'}} - \\max}}$ = {total:.4f}.",
        f"**{right}**: $e^{{{z:.4f} - {z_max:.4f}}} / {total:.4f}$.",
        "Softmax: the exponential of the score (less the row's largest, which changes nothing), divided by the "
        "sum of the row's exponentials.",
        choices=_options(right, *(c for c, _ in slips)), correct=right, facts=(f"= {right}",), wrong=slips)


def concat_width(trace: Trace) -> Question:
    h, n, d_k = trace.heads.shape
    width, d_model, kv = trace.concat.shape[1], trace.x.shape[1], trace.k.shape[0]
    again = f", which is d_model = {d_model} again" if width == d_model else ""
    given = (f"The {h} heads each give {n} × {d_k}. How many columns does their concatenation have?" if h > 1 else
             f"The one head gives {n} × {d_k}. How many columns does the concatenation have?")
    return Question(
        given,
        f"**{width}** = h · d_v = {h} · {d_k}{again}.",
        "Concatenation puts the head outputs side by side: the rows stay, the columns add up.",
        correct=width, facts=_shapes(n, width), symbols=("W^O",),
        wrong=_reasons(width, (d_k, "that is one head's width, d_v: the concatenation puts all h side by side"),
                       (n, "that is the number of rows (tokens): the rows stay, the columns add up"),
                       (h, "that is the number of heads: each brings d_v columns"),
                       (kv * d_k, f"that is the width of K or V here, h_kv · d_k = {kv} · {d_k}: the query heads "
                                  f"share K/V heads, but each of the {h} query heads gives its own output")))


def w_o_size(weights: MHAWeights) -> Question:
    d_model, width = weights.W_O.shape
    kv_width = weights.W_K.shape[0]  # h_kv · d_k: less than width when query heads share K/V heads
    count = f"{width} × {d_model} = **{weights.W_O.size:,}** numbers"
    if weights.b_O is not None:
        count += (f"; with its {weights.b_O.size:,} biases, which the question leaves aside, "
                  f"{weights.W_O.size + weights.b_O.size:,} numbers")
    return Question(
        "How many numbers does W_O hold" + (" (its biases left aside)?" if weights.b_O is not None else "?"),
        count + ("." if weights.b_O is not None else "; this layer has no biases."),
        f"W_O maps the {width} columns of the concatenation back to d_model = {d_model}: one number for every "
        "(input column, output column) pair.", correct=weights.W_O.size,
        facts=_numbers(weights.W_O.size) + _shapes(width, d_model), symbols=("W^O",),
        wrong=_reasons(weights.W_O.size, (width + d_model, "that adds its rows and columns: a matrix holds rows "
                                                           "times columns"),
                       (weights.W_O.size + (0 if weights.b_O is None else weights.b_O.size),
                        "that counts the biases too: the question leaves them aside"),
                       (kv_width * d_model, f"that is the size of W_K or W_V here, {kv_width} × {d_model}: W_O reads "
                                            f"the concatenation of every query head's output, {width} columns")))


def _other_head_count(d_model: int, h: int) -> int | None:
    """A head count to compare with: 1 when h > 1, else the smallest h' > 1 that divides d_model."""
    if h > 1:
        return 1
    return next((g for g in range(2, d_model + 1) if d_model % g == 0), None)


def heads_cost(trace: Trace) -> Question:
    """Do h heads of d_k cost more multiply-adds than one head of d_model? Counted from the trace's shapes.

    The question is about splitting into heads only: with shared K/V heads (GQA, MQA) both sides are counted with
    one K/V head per query head, and the saving that sharing brings is told apart in the reason."""
    h, n, m = trace.weights.shape
    d_model, kv = trace.x.shape[1], trace.k.shape[0]
    other = _other_head_count(d_model, h)
    if other is None:
        return Question(
            f"How many multiply-adds do the scores Q K^T take for {n} queries, {m} keys and d_model = {d_model}?",
            f"**{n * m * d_model:,}** = n · m · d_model.", "One multiply-add per dimension, for every query–key pair.",
            correct=n * m * d_model, facts=_numbers(n * m * d_model))
    split_only = cost.attention_flops(n, m, d_model, h)           # one K/V head per query head
    mine, theirs = sum(split_only.values()), sum(cost.attention_flops(n, m, d_model, other).values())
    split = (f"{h} head{'s' if h > 1 else ''} of d_k = {d_model // h}",
             f"{other} head{'s' if other > 1 else ''} of {d_model // other}")
    verdict = "The same" if mine == theirs else ("More" if mine > theirs else "Fewer")
    why = ("The projections and W_O do not depend on h, and the scores take h · n · m · d_k = n · m · d_model "
           "multiply-adds for any h. What grows with h is the number of n × m matrices of attention weights kept.")
    prompt = f"Will {split[0]} need more, fewer or the same multiply-adds as {split[1]}?"
    facts = _numbers(mine) + _numbers(theirs)
    if kv < h:  # sharing K/V heads is another saving, not splitting's: ask about splitting alone, then tell it
        shared = cost.attention_flops(n, m, d_model, h, kv)
        total = sum(shared.values())
        prompt += (f" Count both with one K/V head per query head: this example's sharing of {kv} K/V "
                   f"head{'s' if kv > 1 else ''} among its {h} query heads is another saving, told after.")
        why += (f" Sharing is a saving of its own: here the {h} query heads share {kv} K/V "
                f"head{'s' if kv > 1 else ''}, so the K and V projections take {shared['project_k']:,} multiply-adds "
                f"each instead of {split_only['project_k']:,}, and the whole layer {total:,} instead of {mine:,}.")
        facts += _numbers(total)
    counts = (f"{mine:,} multiply-adds either way" if mine == theirs else
              f"{mine:,} multiply-adds against {theirs:,}")
    answer = f"**{verdict.lower()}**, {counts} for this example" + (
        ", each query head with its own K/V head." if kv < h else ".")
    wrong = _reasons(verdict, ("More", "that forgets that each head is narrower (d_k = d_model / h): count a "
                                       "score's multiply-adds in one head, then times h"),
                     ("Fewer", "that counts one narrow head: there are h of them, each d_k = d_model / h wide"),
                     ("The same", "that leaves a step out: count the multiply-adds of each step for both"))
    return Question(prompt, answer, why, choices=("More", "Fewer", "The same"), correct=verdict, facts=facts,
                    wrong=wrong)


def ask(kind: str, trace: Trace, weights: MHAWeights, labels: list[str], head: int, query: int,
        key_labels: list[str] | None = None, scale: float | None = None, key: int = 0) -> Question:
    """The question `kind` (one of KINDS) about this example; head, query and key (cell_weight's) are 0-based;
    key_labels and scale as in strongest_key."""
    if kind == "x_size":
        return x_size(trace)
    if kind == "q_shape":
        return q_shape(trace, head)
    if kind == "strongest_key":
        return strongest_key(trace, labels, head, query, key_labels, scale)
    if kind == "strongest_share":
        return strongest_share(trace, labels, head, query, key_labels, scale)
    if kind == "cell_weight":
        return cell_weight(trace, labels, head, query, key, key_labels, scale)
    if kind == "concat_width":
        return concat_width(trace)
    if kind == "w_o_size":
        return w_o_size(weights)
    if kind == "heads_cost":
        return heads_cost(trace)
    raise KeyError(f"unknown question {kind!r}; choose one of {', '.join(KINDS)}")

