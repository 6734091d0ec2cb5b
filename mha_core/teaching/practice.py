"""Practice questions with checked answers, generated from a model's published shape (see published.py).

Each question carries its answer, a hint and the worked answer with the model's numbers put in. `Practice.check`
accepts the exact whole number (or, for an answer in MiB or GiB, one within a rounding margin) and, when a typed
number is off by a small power of two, says so: the usual slips are forgetting K and V, or the 2 bytes per number.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.cost import latex_count as _n
from .published import ModelShape

GIB, MIB = 2**30, 2**20
BATCH = 8            # sequences served at once, in the batch question
UNFIXED_CONTEXT = 1024  # tokens to ask about for a model without a fixed context (the original Transformer)
SLIPS = (2, 4, 8)    # factors a typed answer is often off by


@dataclass(frozen=True)
class Practice:
    """One question: its prompt, the answer, and how to get there (Markdown, $...$ for formulas)."""

    key: str              # stable id: kind@model
    prompt: str
    answer: float
    unit: str             # shown after the number ("" for a plain count)
    hint: str
    worked: str
    rel_tolerance: float = 0.0  # 0: the exact whole number

    @property
    def whole(self) -> bool:
        return self.rel_tolerance == 0

    def is_right(self, value: float) -> bool:
        if self.whole:
            return value == self.answer
        return abs(value - self.answer) <= self.rel_tolerance * abs(self.answer)

    def check(self, value: float | None) -> tuple[bool, str]:
        """(right?, a sentence for the student)."""
        if value is None:
            return False, "Type a number first."
        if self.is_right(value):
            return True, f"Right: {self.shown(self.answer)}."
        for factor in SLIPS:
            for ratio, word in ((factor, "small"), (1 / factor, "large")):
                if self.is_right(value * ratio):
                    return False, (f"Not yet: {self.shown(value)} is {factor} times too {word}. "
                                   "Look at the hint again.")
        return False, f"Not yet: {self.shown(value)} is not it. Try the hint."

    def shown(self, value: float) -> str:
        number = f"{int(value):,}" if float(value).is_integer() else f"{value:,.4g}"
        return f"{number} {self.unit}".strip()


def practice_questions(shape: ModelShape) -> list[Practice]:
    """Questions about one model: d_k, W_O, W_K, its parameters, the score matrices, and for a model that
    generates text, its K/V cache per token and for a batch; for grouped-query attention, the group size."""
    s = shape
    name, d, h, kv, d_k, layers = f"**{s.name}**", s.d_model, s.n_heads, s.n_kv_heads, s.d_k, s.n_layers
    n = s.context or UNFIXED_CONTEXT
    params = s.params_per_layer()
    biases = f" + ({_n(h * d_k)} + 2 \\cdot {_n(kv * d_k)} + {_n(d)})" if s.bias else ""
    questions = [
        Practice(f"d_k@{s.name}", f"{name} has d_model = {d:,} and h = {h} heads. What is d_k, the width of one head?",
                 d_k, "", "Every head gets an equal share of d_model.",
                 f"$d_k = d_{{model}} / h = {_n(d)} / {h} = {d_k}$"),
        Practice(f"W_O@{s.name}", f"How many weights does W_O of one attention block of {name} hold (no bias)?",
                 h * d_k * d, "", "W_O maps the concatenated heads (h · d_k wide) back to d_model.",
                 f"$(h \\cdot d_k) \\times d_{{model}} = ({h} \\cdot {d_k}) \\times {_n(d)} = {_n(h * d_k * d)}$"),
        Practice(f"W_K@{s.name}", f"{name} has {kv} K/V head{'s' if kv > 1 else ''}. How many weights does W_K of "
                 "one attention block hold (no bias)?",
                 d * kv * d_k, "", "W_K makes one key of d_k numbers for each K/V head, from d_model inputs.",
                 f"$d_{{model}} \\times (h_{{kv}} \\cdot d_k) = {_n(d)} \\times ({kv} \\cdot {d_k}) = "
                 f"{_n(d * kv * d_k)}$"),
        Practice(f"params@{s.name}", f"How many parameters does one attention block of {name} hold: W_Q, W_K, W_V "
                 f"and W_O{', with their biases' if s.bias else ' (it has no biases)'}?",
                 params, "", "Add the four matrices: W_Q is d_model × h·d_k, W_O is h·d_k × d_model, W_K and "
                 "W_V are d_model × h_kv·d_k (h_kv: the K/V heads)" + (", and one bias per output number."
                                                                       if s.bias else "."),
                 f"$2 \\cdot {_n(d)} \\cdot {_n(h * d_k)} + 2 \\cdot {_n(d)} \\cdot {_n(kv * d_k)}{biases}"
                 f" = {_n(params)}$" + (" (the bracket holds the biases b_Q, b_K, b_V, b_O)" if s.bias else "")),
        Practice(f"scores@{s.name}", f"How many attention weights does one attention block of {name} compute for "
                 f"an input of {n:,} tokens (every head, every query, every key)?",
                 h * n * n, "", "Each head holds one n × n matrix of weights.",
                 f"$h \\cdot n \\cdot n = {h} \\cdot {_n(n)} \\cdot {_n(n)} = {_n(h * n * n)}$"),
    ]
    if kv < h:
        questions.append(Practice(
            f"group@{s.name}", f"In {name}, how many query heads share each K/V head?", h // kv, "",
            "The query heads are shared out evenly among the K/V heads.", f"$h / h_{{kv}} = {h} / {kv} = {h // kv}$"))
    if s.decoder:
        per_token = s.kv_cache_bytes()
        total = per_token * n * BATCH
        unit, size, power = ("GiB", GIB, "2^30") if total >= GIB else ("MiB", MIB, "2^20")
        where = "its decoder's" if s.kind == "encoder-decoder" else "its"
        questions += [
            Practice(f"kv_token@{s.name}", f"To generate text, {name} keeps the keys and values of every earlier "
                     f"token (the K/V cache). How many bytes does it keep per token, over all {layers} of {where} "
                     "layers, at 16 bits (2 bytes per number)?",
                     per_token, "bytes", "For every layer and every K/V head: one key and one value of d_k numbers.",
                     f"$2 \\cdot L \\cdot h_{{kv}} \\cdot d_k \\cdot 2\\,\\text{{bytes}} = "
                     f"2 \\cdot {layers} \\cdot {kv} \\cdot {d_k} \\cdot 2 = {_n(per_token)}$ bytes"),
            Practice(f"kv_batch@{s.name}", f"How many {unit} ({power} bytes) of K/V cache does {name} hold for a "
                     f"batch of {BATCH} sequences of {n:,} tokens each, at 16 bits? (Three significant digits are "
                     "enough.)",
                     total / size, unit, f"Multiply the cache per token by every token of every sequence, then "
                     f"divide by {power}.",
                     f"${_n(per_token)} \\times {_n(n)} \\times {BATCH} = {_n(total)}$ bytes "
                     f"$= {total / size:.4g}$ {unit}", rel_tolerance=0.01),
        ]
    return questions
