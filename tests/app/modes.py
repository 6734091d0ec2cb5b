"""The settings a student can meet, as link parameters: the modes of the page × mode smoke matrix
(test_every_page.py), whose runs other app tests read too (conftest.page_run)."""

from __future__ import annotations

from mha_app.state.sentences import DECODER_SENTENCES
from mha_app.state.settings import MODELS

MINILM, SMOLLM2 = MODELS[1], MODELS[2]
INDUCTION = DECODER_SENTENCES["Repeated phrase (induction heads)"]
# The trained models with a head switched off, so that the pages' experiment sections show too, and MiniLM at a
# layer other than the first.
MODES = {
    "default": {},
    "tiny": {"input": "tiny"},
    "random input": {"input": "random", "n": "6"},
    "causal+padding": {"causal": "true", "pad": "2"},
    "cross-attention": {"input": "pair"},
    "grouped K/V": {"kv_heads": "2"},
    "ablation": {"ablate": "2"},
    "planted head": {"plant": "previous", "plant_head": "3"},
    "no scaling": {"scale": "none"},
    MINILM: {"model": MINILM, "text": "The cat sat on the mat.", "layer": "2", "ablate": "1"},
    SMOLLM2: {"model": SMOLLM2, "text": INDUCTION, "layer": "18", "head": "5", "query": "14", "ablate": "1"},
}
PRESENTATION = {"present": "1"}  # the lesson, one screen at a time
