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
from .notation import score_words

TIE = 1e-6  # weights closer than this count as a tie
KINDS = ("x_size", "q_shape", "strongest_key", "concat_width", "w_o_size", "heads_cost")


@dataclass(frozen=True)
class Question:
    """A question, its answer and the reason, in Markdown ($...$ for formulas).

    A student answers by picking one of `choices` (when there are some) or by typing a whole number; `correct` is
    the right choice or number, `also_right` other choices that are right too (a tie). `facts` are the plain texts
    that state the answer (e.g. "7 × 16"): a page keeps them out of sight until the question is answered or
    revealed.
    """

    prompt: str
    answer: str
    why: str = ""
    choices: tuple[str, ...] = ()
    correct: str | int = ""
    facts: tuple[str, ...] = ()
    also_right: tuple[str, ...] = ()

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


def x_size(trace: Trace) -> Question:
    n, d_model = trace.x.shape
    return Question(
        "How many numbers does the input X hold?",
        f"**{n * d_model:,}**: {n} tokens × {d_model} numbers each.",
        f"X has one row per token and one column per dimension: $X \\in \\mathbb{{R}}^{{{n}\\times{d_model}}}$.",
        correct=n * d_model, facts=_numbers(n * d_model) + _shapes(n, d_model))


def q_shape(trace: Trace, head: int) -> Question:
    h, n, d_k = trace.q.shape
    d_model = trace.x.shape[1]
    right = f"{n} × {d_k}"
    return Question(
        f"What is the shape of $Q_{{{head + 1}}}$, the queries of head {head + 1}?",
        f"**{right}**: one row per token, d_k = {d_k} columns.",
        f"Each of the {h} heads gets d_k = d_model / h = {d_model} / {h} = {d_k} of the projection's columns.",
        choices=_options(right, f"{n} × {d_model}", f"{d_model} × {d_k}", f"{d_k} × {n}"), correct=right,
        facts=_shapes(n, d_k))


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
            "instead of NaN.", choices=("all 0", "all equal, 1/m each", "NaN (not a number)"), correct="all 0")
    scores = trace.scores[head, query].astype(np.float64)                       # (m,) z_ts before the mask
    blocked = np.zeros(len(row), bool) if trace.mask is None else trace.mask[head, query]
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
    return Question(f"In head {head + 1}, which token will {who} attend to most, given each key's score $z_{{ts}}$ "
                    f"({score_words(scale)}: the number softmax turns into a weight)?", answer, why,
                    choices=choices, correct=choices[tied[0]], facts=(f"{top:.{places}f}",),
                    also_right=tuple(choices[j] for j in tied[1:]))


def concat_width(trace: Trace) -> Question:
    h, n, d_k = trace.heads.shape
    width, d_model = trace.concat.shape[1], trace.x.shape[1]
    again = f", which is d_model = {d_model} again" if width == d_model else ""
    return Question(
        f"The {h} heads each give {n} × {d_k}. How many columns does their concatenation have?",
        f"**{width}** = h · d_v = {h} · {d_k}{again}.",
        "Concatenation puts the head outputs side by side: the rows stay, the columns add up.",
        correct=width, facts=_shapes(n, width))


def w_o_size(weights: MHAWeights) -> Question:
    d_model, width = weights.W_O.shape
    count = f"{width} × {d_model} = **{weights.W_O.size:,}** numbers"
    if weights.b_O is not None:
        count += f", plus {weights.b_O.size:,} biases: {weights.W_O.size + weights.b_O.size:,} numbers"
    return Question(
        "How many numbers does W_O hold (its biases left aside)?",
        count + ".",
        f"W_O maps the {width} columns of the concatenation back to d_model = {d_model}: one number for every "
        "(input column, output column) pair.", correct=weights.W_O.size,
        facts=_numbers(weights.W_O.size) + _shapes(width, d_model))


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
    answer = f"**{verdict}**: {mine:,} against {theirs:,} multiply-adds for this example" + (
        ", each query head with its own K/V head." if kv < h else ".")
    return Question(prompt, answer, why, choices=("More", "Fewer", "The same"), correct=verdict, facts=facts)


def ask(kind: str, trace: Trace, weights: MHAWeights, labels: list[str], head: int, query: int,
        key_labels: list[str] | None = None, scale: float | None = None) -> Question:
    """The question `kind` (one of KINDS) about this example; head and query are 0-based; key_labels and scale
    as in strongest_key."""
    if kind == "x_size":
        return x_size(trace)
    if kind == "q_shape":
        return q_shape(trace, head)
    if kind == "strongest_key":
        return strongest_key(trace, labels, head, query, key_labels, scale)
    if kind == "concat_width":
        return concat_width(trace)
    if kind == "w_o_size":
        return w_o_size(weights)
    if kind == "heads_cost":
        return heads_cost(trace)
    raise KeyError(f"unknown question {kind!r}; choose one of {', '.join(KINDS)}")

