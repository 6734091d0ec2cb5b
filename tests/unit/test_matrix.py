"""What the browser is sent to draw a heatmap as SVG (mha_app.components.matrix.matrix_data): the figure's own cells,
labels and titles, as JSON without NaN, in the colours of the theme asked for; user text as typed."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mha_core as mc
from mha_app.components.matrix import matrix_data
from mha_core.figures import PALETTES, heatmap, themed, value_mix_figure


def mix(n: int, tokens: list[str] | None = None) -> dict:
    cfg = mc.MHAConfig(16, 2)
    trace = mc.forward(mc.random_input(n, 16, seed=1), mc.init_weights(cfg, seed=2), cfg)
    return value_mix_figure(trace, 1, 0, tokens or [f"t{i}" for i in range(n)])


def test_cells_are_the_figures_and_a_blank_cell_is_null():
    z = np.array([[0.1, np.nan], [-2.5, 1 / 3]])
    data = matrix_data(heatmap(z, ["a", "b"], ["r1", "r2"], "T", blocked=True), "light", "m")
    json.dumps(data, allow_nan=False)  # NaN is not JSON
    assert data["z"] == [[0.1, None], [-2.5, 1 / 3]]
    assert data["bar"] == ["value", "blank:", "blocked"] and data["text"][0][1] == ""


def test_labels_and_titles_stay_as_typed():
    tokens = ["<b>x</b>", "&amp;", "a"]
    data = matrix_data(mix(3, tokens), "light", "mix")
    assert [label.split(" ", 2)[2] for label in data["y"][:-1]] == ["1 <b>x</b>", "2 &amp;", "3 a"]
    assert data["title"] == ["Head 2, query '<b>x</b>' (1): weight α_ts × value v_s for each key s, and their sum"]
    assert data["hover"].endswith("<extra></extra>") and "%{z:.6g}" in data["hover"]


def test_a_long_title_comes_as_its_lines():
    assert len(matrix_data(mix(30), "light", "mix")["title"]) == 2  # past MIX_KEYS keys: a row for the others


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_each_number_comes_with_the_ink_the_themed_figure_gives_it(theme):
    fig = mix(4)
    data = matrix_data(fig, theme, "mix")
    spans = themed(fig, theme)["data"][0]["text"]
    assert data["colours"]["background"] == PALETTES[theme].background
    assert [c for _, c in data["scale"]] == list(PALETTES[theme].diverging)
    for numbers, inks, row in zip(data["text"], data["ink"], spans, strict=True):
        assert [f'<span style="color:{ink}">{n}</span>' for n, ink in zip(numbers, inks, strict=True)] == row
    assert len({ink for row in data["ink"] for ink in row}) == 2  # black on the pale cells, white on the deep ones
