"""Exports: the .npz trace, the .json settings, and the PyTorch script that must print the same output."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest
import torch

from mha_app.state.example import build_example
from mha_app.state.settings import Spec
from mha_app.state.snippets import settings_json, torch_script
from mha_core.analysis.export import trace_npz

CASES = [
    Spec(input="sentence", text="The cat sat on the mat.", n=8, d_model=64, h=8, seed=0, pe=True, causal=False, pad=0),
    Spec(input="sentence", text="Attention is all you need, they said.", n=8, d_model=48, h=6, seed=3, pe=False,
         causal=True, pad=2),
    Spec(input="random", text="", n=7, d_model=32, h=4, seed=11, pe=True, causal=True, pad=1),
    Spec(input="tiny", text="", n=8, d_model=64, h=8, seed=0, pe=True, causal=False, pad=1),
]


# The experiments on heads: nn.MultiheadAttention does cross-attention; the rest needs attention written per head.
EXPERIMENTS = [
    Spec(input="pair", text="The cat sat on the mat.", text_q="Le chat s'est assis.", d_model=32, h=4, pad=1),
    Spec(input="random", n=6, d_model=48, h=6, kv_heads=2, seed=5),
    Spec(input="sentence", text="Heads can be switched off.", d_model=32, h=4, ablate=(1, 3), causal=True),
    Spec(input="random", n=5, d_model=32, h=4, scale="none", pad=2),
    Spec(input="sentence", d_model=64, h=8, plant="previous", plant_head=3, strength=4.0),
    Spec(input="tiny", scale="none", plant="self", plant_head=2, strength=2.5, ablate=(1,), causal=True),
    Spec(input="pair", d_model=64, h=8, kv_heads=4, ablate=(2,), scale="none", plant="first", plant_head=8,
         strength=12.5, pad=2),
]
PER_HEAD = [False, True, True, True, False, True, True]


def run_script(script: str) -> dict:
    namespace: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(script, "<snippet>", "exec"), namespace)
    assert "output (n, d_model)" in printed.getvalue()
    return namespace


@pytest.mark.parametrize("case", CASES, ids=["sentence", "causal+pad", "random", "tiny"])
def test_pytorch_script_reproduces_the_output(case):
    ex = build_example(case)
    namespace = run_script(torch_script(case))
    assert isinstance(namespace["mha"], torch.nn.MultiheadAttention)
    np.testing.assert_allclose(namespace["output"][0].detach().numpy(), ex.trace.output, atol=1e-5)


@pytest.mark.parametrize("case, per_head", list(zip(EXPERIMENTS, PER_HEAD, strict=True)),
                         ids=["pair", "gqa", "ablate+causal", "scale-none+pad", "plant", "tiny-everything",
                              "pair-everything"])
def test_pytorch_script_reproduces_the_experiments(case, per_head):
    ex = build_example(case)
    script = torch_script(case)
    namespace = run_script(script)
    assert ("mha" not in namespace) == per_head
    assert ("F.scaled_dot_product_attention(" in script) == per_head
    np.testing.assert_allclose(namespace["output"][0].detach().numpy(), ex.trace.output, atol=1e-5)


@pytest.mark.parametrize("layer, ablate", [(1, ()), (3, (2, 5)), (6, tuple(range(1, 13)))])
def test_pytorch_script_reproduces_the_trained_model_with_heads_off(layer, ablate):
    from mha_core.pretrained import load_minilm

    spec = Spec(model="all-MiniLM-L6-v2", text="Heads can be switched off.", ablate=ablate)
    ex = build_example(spec, load_minilm(), layer=layer)
    namespace = run_script(torch_script(spec, layer))
    np.testing.assert_allclose(namespace["output"][0].detach().numpy(), ex.trace.output, atol=1e-5)


def test_trace_npz_holds_every_intermediate():
    ex = build_example(CASES[1])
    data = np.load(io.BytesIO(trace_npz(ex.trace, ex.tokens)))
    for name, array in ex.trace.arrays().items():
        np.testing.assert_array_equal(data["scaled_scores" if name == "scores" else name], array)
    assert list(data["tokens"]) == ex.tokens
    assert {"q", "k", "v", "raw_scores", "scaled_scores", "masked_scores", "weights", "heads", "concat",
            "output", "mask", "x"} <= set(data.files)


@pytest.mark.parametrize("case", CASES[:3], ids=["sentence", "causal+pad", "random"])
def test_trace_npz_names_say_which_scores_are_scaled(case):
    """`scores` held Q_i K_i^T already times 1/sqrt(d_k), while the page's raw scores were not scaled: the export
    now says which is which."""
    ex = build_example(case)
    data = np.load(io.BytesIO(trace_npz(ex.trace, ex.tokens)))
    assert "scores" not in data.files
    q, k = data["q"].astype(np.float64), data["k"].astype(np.float64)
    raw = np.einsum("hnd,hmd->hnm", q, k)  # Q_i K_i^T, head by head
    np.testing.assert_allclose(data["raw_scores"], raw, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(data["scaled_scores"], raw / np.sqrt(ex.cfg.d_k), rtol=1e-5, atol=1e-5)
    blocked = data["mask"] if "mask" in data.files and data["mask"].ndim else np.zeros(raw.shape, bool)
    np.testing.assert_array_equal(np.isneginf(data["masked_scores"]), blocked)


def test_settings_json_round_trips():
    payload = json.loads(settings_json({"h": 4, "text": "naïve"}, "http://host/?h=4"))
    assert payload == {"settings": {"h": 4, "text": "naïve"}, "url": "http://host/?h=4"}


def test_pytorch_script_says_why_it_asks_for_every_head():
    script = torch_script(CASES[0])
    call = script.index("average_attn_weights=False")
    assert "averages the weights over the heads" in script[:call] and "(N, L, S)" in script[:call]
    # ... and what the comment says holds: by default the weights come back averaged over the heads.
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    x = torch.randn(1, 5, 16)
    _, averaged = mha(x, x, x)
    _, per_head = mha(x, x, x, average_attn_weights=False)
    assert averaged.shape == (1, 5, 5) and per_head.shape == (1, 4, 5, 5)
    torch.testing.assert_close(per_head.mean(dim=1), averaged)
