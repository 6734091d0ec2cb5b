"""One attention weight worked by hand: the cell's arithmetic beside the engine's own numbers."""

from __future__ import annotations

import streamlit as st

from mha_app.copy.by_hand import engine_check, fewer_decimals
from mha_app.state.example import Example
from mha_app.ui.charts import plot
from mha_app.ui.layout import table_height
from mha_core.figures import token_labels
from mha_core.figures.lesson import dot_product_figure
from mha_core.teaching.worked import DECIMALS, WorkedCell, fmt, latex_lines, same_to, work_cell


def scaled_latex(numerator: str, cfg) -> str:
    """numerator / sqrt(d_k) in LaTeX, or numerator x scale when the configuration sets another scale."""
    return rf"\frac{{{numerator}}}{{\sqrt{{{cfg.d_k}}}}}" if cfg.scale is None else rf"{numerator} \times {cfg.scale:g}"


def worked(ex: Example, head: int, query: int, key: int) -> WorkedCell:
    cfg = ex.cfg
    return work_cell(ex.trace, head, query, key, cfg.softmax_scale, default_scale=cfg.scale is None)


def show_worked(cell: WorkedCell, ex: Example, figure: bool = True) -> None:
    """The cell's arithmetic line by line, and the engine's own cell beside it; first the terms as a figure."""
    if figure:
        query_label, key_label = token_labels(ex.tokens)[cell.query], token_labels(ex.keys)[cell.key]
        plot(dot_product_figure(cell, query_label, key_label), key="dot_product")
    for line in latex_lines(cell):
        st.latex(line)
    sd, wd = cell.score_decimals, cell.weight_decimals
    same = same_to(cell.score, cell.engine_score, sd) and same_to(cell.weight, cell.engine_weight, wd)
    if same:
        st.success(engine_check(cell, same), icon=":material/check_circle:")
    else:
        st.error(engine_check(cell, same), icon=":material/error:")
    if min(sd, wd) < DECIMALS:
        st.caption(fewer_decimals(DECIMALS))


def row_table(cell: WorkedCell, tokens: list[str]) -> None:
    """Every key of the query's row (tokens: the keys'): its score, exponential and weight; the worked key marked."""
    st.dataframe({
        "key": list(range(1, len(tokens) + 1)), "token": tokens,
        "score z_ts": [fmt(s) for s in cell.scores],
        "e^(z_ts − max)": [fmt(e) for e in cell.exps],
        "attention weight α_ts": [fmt(w) for w in cell.weights],
        "note": ["◀ this cell" if j == cell.key else "blocked" if cell.blocked[j] else "" for j in range(len(tokens))],
    }, hide_index=True, height=table_height(len(tokens), cap=420))
