"""The formulas the pages show, as LaTeX strings built from what was computed.

A bias term appears exactly when the configuration has biases (cfg.bias, which forward checks against the weights),
the scale is the one used (1/sqrt(d_k) unless cfg.scale says otherwise; none at all for scale 1), with grouped-query
attention each query head names the key/value head it reads, and the mask M is always defined.
"""

from __future__ import annotations

import numpy as np

from ..attention.config import MHAConfig


def _bias(cfg: MHAConfig, name: str, head: str = "_i") -> str:
    return rf" + b^{{{name}}}{head}" if cfg.bias else ""


def projection(cfg: MHAConfig, cross: bool = False) -> str:
    """Q_i = X W^Q_i (+ b^Q_i), and the same for K and V: from Y in cross-attention, per key/value head j with
    grouped-query attention, and with rotary positions Q_i = RoPE(X W^Q_i), K_j = RoPE(X W^K_j)."""
    j = "_j" if cfg.group_size > 1 else "_i"
    source = {"Q": ("X", "_i"), "K": ("Y" if cross else "X", j), "V": ("Y" if cross else "X", j)}

    def term(name: str, x: str, head: str) -> str:
        product = rf"{x}\,W^{{{name}}}{head}{_bias(cfg, name, head)}"
        return rf"\mathrm{{RoPE}}({product})" if cfg.rope_theta is not None and name != "V" else product

    return r",\quad ".join(rf"{name}{head} = {term(name, x, head)}" for name, (x, head) in source.items())


def rope(cfg: MHAConfig) -> str:
    """What RoPE does to the vector x of the token at position p (0 for the first): it turns each pair of dimensions
    (a, a + d_k/2) by the angle p θ_a. Components and pairs are counted from 1, as the figures label them (c1 …)."""
    half = cfg.d_k // 2
    return (r"\mathrm{RoPE}(x, p):\; \begin{pmatrix} x_a \\ x_{a+%d} \end{pmatrix} \mapsto "
            r"\begin{pmatrix} \cos p\theta_a & -\sin p\theta_a \\ \sin p\theta_a & \cos p\theta_a \end{pmatrix}"
            r"\begin{pmatrix} x_a \\ x_{a+%d} \end{pmatrix},\qquad \theta_a = %s^{-2(a-1)/%d},\; a = 1, \dots, %d"
            % (half, half, f"{cfg.rope_theta:,.0f}".replace(",", "{,}"), cfg.d_k, half))


def rope_product() -> str:
    """The product of a rotated query at position p and a rotated key at position p': only p' − p is left."""
    return (r"\mathrm{RoPE}(q, p)^\top\, \mathrm{RoPE}(k, p') = q^\top R_{p}^\top R_{p'}\, k "
            r"= q^\top R_{p' - p}\, k")


def kv_head(cfg: MHAConfig, name: str) -> str:
    """K_i or V_i; with grouped-query attention, the key/value head that query head i reads: K_ceil(i/g)."""
    return rf"{name}_{{\lceil i/{cfg.group_size} \rceil}}" if cfg.group_size > 1 else f"{name}_i"


def raw_scores(cfg: MHAConfig) -> str:
    return rf"Q_i {kv_head(cfg, 'K')}^\top"


def scaled_scores(cfg: MHAConfig) -> str:
    """Q_i K_i^T times the scale that was used: a fraction over sqrt(d_k) by default, nothing for scale 1."""
    if cfg.scale is None:
        return rf"\frac{{{raw_scores(cfg)}}}{{\sqrt{{{cfg.d_k}}}}}"
    if cfg.scale == 1:
        return raw_scores(cfg)
    return rf"{cfg.scale:.4g}\; {raw_scores(cfg)}"


def attention(cfg: MHAConfig) -> str:
    """head_i = softmax(scaled scores + M) V_i."""
    return rf"\mathrm{{head}}_i = \mathrm{{softmax}}\!\left({scaled_scores(cfg)} + M\right) {kv_head(cfg, 'V')}"


def mask(blocked) -> str:
    """What M is: 0 where a query may look at a key, minus infinity where the pair is blocked.

    `blocked` is the trace's mask (True = blocked, or None) or a count of blocked pairs; when nothing is blocked,
    the formula says that M = 0.
    """
    definition = (r"M_{ts} = \begin{cases} 0 & \text{if query } t \text{ may look at key } s \\ -\infty & "
                  r"\text{if the pair is blocked} \end{cases}")
    if blocked is not None and np.any(blocked):
        return definition
    return definition + r"\qquad \text{nothing is blocked here, so } M = 0"


def _off(head_mask: np.ndarray | None) -> list[int]:
    """The switched-off heads (1-based) of a head mask (0 = off), or none."""
    return [] if head_mask is None else [i + 1 for i in np.flatnonzero(np.asarray(head_mask) == 0)]


def _concat(h: int, off: list[int]) -> str:
    """Concat(head_1, ..., head_h), each switched-off head written as 0 · head_i (three or more kept heads in a row
    as head_a, ..., head_b)."""
    if not off:
        return rf"\mathrm{{Concat}}(\mathrm{{head}}_1, \dots, \mathrm{{head}}_{{{h}}})"
    terms, i = [], 1
    while i <= h:
        if i in off:
            terms.append(rf"0 \cdot \mathrm{{head}}_{{{i}}}")
            i += 1
            continue
        last = i
        while last + 1 <= h and last + 1 not in off:
            last += 1
        run = [rf"\mathrm{{head}}_{{{k}}}" for k in range(i, last + 1)]
        terms += run if len(run) < 3 else [run[0], r"\dots", run[-1]]
        i = last + 1
    return r"\mathrm{Concat}(" + ", ".join(terms) + ")"


def output(cfg: MHAConfig, head_mask: np.ndarray | None = None) -> str:
    """output = Concat(head_1 ... head_h) W^O (+ b^O), and the same as a sum over the heads' blocks of W^O; a head
    switched off by head_mask (0) is written 0 · head_i, and left out of the sum."""
    h, b, off = cfg.n_heads, _bias(cfg, "O", ""), _off(head_mask)
    if not off:
        return (rf"\mathrm{{output}} = {_concat(h, off)}\,W^O{b} = \sum_{{i=1}}^{{{h}}} \mathrm{{head}}_i\, W^O_i{b}")
    # two lines: with each switched-off head written out, one line is wider than a page's column
    return (rf"\begin{{gathered}}\mathrm{{output}} = {_concat(h, off)}\,W^O{b} \\ "
            rf"= \sum_{{i \neq {', '.join(map(str, off))}}} \mathrm{{head}}_i\, W^O_i{b}\end{{gathered}}")


def multihead_output(cfg: MHAConfig, cross: bool = False, head_mask: np.ndarray | None = None) -> str:
    """MultiHead(X) = Concat(head_1 ... head_h) W^O, plus b^O when the layer has biases; a head switched off by
    head_mask (0) is written 0 · head_i."""
    inputs = "X, Y" if cross else "X"
    return rf"\mathrm{{MultiHead}}({inputs}) = {_concat(cfg.n_heads, _off(head_mask))}\,W^O{_bias(cfg, 'O', '')}"


def multihead(cfg: MHAConfig, cross: bool = False, head_mask: np.ndarray | None = None) -> str:
    """The whole layer in one line: MultiHead(X) = Concat(head_1 ... head_h) W^O (+ b^O), with head_i."""
    return rf"\begin{{gathered}}{multihead_output(cfg, cross, head_mask)},\\ {attention(cfg)}\end{{gathered}}"
