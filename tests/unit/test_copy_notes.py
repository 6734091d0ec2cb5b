"""Notes about the weights on view, and the notices the pages share."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from mha_app.copy.notes import TRAINED, bias_note, offer_line, switch_label, untrained_line, zoom_moved
from mha_app.state.settings import MODELS, Spec


def test_random_weights_say_their_patterns_mean_nothing():
    text = untrained_line(Spec())
    assert text.startswith("**Random weights**: every number and shape is exact, but the patterns mean nothing;")
    assert text.endswith(f"Real heads: **{TRAINED}**.")


def test_a_planted_head_is_the_exception():
    assert "mean nothing (but head 3, planted by hand); random" in untrained_line(Spec(plant="previous", plant_head=3))


@pytest.mark.parametrize("spec", [Spec(input="tiny"), *(Spec(model=name) for name in MODELS[1:])],
                         ids=["tiny", *MODELS[1:]])
def test_no_random_weights_note_for_the_tiny_example_or_a_trained_model(spec):
    assert untrained_line(spec) == ""


def _example(biases, run=None):
    """What bias_note reads of an example: its four biases (None: the example has none) and its run."""
    names = ("b_Q", "b_K", "b_V", "b_O")
    return SimpleNamespace(weights=SimpleNamespace(**dict(zip(names, biases or [None] * 4, strict=True))), run=run)


def test_bias_note_in_each_case():
    assert bias_note(_example(None)) == "This example has no bias terms, so its formulas have none."
    zeros = [np.zeros(4)] * 4
    assert bias_note(_example(zeros, run=object())) == "The biases b are the model's own, learned in training."
    assert "here they are all 0" in bias_note(_example(zeros))
    planted = [np.ones(4), *zeros[1:]]
    assert "the planted head's part of b_Q was solved for" in bias_note(_example(planted))


def test_offer_a_trained_model_with_its_article():
    text = offer_line("This page shows a trained model.", [("all-MiniLM-L6-v2", "encoder"),
                                                           ("SmolLM2-135M-Instruct", "decoder")])
    assert text == ("This page shows a trained model. Choose **all-MiniLM-L6-v2** (an encoder) or "
                    "**SmolLM2-135M-Instruct** (a decoder) under *Weights* in the sidebar, or use the button.")
    hidden = offer_line("Why.", [("all-MiniLM-L6-v2", "encoder")], sidebar=False)
    assert hidden == "Why. Choose **all-MiniLM-L6-v2** (an encoder) with its button below."
    assert switch_label("all-MiniLM-L6-v2") == "Switch to all-MiniLM-L6-v2"


def test_a_zoom_start_past_the_end_moves_to_the_last():
    assert zoom_moved(70, 12) == "The zoom window's start, 70, is past the last one, 12; it starts at 12."
