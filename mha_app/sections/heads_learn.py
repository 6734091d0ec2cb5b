"""The "Heads learn" page: train a tiny attention model, watch its heads form, find the same heads in real models,
and test the claims about heads as experiments.

Finished runs and experiments are kept once for the whole server (a shared link shows its run at once), and only one
training or experiment runs at a time on a server (BUSY): a second student is told so instead of slowing both.
The numbers come from mha_core.training, the figures from mha_core.figures.training; this module lays them out.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import streamlit as st

from mha_app.copy.markup import quote
from mha_app.run import compute
from mha_app.state.cache import BoundedCache, read_only
from mha_app.state.sentences import DECODER_SENTENCES, EXAMPLE_SENTENCES
from mha_app.state.settings import Spec
from mha_app.ui.charts import plot
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
BUSY_MESSAGE = ("Another student is training a model on this server right now. Trainings run one at a time so that "
                "each takes seconds, not minutes: try again in a few seconds. A run someone has finished shows at "
                "once.")
# Sources, as cited in running text.
ELHAGE, OLSSON, MICHEL = "Elhage et al. 2021", "Olsson et al. 2022", "Michel et al. 2019"


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
        note = f" (held-out loss {loss:.3f})" if loss is not None else ""
        bar.progress(min(done / total, 1.0) if total else 1.0, text=f"{what}: {done} of {total}{note}")
    return update


# --- The page's sections ------------------------------------------------------------------------------------------

def intro() -> None:
    st.markdown(
        "Nobody tells a transformer what its heads should do: each head starts with random weights, and training "
        "by gradient descent shapes it (step after step, every weight is nudged a little in the direction that "
        "makes the model's answers less wrong). Here you train a tiny transformer yourself, in seconds, on this "
        "server's CPU: two layers of attention heads and nothing else (no feed-forward blocks, like the toy models "
        f"in which {ELHAGE} and {OLSSON} found induction heads), on a task whose answer is known. Then you watch "
        "each head's attention form, and compare it with the same kind of head in two real models.")


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
    st.markdown(f"**{task.title}.** {task.rule} Example: {quote(' '.join(task.example), 80)} "
                f"({task.n_tokens} tokens, a vocabulary of {len(task.vocab)}).")
    same = {parameter_count(len(task.vocab), task.n_tokens, 2, k, d_model, task.positions) for k in HEAD_COUNTS}
    total = parameter_count(len(task.vocab), task.n_tokens, 2, h, d_model, task.positions)
    st.caption(f"{h} head{'s' if h > 1 else ''} of d_k = {d_model} / {h} = {d_model // h} dimensions in each of 2 "
               f"layers; {total:,} learned numbers in all, and "
               + ("the same count for 1, 2, 4 or 8 heads at this d_model (counted by mha_core.cost): splitting d_model "
                  "into heads costs no parameters." if len(same) == 1 else "the count depends on h.")
               + " Positions are " + ("learned" if task.positions == "learned" else
                                      "sinusoidal (the fixed sine waves of Vaswani et al. 2017)") + " for this task"
               + (": its rule is about fixed places (the first token, the list before the separator)."
                  if task.positions == "learned" else ": its rule is a shift (one back), the same at every position."))
    return Choice(task.name, h, d_model, seed)


def training(choice: Choice) -> TrainingRun | None:
    """The run of this choice: at once when the server has it, else the untrained model and a Train button."""
    run = RUNS.peek(choice.key)
    task = TASKS[choice.task]
    st.markdown("Training nudges every weight, step after step, to lower the *loss*: the cross-entropy of the right "
                "answers (minus the logarithm of the probability the model gives the right answer: 0 when it is sure "
                f"and right), averaged over the set P of positions that have one, on a fresh batch of {BATCH} random "
                "sequences at each step. The nudges are made by Adam (Kingma & Ba 2015), a form of gradient descent "
                "that gives each weight its own step size, from how that weight's slope has been changing. Each "
                "position sees only itself and the tokens before it.")
    st.latex(r"L = -\frac{1}{|P|} \sum_{t \in P} \log p_\theta(y_t \mid x_1, \dots, x_t)")
    if run is None:
        before = _untrained(choice)
        example = list(task.example)
        plot(tfig.patterns_through_training(before.attentions(example)[None], example, [0], [before.accuracy]),
             key="untrained")
        st.caption("Before training, with this seed's random weights: every head spreads its attention almost evenly "
                   "over the tokens it may see, and the model is right about as often as a guess (held-out "
                   "accuracy: the share of right answers on sequences it never trained on).")
        if asked(f"Train ({task.steps} steps, a few seconds)", "train", type="primary",
                 icon=":material/model_training:"):
            callback = progress_bar(f"Training on the {choice.task} task, step")
            run = exclusive(lambda: _train(choice.task, choice.h, choice.d_model, choice.seed, callback))
        if run is None:
            st.caption("The same settings and seed always give the same run, so a shared link reproduces it.")
            return None
    st.caption(f"Trained in {run.seconds:.1f} s on this server, with seed {run.seed}; kept for everyone, so a link "
               "to these settings shows it at once.")
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
                help="The share of answers right on sequences the model never trained on.")
    middle.metric(f"Steps until {SOLVED:.0%} right", "not reached" if solved is None else f"{solved}")
    right.metric("Training time", f"{run.seconds:.1f} s")
    plot(tfig.loss_figure(run.losses, run.checkpoint_steps, [c.loss for c in run.checkpoints],
                          [c.accuracy for c in run.checkpoints]), key="loss")
    st.caption("The loss is the cross-entropy of the right answers: about ln(vocabulary) = "
               f"{np.log(len(task.vocab)):.2f} when the model guesses, 0 when it is sure and right.")

    st.markdown("**The model on the example** (a blank answer: the rule gives none at that position):")
    answers = task.answers(task.encode(tokens)[None])[0]
    predicted = run.predict(tokens)
    rows = {"token": tokens, "answer": ["" if a < 0 else task.vocab[a] for a in answers],
            "the model says": [p if a >= 0 else "" for p, a in zip(predicted, answers, strict=True)],
            "right?": ["" if a < 0 else "✓" if p == task.vocab[a] else "✗"
                       for p, a in zip(predicted, answers, strict=True)]}
    # One row per position: a row per field ran 17 columns wide and was cut at the page's edge (read2). Every row
    # shows (35 px each, with the header), so none hides behind a scroll bar.
    st.dataframe({"position": list(range(1, len(tokens) + 1)), **rows}, hide_index=True,
                 height=35 * (len(tokens) + 1) + 3)

    st.header("Each head's attention, from random to trained")
    st.markdown("Move the slider under the figure through training. At step 0 the weights are random and every head "
                "spreads its attention almost evenly over the tokens it may see (the causal mask hides later ones); "
                "watch where each head's attention settles.")
    attentions, history = _patterns(run, tokens)
    plot(tfig.patterns_through_training(attentions, tokens, run.checkpoint_steps,
                                        [c.accuracy for c in run.checkpoints]), key="patterns")
    for statistic, values in history.items():
        plot(tfig.score_history_figure(values, run.checkpoint_steps, PARTS.labels[statistic],
                                       share=statistic != "entropy"), key=f"history_{statistic}")
        st.caption(_statistic_note(statistic))


def _statistics(task) -> tuple[str, ...]:
    """The head statistics shown over training: the task's own, and for induction first the previous-token share
    (the layer-1 head that the induction head reads)."""
    return ("prev", "induction") if task.statistic == "induction" else (task.statistic,)


def _statistic_note(statistic: str) -> str:
    notes = {
        "prev": "The previous-token share: the mean weight each query gives the token just before it (the same "
                "statistic as on the head summary page).",
        "first": "The first-token share: the mean weight each query gives the first token of the sequence.",
        "induction": "The induction score: for each token seen before, the weight on the token that followed its "
                     "earlier copy, averaged (the same statistic as on the head summary page). The full induction "
                     "circuit needs a layer-1 head that looks at the previous token (the chart above): the induction "
                     "head of layer 2 finds the earlier copy by the token that came before each key. The two curves "
                     "need not rise in that order: a head can gain some score before the circuit is complete.",
        "entropy": "Sorting needs neither a previous-token nor an induction head: each output position looks up the "
                   "next larger number in the list. The chart shows each head's entropy in bits instead: high when "
                   "it spreads its attention, falling as it learns to look at one number.",
    }
    return notes[statistic]


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
        st.markdown("Real models have induction heads and previous-token heads too. Choose the *induction* or "
                    "the *previous* task to see your model's head beside theirs.")
        return
    name, text, statistic, threshold = kind
    card = MODELS[name]
    scores = head_scores(run, statistic)
    layer, head = strongest_head(scores, statistic)
    label = PARTS.labels[statistic]
    if statistic == "induction":
        st.markdown(
            f"Induction heads were first described in models like yours ({ELHAGE}); {OLSSON} found them in every "
            f"large language model they looked at. Here is your strongest one beside the strongest of {card.name}'s "
            f"{card.n_layers * card.n_heads} heads, on a repeated phrase: the same stripe, one place less than the "
            "phrase's length to the left of the diagonal (each token of the repeat looks at the token that followed "
            "its earlier copy), and the same statistic.")
    else:
        st.markdown(
            f"Many trained models have heads that look at the previous token (Voita et al. 2019 found them in "
            f"translation models; Clark et al. 2019 in BERT). Here is yours beside the strongest of {card.name}'s "
            f"{card.n_layers * card.n_heads} heads, with the same statistic.")
    if not card.installed():
        st.info(f"{card.name} is not installed on this server; add it with `{card.install}`.")
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
    plot(tfig.head_patterns_figure(panels, f"Your strongest head beside {card.name}'s strongest ({label} in "
                                           "brackets)"), key="real_heads")
    if not top:
        st.caption(f"No head of {card.name} has a {label} above {threshold} on this text.")
    plot(tfig.score_bars_figure(names, values, label, [head_colour(k) for k in range(len(names))]),
         key="score_bars")
    parts = head_stats.parts_for(compute.pretrained_model(name))
    how = ("Its heads and yours are measured the same way." if parts.kind == "decoder" else
           f"The statistic is the same for its heads and yours; {card.name} is an encoder, so the tokens its "
           f"tokenizer adds ({parts.start} and {parts.end}) are counted apart, as on the head summary page.")
    st.caption(f"{card.name} reads: {quote(text, 120)}. {how} The head summary page lists every head of both models.")


def claims(choice: Choice) -> None:
    """The seed texts' claims, as experiments over several seeds."""
    st.header("The claims, tested")
    st.markdown("Texts about multi-head attention make two claims you can test here, each over "
                f"{len(SEEDS)} seeds, that is {len(SEEDS)} trainings from different random starting weights and "
                "batches (the band shows the lowest and the highest run, the line their mean).")
    _heads_claim(choice)
    _pruning_claim(choice)


def _heads_claim(choice: Choice) -> None:
    st.subheader("Are several narrow heads better than one wide head?")
    st.markdown(
        f"At d_model = {choice.d_model}, h heads of d_k = d_model / h have exactly the parameters of one head of "
        f"d_model. Train the induction task with 1, 2, 4 and 8 heads, {len(SEEDS)} seeds each, and compare.")
    key = ("heads", "induction", choice.d_model)
    result: HeadComparison | None = EXPERIMENTS.peek(key)
    if result is None:
        total = len(HEAD_COUNTS) * len(SEEDS)
        if asked(f"Run it ({total} trainings, about a minute; runs already done are reused)", "run_heads"):
            callback = progress_bar("Training")
            result = exclusive(lambda: EXPERIMENTS.get(key, lambda: read_only(compare_heads(
                "induction", HEAD_COUNTS, SEEDS, choice.d_model, train_fn=_cached_train, callback=callback))))
        if result is None:
            return
    plot(tfig.head_comparison_figure(result.heads, result.d_model, result.final_loss, result.accuracy,
                                     result.steps_to_solve, result.steps), key="heads_claim")
    st.caption(f"Every head count has {result.parameters[0]:,} attention parameters per layer. "
               + heads_verdict(result))


def heads_verdict(result: HeadComparison) -> str:
    """What the comparison found, in words: each head count's mean accuracy and steps, then which did best."""
    accuracy = result.accuracy.mean(axis=1)                                    # (heads,)
    unsolved = np.isnan(result.steps_to_solve).sum(axis=1)                     # (heads,)
    steps = np.where(np.isnan(result.steps_to_solve), result.steps, result.steps_to_solve).mean(axis=1)
    rows = [f"{h} head{'s' if h > 1 else ''}: {a:.1%} right, {SOLVED:.0%} after {s:.0f} steps on average"
            + (f" ({u} run{'s' if u > 1 else ''} never got there)" if u else "")
            for h, a, s, u in zip(result.heads, accuracy, steps, unsolved, strict=True)]
    fastest, best = result.heads[int(np.argmin(steps))], result.heads[int(np.argmax(accuracy))]
    one_is_enough = accuracy[0] >= SOLVED and fastest == 1
    verdict = (
        "Here one wide head per layer is enough, and learns fastest: each layer of this task needs one kind of "
        "head (a previous-token head, then an induction head). More heads pay off when a layer must follow several "
        f"relations at once; even in trained translation models, {MICHEL} found that many layers can be cut to "
        "one head at test time." if one_is_enough else
        f"Here {best} heads reach the best accuracy and {fastest} the fastest solution, at the same parameters.")
    return "; ".join(rows) + ". " + verdict


def _cached_train(task: str, n_layers: int, n_heads: int, d_model: int, steps, seed: int) -> TrainingRun:
    """train, through the server's cache of runs (for the experiments, which hold BUSY already). The page's runs
    have the default n_layers and steps, as compare_heads asks for them here."""
    return _train(task, n_heads, d_model, seed)


def _pruning_claim(choice: Choice) -> None:
    st.subheader("Can most heads be switched off?")
    st.markdown(
        f"{MICHEL} found that many heads of a trained model can be removed with little loss. Rank the heads by "
        "importance, switch them off one at a time, least important first, and watch the accuracy. Two rankings: "
        f"{MICHEL}'s, the size of the loss's gradient with respect to a gate ξ_i on head i's output (how fast the "
        "loss changes when ξ_i is turned a little from 1; normalised in each layer, as their code does), and the "
        "plain loss when the head alone is switched off.")
    st.latex(r"\mathrm{head}_i \to \xi_i \, \mathrm{head}_i, \qquad I_i = \mathbb{E}_x \left| "
             r"\frac{\partial L(x)}{\partial \xi_i} \right|_{\xi = 1}")
    key = ("prune", choice.task, choice.h, choice.d_model)
    curves = EXPERIMENTS.peek(key)
    if curves is None:
        if asked(f"Run it on your model's task ({len(SEEDS)} trainings, seeds {', '.join(map(str, SEEDS))})",
                 "run_prune"):
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
                                 "held-out accuracy", f"{TASKS[choice.task].title}: heads switched off, least "
                                 "important first", total), key="prune_tiny")
        spared = {IMPORTANCES[m]: _removable([c.accuracy for c in runs], runs[0].kept, lambda a: a >= SOLVED)
                  for m, runs in curves.items()}
        st.caption(f"Of the {total} heads, this many can be switched off while every run still gets {SOLVED:.0%} "
                   "right: " + "; ".join(f"{n} by {name}" for name, n in spared.items()) + ".")
    _smollm2_pruning()


def _smollm2_pruning() -> None:
    card = MODELS[SMOLLM2]
    st.markdown(f"The same on {card.name}, all {card.n_layers * card.n_heads} heads, measured by the loss of "
                f"predicting each next token of this text: {quote(PRUNING_TEXT, len(PRUNING_TEXT))}")
    if not card.installed():
        st.info(f"{card.name} is not installed on this server; add it with `{card.install}`.")
        return
    key = ("prune", SMOLLM2)
    curves = EXPERIMENTS.peek(key)
    if curves is None:
        if not asked("Run it on SmolLM2 (each head switched off alone, then in order: under a minute)",
                     "run_prune_smollm2"):
            return
        callback = progress_bar("Switching off each head alone, layer")

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
                             "next-token loss over the text", f"{card.name}: heads switched off, least important "
                             "first", total), key="prune_smollm2")
    full = next(iter(curves.values())).loss[0]
    spared = {IMPORTANCES[m]: _removable([c.loss], c.kept, lambda loss: loss <= 1.1 * full) for m, c in curves.items()}
    st.caption(f"With every head the loss is {full:.2f}. It stays within 10% of that with this many of the {total} "
               "heads switched off: " + "; ".join(f"{n} by {name}" for name, n in spared.items()) + " (counted at the "
               "points drawn). One text and one model: no seeds here, so no band.")


def _removable(curves: list[np.ndarray], kept: np.ndarray, good) -> int:
    """The most heads switched off, in the curves' order, before any curve's value stops being good."""
    fine = np.all([[good(v) for v in curve] for curve in curves], axis=0)     # (points,)
    bad = np.flatnonzero(~fine)
    last = len(fine) - 1 if not len(bad) else bad[0] - 1                     # the last point where all are good
    return int(kept[0] - kept[last]) if last >= 0 else 0
