"""Notes about the weights on view (what random weights mean, what the biases are, how to switch to a trained
model) and the notices the pages share."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mha_app.copy.words import a
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


NEEDS_TRAINED = "This page shows a trained model."  # why offer_line is shown on a page of a trained model


def switch_label(model: str) -> str:
    """The button that switches the weights to `model`."""
    return f"Switch to {model}"


def offer_line(why: str, trained: list[tuple[str, str]], sidebar: bool = True) -> str:
    """`why` a trained model is needed and how to choose one of `trained` (name, kind: "encoder", "decoder");
    sidebar=False: the sidebar is hidden (presentation mode), so only the buttons below are offered."""
    names = " or ".join(f"**{name}** ({a(kind)})" for name, kind in trained)
    return (f"{why} Choose {names}"
            + (" under *Weights* in the sidebar, or use the button." if sidebar else " with its button below."))


def zoom_moved(wanted: int, last: int) -> str:
    """A zoom window asked to start at `wanted`, past the `last` row or column: it starts at the last one."""
    return f"The zoom window's start, {wanted}, is past the last one, {last}; it starts at {last}."
