"""The "Heads learn" page: train a tiny attention model, watch its heads form, find the same heads in real models,
and test the claims about heads as experiments.

Finished runs and experiments are kept once for the whole server (a shared link shows its run at once), and only one
training or experiment runs at a time on a server (BUSY): a second student is told so instead of slowing both.
The numbers come from mha_core.training, the figures from mha_core.figures.training, the words from
mha_app.copy.heads_learn; this module lays them out.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import streamlit as st

from mha_app.copy import heads_learn as texts
from mha_app.copy.heads_learn import BUSY_MESSAGE
from mha_app.run import compute
from mha_app.state.cache import BoundedCache, read_only
from mha_app.state.sentences import DECODER_SENTENCES, EXAMPLE_SENTENCES
from mha_app.state.settings import Spec
from mha_app.ui.charts import plot
from mha_app.ui.layout import table_height
from mha_app.ui.notices import token_spelling
from mha_app.ui.pickers import setting_widget
from mha_core import ConfigError
from mha_core.analysis import head_stats
from mha_core.figures import head_colour
from mha_core.figures import training as tfig
from mha_core.pretrained import MODELS, ModelNotInstalledError
from mha_core.training import TASKS, train
from mha_core.training.experiments import (
    IMPORTANCES,
    PRUNING_TEXT,
    SEEDS,
    HeadComparison,
    SmolLM2Heads,
    compare_heads,
    prune,
    prune_runs,
)
from mha_core.training.model import parameter_count
from mha_core.training.scores import PARTS, head_scores, score_history, strongest_head
from mha_core.training.tasks import HEAD_COUNTS
from mha_core.training.trainer import BATCH, SOLVED, TrainingRun, one_thread

SMOLLM2, MINILM = "SmolLM2-135M-Instruct", "all-MiniLM-L6-v2"
REPEATED_PHRASE = DECODER_SENTENCES["Repeated phrase (induction heads)"]
SENTENCE = EXAMPLE_SENTENCES["Coreference (what does 'it' refer to?)"]
MAX_RUNS = 48                      # a run at the largest sizes holds ~3 MB of checkpoints
RUNS = BoundedCache(MAX_RUNS, 256 * 2**20)
EXPERIMENTS = BoundedCache(16, 64 * 2**20)
BUSY = threading.Lock()            # one training or experiment at a time on this server


@dataclass(frozen=True)
class Choice:
    """The tiny model the student asked for."""

    task: str
    h: int
    d_model: int
    seed: int

    @property
    def key(self) -> tuple:
        return ("run", self.task, self.h, self.d_model, self.seed)


# --- Training, kept for the server ------------------------------------------------------------------------------

def _train(task: str, n_heads: int, d_model: int, seed: int, callback=None) -> TrainingRun:
    """A finished run from the server's cache, or a new one (the caller holds BUSY)."""
    key = Choice(task, n_heads, d_model, seed).key
    return RUNS.get(key, lambda: read_only(train(task, n_heads=n_heads, d_model=d_model, seed=seed,
                                                 callback=callback)))


def exclusive(compute_fn):
    """compute_fn() while holding BUSY; None (and a message on the page) when another computation holds it."""
    if not BUSY.acquire(blocking=False):
        st.warning(BUSY_MESSAGE, icon=":material/hourglass_top:")
        return None
    try:
        return compute_fn()
    finally:
        BUSY.release()


def asked(label: str, key: str, **kw) -> bool:
    """A button that asks for a long computation; True in the run that should do it.

    The click is kept in the session by the button's callback (not read from the button's value), so that it
    survives a rerun that happens before this line (the first run of a page reruns once, see toolkit.view).
    """
    st.button(label, key=key, on_click=_ask, args=(key,), **kw)
    return st.session_state.pop(f"asked_{key}", False)


def _ask(key: str) -> None:
    st.session_state[f"asked_{key}"] = True


def progress_bar(what: str):
    """A progress bar and the callback(done, total, ...) that moves it."""
    bar = st.progress(0.0, text=what)

    def update(done: int, total: int, loss: float | None = None) -> None:
        bar.progress(min(done / total, 1.0) if total else 1.0, text=texts.progress_text(what, done, total, loss))
    return update


# --- The page's sections ------------------------------------------------------------------------------------------

def intro() -> None:
    st.markdown(texts.INTRO)


def controls() -> Choice:
    """The task and the model's sizes, bound to the link, and what they cost."""
    left, second, third, right = st.columns([2, 1, 1, 1])
    with left:
        # The names themselves, not their titles: a widget bound to the link writes what it shows into the link.
        task = TASKS[setting_widget("task")]
    with second:
        h = int(setting_widget("task_h"))
    with third:
        d_model = int(setting_widget("task_d_model"))
    with right:
        seed = int(setting_widget("task_seed"))
    st.markdown(texts.task_line(task.title, task.rule, task.example, task.n_tokens, len(task.vocab)))
    same = {parameter_count(len(task.vocab), task.n_tokens, 2, k, d_model, task.positions) for k in HEAD_COUNTS}
    total = parameter_count(len(task.vocab), task.n_tokens, 2, h, d_model, task.positions)
    st.caption(texts.sizes_caption(h, d_model, total, len(same) == 1, task.positions == "learned"))
    return Choice(task.name, h, d_model, seed)


def training(choice: Choice) -> TrainingRun | None:
    """The run of this choice: at once when the server has it, else the untrained model and a Train button."""
    run = RUNS.peek(choice.key)
    task = TASKS[choice.task]
    st.markdown(texts.loss_intro(BATCH))
    st.latex(r"L = -\frac{1}{|P|} \sum_{t \in P} \log p_\theta(y_t \mid x_1, \dots, x_t)")
    if run is None:
        before = _untrained(choice)
        example = list(task.example)
        plot(tfig.patterns_through_training(before.attentions(example)[None], example, [0], [before.accuracy]),
             key="untrained")
        st.caption(texts.UNTRAINED)
        if asked(texts.train_label(task.steps), "train", type="primary",
                 icon=":material/model_training:"):
            callback = progress_bar(texts.training_progress(choice.task))
            run = exclusive(lambda: _train(choice.task, choice.h, choice.d_model, choice.seed, callback))
        if run is None:
            st.caption(texts.SAME_SEED)
            return None
    st.caption(texts.trained_caption(run.seconds, run.seed))
    return run


def _untrained(choice: Choice) -> TrainingRun:
    """The model of this choice before any training step (its step-0 checkpoint), kept for the server."""
    return EXPERIMENTS.get(("untrained", *choice.key[1:]), lambda: read_only(
        train(choice.task, n_heads=choice.h, d_model=choice.d_model, seed=choice.seed, steps=0)))


def show_run(run: TrainingRun) -> None:
    """The run: how well it learned, the loss curve, its answers on the example, and each head's attention."""
    task, tokens = run.task, list(run.task.example)
    solved = run.steps_to_solve
    left, middle, right = st.columns(3)
    left.metric("Held-out accuracy at the end", f"{run.accuracy:.1%}",
                help=texts.ACCURACY_HELP)
    middle.metric(f"Steps until {SOLVED:.0%} right", "not reached" if solved is None else f"{solved}")
    right.metric("Training time", f"{run.seconds:.1f} s")
    plot(tfig.loss_figure(run.losses, run.checkpoint_steps, [c.loss for c in run.checkpoints],
                          [c.accuracy for c in run.checkpoints]), key="loss")
    st.caption(texts.loss_caption(np.log(len(task.vocab))))

    st.markdown(texts.EXAMPLE_TABLE)
    answers = task.answers(task.encode(tokens)[None])[0]
    predicted = run.predict(tokens)
    rows = {"token": tokens, "answer": ["" if a < 0 else task.vocab[a] for a in answers],
            "the model says": [p if a >= 0 else "" for p, a in zip(predicted, answers, strict=True)],
            "right?": ["" if a < 0 else "✓" if p == task.vocab[a] else "✗"
                       for p, a in zip(predicted, answers, strict=True)]}
    # One row per position: a row per field would run 17 columns wide, past the page's edge. Every row
    # shows, so none hides behind a scroll bar.
    st.dataframe({"position": list(range(1, len(tokens) + 1)), **rows}, hide_index=True,
                 height=table_height(len(tokens)))

    st.header("Each head's attention, from random to trained")
    st.markdown(texts.PATTERNS_INTRO)
    attentions, history = _patterns(run, tokens)
    plot(tfig.patterns_through_training(attentions, tokens, run.checkpoint_steps,
                                        [c.accuracy for c in run.checkpoints]), key="patterns")
    for statistic, values in history.items():
        plot(tfig.score_history_figure(values, run.checkpoint_steps, PARTS.labels[statistic],
                                       share=statistic != "entropy"), key=f"history_{statistic}")
        st.caption(texts.STATISTIC_NOTES[statistic])


def _statistics(task) -> tuple[str, ...]:
    """The head statistics shown over training: the task's own, and for induction first the previous-token share
    (the layer-1 head that the induction head reads)."""
    return ("prev", "induction") if task.statistic == "induction" else (task.statistic,)


def _patterns(run: TrainingRun, tokens: list[str]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Every checkpoint's attention weights on the example, and each head's statistics over training."""
    key = ("patterns", run.task.name, run.n_heads, run.d_model, run.seed)
    return EXPERIMENTS.get(key, lambda: read_only((
        np.stack([run.attentions(tokens, c.step) for c in run.checkpoints]),
        {statistic: score_history(run, statistic, tokens) for statistic in _statistics(run.task)})))


def real_heads(run: TrainingRun) -> None:
    """The learned head beside the same kind of head in a real model, with the same statistic."""
    st.header("The same head in a real model")
    kind = {"induction": (SMOLLM2, REPEATED_PHRASE, "induction", head_stats.INDUCTION_MIN_SCORE),
            "prev": (MINILM, SENTENCE, "prev", head_stats.DOMINANT_MIN_SHARE)}.get(run.task.statistic)
    if kind is None:
        st.markdown(texts.NO_REAL_KIND)
        return
    name, text, statistic, threshold = kind
    card = MODELS[name]
    scores = head_scores(run, statistic)
    layer, head = strongest_head(scores, statistic)
    label = PARTS.labels[statistic]
    st.markdown(texts.real_heads_intro(statistic, card.name, card.n_layers * card.n_heads))
    if not card.installed():
        st.info(texts.not_installed(card.name, card.install))
        return
    spec = Spec(model=name, text=text)
    try:
        rows = compute.head_summary(spec, 1)
        model_run = compute.example(spec).run
    except (ModelNotInstalledError, ConfigError) as err:
        st.info(str(err))
        return
    top = head_stats.top_heads(rows, statistic, threshold, k=3)
    short = card.name.split("-")[0]
    names = [f"yours: layer {layer + 1}, head {head + 1}"] + [f"{short}: layer {r['layer'] + 1}, head {r['head'] + 1}"
                                                             for r in top]
    values = [float(scores[layer, head])] + [float(r[statistic]) for r in top]
    example = list(run.task.example)
    panels = [(f"{names[0]} ({values[0]:.2f})", run.trace(example, layer).weights[head], example)]
    panels += [(f"{name} ({value:.2f})", model_run.layers[r["layer"]].weights[r["head"]], model_run.tokens)
               for name, value, r in zip(names[1:], values[1:], top, strict=True)]
    token_spelling(spec)  # the real model's tokens are on the panels' axes
    plot(tfig.head_patterns_figure(panels, texts.real_heads_title(card.name, label)), key="real_heads")
    if not top:
        st.caption(texts.no_strong_head(card.name, label, threshold))
    plot(tfig.score_bars_figure(names, values, label, [head_colour(k) for k in range(len(names))]),
         key="score_bars")
    parts = head_stats.parts_for(compute.pretrained_model(name))
    st.caption(texts.real_reads(card.name, text, parts.kind == "decoder", parts.start, parts.end))


def claims(choice: Choice) -> None:
    """The seed texts' claims, as experiments over several seeds."""
    st.header("The claims, tested")
    st.markdown(texts.claims_intro(len(SEEDS)))
    _heads_claim(choice)
    _pruning_claim(choice)


def _heads_claim(choice: Choice) -> None:
    st.subheader(texts.HEADS_CLAIM)
    st.markdown(texts.heads_claim_intro(choice.d_model, len(SEEDS)))
    key = ("heads", "induction", choice.d_model)
    result: HeadComparison | None = EXPERIMENTS.peek(key)
    if result is None:
        total = len(HEAD_COUNTS) * len(SEEDS)
        if asked(texts.run_heads_label(total), "run_heads"):
            callback = progress_bar("Training")
            result = exclusive(lambda: EXPERIMENTS.get(key, lambda: read_only(compare_heads(
                "induction", HEAD_COUNTS, SEEDS, choice.d_model, train_fn=_cached_train, callback=callback))))
        if result is None:
            return
    plot(tfig.head_comparison_figure(result.heads, result.d_model, result.final_loss, result.accuracy,
                                     result.steps_to_solve, result.steps), key="heads_claim")
    st.caption(heads_verdict(result))


def heads_verdict(result: HeadComparison) -> str:
    """What the comparison found, in words: each head count's mean accuracy and steps, then which did best."""
    accuracy = result.accuracy.mean(axis=1)                                    # (heads,)
    unsolved = np.isnan(result.steps_to_solve).sum(axis=1)                     # (heads,)
    steps = np.where(np.isnan(result.steps_to_solve), result.steps, result.steps_to_solve).mean(axis=1)
    return texts.heads_verdict(list(result.heads), accuracy.tolist(), steps.tolist(), unsolved.tolist(), SOLVED,
                               result.parameters[0])


def _cached_train(task: str, n_layers: int, n_heads: int, d_model: int, steps, seed: int) -> TrainingRun:
    """train, through the server's cache of runs (for the experiments, which hold BUSY already). The page's runs
    have the default n_layers and steps, as compare_heads asks for them here."""
    return _train(task, n_heads, d_model, seed)


def _pruning_claim(choice: Choice) -> None:
    st.subheader(texts.PRUNING_CLAIM)
    st.markdown(texts.PRUNING_INTRO)
    st.latex(r"\mathrm{head}_i \to \xi_i \, \mathrm{head}_i, \qquad I_i = \mathbb{E}_x \left| "
             r"\frac{\partial L(x)}{\partial \xi_i} \right|_{\xi = 1}")
    key = ("prune", choice.task, choice.h, choice.d_model)
    curves = EXPERIMENTS.peek(key)
    if curves is None:
        if asked(texts.prune_label(SEEDS), "run_prune"):
            callback = progress_bar("Training")

            def compute_curves():
                runs = []
                for k, seed in enumerate(SEEDS):
                    runs.append(_train(choice.task, choice.h, choice.d_model, seed))
                    callback(k + 1, len(SEEDS))
                return read_only({method: prune_runs(runs, method) for method in IMPORTANCES})
            curves = exclusive(lambda: EXPERIMENTS.get(key, compute_curves))
    if curves is not None:
        total = 2 * choice.h
        plot(tfig.pruning_figure({IMPORTANCES[m]: [(c.kept, c.accuracy) for c in runs] for m, runs in curves.items()},
                                 "held-out accuracy", texts.prune_title(TASKS[choice.task].title), total),
             key="prune_tiny")
        spared = {IMPORTANCES[m]: _removable([c.accuracy for c in runs], runs[0].kept, lambda a: a >= SOLVED)
                  for m, runs in curves.items()}
        st.caption(texts.prune_caption(total, spared, SOLVED))
    _smollm2_pruning()


def _smollm2_pruning() -> None:
    card = MODELS[SMOLLM2]
    st.markdown(texts.smollm2_pruning_intro(card.name, card.n_layers * card.n_heads, PRUNING_TEXT))
    if not card.installed():
        st.info(texts.not_installed(card.name, card.install))
        return
    key = ("prune", SMOLLM2)
    curves = EXPERIMENTS.peek(key)
    if curves is None:
        if not asked(texts.SMOLLM2_PRUNE_LABEL, "run_prune_smollm2"):
            return
        callback = progress_bar(texts.SMOLLM2_PROGRESS)

        def compute_curves():
            subject = SmolLM2Heads(compute.pretrained_model(SMOLLM2))
            with one_thread():
                return read_only({method: prune(subject, method, points=19, callback=callback)
                                  for method in IMPORTANCES})
        curves = exclusive(lambda: EXPERIMENTS.get(key, compute_curves))
        if curves is None:
            return
    total = card.n_layers * card.n_heads
    plot(tfig.pruning_figure({IMPORTANCES[m]: [(c.kept, c.loss)] for m, c in curves.items()},
                             "next-token loss over the text", texts.prune_title(card.name), total),
         key="prune_smollm2")
    full = next(iter(curves.values())).loss[0]
    spared = {IMPORTANCES[m]: _removable([c.loss], c.kept, lambda loss: loss <= 1.1 * full) for m, c in curves.items()}
    st.caption(texts.smollm2_prune_caption(full, total, spared))


def _removable(curves: list[np.ndarray], kept: np.ndarray, good) -> int:
    """The most heads switched off, in the curves' order, before any curve's value stops being good."""
    fine = np.all([[good(v) for v in curve] for curve in curves], axis=0)     # (points,)
    bad = np.flatnonzero(~fine)
    last = len(fine) - 1 if not len(bad) else bad[0] - 1                     # the last point where all are good
    return int(kept[0] - kept[last]) if last >= 0 else 0
