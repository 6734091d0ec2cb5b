"""What the heads cost for this example: multiply-adds of each step, one head against h."""

from __future__ import annotations

from mha_app.copy.cost import step_names
from mha_app.state.example import Example
from mha_app.ui.charts import plot
from mha_core import cost
from mha_core.figures.lesson import flops_figure


def step_costs(ex: Example) -> tuple[dict[str, int], dict[str, int], dict[str, int], dict[str, int] | None]:
    """(sizes, multiply-adds with one head of d_model, with the example's heads each with its own K/V head, and with
    them sharing the example's K/V heads, None without sharing), from the engine's arrays. The question asks about
    splitting alone (questions.heads_cost), so `many` is counted without the sharing."""
    s = cost.trace_sizes(ex.trace)
    one = cost.attention_flops(s["n"], s["m"], s["d_model"], 1)
    many = cost.attention_flops(s["n"], s["m"], s["d_model"], s["n_heads"])
    shared = (cost.attention_flops(s["n"], s["m"], s["d_model"], s["n_heads"], s["n_kv_heads"])
              if s["n_kv_heads"] < s["n_heads"] else None)
    return s, one, many, shared


def plot_step_costs(ex: Example, enlarge=None) -> None:
    s, one, many, shared = step_costs(ex)
    names = step_names(ex.key_tokens is not None, s["n_heads"] // s["n_kv_heads"])
    fig = flops_figure(one, many, s["d_model"], s["n_heads"], names, shared, s["n_kv_heads"])
    plot(enlarge(fig) if enlarge else fig, key="flops")
