"""Exports made from the settings: the settings as .json, and a script that redoes the example in PyTorch."""

from __future__ import annotations

import json

from mha_app.state.settings import Spec


def settings_json(values: dict, url: str | None = None) -> str:
    """The settings (flat name -> value) and, when given, the link that reopens them."""
    payload = {"settings": values}
    if url:
        payload["url"] = url
    return json.dumps(payload, indent=2, ensure_ascii=False)


_MODULE_TAIL = '''
# nn.MultiheadAttention stacks W_Q, W_K, W_V into one (3*d_model, d_model) matrix, in PyTorch's (out, in) layout.
mha = torch.nn.MultiheadAttention(cfg.d_model, cfg.n_heads, bias=cfg.bias, batch_first=True, dtype=torch.float64)
with torch.no_grad():
    mha.in_proj_weight.copy_(torch.tensor(np.concatenate([w.W_Q, w.W_K, w.W_V])))
    mha.out_proj.weight.copy_(torch.tensor(w.W_O))
    if cfg.bias:
        mha.in_proj_bias.copy_(torch.tensor(np.concatenate([w.b_Q, w.b_K, w.b_V])))
        mha.out_proj.bias.copy_(torch.tensor(w.b_O))

X = torch.tensor(x, dtype=torch.float64)[None]     # (1, n, d_model): a batch of one
Y = torch.tensor(x_kv, dtype=torch.float64)[None]  # (1, m, d_model): the keys' and values' input
attn_mask = None if attn_mask is None else torch.tensor(attn_mask)
key_padding_mask = None if key_padding_mask is None else torch.tensor(key_padding_mask)[None]  # (1, m)
# By default nn.MultiheadAttention averages the weights over the heads, shape (N, L, S); the app shows every head,
# so ask for them one by one: weights is then (N, h, L, S).
output, weights = mha(X, Y, Y, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                      need_weights=True, average_attn_weights=False)
'''

_PER_HEAD_TAIL = '''
# nn.MultiheadAttention has no {missing}, so each head is computed by
# F.scaled_dot_product_attention, then multiplied by its head-mask factor, then W_O mixes them.
T = {{name: torch.tensor(a, dtype=torch.float64) for name, a in w.arrays().items()}}
X, Y = torch.tensor(x, dtype=torch.float64), torch.tensor(x_kv, dtype=torch.float64)
h, kv, d_k = cfg.n_heads, cfg.kv_heads, cfg.d_k
q = F.linear(X, T["W_Q"], T.get("b_Q")).view(len(X), h, d_k).transpose(0, 1)   # (h, n, d_k)
k = F.linear(Y, T["W_K"], T.get("b_K")).view(len(Y), kv, d_k).transpose(0, 1)  # (kv, m, d_k)
v = F.linear(Y, T["W_V"], T.get("b_V")).view(len(Y), kv, d_k).transpose(0, 1)  # (kv, m, d_k)
k, v = k.repeat_interleave(h // kv, dim=0), v.repeat_interleave(h // kv, dim=0)  # query head i reads K/V head i*kv//h
blocked = torch.zeros(len(X), len(Y), dtype=torch.bool)                         # (n, m) True = blocked
if attn_mask is not None:
    blocked |= torch.tensor(attn_mask)
if key_padding_mask is not None:
    blocked |= torch.tensor(key_padding_mask)[None, :]
heads = F.scaled_dot_product_attention(q, k, v, attn_mask=~blocked, scale=cfg.softmax_scale)  # (h, n, d_k)
heads = heads * torch.tensor(head_mask, dtype=torch.float64)[:, None, None]  # 0 switches a head off before W_O
concat = heads.transpose(0, 1).reshape(len(X), h * d_k)                     # (n, h*d_k)
output = F.linear(concat, T["W_O"], T.get("b_O"))[None]                     # (1, n, d_model): a batch of one
'''


def torch_snippet(setup_code: str, missing: str = "") -> str:
    """A self-contained script: the setup (which defines cfg, x, x_kv, w, attn_mask, key_padding_mask, head_mask),
    then PyTorch's attention on it, printing the output.

    With `missing` (what nn.MultiheadAttention lacks, in words) the attention is written per head with
    F.scaled_dot_product_attention; otherwise nn.MultiheadAttention computes it.
    """
    tail = _PER_HEAD_TAIL.format(missing=missing) if missing else _MODULE_TAIL
    return f'''import numpy as np
import torch
import torch.nn.functional as F

import mha_core as mc

{setup_code}
{tail}
torch.set_printoptions(precision=4, sci_mode=False)
print("output (n, d_model):")
print(output[0])
'''


def _missing(spec: Spec) -> str:
    """What nn.MultiheadAttention cannot do that this spec needs, in words ("" when it can do everything)."""
    random = spec.card is None
    gqa = random and spec.input != "tiny" and spec.kv_heads not in (0, spec.h)
    needs = [name for name, used in (("grouped-query heads", gqa), ("head mask", bool(spec.ablate)),
                                     ("scale other than 1/√d_k", random and spec.softmax_scale is not None)) if used]
    return " or ".join([", ".join(needs[:-1]), needs[-1]] if len(needs) > 2 else needs)


def _cfg_code(spec: Spec) -> str:
    """The MHAConfig the app builds for random weights (build_example), as code."""
    gqa = spec.input != "tiny" and spec.kv_heads not in (0, spec.h)
    extra = "".join([f", n_kv_heads={spec.kv_heads}" if gqa else "",
                     f", scale={spec.softmax_scale}" if spec.softmax_scale is not None else ""])
    if spec.input == "tiny":
        return ("import dataclasses\n\nfrom mha_core.teaching.presets import TINY_CONFIG, tiny_example\n\n"
                f"cfg = dataclasses.replace(TINY_CONFIG{extra})" if extra else
                "from mha_core.teaching.presets import TINY_CONFIG as cfg, tiny_example")
    return f"cfg = mc.MHAConfig(d_model={spec.d_model}, n_heads={spec.h}{extra})"


_DECODER = '''import torch
import torch.nn.functional as F

from mha_core.pretrained import MODELS

model = MODELS[{model!r}].load()
cfg = model.config  # d_model {d_model}, {h} query heads, {kv} key/value heads of d_k = {d_k}, causal, RoPE, no biases
run = model.run({text!r})
layer = model.layer_weights[{l}]  # layer {layer}'s real weights
T = {{name: torch.tensor(a, dtype=torch.float64) for name, a in layer.attention.arrays().items()}}
h, kv, d_k = cfg.n_heads, cfg.kv_heads, cfg.d_k
head_mask = torch.ones(h, dtype=torch.float64){ablate}

# Llama normalises the input of attention with RMSNorm; run.hidden_states[{l}] is the input of layer {layer}.
hidden = torch.tensor(run.hidden_states[{l}], dtype=torch.float64)                # (n, d_model)
X = F.rms_norm(hidden, (cfg.d_model,), torch.tensor(layer.attn_norm, dtype=torch.float64), eps=model.rms_norm_eps)
n = len(X)
q = F.linear(X, T["W_Q"]).view(n, h, d_k).transpose(0, 1)   # (h, n, d_k)
k = F.linear(X, T["W_K"]).view(n, kv, d_k).transpose(0, 1)  # (kv, n, d_k)
v = F.linear(X, T["W_V"]).view(n, kv, d_k).transpose(0, 1)  # (kv, n, d_k)

# RoPE: dimensions a and a + d_k/2 of the vector at position p (0 first) turn by the angle p * theta^(-2a/d_k).
angle = torch.outer(torch.arange(n, dtype=torch.float64),
                    cfg.rope_theta ** (-2 * torch.arange(d_k // 2, dtype=torch.float64) / d_k))  # (n, d_k/2)
cos, sin = angle.cos(), angle.sin()


def rope(t):
    t1, t2 = t[..., : d_k // 2], t[..., d_k // 2:]
    return torch.cat([t1 * cos - t2 * sin, t2 * cos + t1 * sin], dim=-1)


q, k = rope(q), rope(k)

# Causal grouped-query attention: query head i reads key/value head i // (h // kv); each token sees itself and the
# tokens before it. nn.MultiheadAttention has neither shared key/value heads nor RoPE.
heads = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)  # (h, n, d_k)
heads = heads * head_mask[:, None, None]                                       # 0 switches a head off before W_O
concat = heads.transpose(0, 1).reshape(n, h * d_k)                             # (n, h*d_k)
output = F.linear(concat, T["W_O"])[None]                                      # (1, n, d_model): a batch of one

torch.set_printoptions(precision=4, sci_mode=False)
print("output (n, d_model):")
print(output[0])
'''


def decoder_script(spec: Spec, layer: int) -> str:
    """The script that rebuilds layer `layer` of a trained decoder (SmolLM2): RMSNorm, RoPE, causal GQA, W_O."""
    card = spec.card
    off = [i - 1 for i in spec.ablate]
    ablate = (f"\nhead_mask[{off}] = 0.0  # heads {', '.join(map(str, spec.ablate))} switched off (0-based here)"
              if off else "")
    return _DECODER.format(model=spec.model, d_model=card.d_model, h=card.n_heads, kv=card.n_kv_heads, d_k=card.d_k,
                           text=spec.text, l=layer - 1, layer=layer, ablate=ablate)


def torch_script(spec: Spec, layer: int = 1) -> str:
    """The torch_snippet that rebuilds the example of `spec` (at `layer`, for a pretrained model)."""
    if spec.card is not None and spec.card.kind == "decoder":
        return decoder_script(spec, layer)
    random = spec.card is None
    if not random:
        lines = [f"from mha_core.pretrained import MODELS\n\nmodel = MODELS[{spec.model!r}].load()\ncfg = model.config",
                 f"run = model.run({spec.text!r})",
                 f"x = x_kv = run.hidden_states[{layer - 1}]  # the input of layer {layer}, (n, d_model)",
                 f"w = model.layer_weights[{layer - 1}].attention  # that layer's real W_Q, W_K, W_V, W_O"]
    else:
        lines = [_cfg_code(spec)]
        if spec.input == "tiny":
            lines.append("x, w = tiny_example()\nx_kv = x")
        else:
            if spec.input in ("sentence", "pair"):
                lines.append(f"tokens = mc.tokenize({spec.query_text!r})\n"
                             f"x = mc.embed(tokens, cfg.d_model, seed={spec.seed}, positional={spec.pe})"
                             "  # (n, d_model)")
            else:
                lines.append(f"x = mc.random_input({spec.n}, cfg.d_model, seed={spec.seed})  # (n, d_model)")
            lines.append(f"key_tokens = mc.tokenize({spec.text!r})\n"
                         f"x_kv = mc.embed(key_tokens, cfg.d_model, seed={spec.seed}, positional={spec.pe})"
                         "  # (m, d_model): keys and values come from the source sentence" if spec.input == "pair"
                         else "x_kv = x  # self-attention: keys and values come from the same tokens")
            lines.append(f"w = mc.init_weights(cfg, seed={spec.seed})  # the app's seeded weights")
        if spec.plant != "none":
            lines.append(f"w = mc.plant_head(w, cfg, head={spec.plant_head - 1}, pattern={spec.plant!r}, "
                         f"strength={spec.strength!r}, x=x, kv=x_kv)  # head {spec.plant_head}, planted")
    causal = spec.causal and random and spec.input != "pair"
    lines.append("attn_mask = mc.causal_mask(len(x))  # True = blocked" if causal else "attn_mask = None")
    lines.append(f"key_padding_mask = mc.padding_mask(len(x_kv), {spec.pad})" if spec.pad and random
                 else "key_padding_mask = None")
    missing = _missing(spec)
    if missing:
        off = [i - 1 for i in spec.ablate]
        lines.append("head_mask = np.ones(cfg.n_heads)" + (f"\nhead_mask[{off}] = 0.0  # heads "
                     f"{', '.join(map(str, spec.ablate))} switched off (0-based here)" if off else ""))
    return torch_snippet("\n".join(lines), missing)
