"""all-MiniLM-L6-v2 through mc.forward, checked against transformers' BertModel loaded from the same files."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import mha_core as mc
from helpers import BLOCK_NETWORK, run_python
from mha_app.state.sentences import EXAMPLE_SENTENCES
from mha_core.analysis.head_stats import (
    COLUMNS,
    CONTENT,
    DOMINANT_MIN_SHARE,
    MIXED,
    POSITIONAL,
    SHARE_COLUMNS,
    SPECIAL,
    dominant_pattern,
    head_summary,
    kind_counts,
    layer_summary,
    pattern_kind,
    summary_array,
)
from mha_core.pretrained import MAX_MINILM_TOKENS, erf, gelu, load_minilm

CAT = EXAMPLE_SENTENCES["Coreference (what does 'it' refer to?)"]
EMOJI = "I love 🍕 and ☃, naïve Café 𝄞 中文!"
AT_CAP = " ".join(["word"] * (MAX_MINILM_TOKENS - 2))  # one word piece each: exactly 256 tokens with [CLS], [SEP]
LONG = "The quick brown fox jumps over the lazy dog. " * 40  # about 400 tokens: truncated to 256
PARITY_TEXTS = ["Hi.", CAT, *list(EXAMPLE_SENTENCES.values())[1:3], EMOJI, AT_CAP, LONG]
TOL = 1e-5


@pytest.fixture(scope="module")
def model(minilm):
    return minilm


@pytest.fixture(scope="module")
def ours(minilm_run):
    return minilm_run


@pytest.fixture(scope="module")
def reference(bert):
    """transformers' BertModel and tokenizer from the same files (conftest.py): (tokens, attentions, hidden states)."""
    return bert


# --- parity with the reference ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text", PARITY_TEXTS, ids=lambda t: f"{len(t)}chars")
def test_tokens_attention_and_hidden_states_match_bert(ours, reference, text):
    run = ours(text)
    ref_tokens, ref_attn, ref_hidden = reference(text)
    assert run.tokens == ref_tokens
    assert len(run.layers) == 6 and len(run.hidden_states) == 7
    for l in range(6):
        np.testing.assert_allclose(run.layers[l].weights, ref_attn[l], rtol=0, atol=TOL, err_msg=f"layer {l}")
    for l in range(7):
        np.testing.assert_allclose(run.hidden_states[l], ref_hidden[l], rtol=0, atol=TOL, err_msg=f"hidden {l}")
    np.testing.assert_allclose(run.output, ref_hidden[-1], rtol=0, atol=TOL)


@pytest.mark.parametrize("text", [CAT, AT_CAP])
def test_torch_backend_matches_bert(ours, reference, text):
    run = ours(text, backend="torch")
    ref_tokens, ref_attn, ref_hidden = reference(text)
    assert run.tokens == ref_tokens and run.backend == "torch"
    for l in range(6):
        np.testing.assert_allclose(run.layers[l].weights, ref_attn[l], rtol=0, atol=TOL)
        np.testing.assert_allclose(run.hidden_states[l + 1], ref_hidden[l + 1], rtol=0, atol=TOL)


def test_weights_are_the_models_own_in_pytorch_layout(model, reference):
    for l, layer in enumerate(reference.net.encoder.layer):
        w = model.layer_weights[l].attention
        pairs = {
            "W_Q": layer.attention.self.query.weight, "b_Q": layer.attention.self.query.bias,
            "W_K": layer.attention.self.key.weight, "b_K": layer.attention.self.key.bias,
            "W_V": layer.attention.self.value.weight, "b_V": layer.attention.self.value.bias,
            "W_O": layer.attention.output.dense.weight, "b_O": layer.attention.output.dense.bias,
        }
        for name, param in pairs.items():
            np.testing.assert_array_equal(getattr(w, name), param.detach().numpy(), err_msg=f"layer {l} {name}")


def test_each_layer_trace_is_mc_forward_on_that_layers_input(model, ours):
    run = ours(CAT)
    for l in range(model.n_layers):
        again = mc.forward(run.hidden_states[l], model.layer_weights[l].attention, model.config)
        np.testing.assert_array_equal(run.layers[l].weights, again.weights)
        np.testing.assert_array_equal(run.layers[l].x, run.hidden_states[l])


# --- the API ---------------------------------------------------------------------------------------------------

def test_model_attributes(model, ours):
    assert model.config == mc.MHAConfig(384, 12)
    assert (model.n_layers, model.n_heads, model.d_model, model.max_tokens) == (6, 12, 384, 256)
    assert MAX_MINILM_TOKENS == 256
    assert load_minilm() is model  # loaded once
    run = ours(CAT)
    n = len(run.tokens)
    assert run.tokens[0] == "[CLS]" and run.tokens[-1] == "[SEP]"
    assert run.output is run.hidden_states[-1] and run.output.shape == (n, 384)
    assert run.attentions.shape == (6, 12, n, n)
    assert run.layers[0].weights.shape == (12, n, n) and run.layers[0].q.shape == (12, n, 32)
    assert not run.truncated and run.message == "" and run.n_in_text == n


def test_model_and_runs_are_read_only(model, ours):
    run = ours(CAT)
    with pytest.raises(ValueError):
        run.hidden_states[0][0, 0] = 1.0
    with pytest.raises(ValueError):
        run.layers[0].weights[0, 0, 0] = 1.0
    with pytest.raises(ValueError):
        model.layer_weights[0].attention.W_Q[0, 0] = 1.0
    with pytest.raises(ValueError):
        model.word_embeddings[0, 0] = 1.0
    again = model.run(CAT)  # a second run gives the same numbers
    np.testing.assert_array_equal(again.output, run.output)


def test_example_sentences_run(model):
    assert "The cat sat on the mat because it was tired." in EXAMPLE_SENTENCES.values()
    for text in EXAMPLE_SENTENCES.values():
        run = model.run(text)
        assert not run.truncated and "[UNK]" not in run.tokens


# --- bad and awkward input -------------------------------------------------------------------------------------

def test_text_with_nothing_readable_is_refused(model):
    with pytest.raises(mc.ConfigError, match="no characters"):
        model.run("\x00\x01\u200b")  # control and zero-width characters: the tokenizer drops them all


def test_text_over_the_cap_is_truncated_and_says_so(ours, reference):
    run = ours(LONG)
    n_full = len(reference.tokenizer(LONG)["input_ids"])  # the reference tokenizer's count, untruncated
    assert n_full > MAX_MINILM_TOKENS
    assert run.truncated and run.n_in_text == n_full
    assert len(run.tokens) == MAX_MINILM_TOKENS and run.tokens[0] == "[CLS]" and run.tokens[-1] == "[SEP]"
    assert str(n_full) in run.message and str(MAX_MINILM_TOKENS) in run.message


def test_text_exactly_at_the_cap_is_not_truncated(ours):
    run = ours(AT_CAP)
    assert len(run.tokens) == MAX_MINILM_TOKENS and not run.truncated and run.message == ""


def test_emoji_and_unknown_characters_become_visible_unk(ours, reference):
    run = ours(EMOJI)
    assert "[UNK]" in run.tokens
    assert run.tokens == reference(EMOJI)[0]
    assert "[UNK]" in run.message


# --- offline, and light to import ------------------------------------------------------------------------------

def test_loads_and_runs_offline_with_neither_torch_nor_transformers():
    """In a fresh interpreter with every network call failing: the model loads and runs, and imports neither
    transformers (seconds to import) nor torch (only for backend="torch", see pretrained.py's docstring)."""
    code = BLOCK_NETWORK + """
import sys
from mha_core.pretrained import load_minilm
run = load_minilm().run("The cat sat on the mat because it was tired.")
print(len(run.tokens), len(run.layers), run.tokens[0], run.tokens[-1])
print([m for m in ("transformers", "sentence_transformers", "torch") if m in sys.modules])
"""
    result = run_python(code, HF_HUB_OFFLINE="1")
    assert result.returncode == 0, result.stderr
    ran, imported = result.stdout.strip().splitlines()[-2:]
    assert ran.split() == ["13", "6", "[CLS]", "[SEP]"]
    assert imported == "[]"


# --- erf and GELU ----------------------------------------------------------------------------------------------

def test_erf_matches_math_erf():
    z = np.concatenate([np.linspace(-7, 7, 200_001), np.geomspace(1e-300, 1e-2, 2000), [0.0, 6.0, 40.0, 1e300]])
    z = np.concatenate([z, -z])
    expected = np.array([math.erf(v) for v in z])
    rel = np.abs(erf(z) - expected) / np.maximum(np.abs(expected), np.finfo(float).tiny)
    assert rel.max() < 2e-11
    assert np.array_equal(erf([np.inf, -np.inf, 0.0]), [1.0, -1.0, 0.0])
    assert np.isnan(erf([np.nan])).all()
    assert erf(np.zeros((3, 4))).shape == (3, 4)


def test_gelu_is_exact():
    x = np.random.default_rng(0).standard_normal(50_000) * 6
    exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    np.testing.assert_allclose(gelu(x), exact, rtol=1e-10, atol=1e-12)
    x32 = x.astype(np.float32)
    ours32 = gelu(x32)
    assert ours32.dtype == np.float32
    np.testing.assert_allclose(ours32, torch.nn.functional.gelu(torch.from_numpy(x32)).numpy(), rtol=0, atol=3e-6)


# --- head statistics -------------------------------------------------------------------------------------------

def _reference_head_stats(tokens: list[str], attn: np.ndarray) -> dict[str, np.ndarray]:
    """The head_summary columns for one layer (h, n, n), written out query by query in torch, float64.

    Queries: every token but [CLS] and [SEP]. Each key goes to the first part that fits, in the order [CLS],
    [SEP], self, previous, next, elsewhere.
    """
    a = torch.from_numpy(attn).double()
    queries = [j for j, t in enumerate(tokens) if t not in ("[CLS]", "[SEP]")]
    parts = {name: torch.zeros(a.shape[0], len(queries), dtype=torch.float64)
             for name in ("cls", "sep", "self", "prev", "next", "elsewhere")}
    for q, j in enumerate(queries):
        for k, token in enumerate(tokens):
            part = ("cls" if token == "[CLS]" else "sep" if token == "[SEP]" else "self" if k == j
                    else "prev" if k == j - 1 else "next" if k == j + 1 else "elsewhere")
            parts[part][:, q] += a[:, j, k]
    entropy = -torch.special.xlogy(a[:, queries], a[:, queries]).sum(-1) / math.log(2)
    return {"entropy": entropy.mean(-1).numpy(), **{name: v.mean(-1).numpy() for name, v in parts.items()}}


@pytest.mark.parametrize("text", [CAT, EXAMPLE_SENTENCES["Repeated words"]])
def test_head_summary_matches_stats_of_the_reference_attention(ours, reference, text):
    rows = head_summary(ours(text))
    assert len(rows) == 6 * 12 and set(rows[0]) == {"layer", "head", *COLUMNS}
    ref_tokens, ref_attn, _ = reference(text)
    for l, attn in enumerate(ref_attn):
        expected = _reference_head_stats(ref_tokens, attn)
        for column in COLUMNS:
            got = summary_array(rows, column)[l]
            np.testing.assert_allclose(got, expected[column], rtol=0, atol=1e-5, err_msg=f"layer {l} {column}")


def test_head_shares_are_a_split_that_sums_to_one(ours):
    for row in head_summary(ours(CAT)):
        assert sum(row[name] for name in SHARE_COLUMNS) == pytest.approx(1, abs=1e-6), row
        assert all(0 <= row[name] <= 1 + 1e-9 for name in SHARE_COLUMNS), row


def test_head_summary_from_traces_and_tokens_equals_from_run(ours):
    run = ours(CAT)
    assert head_summary(list(run.layers), run.tokens) == head_summary(run)
    assert head_summary([t.weights for t in run.layers], run.tokens) == head_summary(run)


def test_minilm_has_a_previous_token_head(ours):
    """A known pattern of trained BERT-style models: some head puts nearly all its weight on the previous token."""
    rows = head_summary(ours(EXAMPLE_SENTENCES["Long-range dependency (keys ... are)"]))
    best = max(rows, key=lambda r: r["prev"])
    assert best["prev"] > 0.9 and dominant_pattern(best) == "previous token" and pattern_kind(best) == "positional"


def test_parking_heads_are_told_apart_from_positional_and_content_ones(ours):
    """On the default sentence many heads park on [CLS] (the old summary called 43 of 72 of them "[CLS]" patterns,
    overlapping shares included); they are now their own kind, and the kinds count every head once."""
    rows = head_summary(ours(CAT))
    counts = kind_counts(rows)
    assert sum(counts.values()) == len(rows) == 72
    assert counts[SPECIAL] > 0 and counts[POSITIONAL] > 0
    for row in rows:
        if pattern_kind(row) == SPECIAL:
            assert row["cls"] + row["sep"] > DOMINANT_MIN_SHARE and dominant_pattern(row).startswith("parks on")


def test_layer_summary_on_hand_made_weights():
    n = 4
    prev = np.zeros((1, n, n))
    prev[0, 0, 0] = 1.0
    prev[0, np.arange(1, n), np.arange(n - 1)] = 1.0  # each query on the token before it
    cols = layer_summary(prev, ["[CLS]", "a", "b", "[SEP]"])
    # Queries "a" and "b" only: "a"'s previous token is [CLS], so that weight counts as [CLS], not as previous.
    assert cols["cls"][0] == 0.5 and cols["prev"][0] == 0.5 and cols["sep"][0] == 0.0
    assert cols["next"][0] == 0.0 and cols["elsewhere"][0] == 0.0 and cols["entropy"][0] == 0.0
    nxt = np.zeros((1, n, n))
    nxt[0, np.arange(n - 1), np.arange(1, n)] = 1.0
    nxt[0, -1, -1] = 1.0
    cols = layer_summary(nxt, ["[CLS]", "a", "b", "[SEP]"])
    assert cols["next"][0] == 0.5 and cols["sep"][0] == 0.5  # "b"'s next token is [SEP]
    uniform = np.full((1, n, n), 1 / n)
    uniform[0, 0] = 0.0  # a fully blocked query row: left out of every mean
    cols = layer_summary(uniform, ["a", "b", "c", "d"])
    assert cols["entropy"][0] == pytest.approx(2.0) and cols["self"][0] == pytest.approx(0.25)
    assert cols["prev"][0] == pytest.approx(0.25) and cols["elsewhere"][0] == pytest.approx((0.25 + 0.25 + 0.5) / 3)
    assert math.isnan(cols["cls"][0]) and math.isnan(cols["sep"][0])  # no such tokens
    single = layer_summary(np.full((2, 3, 3), 1 / 3), ["[CLS]", "word", "[SEP]"])
    assert single["self"][0] == pytest.approx(1 / 3) and single["prev"][0] == 0.0 and single["next"][0] == 0.0
    only_special = layer_summary(np.full((1, 2, 2), 0.5), ["[CLS]", "[SEP]"])
    assert all(math.isnan(v[0]) for v in only_special.values())  # no word to average over


def test_layer_summary_refuses_mismatched_input():
    with pytest.raises(mc.ConfigError, match="tokens"):
        layer_summary(np.ones((2, 3, 3)) / 3, ["a", "b"])
    with pytest.raises(mc.ConfigError, match="shape"):
        layer_summary(np.ones((3, 3)), ["a", "b", "c"])


def test_dominant_pattern_and_summary_array():
    row = {"layer": 0, "head": 0, "entropy": 1.0, "cls": 0.1, "sep": 0.0, "self": 0.1, "prev": 0.8, "next": 0.0,
           "elsewhere": 0.0}
    assert dominant_pattern(row) == "previous token"
    assert dominant_pattern({**row, "prev": 0.1, "cls": 0.7, "elsewhere": 0.1}) == "parks on [CLS]"
    # [CLS] and [SEP] together take more than half: still parking, named after the larger.
    assert dominant_pattern({**row, "prev": 0.1, "cls": 0.25, "sep": 0.3, "elsewhere": 0.25}) == "parks on [SEP]"
    assert pattern_kind({**row, "prev": 0.1, "cls": 0.25, "sep": 0.3, "elsewhere": 0.25}) == SPECIAL
    assert dominant_pattern({**row, "prev": 0.5, "elsewhere": 0.3}) == MIXED  # exactly half is not more than half
    assert dominant_pattern({**row, "prev": 0.0, "elsewhere": 0.8}) == CONTENT  # the kind, not "other words"
    assert pattern_kind({**row, "prev": 0.0, "elsewhere": 0.8}) == CONTENT
    assert dominant_pattern({**row, "cls": math.nan, "prev": 0.1, "next": 0.8}) == "next token"
    rows = [{**row, "layer": l, "head": h, "entropy": 10 * l + h} for l in range(2) for h in range(3)]
    np.testing.assert_array_equal(summary_array(rows, "entropy"), [[0, 1, 2], [10, 11, 12]])
    with pytest.raises(mc.ConfigError):
        summary_array(rows, "nope")
