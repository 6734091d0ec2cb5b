"""The app's example (mha_app.state.example.build_example) is the one its pages and its "Reproduce in PyTorch" script
describe: mc.embed or mc.random_input and mc.init_weights with the link's seed, then attention computed by torch
alone (references.sdpa_attention), for each kind of input and each experiment on heads; with a trained model, the
model's own run at the layer on view, checked against transformers with the same heads switched off.

The pages then only draw the example (app/test_every_page.py checks that each main figure shows its trace).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import mha_core as mc
from mha_app.state.example import build_example
from mha_app.state.settings import Settings
from references import sdpa_attention, zero_heads_hook

CAT = "The cat sat on the mat because it was tired."
FRENCH = "Le chat s'est assis sur le tapis."
CASES = {
    "sentence": {},
    "sentence, no positions, seed 5": {"pe": False, "seed": 5, "d_model": 48, "h": 6},
    "random input": {"input": "random", "n": 5, "d_model": 32, "h": 4, "seed": 2},
    "causal, padded": {"input": "random", "n": 6, "causal": True, "pad": 2},
    "heads 2 and 4 off": {"input": "random", "n": 5, "d_model": 32, "h": 4, "seed": 2, "ablate": (2, 4)},
    "no scaling": {"input": "random", "n": 6, "d_model": 64, "h": 4, "seed": 1, "scale": "none"},
    "grouped K/V": {"input": "random", "n": 6, "d_model": 48, "h": 6, "kv_heads": 2, "seed": 3},
    "cross-attention, padded": {"input": "pair", "text": FRENCH, "text_q": CAT, "d_model": 32, "h": 4, "pad": 2},
    "PyTorch backend": {"backend": "torch", "kv_heads": 4},
}


def documented(spec):
    """(cfg, x, keys and values, weights, keep (n, m), head factors) built as the Reproduce script builds them."""
    cfg = mc.MHAConfig(spec.d_model, spec.h, n_kv_heads=spec.kv_heads or None,
                       causal=spec.causal and spec.input != "pair", scale=1.0 if spec.scale == "none" else None)
    if spec.input == "random":
        x = mc.random_input(spec.n, spec.d_model, seed=spec.seed)
    else:
        queries = spec.text_q if spec.input == "pair" else spec.text  # in cross-attention: the sentence being written
        x = mc.embed(mc.tokenize(queries), spec.d_model, seed=spec.seed, positional=spec.pe)
    y = mc.embed(mc.tokenize(spec.text), spec.d_model, seed=spec.seed, positional=spec.pe) \
        if spec.input == "pair" else x  # the source sentence: keys and values
    keep = np.ones((len(x), len(y)), bool)
    if spec.pad:
        keep[:, -spec.pad:] = False  # the last `pad` keys are padding
    factors = [0.0 if i + 1 in spec.ablate else 1.0 for i in range(spec.h)]
    return cfg, x, y, mc.init_weights(cfg, seed=spec.seed), keep, factors


@pytest.mark.parametrize("case", CASES)
def test_the_example_is_the_documented_one_computed_by_torch(case):
    spec = Settings.of(**CASES[case]).spec
    example = build_example(spec)
    cfg, x, y, w, keep, factors = documented(spec)
    ref = sdpa_attention(w, cfg, x, y, keep=keep, factors=factors, dtype=np.float64)
    np.testing.assert_allclose(example.trace.x, x, rtol=0, atol=0)
    np.testing.assert_allclose(example.trace.weights, ref.weights, atol=1e-5)
    np.testing.assert_allclose(example.trace.heads, ref.heads, atol=1e-5)
    np.testing.assert_allclose(example.trace.output, ref.output, atol=1e-5)
    assert example.trace.backend == CASES[case].get("backend", "numpy")


def test_a_trained_models_example_is_its_layer_with_those_heads_off_as_transformers_computes_it(minilm, bert):
    spec = Settings.of(model="all-MiniLM-L6-v2", text=CAT, ablate=(2, 5)).spec
    example = build_example(spec, minilm, layer=3)
    assert example.layer == 3 and example.trace is example.run.layers[2]
    assert example.weights is minilm.layer_weights[2].attention
    handle = zero_heads_hook(bert.net.encoder.layer[2], [1, 4], 32)
    try:
        with torch.no_grad():
            out = bert.net(**bert.tokenizer(CAT, return_tensors="pt"), output_hidden_states=True)
    finally:
        handle.remove()
    for l in range(7):  # every hidden state: so the heads were switched off in layer 3, not in another
        np.testing.assert_allclose(example.run.hidden_states[l], out.hidden_states[l][0].numpy(), atol=1e-5)
    np.testing.assert_array_equal(example.trace.head_mask, [1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1])
