"""Exports: the .npz trace, the .json settings, and the PyTorch script that must print the same output."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest
import torch

from mha_core.example import build_example
from mha_core.export import example_snippet, settings_json, trace_npz

CASES = [
    ("sentence", "The cat sat on the mat.", 8, 64, 8, 0, True, False, 0),
    ("sentence", "Attention is all you need, they said.", 8, 48, 6, 3, False, True, 2),
    ("random", "", 7, 32, 4, 11, True, True, 1),
    ("tiny", "", 8, 64, 8, 0, True, False, 1),
]


@pytest.mark.parametrize("case", CASES, ids=["sentence", "causal+pad", "random", "tiny"])
def test_pytorch_script_reproduces_the_output(case):
    ex = build_example(*case, backend="numpy")
    script = example_snippet(*case)
    namespace: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(script, "<snippet>", "exec"), namespace)
    assert "output (n, d_model)" in printed.getvalue()
    assert isinstance(namespace["mha"], torch.nn.MultiheadAttention)
    np.testing.assert_allclose(namespace["output"][0].detach().numpy(), ex.trace.output, atol=1e-5)


def test_trace_npz_holds_every_intermediate():
    ex = build_example(*CASES[1], backend="numpy")
    data = np.load(io.BytesIO(trace_npz(ex.trace, ex.tokens)))
    for name, array in ex.trace.arrays().items():
        np.testing.assert_array_equal(data[name], array)
    assert list(data["tokens"]) == ex.tokens
    assert {"q", "k", "v", "scores", "masked_scores", "weights", "heads", "concat", "output"} <= set(data.files)


def test_settings_json_round_trips():
    payload = json.loads(settings_json({"h": 4, "text": "naïve"}, "http://host/?h=4"))
    assert payload == {"settings": {"h": 4, "text": "naïve"}, "url": "http://host/?h=4"}
