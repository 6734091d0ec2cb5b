"""What the tests compare against, written here independently of mha_core: one attention layer by torch alone,
RoPE as complex numbers, biases that are not zero, and hooks that switch heads off inside transformers' models."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np


def max_abs(a, b) -> float:
    """The largest absolute difference of two arrays of one shape (0 for empty ones)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def biased_weights(cfg, dtype, seed: int = 0):
    """mc.init_weights plus clearly nonzero random biases (init_weights starts them at 0, which hides bias bugs)."""
    import mha_core as mc

    w = mc.init_weights(cfg, seed=seed, dtype=dtype)
    if not cfg.bias:
        return w
    rng = np.random.default_rng(seed + 1)
    return dataclasses.replace(w, **{name: rng.uniform(-0.5, 0.5, getattr(w, name).shape).astype(dtype)
                                     for name in ("b_Q", "b_K", "b_V", "b_O")})


def complex_rope(x, theta: float, positions=None):
    """x (heads, n, d_k) turned by position as Llama's RoPE, written with complex numbers, in float64: in each head,
    dimensions i and i + d_k/2 are one complex number, multiplied by exp(1j * p * theta^(-2i/d_k)) at position p."""
    heads, n, d_k = x.shape
    half = d_k // 2
    positions = np.arange(n) if positions is None else np.asarray(positions)
    z = x[..., :half].astype(np.float64) + 1j * x[..., half:].astype(np.float64)
    freq = theta ** (-2.0 * np.arange(half) / d_k)                        # (d_k/2,)
    z = z * np.exp(1j * positions[:, None] * freq[None, :])               # (heads, n, d_k/2)
    return np.concatenate([z.real, z.imag], axis=-1)


def sdpa_attention(w, cfg, x, kv=None, *, keep=None, factors=None, enable_gqa=False, dtype=None) -> SimpleNamespace:
    """One attention layer by torch alone: F.linear projections, RoPE as complex rotations (when cfg.rope_theta is
    set), F.scaled_dot_product_attention with cfg's scale, each head times its factor, then W_O.

    x (n, d_model) queries, kv (m, d_model) keys and values (default x). keep: (n, m) or (h, n, m), True = may
    attend; cfg.causal adds the causal triangle (SDPA's is_causal). K/V heads are shared by repeat_interleave, or by
    SDPA itself with enable_gqa. Computed in dtype (default: x's; float64 with RoPE). Returns NumPy arrays q (h, n,
    d_k) and k, v (n_kv, m, d_k) after RoPE, heads (h, n, d_k) before the factors, weights (h, n, m), output (n,
    d_model).
    """
    import torch
    import torch.nn.functional as F

    dtype = np.asarray(x).dtype if dtype is None else dtype
    T = {name: torch.from_numpy(np.asarray(a, dtype)) for name, a in w.arrays().items()}
    X = torch.from_numpy(np.asarray(x, dtype))
    Y = X if kv is None else torch.from_numpy(np.asarray(kv, dtype))
    h, n_kv, d_k = cfg.n_heads, cfg.kv_heads, cfg.d_k
    n, m = len(X), len(Y)
    q = F.linear(X, T["W_Q"], T.get("b_Q")).view(n, h, d_k).transpose(0, 1)       # (h, n, d_k)
    k = F.linear(Y, T["W_K"], T.get("b_K")).view(m, n_kv, d_k).transpose(0, 1)    # (n_kv, m, d_k)
    v = F.linear(Y, T["W_V"], T.get("b_V")).view(m, n_kv, d_k).transpose(0, 1)    # (n_kv, m, d_k)
    if cfg.rope_theta:
        q, k = (torch.from_numpy(complex_rope(t.numpy(), cfg.rope_theta)) for t in (q, k))
        v, T = v.double(), {name: t.double() for name, t in T.items()}
    allowed = None if keep is None else torch.from_numpy(np.array(keep, bool))     # (n, m) or (h, n, m)
    if cfg.causal:
        triangle = torch.ones(n, m, dtype=torch.bool).tril()                      # (n, m), as SDPA's is_causal
        allowed = triangle if allowed is None else allowed & triangle
    k_rep, v_rep = (k, v) if enable_gqa else (k.repeat_interleave(h // n_kv, 0), v.repeat_interleave(h // n_kv, 0))
    gqa = {"enable_gqa": True} if enable_gqa else {}  # torch < 2.5 has no such argument
    heads = F.scaled_dot_product_attention(q[None], k_rep[None], v_rep[None], attn_mask=allowed,
                                           scale=cfg.softmax_scale, **gqa)[0]           # (h, n, d_k)
    gated = heads if factors is None else heads * torch.tensor(factors, dtype=heads.dtype)[:, None, None]
    output = F.linear(gated.transpose(0, 1).reshape(n, h * d_k), T["W_O"], T.get("b_O"))  # (n, d_model)
    scores = q @ k.repeat_interleave(h // n_kv, 0).transpose(1, 2) * cfg.softmax_scale   # (h, n, m)
    weights = torch.softmax(scores if allowed is None else scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return SimpleNamespace(q=q.numpy(), k=k.numpy(), v=v.numpy(), heads=heads.numpy(), weights=weights.numpy(),
                           output=output.numpy())


def zero_heads_hook(encoder_layer, heads, d_k: int):
    """A forward hook on a BertLayer's self-attention that zeroes these heads' slice of its context (the heads side
    by side, before the output dense layer W_O); returns the handle (call .remove())."""
    def hook(_module, _inputs, output):
        context = output[0].clone()
        for i in heads:
            context[..., i * d_k:(i + 1) * d_k] = 0.0
        return (context, *output[1:])

    return encoder_layer.attention.self.register_forward_hook(hook)


def llama_gated_logits(reference, text: str, gates) -> object:
    """The logits (n, vocab), float64, of transformers' Llama on text with every head's output scaled by its gate
    (gates: (n_layers, h), 1 = kept, 0 = switched off): a pre-hook on each layer's o_proj scales the heads' slices
    of its input (the heads side by side, before W_O)."""
    import torch

    gates = np.asarray(gates, dtype=np.float64)
    d_k = reference.llama.config.head_dim
    handles = []

    def scale(row):
        def hook(_module, args):
            x = args[0].clone()
            for i, factor in enumerate(row):
                if factor != 1.0:
                    x[..., i * d_k:(i + 1) * d_k] *= float(factor)
            return (x,)
        return hook

    for layer, row in enumerate(gates):
        if (row != 1.0).any():
            handles.append(reference.llama.model.layers[layer].self_attn.o_proj.register_forward_pre_hook(scale(row)))
    try:
        ids = reference.tokenizer(text, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            return reference.llama(input_ids=ids).logits[0].double()
    finally:
        for handle in handles:
            handle.remove()


def llama_without_heads(reference, text: str, layer: int, heads) -> np.ndarray:
    """The next-token probabilities (vocab,) of transformers' Llama on text with these heads (0-based) of `layer`
    (0-based) switched off (see llama_gated_logits)."""
    import torch

    config = reference.llama.config
    gates = np.ones((config.num_hidden_layers, config.num_attention_heads))
    gates[layer, list(heads)] = 0.0
    return torch.softmax(llama_gated_logits(reference, text, gates)[-1], -1).numpy()
