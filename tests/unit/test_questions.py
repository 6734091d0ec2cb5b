"""Predict-then-reveal questions: every answer checked against the example's own arrays, in every mode."""

from __future__ import annotations

import re

import numpy as np
import pytest

import mha_core as mc
from mha_core.teaching import questions
from mha_core.teaching.presets import TINY_CONFIG, TINY_TOKENS, tiny_example

SENTENCE = "The cat sat on the mat because it was tired."


def _tiny():
    x, w = tiny_example()
    return mc.forward(x, w, TINY_CONFIG), w, list(TINY_TOKENS)


def _sentence(h=8, kv=None, causal=False):
    cfg = mc.MHAConfig(64, h, n_kv_heads=kv, causal=causal)
    tokens = mc.tokenize(SENTENCE)
    w = mc.init_weights(cfg, seed=1)
    return mc.forward(mc.embed(tokens, 64, seed=1), w, cfg), w, tokens


def _minilm():
    from mha_core.pretrained import load_minilm

    model = load_minilm()
    run = model.run(SENTENCE)
    return run.layers[3], model.layer_weights[3].attention, list(run.tokens)


EXAMPLES = {"tiny": _tiny, "sentence": _sentence, "one head": lambda: _sentence(h=1),
            "gqa": lambda: _sentence(kv=2), "causal": lambda: _sentence(causal=True), "minilm": _minilm}


@pytest.mark.parametrize("mode", EXAMPLES)
def test_every_question_is_answered_from_the_example(mode):
    tr, w, tokens = EXAMPLES[mode]()
    n, d_model = len(tokens), w.W_O.shape[0]
    h = tr.weights.shape[0]
    d_k = d_model // h
    labels = [f"<{t}>" for t in tokens]
    for head in range(h):
        for query in range(n):
            for kind in questions.KINDS:
                q = questions.ask(kind, tr, w, labels, head, query)
                assert q.prompt and q.answer and "nan" not in (q.prompt + q.answer).lower()
    assert f"**{n * d_model:,}**" in questions.x_size(tr).answer
    shape = questions.q_shape(tr, h - 1)
    assert f"**{n} × {d_k}**" in shape.answer and f"Q_{{{h}}}" in shape.prompt
    assert shape.why == (f"Each of the {h} heads gets d_k = d_model / h = {d_model} / {h} = {d_k} of the projection's "
                         "columns." if h > 1 else f"The one head gets all d_k = d_model = {d_k} of the projection's "
                         "columns.")
    width = questions.concat_width(tr).answer
    assert f"**{h * d_k}**" in width and f"d_model = {d_model} again" in width
    biases = sum(b.size for b in (w.b_O,) if b is not None)
    answer = questions.w_o_size(w).answer
    assert f"**{d_model * d_model:,}** numbers" in answer
    assert (f"{d_model * d_model + biases:,} numbers" in answer) == (biases > 0)


@pytest.mark.parametrize("mode", EXAMPLES)
def test_the_strongest_key_is_the_rows_largest_weight(mode):
    tr, w, tokens = EXAMPLES[mode]()
    labels = [f"<{t}>" for t in tokens]
    for head in range(tr.weights.shape[0]):
        for query in range(len(tokens)):
            row = tr.weights[head, query]
            q = questions.strongest_key(tr, labels, head, query)
            assert f"query {query + 1} {labels[query]}" in q.prompt and f"head {head + 1}" in q.prompt
            best = int(np.argmax(row))
            shown = re.search(r"with weight (\d\.\d+)", q.answer).group(1)
            assert f"{best + 1} {labels[best]}" in q.answer and float(shown) == pytest.approx(row[best], abs=1e-4)
            tied = np.flatnonzero(row.max() - row <= questions.TIE)
            assert ("a tie" in q.answer) == (len(tied) > 1)


def test_the_tiny_example_names_both_tied_keys():
    tr, w, tokens = _tiny()
    # Head 2, query "I": the keys "like" and "tea" score the same (see test_worked), so their weights are equal.
    q = questions.strongest_key(tr, tokens, head=1, query=0)
    assert "2 like and 3 tea" in q.answer and "a tie" in q.answer
    i, like, tea = q.choices
    assert like.startswith("2 like: z = ") and tea.startswith("3 tea: z = ") and like[7:] == tea[6:]
    assert q.check(like) and q.check(tea) and not q.check(i), "either tied key is a right answer"


@pytest.mark.parametrize("mode", EXAMPLES)
def test_the_strongest_key_can_be_reasoned_from_the_scores_its_choices_show(mode):
    """Softmax keeps the order of the scores and gives a blocked key 0: the choice with the largest score shown, of
    those not blocked, is a right answer, and the scores shown are the trace's, rounded."""
    tr, w, tokens = EXAMPLES[mode]()
    for head in range(tr.weights.shape[0]):
        for query in range(len(tokens)):
            q = questions.strongest_key(tr, tokens, head, query)
            if tr.blocked_rows[head, query]:
                continue
            shown = [re.fullmatch(r"(\d+) .*: z = (-?[0-9.]+)(, blocked)?", c).groups() for c in q.choices]
            np.testing.assert_allclose([float(z) for _, z, _ in shown], tr.scores[head, query], atol=0.005)
            blocked = tr.mask is not None and tr.mask[head, query]
            assert [b is not None for _, _, b in shown] == list(np.broadcast_to(blocked, len(shown)))
            open_scores = [float(z) if b is None else -np.inf for _, z, b in shown]
            assert q.check(q.choices[int(np.argmax(open_scores))]), (mode, head, query, q.choices)


def test_the_pronoun_question_asks_about_it():
    tr, w, tokens = _sentence()
    it = tokens.index("it")
    q = questions.strongest_key(tr, [f"“{t}”" for t in tokens], 2, it)
    assert q.prompt.startswith(f"In head 3, which token will query {it + 1} “it” attend to most, given each key's "
                               "score")


def test_one_weight_by_hand_and_the_strongest_share_ask_about_the_query_and_key_by_name():
    tr, _, tokens = _sentence()
    labels = [f"`{t}`" for t in tokens]
    cell = questions.cell_weight(tr, labels, 0, 0, 2)
    assert cell.prompt.startswith("In head 1, what weight $\\alpha_{ts}$ does query 1 `The` give key 3 `sat`? Its "
                                  "score is $z_{ts}$ = ")
    share = questions.strongest_share(tr, labels, 0, 0)
    assert share.prompt.startswith("In head 1, softmax turns the scores $z_{ts}$ of query 1 `The` (")
    assert share.prompt.endswith("How much weight will its strongest key get?")


def test_cross_attention_names_the_key_from_the_second_sentence():
    cfg = mc.MHAConfig(16, 2)
    queries, keys = ["a", "b"], ["x", "y", "z"]
    x, x_kv = mc.random_input(2, 16, seed=1), mc.random_input(3, 16, seed=2)
    tr = mc.forward(x, mc.init_weights(cfg, seed=1), cfg, kv=x_kv)
    best = int(np.argmax(tr.weights[1, 0]))
    q = questions.ask("strongest_key", tr, mc.init_weights(cfg), queries, 1, 0, key_labels=keys)
    assert "query 1 a" in q.prompt and f"**{best + 1} {keys[best]}**" in q.answer


def test_a_fully_blocked_row_is_asked_about_differently():
    cfg = mc.MHAConfig(8, 2)
    blocked = np.zeros((3, 3), bool)
    blocked[2] = True
    tr = mc.forward(mc.random_input(3, 8), mc.init_weights(cfg), cfg, attn_mask=blocked)
    q = questions.strongest_key(tr, ["a", "b", "c"], 0, 2)
    assert "blocks every key" in q.prompt and "All 0" in q.answer


def test_heads_cost_is_counted_from_the_shapes():
    tr, w, tokens = _sentence()
    n = len(tokens)
    same = 4 * n * 64 * 64 + 2 * n * n * 64  # projections and W_O, then scores and weighted sum, for any h
    q = questions.heads_cost(tr)
    assert q.answer.startswith(f"**the same**, {same:,} multiply-adds either way") and "against" not in q.answer
    # with 2 K/V heads the question asks about splitting alone, and names the sharing's saving apart
    gqa = questions.heads_cost(_sentence(kv=2)[0])
    assert "one K/V head per query head" in gqa.prompt and "sharing of 2 K/V heads" in gqa.prompt
    assert gqa.answer.startswith(f"**the same**, {same:,} multiply-adds either way")
    fewer = 2 * n * 64 * 64 + 2 * n * 64 * (2 * 8) + 2 * n * n * 64  # K and V projections shrink to 2 heads of 8
    assert f"take {n * 64 * 16:,} multiply-adds each instead of {n * 64 * 64:,}" in gqa.why
    assert f"the whole layer {fewer:,} instead of {same:,}" in gqa.why and f"{fewer:,}" in gqa.facts
    single = questions.heads_cost(_sentence(h=1)[0])
    assert "1 head of d_k = 64" in single.prompt and "2 heads of 32" in single.prompt
    assert single.answer.startswith("**the same**")


def test_the_concatenation_question_has_a_one_head_form():
    """One head gives the concatenation alone: the prompt speaks of one head, not of "the 1 heads ... their"."""
    one = questions.concat_width(_sentence(h=1)[0]).prompt
    assert one.startswith("The one head gives") and "heads" not in one and "their" not in one
    assert questions.concat_width(_sentence()[0]).prompt.startswith("The 8 heads each give")


def test_a_tie_is_named_in_position_order():
    """A tie is named in position order: the first query of a head planted on the previous token has none, so its
    row is even, equal only to rounding, and the answer lists keys 1, 2, … in turn."""
    cfg = mc.MHAConfig(64, 8)
    tokens = mc.tokenize(SENTENCE)
    x = mc.embed(tokens, 64, seed=1)
    w = mc.plant_head(mc.init_weights(cfg, seed=1), cfg, 2, "previous", 4.0, x)
    tr = mc.forward(x, w, cfg)
    row = tr.weights[2, 0]
    assert np.ptp(row) <= questions.TIE and len(set(row.tolist())) > 1, "a tie to rounding, not exact equality"
    q = questions.strongest_key(tr, tokens, 2, 0)
    named = [int(k) for k in re.findall(r"(?:\*\*| and )(\d+) ", q.answer.split(", with weight")[0])]
    assert named == list(range(1, len(tokens) + 1)), q.answer


def test_keys_that_tie_after_the_strongest_are_named_as_a_tie():
    """On a planted head whose ten other keys all have (1 − 0.8452) / 10 = 0.0155, the answer names them as a tie,
    never one of them as the runner-up."""
    cfg = mc.MHAConfig(128, 8)  # the app's default: d_k = 16 ≥ 11 keys, so the planted rule is met exactly
    tokens = mc.tokenize(SENTENCE)
    x = mc.embed(tokens, 128, seed=1)
    tr = mc.forward(x, mc.plant_head(mc.init_weights(cfg, seed=1), cfg, 2, "first", 4.0, x), cfg)
    query = 4
    row = tr.weights[2, query]
    others = np.delete(row, 0)
    assert int(np.argmax(row)) == 0 and f"{others.min():.4f}" == f"{others.max():.4f}", "ten keys that read alike"
    q = questions.strongest_key(tr, tokens, 2, query)
    assert "Next comes" not in q.why
    assert f"The other {len(tokens) - 1} keys tie at {(1 - row[0]) / (len(tokens) - 1):.4f}." in q.why


def test_a_runner_up_tie_among_some_keys_names_each_of_them():
    """Two keys after the strongest with equal weights, a third lower: both named as a tie, the lower one not."""
    cfg = mc.MHAConfig(4, 1, bias=False)
    eye = np.eye(4, dtype=np.float32)
    w = mc.MHAWeights(W_Q=eye * 3, W_K=eye, W_V=eye, W_O=eye)
    x = np.array([[1, 0, 0, 0], [1, 0, 0, 0], [0, 0.5, 0, 0], [0, 0, 0.5, 0], [0, 0, 0, 0]], np.float32)
    tr = mc.forward(x, w, cfg)  # query 1's scores: 3, 3 (keys 1, 2 tie first), 0, 0, 0 (keys 3, 4, 5 tie)
    q = questions.strongest_key(tr, list("abcde"), 0, 0)
    assert "**1 a and 2 b**" in q.answer and "The other 3 keys tie at" in q.why
    x[4] = [-0.5, 0, 0, 0]  # key 5's score drops below those of keys 3 and 4
    q = questions.strongest_key(mc.forward(x, w, cfg), list("abcde"), 0, 0)
    assert "Next come 2 keys that tie at" in q.why and ": 3 c, 4 d." in q.why


def test_unknown_question_kinds_are_refused():
    tr, w, tokens = _tiny()
    with pytest.raises(KeyError, match="unknown question"):
        questions.ask("favourite_colour", tr, w, tokens, 0, 0)


@pytest.mark.parametrize("mode", EXAMPLES)
def test_every_wrong_choice_says_what_it_is(mode):
    """Each wrong choice is told what it is, not only "Not yet: try again"."""
    tr, w, tokens = EXAMPLES[mode]()
    for head in (0, tr.weights.shape[0] - 1):
        for query in (0, len(tokens) - 1):
            for kind in questions.KINDS:
                q = questions.ask(kind, tr, w, tokens, head, query, key=len(tokens) // 2)
                for choice in q.choices:
                    right = choice == q.correct or choice in q.also_right
                    assert bool(q.reason(choice)) != right, (kind, choice)
    n, d_model = tr.x.shape
    h, d_k = tr.heads.shape[0], tr.heads.shape[2]
    if d_k != d_model:
        assert questions.q_shape(tr, 0).reason(f"{n} × {d_model}").startswith(f"that is X's shape, {n} × {d_model}")
    if d_k not in (n, h, h * d_k):
        assert "one head's width" in questions.concat_width(tr).reason(d_k)


def _softmax_row(tr, head, query):
    """The query's weights again, with torch: softmax of the scaled scores with blocked keys set to −∞."""
    import torch

    z = torch.tensor(tr.scores[head, query], dtype=torch.float64)
    if tr.mask is not None:
        z = z.masked_fill(torch.tensor(tr.mask[head, query]), float("-inf"))
    return torch.softmax(z, dim=0).numpy()


@pytest.mark.parametrize("mode", ["tiny", "sentence", "causal", "minilm"])
def test_one_weight_by_hand_and_the_strongest_share_are_softmax(mode):
    """By hand asks for one cell's weight from its score and the row's sum, not again for the largest score; the
    lesson's softmax screen asks how much the strongest key gets. Both answers against torch's softmax."""
    tr, w, tokens = EXAMPLES[mode]()
    n = len(tokens)
    for head, query in ((0, n - 1), (tr.weights.shape[0] - 1, n // 2)):
        row = _softmax_row(tr, head, query)
        for key in range(n):
            q = questions.cell_weight(tr, tokens, head, query, key)
            assert q.correct == ("0" if row[key] == 0 else f"{row[key]:.4f}")
            assert "largest" not in q.prompt or "row's largest score" in q.prompt
        share = questions.strongest_share(tr, tokens, head, query)
        low = [0, 0.25, 0.5, 0.75][questions.SHARES.index(share.correct)]
        assert low <= row.max() < low + 0.25 or (low == 0.75 and row.max() <= 1)
        assert "which token" not in share.prompt
    tr_key = questions.cell_weight(tr, tokens, 0, n - 1, 0)
    e = float(np.exp(tr.scores[0, n - 1, 0] - tr.scores[0, n - 1][~_blocked(tr, 0, n - 1)].max()))
    if f"{e:.4f}" in tr_key.choices:
        assert "divided by the row's sum" in tr_key.reason(f"{e:.4f}")


def _blocked(tr, head, query):
    return np.zeros(tr.scores.shape[-1], bool) if tr.mask is None else tr.mask[head, query]


def test_the_width_of_shared_keys_and_values_is_a_named_slip():
    """With 2 K/V heads, the width of K or V (h_kv · d_v) on Step 3 is a named slip, not only "Not yet"."""
    tr, w, _ = _sentence(h=8, kv=2)                      # d_model 64: d_k = 8, K and V 2 · 8 = 16 wide
    kv_width = tr.k.shape[0] * tr.k.shape[2]
    assert kv_width == 16 and tr.concat.shape[1] == 64
    concat = questions.concat_width(tr)
    assert not concat.check(kv_width) and "width of K or V" in concat.reason(kv_width)
    w_o = questions.w_o_size(w)
    assert not w_o.check(kv_width * 64) and "W_K or W_V" in w_o.reason(kv_width * 64)
    plain = _sentence(h=8)
    assert all(given != plain[0].concat.shape[1] for given, _ in questions.concat_width(plain[0]).wrong), \
        "without sharing, K/V width is the answer itself: no slip named for it"


def test_the_w_o_question_leaves_biases_aside_only_where_there_are_some():
    """The W_O question leaves biases aside only where the layer has some (SmolLM2's have none)."""
    for bias in (True, False):
        cfg = mc.MHAConfig(16, 4, bias=bias)
        q = questions.w_o_size(mc.init_weights(cfg, seed=0))
        assert ("biases left aside" in q.prompt) == bias
        assert q.answer.endswith("this layer has no biases.") != bias
    assert questions.w_o_size(_tiny()[1]).answer == "4 × 4 = **16** numbers; this layer has no biases."
