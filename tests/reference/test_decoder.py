"""What the app computes for a decoder, outside the app: RoPE's distance-only products, the decoder's head
statistics and induction score, the PyTorch check with RoPE, switched-off heads ranked by the next token, and the
decoder figures. References: a complex-number rotation (conftest.complex_rope), loops written out here, and
transformers' own Llama reading the same GGUF file (conftest.smollm2_reference)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import mha_core as mc
from mha_app.state.sentences import DECODER_SENTENCES
from mha_core import figures
from mha_core.analysis import head_stats, reference
from mha_core.attention import rope
from mha_core.experiments import ablation
from mha_core.figures import decoder
from mha_core.teaching import formulas
from references import complex_rope, llama_without_heads
from screen import PlotlyObjects

F, dfig = PlotlyObjects(figures), PlotlyObjects(decoder)  # dict figures checked by plotly, read as its objects
INDUCTION = DECODER_SENTENCES["Repeated phrase (induction heads)"]
FACT = DECODER_SENTENCES["A fact to complete"]


@pytest.fixture(scope="module")
def runs(smollm2_run):
    return smollm2_run


# --- RoPE: the product depends only on the distance -------------------------------------------------------------

@pytest.mark.parametrize("theta", [100_000.0, 10_000.0])
def test_relative_scores_are_the_complex_rotation_and_depend_only_on_the_distance(theta):
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal(64), rng.standard_normal(64)
    P = 20
    rel = rope.relative_scores(q, k, theta, P)
    q_at = complex_rope(np.tile(q, (1, P, 1)), theta)[0]  # (P, 64): q at positions 0 ... P-1
    k_at = complex_rope(np.tile(k, (1, P, 1)), theta)[0]
    np.testing.assert_allclose(rel.products, q_at @ k_at.T, rtol=1e-12, atol=1e-10)
    for a in range(P):
        for b in range(a + 1):
            assert rel.products[a, b] == pytest.approx(rel.by_distance[a - b], abs=1e-10)
    assert rel.spread < 1e-10
    assert rel.unrotated == pytest.approx(q @ k) == pytest.approx(rel.by_distance[0])
    assert np.ptp(rel.by_distance) > 1e-3  # and it does change with the distance


def test_rope_frequencies_and_formulas():
    freq = rope.frequencies(64, 100_000.0)
    np.testing.assert_allclose(freq, [100_000.0 ** (-2 * a / 64) for a in range(32)], rtol=1e-15)
    assert freq[0] == 1.0
    cfg = mc.MHAConfig(576, 9, n_kv_heads=3, bias=False, causal=True, rope_theta=100_000.0)
    projection = formulas.projection(cfg)
    assert r"Q_i = \mathrm{RoPE}(X\,W^{Q}_i)" in projection and r"K_j = \mathrm{RoPE}(X\,W^{K}_j)" in projection
    assert r"V_j = X\,W^{V}_j" in projection
    assert "RoPE" not in formulas.projection(dataclasses.replace(cfg, rope_theta=None))
    rotation = formulas.rope(cfg)
    # pairs counted from 1, as the dimensions d1 … d64 on screen (was a = 0, …, 31 with θ_a = 100,000^(−2a/64))
    assert "x_{a+32}" in rotation and "100{,}000^{-2(a-1)/64}" in rotation and r"a = 1, \dots, 32" in rotation
    assert "R_{p' - p}" in formulas.rope_product()


# --- the decoder's head statistics ------------------------------------------------------------------------------

def _reference_decoder_stats(tokens, attn, special, window=head_stats.LOCAL_WINDOW):
    """The decoder split for one layer (h, n, n), query by query: queries are every token but the first and the
    special ones; each key goes to the first part that fits: first token, self, previous, 2..window back, further."""
    queries = [j for j in range(1, len(tokens)) if tokens[j] not in special]
    names = ("first", "self", "prev", "local", "elsewhere")
    parts = {name: np.zeros((attn.shape[0], len(queries))) for name in names}
    for q, j in enumerate(queries):
        for k in range(len(tokens)):
            part = ("first" if k == 0 else "self" if k == j else "prev" if k == j - 1
                    else "local" if 2 <= j - k <= window else "elsewhere")
            parts[part][:, q] += attn[:, j, k]
    rows = attn[:, queries].astype(np.float64)
    entropy = -np.where(rows > 0, rows * np.log2(np.where(rows > 0, rows, 1)), 0).sum(-1)
    return {"entropy": entropy.mean(-1), **{name: v.mean(-1) for name, v in parts.items()}}


def test_decoder_split_on_hand_made_weights():
    parts = head_stats.decoder_parts(("<s>",))
    n = 6
    prev = np.zeros((1, n, n))
    prev[0, 0, 0] = 1.0
    prev[0, np.arange(1, n), np.arange(n - 1)] = 1.0
    cols = head_stats.layer_summary(prev, list("abcdef"), parts)
    # Queries 2..6: the second token's previous token is the first token, so that weight counts as first token.
    assert cols["first"][0] == pytest.approx(0.2) and cols["prev"][0] == pytest.approx(0.8)
    assert cols["self"][0] == cols["local"][0] == cols["elsewhere"][0] == 0.0 and cols["entropy"][0] == 0.0
    back3 = np.zeros((1, n, n))
    for j in range(n):
        back3[0, j, max(j - 3, 0)] = 1.0
    cols = head_stats.layer_summary(back3, list("abcdef"), parts)
    assert cols["local"][0] == pytest.approx(2 / 5) and cols["first"][0] == pytest.approx(3 / 5)
    special = head_stats.layer_summary(prev, ["a", "<s>", "c", "d", "e", "f"], parts)  # query 2 left out
    assert special["first"][0] == 0.0 and special["prev"][0] == 1.0
    row = {"first": 0.6, "self": 0.1, "prev": 0.1, "local": 0.1, "elsewhere": 0.1}
    assert head_stats.dominant_pattern(row, parts=parts) == "sink on the first token"
    assert head_stats.pattern_kind(row, parts=parts) == head_stats.SINK
    assert head_stats.dominant_pattern({**row, "first": 0.1, "local": 0.6}, parts=parts) == "local window"
    assert head_stats.kind_counts([row], parts) == {head_stats.SINK: 1, head_stats.POSITIONAL: 0,
                                                     head_stats.CONTENT: 0, head_stats.MIXED: 0}


def test_induction_pairs_point_after_the_earlier_copy():
    q, k = head_stats.induction_pairs(list("abcabc"))
    assert list(zip(q, k, strict=True)) == [(3, 1), (4, 2), (5, 3)]
    assert head_stats.induction_pairs(list("aa"))[0].size == 0           # the key would be the query itself
    assert head_stats.induction_pairs(list("aba"))[0].size == 0          # the key would be the previous token
    q, k = head_stats.induction_pairs(["x", "<s>", "y", "z", "<s>", "w"], special=("<s>",))
    assert q.size == 0
    q, k = head_stats.induction_pairs(list("abcxabca"))
    assert list(zip(q, k, strict=True)) == [(4, 1), (5, 2), (6, 3), (7, 5)]  # the latest earlier copy counts


def test_parts_come_from_each_model(smollm2):
    from mha_core.pretrained import load_minilm

    decoder = head_stats.parts_for(smollm2)
    assert decoder.kind == "decoder" and "<|im_start|>" in decoder.special and len(decoder.special) == 17
    assert "[CLS]" not in str(decoder.labels) and "[CLS]" not in str(decoder.patterns)
    encoder = head_stats.parts_for(load_minilm())
    assert (encoder.start, encoder.end) == ("[CLS]", "[SEP]") and encoder.labels["cls"] == "[CLS]"


@pytest.mark.parametrize("text", [INDUCTION, DECODER_SENTENCES["Chat template (special tokens)"]])
def test_decoder_summary_matches_stats_of_the_reference_attention(smollm2, runs, smollm2_reference, text):
    parts = head_stats.parts_for(smollm2)
    rows = head_stats.head_summary(runs(text), parts=parts)
    assert len(rows) == 270 and set(rows[0]) == {"layer", "head", *parts.stat_columns}
    tokens, attentions, _, _ = smollm2_reference(text)
    pairs = head_stats.induction_pairs(tokens, parts.special)
    for l, attn in enumerate(attentions):
        expected = _reference_decoder_stats(tokens, attn, parts.special)
        for column, values in expected.items():
            np.testing.assert_allclose(head_stats.summary_array(rows, column)[l], values, atol=1e-4,
                                       err_msg=f"layer {l} {column}")
        induction = head_stats.summary_array(rows, "induction")[l]
        if pairs[0].size:
            np.testing.assert_allclose(induction, attn[:, pairs[0], pairs[1]].mean(-1), atol=1e-4)
        else:
            assert np.isnan(induction).all()
    for row in rows:
        assert sum(row[name] for name in parts.columns) == pytest.approx(1, abs=1e-5)


def test_smollm2_has_induction_heads_on_the_repeated_phrase_and_sinks_everywhere(smollm2, runs):
    """What the pages say of the real model: some head scores high on the repeated phrase (layer 18's heads 5 and 6,
    which share key/value head 2, and layer 19's head 7), many heads park on the first token."""
    parts = head_stats.parts_for(smollm2)
    rows = head_stats.head_summary(runs(INDUCTION), parts=parts)
    best = head_stats.top_heads(rows, "induction", head_stats.INDUCTION_MIN_SCORE)
    assert best and {(r["layer"] + 1, r["head"] + 1) for r in best} <= {(18, 5), (18, 6), (19, 7)}, best
    assert best[0]["induction"] > 0.6
    counts = head_stats.kind_counts(rows, parts)
    assert counts[head_stats.SINK] > 100
    no_repeat = head_stats.head_summary(runs(FACT), parts=parts)
    assert all(math.isnan(r["induction"]) for r in no_repeat)


# --- the check against PyTorch ----------------------------------------------------------------------------------

def test_the_torch_check_covers_rope_and_catches_a_missing_rotation(smollm2, runs):
    run = runs(INDUCTION)
    for l in (0, 17, 29):
        trace, w = run.layers[l], smollm2.layer_weights[l].attention
        diff = reference.torch_difference(trace, w, smollm2.config)
        assert reference.reference_name(trace, smollm2.config) == reference.ROTARY
        assert reference.agrees(diff, trace), (l, diff)
        plain = dataclasses.replace(smollm2.config, rope_theta=None)
        unrotated = mc.forward(trace.x, w, plain)  # the same layer without RoPE: the check must see it
        assert not reference.agrees(reference.torch_difference(unrotated, w, smollm2.config), unrotated)


def test_agreement_is_relative_to_the_size_of_the_output():
    trace = mc.forward(np.full((2, 4), 30.0, np.float32), mc.init_weights(mc.MHAConfig(4, 2), dtype=np.float32),
                       mc.MHAConfig(4, 2))
    big = float(np.abs(trace.output).max())
    assert big > 1
    assert reference.agrees(0.9e-5 * big, trace) and not reference.agrees(1.1e-5 * big, trace)


# --- switched-off heads, against transformers with the heads' slices zeroed -------------------------------------

def test_heads_off_in_the_run_match_transformers_with_those_heads_zeroed(smollm2, runs, smollm2_reference):
    mask = np.ones((30, 9))
    mask[17, [4, 5]] = 0.0
    run = runs(INDUCTION, head_mask=mask)
    expected = llama_without_heads(smollm2_reference, INDUCTION, 17, [4, 5])
    assert run.next_tokens[0].id == int(np.argmax(expected))
    for t in run.next_tokens:
        assert t.probability == pytest.approx(expected[t.id], abs=2e-4)
    # the heads did matter (0.515 with them, 0.489 without: the later induction heads still copy the phrase)
    assert abs(run.next_tokens[0].probability - runs(INDUCTION).next_tokens[0].probability) > 0.01


def test_ranking_a_decoders_heads_by_the_next_token_matches_transformers(smollm2, runs, smollm2_reference):
    full = runs(INDUCTION)
    ranking = ablation.rank_heads_in_model(smollm2, full, layer=17)
    top = full.next_tokens[0]
    assert ranking.embedding_cosine is None and ranking.top_token == top.id
    assert ranking.top_probability == top.probability
    for i in (0, 8):  # the first and the last head (app/test_smollm2_pages.py checks all nine against
        # the model's own runs with that head off, and test_heads_off_in_the_run_... those runs against transformers)
        expected = llama_without_heads(smollm2_reference, INDUCTION, 17, [i])[top.id]
        assert ranking.next_probability[i] == pytest.approx(expected, abs=2e-4), i
    assert ranking.relative_change.shape == (9,) and (ranking.relative_change > 0).all()


# --- decoder figures --------------------------------------------------------------------------------------------

def test_next_token_figure_shows_the_five_spelled_as_the_tokenizer_spells_them(runs, smollm2_reference):
    run = runs(FACT)
    fig = dfig.next_token_figure(run.next_tokens, run.tokens[-1])
    assert list(fig.data[0].x) == [t.probability for t in run.next_tokens]
    spelled = smollm2_reference.tokenizer.convert_ids_to_tokens([t.id for t in run.next_tokens])
    assert list(fig.data[0].y) == [f"{i + 1}  {token}" for i, token in enumerate(spelled)]
    # as the token tables spell them: Ġ is a space, so " Paris" and "Paris" differ on screen
    assert fig.data[0].y[0] == "1  ĠParis" and "“Ġis”" in fig.layout.title.text
    assert fig.layout.xaxis.range == (0, 1)
    special = dataclasses.replace(run.next_tokens[0], token="<|im_end|>", text="")
    assert dfig.next_token_label(special) == "<|im_end|>"


def test_rope_figures_show_the_trace_and_the_products(runs):
    trace = runs(INDUCTION).layers[17]
    tokens = runs(INDUCTION).tokens
    fig = dfig.rope_figure(trace, 4, tokens, group_size=3)
    z = [np.asarray(d.z, dtype=np.float64) for d in fig.data]
    np.testing.assert_array_equal(z[0], trace.q_before_rope[4])
    np.testing.assert_array_equal(z[1], trace.q[4])
    np.testing.assert_allclose(z[2], trace.q[4] - trace.q_before_rope[4], rtol=1e-6)
    np.testing.assert_array_equal(z[3], trace.k_before_rope[1])  # query head 5 reads key/value head 2
    np.testing.assert_array_equal(z[4], trace.k[1])
    assert "Q_5 before RoPE" in fig.layout.annotations[0].text and "K_2" in fig.layout.annotations[3].text
    rel = rope.relative_scores(trace.q_before_rope[4, 13], trace.k_before_rope[1, 6], 1e5, 16)
    fig = dfig.rope_distance_figure(rel, "a", "b", 4)
    heat = np.asarray(fig.data[0].z, dtype=np.float64)
    np.testing.assert_allclose(heat[np.tril_indices(16)], (rel.products - rel.unrotated)[np.tril_indices(16)])
    assert np.isnan(heat[np.triu_indices(16, 1)]).all()  # keys after the query: never computed by a decoder
    # the product at the pair's real distance is the raw score the attention page shows
    assert rel.by_distance[13 - 6] == pytest.approx(float(trace.raw_scores(4)[13, 6]), rel=1e-5)
    words = str(fig.layout.meta)  # its chart in words names the distance as its axis does (was "a − b")
    assert "by distance t − s" in words and "a − b" not in words


def test_rope_multiplications_are_two_per_rotated_number(runs):
    from mha_core import cost

    trace = runs(FACT).layers[0]
    n = len(trace.x)
    assert cost.rope_multiplications(n, n, 576, 9, 3) == 2 * (trace.q.size + trace.k.size) == 2 * (5 * 576 + 5 * 192)


def test_pipeline_says_rope_and_grouped_heads():
    text = " ".join(a.text for a in F.pipeline_figure(5, 576, 9, 64, kv_heads=3, rope=True).layout.annotations)
    assert "Q<sub>i</sub> = RoPE(X W<sup>Q</sup><sub>i</sub>)" in text
    assert "V<sub>j</sub> = X W<sup>V</sup><sub>j</sub>" in text
    assert "j = ⌈i/3⌉" in text and "K, V: 3 × (5 × 64)" in text
    plain = " ".join(a.text for a in F.pipeline_figure(5, 64, 8, 8).layout.annotations)
    assert "RoPE" not in plain and "⌈" not in plain and "8 heads × (5 × 8)" in plain
