"""Switched-off heads (head_mask) against independent references.

One layer: per-head outputs from torch's F.scaled_dot_product_attention on Q, K, V projected by F.linear, the chosen
heads multiplied by their factor, then out_proj (F.linear with W_O): references.sdpa_attention. The trained model:
transformers' BertModel with a forward hook that zeroes the chosen heads' slice of the attention context before
its output dense layer (W_O), and sentence-transformers' own sentence vector with the same hook.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import mha_core as mc
from mha_core.analysis.decompose import head_contributions
from mha_core.experiments import ablation
from references import biased_weights, max_abs, sdpa_attention, zero_heads_hook

BACKENDS = ["numpy", "torch"]
TOL = {np.float32: 2e-5, np.float64: 1e-10}
D_MODEL = 48
CAT = "The cat sat on the mat because it was tired."
RUG = "A tired cat was lying on the rug."


# --- one layer ------------------------------------------------------------------------------------------------

CASES = [  # h, n_kv_heads, bias, causal, n, m (None = self-attention), switched-off heads
    (8, None, True, False, 7, None, [1, 4]),
    (8, None, False, True, 7, None, [0]),
    (6, 2, True, False, 5, 9, [2, 3, 5]),
    (4, 1, True, True, 6, None, [0, 1, 2, 3]),
    (12, 4, True, False, 3, 11, [11]),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", CASES, ids=[f"h{c[0]}-kv{c[1]}-off{len(c[6])}" for c in CASES])
def test_switched_off_heads_match_torch(case, dtype, backend):
    h, n_kv, bias, causal, n, m, off = case
    cfg = mc.MHAConfig(D_MODEL, h, n_kv_heads=n_kv, bias=bias, causal=causal)
    w = biased_weights(cfg, dtype, seed=h)
    rng = np.random.default_rng(h)
    x = rng.standard_normal((n, D_MODEL)).astype(dtype)
    kv = None if m is None else rng.standard_normal((m, D_MODEL)).astype(dtype)
    factors = np.ones(h)
    factors[off] = 0.0
    trace = mc.forward(x, w, cfg, kv=kv, head_mask=factors, backend=backend)
    ref = sdpa_attention(w, cfg, x, kv, factors=factors)  # cfg.causal: the causal triangle
    ref_heads, ref_out = ref.heads, ref.output
    tol = TOL[dtype]
    assert max_abs(trace.output, ref_out) <= tol
    assert max_abs(trace.heads, ref_heads) <= tol, "the trace keeps every head's output before the mask"
    d_k = cfg.d_k
    for i in range(h):
        block = trace.concat[:, i * d_k:(i + 1) * d_k]
        if i in off:
            assert (block == 0).all(), f"head {i} is off: W_O sees zeros"
        else:
            assert max_abs(block, ref_heads[i]) <= tol
    np.testing.assert_array_equal(trace.head_mask, factors.astype(dtype))
    assert trace.head_mask.dtype == dtype
    # The head contributions are what W_O saw: a switched-off head adds nothing, and all of them add up.
    contributions = head_contributions(trace, w)
    assert (contributions[off] == 0).all()
    bias_O = 0 if w.b_O is None else w.b_O
    assert max_abs(contributions.sum(axis=0) + bias_O, trace.output) <= tol * 10


@pytest.mark.parametrize("backend", BACKENDS)
def test_gates_between_0_and_1_scale_each_head(backend):
    """Michel et al.'s gates: any factor, not only 0 and 1."""
    cfg = mc.MHAConfig(D_MODEL, 4)
    w = biased_weights(cfg, np.float64, seed=3)
    x = np.random.default_rng(3).standard_normal((5, D_MODEL))
    factors = np.array([0.25, 1.0, 0.0, 0.5])
    trace = mc.forward(x, w, cfg, head_mask=factors, backend=backend)
    ref_out = sdpa_attention(w, cfg, x, factors=factors).output
    assert max_abs(trace.output, ref_out) <= 1e-10


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_mask_and_all_ones_agree(backend):
    cfg = mc.MHAConfig(D_MODEL, 8)
    w = biased_weights(cfg, np.float32, seed=1)
    x = np.random.default_rng(1).standard_normal((6, D_MODEL)).astype(np.float32)
    plain = mc.forward(x, w, cfg, backend=backend)
    ones = mc.forward(x, w, cfg, head_mask=np.ones(8), backend=backend)
    assert plain.head_mask is None
    np.testing.assert_array_equal(plain.output, ones.output)
    np.testing.assert_array_equal(plain.concat, ones.concat)


def test_every_head_off_leaves_the_bias():
    cfg = mc.MHAConfig(D_MODEL, 4)
    w = biased_weights(cfg, np.float64, seed=2)
    x = np.random.default_rng(2).standard_normal((3, D_MODEL))
    trace = mc.forward(x, w, cfg, head_mask=np.zeros(4))
    np.testing.assert_array_equal(trace.output, np.broadcast_to(w.b_O, (3, D_MODEL)))


@pytest.mark.parametrize("bad, words", [
    (np.ones(3), "one number per head"),
    (np.ones((2, 4)), "one number per head"),
    (np.array([True, False, True, True]), "give numbers"),
    (np.array([1.0, np.nan, 1.0, 1.0]), "finite"),
    (np.array([1.0, np.inf, 1.0, 1.0]), "finite"),
    (np.array(["a", "b", "c", "d"]), "real numbers"),
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_head_masks_are_refused_in_words(bad, words, backend):
    cfg = mc.MHAConfig(16, 4)
    with pytest.raises(mc.ConfigError, match=words):
        mc.forward(np.zeros((2, 16)), mc.init_weights(cfg), cfg, head_mask=bad, backend=backend)


# --- what ablation.py reports ----------------------------------------------------------------------------------

def test_output_change_and_removal_effects_against_torch():
    cfg = mc.MHAConfig(D_MODEL, 6)
    w = biased_weights(cfg, np.float64, seed=4)
    x = np.random.default_rng(4).standard_normal((7, D_MODEL))
    factors = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    change = ablation.output_change(mc.forward(x, w, cfg, head_mask=factors), w)
    full = sdpa_attention(w, cfg, x).output
    off = sdpa_attention(w, cfg, x, factors=factors).output
    assert max_abs(change.full, full) <= 1e-10
    np.testing.assert_allclose(change.distance, np.linalg.norm(off - full, axis=1), atol=1e-10)
    cosine = (off * full).sum(1) / np.linalg.norm(off, axis=1) / np.linalg.norm(full, axis=1)
    np.testing.assert_allclose(change.cosine, cosine, atol=1e-12)
    effects = ablation.removal_effects(mc.forward(x, w, cfg), w)
    for i in range(6):
        alone = np.ones(6)
        alone[i] = 0.0
        out = sdpa_attention(w, cfg, x, factors=alone).output
        assert abs(effects[i] - np.linalg.norm(out - full, axis=1).mean()) <= 1e-10, i


def test_cosine_of_a_zero_vector_is_left_undefined():
    np.testing.assert_array_equal(ablation.cosine_rows(np.zeros((1, 3)), np.ones((1, 3))), [np.nan])


# --- the trained model ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def model(minilm):
    return minilm


@pytest.mark.parametrize("layer, heads", [(0, [0]), (2, [1, 4]), (5, list(range(12)))])
@pytest.mark.parametrize("backend", BACKENDS)
def test_pretrained_head_mask_matches_bert_with_those_heads_zeroed(model, bert, layer, heads, backend):
    net, tokenizer = bert.net, bert.tokenizer
    mask = np.ones((6, 12))
    mask[layer, heads] = 0.0
    run = model.run(CAT, backend=backend, head_mask=mask)
    handle = zero_heads_hook(net.encoder.layer[layer], heads, 32)
    try:
        with torch.no_grad():
            out = net(**tokenizer(CAT, return_tensors="pt"), output_hidden_states=True)
    finally:
        handle.remove()
    for l in range(7):
        np.testing.assert_allclose(run.hidden_states[l], out.hidden_states[l][0].numpy(), atol=1e-5, rtol=0,
                                   err_msg=f"hidden state {l}")
    np.testing.assert_array_equal(run.head_mask, mask)
    np.testing.assert_array_equal(run.layers[layer].head_mask, mask[layer].astype(np.float32))


def test_pretrained_sentence_vector_matches_sentence_transformers_with_and_without_heads(model):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    st_module = pytest.importorskip("sentence_transformers")
    encoder = st_module.SentenceTransformer(model.model_dir, device="cpu")
    np.testing.assert_allclose(model.run(CAT).sentence_embedding, encoder.encode([CAT])[0], atol=1e-6)
    mask = np.ones((6, 12))
    mask[3, [0, 7]] = 0.0
    handle = zero_heads_hook(encoder[0].auto_model.encoder.layer[3], [0, 7], 32)
    try:
        reference = encoder.encode([CAT, RUG])
    finally:
        handle.remove()
    a, b = (model.run(t, head_mask=mask).sentence_embedding for t in (CAT, RUG))
    np.testing.assert_allclose(a, reference[0], atol=1e-6)
    np.testing.assert_allclose(b, reference[1], atol=1e-6)
    full, off = ablation.embedding_similarity(model, CAT, RUG, mask)
    assert abs(off - float(reference[0] @ reference[1])) <= 1e-6
    plain = encoder.encode([CAT, RUG])
    assert abs(full - float(plain[0] @ plain[1])) <= 1e-6


def test_ranking_in_the_model_equals_whole_runs_with_one_head_off(model):
    full = model.run(CAT)
    ranking = ablation.rank_heads_in_model(model, full, layer=2)
    for i in (0, 5, 11):
        mask = np.ones((6, 12))
        mask[2, i] = 0.0
        alone = model.run(CAT, head_mask=mask)
        assert abs(ranking.embedding_cosine[i] - float(alone.sentence_embedding @ full.sentence_embedding)) <= 1e-9
        rel = np.linalg.norm(alone.output - full.output, axis=1) / np.linalg.norm(full.output, axis=1)
        assert abs(ranking.relative_change[i] - rel.mean()) <= 1e-6


def test_hidden_change_is_zero_before_the_switched_off_layer(model):
    mask = np.ones((6, 12))
    mask[3, 2] = 0.0
    change = ablation.hidden_change(model.run(CAT), model.run(CAT, head_mask=mask))
    assert change.relative.shape == (6, len(model.run(CAT).tokens))
    assert (change.relative[:3] == 0).all() and (change.relative[3:] > 0).all()
    np.testing.assert_allclose(change.cosine[:3], 1.0, atol=1e-12)


@pytest.mark.parametrize("bad, words", [
    (np.ones(12), "shape \\(6, 12\\)"),
    (np.ones((12, 6)), "shape \\(6, 12\\)"),
    (np.full((6, 12), np.nan), "finite"),
    (np.ones((6, 12), bool), "numbers"),
])
def test_pretrained_head_mask_errors(model, bad, words):
    with pytest.raises(mc.ConfigError, match=words):
        model.run(CAT, head_mask=bad)
