"""What an AppTest run puts on screen, read the way a student sees it: messages, and every number a figure shows."""

from __future__ import annotations

import json
import re

import numpy as np

from conftest import as_array

NOT_A_NUMBER = re.compile(r"(?<![\w`])(nan|-?inf|-?infinity)(?![\w`])", re.IGNORECASE)
NUMERIC_KEYS = ("x", "y", "z", "values", "customdata")


def messages(at, kind: str) -> list[str]:
    """The text of every element of one kind (warning, info, error, caption, ...) on the page and in the sidebar."""
    return [element.value for element in getattr(at, kind)]


def figure_specs(at) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def _numbers(value) -> np.ndarray | None:
    """A figure's data array as floats, or None when it holds labels (text)."""
    if isinstance(value, dict) and "bdata" in value:
        return as_array(value).astype(np.float64)
    flat = np.array(value, dtype=object).ravel() if isinstance(value, list) else np.array([value], dtype=object)
    if flat.size and all(v is None or isinstance(v, (int, float)) and not isinstance(v, bool) for v in flat):
        return np.array([np.nan if v is None else v for v in flat], dtype=np.float64)
    return None


def _strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict) and "bdata" not in node:  # a typed array: base64 numbers, checked as numbers
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def non_finite_in_figure(spec: dict, typed: set[str] = frozenset()) -> list[str]:
    """NaN or infinity a student could read in one plotly figure (as JSON): infinite numbers, NaN where a hover
    label would print it (customdata), and the words in titles, labels and cell texts. A NaN in x, y or z is drawn
    as nothing (a gap: a left-out bar, a blank heatmap cell). `typed`: words the user typed."""
    found = []
    title = spec["layout"].get("title", {}).get("text", "")
    for trace in spec["data"]:
        for key in NUMERIC_KEYS:
            numbers = _numbers(trace[key]) if key in trace else None
            if numbers is not None and (np.isinf(numbers).any() or key == "customdata" and np.isnan(numbers).any()):
                found.append(f"{title!r}: {key} is not finite")
    for text in _strings({k: v for k, v in spec.items() if k != "config"}):
        for word in NOT_A_NUMBER.findall(text):
            if word.lower().lstrip("-") not in typed:
                found.append(f"{title!r}: {text[:80]!r}")
    return found


def non_finite_on_screen(at, user_text: str = "") -> list[str]:
    """Every NaN or infinity a student could read on the page: in its figures, text and metrics.

    Words the user typed (user_text) are not counted: "nan" may be a token.
    """
    typed = {w.lower() for w in re.findall(r"\w+", user_text)}
    found = [problem for spec in figure_specs(at) for problem in non_finite_in_figure(spec, typed)]
    for kind in ("title", "header", "subheader", "markdown", "caption", "latex", "info", "success"):
        for text in messages(at, kind):
            for word in NOT_A_NUMBER.findall(text):
                if word.lower().lstrip("-") not in typed:
                    found.append(f"{kind}: {text[:80]!r}")
    for metric in at.metric:
        if NOT_A_NUMBER.search(f"{metric.value} {metric.proto.delta}"):
            found.append(f"metric {metric.label}: {metric.value} {metric.proto.delta}")
    return found
