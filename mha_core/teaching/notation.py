"""One notation for the whole app: each symbol means one thing, on every page, in every formula and caption.

The paper's names where it has them (Vaswani et al. 2017: h heads, head i, d_model, d_k, d_v, W^Q_i, W^O). One letter
for each kind of index, never reused: i a (query) head, j a key/value head, t a query position, s a key position,
c a component of a vector. Positions count from 1 on screen, as the axis labels do.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def readable(x: float, digits: int = 2) -> str:
    """A number to `digits` significant digits as a student reads it: decimals from 0.0001 up to a million, else a
    power of ten, 4.2 × 10⁻⁷, never the computer's 4.2e-07 (the explorer's tooltips write numbers the same way)."""
    if x == 0 or 1e-4 <= abs(x) < 1e6:
        return np.format_float_positional(x, precision=digits, unique=False, fractional=False, trim="-")
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


@dataclass(frozen=True)
class Symbol:
    latex: str     # as the formulas write it (KaTeX)
    meaning: str   # one plain sentence (Markdown; $...$ for maths)


def score_words(scale: float | None = None) -> str:
    """What the score z_ts is, for the scale used (MHAConfig.scale: None for the paper's 1/√d_k)."""
    return ("$q_t \\cdot k_s$, times the scale $1/\\sqrt{d_k}$" if scale is None else
            "$q_t \\cdot k_s$ itself (not scaled here)" if scale == 1 else f"$q_t \\cdot k_s$, times {scale:g}")


def score_symbol(scale: float | None = None) -> Symbol:
    """The entry for z_ts with this scale (the table's own is the paper's)."""
    return Symbol("z_{ts}", f"the score of query $t$ against key $s$: {score_words(scale)}.")


SYMBOLS: dict[str, Symbol] = {s.latex: s for s in (
    Symbol("X", "the input: one row per token, $n$ rows of $d_{model}$ numbers."),
    Symbol("Y", "the source sentence in cross-attention: the keys and values are made from its $m$ rows."),
    Symbol("n", "the number of query tokens (rows of $X$)."),
    Symbol("m", "the number of key tokens: $m = n$ when the tokens attend to each other (self-attention)."),
    Symbol("d_{model}", "the width of every token vector."),
    Symbol("h", "the number of heads."),
    Symbol("i", "a head, from 1 to $h$."),
    Symbol("d_k", "the width of one head's queries and keys: $d_k = d_{model} / h$."),
    Symbol("d_v", "the width of one head's values and output; here $d_v = d_k$."),
    Symbol("h_{kv}", "the number of key/value (K/V) heads: $h$ in plain multi-head attention, fewer when "
                     "query heads share them (grouped-query attention)."),
    Symbol("g", "how many query heads share one key/value head: $g = h / h_{kv}$."),
    Symbol("j", "a key/value head, from 1 to $h_{kv}$: query head $i$ reads key/value head $j = \\lceil i/g \\rceil$, "
                "that is $i/g$ rounded up to a whole number (the brackets $\\lceil\\; \\rceil$ mean: round up)."),
    Symbol("W^Q_i, W^K_i, W^V_i", "head $i$'s projection matrices, $d_{model} \\times d_k$: its block of columns of "
                                  "$W^Q$, $W^K$, $W^V$."),
    Symbol("Q_i, K_i, V_i", "head $i$'s queries, keys and values: one row per token."),
    Symbol("W^Q_i, W^K_j, W^V_j", "query head $i$'s projection matrix, and key/value head $j$'s two (shared by $g$ "
                                  "query heads), each $d_{model} \\times d_k$: blocks of columns of $W^Q$, $W^K$, "
                                  "$W^V$."),
    Symbol("Q_i, K_j, V_j", "query head $i$'s queries, and key/value head $j$'s keys and values (shared by $g$ query "
                            "heads): one row per token."),
    Symbol("b", "a bias: a vector added after a matrix product (when the layer has biases)."),
    Symbol("t", "a query position, from 1 to $n$ (a row of the matrices of step 2)."),
    Symbol("s", "a key position, from 1 to $m$ (a column of the matrices of step 2)."),
    Symbol("d", "a dimension of a token vector (a row of $X$ or of the output), from 1 to $d_{model}$: the axis "
                "labels d1, d2, …"),
    Symbol("c", "a component of one head's vector (a query, key, value or head output), from 1 to $d_k$: the axis "
                "labels c1, c2, … (where the heads stand side by side, c counts within each head's block)."),
    Symbol("q_t, k_s, v_s", "the query of token $t$, and the key and value of token $s$: rows of the queries, keys "
                            "and values that head $i$ uses."),
    score_symbol(),
    Symbol("M", "the mask: $M_{ts} = 0$ where query $t$ may look at key $s$, $-\\infty$ where that pair is blocked."),
    Symbol("\\alpha_{ts}", "the attention weight of query $t$ on key $s$: $\\alpha_{ts} = "
                           "\\mathrm{softmax}_s(z_{ts} + M_{ts})$. Each row's weights are $\\ge 0$ and sum to 1."),
    Symbol("\\mathrm{head}_i", "head $i$'s output: row $t$ is $\\sum_s \\alpha_{ts}\\, v_s$, a mix of the values "
                                "weighted by attention."),
    Symbol("W^O", "the output projection, $h d_v \\times d_{model}$; $W^O_i$ is its block of $d_v$ rows that reads "
                  "head $i$."),
    Symbol("p", "a token's position counted from 0, as RoPE turns it: $p = t - 1$."),
)}


def kv_head_rule(n_heads: int, group_size: int) -> str:
    """Which key/value head each query head reads, with grouped-query attention (group_size > 1), in words (plain
    text): the rule j = ⌈i / g⌉ and what its brackets mean."""
    g, kv = group_size, n_heads // group_size
    def group(j: int) -> str:  # 1-based K/V head j and the query heads that read it
        return f"heads {(j - 1) * g + 1} to {j * g}" + (" read" if j == 1 else "") + f" K/V head {j}"
    shown = [group(j) for j in range(1, kv + 1)] if kv <= 3 else [group(1), group(2), "and so on"]
    which = ("every head reads K/V head 1" if kv == 1 else
             ", ".join(shown[:-1]) + (", " if kv > 3 else " and ") + shown[-1])
    return (f"Query head i reads key/value head j = ⌈i / {g}⌉: i / {g} rounded up to a whole number (⌈ ⌉ means round "
            f"up), so {which}.")


def head_symbols(group_size: int = 1) -> tuple[str, str]:
    """The symbols of each head's projection matrices and of what they make: K and V carry the key/value head's
    index j where query heads share them (group_size > 1), else the head's own i."""
    return (("W^Q_i, W^K_i, W^V_i", "Q_i, K_i, V_i") if group_size == 1 else
            ("W^Q_i, W^K_j, W^V_j", "Q_i, K_j, V_j"))


def kv_index(group_size: int = 1, head: int | None = None) -> str:
    """The index of the key/value head a query head reads: j where query heads share them (group_size > 1), else the
    head's own i; for one head (0-based `head`), its number, counted from 1."""
    if head is not None:
        return str(head // group_size + 1)
    return "j" if group_size > 1 else "i"


def score_product(group_size: int = 1, head: int | None = None, tex: bool = False) -> str:
    """The raw scores' product, as every text and label writes it: Q_i K_iᵀ, or Q_i K_jᵀ where query heads share
    key/value heads (group_size > 1); for one head (0-based `head`) with its numbers, Q_4 K_2ᵀ; tex: as KaTeX."""
    q, k = ("i" if head is None else str(head + 1)), kv_index(group_size, head)
    return rf"Q_{{{q}}} K_{{{k}}}^\top" if tex else f"Q_{q} K_{k}ᵀ"


def symbol(latex: str) -> Symbol:
    """The table's entry for a symbol, e.g. symbol("d_k")."""
    return SYMBOLS[latex]


# One name in a formula: \mathrm{head}_i, \alpha_{ts}, W^O_i, d_{model}, h (a command without a name of its own,
# \sqrt or \times, is read as a name too; none is in the table)
_NAME = re.compile(r"(?:\\mathrm\{[^}]*\}|\\[A-Za-z]+|[A-Za-z])(?:[_^](?:\{[^}]*\}|[A-Za-z0-9]))*")


def _atoms(key: str) -> tuple[str, ...]:
    """The names an entry defines: "Q_i, K_i, V_i" defines three."""
    return tuple(key.split(", "))


_OWNERS = Counter(atom for key in SYMBOLS for atom in _atoms(key))  # how many entries define each name


def _writes(atom: str, name: str) -> bool:
    """Whether `name` in a formula is `atom`, or an element or block of it (M_{ts} of M, W^O_i of W^O)."""
    matrix = atom[0].isupper() or atom.startswith("\\mathrm")
    return name == atom or matrix and "_" not in atom.split("^")[-1] and name.startswith(atom + "_")


def uses(entry: Symbol) -> tuple[str, ...]:
    """The table's symbols (keys of SYMBOLS) that `entry`'s meaning writes in its formulas, other than its own: an
    entry whose names are all its own (v_s of "q_t, k_s, v_s"), or one whose names are all written (Q_i, K_i and
    V_i, which "Q_i, K_j, V_j" shares in part)."""
    names = {n for maths in re.findall(r"\$([^$]*)\$", entry.meaning) for n in _NAME.findall(maths)}
    written = {key: [any(_writes(a, n) for n in names) for a in _atoms(key)] for key in SYMBOLS if key != entry.latex}
    return tuple(key for key, seen in written.items()
                 if all(seen) or any(s and _OWNERS[a] == 1 for a, s in zip(_atoms(key), seen, strict=True)))


def complete(entries: list[Symbol], variants: dict[str, Symbol] | None = None) -> list[Symbol]:
    """`entries`, then every symbol their meanings write that they leave out (and those symbols' own, and so on): a
    list of symbols defines every letter it uses. A symbol that shares a name with a listed one is the page's other
    variant ("Q_i, K_i, V_i" where "Q_i, K_j, V_j" is listed) and is left out. variants: the example's own entry for
    a symbol (z_ts with the scale used, score_symbol), wherever it is listed."""
    variants = variants or {}
    entries = [variants.get(e.latex, e) for e in entries]
    listed = {e.latex: e for e in entries}
    queue = list(entries)
    while queue:
        for key in uses(queue.pop(0)):
            if key not in listed and not set(_atoms(key)) & {a for k in listed for a in _atoms(k)}:
                listed[key] = variants.get(key, SYMBOLS[key])
                queue.append(listed[key])
    return list(listed.values())
