"""What the collapsed boxes beside a page's content say: the symbols held back, the engine's code, the same example
in PyTorch, a chart's words and numbers."""

from __future__ import annotations

from mha_app.copy.steps import CODE_NAMES

HELD_MEANING = "its meaning appears with the answer to the question above."  # a symbol that would tell the answer

CODE_TITLE = "The code that computed this (mha_core/engine.py)"
CODE_WAITS = f"{CODE_TITLE} appears once you answer or reveal the question above."

PYTORCH_TITLE = "Reproduce in PyTorch"
PYTORCH_MODULE = ("Rebuilds this exact example in PyTorch and prints the output shown here: with "
                  "torch.nn.MultiheadAttention, or head by head with F.scaled_dot_product_attention where the module "
                  "lacks an option used here (grouped-query heads, a head mask, another scale).")
PYTORCH_NAMES = ("`mha` is PyTorch's own layer, given the same weights; its `in_proj_weight` is W_Q, W_K and W_V "
                 "stacked. `attn_mask` and `key_padding_mask` are True where a pair or a key is blocked.")

CHART_WORDS = "This chart in words and numbers"
IMAGE_FORMAT_HELP = ("The camera icon over each chart saves it in this format. The attention explorer and the chart of "
                     "mixing the values on step 2 have a button for each.")


def code_caption(step: int, note: str = "") -> str:
    """The line under a step's code: the names in it the pages have not introduced, then `note` on this example."""
    return CODE_NAMES[step] + (f" {note}" if note else "")


def pytorch_decoder(layer: int, model: str) -> str:
    """What the PyTorch script does for layer `layer` of a decoder, and why torch.nn.MultiheadAttention cannot."""
    return (f"Rebuilds layer {layer} of {model} in PyTorch, from the input of that layer, and prints the output shown "
            "here: RMSNorm, the projections, RoPE, then causal grouped-query attention by "
            "F.scaled_dot_product_attention(is_causal=True, enable_gqa=True) and W_O. torch.nn.MultiheadAttention "
            "cannot compute this layer: it has no shared key/value heads and no RoPE.")


def first_rows(shown: int, total: int) -> str:
    """Under a chart's table cut at `shown` of its `total` rows."""
    return f"The first {shown} of {total} rows."
