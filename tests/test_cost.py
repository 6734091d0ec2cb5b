"""Cost counts against independent references: real modules' parameters, torch's FLOP counter, formulas by hand."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

import mha_core as mc


@pytest.mark.parametrize("d_model, h, bias", [(64, 8, True), (64, 8, False), (384, 12, True), (30, 5, True)])
def test_params_match_torch_multihead_attention(d_model, h, bias):
    module = torch.nn.MultiheadAttention(d_model, h, bias=bias)
    assert mc.cost.attention_params(d_model, h, bias=bias) == sum(p.numel() for p in module.parameters())


def test_params_do_not_depend_on_the_number_of_heads():
    assert len({mc.cost.attention_params(512, h) for h in (1, 2, 4, 8, 16)}) == 1


def test_params_match_the_trained_model():
    from mha_core.pretrained import load_minilm

    model = load_minilm()
    w = model.layer_weights[0].attention
    assert mc.cost.attention_params(model.config.d_model, model.config.n_heads) == sum(
        a.size for a in w.arrays().values())


def test_grouped_query_params_match_the_shapes_of_separate_linears():
    d_model, h, kv = 64, 8, 2
    d_k = d_model // h
    layers = [torch.nn.Linear(d_model, h * d_k), torch.nn.Linear(d_model, kv * d_k),
              torch.nn.Linear(d_model, kv * d_k), torch.nn.Linear(h * d_k, d_model)]
    assert mc.cost.attention_params(d_model, h, n_kv_heads=kv) == sum(
        p.numel() for layer in layers for p in layer.parameters())


def _counted_multiply_adds(n: int, m: int, d_model: int, h: int, kv: int) -> int:
    """Run the layer in torch under FlopCounterMode (which counts 2 FLOPs per multiply-add of every matmul)."""
    d_k = d_model // h
    x, x_kv = torch.randn(n, d_model), torch.randn(m, d_model)
    W_Q, W_K, W_V = torch.randn(h * d_k, d_model), torch.randn(kv * d_k, d_model), torch.randn(kv * d_k, d_model)
    W_O = torch.randn(d_model, h * d_k)
    with FlopCounterMode(display=False) as counter:
        q = (x @ W_Q.T).view(n, h, d_k).transpose(0, 1)
        k = (x_kv @ W_K.T).view(m, kv, d_k).transpose(0, 1).repeat_interleave(h // kv, 0)
        v = (x_kv @ W_V.T).view(m, kv, d_k).transpose(0, 1).repeat_interleave(h // kv, 0)
        weights = F.softmax(q @ k.transpose(1, 2) / d_k**0.5, dim=-1)
        heads = weights @ v
        heads.transpose(0, 1).reshape(n, h * d_k) @ W_O.T
    return counter.get_total_flops() // 2


@pytest.mark.parametrize("n, m, d_model, h, kv", [(7, 7, 64, 8, 8), (5, 9, 48, 6, 3), (16, 16, 512, 8, 1)])
def test_multiply_adds_match_torchs_flop_counter(n, m, d_model, h, kv):
    flops = mc.cost.attention_flops(n, m, d_model, h, n_kv_heads=kv)
    assert sum(flops.values()) == _counted_multiply_adds(n, m, d_model, h, kv)


def test_splitting_into_heads_keeps_the_multiply_adds():
    one = mc.cost.attention_flops(128, 128, 512, 1)
    eight = mc.cost.attention_flops(128, 128, 512, 8)
    assert one == eight
    assert mc.cost.score_values(128, 128, 8) == 8 * mc.cost.score_values(128, 128, 1)


def test_kv_cache_bytes_of_published_models():
    # GPT-3 175B: 96 layers, 96 heads of 128, every head its own K/V; 2 (K and V) x 2 bytes each at 16 bits.
    assert mc.cost.kv_cache_bytes(96, 96, 128, seq_len=1) == 2 * 96 * 96 * 128 * 2 == 4_718_592
    # Llama 2 70B: 80 layers, 8 KV heads of 128 (GQA): a sequence of 4096 tokens in a batch of 1.
    assert mc.cost.kv_cache_bytes(80, 8, 128, seq_len=4096) == 2 * 80 * 8 * 128 * 4096 * 2 == 1_342_177_280
    assert mc.cost.kv_cache_bytes(80, 8, 128, seq_len=10, batch=3, bytes_per_value=4) == 2 * 80 * 8 * 128 * 30 * 4
