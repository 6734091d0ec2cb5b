"""Notes about the weights on view: what random weights mean, what the biases are."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mha_core.pretrained import MODELS

if TYPE_CHECKING:
    from mha_app.state.example import Example
    from mha_app.state.settings import Spec

TRAINED = next(iter(MODELS))  # the trained model the notes point to: the encoder, whose heads read plainly


def untrained_line(spec: Spec) -> str:
    """With random weights (not the tiny example's): that the patterns mean nothing, and where real heads are ("" with
    a trained model)."""
    if spec.card is not None or spec.input == "tiny":
        return ""
    planted = f" (but head {spec.plant_head}, planted by hand)" if spec.plant != "none" else ""
    return (f"**Random weights**: every number and shape is exact, but the patterns mean nothing{planted}; random "
            f"heads look alike. Real heads: **{TRAINED}**.")


def bias_note(example: Example) -> str:
    """What the bias terms of the formulas are in this example: absent, all zero, or learned."""
    w = example.weights
    if w.b_Q is None:
        return "This example has no bias terms, so its formulas have none."
    if example.run is not None:
        return "The biases b are the model's own, learned in training."
    if not any(np.any(b) for b in (w.b_Q, w.b_K, w.b_V, w.b_O)):
        return ("The biases b are in the formulas because this layer has them, but here they are all 0: random "
                "weights start their biases at 0, as nn.MultiheadAttention does.")
    return ("Random weights start their biases at 0, as nn.MultiheadAttention does; the planted head's part of b_Q "
            "was solved for with its queries, so it is not 0.")
