"""What the Heads learn page says: the tiny model and its training, its heads beside a real model's, and the two
claims about heads tested over several seeds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mha_app.copy.markup import quote
from mha_app.copy.words import count, plural, verb

# Sources, as cited in running text.
ELHAGE, OLSSON, MICHEL = "Elhage et al. 2021", "Olsson et al. 2022", "Michel et al. 2019"

BUSY_MESSAGE = ("Another student is training a model on this server right now. Trainings run one at a time so that "
                "each takes seconds, not minutes: try again in a few seconds. A run someone has finished shows at "
                "once.")


def progress_text(what: str, done: int, total: int, loss: float | None = None) -> str:
    """The text of a progress bar: what runs, how far it is, and the held-out loss if known."""
    note = f" (held-out loss {loss:.3f})" if loss is not None else ""
    return f"{what}: {done} of {total}{note}"


# --- The tiny model and its training -----------------------------------------------------------------------------

INTRO = (
    "Nobody tells a transformer what its heads should do: each head starts with random weights, and training "
    "by gradient descent shapes it (step after step, every weight is nudged a little in the direction that "
    "makes the model's answers less wrong). Here you train a tiny transformer yourself, in seconds, on this "
    "server's CPU: two layers of attention heads and nothing else (no feed-forward blocks, like the toy models "
    f"in which {ELHAGE} and {OLSSON} found induction heads), on a task whose answer is known. Then you watch "
    "each head's attention form, and compare it with the same kind of head in two real models.")


def task_line(title: str, rule: str, example: Sequence[str], n_tokens: int, vocab: int) -> str:
    """The chosen task: its rule and an example sequence (quoted), its length and its vocabulary's size."""
    return (f"**{title}.** {rule} Example: {quote(' '.join(example), 80)} ({count(n_tokens, 'token')}, a vocabulary "
            f"of {vocab}).")


def sizes_caption(h: int, d_model: int, total: int, same_for_every_h: bool, learned_positions: bool) -> str:
    """The model's sizes and learned numbers, whether the count depends on h, and which positions the task uses."""
    counted = ("the same count for 1, 2, 4 or 8 heads at this d_model (counted by mha_core.cost): splitting d_model "
               "into heads costs no parameters." if same_for_every_h else "the count depends on h.")
    positions = ("learned for this task: its rule is about fixed places (the first token, the list before the "
                 "separator)." if learned_positions else
                 "sinusoidal (the fixed sine waves of Vaswani et al. 2017) for this task: its rule is a shift (one "
                 "back), the same at every position.")
    return (f"{count(h, 'head')} of d_k = {d_model} / {h} = {d_model // h} dimensions in each of 2 layers; "
            f"{total:,} learned numbers in all, and {counted} Positions are {positions}")


def loss_intro(batch: int) -> str:
    """What training lowers (the loss), on what, and how (Adam)."""
    return ("Training nudges every weight, step after step, to lower the *loss*: the cross-entropy of the right "
            "answers (minus the logarithm of the probability the model gives the right answer: 0 when it is sure "
            f"and right), averaged over the set P of positions that have one, on a fresh batch of {batch} random "
            "sequences at each step. The nudges are made by Adam (Kingma & Ba 2015), a form of gradient descent "
            "that gives each weight its own step size, from how that weight's slope has been changing. Each "
            "position sees only itself and the tokens before it.")


UNTRAINED = ("Before training, with this seed's random weights: every head spreads its attention almost evenly over "
             "the tokens it may see, and the model is right about as often as a guess (held-out accuracy: the share "
             "of right answers on sequences it never trained on).")
SAME_SEED = "The same settings and seed always give the same run, so a shared link reproduces it."


def train_label(steps: int) -> str:
    return f"Train ({steps} steps, a few seconds)"


def training_progress(task: str) -> str:
    return f"Training on the {task} task, step"


def trained_caption(seconds: float, seed: int) -> str:
    return (f"Trained in {seconds:.1f} s on this server, with seed {seed}; kept for everyone, so a link to these "
            "settings shows it at once.")


ACCURACY_HELP = "The share of answers right on sequences the model never trained on."


def loss_caption(vocab: float) -> str:
    """Under the loss curve: the loss of a guess (vocab: ln of the vocabulary's size) and of a sure right answer."""
    return (f"The loss is the cross-entropy of the right answers: about ln(vocabulary) = {vocab:.2f} when the model "
            "guesses, 0 when it is sure and right.")


EXAMPLE_TABLE = "**The model on the example** (a blank answer: the rule gives none at that position):"
PATTERNS_INTRO = ("Move the slider under the figure through training. At step 0 the weights are random and every head "
                  "spreads its attention almost evenly over the tokens it may see (the causal mask hides later ones); "
                  "watch where each head's attention settles.")

STATISTIC_NOTES = {
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


# --- The same head in a real model -------------------------------------------------------------------------------

NO_REAL_KIND = ("Real models have induction heads and previous-token heads too. Choose the *induction* or the "
                "*previous* task to see your model's head beside theirs.")


def real_heads_intro(statistic: str, name: str, n_heads: int) -> str:
    """Why the learned head is set beside a real model's (statistic: "induction" or "prev"; n_heads: all of the
    model's heads)."""
    if statistic == "induction":
        return (f"Induction heads were first described in models like yours ({ELHAGE}); {OLSSON} found them in every "
                f"large language model they looked at. Here is your strongest one beside the strongest of {name}'s "
                f"{n_heads} heads, on a repeated phrase: the same stripe, one place less than the phrase's length to "
                "the left of the diagonal (each token of the repeat looks at the token that followed its earlier "
                "copy), and the same statistic.")
    return (f"Many trained models have heads that look at the previous token (Voita et al. 2019 found them in "
            f"translation models; Clark et al. 2019 in BERT). Here is yours beside the strongest of {name}'s "
            f"{n_heads} heads, with the same statistic.")


def not_installed(name: str, install: str) -> str:
    return f"{name} is not installed on this server; add it with `{install}`."


def real_heads_title(name: str, label: str) -> str:
    return f"Your strongest head beside {name}'s strongest ({label} in brackets)"


def no_strong_head(name: str, label: str, threshold: float) -> str:
    return f"No head of {name} has a {label} above {threshold} on this text."


def real_reads(name: str, text: str, decoder: bool, start: str = "", end: str = "") -> str:
    """What the real model reads (quoted), and how its heads are measured beside yours (an encoder's added tokens,
    start and end, are counted apart)."""
    how = ("Its heads and yours are measured the same way." if decoder else
           f"The statistic is the same for its heads and yours; {name} is an encoder, so the tokens its tokenizer adds "
           f"({start} and {end}) are counted apart, as on the head summary page.")
    return f"{name} reads: {quote(text, 120)}. {how} The head summary page lists every head of both models."


# --- The claims, tested ------------------------------------------------------------------------------------------

HEADS_CLAIM = "Are several narrow heads better than one wide head?"
PRUNING_CLAIM = "Can most heads be switched off?"


def claims_intro(n_seeds: int) -> str:
    return ("Texts about multi-head attention make two claims you can test here, each over "
            f"{n_seeds} seeds, that is {n_seeds} trainings from different random starting weights and batches (the "
            "band shows the lowest and the highest run, the line their mean).")


def heads_claim_intro(d_model: int, n_seeds: int) -> str:
    return (f"At d_model = {d_model}, h heads of d_k = d_model / h have exactly the parameters of one head of "
            f"d_model. Train the induction task with 1, 2, 4 and 8 heads, {count(n_seeds, 'seed')} each, and compare.")


def run_heads_label(trainings: int) -> str:
    return f"Run it ({trainings} trainings, about a minute; runs already done are reused)"


def heads_verdict(heads: Sequence[int], accuracy: Sequence[float], steps: Sequence[float],
                  unsolved: Sequence[int], solved: float, parameters: int) -> str:
    """What the comparison found: each head count's mean accuracy and mean steps to `solved` (unsolved: runs that
    never got there), then which did best."""
    rows = [f"{count(h, 'head')}: {a:.1%} right, {solved:.0%} after {s:.0f} steps on average"
            + (f" ({count(u, 'run')} never got there)" if u else "")
            for h, a, s, u in zip(heads, accuracy, steps, unsolved, strict=True)]
    fastest = heads[min(range(len(heads)), key=lambda i: steps[i])]
    best = heads[max(range(len(heads)), key=lambda i: accuracy[i])]
    if accuracy[0] >= solved and fastest == 1:
        verdict = ("Here one wide head per layer is enough, and learns fastest: each layer of this task needs one "
                   "kind of head (a previous-token head, then an induction head). More heads pay off when a layer "
                   f"must follow several relations at once; even in trained translation models, {MICHEL} found that "
                   "many layers can be cut to one head at test time.")
    else:
        verdict = (f"Here {best} {plural(best, 'head')} {verb(best, 'reaches', 'reach')} the best accuracy and "
                   f"{fastest} the fastest solution, at the same parameters.")
    return (f"Every head count has {parameters:,} attention parameters per layer. " + "; ".join(rows) + ". "
            + verdict)


PRUNING_INTRO = (
    f"{MICHEL} found that many heads of a trained model can be removed with little loss. Rank the heads by "
    "importance, switch them off one at a time, least important first, and watch the accuracy. Two rankings: "
    f"{MICHEL}'s, the size of the loss's gradient with respect to a gate ξ_i on head i's output (how fast the "
    "loss changes when ξ_i is turned a little from 1; normalised in each layer, as their code does), and the "
    "plain loss when the head alone is switched off.")


def prune_label(seeds: Sequence[int]) -> str:
    return f"Run it on your model's task ({len(seeds)} trainings, seeds {', '.join(map(str, seeds))})"


def prune_title(task_title: str) -> str:
    return f"{task_title}: heads switched off, least important first"


def _spared(spared: Mapping[str, int]) -> str:
    return "; ".join(f"{n} by {name}" for name, n in spared.items())


def prune_caption(total: int, spared: Mapping[str, int], solved: float) -> str:
    """How many of the tiny model's heads can go, by each ranking, while every run stays solved."""
    return (f"Of the {total} heads, this many can be switched off while every run still gets {solved:.0%} right: "
            f"{_spared(spared)}.")


def smollm2_pruning_intro(name: str, n_heads: int, text: str) -> str:
    return (f"The same on {name}, all {n_heads} heads, measured by the loss of predicting each next token of this "
            f"text: {quote(text, len(text))}")


SMOLLM2_PRUNE_LABEL = "Run it on SmolLM2 (each head switched off alone, then in order: under a minute)"
SMOLLM2_PROGRESS = "Switching off each head alone, layer"


def smollm2_prune_caption(full: float, total: int, spared: Mapping[str, int]) -> str:
    """How many of the real model's heads can go, by each ranking, while its loss stays within 10%."""
    return (f"With every head the loss is {full:.2f}. It stays within 10% of that with this many of the {total} "
            f"heads switched off: {_spared(spared)} (counted at the points drawn). One text and one model: no seeds "
            "here, so no band.")
