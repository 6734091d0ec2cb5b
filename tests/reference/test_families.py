"""mha_core.pretrained.load on checkpoints of every family, checked against transformers' own eager attention.

Each family's tiny model is built with random weights from transformers' config class (no hub), saved with
save_pretrained(safe_serialization=True) beside a tokenizer made offline (a WordLevel vocabulary of made-up size
wrapped in PreTrainedTokenizerFast), loaded by mha_core, and compared with the same folder loaded by transformers.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
import transformers as T
from tokenizers import Tokenizer, models, pre_tokenizers, processors

import mha_core as mc
from mha_core.pretrained import load
from mha_core.pretrained.checkpoint import read_tokenizer

TOL = 1e-4
WORDS = ("the cat sat on mat because it was tired and dog ran to a park where children played with ball while "
         "their parents talked about weather news of day").split()
TEXT = "the cat sat on the mat because it was tired and the dog ran to the park"  # 17 words
SPECIAL = {"encoder": ("[PAD]", "[UNK]", "[CLS]", "[SEP]"), "roberta": ("<pad>", "<unk>", "<s>", "</s>"),
           "decoder": ("<pad>", "<unk>", "<s>", "</s>")}
SIZES = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37)
DECODER = dict(SIZES, num_key_value_heads=2, max_position_embeddings=64)
LLAMA3 = dict(rope_type="llama3", rope_theta=10000.0, factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
              original_max_position_embeddings=64)  # so that d_k = 8 has a pair in each of the three bands

# family: (the model class saved, its config, the tokenizer's kind). The encoders are saved with a head on top for
# BERT (BertForMaskedLM: its weights are named "bert.<...>"), as the base model for the others.
FAMILIES = {
    "bert": (T.BertForMaskedLM, lambda v: T.BertConfig(vocab_size=v, **SIZES), "encoder"),
    "roberta": (T.RobertaModel, lambda v: T.RobertaConfig(vocab_size=v, pad_token_id=0, **SIZES), "roberta"),
    "distilbert": (T.DistilBertModel, lambda v: T.DistilBertConfig(vocab_size=v, dim=32, n_layers=2, n_heads=4,
                                                                    hidden_dim=37), "encoder"),
    "gpt2": (T.GPT2LMHeadModel, lambda v: T.GPT2Config(vocab_size=v, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                                                       scale_attn_by_inverse_layer_idx=True, bos_token_id=2,
                                                       eos_token_id=3), "decoder"),
    "llama": (T.LlamaForCausalLM, lambda v: T.LlamaConfig(vocab_size=v, rope_scaling=LLAMA3, **DECODER), "decoder"),
    "mistral": (T.MistralForCausalLM, lambda v: T.MistralConfig(vocab_size=v, sliding_window=5, **DECODER), "decoder"),
    "qwen2": (T.Qwen2ForCausalLM, lambda v: T.Qwen2Config(vocab_size=v, tie_word_embeddings=True, **DECODER),
              "decoder"),
    "qwen3": (T.Qwen3ForCausalLM, lambda v: T.Qwen3Config(vocab_size=v, head_dim=12, **DECODER), "decoder"),
}


def save_tokenizer(folder, kind: str) -> int:
    """A WordLevel tokenizer over WORDS, saved by transformers into folder; returns the vocabulary's size."""
    pad, unk, first, last = SPECIAL[kind]
    vocab = {t: i for i, t in enumerate([pad, unk, first, last, *WORDS])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token=unk))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    if kind == "decoder":  # a BOS token before the text, as Llama's tokenizer adds
        tok.post_processor = processors.TemplateProcessing(single=f"{first} $A", special_tokens=[(first, 2)])
    else:
        tok.post_processor = processors.TemplateProcessing(single=f"{first} $A {last}",
                                                           special_tokens=[(first, 2), (last, 3)])
    wrapped = T.PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=pad, unk_token=unk, bos_token=first,
                                        eos_token=last)
    wrapped.save_pretrained(folder)
    return len(vocab)


def randomise(model: torch.nn.Module, seed: int) -> None:
    """Weights large enough that attention is far from uniform (the configs' init draws them with std 0.02)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name.lower() or "ln_" in name:
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g) if name.endswith("weight")
                        else 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.3 * torch.randn(p.shape, generator=g))


def build(folder, family: str, dtype=torch.float32):
    cls, config, kind = FAMILIES[family]
    model = cls(config(save_tokenizer(folder, kind)))
    randomise(model, seed=len(family))
    model.to(dtype).save_pretrained(folder, safe_serialization=True)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """family -> its folder, built on first use."""
    folders = {}

    def get(family: str):
        if family not in folders:
            folders[family] = tmp_path_factory.mktemp(family)
            build(folders[family], family)
        return folders[family]

    return get


@pytest.fixture(scope="module")
def checked(saved):
    """family -> (our model, our run of TEXT, transformers' reference), made on first use."""
    done = {}

    def get(family: str):
        if family not in done:
            model = load(saved(family))
            done[family] = model, model.run(TEXT), reference(saved(family), family)
        return done[family]

    return get


def reference(folder, family: str, text: str = TEXT, dtype=torch.float32):
    """transformers' tokens, attentions (per layer, (h, n, n)), hidden states and next token, eager and float32."""
    tok = T.PreTrainedTokenizerFast.from_pretrained(folder)  # the class saved (AutoTokenizer may pick the family's)
    ids = tok(text, return_tensors="pt")["input_ids"]
    model = FAMILIES[family][0].from_pretrained(folder, attn_implementation="eager", dtype=dtype).eval()
    with torch.no_grad():
        out = model(ids, output_attentions=True, output_hidden_states=True)
    attentions = [a[0].float().numpy() for a in out.attentions]
    hidden = [h[0].float().numpy() for h in out.hidden_states]
    next_id = int(out.logits[0, -1].argmax()) if hasattr(out, "logits") and FAMILIES[family][2] == "decoder" else None
    return tok.convert_ids_to_tokens(ids[0]), attentions, hidden, next_id, model


def largest_gaps(run, ref) -> tuple[float, float]:
    _, attentions, hidden, _, _ = ref
    weights = max(float(np.abs(t.weights - a).max()) for t, a in zip(run.layers, attentions, strict=True))
    states = max(float(np.abs(run.hidden_states[l] - hidden[l]).max()) for l in range(len(hidden) - 1))
    return weights, max(states, float(np.abs(run.final - hidden[-1]).max()))


@pytest.mark.parametrize("family", FAMILIES)
def test_every_layer_matches_transformers(checked, family):
    _, run, ref = checked(family)
    tokens, attentions, hidden, next_id, _ = ref
    assert run.tokens == tokens
    assert len(run.layers) == len(attentions) == 2 and len(hidden) == 3
    weights_gap, hidden_gap = largest_gaps(run, ref)
    print(f"{family}: attention weights {weights_gap:.1e}, hidden states {hidden_gap:.1e}")
    assert weights_gap < TOL and hidden_gap < TOL
    if FAMILIES[family][2] == "decoder":
        assert run.next_tokens[0].id == next_id
    else:
        assert run.next_tokens == ()


def test_the_options_each_family_needs_are_the_engines(checked):
    (qwen3, qwen3_run, _), (_, mistral_run, _), (llama, _, _) = checked("qwen3"), checked("mistral"), checked("llama")
    assert qwen3.config.d_k == 12 and qwen3.config.d_k * qwen3.n_heads != qwen3.d_model
    # Qwen3: each head's query is RMS-normed over its 12 numbers, times q_norm's weights, before RoPE.
    trace, q_norm = qwen3_run.layers[0], qwen3.layer_weights[0]["q_norm"].widen()
    raw = trace.q_before_norm.astype(np.float64)                                        # (h, n, 12)
    expected = raw / np.sqrt(np.mean(raw**2, axis=-1, keepdims=True) + 1e-6) * q_norm
    assert trace.q.shape == (4, 18, 12)
    np.testing.assert_allclose(trace.q_before_rope, expected, rtol=0, atol=1e-5)
    # Mistral's window of 5: the last query sees exactly its 5 latest keys.
    weights = mistral_run.layers[1].weights
    assert (weights[:, -1, :-5] == 0).all() and (weights[:, -1, -5:] > 0).all()
    # Llama 3's rescaled frequencies: the fast pair as before, the slow ones `factor` (8) times slower.
    base = 10000.0 ** (np.arange(4) * -0.25)
    ratio = base / np.array(llama.config.rope_frequencies)
    assert ratio[0] == 1 and 1 < ratio[1] < 8 and ratio[2] == ratio[3] == 8


@pytest.mark.parametrize("family", FAMILIES)
def test_weights_from_torch_reads_each_familys_attention(checked, family):
    model, _, ref = checked(family)
    ref_model = ref[-1]
    base = getattr(ref_model, ref_model.base_model_prefix, ref_model)
    attention = {"bert": lambda: base.encoder.layer[0].attention, "roberta": lambda: base.encoder.layer[0].attention,
                 "distilbert": lambda: base.transformer.layer[0].attention, "gpt2": lambda: base.h[0].attn
                 }.get(family, lambda: base.layers[0].self_attn)()
    got = mc.weights_from_torch(attention)
    ours = model.attention_weights(next(model.weights_in_order()))
    assert got.arrays().keys() == ours.arrays().keys()
    for name, array in ours.arrays().items():
        np.testing.assert_array_equal(got.arrays()[name], array, err_msg=name)


def test_bfloat16_weights_are_held_as_released_and_widened_exactly(tmp_path):
    build(tmp_path, "llama", dtype=torch.bfloat16)
    model = load(tmp_path)
    held = model.layer_weights[0]["W_Q"]
    assert held.dtype == "bfloat16" and held.data.itemsize == 2
    ref = reference(tmp_path, "llama")  # transformers widens the bfloat16 file to float32 itself
    q_proj = ref[-1].model.layers[0].self_attn.q_proj.weight.detach().numpy()
    np.testing.assert_array_equal(held.widen(), q_proj)
    assert max(largest_gaps(model.run(TEXT), ref)) < TOL


def test_sentence_transformers_layout(saved, tmp_path):
    """A sentence-transformers save with its Transformer module in 0_Transformer (as older versions write it)."""
    shutil.copytree(saved("distilbert"), tmp_path / "0_Transformer")
    (tmp_path / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "0_Transformer", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    run, plain = load(tmp_path).run(TEXT), load(saved("distilbert")).run(TEXT)
    np.testing.assert_array_equal(run.final, plain.final)


def test_an_unsupported_model_type_names_the_supported_ones(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "t5"}))
    with pytest.raises(mc.ConfigError, match="'t5' is not supported; supported: bert, distilbert, gpt2, llama"):
        load(tmp_path)


@pytest.mark.parametrize("family", ["llama", "mistral", "qwen3"])
def test_torch_backend_computes_the_new_options_alike(checked, family):
    """Llama 3's frequencies, Mistral's window and Qwen3's per-head norm and head_dim, in the torch steps too."""
    model, run, _ = checked(family)
    for l, weights in enumerate(model.weights_in_order()):
        ours = run.layers[l]
        theirs = mc.forward(ours.x, model.attention_weights(weights), model.layout.configs[l], backend="torch")
        for name in ("q_before_norm", "q_before_rope", "q", "k", "weights", "output"):
            a, b = getattr(ours, name), getattr(theirs, name)
            assert (a is None) == (b is None), name
            if a is not None:
                np.testing.assert_allclose(b, a, rtol=0, atol=1e-5, err_msg=name)


TOKENIZER_TEXT = "The Cat sat, on the mat; children played with a ball!"


def test_a_vocab_txt_is_read_as_berts_wordpiece(tmp_path):
    (tmp_path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, "##s", ","]))
    ours = read_tokenizer(tmp_path).encode(TOKENIZER_TEXT).tokens
    ref = T.BertTokenizer.from_pretrained(tmp_path)
    assert ours == ref.convert_ids_to_tokens(ref(TOKENIZER_TEXT)["input_ids"])
    assert ours[0] == "[CLS]" and ours[1] == "the" and "[UNK]" in ours  # lower-cased; ";" is not in the vocabulary


def test_vocab_json_and_merges_are_read_as_robertas_byte_level_bpe(tmp_path):
    from tokenizers import ByteLevelBPETokenizer

    trained = ByteLevelBPETokenizer()
    trained.train_from_iterator([TEXT, " ".join(WORDS)] * 5, vocab_size=300, special_tokens=["<s>", "<pad>", "</s>",
                                                                                            "<unk>", "<mask>"])
    trained.save_model(str(tmp_path))  # vocab.json and merges.txt
    ours = read_tokenizer(tmp_path, wrap=("<s>", "</s>")).encode(TOKENIZER_TEXT).tokens
    ref = T.RobertaTokenizer.from_pretrained(tmp_path)
    assert ours == ref.convert_ids_to_tokens(ref(TOKENIZER_TEXT)["input_ids"])
    assert ours[0] == "<s>" and ours[-1] == "</s>" and "Ġsat" in ours


def test_the_engines_new_options_refuse_what_cannot_work():
    with pytest.raises(mc.ConfigError, match="set causal=True"):
        mc.MHAConfig(32, 4, sliding_window=3)
    with pytest.raises(mc.ConfigError, match="d_k / 2 = 6 positive"):
        mc.MHAConfig(32, 4, head_dim=12, rope_theta=1e4, rope_frequencies=(1.0, 0.1))
    cfg = mc.MHAConfig(32, 4, head_dim=12, qk_norm_eps=1e-6)
    w = mc.init_weights(mc.MHAConfig(32, 4, head_dim=12))
    with pytest.raises(mc.ConfigError, match="needs both q_norm and k_norm"):
        mc.forward(np.ones((3, 32)), w, cfg)
    # A window of 2: each query sees itself and the key before it.
    np.testing.assert_array_equal(mc.causal_mask(4, window=2), ~np.array(
        [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]], dtype=bool))


def test_a_released_sentence_transformers_folder_matches_transformers(minilm, bert):
    """all-MiniLM-L6-v2's own folder (modules.json, 1_Pooling, a tokenizer.json that pads to 128) through load()."""
    text = "The animal didn't cross the street because it was too tired."
    run = load(minilm.model_dir).run(text)
    tokens, attentions, hidden = bert(text)
    assert run.tokens == tokens
    for trace, expected in zip(run.layers, attentions, strict=True):
        np.testing.assert_allclose(trace.weights, expected, rtol=0, atol=TOL)
    np.testing.assert_allclose(run.final, hidden[-1], rtol=0, atol=TOL)
