"""One attention weight worked out by hand: the dot product term by term, the scale, the row's exponentials, the sum.

`work_cell` redoes the arithmetic of one cell (head, query, key) in float64 from the trace's own Q_i and K_i rows, so
a student can follow every number; `latex_lines` writes it out. The engine computed the same cell in its own
dtype (float32 by default), so the two can differ in the last bits: `WorkedCell.decimals` is the number of decimals
at which they agree (DECIMALS, unless float32 rounding moves a digit there), and the page shows both to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..attention.trace import Trace

DECIMALS = 4
MAX_TERMS = 4  # up to this many products a sum is written out in full (a line must fit a projector's width)
ONE_LINE_TERMS = 2  # up to this many products, the dot product and its sum share one line


def fmt(x: float, decimals: int = DECIMALS) -> str:
    """x rounded to `decimals` places; a number that is exact in fewer places (1, 0.5, -2) without trailing zeros."""
    if np.isneginf(x):
        return "−∞"
    text = f"{x:.{decimals}f}"
    if round(float(x), decimals) == x and "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def same_to(a: float, b: float, decimals: int) -> bool:
    """Whether two numbers round to the same `decimals` places (4.0 and 4.0000002 do, though fmt prints the first
    as 4, being exact, and the second as 4.0000)."""
    return f"{a:.{decimals}f}" == f"{b:.{decimals}f}"


def agreed_decimals(mine: float, engine: float, most: int = DECIMALS) -> int:
    """The most decimals (at most `most`, at least 1) at which two numbers round the same."""
    for decimals in range(most, 0, -1):
        if same_to(mine, engine, decimals):
            return decimals
    return most


@dataclass(frozen=True)
class WorkedCell:
    """The arithmetic of one attention weight, in float64. Positions are 0-based."""

    head: int                # the query head i
    kv_head: int             # the K/V head it reads (= head without grouped-query attention)
    query: int
    key: int
    q: np.ndarray            # (d_k,) the query's row of Q_i
    k: np.ndarray            # (d_k,) the key's row of K_i
    scale: float             # the factor on q·k (1/sqrt(d_k) unless the configuration sets another)
    default_scale: bool      # True when scale = 1/sqrt(d_k)
    scores: np.ndarray       # (m,) the query's scaled scores against every key, -inf where blocked
    exps: np.ndarray         # (m,) e^(score - row_max); 0 where blocked
    engine_score: float      # the engine's scaled score of this cell (before the mask)
    engine_weight: float     # the engine's weight of this cell

    @property
    def d_k(self) -> int:
        return self.q.shape[0]

    @property
    def products(self) -> np.ndarray:
        return self.q * self.k

    @property
    def dot(self) -> float:
        return float(self.products.sum())

    @property
    def score(self) -> float:
        """q·k times the scale, before the mask (as the engine's `scores`)."""
        return self.dot * self.scale

    @property
    def blocked(self) -> np.ndarray:
        return np.isneginf(self.scores)

    @property
    def row_max(self) -> float:
        """The largest unblocked score of the row (0 when every key is blocked)."""
        open_scores = self.scores[~self.blocked]
        return float(open_scores.max()) if open_scores.size else 0.0

    @property
    def total(self) -> float:
        return float(self.exps.sum())

    @property
    def weights(self) -> np.ndarray:
        """The row's weights: exps / total, all 0 when every key is blocked."""
        return self.exps / self.total if self.total > 0 else np.zeros_like(self.exps)

    @property
    def weight(self) -> float:
        return float(self.weights[self.key])

    @property
    def score_decimals(self) -> int:
        return agreed_decimals(self.score, self.engine_score)

    @property
    def weight_decimals(self) -> int:
        return agreed_decimals(self.weight, self.engine_weight)


def work_cell(trace: Trace, head: int, query: int, key: int, scale: float, default_scale: bool = True) -> WorkedCell:
    """Redo the weight of (query, key) in head `head` from the trace's Q_i and K_i, in float64."""
    h, n, m = trace.weights.shape
    if not (0 <= head < h and 0 <= query < n and 0 <= key < m):
        raise IndexError(f"cell (head {head}, query {query}, key {key}) is outside ({h}, {n}, {m})")
    kv_head = head // (h // trace.k.shape[0])
    q = trace.q[head, query].astype(np.float64)
    keys = trace.k[kv_head].astype(np.float64)                   # (m, d_k)
    scores = (keys @ q) * scale                                  # (m,)
    if trace.mask is not None:
        scores = np.where(trace.mask[head, query], -np.inf, scores)
    open_scores = scores[np.isfinite(scores)]
    row_max = open_scores.max() if open_scores.size else 0.0
    exps = np.where(np.isfinite(scores), np.exp(scores - row_max), 0.0)
    return WorkedCell(head=head, kv_head=kv_head, query=query, key=key, q=q, k=keys[key], scale=float(scale),
                      default_scale=default_scale, scores=scores, exps=exps,
                      engine_score=float(trace.scores[head, query, key]),
                      engine_weight=float(trace.weights[head, query, key]))


def _factor(x: float) -> str:
    text = fmt(x)
    return f"({text})" if text.startswith("-") else text


def _terms(values: list[str], max_terms: int = MAX_TERMS) -> str:
    """a + b + c, or the first two terms, a \\dots and the last when there are more than max_terms."""
    if len(values) > max_terms:
        values = [*values[:2], r"\dots", values[-1]]
    return " + ".join(values).replace("+ -", "- ")


def _dot(d_k: int) -> str:
    """q_t . k_s as a sum over the components c (query t, key s, component c: see teaching.notation)."""
    return rf"q_t \cdot k_s = \sum_{{c=1}}^{{{d_k}}} q_{{t,c}}\,k_{{s,c}}"


def latex_lines(cell: WorkedCell) -> list[str]:
    """The cell's arithmetic as LaTeX, one line per step: dot product, scale, exponentials, normalisation."""
    products = [rf"{_factor(a)} \times {_factor(b)}" for a, b in zip(cell.q, cell.k, strict=True)]
    if cell.d_k <= ONE_LINE_TERMS:
        lines = [rf"{_dot(cell.d_k)} = {_terms(products)} = {fmt(cell.dot)}"]
    else:  # the terms on a line of their own, so that the sum fits the width of a page
        lines = [rf"\begin{{aligned}} {_dot(cell.d_k).replace(' = ', ' &= ', 1)} \\ &= {_terms(products)} "
                 rf"\\ &= {fmt(cell.dot)} \end{{aligned}}"]
    sd = cell.score_decimals
    if cell.default_scale:
        lines.append(rf"z_{{ts}} = \frac{{q_t \cdot k_s}}{{\sqrt{{d_k}}}} = "
                     rf"\frac{{{fmt(cell.dot)}}}{{\sqrt{{{cell.d_k}}}}}"
                     rf" = {fmt(cell.score, sd)}")
    else:
        lines.append(rf"z_{{ts}} = (q_t \cdot k_s) \times \mathrm{{scale}} = {_factor(cell.dot)} \times "
                     rf"{fmt(cell.scale)}"
                     rf" = {fmt(cell.score, sd)}")
    wd = cell.weight_decimals
    if cell.blocked[cell.key]:
        lines.append(r"\text{this key is blocked by the mask: } z_{ts} + M_{ts} = -\infty,\; e^{-\infty} = 0,\; "
                     r"\alpha_{ts} = 0")
        return lines
    exps = [fmt(e) for e in cell.exps[~cell.blocked]]
    lines.append(rf"e^{{z_{{ts}} - \max_{{s'}} z_{{ts'}}}} = "
                 rf"e^{{{fmt(cell.scores[cell.key])} - {_factor(cell.row_max)}}}"
                 rf" = {fmt(cell.exps[cell.key])}")
    lines.append(rf"\sum_{{s'}} e^{{z_{{ts'}} - \max_{{s''}} z_{{ts''}}}} = {_terms(exps)} = {fmt(cell.total)}")
    lines.append(rf"\alpha_{{ts}} = \frac{{{fmt(cell.exps[cell.key])}}}{{{fmt(cell.total)}}} = {fmt(cell.weight, wd)}")
    return lines
