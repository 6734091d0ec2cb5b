"""Practice questions: every answer against a formula written out here (and torch modules for the parameters);
right answers accepted, wrong ones refused, the usual slips named."""

from __future__ import annotations

import pytest
import torch

from mha_core.teaching.practice import BATCH, UNFIXED_CONTEXT, practice_questions
from mha_core.teaching.published import preset, presets


def _answers(name: str) -> dict[str, object]:
    return {q.key.split("@")[0]: q for q in practice_questions(preset(name))}


def _expected(shape) -> dict[str, float]:
    d, h, kv, L = shape.d_model, shape.n_heads, shape.n_kv_heads, shape.n_layers
    d_k, n = d // h, shape.context or UNFIXED_CONTEXT
    layers = [torch.nn.Linear(d, h * d_k, bias=shape.bias, device="meta"),
              torch.nn.Linear(d, kv * d_k, bias=shape.bias, device="meta"),
              torch.nn.Linear(d, kv * d_k, bias=shape.bias, device="meta"),
              torch.nn.Linear(h * d_k, d, bias=shape.bias, device="meta")]
    expected = {"d_k": d_k, "W_O": layers[3].weight.numel(), "W_K": layers[1].weight.numel(),
                "params": sum(p.numel() for layer in layers for p in layer.parameters()), "scores": h * n * n}
    if kv < h:
        expected["group"] = h // kv
    if shape.kind != "encoder":
        per_token = 2 * L * kv * d_k * 2  # K and V, every layer, every K/V head, 2 bytes a number
        total = per_token * n * BATCH
        expected["kv_token"] = per_token
        expected["kv_batch"] = total / 2**30 if total >= 2**30 else total / 2**20
    return expected


@pytest.mark.parametrize("shape", presets(), ids=lambda s: s.name)
def test_every_answer_matches_a_formula_written_out_here(shape):
    questions = {q.key.split("@")[0]: q for q in practice_questions(shape)}
    expected = _expected(shape)
    assert set(questions) == set(expected)
    for kind, q in questions.items():
        assert q.answer == pytest.approx(expected[kind], rel=1e-12), kind
        assert q.hint and q.worked and shape.name in q.key
        assert q.check(q.answer)[0], kind


def test_the_issues_examples():
    assert _answers("transformer-base")["d_k"].answer == 64
    assert _answers("gpt-3-175b")["d_k"].answer == 128
    llama = _answers("llama-2-70b")
    assert llama["kv_token"].answer == 2 * 80 * 8 * 128 * 2 == 327_680 and llama["kv_token"].unit == "bytes"
    assert llama["group"].answer == 8
    assert llama["kv_batch"].answer == pytest.approx(10.0) and llama["kv_batch"].unit == "GiB"


def test_right_and_wrong_answers():
    q = _answers("transformer-base")["d_k"]
    assert q.check(64) == (True, "Right: 64.")
    assert q.check(64.0)[0]
    right, message = q.check(65)
    assert not right and "65 is not it" in message
    assert q.check(None) == (False, "Type a number first.")


def test_common_slips_are_named():
    q = _answers("llama-2-70b")["kv_token"]
    right, message = q.check(163_840)  # K only, or 1 byte a number
    assert not right and "2 times too small" in message
    right, message = q.check(1_310_720)
    assert not right and "4 times too large" in message


def test_an_answer_in_gib_takes_three_significant_digits():
    q = _answers("gpt-3-175b")["kv_batch"]  # 4,718,592 bytes a token x 2048 tokens x 8 sequences = 72 GiB
    assert q.answer == pytest.approx(72.0)
    assert q.check(72)[0] and q.check(72.3)[0] and not q.check(74)[0]
    assert "2 times too small" in q.check(36)[1]


def test_encoders_get_no_cache_questions():
    assert "kv_token" not in _answers("bert-base") and "kv_batch" not in _answers("all-MiniLM-L6-v2")
    assert "kv_token" in _answers("transformer-base")  # its decoder generates token by token
