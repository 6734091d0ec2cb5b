"""The experiments on heads in the app (AppTest): switched-off heads, planted heads, the √d_k switch, grouped-query
heads and cross-attention, checked against PyTorch computations written out here, plus every new control and URL
parameter, bad values included.

The app's random example is documented as mc.embed / mc.random_input and mc.init_weights with the seed (the
"Reproduce in PyTorch" script builds it the same way); the tests build those inputs and weights likewise, and let
PyTorch do the attention.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import mha_core as mc
from conftest import as_array, explorer, explorer_matrix, figure_titled, figures, run_app, zero_heads_hook

REAL = "all-MiniLM-L6-v2"
CAT = "The cat sat on the mat because it was tired."
FRENCH = "Le chat s'est assis sur le tapis."


def assert_clean(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def grid(at) -> list[np.ndarray]:
    """The attention page's weights of every head, as its explorer is sent them."""
    header, arrays, view = explorer(at)
    return list(arrays[f"{view['layer']}/weights"])


def shown_output(at) -> np.ndarray:
    """The output page's output matrix, as drawn (second panel of "Input and output", in the expander it opens: its
    content is computed only when open)."""
    if not at.session_state["contributions_box"]:
        at.session_state["contributions_box"] = True
        at.run()
    return as_array(figure_titled(at, "Input and output")["data"][1]["z"])


def share_link(at) -> str:
    return next(c.value for c in at.code if c.value.startswith("http"))


def torch_attention(w, cfg, x, kv=None, factors=None, keep=None, enable_gqa=False):
    """(weights (h, n, m), output (n, d_model)): F.linear projections, F.scaled_dot_product_attention per head,
    each head times its factor, then W_O. keep: (n, m) True = may attend."""
    T = {name: torch.from_numpy(np.asarray(a, np.float64)) for name, a in w.arrays().items()}
    X = torch.from_numpy(np.asarray(x, np.float64))
    Y = X if kv is None else torch.from_numpy(np.asarray(kv, np.float64))
    h, n_kv, d_k = cfg.n_heads, cfg.kv_heads, cfg.d_k
    q = F.linear(X, T["W_Q"], T.get("b_Q")).view(len(X), h, d_k).transpose(0, 1)
    k = F.linear(Y, T["W_K"], T.get("b_K")).view(len(Y), n_kv, d_k).transpose(0, 1)
    v = F.linear(Y, T["W_V"], T.get("b_V")).view(len(Y), n_kv, d_k).transpose(0, 1)
    mask = None if keep is None else torch.from_numpy(keep)
    if enable_gqa:
        heads = F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=mask, scale=cfg.softmax_scale,
                                               enable_gqa=True)[0]
    else:
        k_rep, v_rep = k.repeat_interleave(h // n_kv, 0), v.repeat_interleave(h // n_kv, 0)
        heads = F.scaled_dot_product_attention(q, k_rep, v_rep, attn_mask=mask, scale=cfg.softmax_scale)
    if factors is not None:
        heads = heads * torch.tensor(factors, dtype=torch.float64)[:, None, None]
    output = F.linear(heads.transpose(0, 1).reshape(len(X), h * d_k), T["W_O"], T.get("b_O"))
    scores = q @ k.repeat_interleave(h // n_kv, 0).transpose(1, 2) * cfg.softmax_scale
    weights = torch.softmax(scores if mask is None else scores.masked_fill(~mask, float("-inf")), dim=-1)
    return weights.numpy(), output.numpy()


def random_example(n: int, d_model: int, h: int, seed: int, **cfg_options):
    cfg = mc.MHAConfig(d_model, h, **cfg_options)
    return cfg, mc.random_input(n, d_model, seed=seed), mc.init_weights(cfg, seed=seed)


# --- switched-off heads ----------------------------------------------------------------------------------------

ABLATE = {"input": "random", "n": "5", "d_model": "32", "h": "4", "seed": "2", "ablate": "2,4"}


def test_ablation_in_the_app_matches_torch_and_reports_the_change():
    at = run_app(ABLATE, "pages/output.py")
    assert_clean(at)
    cfg, x, w = random_example(5, 32, 4, 2)
    _, full = torch_attention(w, cfg, x)
    _, off = torch_attention(w, cfg, x, factors=[1, 0, 1, 0])
    np.testing.assert_allclose(shown_output(at), off, atol=1e-5)
    change = figure_titled(at, "How far each token's output moved with heads 2, 4")
    bars = {trace["name"]: as_array(trace["y"]) for trace in change["data"] if trace["type"] == "bar"}
    np.testing.assert_allclose(bars["|change|"], np.linalg.norm(off - full, axis=1), atol=1e-5)
    np.testing.assert_allclose(bars["|full output|"], np.linalg.norm(full, axis=1), atol=1e-5)
    cosine = as_array(next(t for t in change["data"] if t["type"] == "scatter")["y"])
    np.testing.assert_allclose(cosine, (off * full).sum(1) / np.linalg.norm(off, axis=1) / np.linalg.norm(full, axis=1),
                               atol=1e-5)
    assert any("Michel et al. 2019" in m.value for m in at.markdown)


def test_rank_the_heads_button_shows_the_change_of_each_head_alone():
    at = run_app(ABLATE, "pages/output.py")
    assert not [f for f in figures(at) if f["layout"]["title"]["text"].startswith("Switching one head off")]
    at.button(key="rank").click().run()
    assert_clean(at)
    bars = as_array(figure_titled(at, "Switching one head off")["data"][0]["y"])
    cfg, x, w = random_example(5, 32, 4, 2)
    _, full = torch_attention(w, cfg, x)
    for i in range(4):
        factors = np.ones(4)
        factors[i] = 0
        _, alone = torch_attention(w, cfg, x, factors=factors)
        assert bars[i] == pytest.approx(np.linalg.norm(alone - full, axis=1).mean(), abs=1e-5), i
    at.number_input(key="query").set_value(3).run()  # another interaction keeps the ranking on screen
    assert figure_titled(at, "Switching one head off")
    at.multiselect(key="ablate").set_value([1]).run()  # a new computation asks for a new click
    assert not [f for f in figures(at) if f["layout"]["title"]["text"].startswith("Switching one head off")]


def test_switched_off_heads_are_zero_columns_of_the_concatenation_and_noted_on_step_2():
    at = run_app({**ABLATE, "head": "2"}, "pages/concatenation.py")
    assert_clean(at)
    concat = as_array(figure_titled(at, "Concat(")["data"][0]["z"])
    assert (concat[:, 8:16] == 0).all() and (concat[:, 24:32] == 0).all() and (concat[:, :8] != 0).any()
    assert any("head-mask factor exactly: **True**" in c.value for c in at.caption)
    at.switch_page("pages/attention.py").run()
    assert any("Head 2 is switched off" in i.value for i in at.info)


def test_ablate_control_writes_the_url_and_the_share_link():
    at = run_app({"input": "random", "n": "4"}, "pages/output.py")
    assert at.multiselect(key="ablate").value == []
    at.multiselect(key="ablate").set_value([5, 2]).run()
    assert_clean(at)
    assert at.query_params["ablate"] in ("2,5", ["2,5"]), "one comma-separated parameter, sorted"
    assert "ablate=2,5" in share_link(at)
    assert figure_titled(at, "How far each token's output moved with heads 2, 5")
    at.selectbox(key="h").set_value(4).run()  # head 5 no longer exists: it leaves the selection
    assert at.multiselect(key="ablate").value == [2]
    assert "ablate=2" in share_link(at) and "2,5" not in share_link(at)
    at.multiselect(key="ablate").set_value([]).run()
    assert "ablate" not in share_link(at)


# --- the trained model -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bert_with_heads_off(bert):
    """A function (text, layer, heads) -> transformers' hidden states with those heads of that layer zeroed."""
    net, tokenizer = bert

    def run(text, layer=None, heads=()):
        handle = zero_heads_hook(net.encoder.layer[layer], heads, 32) if heads else None
        try:
            with torch.no_grad():
                out = net(**tokenizer(text, return_tensors="pt"), output_hidden_states=True)
        finally:
            if handle:
                handle.remove()
        return [h[0].numpy().astype(np.float64) for h in out.hidden_states]

    return run


def test_trained_model_ablation_reaches_every_later_layer_and_the_sentence_vector(bert_with_heads_off):
    at = run_app({"model": REAL, "text": CAT, "layer": "3", "ablate": "2,5"}, "pages/output.py")
    assert_clean(at)
    full, off = bert_with_heads_off(CAT), bert_with_heads_off(CAT, 2, [1, 4])
    relative = np.stack([np.linalg.norm(off[l] - full[l], axis=1) / np.linalg.norm(full[l], axis=1)
                         for l in range(1, 7)])                     # (6 layers, n)
    fig = figure_titled(at, "Heads switched off in layer 3")
    np.testing.assert_allclose(as_array(fig["data"][0]["y"]), relative.mean(axis=1), atol=1e-4)
    np.testing.assert_allclose(as_array(fig["data"][1]["y"]), relative.max(axis=1), atol=1e-4)
    assert (as_array(fig["data"][0]["y"])[:2] == 0).all()

    def vector(hidden):
        mean = hidden.mean(axis=0)
        return mean / np.linalg.norm(mean)

    rug = "A tired cat was lying on the rug."
    assert at.text_input(key="compare").value == rug
    full_rug, off_rug = bert_with_heads_off(rug), bert_with_heads_off(rug, 2, [1, 4])
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["Cosine similarity, every head"]) == pytest.approx(vector(full[-1]) @ vector(full_rug[-1]),
                                                                           abs=1e-4)
    assert float(metrics["With heads 2, 5 off"]) == pytest.approx(vector(off[-1]) @ vector(off_rug[-1]), abs=1e-4)


def test_trained_model_ranking_and_compare_sentence(bert_with_heads_off):
    at = run_app({"model": REAL, "text": CAT, "layer": "6"}, "pages/output.py")
    at.button(key="rank").click().run()
    assert_clean(at)
    turned = as_array(figure_titled(at, "Layer 6, one head off: how far the sentence vector turns")["data"][0]["y"])
    full = bert_with_heads_off(CAT)[-1]
    for i in (0, 7):
        off = bert_with_heads_off(CAT, 5, [i])[-1]
        a, b = full.mean(0), off.mean(0)
        assert turned[i] == pytest.approx(1 - a @ b / np.linalg.norm(a) / np.linalg.norm(b), abs=1e-5)
    at.text_input(key="compare").set_value("Stock prices fell sharply today.").run()
    assert_clean(at)
    assert "compare=Stock" in share_link(at)


def test_trained_model_ablation_follows_the_layer_on_view():
    """With heads off, the layer on view decides the computation: the switched-off block moves with it."""
    at = run_app({"model": REAL, "text": "Heads can be pruned.", "layer": "2", "ablate": "1"},
                 "pages/concatenation.py")
    assert_clean(at)
    assert (as_array(figure_titled(at, "Concat(")["data"][0]["z"])[:, :32] == 0).all()
    at.selectbox(key="layer").set_value(4).run()
    assert_clean(at)
    assert any("layer 4 of 6" in c.value for c in at.caption)
    assert (as_array(figure_titled(at, "Concat(")["data"][0]["z"])[:, :32] == 0).all()
    at.switch_page("pages/model_view.py").run()
    assert any("of layer 4 is switched off" in i.value for i in at.info)


def test_the_cache_key_has_the_layer_only_when_heads_are_off(monkeypatch):
    from mha_app import compute
    from mha_app.settings import Spec

    built = []
    real = compute.build_example
    monkeypatch.setattr(compute, "build_example", lambda spec, model, layer=1: built.append(layer) or real(
        spec, model, layer=layer))
    compute._example.clear()
    plain = Spec(model=REAL, text="One two three.")
    for layer in (1, 4, 6):
        assert compute.example(plain, layer).layer == layer
    assert built == [1], "without switched-off heads one run serves every layer"
    off = Spec(model=REAL, text="One two three.", ablate=(3,))
    for layer in (2, 5, 2):
        ex = compute.example(off, layer)
        assert ex.layer == layer and ex.trace.head_mask[2] == 0
    assert built == [1, 2, 5], "with them, each layer on view is its own computation (and cached)"


# --- planted heads ---------------------------------------------------------------------------------------------

def test_planted_head_obeys_its_rule_in_the_heatmap():
    params = {"d_model": "128", "h": "8", "plant": "previous", "plant_head": "3", "strength": "4", "head": "3",
              "stage": "scaled scores"}
    at = run_app(params, "pages/attention.py", opened={"attention_tab": "Plant a head"})
    assert_clean(at)
    weights = grid(at)[2]
    m = weights.shape[1]
    rule_share = math.exp(4) / (math.exp(4) + m - 1)
    for i in range(1, m):
        assert weights[i, i - 1] == pytest.approx(rule_share, abs=1e-5)
    np.testing.assert_allclose(weights[0], 1 / m, atol=1e-6)  # the first token has no previous one
    scores = explorer_matrix(at, "scaled", 3)
    np.testing.assert_allclose(scores, 4 * np.eye(m, k=-1), atol=1e-4)
    assert any("The fit is exact" in s.value for s in at.success)
    assert any("rows 33–48 of W_Q" in m.value for m in at.markdown)
    assert figure_titled(at, "Head 3, planted: the rule and the result")


def test_planting_with_more_keys_than_d_k_says_how_close_it_got():
    at = run_app({"d_model": "64", "h": "8", "plant": "self", "plant_head": "1"}, "pages/attention.py",
                 opened={"attention_tab": "Plant a head"})
    assert_clean(at)
    assert any("only the closest one" in w.value and "m = 11 > d_k = 8" in w.value for w in at.warning)


def test_plant_controls_change_the_head():
    at = run_app({"d_model": "128", "h": "8"}, "pages/attention.py")
    assert "plant_head" not in {w.key for w in at.selectbox}
    at.selectbox(key="plant").set_value("first").run()
    at.selectbox(key="plant_head").set_value(5).run()
    at.slider(key="strength").set_value(8.0).run()
    assert_clean(at)
    first_col = grid(at)[4][:, 0]
    m = grid(at)[4].shape[1]
    np.testing.assert_allclose(first_col, math.exp(8) / (math.exp(8) + m - 1), atol=1e-5)
    link = share_link(at)
    assert "plant=first" in link and "plant_head=5" in link and "strength=8" in link


# --- the √d_k switch -------------------------------------------------------------------------------------------

def test_scale_none_removes_the_scaling_and_the_page_compares_both():
    params = {"input": "random", "n": "6", "d_model": "64", "h": "4", "seed": "1", "scale": "none"}
    at = run_app({**params, "stage": "scaled scores"}, "pages/attention.py",
                 opened={"attention_tab": "Why divide by √d_k?"})
    assert_clean(at)
    cfg, x, w = random_example(6, 64, 4, 1, scale=1.0)
    weights, _ = torch_attention(w, cfg, x)
    for i, z in enumerate(grid(at)):
        np.testing.assert_allclose(z, weights[i], atol=1e-5)
    assert explorer(at)[2]["stage"] == "scaled"
    np.testing.assert_array_equal(explorer_matrix(at, "raw", 1), explorer_matrix(at, "scaled", 1))
    assert not any(r"\sqrt" in latex.value for latex in at.latex if "head_i" in latex.value)
    comparison = figure_titled(at, "Head 1: the same raw scores, softmaxed with and without")
    with_scale, _ = torch_attention(w, mc.MHAConfig(64, 4), x)
    np.testing.assert_allclose(as_array(comparison["data"][0]["z"]), with_scale[0], atol=1e-5)
    np.testing.assert_allclose(as_array(comparison["data"][1]["z"]), weights[0], atol=1e-5)
    metrics = {m.label: m.value for m in at.metric}
    peak = float(metrics["largest weight, without"])
    assert peak == pytest.approx(weights.max(axis=-1).mean(), abs=1e-3)
    at.radio(key="scale").set_value("1/√d_k").run()
    assert "scale=" not in share_link(at)
    assert any(r"\sqrt{16}" in latex.value for latex in at.latex)


def test_scaling_comparison_is_shown_for_the_trained_model_too():
    at = run_app({"model": REAL, "text": CAT}, "pages/attention.py", opened={"attention_tab": "Why divide by √d_k?"})
    assert_clean(at)
    assert figure_titled(at, "Every head, with and without 1/√d_k (d_k = 32)")
    assert "scale" not in {w.key for w in at.radio}


# --- grouped-query attention -----------------------------------------------------------------------------------

GQA = {"input": "random", "n": "6", "d_model": "48", "h": "6", "kv_heads": "2", "seed": "3"}


def test_gqa_in_the_app_matches_sdpa_with_enable_gqa():
    cfg, x, w = random_example(6, 48, 6, 3, n_kv_heads=2)
    weights, output = torch_attention(w, cfg, x, enable_gqa=True)
    at = run_app(GQA, "pages/attention.py")
    assert_clean(at)
    for i, z in enumerate(grid(at)):
        np.testing.assert_allclose(z, weights[i], atol=1e-5)
    header = explorer(at)[0]
    assert header["heads"] == 6 and header["group_size"] == 3  # the explorer names K/V head i // 3 + 1
    at.switch_page("pages/output.py").run()
    np.testing.assert_allclose(shown_output(at), output, atol=1e-5)
    at.switch_page("pages/overview.py").run()
    assert any("Matches F.scaled_dot_product_attention" in s.value for s in at.success)


def test_gqa_projection_shows_narrow_w_k_and_the_savings():
    at = run_app(GQA, "pages/projection.py")
    assert_clean(at)
    d_k = 8
    assert as_array(figure_titled(at, "W_K (48 × 16)")["data"][0]["z"]).shape == (48, 2 * d_k)
    assert as_array(figure_titled(at, "W_Q (48 × 48)")["data"][0]["z"]).shape == (48, 6 * d_k)
    assert figure_titled(at, "6 query heads, 2 key/value heads")
    metrics = {m.label: m.value for m in at.metric}
    # W_K and W_V (2*d_k x 48) and their biases (2*d_k,): written out.
    assert metrics["K and V parameters"] == f"{2 * (2 * d_k * 48 + 2 * d_k):,}"
    # K and V, 2 heads of d_k numbers, 2 bytes each, for one token in one layer.
    assert metrics["KV-cache per token and layer (16-bit)"] == f"{2 * 2 * d_k * 2} bytes"
    assert metrics["Saving on K, V and the cache"] == "3×"


def test_kv_heads_control_offers_the_divisors_of_h_and_resets_when_h_changes():
    at = run_app({"d_model": "48", "h": "6"}, "pages/projection.py")
    box = at.selectbox(key="kv_heads")
    assert box.value == 6 and [int(o) for o in box.options] == [6, 3, 2, 1]
    box.set_value(1).run()
    assert_clean(at)
    assert "kv_heads=1" in share_link(at)
    assert figure_titled(at, "6 query heads, 1 key/value head (multi-query attention")
    at.selectbox(key="h").set_value(4).run()
    assert_clean(at)
    assert at.selectbox(key="kv_heads").value in (1, 4)
    at.selectbox(key="kv_heads").set_value(4).run()
    assert "kv_heads" not in share_link(at), "kv_heads = h is plain multi-head attention, the default"


# --- cross-attention -------------------------------------------------------------------------------------------

def test_cross_attention_in_the_app_matches_nn_multihead_attention():
    params = {"input": "pair", "text": CAT, "text_kv": FRENCH, "d_model": "32", "h": "4", "pad": "2"}
    at = run_app(params, "pages/attention.py")
    assert_clean(at)
    queries, keys = mc.tokenize(CAT), mc.tokenize(FRENCH)
    n, m = len(queries), len(keys)
    assert n != m
    cfg = mc.MHAConfig(32, 4)
    w = mc.init_weights(cfg, seed=0)
    x, y = mc.embed(queries, 32, seed=0), mc.embed(keys, 32, seed=0)
    module = torch.nn.MultiheadAttention(32, 4, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        module.in_proj_weight.copy_(torch.tensor(np.concatenate([w.W_Q, w.W_K, w.W_V]), dtype=torch.float64))
        module.in_proj_bias.zero_()
        module.out_proj.weight.copy_(torch.tensor(w.W_O, dtype=torch.float64))
        module.out_proj.bias.zero_()
        padding = torch.zeros(1, m, dtype=torch.bool)
        padding[0, -2:] = True
        out, weights = module(torch.tensor(x, dtype=torch.float64)[None], torch.tensor(y, dtype=torch.float64)[None],
                              torch.tensor(y, dtype=torch.float64)[None], key_padding_mask=padding,
                              average_attn_weights=False)
    header, arrays, _ = explorer(at)
    for i, z in enumerate(arrays["1/weights"]):
        np.testing.assert_allclose(z, weights[0, i].numpy(), atol=1e-5)
    assert header["key_tokens"] == keys, "keys: the second sentence"
    assert header["tokens"] == queries and arrays["1/weights"].shape[1:] == (n, m)
    assert any("Cross-attention" in i.value for i in at.info)
    at.switch_page("pages/output.py").run()
    np.testing.assert_allclose(shown_output(at), out[0].numpy(), atol=1e-5)
    at.session_state["input_box"] = True  # the expander that holds the inputs
    at.switch_page("pages/projection.py").run()
    assert figure_titled(at, "Input Y (keys and values)")
    assert any("Y" in latex.value and "%d" % m in latex.value for latex in at.latex)


def test_pair_input_controls():
    at = run_app({"d_model": "32", "h": "4"}, "pages/attention.py")
    at.radio(key="input").set_value("pair").run()
    assert_clean(at)
    assert at.checkbox(key="causal").disabled
    at.text_area(key="text_kv").set_value("Bonjour tout le monde").run()
    assert_clean(at)
    assert len(grid(at)[0][0]) == 4
    assert "text_kv=Bonjour" in share_link(at)


# --- every new URL parameter, bad values included -------------------------------------------------------------

@pytest.mark.parametrize("params, words, fallback", [
    ({"ablate": "99"}, "left out", ("ablate", [])),
    ({"ablate": "2,x"}, "left out", ("ablate", [2])),
    ({"ablate": "9", "h": "8"}, "only 8 heads", ("ablate", [])),
    ({"kv_heads": "5", "h": "8"}, "does not divide h = 8", ("kv_heads", 8)),
    ({"kv_heads": "abc"}, "whole number", ("kv_heads", 8)),
    ({"plant": "foo"}, "must be one of none, previous", ("plant", "none")),
    ({"plant": "previous", "strength": "inf"}, "should be a number", ("strength", 4.0)),
    ({"plant": "previous", "strength": "-3"}, "outside 0…30", ("strength", 4.0)),
    ({"plant": "previous", "plant_head": "99"}, "outside 1…16", ("plant_head", 1)),
    ({"plant": "previous", "plant_head": "9"}, "only 8 heads", ("plant_head", 1)),
    ({"scale": "sqrt"}, "must be one of", ("scale", "1/√d_k")),
    ({"input": "pair", "causal": "true"}, "causal mask is off", ("causal", False)),
    ({"input": "tiny", "kv_heads": "1"}, "applies to random weights", None),
    ({"input": "tiny", "ablate": "3"}, "only 2 heads", ("ablate", [])),
    ({"model": REAL, "plant": "previous"}, "applies to random weights", None),
    ({"model": REAL, "scale": "none"}, "trained with the 1/√d_k", None),
    ({"model": REAL, "ablate": "13"}, "only 12 heads", ("ablate", [])),
])
def test_bad_experiment_parameters_warn_and_fall_back(params, words, fallback):
    at = run_app(params, "pages/output.py")
    assert not at.exception, [e.value for e in at.exception]
    assert any(words in w.value for w in at.warning), [w.value for w in at.warning]
    assert figures(at)
    if fallback:
        key, value = fallback
        widget = next(w for w in at.sidebar if getattr(w, "key", None) == key)
        assert widget.value == value


@pytest.mark.parametrize("page", ["pages/overview.py", "pages/projection.py", "pages/attention.py",
                                  "pages/concatenation.py", "pages/output.py"])
@pytest.mark.parametrize("params", [
    {"input": "pair", "kv_heads": "2", "ablate": "1,8", "plant": "next", "plant_head": "8", "strength": "12.5",
     "scale": "none", "pad": "1"},
    {"input": "tiny", "ablate": "1,2", "plant": "self", "scale": "none"},
    {"model": REAL, "ablate": "12", "layer": "6"},
], ids=["pair-everything", "tiny-all-off", "trained"])
def test_every_step_page_renders_with_the_experiments(page, params):
    at = run_app(params, page)
    assert_clean(at)
    assert figures(at)
    link = share_link(at)
    for name, value in params.items():
        assert f"{name}={value}" in link, (name, link)
