"""The formulas the pages show, as LaTeX strings built from what was computed.

A bias term appears exactly when the configuration has biases (cfg.bias, which forward checks against the weights),
the scale is the one used (1/sqrt(d_k) unless cfg.scale says otherwise), and the mask M is always defined.
"""

from __future__ import annotations

import numpy as np

from .config import MHAConfig


def _bias(cfg: MHAConfig, name: str, head: str = "_i") -> str:
    return rf" + b^{{{name}}}{head}" if cfg.bias else ""


def projection(cfg: MHAConfig) -> str:
    """Q_i = X W^Q_i (+ b^Q_i), and the same for K_i and V_i."""
    return r",\quad ".join(rf"{name}_i = X\,W^{{{name}}}_i{_bias(cfg, name)}" for name in "QKV")


def scaled_scores(cfg: MHAConfig) -> str:
    """Q_i K_i^T times the scale that was used: a fraction over sqrt(d_k) by default."""
    if cfg.scale is None:
        return rf"\frac{{Q_i K_i^\top}}{{\sqrt{{{cfg.d_k}}}}}"
    return rf"{cfg.scale:.4g}\; Q_i K_i^\top"


def attention(cfg: MHAConfig) -> str:
    """head_i = softmax(scaled scores + M) V_i."""
    return rf"\mathrm{{head}}_i = \mathrm{{softmax}}\!\left({scaled_scores(cfg)} + M\right) V_i"


def mask(blocked) -> str:
    """What M is: 0 where a query may look at a key, minus infinity where the pair is blocked.

    `blocked` is the trace's mask (True = blocked, or None) or a count of blocked pairs; when nothing is blocked,
    the formula says that M = 0.
    """
    definition = (r"M_{jk} = \begin{cases} 0 & \text{if query } j \text{ may look at key } k \\ -\infty & "
                  r"\text{if the pair is blocked} \end{cases}")
    if blocked is not None and np.any(blocked):
        return definition
    return definition + r"\qquad \text{nothing is blocked here, so } M = 0"


def output(cfg: MHAConfig) -> str:
    """output = Concat(head_1 ... head_h) W^O (+ b^O), and the same as a sum over the heads' blocks of W^O."""
    h, b = cfg.n_heads, _bias(cfg, "O", "")
    return (rf"\mathrm{{output}} = \mathrm{{Concat}}(\mathrm{{head}}_1,\dots,\mathrm{{head}}_{{{h}}})\,W^O{b}"
            rf" = \sum_{{i=1}}^{{{h}}} \mathrm{{head}}_i\, W^O_{{[i]}}{b}")


def multihead(cfg: MHAConfig) -> str:
    """The whole layer in one line: MultiHead(X) = Concat(head_1 ... head_h) W^O (+ b^O), with head_i."""
    return (rf"\mathrm{{MultiHead}}(X) = \mathrm{{Concat}}(\mathrm{{head}}_1, \dots, \mathrm{{head}}_{{{cfg.n_heads}}})"
            rf"\,W^O{_bias(cfg, 'O', '')},\quad {attention(cfg)}")
