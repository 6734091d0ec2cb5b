"""Figures in a notebook: every figure dict of mha_core.figures is a `Figure`, a plain dict to json and plotly that
a notebook draws as a chart."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import plotly.io as pio
import pytest
from plotly.utils import PlotlyJSONEncoder

import mha_core as mc
from figure_catalogue import catalogue
from mha_core import figures
from mha_core.figures.theme import plotly_json

PLOTLY_JSON = "application/vnd.plotly.v1+json"


@pytest.fixture(scope="module")
def fig():
    cfg = mc.MHAConfig(d_model=16, n_heads=4)
    tokens = mc.tokenize("The cat sat on the mat.")
    trace = mc.forward(mc.embed(tokens, cfg.d_model, seed=0), mc.init_weights(cfg, seed=0), cfg)
    return figures.head_grid_figure(trace, tokens)


def test_every_figure_dict_is_a_figure():
    plain = [name for name, f in catalogue().items() if isinstance(f, dict) and not isinstance(f, figures.Figure)]
    assert plain == []


def test_a_figure_is_the_same_dict_as_before(fig):
    assert isinstance(fig, dict) and type(fig) is figures.Figure
    same = {"data": fig["data"], "layout": fig["layout"]}
    assert fig == same and set(fig) == {"data", "layout"}
    assert json.dumps(fig, cls=PlotlyJSONEncoder) == json.dumps(same, cls=PlotlyJSONEncoder)
    assert type(plotly_json(fig)) is dict  # the JSON the app hands Streamlit is a plain dict


def test_plotly_takes_a_figure_as_it_takes_a_dict(fig):
    built = go.Figure(fig)
    assert [t.type for t in built.data] == [t["type"] for t in fig["data"]]
    assert isinstance(fig.to_plotly(), go.Figure)
    assert "plotly" in pio.to_html(fig, include_plotlyjs=False, full_html=False)


def test_a_notebook_cell_ending_in_a_figure_shows_the_chart(fig, monkeypatch):
    monkeypatch.setattr(pio.renderers, "default", "plotly_mimetype")  # plotly's choice inside a Jupyter kernel
    bundle = fig._repr_mimebundle_()
    assert PLOTLY_JSON in bundle
    assert len(bundle[PLOTLY_JSON]["data"]) == len(fig["data"])


def test_a_themed_figure_is_a_figure_too(fig):
    dark = figures.themed(fig, "dark")
    assert type(dark) is figures.Figure
    assert go.Figure(dark).layout.paper_bgcolor == figures.DARK.background
