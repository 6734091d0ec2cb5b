"""The trained models against independent references.

The tiny model: every layer's attention as mc.forward computes it from the checkpoint's MHAWeights, against
torch.nn.MultiheadAttention's own forward (causal mask, per-head weights) on the torch model's residual stream; the
whole model's logits against the torch model. SmolLM2's pruning experiment: its torch layers, losses and head-gate
gradients against transformers' Llama loaded from the same GGUF file (tests/conftest.py), with the same heads'
outputs scaled or zeroed before W_O.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import mha_core as mc
from mha_core.training import held_out, train
from mha_core.training.experiments import (
    PRUNING_TEXT,
    SmolLM2Heads,
    gate_gradients,
    head_importance,
    pruning_curve,
    pruning_order,
)
from mha_core.training.model import gated_attention
from references import llama_gated_logits


@pytest.fixture(scope="module", params=[True, False], ids=["attention-only", "with-mlp"])
def run(request):
    """A short run (its heads are partly trained: their patterns are not uniform), with and without MLP blocks."""
    return train("induction", steps=120, seed=1, attention_only=request.param)


def test_every_layer_is_torch_multihead_attention(run):
    model = run.module()
    ids = held_out(run.task)[0][:8]                                               # (8, n)
    n = ids.shape[1]
    causal = torch.ones(n, n, dtype=torch.bool).triu(1)                           # True = blocked, as in torch
    with torch.no_grad():
        stream = model.stream(ids)                                                # n_layers + 1 of (8, n, d_model)
        for b, seq in enumerate(ids.numpy()):
            traces = run.traces(seq)
            for l, trace in enumerate(traces):
                x = stream[l][b : b + 1]                                          # (1, n, d_model)
                out, weights = model.attn[l](x, x, x, attn_mask=causal, need_weights=True,
                                             average_attn_weights=False)
                np.testing.assert_allclose(trace.x, x[0].numpy(), atol=2e-5)
                np.testing.assert_allclose(trace.weights, weights[0].numpy(), atol=2e-6)
                np.testing.assert_allclose(trace.output, out[0].numpy(), atol=2e-5)
                # the fast path used in training gives the same output
                np.testing.assert_allclose(gated_attention(model.attn[l], x)[0].numpy(), out[0].numpy(), atol=2e-6)
        logits = model(ids).numpy()
    for b, seq in enumerate(ids.numpy()):
        np.testing.assert_allclose(run.logits(seq), logits[b], atol=5e-5)


def test_head_gates_match_the_engines_head_mask(run):
    model = run.module()
    seq = held_out(run.task)[0][:1]
    gates = np.array([[1.0, 0.0, 0.5, 2.0], [0.0, 1.0, 1.0, 0.25]])
    with torch.no_grad():
        logits = model(seq, torch.tensor(gates, dtype=torch.float32))[0].numpy()
    np.testing.assert_allclose(run.logits(seq[0].numpy(), head_mask=gates), logits, atol=5e-5)


# --- SmolLM2 --------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def subject(smollm2):
    return SmolLM2Heads(smollm2)


def llama_loss(reference, gates) -> float:
    """The mean next-token cross-entropy of transformers' Llama over PRUNING_TEXT, heads scaled by gates."""
    ids = reference.tokenizer(PRUNING_TEXT, return_tensors="pt")["input_ids"][0]
    logits = llama_gated_logits(reference, PRUNING_TEXT, gates)
    return float(F.cross_entropy(logits[:-1], ids[1:]))


def test_the_text_is_tokenized_as_llama_does(subject, smollm2_reference):
    ids = smollm2_reference.tokenizer(PRUNING_TEXT, return_tensors="pt")["input_ids"][0]
    assert torch.equal(subject.ids, ids) and 20 <= len(ids) <= 64


def test_torch_layers_on_the_references_hidden_states(smollm2, smollm2_reference):
    _, _, hidden, _ = smollm2_reference(PRUNING_TEXT)
    with torch.no_grad():
        for l in range(smollm2.n_layers - 1):  # transformers' last hidden state is after the final RMSNorm
            ours = smollm2.torch_layer(l, torch.from_numpy(hidden[l])).numpy()
            scale = np.abs(hidden[l + 1]).max()
            assert np.abs(ours - hidden[l + 1]).max() <= 1e-5 * scale, f"layer {l}"


def test_pruning_curve_matches_llama_with_the_same_heads_zeroed(subject, smollm2_reference):
    order = pruning_order(head_importance(subject, "gradient"))
    removed = (0, 27, 270)  # none, the first tenth, all: each point a whole Llama run
    losses, accuracy = pruning_curve(subject, order, removed)
    for k, loss in zip(removed, losses, strict=True):
        gates = np.ones(subject.shape)
        for l, i in order[:k]:
            gates[l, i] = 0.0
        assert loss == pytest.approx(llama_loss(smollm2_reference, gates), rel=2e-4, abs=2e-4), f"{k} heads off"
    assert losses[0] < losses[-1] and 0 < accuracy[0] <= 1


def test_loss_without_one_head_matches_llama(subject, smollm2_reference):
    full = llama_loss(smollm2_reference, np.ones(subject.shape))
    for l, heads in ((0, (0,)), (29, (8,))):  # the first and the last layer's heads: the gates' order
        losses = subject.losses_without(l)                                        # (9,): each head off alone
        for i in heads:
            gates = np.ones(subject.shape)
            gates[l, i] = 0.0
            assert losses[i] == pytest.approx(llama_loss(smollm2_reference, gates), rel=2e-4), (l, i)
    assert subject.evaluate(np.ones(subject.shape))[0] == pytest.approx(full, rel=2e-4)


def test_head_gate_gradient_matches_a_finite_difference_of_llama(subject, smollm2_reference):
    grad = gate_gradients(subject)[0]                                             # (30, 9)
    eps = 0.05  # float32 Llama: a larger step, and a central difference (its error is O(eps^2))
    for l, i in ((0, 0), (29, 8)):  # the first layer's first head and the last layer's last: the gates' order
        up, down = np.ones(subject.shape), np.ones(subject.shape)
        up[l, i], down[l, i] = 1 + eps, 1 - eps
        difference = (llama_loss(smollm2_reference, up) - llama_loss(smollm2_reference, down)) / (2 * eps)
        assert grad[l, i] == pytest.approx(difference, abs=2e-3, rel=2e-2), (l, i)


def test_torch_forward_is_the_engines_run(smollm2, subject):
    """The experiment's torch path and the app's engine path (model.run with a head mask) give one loss."""
    gates = np.ones(subject.shape)
    gates[3, :4] = 0.0
    run = smollm2.run(PRUNING_TEXT, head_mask=gates)
    ids = run.token_ids
    p = [smollm2.next_token_probabilities(run.output[t])[ids[t + 1]] for t in range(len(ids) - 1)]
    assert subject.evaluate(gates)[0] == pytest.approx(-np.mean(np.log(p)), rel=1e-4)
    assert isinstance(run.layers[3], mc.Trace) and not run.layers[3].concat[:, :4 * 64].any()
