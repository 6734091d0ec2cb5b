"""The Heads learn page as a student drives it (AppTest): settings from the link, training with a progress bar, the
run's figures (the wiring: they show the run's own numbers), a shared link that replays at once, the message to a
second student while a training runs, the real models' heads, and the experiments' figures from the server's cache.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import load_pretrained
from mha_app.copy import heads_learn as texts
from mha_app.sections import heads_learn
from mha_core.pretrained import load_minilm
from mha_core.training import TASKS, train
from mha_core.training.experiments import HeadComparison, PruningCurve
from mha_core.training.model import parameter_count
from mha_core.training.trainer import SOLVED
from screen import as_array, figure_titled, run_app

PAGE = "pages/heads_learn.py"
QUICK = {"task": "previous", "task_h": "2", "task_d_model": "32", "task_seed": "7"}  # 300 steps of a small model


def assert_clean(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def train_button(at):
    return next(b for b in at.button if b.label.startswith("Train ("))


@pytest.fixture(scope="module")
def trained():
    """The page after pressing Train on QUICK's settings (the run stays in the server's cache for the module)."""
    heads_learn.RUNS.clear()
    at = run_app(QUICK, PAGE)
    assert_clean(at)
    train_button(at).click().run()
    return at


def test_the_link_sets_the_task_and_sizes_and_nothing_is_trained_before_asked():
    heads_learn.RUNS.clear()
    at = run_app({"task": "sort", "task_h": "8", "task_d_model": "128", "task_seed": "3"}, PAGE)
    assert_clean(at)
    assert [at.selectbox(key=name).value for name in ("task", "task_h", "task_d_model")] == ["sort", "8", "128"]
    assert at.number_input(key="task_seed").value == 3
    assert train_button(at).label == texts.train_label(600)
    before = figure_titled(at, "Step 0: held-out accuracy")  # the untrained model: the only figure of a run
    assert len([c for c in at.get("plotly_chart")]) == 1 and "sliders" not in before["layout"]
    untrained = train("sort", n_heads=8, d_model=128, seed=3, steps=0).attentions(list(TASKS["sort"].example))
    assert len(before["data"]) == 16
    np.testing.assert_allclose(as_array(before["data"][9]["z"]), untrained[1, 1], atol=1e-6)
    task = TASKS["sort"]
    total = parameter_count(len(task.vocab), task.n_tokens, 2, 8, 128, task.positions)
    assert texts.sizes_caption(8, 128, total, True, task.positions == "learned") in [c.value for c in at.caption]


def test_training_shows_the_runs_numbers(trained):
    at = trained
    run = heads_learn.RUNS.peek(heads_learn.Choice("previous", 2, 32, 7).key)
    assert run is not None and run.n_heads == 2 and run.d_model == 32 and run.seed == 7
    loss = figure_titled(at, "Loss and accuracy")
    np.testing.assert_allclose(as_array(loss["data"][0]["y"]), run.losses)
    patterns = figure_titled(at, "Step 300")
    attentions = run.attentions(list(run.task.example))                          # (2, 2, n, n)
    np.testing.assert_allclose(as_array(patterns["data"][3]["z"]), attentions[1, 1], atol=1e-6)
    assert len(patterns["layout"]["sliders"][0]["steps"]) == len(run.checkpoints)
    history = figure_titled(at, "Previous token of each head")
    assert len(history["data"]) == 4
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Held-out accuracy at the end"] == f"{run.accuracy:.1%}"
    last = patterns["layout"]["sliders"][0]["steps"][-1]["args"][1]["title.text"]  # rounded as the metric is
    assert f"held-out accuracy {metrics['Held-out accuracy at the end']}" in last
    table = at.dataframe[0].value
    assert list(table["token"]) == list(run.task.example)                        # the tokens, one row each (fits)
    assert list(table["position"]) == list(range(1, len(run.task.example) + 1))


def test_a_shared_link_replays_the_run_at_once(trained):
    at = run_app(QUICK, PAGE)
    assert_clean(at)
    assert not [b for b in at.button if b.label.startswith("Train (")]
    assert figure_titled(at, "Loss and accuracy") and any("Trained in" in c.value for c in at.caption)


def test_a_second_student_is_told_while_a_training_runs():
    at = run_app({**QUICK, "task_seed": "8"}, PAGE)
    assert heads_learn.BUSY.acquire(blocking=False)
    try:
        train_button(at).click().run()
    finally:
        heads_learn.BUSY.release()
    assert_clean(at)
    assert [w.value for w in at.warning] == [heads_learn.BUSY_MESSAGE]
    assert heads_learn.RUNS.peek(heads_learn.Choice("previous", 2, 32, 8).key) is None


def test_the_learned_head_beside_minilms_previous_token_heads(trained):
    load_pretrained(load_minilm)
    at = run_app(QUICK, PAGE)
    assert_clean(at)
    figure = figure_titled(at, "Your strongest head beside all-MiniLM-L6-v2's")
    names = [a["text"] for a in figure["layout"]["annotations"]]
    assert names[0].startswith("yours: layer") and all(n.startswith("all: layer") for n in names[1:]) and len(names) > 1
    assert texts.real_reads("all-MiniLM-L6-v2", heads_learn.SENTENCE, False, "[CLS]", "[SEP]") in [
        c.value for c in at.caption]
    bars = figure_titled(at, "The same statistic: previous token")
    assert list(bars["data"][0]["x"])[0] == names[0].split(" (")[0]


def test_the_experiments_show_the_servers_results():
    heads_learn.EXPERIMENTS.clear()
    comparison = HeadComparison(task="induction", d_model=64, heads=(1, 2, 4, 8), seeds=(0, 1, 2),
                                parameters=(16640,) * 4, final_loss=np.full((4, 3), 0.5),
                                accuracy=np.array([[0.5, 0.6, 0.7]] + [[1.0, 1.0, 0.99]] * 3),
                                steps_to_solve=np.array([[np.nan] * 3] + [[300.0, 325, 350]] * 3), steps=600)
    heads_learn.EXPERIMENTS.get(("heads", "induction", 64), lambda: comparison)
    curve = PruningCurve(method="removal", importance=np.zeros((2, 4)), order=tuple(np.ndindex(2, 4)),
                         kept=np.arange(8, -1, -1), loss=np.linspace(0, 3, 9), accuracy=np.linspace(1, 0.1, 9))
    heads_learn.EXPERIMENTS.get(("prune", "induction", 4, 64),
                                lambda: {"gradient": (curve,) * 3, "removal": (curve,) * 3})
    at = run_app({}, PAGE)
    assert_clean(at)
    heads = figure_titled(at, "One head against several at d_model = 64")
    means = [t for t in heads["data"] if t.get("mode") == "lines"]
    np.testing.assert_allclose(as_array(means[1]["y"]), comparison.accuracy.mean(axis=1))
    np.testing.assert_allclose(as_array(means[2]["y"]), [600, 325, 325, 325])  # unsolved runs count at the budget
    # unsolved runs count at the budget: 600 steps for 1 head (the words: unit/test_copy_heads_learn.py)
    verdict = texts.heads_verdict((1, 2, 4, 8), comparison.accuracy.mean(axis=1).tolist(), [600, 325, 325, 325],
                                  [3, 0, 0, 0], SOLVED, 16640)
    assert verdict in [c.value for c in at.caption]
    pruned = figure_titled(at, "Induction: … A B … A → B: heads switched off")
    np.testing.assert_allclose(as_array([t for t in pruned["data"] if t.get("mode") == "lines"][0]["y"]),
                               curve.accuracy)
    assert [b.label for b in at.button if b.label.startswith("Run it on SmolLM2")]  # not run: a button
