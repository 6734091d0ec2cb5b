"""The model that learns a task, in PyTorch: token embeddings, positions, attention layers, an unembedding.

Attention-only by default, as the toy models in which induction heads were first described (Elhage et al. 2021):
the residual stream x starts as token embedding + position, each layer adds its multi-head attention output to it
(and, with attention_only=False, a small ReLU feed-forward block), and the unembedding reads the last x as logits.
Each attention layer is a torch.nn.MultiheadAttention, so its weights travel to and from the engine's MHAWeights
with mc.weights_from_torch and mc.weights_to_torch; its forward pass is written out below with
F.scaled_dot_product_attention, to put a gate on each head (Michel et al. 2019) and to stay fast.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..analysis.cost import attention_params
from ..attention.inputs import positional_encoding

MLP_WIDTH = 4  # the feed-forward block's hidden width, in multiples of d_model (as in the Transformer)


def gated_attention(attn: nn.MultiheadAttention, x: torch.Tensor, gate: torch.Tensor | None = None) -> torch.Tensor:
    """Causal multi-head self-attention of x (B, n, d_model) with attn's weights; gate (h,) multiplies each head's
    output before W_O (None = every head kept). The same numbers as attn(x, x, x, attn_mask=causal)[0]."""
    B, n, d_model = x.shape
    h = attn.num_heads
    qkv = F.linear(x, attn.in_proj_weight, attn.in_proj_bias)                 # (B, n, 3*d_model): Q, K, V side by side
    q, k, v = qkv.view(B, n, 3, h, d_model // h).permute(2, 0, 3, 1, 4)       # each (B, h, n, d_k)
    heads = F.scaled_dot_product_attention(q, k, v, is_causal=True)           # (B, h, n, d_k), scaled by 1/sqrt(d_k)
    if gate is not None:
        heads = heads * gate[:, None, None]                                   # (B, h, n, d_k)
    concat = heads.transpose(1, 2).reshape(B, n, d_model)                     # (B, n, h*d_k): all heads side by side
    return attn.out_proj(concat)                                              # (B, n, d_model)


class TinyTransformer(nn.Module):
    """vocab_size tokens in, logits over them out, for sequences of up to n_tokens."""

    def __init__(self, vocab_size: int, n_tokens: int, n_layers: int, n_heads: int, d_model: int,
                 positions: str = "learned", attention_only: bool = True):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        nn.init.normal_(self.embed.weight, std=d_model**-0.5)  # token vectors of length about 1
        if positions == "learned":
            self.positions = nn.Parameter(torch.randn(n_tokens, d_model) * d_model**-0.5)  # (n_tokens, d_model)
        else:  # fixed: the sinusoidal encoding of "Attention Is All You Need", not trained
            self.register_buffer("positions", torch.from_numpy(positional_encoding(n_tokens, d_model)).float())
        self.attn = nn.ModuleList(nn.MultiheadAttention(d_model, n_heads, batch_first=True) for _ in range(n_layers))
        self.mlp = nn.ModuleList() if attention_only else nn.ModuleList(
            nn.Sequential(nn.Linear(d_model, MLP_WIDTH * d_model), nn.ReLU(), nn.Linear(MLP_WIDTH * d_model, d_model))
            for _ in range(n_layers))
        self.unembed = nn.Linear(d_model, vocab_size)

    def stream(self, ids: torch.Tensor, head_mask: torch.Tensor | None = None) -> list[torch.Tensor]:
        """The residual stream: the input of every layer, then the last layer's output; each (B, n, d_model).

        head_mask (n_layers, h): each head's gate (1 = kept, 0 = switched off), or None.
        """
        n = ids.shape[1]
        x = self.embed(ids) + self.positions[:n]                                  # (B, n, d_model)
        xs = [x]
        for l, attn in enumerate(self.attn):
            x = x + gated_attention(attn, x, None if head_mask is None else head_mask[l])  # (B, n, d_model)
            if len(self.mlp):
                x = x + self.mlp[l](x)                                            # (B, n, d_model)
            xs.append(x)
        return xs

    def forward(self, ids: torch.Tensor, head_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Logits (B, n, vocab_size) for ids (B, n)."""
        return self.unembed(self.stream(ids, head_mask)[-1])


def parameter_count(vocab_size: int, n_tokens: int, n_layers: int, n_heads: int, d_model: int,
                    positions: str = "learned", attention_only: bool = True) -> int:
    """The learned numbers of a TinyTransformer, counted from its shapes: token embeddings, learned positions (a
    sinusoidal encoding is fixed), every attention layer (mc.cost.attention_params), every feed-forward block, and
    the unembedding with its bias."""
    total = vocab_size * d_model + (n_tokens * d_model if positions == "learned" else 0)
    total += n_layers * attention_params(d_model, n_heads)
    if not attention_only:
        width = MLP_WIDTH * d_model
        total += n_layers * (2 * width * d_model + width + d_model)
    return total + vocab_size * d_model + vocab_size


def masked_loss(logits: torch.Tensor, targets: torch.Tensor, ignore: int) -> torch.Tensor:
    """Mean cross-entropy over the positions that have an answer."""
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=ignore)


def accuracy(logits: torch.Tensor, targets: torch.Tensor, ignore: int) -> float:
    """The share of answers whose most likely token is right."""
    answered = targets != ignore
    return float((logits.argmax(-1)[answered] == targets[answered]).float().mean())


def frozen_copy(t: torch.Tensor) -> np.ndarray:
    """A read-only float32 NumPy copy of a tensor (checkpoints are shared)."""
    a = t.detach().to(torch.float32).numpy().copy()
    a.setflags(write=False)
    return a
