"""Shared test helpers: the repository root and an AppTest runner for the Streamlit app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_app(params: dict | None = None, page: str | None = None):
    """Run app.py in AppTest with these URL query parameters, optionally switching to a page file."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update(params or {})
    at.run()
    if page:
        at.switch_page(page).run()
    return at


def figures(at) -> list[dict]:
    """The plotly figure specs on the current page, in order."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def figure_titled(at, prefix: str) -> dict:
    matches = [f for f in figures(at) if f["layout"]["title"]["text"].startswith(prefix)]
    assert matches, f"no figure titled {prefix!r} in {[f['layout']['title']['text'] for f in figures(at)]}"
    return matches[0]


@pytest.fixture
def app():
    return run_app


def as_array(value):
    """A plotly JSON array (plain list or base64 typed array) as NumPy."""
    import base64

    import numpy as np

    if isinstance(value, dict) and "bdata" in value:
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            data = data.reshape([int(s) for s in str(shape).split(",")])
        return data
    return np.array(value, dtype=float)
