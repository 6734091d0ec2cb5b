"""What every pretrained model refuses, in the same words: input that is not text, blank text, an unknown backend;
and every model card says what its loaded model is."""

from __future__ import annotations

import pytest

import mha_core as mc
from helpers import load_pretrained
from mha_core.pretrained import MODELS


@pytest.fixture(scope="module", params=sorted(MODELS))
def model(request):
    return load_pretrained(MODELS[request.param].load)


@pytest.mark.parametrize("text", ["", "   ", "\n\t  \n"])
def test_empty_or_blank_text_is_refused(model, text):
    with pytest.raises(mc.ConfigError, match=f"The text is empty: type a sentence for {model.name} to read"):
        model.run(text)


@pytest.mark.parametrize("text", [None, 42, ["a", "list"]])
def test_non_text_is_refused(model, text):
    with pytest.raises(mc.ConfigError, match="must be text"):
        model.run(text)


def test_unknown_backend_is_refused(model):
    with pytest.raises(mc.ConfigError, match="backend must be one of numpy, torch"):
        model.run("The cat sat on the mat.", backend="jax")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_cards_match_the_loaded_models(name):
    card = MODELS[name]
    model = load_pretrained(card.load)
    assert (model.n_layers, model.config.n_heads, model.config.kv_heads, model.config.d_model) == (
        card.n_layers, card.n_heads, card.n_kv_heads, card.d_model), name
    assert model.max_tokens == card.max_tokens and model.config.causal == (card.kind == "decoder"), name
    # The first word's position: every token before it is one the tokenizer adds ([CLS]), it is not.
    tokens = model.run("Cats sleep.").tokens
    assert all(t in model.special_tokens for t in tokens[:card.first_word - 1]), (name, tokens)
    assert tokens[card.first_word - 1] not in model.special_tokens, (name, tokens)
