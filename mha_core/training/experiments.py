"""The seed texts' claims about heads, as experiments.

1. Several narrow heads against one wide head (compare_heads): train a task with h = 1, 2, 4 and 8 heads at the same
   d_model, so with the same number of parameters (d_k = d_model / h, see mc.cost), over several seeds, and compare
   the final loss, the accuracy and the steps it took to solve the task.
2. Many heads can be removed with little loss (Michel et al. 2019; prune): rank the heads by importance, switch them
   off one at a time, least important first, and follow the loss and the accuracy. Two importances (IMPORTANCES):
   Michel et al.'s |∂L/∂ξ_i|, the gradient of the loss with respect to a gate ξ_i on head i's output (every gate at
   1, averaged over batches of examples and normalised per layer, as their code does), and the simpler loss when
   head i alone is removed. The subjects: a tiny trained model on its task's held-out sequences (TinyHeads), and
   SmolLM2 on the next-token loss over a fixed text (SmolLM2Heads).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ..analysis.cost import attention_params
from ..attention.config import ConfigError
from .model import accuracy, masked_loss
from .tasks import HEAD_COUNTS, IGNORE
from .trainer import TrainingRun, held_out, one_thread, train

SEEDS = (0, 1, 2)
IMPORTANCES = {"gradient": "Michel et al.'s gradient |∂L/∂ξ|", "removal": "loss when removed"}
TINY_BATCH = 16  # held-out sequences per gradient in Michel et al.'s importance (the mean of |gradient| over batches)
# The fixed text on which SmolLM2's heads are pruned: plain sentences whose next tokens are easy to guess, shown on
# the page, so true of every model, SmolLM2's shared K/V heads included (no head "has its own keys and values").
PRUNING_TEXT = ("Multi-head attention runs several heads side by side. Each head weighs the words of the sentence in "
                "its own way, so each one can look for its own kind of relation.")


# --- 1. One wide head against several narrow ones --------------------------------------------------------------

@dataclass(frozen=True)
class HeadComparison:
    """Runs of one task at the same d_model with different head counts, over seeds (rows: heads, columns: seeds)."""

    task: str
    d_model: int
    heads: tuple[int, ...]
    seeds: tuple[int, ...]
    parameters: tuple[int, ...]   # attention parameters per layer for each head count (mc.cost): all the same
    final_loss: np.ndarray        # (heads, seeds) held-out loss at the end
    accuracy: np.ndarray          # (heads, seeds) held-out accuracy at the end
    steps_to_solve: np.ndarray    # (heads, seeds) first checkpoint step with accuracy >= SOLVED; NaN = not solved
    steps: int                    # each run's budget


def compare_heads(task: str = "induction", heads: Sequence[int] = HEAD_COUNTS, seeds: Sequence[int] = SEEDS,
                  d_model: int = 64, n_layers: int = 2, steps: int | None = None,
                  train_fn: Callable[..., TrainingRun] = train,
                  callback: Callable[[int, int], None] | None = None) -> HeadComparison:
    """Train `task` for every head count and seed (train_fn: train, or a cached version of it) and compare the runs.

    callback(done, total) after each run.
    """
    shape = (len(heads), len(seeds))
    loss, acc, solved = np.empty(shape), np.empty(shape), np.full(shape, np.nan)
    last = None
    for i, h in enumerate(heads):
        for j, seed in enumerate(seeds):
            last = train_fn(task, n_layers=n_layers, n_heads=h, d_model=d_model, steps=steps, seed=seed)
            loss[i, j], acc[i, j] = last.checkpoints[-1].loss, last.accuracy
            if last.steps_to_solve is not None:
                solved[i, j] = last.steps_to_solve
            if callback is not None:
                callback(i * len(seeds) + j + 1, loss.size)
    return HeadComparison(task=last.task.name, d_model=d_model, heads=tuple(heads), seeds=tuple(seeds),
                          parameters=tuple(attention_params(d_model, h) for h in heads), final_loss=loss,
                          accuracy=acc, steps_to_solve=solved, steps=last.steps)


# --- 2. Pruning heads --------------------------------------------------------------------------------------------

class TinyHeads:
    """The heads of a trained tiny model, measured on its task's held-out sequences."""

    def __init__(self, run: TrainingRun, step: int | None = None):
        self.model = run.module(step)
        self.ids, self.targets = held_out(run.task)                           # each (HELD_OUT, n)
        self.shape = (run.n_layers, run.n_heads)
        self.n_batches = math.ceil(len(self.ids) / TINY_BATCH)

    def loss(self, head_mask: torch.Tensor, batch: int) -> torch.Tensor:
        """The mean loss over one batch of held-out sequences, differentiable in head_mask (n_layers, h)."""
        part = slice(batch * TINY_BATCH, (batch + 1) * TINY_BATCH)
        return masked_loss(self.model(self.ids[part], head_mask), self.targets[part], IGNORE)

    def evaluate(self, head_mask: np.ndarray) -> tuple[float, float]:
        """(loss, accuracy) on every held-out sequence with these gates (n_layers, h)."""
        with torch.no_grad():
            logits = self.model(self.ids, torch.as_tensor(head_mask, dtype=torch.float32))
            return float(masked_loss(logits, self.targets, IGNORE)), accuracy(logits, self.targets, IGNORE)

    def losses_without(self, layer: int) -> np.ndarray:
        """(h,): the loss with each head of this layer switched off alone."""
        out = np.empty(self.shape[1])
        for head in range(self.shape[1]):
            mask = np.ones(self.shape)
            mask[layer, head] = 0.0
            out[head] = self.evaluate(mask)[0]
        return out


class SmolLM2Heads:
    """SmolLM2's 30 × 9 heads, measured by the loss of predicting each next token of a fixed text (and how many of
    those tokens the model ranks first). The model runs in torch (SmolLM2.torch_layer), so gradients flow to the
    gates; the same numbers as model.run(text, head_mask=...) computes with the engine."""

    def __init__(self, model, text: str = PRUNING_TEXT):
        self.model, self.text = model, text
        self.ids = torch.from_numpy(model.tokenize(text).ids.copy())          # (n,)
        if len(self.ids) < 2:
            raise ConfigError("The text needs at least two tokens: one to read and one to predict.")
        self.shape = (model.n_layers, model.n_heads)
        self.n_batches = 1  # one text
        self._inputs: list[torch.Tensor] | None = None  # every layer's input with every head, made on first use

    def _stream(self, head_mask, start: int = 0, x: torch.Tensor | None = None) -> torch.Tensor:
        """The last layer's output (..., n, d_model), running layers start.. on x (default: the token embeddings)."""
        if x is None:
            x = torch.from_numpy(self.model.embed(self.ids.numpy()))           # (n, d_model)
        for l in range(start, self.model.n_layers):
            x = self.model.torch_layer(l, x, None if head_mask is None else head_mask[l])  # (n, d_model)
        return x

    def _loss_and_accuracy(self, last: torch.Tensor) -> tuple[torch.Tensor, float]:
        logits = self.model.torch_logits(last[:-1])                           # (n - 1, vocab): tokens 2..n
        return F.cross_entropy(logits, self.ids[1:]), float((logits.argmax(-1) == self.ids[1:]).float().mean())

    def loss(self, head_mask: torch.Tensor, batch: int = 0) -> torch.Tensor:
        """The mean next-token loss over the text, differentiable in head_mask (n_layers, h)."""
        return self._loss_and_accuracy(self._stream(head_mask))[0]

    def evaluate(self, head_mask: np.ndarray) -> tuple[float, float]:
        """(loss, share of next tokens ranked first) with these gates (n_layers, h)."""
        with torch.no_grad():
            loss, acc = self._loss_and_accuracy(self._stream(torch.as_tensor(head_mask, dtype=torch.float32)))
        return float(loss), acc

    def losses_without(self, layer: int) -> np.ndarray:
        """(h,): the loss with each head of this layer switched off alone. The layers before are those of the full
        model, so their outputs are computed once (for every layer), and the h runs start at this layer, as one
        batch (a row of gates per run, with one 0 each)."""
        with torch.no_grad():
            if self._inputs is None:
                x, inputs = torch.from_numpy(self.model.embed(self.ids.numpy())), []
                for l in range(self.model.n_layers):
                    inputs.append(x)                                          # the input of layer l, (n, d_model)
                    x = self.model.torch_layer(l, x)
                self._inputs = inputs
            h = self.shape[1]
            x = self._inputs[layer].expand(h, -1, -1)                         # (h, n, d_model)
            x = self._stream(None, layer + 1, self.model.torch_layer(layer, x, 1.0 - torch.eye(h)))
            logits = self.model.torch_logits(x[:, :-1])                       # (h, n - 1, vocab)
            losses = F.cross_entropy(logits.transpose(1, 2), self.ids[1:].expand(h, -1), reduction="none")
            return losses.mean(dim=1).numpy().astype(np.float64)              # (h,)


def removal_losses(subject, callback=None) -> np.ndarray:
    """(n_layers, h): the loss with each head alone switched off; callback(done, total) after each layer."""
    rows = []
    for layer in range(subject.shape[0]):
        rows.append(subject.losses_without(layer))                            # (h,)
        if callback is not None:
            callback(layer + 1, subject.shape[0])
    return np.stack(rows)                                                     # (n_layers, h)


def gate_gradients(subject) -> np.ndarray:
    """(n_batches, n_layers, h): ∂L/∂ξ for a gate ξ on every head's output, at ξ = 1, for each batch of examples."""
    grads = []
    for batch in range(subject.n_batches):
        gates = torch.ones(subject.shape, requires_grad=True)
        subject.loss(gates, batch).backward()
        grads.append(gates.grad.numpy().copy())
    return np.stack(grads)


def head_importance(subject, method: str, callback=None) -> np.ndarray:
    """(n_layers, h): how much each head matters, by `method` (a key of IMPORTANCES); larger = more important."""
    if method == "gradient":
        importance = np.abs(gate_gradients(subject)).mean(axis=0)            # Michel et al.: E |∂L/∂ξ_i|
        norm = np.linalg.norm(importance, axis=1, keepdims=True)             # (n_layers, 1)
        return importance / np.where(norm > 0, norm, 1.0)                     # each layer's scores to length 1
    if method == "removal":
        return removal_losses(subject, callback) - subject.evaluate(np.ones(subject.shape))[0]
    raise ConfigError(f"method must be one of {', '.join(IMPORTANCES)}; got {method!r}.")


@dataclass(frozen=True)
class PruningCurve:
    """Heads switched off one at a time in order of importance, least important first."""

    method: str                          # a key of IMPORTANCES
    importance: np.ndarray               # (n_layers, h)
    order: tuple[tuple[int, int], ...]   # every head (layer, head), 0-based, in the order it is switched off
    kept: np.ndarray                     # (points,) heads still on at each point
    loss: np.ndarray                     # (points,)
    accuracy: np.ndarray                 # (points,)


def pruning_order(importance: np.ndarray) -> tuple[tuple[int, int], ...]:
    """Every head (layer, head), least important first (ties: the earlier head first)."""
    flat = np.argsort(importance.ravel(), kind="stable")
    return tuple((int(l), int(i)) for l, i in zip(*np.unravel_index(flat, importance.shape), strict=True))


def pruning_curve(subject, order: Sequence[tuple[int, int]], removed: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """(loss, accuracy), one per entry of `removed`: with the first removed[k] heads of `order` switched off."""
    losses, accs = [], []
    for k in removed:
        mask = np.ones(subject.shape)
        for l, i in order[:k]:
            mask[l, i] = 0.0
        loss, acc = subject.evaluate(mask)
        losses.append(loss)
        accs.append(acc)
    return np.array(losses), np.array(accs)


def prune(subject, method: str, points: int | None = None, callback=None) -> PruningCurve:
    """Rank the subject's heads by `method`, then switch them off one at a time (at `points` evenly spaced counts
    from none to all; None = after every head)."""
    total = math.prod(subject.shape)
    removed = range(total + 1) if points is None else np.unique(np.linspace(0, total, points).round().astype(int))
    importance = head_importance(subject, method, callback)
    order = pruning_order(importance)
    loss, acc = pruning_curve(subject, order, removed)
    return PruningCurve(method=method, importance=importance, order=order, kept=total - np.asarray(removed),
                        loss=loss, accuracy=acc)


def prune_runs(runs: Sequence[TrainingRun], method: str) -> tuple[PruningCurve, ...]:
    """prune for the last checkpoint of each run (e.g. one run per seed), after every head."""
    with one_thread():
        return tuple(prune(TinyHeads(run), method) for run in runs)
