"""Exports made from the settings: the settings as .json, and a script that redoes the example in PyTorch."""

from __future__ import annotations

import json

from .settings import Spec


def settings_json(values: dict, url: str | None = None) -> str:
    """The settings (flat name -> value) and, when given, the link that reopens them."""
    payload = {"settings": values}
    if url:
        payload["url"] = url
    return json.dumps(payload, indent=2, ensure_ascii=False)


def torch_snippet(x_code: str, weights_code: str, cfg_code: str, mask_code: str = "") -> str:
    """A self-contained script: build X and the weights, load them into nn.MultiheadAttention, print the output.

    x_code and weights_code are Python lines that define `x` (n, d_model) and `w` (an mha_core.MHAWeights);
    mask_code may define `attn_mask` and `key_padding_mask`.
    """
    return f'''import numpy as np
import torch
import mha_core as mc

{cfg_code}
{x_code}
{weights_code}
{mask_code or "attn_mask = key_padding_mask = None"}

# nn.MultiheadAttention stacks W_Q, W_K, W_V into one (3*d_model, d_model) matrix, in PyTorch's (out, in) layout.
mha = torch.nn.MultiheadAttention(cfg.d_model, cfg.n_heads, bias=cfg.bias, batch_first=True, dtype=torch.float64)
with torch.no_grad():
    mha.in_proj_weight.copy_(torch.tensor(np.concatenate([w.W_Q, w.W_K, w.W_V])))
    mha.out_proj.weight.copy_(torch.tensor(w.W_O))
    if cfg.bias:
        mha.in_proj_bias.copy_(torch.tensor(np.concatenate([w.b_Q, w.b_K, w.b_V])))
        mha.out_proj.bias.copy_(torch.tensor(w.b_O))

X = torch.tensor(x, dtype=torch.float64)[None]  # (1, n, d_model): a batch of one
attn_mask = None if attn_mask is None else torch.tensor(attn_mask)
key_padding_mask = None if key_padding_mask is None else torch.tensor(key_padding_mask)[None]  # (1, m)
# By default nn.MultiheadAttention averages the weights over the heads, shape (N, L, S); the app shows every head,
# so ask for them one by one: weights is then (N, h, L, S).
output, weights = mha(X, X, X, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                      need_weights=True, average_attn_weights=False)
torch.set_printoptions(precision=4, sci_mode=False)
print("output (n, d_model):")
print(output[0])
'''


def torch_script(spec: Spec, layer: int = 1) -> str:
    """The torch_snippet that rebuilds the example of `spec` (at `layer`, for a pretrained model)."""
    if spec.card is not None:
        cfg_code = (f"from mha_core.pretrained import MODELS\n\n"
                    f"model = MODELS[{spec.model!r}].load()\ncfg = model.config")
        x_code = (f"run = model.run({spec.text!r})\n"
                  f"x = run.hidden_states[{layer - 1}]  # the input of layer {layer}, (n, d_model)")
        w_code = f"w = model.layer_weights[{layer - 1}].attention  # that layer's real W_Q, W_K, W_V, W_O"
    elif spec.input == "tiny":
        cfg_code = "from mha_core.presets import TINY_CONFIG as cfg, tiny_example"
        x_code, w_code = "x, w = tiny_example()", ""
    else:
        cfg_code = f"cfg = mc.MHAConfig(d_model={spec.d_model}, n_heads={spec.h})"
        if spec.input == "sentence":
            x_code = (f"tokens = mc.tokenize({spec.text!r})\n"
                      f"x = mc.embed(tokens, cfg.d_model, seed={spec.seed}, positional={spec.pe})  # (n, d_model)")
        else:
            x_code = f"x = mc.random_input({spec.n}, cfg.d_model, seed={spec.seed})  # (n, d_model)"
        w_code = f"w = mc.init_weights(cfg, seed={spec.seed})  # the app's seeded weights"
    masks = ["attn_mask = mc.causal_mask(len(x))  # True = blocked" if spec.causal and spec.card is None
             else "attn_mask = None",
             f"key_padding_mask = mc.padding_mask(len(x), {spec.pad})" if spec.pad and spec.card is None
             else "key_padding_mask = None"]
    return torch_snippet(x_code, w_code, cfg_code, "\n".join(masks))
