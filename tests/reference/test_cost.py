"""Cost counts against independent references: real modules' parameters, torch's FLOP counter, formulas by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

import mha_core as mc
from helpers import load_pretrained
from mha_core.pretrained import MODELS
from mha_core.teaching import published


@pytest.mark.parametrize("d_model, h, bias", [(64, 8, True), (64, 8, False), (384, 12, True), (30, 5, True)])
def test_params_match_torch_multihead_attention(d_model, h, bias):
    module = torch.nn.MultiheadAttention(d_model, h, bias=bias)
    assert mc.cost.attention_params(d_model, h, bias=bias) == sum(p.numel() for p in module.parameters())


def test_params_do_not_depend_on_the_number_of_heads():
    assert len({mc.cost.attention_params(512, h) for h in (1, 2, 4, 8, 16)}) == 1


@pytest.mark.parametrize("name", list(MODELS))
def test_params_and_bias_of_every_trained_model_match_its_weights(name):
    card = MODELS[name]
    w = load_pretrained(card.load).layer_weights[0].attention
    assert card.bias == (w.b_Q is not None), "the card's bias must say what the loaded weights have"
    model = load_pretrained(card.load)
    positions = getattr(model, "context_length", None) or model.position_embeddings.shape[0]
    assert card.context == positions, "the card's context is the model's own (its positions), not this app's limit"
    assert published.trained_shape(card).params_per_layer() == sum(a.size for a in w.arrays().values())
    assert mc.cost.attention_params(card.d_model, card.n_heads, card.n_kv_heads, bias=card.bias) == sum(
        a.size for a in w.arrays().values())


def _linears_on_meta(d_model: int, h: int, kv: int, bias: bool) -> list[torch.nn.Linear]:
    """W_Q, W_K, W_V, W_O as torch Linear layers of the given shapes, on the meta device (no memory)."""
    d_k = d_model // h
    shapes = [(d_model, h * d_k), (d_model, kv * d_k), (d_model, kv * d_k), (h * d_k, d_model)]
    return [torch.nn.Linear(i, o, bias=bias, device="meta") for i, o in shapes]


def test_published_models_params_match_modules_of_their_size():
    # Real sizes, far above what the engine computes with: nn.MultiheadAttention on the meta device allocates nothing.
    gpt3 = torch.nn.MultiheadAttention(12288, 96, device="meta")
    assert published.preset("gpt-3-175b").params_per_layer() == sum(p.numel() for p in gpt3.parameters())
    bert = torch.nn.MultiheadAttention(768, 12)
    assert published.preset("bert-base").params_per_layer() == sum(p.numel() for p in bert.parameters())
    base = torch.nn.MultiheadAttention(512, 8, bias=False)
    assert published.preset("transformer-base").params_per_layer() == sum(p.numel() for p in base.parameters())
    llama = _linears_on_meta(8192, 64, 8, bias=False)
    assert published.preset("llama-2-70b").params_per_layer() == sum(
        p.numel() for layer in llama for p in layer.parameters()) == 150_994_944


@pytest.mark.parametrize("shape", published.presets(), ids=lambda s: s.name)
def test_every_preset_counts_like_torch_modules_of_its_shape(shape):
    layers = _linears_on_meta(shape.d_model, shape.n_heads, shape.n_kv_heads, shape.bias)
    assert shape.params_per_layer() == sum(p.numel() for layer in layers for p in layer.parameters())
    assert shape.d_k * shape.n_heads == shape.d_model


def test_grouped_query_params_match_the_shapes_of_separate_linears():
    d_model, h, kv = 64, 8, 2
    d_k = d_model // h
    layers = [torch.nn.Linear(d_model, h * d_k), torch.nn.Linear(d_model, kv * d_k),
              torch.nn.Linear(d_model, kv * d_k), torch.nn.Linear(h * d_k, d_model)]
    assert mc.cost.attention_params(d_model, h, n_kv_heads=kv) == sum(
        p.numel() for layer in layers for p in layer.parameters())


def _counted_multiply_adds(n: int, m: int, d_model: int, h: int, kv: int, device: str = "cpu") -> int:
    """Run the layer in torch under FlopCounterMode (which counts 2 FLOPs per multiply-add of every matmul)."""
    d_k = d_model // h
    x, x_kv = torch.randn(n, d_model, device=device), torch.randn(m, d_model, device=device)
    W_Q, W_K = torch.randn(h * d_k, d_model, device=device), torch.randn(kv * d_k, d_model, device=device)
    W_V, W_O = torch.randn(kv * d_k, d_model, device=device), torch.randn(d_model, h * d_k, device=device)
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


@pytest.mark.parametrize("key", ["gpt-3-175b", "llama-2-70b"])
def test_multiply_adds_of_real_sizes_match_torchs_flop_counter(key):
    # On the meta device torch only follows shapes, so a 2048-token GPT-3 layer costs nothing to count.
    s = published.preset(key)
    flops = mc.cost.attention_flops(s.context, s.context, s.d_model, s.n_heads, s.n_kv_heads)
    assert sum(flops.values()) == _counted_multiply_adds(s.context, s.context, s.d_model, s.n_heads, s.n_kv_heads,
                                                         device="meta")


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


def test_kv_cache_of_the_presets_and_their_variants_by_hand():
    gpt3, llama = published.preset("gpt-3-175b"), published.preset("llama-2-70b")
    assert gpt3.kv_cache_bytes() == 2 * 96 * 96 * 128 * 2
    assert llama.kv_cache_bytes(seq_len=4096) == 2 * 80 * 8 * 128 * 4096 * 2
    assert published.kv_variants(llama) == {"MHA": 64, "GQA": 8, "MQA": 1}
    assert published.kv_variants(gpt3) == {"MHA": 96, "GQA": 8, "MQA": 1}
    assert published.kv_variants(published.preset("bert-base"))["GQA"] == 6
    assert published.gqa_heads(5, 5) is None and published.gqa_heads(9, 3) == 3 and published.gqa_heads(8, 8) == 4
    rows = {(r["model"], r["attention"]): r for r in published.kv_cache_table(4096, batch=2)}
    assert rows["Llama 2 70B", "GQA"]["own"] and not rows["Llama 2 70B", "MHA"]["own"]
    assert rows["Llama 2 70B", "MHA"]["total"] == 2 * 80 * 64 * 128 * 4096 * 2 * 2
    assert rows["GPT-3 175B", "MQA"]["per_token"] == 2 * 96 * 1 * 128 * 2
    assert not rows["BERT-base", "MHA"]["decoder"] and rows["Transformer base", "MHA"]["decoder"]
    # was: an empty context cell for Transformer base, with no word why
    assert rows["Transformer base", "MHA"]["context_words"] == "not fixed"
    assert rows["GPT-3 175B", "MHA"]["context_words"] == "2,048"
    assert all(s.no_context for s in published.presets() if s.context is None)


def test_the_presets_list_every_trained_model_and_the_published_ones():
    names = [s.name for s in published.presets()]
    assert names[:4] == ["Transformer base", "BERT-base", "GPT-3 175B", "Llama 2 70B"]
    assert names[4:] == list(MODELS)
    assert all(s.source for s in published.presets())


def test_trace_sizes_read_the_engine_arrays():
    cfg = mc.MHAConfig(48, 6, n_kv_heads=3)
    x = np.random.default_rng(0).standard_normal((5, 48)).astype(np.float32)
    tr = mc.forward(x, mc.init_weights(cfg), cfg, kv=np.ones((7, 48), np.float32))
    assert mc.cost.trace_sizes(tr) == dict(n=5, m=7, d_model=48, n_heads=6, n_kv_heads=3, d_k=8)


@pytest.mark.parametrize("args, words", [((30, 4), "does not divide d_model"), ((64, 8, 3), "does not divide n_heads"),
                                         ((0, 1), "at least 1"), ((64, 2.5), "whole number")])
def test_counting_refuses_impossible_shapes_in_words(args, words):
    with pytest.raises(mc.ConfigError, match=words):
        mc.cost.attention_params(*args)


def test_bytes_read_in_binary_units():
    assert [mc.cost.human_bytes(n) for n in (512, 4_718_592, 1_342_177_280, 1000 * 2**30, 2**50)] == [
        "512 bytes", "4.5 MiB", "1.25 GiB", "1,000 GiB", "1,024 TiB"]
    assert mc.cost.latex_count(1234567) == "1{,}234{,}567"
