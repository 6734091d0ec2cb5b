"""Text alternatives of the figures, made from the numbers the figures draw.

Each figure carries a Description (figures.base.described): `alt`, a sentence or three in words that a screen
reader reads as the chart's name and the app shows on request, and a table of the numbers that matter. One function
per family of figure, each a pure function of the same arrays the figure draws (never of the figure):

- weights / weight_row / head_weights: attention weights and shares, queries as rows and keys as columns;
- values / head_values: signed numbers (X, Q, K, V, scores, outputs);
- amounts: other non-negative amounts on a grid (entropy in bits, a summary per layer and head);
- bars / grouped_bars / shares: one number per bar, several per group, stacked shares.

Tokens appear as typed, in quotes, with their position from 1: 'sat' (3). The text is plain (no HTML, no Markdown):
whoever shows it escapes it; `text_columns` names the table columns that hold user text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..teaching.notation import readable
from ..teaching.questions import TIE

MAX_LISTED = 3  # items named in a sentence ("then ..."): a screen reader reads the rest from the table


@dataclass(frozen=True)
class Description:
    """What a chart shows, in words (`alt`) and as a table (`columns`, `rows`)."""

    alt: str
    columns: tuple[str, ...] = ()
    rows: tuple[tuple, ...] = ()
    text_columns: tuple[int, ...] = field(default=())  # columns holding user text (tokens)

    def as_meta(self) -> dict:
        return {"alt": self.alt, "columns": list(self.columns), "rows": [list(r) for r in self.rows],
                "text_columns": list(self.text_columns)}

    @classmethod
    def of(cls, fig) -> Description | None:
        """The description a figure (a plotly figure or its plain dict) carries (figures.base.described), or None."""
        meta = fig.get("layout", {}).get("meta") if isinstance(fig, dict) else fig.layout.meta
        if not isinstance(meta, dict) or "alt" not in meta:
            return None
        return cls(meta["alt"], tuple(meta["columns"]), tuple(tuple(r) for r in meta["rows"]),
                   tuple(meta["text_columns"]))


def token(tokens: Sequence[str], i: int) -> str:
    """'sat' (3): a token as typed, with its position from 1."""
    return f"'{tokens[i]}' ({i + 1})"


def names(tokens: Sequence[str]) -> list[str]:
    """Every token named as `token` names it: the rows or columns of a description."""
    return [token(tokens, i) for i in range(len(tokens))]


_TAGS = ((re.compile(r"<sub>(.*?)</sub>"), r"_\1"), (re.compile(r"<sup>(.*?)</sup>"), r"^\1"),
         (re.compile(r"<br\s*/?>"), "; "), (re.compile(r"<[^>]+>"), ""))


def plain(title: str) -> str:
    """A figure's title or label as plain text: plotly's little HTML undone (W<sup>O</sup> -> W^O, <br> -> "; ")."""
    for pattern, replacement in _TAGS:
        title = pattern.sub(replacement, title)
    return html.unescape(title).strip()


def _num(v: float, digits: int = 2) -> str:
    return f"{v:.{digits}f}" if np.isfinite(v) else "blocked"  # NaN is a blocked pair here


def _sig(v: float) -> str:
    return readable(v, 3)


def _top_two(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's largest and second largest visible (finite) entries, by column index; -1 where a row has none.
    Ties go to the earlier column."""
    filled = np.where(np.isfinite(w), w, -np.inf)
    first = np.argmax(filled, axis=1)
    rows = np.arange(w.shape[0])
    none = ~np.isfinite(filled[rows, first])
    filled[rows, first] = -np.inf
    second = np.argmax(filled, axis=1) if w.shape[1] > 1 else np.zeros_like(first)
    gone = none | ~np.isfinite(filled[rows, second]) if w.shape[1] > 1 else np.ones_like(none)
    return np.where(none, -1, first), np.where(gone, -1, second)


def _pattern(w: np.ndarray) -> str:
    """For self-attention (keys are the queries' tokens), from the weights (n, n; blocked pairs NaN): the rule that
    more than half of the queries follow with a single strongest key, or that they tie (two weights within
    questions.TIE, as the questions count a tie), if one does."""
    n = w.shape[0]
    first, second = _top_two(w)
    position = np.arange(n)
    tied = (second >= 0) & (w[position, np.maximum(first, 0)] - w[position, np.maximum(second, 0)] <= TIE)
    top = np.where(tied, -1, first)                                 # each row's single strongest key, or -1
    rules = {"put most weight on themselves": top == position, "put most weight on the token before them":
             (top >= 0) & (top == position - 1), "put most weight on the token after them": top == position + 1,
             "put most weight on the first token": top == 0,
             "have no single strongest key (a tie)": (top < 0) & (first >= 0)}
    name, hits = max(rules.items(), key=lambda kv: int(kv[1].sum()))
    k = int(hits.sum())
    return f"{k} of {n} queries {name}." if 2 * k > n and n > 1 else ""


def weights(w: np.ndarray, queries: Sequence[str], keys: Sequence[str], what: str, value: str = "weight"
            ) -> Description:
    """A matrix of weights or shares (n queries, m keys; named), blocked pairs NaN: the strongest pair, the rule
    most queries follow (self-attention: queries and keys are the same tokens), and each query's two strongest keys
    as a table."""
    w = np.asarray(w, dtype=float)
    n, m = w.shape
    first, second = _top_two(w)
    blocked = int((~np.isfinite(w)).sum())
    alt = f"{what}: {n} queries (rows) × {m} keys (columns)" + (f", {blocked} pairs blocked (blank)" if blocked
                                                                else "")
    if (first >= 0).any():
        q = int(np.argmax(np.where(first >= 0, w[np.arange(n), np.maximum(first, 0)], -np.inf)))
        alt += f". Strongest: query {queries[q]} on key {keys[first[q]]}, {_num(w[q, first[q]])}."
    else:
        alt += ". Every pair is blocked."
    rule = _pattern(w) if list(queries) == list(keys) else ""
    if rule:
        alt += " " + rule
    rows = tuple((queries[i], *_key_cell(keys, w[i], first[i]), *_key_cell(keys, w[i], second[i])) for i in range(n))
    return Description(alt.strip(), ("query", f"most {value} on", value, "next most on", f"its {value}"), rows,
                       (0, 1, 3))


def _key_cell(keys: Sequence[str], row: np.ndarray, j: int) -> tuple:
    return (keys[j], _round(row[j])) if j >= 0 else ("none", "")


def weight_row(w: np.ndarray, query: str, keys: Sequence[str], head: int, value: str = "weight") -> Description:
    """One query's weights over the keys (named; blocked keys NaN): "Head 3, query 'sat' (3): most weight on
    'cat' (2) (0.62), then 'The' (1) (0.21)", and every key, largest first, as a table."""
    w = np.asarray(w, dtype=float)
    visible = np.flatnonzero(np.isfinite(w))
    order = visible[np.argsort(-w[visible], kind="stable")]
    named = [f"{keys[j]} ({_num(w[j])})" for j in order[:MAX_LISTED]]
    alt = f"Head {head + 1}, query {query}: "
    alt += (f"most {value} on {named[0]}" + (f", then {', then '.join(named[1:])}" if len(named) > 1 else "")
            if named else "every key is blocked")
    blocked = len(w) - len(visible)
    alt += f". The {value}s sum to {w[visible].sum():.3f}" + (f"; {blocked} keys blocked." if blocked else ".")
    rows = tuple((keys[j], _round(w[j])) for j in order) + tuple(
        (keys[j], "blocked") for j in np.flatnonzero(~np.isfinite(w)))
    return Description(alt, ("key", value), rows, (0,))


def head_weights(ws: np.ndarray, queries: Sequence[str], keys: Sequence[str], what: str,
                 panels: Sequence[str] | None = None, value: str = "weight") -> Description:
    """Weight matrices, one per panel (h, n, m; queries and keys named), a blocked pair 0 (as softmax leaves it) or
    NaN: how focused each is (the mean over queries of the largest weight) and, for self-attention, the rule its
    queries' strongest keys follow."""
    ws = np.asarray(ws)
    h, n, m = ws.shape
    panels = list(panels or [f"head {i + 1}" for i in range(h)])
    largest = ws.max(axis=2)                                       # (h, n); NaN where a row has a blank pair
    if np.isnan(largest).any():
        ws = np.where(np.isnan(ws), -1.0, ws)                      # a blank pair is never a row's largest
        largest = ws.max(axis=2)
    peak = np.maximum(largest, 0.0).mean(axis=1)                   # (h,); a fully blocked row counts 0
    order = np.argsort(-peak, kind="stable")
    alt = (f"{what}: {h} panels of {n} queries (rows) × {m} keys (columns). Most focused: {panels[order[0]]} "
           f"(mean largest {value} {peak[order[0]]:.2f})")
    alt += f"; least: {panels[order[-1]]} ({peak[order[-1]]:.2f})." if h > 1 else "."
    rules = [_pattern(np.where(w < 0, np.nan, w)) or "no single rule" for w in ws] if list(queries) == list(keys) \
        else ["no position rule: queries and keys come from two sentences"] * h  # previous/next/first need one sentence
    return Description(alt, ("panel", f"mean largest {value}", "most queries' strongest key"),
                       tuple((panels[i], _round(peak[i]), rules[i]) for i in range(h)))


def blocked(mask: np.ndarray, queries: Sequence[str], keys: Sequence[str], what: str) -> Description:
    """A mask (n, m), True = blocked: how many pairs it blocks, and each query's kept and blocked keys as a table."""
    mask = np.asarray(mask, dtype=bool)
    n, m = mask.shape
    alt = f"{what}: {int(mask.sum())} of {n * m} query–key pairs blocked"
    full = int(mask.all(axis=1).sum())
    alt += f"; {full} queries have every key blocked." if full else "."
    rows = tuple((queries[i], int((~mask[i]).sum()), int(mask[i].sum())) for i in range(n))
    return Description(alt, ("query", "keys kept", "keys blocked"), rows, (0,))


def values(z: np.ndarray, rows: Sequence[str], cols: Sequence[str], what: str, full_up_to: int = 12,
           text_rows: bool = True) -> Description:
    """A matrix of signed numbers (rows and columns named), blank cells NaN: its range and where the extremes are,
    and each row's numbers (all of them up to `full_up_to` columns, else each row's smallest and largest) as a
    table."""
    z = np.asarray(z, dtype=float)
    n, m = z.shape
    finite = np.isfinite(z)
    if not finite.any():
        return Description(f"{what}: {n} × {m}, every cell blank.")
    low, high = _extremes(z, finite)
    alt = (f"{what}: {n} rows × {m} columns, from {_sig(z[low])} (row {rows[low[0]]}, column {cols[low[1]]}) to "
           f"{_sig(z[high])} (row {rows[high[0]]}, column {cols[high[1]]}).")
    blank = int((~finite).sum())
    if blank:
        alt += f" {blank} cells blocked (blank)."
    first = (0,) if text_rows else ()
    if m <= full_up_to:
        return Description(alt, ("row", *cols), tuple((rows[i], *(_round(v) for v in z[i])) for i in range(n)), first)
    smallest, largest = np.where(finite, z, np.inf).min(axis=1), np.where(finite, z, -np.inf).max(axis=1)
    return Description(alt, ("row", "smallest", "largest"),
                       tuple((rows[i], _round(smallest[i]), _round(largest[i])) for i in range(n)), first)


def _extremes(z: np.ndarray, finite: np.ndarray) -> tuple[tuple, tuple]:
    """The (row, column) of the lowest and of the highest finite cell."""
    return (np.unravel_index(int(np.argmin(np.where(finite, z, np.inf))), z.shape),
            np.unravel_index(int(np.argmax(np.where(finite, z, -np.inf))), z.shape))


def head_values(zs: Sequence[np.ndarray], panels: Sequence[str], what: str) -> Description:
    """Several signed matrices (small multiples, named by `panels`): each one's range, and which is largest in
    size."""
    ranges = [(float(np.min(z)), float(np.max(z))) for z in (np.asarray(z, dtype=float) for z in zs)]
    sizes = [max(abs(lo), abs(hi)) for lo, hi in ranges]
    big = int(np.argmax(sizes))
    alt = f"{what}: {len(zs)} panels; the largest in size is {panels[big]} (|value| up to {_sig(sizes[big])})."
    return Description(alt, ("panel", "smallest", "largest"),
                       tuple((panels[i], _round(lo), _round(hi)) for i, (lo, hi) in enumerate(ranges)))


def amounts(z: np.ndarray, rows: Sequence[str], cols: Sequence[str], what: str, unit: str = "",
            text_rows: bool = False) -> Description:
    """A grid of non-negative amounts (entropy per query and head, a number per layer and head; rows and columns
    named), blank cells NaN: the lowest and highest cells and the columns of lowest and highest mean, and the whole
    grid as a table."""
    z = np.asarray(z, dtype=float)
    finite = np.isfinite(z)
    u = f" {unit}" if unit else ""
    if not finite.any():
        return Description(f"{what}: every cell blank.")
    low, high = _extremes(z, finite)
    alt = (f"{what}: lowest {z[low]:.2f}{u} ({rows[low[0]]}, {cols[low[1]]}), highest {z[high]:.2f}{u} "
           f"({rows[high[0]]}, {cols[high[1]]}).")
    counts = finite.sum(axis=0)
    if z.shape[1] > 1 and (counts > 0).all():
        means = np.where(finite, z, 0.0).sum(axis=0) / counts
        lo, hi = int(np.argmin(means)), int(np.argmax(means))
        alt += f" Lowest mean: {cols[lo]} ({means[lo]:.2f}{u}); highest mean: {cols[hi]} ({means[hi]:.2f}{u})."
    table = tuple((rows[i], *(_round(v, 3) for v in z[i])) for i in range(z.shape[0]))
    return Description(alt, ("", *cols), table, (0,) if text_rows else ())


def _largest_first(v: np.ndarray) -> np.ndarray:
    visible = np.flatnonzero(np.isfinite(v))
    return visible[np.argsort(-v[visible], kind="stable")]


def bars(labels: Sequence[str], heights: Sequence[float], what: str, unit: str = "", fmt: str | None = None,
         text_labels: bool = False, column: str = "value") -> Description:
    """One number per bar (labels are its names): the largest and the next ones, the smallest; every bar, in order,
    as a table whose number column is `column`. text_labels: the labels are user text (tokens)."""
    v = np.asarray(heights, dtype=float)
    order = _largest_first(v)
    u = f" {unit}" if unit else ""
    if not len(order):
        return Description(f"{what}: no bar has a value.")
    show = fmt.format if fmt else _sig
    named = [f"{labels[i]} ({show(v[i])}{u})" for i in order[:MAX_LISTED]]
    alt = f"{what}: largest {named[0]}" + (f", then {', then '.join(named[1:])}" if len(named) > 1 else "")
    if len(order) > MAX_LISTED:
        alt += f"; smallest {labels[order[-1]]} ({show(v[order[-1]])}{u})"
    rows = tuple((labels[i], _significant(v[i])) for i in range(len(v)))
    return Description(alt + ".", ("", column), rows, (0,) if text_labels else ())


def grouped_bars(labels: Sequence[str], series: dict[str, Sequence[float]], what: str, unit: str = "",
                 fmt: str | None = None, show: Callable[[float], str] | None = None) -> Description:
    """Several bars per label, one per series (missing: NaN): each series' largest, and the whole as a table.

    show: each height as text with its own unit (e.g. analysis.cost.human_bytes: "48 MiB"), in the summary and the
    table alike, in place of fmt and unit."""
    u = f" {unit}" if unit else ""
    text = show or (lambda v: f"{fmt.format(v) if fmt else _sig(v)}{u}")
    parts = []
    for name, heights in series.items():
        v = np.asarray(heights, dtype=float)
        order = _largest_first(v)
        if len(order):
            parts.append(f"{name}: largest {labels[order[0]]} ({text(v[order[0]])})")
    cell = (lambda v: show(v) if np.isfinite(float(v)) else _round(v)) if show else _significant
    rows = tuple((label, *(cell(series[name][i]) for name in series)) for i, label in enumerate(labels))
    return Description(f"{what}. " + "; ".join(parts) + ".", ("", *series), rows)


def shares(labels: Sequence[str], parts: dict[str, Sequence[float]], what: str) -> Description:
    """Stacked shares of each bar (labels; parts: name -> one share per bar, missing NaN): each bar's largest part,
    and every share as a table."""
    names_ = list(parts)
    table = np.array([[float(parts[p][i]) for p in names_] for i in range(len(labels))])
    lines = []
    for i, row in enumerate(table):
        order = _largest_first(row)
        if len(order):
            lines.append(f"{labels[i]}: {names_[order[0]]} ({row[order[0]]:.2f})")
    alt = f"{what}. Largest part of each: " + "; ".join(lines[:6]) + ("; …" if len(lines) > 6 else "") + "."
    return Description(alt, ("", *names_), tuple((labels[i], *(_round(v, 3) for v in row))
                                                 for i, row in enumerate(table)))


def _round(v, digits: int = 4):
    """A table cell: the number rounded (a plain float), or "blocked" for a blank cell."""
    v = float(v)
    return round(v, digits) if np.isfinite(v) else "blocked"


def _significant(v, digits: int = 6):
    """A table cell to `digits` significant digits, so that a small number (2.14e-05) keeps them: rounding to
    decimal places made it 2.1e-05, beside a sentence that said 2.14e-05. A whole number (a count) stays exact."""
    v = float(v)
    if not np.isfinite(v):
        return "blocked"
    return int(v) if v.is_integer() else float(f"{v:.{digits}g}")
