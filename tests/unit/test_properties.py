"""Properties that must hold for every configuration and input, checked with hypothesis.

Reference values come from the mathematics (written out here in plain NumPy) or from torch's
F.scaled_dot_product_attention (references.sdpa_attention), never from mha_core itself. How many examples each test
draws is the hypothesis profile's (conftest.py): 50, the same on every run, by default; 1,000 new ones each run with
pytest --hypothesis-profile=thorough.
"""

from __future__ import annotations

import dataclasses
import string
import unicodedata

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mha_core as mc
from mha_core.analysis.stats import row_entropy
from references import sdpa_attention

BACKENDS = ["numpy", "torch"]


@st.composite
def setups(draw, max_heads=6, max_dk=6, max_tokens=8):
    """(cfg, weights float64 with random biases, x, kv or None) for a random small layer."""
    h = draw(st.integers(1, max_heads))
    d_k = draw(st.integers(1, max_dk))
    bias = draw(st.booleans())
    n = draw(st.integers(1, max_tokens))
    cross = draw(st.booleans())
    m = draw(st.integers(1, max_tokens)) if cross else n
    seed = draw(st.integers(0, 2**31 - 1))
    cfg = mc.MHAConfig(h * d_k, h, bias=bias)
    w = mc.init_weights(cfg, seed=seed, dtype=np.float64)
    rng = np.random.default_rng(seed)
    if bias:
        w = dataclasses.replace(w, **{k: rng.uniform(-0.5, 0.5, getattr(w, k).shape) for k in ("b_Q", "b_K", "b_V",
                                                                                                  "b_O")})
    x = rng.standard_normal((n, cfg.d_model))
    kv = rng.standard_normal((m, cfg.d_model)) if cross else None
    return cfg, w, x, kv


# --------------------------------------------------------------------------------------------------------------------
# Attention weights
# --------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@given(setup=setups(), mask_seed=st.integers(0, 2**31 - 1), p_block=st.sampled_from([0.0, 0.3, 0.7, 1.0]),
       per_head=st.booleans())
def test_weight_rows_sum_to_one_on_unmasked_rows(backend, setup, mask_seed, p_block, per_head):
    cfg, w, x, kv = setup
    n, m = x.shape[0], (x if kv is None else kv).shape[0]
    shape = (cfg.n_heads, n, m) if per_head else (n, m)
    mask = np.random.default_rng(mask_seed).random(shape) < p_block
    t = mc.forward(x, w, cfg, kv=kv, attn_mask=mask, backend=backend)
    full = np.broadcast_to(mask, (cfg.n_heads, n, m))
    blocked = full.all(axis=-1)  # (h, n), from the mask we drew
    np.testing.assert_array_equal(t.blocked_rows, blocked)
    assert (t.weights >= 0).all()
    assert (t.weights[full] == 0).all()  # blocked keys get exactly zero
    sums = t.weights.sum(axis=-1)
    np.testing.assert_allclose(sums[~blocked], 1.0, rtol=0, atol=1e-12)
    assert (sums[blocked] == 0).all()
    assert (t.heads[blocked] == 0).all()
    assert np.isfinite(t.output).all()


@pytest.mark.parametrize("backend", BACKENDS)
@given(setup=setups())
def test_causal_rows_ignore_later_keys(backend, setup):
    cfg, w, x, _ = setup
    cfg = dataclasses.replace(cfg, causal=True)
    n = x.shape[0]
    t = mc.forward(x, w, cfg, backend=backend)
    later = np.arange(n)[None, :] > np.arange(n)[:, None]  # key j after query i
    assert (t.weights[:, later] == 0).all()  # exactly zero, not merely small
    assert (t.weights[:, ~later] > 0).all()
    np.testing.assert_allclose(t.weights.sum(-1), 1.0, rtol=0, atol=1e-12)
    # Consequence: changing the last token changes no output row before it.
    if n > 1:
        x2 = x.copy()
        x2[-1] += 1.0
        t2 = mc.forward(x2, w, cfg, backend=backend)
        np.testing.assert_allclose(t2.output[:-1], t.output[:-1], rtol=0, atol=1e-12)
        assert not np.allclose(t2.output[-1], t.output[-1])


@pytest.mark.parametrize("backend", BACKENDS)
@given(setup=setups(), perm_seed=st.integers(0, 2**31 - 1))
def test_permutation_equivariance(backend, setup, perm_seed):
    """Without positional encoding, attention treats tokens as a set: permuting X permutes everything alike."""
    cfg, w, x, _ = setup
    n = x.shape[0]
    perm = np.random.default_rng(perm_seed).permutation(n)
    a = mc.forward(x, w, cfg, backend=backend)
    b = mc.forward(x[perm], w, cfg, backend=backend)
    np.testing.assert_allclose(b.output, a.output[perm], rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.weights, a.weights[:, perm][:, :, perm], rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.q, a.q[:, perm], rtol=0, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@given(setup=setups(max_heads=1, max_dk=16))
def test_single_head_by_hand(backend, setup):
    """h = 1 is softmax(Q K^T / sqrt(d)) V W_O^T + b_O, written out in plain NumPy."""
    cfg, w, x, kv = setup
    assert cfg.n_heads == 1
    xkv = x if kv is None else kv
    bq, bk, bv, bo = ((np.zeros(a.shape[0]) if b is None else b)
                      for a, b in ((w.W_Q, w.b_Q), (w.W_K, w.b_K), (w.W_V, w.b_V), (w.W_O, w.b_O)))
    Q, K, V = x @ w.W_Q.T + bq, xkv @ w.W_K.T + bk, xkv @ w.W_V.T + bv
    S = Q @ K.T / np.sqrt(cfg.d_model)
    E = np.exp(S - S.max(axis=1, keepdims=True))
    A = E / E.sum(axis=1, keepdims=True)
    expected = A @ V @ w.W_O.T + bo
    t = mc.forward(x, w, cfg, kv=kv, backend=backend)
    np.testing.assert_allclose(t.weights[0], A, rtol=0, atol=1e-12)
    np.testing.assert_allclose(t.output, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@given(setup=setups(), causal=st.booleans())
def test_any_head_count_matches_sdpa(backend, setup, causal):
    cfg, w, x, kv = setup
    if causal and kv is not None:
        kv = None  # keep SDPA's is_causal to the square case
    cfg = dataclasses.replace(cfg, causal=causal)
    ref = sdpa_attention(w, cfg, x, kv)
    t = mc.forward(x, w, cfg, kv=kv, backend=backend)
    np.testing.assert_allclose(t.heads, ref.heads, rtol=0, atol=1e-10)
    np.testing.assert_allclose(t.output, ref.output, rtol=0, atol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
@given(setup=setups(max_heads=8))
def test_shapes_and_concat(backend, setup):
    cfg, w, x, kv = setup
    n, m = x.shape[0], (x if kv is None else kv).shape[0]
    h, d_k = cfg.n_heads, cfg.d_k
    t = mc.forward(x, w, cfg, kv=kv, backend=backend)
    assert t.concat.shape == (n, cfg.d_model) and h * d_k == cfg.d_model
    assert t.q.shape == t.heads.shape == (h, n, d_k)
    assert t.k.shape == t.v.shape == (h, m, d_k)
    assert t.scores.shape == t.masked_scores.shape == t.weights.shape == (h, n, m)
    assert t.output.shape == (n, cfg.d_model)
    assert t.blocked_rows.shape == (h, n)
    # Head i occupies columns i*d_k ... (i+1)*d_k - 1 of the concatenation.
    for i in range(h):
        np.testing.assert_array_equal(t.concat[:, i * d_k:(i + 1) * d_k], t.heads[i])
    # Head i's queries come from rows i*d_k ... of W_Q.
    bq = 0 if w.b_Q is None else w.b_Q[:d_k]
    np.testing.assert_allclose(t.q[0], x @ w.W_Q[:d_k].T + bq, rtol=0, atol=1e-12)


@given(scale=st.floats(0.01, 3.0), setup=setups(max_heads=3))
def test_explicit_scale(scale, setup):
    cfg, w, x, _ = setup
    t = mc.forward(x, w, dataclasses.replace(cfg, scale=scale))
    q = x @ w.W_Q.T + (0 if w.b_Q is None else w.b_Q)
    k = x @ w.W_K.T + (0 if w.b_K is None else w.b_K)
    d_k = cfg.d_k
    np.testing.assert_allclose(t.scores[0], scale * q[:, :d_k] @ k[:, :d_k].T, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------------------------------------------------
# Inputs: embeddings, positional encoding, tokenizer
# --------------------------------------------------------------------------------------------------------------------

words = st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=8)
punctuation = st.sampled_from(list(".,;:!?()[]{}-\"/*&%$#@+="))


@given(word=words, left=st.lists(words, max_size=4), right=st.lists(words, max_size=4),
       d_model=st.integers(1, 32), seed=st.integers(0, 1000))
def test_embed_same_word_same_vector(word, left, right, d_model, seed):
    sentence_a = left + [word]
    sentence_b = [word.upper()] + right + [word.lower()]
    ea = mc.embed(sentence_a, d_model, seed=seed, positional=False)
    eb = mc.embed(sentence_b, d_model, seed=seed, positional=False)
    assert ea.shape == (len(sentence_a), d_model)
    np.testing.assert_array_equal(ea[-1], eb[0])  # case-insensitive, independent of neighbours and position
    np.testing.assert_array_equal(ea[-1], eb[-1])
    # Different words get different vectors (with overwhelming probability for a 64-bit seeded Gaussian).
    other = word + "x"
    assert not np.array_equal(mc.embed([other], d_model, seed=seed, positional=False)[0], ea[-1])
    # Different seeds give different vectors.
    assert not np.array_equal(mc.embed([word], d_model, seed=seed + 1, positional=False)[0], ea[-1])


@given(tokens=st.lists(words, min_size=1, max_size=10), d_model=st.integers(1, 33))
def test_positional_encoding_is_added(tokens, d_model):
    """With positional=True the sinusoidal encoding of Vaswani et al. (2017) is added, computed here by hand."""
    n = len(tokens)
    pe = np.zeros((n, d_model))
    for pos in range(n):
        for i in range(d_model):
            angle = pos / 10000 ** ((i - i % 2) / d_model)
            pe[pos, i] = np.sin(angle) if i % 2 == 0 else np.cos(angle)
    plain = mc.embed(tokens, d_model, positional=False, dtype=np.float64)
    with_pe = mc.embed(tokens, d_model, positional=True, dtype=np.float64)
    np.testing.assert_allclose(with_pe - plain, pe, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mc.positional_encoding(n, d_model), pe, rtol=0, atol=1e-12)


def test_positional_encoding_breaks_permutation_symmetry():
    """The same word twice: identical vectors without positions, different ones with them."""
    e = mc.embed(["cat", "cat"], 16, positional=False)
    np.testing.assert_array_equal(e[0], e[1])
    e = mc.embed(["cat", "cat"], 16, positional=True)
    assert not np.allclose(e[0], e[1])


@given(parts=st.lists(st.one_of(words, punctuation), min_size=1, max_size=12), glue=st.data())
def test_tokenize_splits_punctuation(parts, glue):
    """Words and punctuation marks come back as separate tokens, whether or not spaces separate them."""
    text = parts[0]
    for prev, part in zip(parts[:-1], parts[1:], strict=True):
        both_words = prev[0].isalnum() and part[0].isalnum()
        sep = " " if both_words else glue.draw(st.sampled_from(["", " ", "  ", "\t", "\n"]))
        text += sep + part
    text = glue.draw(st.sampled_from(["", " ", "\n"])) + text
    assert mc.tokenize(text) == parts


INVISIBLE_SEPARATORS = "\u200b\ufeff\u200e\u200f\u061c" + "".join(map(chr, [*range(0x202A, 0x202F),
                                                                             *range(0x2066, 0x206A)]))


def _separates(c: str) -> bool:
    """Whitespace, control characters and the invisible marks that split text (written out here, not imported)."""
    return c.isspace() or unicodedata.category(c) == "Cc" or c in INVISIBLE_SEPARATORS


def _attached(c: str) -> bool:
    """Characters that belong to the one before them: marks, format characters (joiners), skin tones."""
    return unicodedata.category(c) in ("Mn", "Mc", "Me", "Cf") or 0x1F3FB <= ord(c) <= 0x1F3FF


@given(text=st.text(min_size=1, max_size=40))
def test_tokenize_keeps_every_visible_character(text):
    """Joining the tokens gives back the text without its separators; every token is a word or one mark, each with
    the marks and joiners attached to it."""
    visible = "".join(c for c in text if not _separates(c))
    if not visible:
        with pytest.raises(mc.ConfigError):
            mc.tokenize(text)
        return
    tokens = mc.tokenize(text)
    assert "".join(tokens) == visible
    for tok in tokens:
        assert not any(_separates(c) for c in tok)
        base = [c for c in tok if not _attached(c)]
        assert (len(base) <= 1 or "\u200d" in tok or "\u200c" in tok
                or all(c.isalnum() or c in "_'’" for c in base)
                or all(0x1F1E6 <= ord(c) <= 0x1F1FF for c in base)), tok


@pytest.mark.parametrize("text, tokens", [
    ("cafe\u0301s", ["cafe\u0301s"]),                        # e + a combining acute accent
    ("نَصٌّ جَمِيل", ["نَصٌّ", "جَمِيل"]),                               # Arabic with vowel marks
    ("शांति!", ["शांति", "!"]),                                # Devanagari vowel signs
    ("می\u200cخواهم", ["می\u200cخواهم"]),                    # Persian: a zero-width non-joiner inside a word
    ("👍🏽 👨\u200d👩\u200d👧 🇫🇷🇩🇪", ["👍🏽", "👨\u200d👩\u200d👧", "🇫🇷", "🇩🇪"]),
    ("a\u200bb \u202eabc\u202c", ["a", "b", "abc"]),          # zero-width space and a right-to-left override
])
def test_tokenize_keeps_characters_whole(text, tokens):
    assert mc.tokenize(text) == tokens


def test_tokenize_examples():
    assert mc.tokenize("Hello, world!") == ["Hello", ",", "world", "!"]
    assert mc.tokenize("It's late.") == ["It's", "late", "."]
    assert mc.tokenize("Wait...what?!") == ["Wait", ".", ".", ".", "what", "?", "!"]
    assert mc.tokenize("(a+b)") == ["(", "a", "+", "b", ")"]


# --------------------------------------------------------------------------------------------------------------------
# Row entropy
# --------------------------------------------------------------------------------------------------------------------


@given(m=st.integers(1, 50), hot=st.data())
def test_row_entropy_extremes(m, hot):
    uniform = np.full((1, m), 1.0 / m)
    np.testing.assert_allclose(row_entropy(uniform), [np.log2(m)], rtol=0, atol=1e-12)
    one_hot = np.zeros((1, m))
    one_hot[0, hot.draw(st.integers(0, m - 1))] = 1.0
    assert row_entropy(one_hot)[0] == 0.0
    blocked = np.zeros((2, m))
    np.testing.assert_array_equal(row_entropy(blocked), [0.0, 0.0])
