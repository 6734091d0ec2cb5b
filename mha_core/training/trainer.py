"""Train a tiny model on a task, keeping checkpoints whose attention layers are ordinary MHAWeights.

`train` runs Adam on fresh random batches of the task and, every few steps, keeps a Checkpoint: every weight of the
model as NumPy arrays, with its loss and accuracy on held-out sequences (the same ones for every run of a task, never
trained on). `TrainingRun.trace` then computes any layer at any checkpoint with the engine, mc.forward, so every
page of the app can show a learned head like any other.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch

from ..attention.config import ConfigError, MHAConfig
from ..attention.engine import forward
from ..attention.trace import Trace
from ..attention.weights import MHAWeights, weights_from_torch, weights_to_torch
from .model import TinyTransformer, accuracy, frozen_copy, masked_loss
from .tasks import IGNORE, Task, get_task

BATCH = 64               # sequences per step
LEARNING_RATE = 5e-3     # Adam's step size; over the last quarter of the steps it falls to a tenth of that
HELD_OUT = 256           # held-out sequences per task
HELD_OUT_SEED = 2**31    # above every seed train() takes, so no training stream can equal the held-out one
N_CHECKPOINTS = 24       # checkpoints after the untrained one, evenly spaced
SOLVED = 0.99            # a task counts as solved from the first checkpoint with this held-out accuracy
MAX_SEED = 2**31 - 1
MAX_LAYERS = 4
MAX_TRAIN_D_MODEL = 256
MAX_STEPS = 20_000


@dataclass(frozen=True, eq=False)
class Checkpoint:
    """The whole model after `step` optimiser steps (read-only float32 arrays), and how it did on held-out data."""

    step: int
    layers: tuple[MHAWeights, ...]  # each attention layer: W_Q, W_K, W_V (h*d_k, d_model), W_O, biases
    embedding: np.ndarray           # (vocab, d_model) one row per token
    positions: np.ndarray           # (n_tokens, d_model) added to the token's row at each position
    unembedding: np.ndarray         # (vocab, d_model) logits = x @ unembedding.T + unembedding_bias
    unembedding_bias: np.ndarray    # (vocab,)
    mlps: tuple[dict[str, np.ndarray], ...]  # per layer W_in, b_in, W_out, b_out; () when attention-only
    loss: float                     # mean cross-entropy on the held-out answers
    accuracy: float                 # share of held-out answers right


def held_out(task: Task) -> tuple[torch.Tensor, torch.Tensor]:
    """The task's held-out (ids, targets), each (HELD_OUT, n_tokens), as tensors: the same for every run."""
    ids, targets = task.sample(HELD_OUT, np.random.default_rng(HELD_OUT_SEED))
    return torch.from_numpy(ids), torch.from_numpy(targets)


def _snapshot(model: TinyTransformer, step: int, loss: float, acc: float, positions: np.ndarray | None) -> Checkpoint:
    """A read-only copy of every weight of the model now; `positions`: the fixed encoding's copy, or None."""
    layers = []
    for attn in model.attn:
        w = weights_from_torch(attn)  # fresh float32 copies
        for a in w.arrays().values():
            a.setflags(write=False)
        layers.append(w)
    mlps = tuple(dict(W_in=frozen_copy(m[0].weight), b_in=frozen_copy(m[0].bias), W_out=frozen_copy(m[2].weight),
                      b_out=frozen_copy(m[2].bias)) for m in model.mlp)
    return Checkpoint(step=step, layers=tuple(layers), embedding=frozen_copy(model.embed.weight),
                      positions=positions if positions is not None else frozen_copy(model.positions),
                      unembedding=frozen_copy(model.unembed.weight), unembedding_bias=frozen_copy(model.unembed.bias),
                      mlps=mlps, loss=loss, accuracy=acc)


@dataclass(frozen=True, eq=False)
class TrainingRun:
    """One training run: its settings, the loss at every step, and the checkpoints."""

    task: Task
    n_layers: int
    n_heads: int
    d_model: int
    seed: int
    steps: int
    attention_only: bool
    losses: np.ndarray                  # (steps,) the training loss of each step's batch
    accuracy: float                     # on the held-out sequences, at the end
    checkpoints: tuple[Checkpoint, ...]  # the untrained model (step 0), then every few steps, the last one last
    seconds: float                      # how long training took (wall clock)

    @property
    def config(self) -> MHAConfig:
        """Every attention layer's configuration: causal self-attention, with biases, scaled by 1/sqrt(d_k)."""
        return MHAConfig(self.d_model, self.n_heads, causal=True)

    @property
    def checkpoint_steps(self) -> list[int]:
        return [c.step for c in self.checkpoints]

    @property
    def steps_to_solve(self) -> int | None:
        """The first checkpoint step with held-out accuracy >= SOLVED, or None if the run never got there."""
        return next((c.step for c in self.checkpoints if c.accuracy >= SOLVED), None)

    def checkpoint(self, step: int | None = None) -> Checkpoint:
        """The checkpoint taken at `step` (None = the last)."""
        if step is None:
            return self.checkpoints[-1]
        for c in self.checkpoints:
            if c.step == step:
                return c
        raise ConfigError(f"There is no checkpoint at step {step}; checkpoints were taken at steps "
                          f"{', '.join(map(str, self.checkpoint_steps))}.")

    def module(self, step: int | None = None) -> TinyTransformer:
        """The torch model as it was at a checkpoint (None = the last)."""
        c = self.checkpoint(step)
        vocab, n_tokens = len(self.task.vocab), self.task.n_tokens
        model = TinyTransformer(vocab, n_tokens, self.n_layers, self.n_heads, self.d_model, self.task.positions,
                                self.attention_only)
        model.attn = torch.nn.ModuleList(weights_to_torch(w, self.config) for w in c.layers)
        with torch.no_grad():
            model.embed.weight.copy_(torch.tensor(c.embedding))
            model.positions.copy_(torch.tensor(c.positions))
            model.unembed.weight.copy_(torch.tensor(c.unembedding))
            model.unembed.bias.copy_(torch.tensor(c.unembedding_bias))
            for m, arrays in zip(model.mlp, c.mlps, strict=True):
                for module, name in ((m[0], "in"), (m[2], "out")):
                    module.weight.copy_(torch.tensor(arrays[f"W_{name}"]))
                    module.bias.copy_(torch.tensor(arrays[f"b_{name}"]))
        return model.eval()

    def _pass(self, tokens, step: int | None, head_mask) -> tuple[tuple[Trace, ...], np.ndarray]:
        """Every layer's Trace and the last residual stream (n, d_model), by mc.forward (see traces)."""
        c, ids = self.checkpoint(step), self.task.encode(tokens)
        x = c.embedding[ids] + c.positions[: len(ids)]                           # (n, d_model)
        traces = []
        for l, w in enumerate(c.layers):
            trace = forward(x, w, self.config, head_mask=None if head_mask is None else head_mask[l])
            traces.append(trace)
            x = x + trace.output                                                  # (n, d_model)
            if c.mlps:
                m = c.mlps[l]
                hidden = np.maximum(x @ m["W_in"].T + m["b_in"], 0.0)             # (n, MLP_WIDTH * d_model)
                x = x + hidden @ m["W_out"].T + m["b_out"]                        # (n, d_model)
        return tuple(traces), x

    def traces(self, tokens, step: int | None = None, head_mask=None) -> tuple[Trace, ...]:
        """Every layer's attention Trace on one sequence (token strings or ids), computed by mc.forward.

        The residual stream as the torch model computes it: x = embedding[token] + position, then each layer adds
        its attention output (and, without attention_only, its feed-forward block's). head_mask (n_layers, h):
        each head's factor, as mc.forward's head_mask (None = every head kept).
        """
        return self._pass(tokens, step, head_mask)[0]

    def trace(self, tokens, layer: int, step: int | None = None) -> Trace:
        """Layer `layer`'s (0-based) attention Trace on one sequence at a checkpoint (None = the last)."""
        if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < self.n_layers:
            raise ConfigError(f"layer must be a whole number from 0 to {self.n_layers - 1} (0-based); got {layer!r}.")
        return self.traces(tokens, step)[layer]

    def attentions(self, tokens, step: int | None = None) -> np.ndarray:
        """Every head's attention weights on one sequence, (n_layers, h, n, n)."""
        return np.stack([t.weights for t in self.traces(tokens, step)])

    def logits(self, tokens, step: int | None = None, head_mask=None) -> np.ndarray:
        """(n, vocab): the model's logits at each position of one sequence, computed with mc.forward."""
        c = self.checkpoint(step)
        return self._pass(tokens, step, head_mask)[1] @ c.unembedding.T + c.unembedding_bias

    def predict(self, tokens, step: int | None = None) -> list[str]:
        """The most likely token at each position."""
        return self.task.decode(self.logits(tokens, step).argmax(axis=-1))


_threads_lock = threading.Lock()
_threads_users = [0, 0]  # [trainings running, torch's thread count before the first of them]


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run torch on one CPU thread, and give back the thread count it had when the last user leaves.

    The model is so small that a second thread mostly waits for the first; on a busy 2-core machine the two threads
    also fight other processes for the cores (a training took 13 times as long with 2 threads as with 1 there).
    """
    with _threads_lock:
        if _threads_users[0] == 0:
            _threads_users[1] = torch.get_num_threads()
            torch.set_num_threads(1)
        _threads_users[0] += 1
    try:
        yield
    finally:
        with _threads_lock:
            _threads_users[0] -= 1
            if _threads_users[0] == 0:
                torch.set_num_threads(_threads_users[1])


def _decay(step: int, steps: int) -> float:
    """The learning rate's factor at `step`: 1 for the first three quarters, then down in a line to 0.1."""
    start = 0.75 * steps
    return 1.0 if step <= start else 1.0 - 0.9 * (step - start) / (steps - start)


def _check_whole(name: str, value, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise ConfigError(f"{name} must be a whole number from {lo} to {hi}; got {value!r}.")
    return int(value)


def train(task, n_layers: int = 2, n_heads: int = 4, d_model: int = 64, steps: int | None = None, seed: int = 0,
          attention_only: bool = True, callback: Callable[[int, int, float], None] | None = None) -> TrainingRun:
    """Train a fresh model on `task` (a name of TASKS or a Task) and return the run with its checkpoints.

    steps: optimiser steps (None = the task's budget; 0 = the untrained model only); seed fixes the initial weights
    and every batch, so the same arguments give the same losses. callback(step, steps, loss) is called at every
    checkpoint (a progress bar).
    """
    task = get_task(task)
    n_layers = _check_whole("n_layers", n_layers, 1, MAX_LAYERS)
    d_model = _check_whole("d_model", d_model, 1, MAX_TRAIN_D_MODEL)
    MHAConfig(d_model, n_heads)  # h must divide d_model: ConfigError in words
    steps = task.steps if steps is None else _check_whole("steps", steps, 0, MAX_STEPS)
    seed = _check_whole("seed", seed, 0, MAX_SEED)
    with one_thread():
        return _train(task, n_layers, int(n_heads), d_model, steps, seed, bool(attention_only), callback)


def _train(task: Task, n_layers: int, n_heads: int, d_model: int, steps: int, seed: int, attention_only: bool,
           callback) -> TrainingRun:
    start = time.perf_counter()
    with torch.random.fork_rng(devices=[]):  # the initial weights from the seed, without touching the global RNG
        torch.manual_seed(seed)
        model = TinyTransformer(len(task.vocab), task.n_tokens, n_layers, n_heads, d_model, task.positions,
                                attention_only)
    batches = np.random.default_rng(seed)
    test_ids, test_targets = held_out(task)
    # A sinusoidal encoding is not trained: one read-only copy serves every checkpoint.
    fixed = frozen_copy(model.positions) if task.positions != "learned" else None
    optimiser = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    # Large steps first, then smaller ones, so that the last checkpoint does not jump around a solution.
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: _decay(step, steps))
    every = max(1, steps // N_CHECKPOINTS)
    losses = np.empty(steps)

    def keep(step: int) -> Checkpoint:
        with torch.no_grad():
            logits = model(test_ids)                                              # (HELD_OUT, n, vocab)
            c = _snapshot(model, step, float(masked_loss(logits, test_targets, IGNORE)),
                          accuracy(logits, test_targets, IGNORE), fixed)
        if callback is not None:
            callback(step, steps, c.loss)
        return c

    checkpoints = [keep(0)]
    for step in range(1, steps + 1):
        ids, targets = (torch.from_numpy(a) for a in task.sample(BATCH, batches))  # each (BATCH, n)
        loss = masked_loss(model(ids), targets, IGNORE)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        schedule.step()
        losses[step - 1] = loss.item()
        if step % every == 0 or step == steps:
            checkpoints.append(keep(step))
    losses.setflags(write=False)
    return TrainingRun(task=task, n_layers=n_layers, n_heads=n_heads, d_model=d_model, seed=seed, steps=steps,
                       attention_only=attention_only, losses=losses, accuracy=checkpoints[-1].accuracy,
                       checkpoints=tuple(checkpoints), seconds=time.perf_counter() - start)
