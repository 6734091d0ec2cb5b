"""Four tasks with a known answer, small enough to learn on a CPU in seconds.

Each task draws random sequences and says, for every position, the token the model should output there (or
IGNORE where the rule gives no answer). The rules are those of the heads the app shows in real models:
- previous: output the token before (a previous-token head does this);
- first: output the first token of the sequence;
- induction: when a token comes again, output the token that followed it last time (… A B … A → B): the job of an
  induction head (Olsson et al. 2022), which reads the previous-token head of an earlier layer;
- sort: read a list of numbers, then write it out sorted, one number per position.
Positions: sinusoidal where the rule is relative ("one back" is the same shift at every position), learned where
it is absolute (the first position, the list before the separator).
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..attention.config import ConfigError

IGNORE = -100  # a target without an answer: F.cross_entropy's ignore_index
LETTERS = tuple(string.ascii_lowercase)  # 26 tokens
NUMBERS = tuple(str(i) for i in range(30))
SEPARATOR = ">"
HEAD_COUNTS = (1, 2, 4, 8)   # the head counts a student can choose, and those the comparison of heads trains
D_MODELS = (32, 64, 128)     # the widths a student can choose (every head count divides each)
INDUCTION_REPEATS = (3, 6)  # the repeated stretch is 3 to 6 tokens long, so its place differs in every sequence


@dataclass(frozen=True)
class Task:
    """A task: its vocabulary, its sequences, and the rule that gives the answer at each position."""

    name: str
    title: str                  # a few words for a menu
    rule: str                   # one sentence for a student
    vocab: tuple[str, ...]      # at most 32 tokens
    n_tokens: int               # every sequence has this length (8 to 32)
    positions: str              # "learned" or "sinusoidal"
    steps: int                  # the training budget at the default sizes (2 layers, 4 heads, d_model 64)
    statistic: str              # the head statistic (a column of head_stats' decoder split) that shows the head
    example: tuple[str, ...]    # a fixed sequence that the page shows
    draw: Callable[[int, np.random.Generator], np.ndarray]  # (batch, rng) -> ids (batch, n_tokens)
    answers: Callable[[np.ndarray], np.ndarray]             # ids (batch, n) -> targets (batch, n), IGNORE = none

    def sample(self, batch: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(ids, targets), each (batch, n_tokens) int64."""
        ids = self.draw(batch, rng)
        return ids, self.answers(ids)

    def encode(self, tokens) -> np.ndarray:
        """Token strings (or ids) as ids (n,); ConfigError for a token outside the vocabulary."""
        ids = []
        for token in tokens:
            if isinstance(token, (int, np.integer)) and not isinstance(token, bool):
                if not 0 <= token < len(self.vocab):
                    raise ConfigError(f"Token id {token} is outside the {self.name} task's vocabulary "
                                      f"(0 to {len(self.vocab) - 1}).")
                ids.append(int(token))
            elif token in self.vocab:
                ids.append(self.vocab.index(token))
            else:
                raise ConfigError(f"{token!r} is not in the {self.name} task's vocabulary: "
                                  f"{' '.join(self.vocab)}.")
        if not 1 <= len(ids) <= self.n_tokens:
            raise ConfigError(f"The {self.name} task reads 1 to {self.n_tokens} tokens; got {len(ids)}.")
        return np.array(ids, dtype=np.int64)

    def decode(self, ids) -> list[str]:
        return [self.vocab[int(i)] for i in ids]


def _uniform(vocab: int, n: int) -> Callable[[int, np.random.Generator], np.ndarray]:
    def draw(batch: int, rng: np.random.Generator) -> np.ndarray:
        return rng.integers(0, vocab, (batch, n))                                  # (batch, n)
    return draw


def _distinct(batch: int, vocab: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """(batch, n): n different tokens in each row, in random order."""
    return np.argsort(rng.random((batch, vocab)), axis=1)[:, :n]                 # (batch, n)


def previous_answers(ids: np.ndarray) -> np.ndarray:
    """Position t outputs token t - 1; position 0 has no answer."""
    targets = np.full_like(ids, IGNORE)
    targets[:, 1:] = ids[:, :-1]
    return targets


def first_answers(ids: np.ndarray) -> np.ndarray:
    """Every position after the first outputs token 0."""
    targets = np.full_like(ids, IGNORE)
    targets[:, 1:] = ids[:, :1]
    return targets


def induction_answers(ids: np.ndarray) -> np.ndarray:
    """Position t outputs the token that followed the latest earlier copy of token t, where there is one (and that
    token is not past position t itself); elsewhere no answer."""
    n = ids.shape[1]
    t = np.arange(n)
    same = (ids[:, :, None] == ids[:, None, :]) & (t[None, :] < t[:, None])[None]  # (batch, n, n): key j < query t
    latest = np.where(same, t[None, None, :], -1).max(axis=-1)                    # (batch, n), -1 = never seen
    answer = np.take_along_axis(ids, np.minimum(latest + 1, n - 1), axis=1)        # (batch, n)
    # The follower must be a token already read: for an adjacent copy (t - 1 = latest) it is token t itself.
    return np.where((latest >= 0) & (latest + 1 <= t[None, :]), answer, IGNORE)


def _induction_draw(vocab: int, n: int) -> Callable[[int, np.random.Generator], np.ndarray]:
    lo, hi = INDUCTION_REPEATS

    def draw(batch: int, rng: np.random.Generator) -> np.ndarray:
        """Distinct random tokens, whose last k (3 to 6, different in each row) repeat the k before them."""
        tokens = _distinct(batch, vocab, n, rng)                                   # (batch, n)
        k = rng.integers(lo, hi + 1, (batch, 1))                                   # (batch, 1)
        t = np.arange(n)[None, :]                                                  # (1, n)
        source = np.where(t >= n - k, t - k, t)                                    # (batch, n): a repeat reads back
        return np.take_along_axis(tokens, source, axis=1)                          # (batch, n)
    return draw


def sort_answers(ids: np.ndarray) -> np.ndarray:
    """A list of k numbers, the separator, then the list sorted: from the separator on, each position outputs the
    next number of the sorted list."""
    k = (ids.shape[1] - 1) // 2
    targets = np.full_like(ids, IGNORE)
    targets[:, k:2 * k] = np.sort(ids[:, :k], axis=1)
    return targets


def _sort_draw(n: int) -> Callable[[int, np.random.Generator], np.ndarray]:
    k = (n - 1) // 2
    separator = len(NUMBERS)

    def draw(batch: int, rng: np.random.Generator) -> np.ndarray:
        numbers = _distinct(batch, len(NUMBERS), k, rng)                            # (batch, k)
        return np.concatenate([numbers, np.full((batch, 1), separator), np.sort(numbers, axis=1)], axis=1)
    return draw


def _letters(text: str) -> tuple[str, ...]:
    return tuple(text.replace(" ", ""))


TASKS: dict[str, Task] = {
    "previous": Task(
        name="previous", title="Copy the previous token",
        rule="At every position, output the token just before it.",
        vocab=LETTERS, n_tokens=16, positions="sinusoidal", steps=300, statistic="prev",
        example=_letters("the quick brown fox"), draw=_uniform(len(LETTERS), 16), answers=previous_answers),
    "induction": Task(
        name="induction", title="Induction: … A B … A → B",
        rule="When a token comes again, output the token that followed it the last time.",
        vocab=LETTERS, n_tokens=16, positions="sinusoidal", steps=600, statistic="induction",
        example=_letters("cozy planet planet"), draw=_induction_draw(len(LETTERS), 16),
        answers=induction_answers),
    "first": Task(
        name="first", title="Copy the first token",
        rule="At every position, output the first token of the sequence.",
        vocab=LETTERS, n_tokens=16, positions="learned", steps=300, statistic="first",
        example=_letters("jumps over the lazy"), draw=_uniform(len(LETTERS), 16), answers=first_answers),
    "sort": Task(
        name="sort", title="Sort a list of numbers",
        rule=f"Read 8 numbers, then after {SEPARATOR!r} output them from smallest to largest, one at a time.",
        vocab=(*NUMBERS, SEPARATOR), n_tokens=17, positions="learned", steps=600, statistic="entropy",
        example=("17", "3", "25", "8", "12", "0", "29", "21", SEPARATOR, "0", "3", "8", "12", "17", "21", "25", "29"),
        draw=_sort_draw(17), answers=sort_answers),
}


def get_task(task) -> Task:
    """A Task, or its name; ConfigError for an unknown name."""
    if isinstance(task, Task):
        return task
    if task not in TASKS:
        raise ConfigError(f"task must be one of {', '.join(TASKS)}; got {task!r}.")
    return TASKS[task]
