"""Inside the heads of the real all-MiniLM-L6-v2, against transformers' BertModel and a published finding.

- mc.contributions against sizes made from BertModel's own value vectors, attention probabilities and output dense
  layer (read with forward hooks), and the weighted transformed values summed against that dense layer's output;
- Kobayashi et al. 2020 ("Attention is not only a weight"): the share of weight on [CLS] and [SEP] is larger than
  their share of contribution, on every one of several sentences (their finding for BERT, here on MiniLM);
- mc.rollout of our run against the product of BertModel's own attention probabilities.
Both models are loaded once for the module (MiniLM) or the session (BertModel, conftest's `bert`).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import mha_core as mc
from helpers import load_pretrained
from mha_core.analysis import contributions as weighted_norms
from mha_core.analysis import head_stats
from mha_core.pretrained import load_minilm

SENTENCES = [
    "The cat sat on the mat because it was tired.",
    "The keys that the man who lives next door lost yesterday are on the table.",
    "She sat on the river bank and watched the bank across the street close.",
    "Attention is all you need.",
    "A quick brown fox jumps over the lazy dog near the old barn.",
    "Scientists discovered a new species of frog in the rainforest last year.",
]
TOL = 2e-5  # float32 end to end, relative to the largest size of a layer


@pytest.fixture(scope="module")
def model():
    return load_pretrained(load_minilm)


@pytest.fixture(scope="module")
def runs(model):
    return {text: model.run(text) for text in SENTENCES}


@pytest.fixture(scope="module")
def reference(bert):
    """text -> (attention probabilities, value vectors, dense outputs) per layer, from BertModel's forward pass."""
    net, tokenizer = bert.net, bert.tokenizer
    cache = {}

    def run(text):
        if text not in cache:
            values, dense = [], []
            hooks = []
            for layer in net.encoder.layer:
                hooks.append(layer.attention.self.value.register_forward_hook(
                    lambda _m, _i, out: values.append(out[0].double())))
                hooks.append(layer.attention.output.dense.register_forward_hook(
                    lambda _m, _i, out: dense.append(out[0].double())))
            try:
                with torch.no_grad():
                    out = net(**tokenizer(text, return_tensors="pt"), output_attentions=True)
            finally:
                for hook in hooks:
                    hook.remove()
            cache[text] = ([a[0].double() for a in out.attentions], values, dense)
        return cache[text]

    return run


@pytest.mark.parametrize("text", SENTENCES[:2])
def test_contributions_match_sizes_made_from_bert_values_weights_and_w_o(model, runs, reference, bert, text):
    attentions, values, _ = reference(text)
    net = bert.net
    h, d_k = model.n_heads, model.config.d_k
    for l in range(model.n_layers):
        W_O = net.encoder.layer[l].attention.output.dense.weight.double()        # (d_model, h*d_k)
        sizes = torch.stack([torch.linalg.vector_norm(values[l][:, i * d_k:(i + 1) * d_k]
                                                      @ W_O[:, i * d_k:(i + 1) * d_k].T, dim=-1)
                             for i in range(h)])                                  # (h, m) ‖v_s W_O,iᵀ‖
        expected = (attentions[l] * sizes[:, None, :]).detach().numpy()           # (h, n, m)
        got = mc.contributions(runs[text].layers[l], model.layer_weights[l].attention)
        assert np.abs(got - expected).max() <= TOL * np.abs(expected).max(), f"layer {l}"


@pytest.mark.parametrize("text", SENTENCES[:2])
def test_weighted_transformed_values_add_up_to_berts_attention_output(model, runs, reference, text):
    _, _, dense = reference(text)
    for l in range(model.n_layers):
        trace, w = runs[text].layers[l], model.layer_weights[l].attention
        f = weighted_norms.transformed_values(trace, w)                         # (h, m, d_model)
        total = np.einsum("its,isd->td", trace.weights, f) + w.b_O               # (n, d_model)
        expected = dense[l].numpy()
        assert np.abs(total - expected).max() <= TOL * np.abs(expected).max(), f"layer {l}"


def test_weight_on_cls_and_sep_exceeds_their_contribution_kobayashi_et_al(model, runs):
    parts = head_stats.parts_for(model)
    layer_weights = [w.attention for w in model.layer_weights]
    for text, run in runs.items():
        weight = weighted_norms.parked_share(head_stats.head_summary(run, parts=parts), parts)        # (6, 12)
        contribution = weighted_norms.parked_share(weighted_norms.contribution_summary(run, layer_weights, parts),
                                                   parts)
        assert weight.mean() > contribution.mean(), text
        assert np.mean(weight > contribution) >= 0.9, text   # and so in (nearly) every head, not on average only


def test_rollout_is_the_product_of_berts_own_attention(runs, reference):
    text = SENTENCES[0]
    attentions, _, _ = reference(text)
    flow = torch.eye(attentions[0].shape[-1], dtype=torch.float64)
    got = mc.rollout(runs[text])
    for l, a in enumerate(attentions):
        flow = (0.5 * torch.eye(a.shape[-1], dtype=torch.float64) + 0.5 * a.mean(dim=0)) @ flow
        np.testing.assert_allclose(got[l], flow.numpy(), atol=1e-5)
