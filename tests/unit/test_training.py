"""mha_core.training: the tasks against their rules written out in plain Python, training that learns them (checked on
fresh sequences through the engine, mc.forward), the induction head it grows, reproducible runs, the head-gate
gradient against a finite difference, the pruning experiments against the engine's head mask, and the figures.

Each task is trained once for the module (the first of seeds 0, 1, 2 that solves it); the other runs are short.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import mha_core as mc
from mha_core import ConfigError
from mha_core.figures import training as tfig
from mha_core.training import TASKS, held_out, one_thread, train
from mha_core.training.experiments import (
    TinyHeads,
    compare_heads,
    gate_gradients,
    head_importance,
    prune,
    pruning_order,
)
from mha_core.training.model import TinyTransformer, parameter_count
from mha_core.training.scores import head_scores, score_history, strongest_head
from mha_core.training.tasks import IGNORE

SEEDS = (0, 1, 2)
FRESH = 100  # new sequences per task for the accuracy check, drawn with a seed no run or held-out set uses


# --- the rules, written out ------------------------------------------------------------------------------------

def rule_answers(name: str, seq: list[int]) -> list[int | None]:
    """The answer at each position by the task's rule, in plain Python (None: the rule gives none)."""
    n = len(seq)
    if name == "previous":
        return [None] + seq[:-1]
    if name == "first":
        return [None] + [seq[0]] * (n - 1)
    if name == "induction":  # … A B … A → B: the token after the latest earlier copy of this token
        out, last = [], {}
        for t, token in enumerate(seq):
            j = last.get(token)
            out.append(seq[j + 1] if j is not None and j + 1 <= t else None)
            last[token] = t
        return out
    if name == "sort":  # k numbers, the separator, the k numbers sorted
        k = (n - 1) // 2
        return [None] * k + sorted(seq[:k]) + [None]
    raise ValueError(name)


def engine_accuracy(run, sequences: np.ndarray) -> float:
    """The share of rule answers the run's last checkpoint gets right, computed with mc.forward (run.logits)."""
    right = total = 0
    for seq in sequences:
        predicted = run.logits(seq).argmax(axis=-1)
        for t, answer in enumerate(rule_answers(run.task.name, seq.tolist())):
            if answer is not None:
                right += int(predicted[t] == answer)
                total += 1
    return right / total


def fresh(task, count: int = FRESH) -> np.ndarray:
    return task.draw(count, np.random.default_rng(2**32 + 7))


@pytest.fixture(scope="module")
def trained():
    """Each task at the default sizes, trained with the first of seeds 0, 1, 2 whose model gets 99% of fresh
    sequences' answers right (at most three runs a task; usually the first)."""
    runs = {}
    for name, task in TASKS.items():
        for seed in SEEDS:
            runs[name] = train(name, seed=seed)
            if engine_accuracy(runs[name], fresh(task)) >= 0.99:
                break
    return runs


@pytest.mark.parametrize("name", list(TASKS))
def test_sequences_and_answers_follow_the_rule(name):
    task = TASKS[name]
    ids, targets = task.sample(64, np.random.default_rng(5))
    assert ids.shape == targets.shape == (64, task.n_tokens) and 8 <= task.n_tokens <= 32 and len(task.vocab) <= 32
    assert ids.min() >= 0 and ids.max() < len(task.vocab)
    for seq, target in zip(ids.tolist(), targets.tolist(), strict=True):
        assert [None if a == IGNORE else a for a in target] == rule_answers(name, seq)
        if name == "sort":
            k = (len(seq) - 1) // 2
            assert task.vocab[seq[k]] == ">" and len(set(seq[:k])) == k
        if name == "induction":  # distinct tokens, then a repeat of 3 to 6 of them at the end
            answered = sum(a is not None for a in rule_answers(name, seq))
            assert 3 <= answered <= 6 and len(set(seq)) == len(seq) - answered
    example = task.encode(task.example)
    assert len(example) == task.n_tokens and sum(a is not None for a in rule_answers(name, example.tolist())) > 0


@pytest.mark.parametrize("name", list(TASKS))
def test_each_task_is_learned_within_its_budget(trained, name):
    run = trained[name]
    assert run.steps == TASKS[name].steps and run.seed in SEEDS
    assert engine_accuracy(run, fresh(run.task)) >= 0.99
    assert run.accuracy >= 0.99 and run.steps_to_solve is not None and run.steps_to_solve <= run.steps


def induction_scores(run, step, sequences) -> np.ndarray:
    """(n_layers, h): each head's mean weight from a repeated token to the token after its latest earlier copy
    (when that is neither the token itself nor the one before it), over the sequences, written out."""
    total, count = np.zeros((run.n_layers, run.n_heads)), 0
    for seq in sequences:
        weights = run.attentions(seq, step)                                       # (L, h, n, n)
        last = {}
        for t, token in enumerate(seq.tolist()):
            if token in last and last[token] + 1 <= t - 2:
                total += weights[:, :, t, last[token] + 1]
                count += 1
            last[token] = t
    return total / count


def test_training_grows_an_induction_head(trained):
    run = trained["induction"]
    sequences = held_out(run.task)[0][:64].numpy()
    before, after = induction_scores(run, 0, sequences), induction_scores(run, None, sequences)
    assert before.max() < 0.1 and after.max() >= 0.5
    # the page's statistic (head_stats' induction score) is this one, on the task's example
    example = run.task.encode(run.task.example)[None]
    np.testing.assert_allclose(head_scores(run, "induction"), induction_scores(run, None, example), atol=1e-6)
    layer, head = strongest_head(head_scores(run, "induction"), "induction")
    assert layer == 1  # the induction head reads a previous-token head: it sits in the second layer
    history = score_history(run, "induction")
    assert history.shape == (len(run.checkpoints), 2, run.n_heads)
    np.testing.assert_array_equal(history[-1], head_scores(run, "induction"))


def test_the_same_seed_gives_the_same_run_and_leaves_torch_alone():
    torch_state = torch.get_rng_state()
    threads = torch.get_num_threads()
    a, b, c = (train("first", steps=20, seed=seed) for seed in (3, 3, 4))
    assert np.array_equal(a.losses, b.losses) and not np.array_equal(a.losses, c.losses)
    for x, y in zip(a.checkpoints, b.checkpoints, strict=True):
        assert x.step == y.step and np.array_equal(x.layers[1].W_Q, y.layers[1].W_Q)
    assert torch.equal(torch.get_rng_state(), torch_state) and torch.get_num_threads() == threads


def test_one_thread_while_training_then_the_old_count_back():
    before = torch.get_num_threads()
    with one_thread():
        assert torch.get_num_threads() == 1
        with one_thread():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    seen = []
    train("previous", steps=2, callback=lambda step, steps, loss: seen.append((step, steps, torch.get_num_threads())))
    assert seen[0] == (0, 2, 1) and seen[-1][:2] == (2, 2)


def test_checkpoints_every_few_steps_and_the_parameter_count():
    run = train("sort", steps=48, seed=1)
    assert run.checkpoint_steps == [0, *range(2, 49, 2)] and len(run.losses) == 48
    assert run.checkpoint(10).step == 10 and run.checkpoint() is run.checkpoints[-1]
    layer = run.checkpoints[-1].layers[0]
    assert isinstance(layer, mc.MHAWeights) and layer.W_Q.shape == (64, 64) and not layer.W_Q.flags.writeable
    task = run.task
    for positions in ("learned", "sinusoidal"):
        for attention_only in (True, False):
            model = TinyTransformer(len(task.vocab), task.n_tokens, 2, 4, 64, positions, attention_only)
            assert parameter_count(len(task.vocab), task.n_tokens, 2, 4, 64, positions, attention_only) == sum(
                p.numel() for p in model.parameters())


@pytest.mark.parametrize(("kwargs", "words"), [
    (dict(task="copy"), "task must be one of"),
    (dict(task="first", n_heads=3), "h must divide d_model"),
    (dict(task="first", seed=-1), "seed must be a whole number"),
    (dict(task="first", steps=-1), "steps must be a whole number"),
    (dict(task="first", n_layers=9), "n_layers must be a whole number"),
    (dict(task="first", d_model=4096), "d_model must be a whole number"),
])
def test_training_refuses_what_cannot_work_in_words(kwargs, words):
    with pytest.raises(ConfigError, match=words):
        train(**kwargs)


def test_a_run_refuses_bad_tokens_layers_and_steps_in_words():
    run = train("previous", steps=4)
    with pytest.raises(ConfigError, match="not in the previous task's vocabulary"):
        run.trace(["a", "B"], 0)
    with pytest.raises(ConfigError, match="reads 1 to 16 tokens"):
        run.trace(["a"] * 17, 0)
    with pytest.raises(ConfigError, match="layer must be"):
        run.trace(["a", "b"], 2)
    with pytest.raises(ConfigError, match="no checkpoint at step 5"):
        run.trace(["a", "b"], 0, step=5)
    assert run.trace([0, 1, 2], 1).weights.shape == (4, 3, 3)  # ids work too


# --- the experiments --------------------------------------------------------------------------------------------

def engine_loss(run, sequences, targets, gates) -> float:
    """The mean cross-entropy over the answers, with every head's output scaled by gates (n_layers, h), in float64
    through mc.forward's head_mask: the residual stream written out here."""
    c, cfg = run.checkpoints[-1], run.config
    total, count = 0.0, 0
    for seq, target in zip(sequences, targets, strict=True):
        x = c.embedding.astype(np.float64)[seq] + c.positions[: len(seq)]
        for l, w in enumerate(c.layers):
            x = x + mc.forward(x, w.astype(np.float64), cfg, head_mask=gates[l]).output
        logits = x @ c.unembedding.T.astype(np.float64) + c.unembedding_bias
        logits -= logits.max(axis=-1, keepdims=True)
        log_p = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
        answered = target != IGNORE
        total -= log_p[answered, target[answered]].sum()
        count += answered.sum()
    return total / count


def test_head_gate_gradient_matches_a_finite_difference(trained):
    run = trained["induction"]
    subject = TinyHeads(run)
    grad = gate_gradients(subject)                                                # (batches, L, h)
    assert grad.shape == (subject.n_batches, 2, 4)
    ids, targets = (a[:16].numpy() for a in held_out(run.task))                  # batch 0
    eps = 1e-4
    for l, i in np.ndindex(2, 4):
        up, down = np.ones((2, 4)), np.ones((2, 4))
        up[l, i], down[l, i] = 1 + eps, 1 - eps
        difference = (engine_loss(run, ids, targets, up) - engine_loss(run, ids, targets, down)) / (2 * eps)
        assert grad[0, l, i] == pytest.approx(difference, abs=2e-5, rel=1e-3), (l, i)


def test_importance_by_gradient_and_by_removal(trained):
    run = trained["induction"]
    subject = TinyHeads(run)
    by_gradient = head_importance(subject, "gradient")
    np.testing.assert_allclose(np.linalg.norm(by_gradient, axis=1), 1.0, rtol=1e-6)  # normalised per layer
    mean_abs = np.abs(gate_gradients(subject)).mean(axis=0)
    np.testing.assert_allclose(by_gradient * np.linalg.norm(mean_abs, axis=1, keepdims=True), mean_abs, rtol=1e-6)
    by_removal = head_importance(subject, "removal")
    ids, targets = (a.numpy() for a in held_out(run.task))
    full = engine_loss(run, ids, targets, np.ones((2, 4)))
    for l, i in ((1, int(np.argmax(by_removal[1]))), (0, 0)):
        gates = np.ones((2, 4))
        gates[l, i] = 0.0
        assert by_removal[l, i] == pytest.approx(engine_loss(run, ids, targets, gates) - full, abs=1e-4)
    with pytest.raises(ConfigError, match="method must be one of"):
        head_importance(subject, "random")


def test_pruning_switches_off_the_least_important_heads_first(trained):
    run = trained["induction"]
    curve = prune(TinyHeads(run), "removal")
    assert list(curve.kept) == list(range(8, -1, -1))
    assert curve.order == pruning_order(curve.importance)
    ranked = [curve.importance[l, i] for l, i in curve.order]
    assert ranked == sorted(ranked)
    ids = held_out(run.task)[0].numpy()
    answers = [rule_answers("induction", seq.tolist()) for seq in ids]
    total = sum(a is not None for seq in answers for a in seq)
    for removed in (0, 3, 8):
        gates = np.ones((2, 4))
        for l, i in curve.order[:removed]:
            gates[l, i] = 0.0
        right = sum(int(predicted == answer)
                    for seq, seq_answers in zip(ids, answers, strict=True)
                    for predicted, answer in zip(run.logits(seq, head_mask=gates).argmax(axis=-1), seq_answers,
                                                 strict=True) if answer is not None)
        assert curve.accuracy[removed] == pytest.approx(right / total, abs=1.5 / total)  # a float32 tie at most
    assert curve.accuracy[0] >= 0.99 and curve.accuracy[-1] < 0.2  # no heads: no copying


def test_comparing_head_counts_at_the_same_parameters():
    runs = {}

    def recorded(task, **kw):
        runs[kw["n_heads"], kw["seed"]] = train(task, **kw)
        return runs[kw["n_heads"], kw["seed"]]

    done = []
    result = compare_heads("previous", heads=(1, 2), seeds=(0, 1), d_model=32, steps=30, train_fn=recorded,
                           callback=lambda k, total: done.append((k, total)))
    assert done == [(1, 4), (2, 4), (3, 4), (4, 4)]
    attention = [sum(p.numel() for p in torch.nn.MultiheadAttention(32, h).parameters()) for h in (1, 2)]
    assert result.parameters == tuple(attention) and attention[0] == attention[1]
    for (h, seed), run in runs.items():
        i, j = (1, 2).index(h), seed
        assert result.accuracy[i, j] == run.accuracy and result.final_loss[i, j] == run.checkpoints[-1].loss
        assert (np.isnan(result.steps_to_solve[i, j]) if run.steps_to_solve is None
                else result.steps_to_solve[i, j] == run.steps_to_solve)


# --- the figures --------------------------------------------------------------------------------------------------

def test_figures_show_the_runs_numbers(trained):
    run = trained["induction"]
    tokens = list(run.task.example)
    attentions = np.stack([run.attentions(tokens, c.step) for c in run.checkpoints])
    fig = tfig.patterns_through_training(attentions, tokens, run.checkpoint_steps,
                                         [c.accuracy for c in run.checkpoints])
    slider = fig.layout.sliders[0]
    assert len(slider.steps) == len(run.checkpoints) and slider.active == len(run.checkpoints) - 1
    for k in (0, len(run.checkpoints) // 2):
        z = slider.steps[k].args[0]["z"]
        assert len(z) == 8 and slider.steps[k].label == str(run.checkpoint_steps[k])
        np.testing.assert_allclose(z[5], attentions[k, 1, 1], atol=5e-4)  # layer 2, head 2, rounded to 3 decimals
    np.testing.assert_allclose(fig.data[7].z, attentions[-1, 1, 3], atol=1e-6)

    loss = tfig.loss_figure(run.losses, run.checkpoint_steps, [c.loss for c in run.checkpoints],
                            [c.accuracy for c in run.checkpoints])
    np.testing.assert_array_equal(loss.data[0].y, run.losses)
    np.testing.assert_allclose(loss.data[1].y[9], run.losses[:10].mean())  # the moving average's 10th point
    history = score_history(run, "prev")
    lines = tfig.score_history_figure(history, run.checkpoint_steps, "previous token")
    assert len(lines.data) == 8
    np.testing.assert_array_equal(lines.data[6].y, history[:, 1, 2])

    panels = tfig.head_patterns_figure([("a", attentions[-1, 1, 0], tokens), ("b", np.eye(3), ["x", "y", "z"])], "t")
    np.testing.assert_array_equal(panels.data[1].z, np.eye(3))
    assert list(panels.data[1].x) == ["1 x", "2 y", "3 z"]


def test_experiment_figures_draw_the_mean_and_the_spread():
    values = np.array([[0.2, 0.4, 0.9], [0.5, 0.5, 0.8]])                        # (points, runs)
    fig = tfig.pruning_figure({"a ranking": [(np.array([2, 1]), values[:, k]) for k in range(3)]}, "acc", "t", 2)
    band, *dots, mean = fig.data
    np.testing.assert_allclose(mean.y, values.mean(axis=1))
    np.testing.assert_allclose(band.y, [0.9, 0.8, 0.5, 0.2])                    # highest out, lowest back
    assert len(dots) == 3
    loss, acc, solved = np.ones((2, 3)), np.full((2, 3), 0.5), np.array([[np.nan, 100, 200], [50, 50, 50]])
    comparison = tfig.head_comparison_figure((1, 2), 64, loss, acc, solved, 300)
    means = [t for t in comparison.data if t.mode == "lines"]
    np.testing.assert_allclose(means[2].y, [200, 50])                          # an unsolved run counts at the budget


def test_the_trained_grid_names_tokens_in_fewer_larger_level_labels():
    """The 8-panel grid's labels are 12 px and level, every k-th token, and no more across a panel than its width
    holds (16 tokens in 4 panels of about 175 px: every 4th, 4 labels)."""
    tokens = list("cozyplanetplanet")                                               # 16 tokens, as the example
    attentions = np.random.default_rng(0).dirichlet(np.ones(16), size=(2, 2, 4, 16))  # (checkpoints, layers, h, n, n)
    fig = tfig.patterns_through_training(attentions, tokens, [0, 600], [0.0, 1.0])
    bottom, left = fig.layout.xaxis5, fig.layout.yaxis
    assert bottom.showticklabels and bottom.tickangle == 0 and bottom.tickfont.size >= 12
    assert list(bottom.tickvals) == [f"{i} {tokens[i - 1]}" for i in (1, 5, 9, 13)]
    assert left.showticklabels and left.tickfont.size >= 12
    assert len(left.tickvals) * 24 <= 260 and left.tickvals[0] == "1 c"               # a panel is 260 px tall
    assert not fig.layout.xaxis.showticklabels                                        # only under the bottom row


def test_the_pruning_text_says_nothing_false_of_shared_key_value_heads():
    """The pruning text, shown on the page, says no head has its own keys and values: SmolLM2's heads are measured
    on it, and its 9 query heads share 3 K/V heads (its card)."""
    from mha_core.pretrained import MODELS
    from mha_core.training.experiments import PRUNING_TEXT

    card = MODELS["SmolLM2-135M-Instruct"]
    assert card.n_kv_heads < card.n_heads  # the model measured shares its keys and values
    for sentence in PRUNING_TEXT.split(". "):
        assert not ("own" in sentence and re.search(r"\b(keys?|values?)\b", sentence)), sentence
    assert 140 <= len(PRUNING_TEXT) <= 170  # about 154 characters (35 tokens), the length the pruning is measured on


def test_an_induction_stripe_lies_one_place_less_than_a_phrase_length_left_of_the_diagonal(trained):
    """An induction head's stripe lies one place less than a phrase length left of the diagonal: one phrase length
    back lies each token's own earlier copy (a duplicate-token head); an induction head looks at the token that
    followed it."""
    run = trained["induction"]
    tokens = list(run.task.example)                                           # "cozyplanetplanet": letters
    phrase = len("planet")                                                    # the repeat's period, 6 tokens
    layer, head = strongest_head(head_scores(run, "induction"), "induction")
    weights = run.attentions(tokens)[layer, head]                             # (n, n)
    repeat = range(len(tokens) - phrase, len(tokens))                         # the second "planet"
    assert all(int(np.argmax(weights[t])) == t - (phrase - 1) for t in repeat)
