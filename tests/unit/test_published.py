"""The published models' shapes (mha_core.teaching.published): what one cache length for every model means."""

from __future__ import annotations

from mha_core.teaching.published import cache_length_note


def test_one_length_names_each_model_whose_context_it_passes():
    note = cache_length_note(4096)
    assert note.startswith("Every bar is at the same 4,096 tokens, so the models compare at one length")
    assert note.endswith(" 4,096 tokens is past the context of BERT-base (512), GPT-3 175B (2,048), all-MiniLM-L6-v2 "
                         "(512): shown for the comparison only.")
    assert "past the context" not in cache_length_note(512)
