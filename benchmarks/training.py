"""Time the Heads learn page's training: every task at the default sizes, against the bare training loop.

    python -m benchmarks.training                    # every task, seeds 0 1 2: about 1-2 minutes on 2 cores
    python -m benchmarks.training --tasks induction  # one task
    python -m benchmarks.training --threads 1 2      # train() pins torch to 1 thread; also time the loop at 2
    python -m benchmarks.training --smollm2          # also the SmolLM2 pruning experiment (about a minute)

For each run: wall-clock and CPU seconds of mha_core.training.train (which also evaluates the held-out sequences and
keeps a checkpoint every few steps), its held-out accuracy and the step where it reached 99%; the target is at most
10 s of wall clock at the default sizes. The reference, measured in the same run and interleaved with it, is the
bare loop: the same model, batches and optimiser steps with nothing else, at each thread count asked for. The
ratio says what the checkpoints and the held-out evaluation cost on top.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np
import torch

from mha_core.training import TASKS, train
from mha_core.training.model import TinyTransformer, masked_loss
from mha_core.training.tasks import IGNORE
from mha_core.training.trainer import BATCH, LEARNING_RATE

TARGET_SECONDS = 10.0


def load_average() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


def bare_loop(task, seed: int, threads: int) -> float:
    """Seconds for the task's optimiser steps alone: the model, batches and Adam of train(), nothing else."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        torch.manual_seed(seed)
        model = TinyTransformer(len(task.vocab), task.n_tokens, 2, 4, 64, task.positions)
        optimiser = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
        rng = np.random.default_rng(seed)
        start = time.perf_counter()
        for _ in range(task.steps):
            ids, targets = (torch.from_numpy(a) for a in task.sample(BATCH, rng))
            loss = masked_loss(model(ids), targets, IGNORE)
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            loss.item()
        return time.perf_counter() - start
    finally:
        torch.set_num_threads(before)


def time_tasks(names: list[str], seeds: list[int], threads: list[int]) -> None:
    print("| task | steps | seed | train() wall s | CPU s | held-out accuracy | 99% at step | "
          + " | ".join(f"bare loop, {t} thread{'s' if t > 1 else ''} s" for t in threads) + " | train / bare (1) |")
    print("| --- " * (8 + len(threads)) + "|")
    walls = []
    for name in names:
        task = TASKS[name]
        for seed in seeds:
            cpu = time.process_time()
            run = train(name, seed=seed)
            cpu = time.process_time() - cpu
            bare = [bare_loop(task, seed, t) for t in threads]
            walls.append(run.seconds)
            solved = run.steps_to_solve if run.steps_to_solve is not None else "-"
            print(f"| {name} | {run.steps} | {seed} | {run.seconds:.2f} | {cpu:.2f} | {run.accuracy:.4f} | {solved} | "
                  + " | ".join(f"{b:.2f}" for b in bare) + f" | {run.seconds / bare[0]:.2f} |", flush=True)
    worst = max(walls)
    print(f"\nslowest training: {worst:.2f} s, median {statistics.median(walls):.2f} s; target <= {TARGET_SECONDS} s: "
          f"{'pass' if worst <= TARGET_SECONDS else 'miss'} (load average now {load_average()})")


def time_smollm2() -> None:
    from mha_core.pretrained import load_smollm2
    from mha_core.training.experiments import IMPORTANCES, SmolLM2Heads, prune
    from mha_core.training.trainer import one_thread

    subject = SmolLM2Heads(load_smollm2())
    print(f"\nSmolLM2 pruning on {len(subject.ids)} tokens, {subject.shape[0] * subject.shape[1]} heads:")
    with one_thread():
        for method in IMPORTANCES:
            start, cpu = time.perf_counter(), time.process_time()
            curve = prune(subject, method, points=19)
            print(f"  {method}: {time.perf_counter() - start:.1f} s wall, {time.process_time() - cpu:.1f} s CPU; "
                  f"loss with every head {curve.loss[0]:.3f}, with half of them {curve.loss[len(curve.loss) // 2]:.3f}",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--threads", nargs="+", type=int, default=[1])
    parser.add_argument("--smollm2", action="store_true", help="also time the SmolLM2 pruning experiment")
    args = parser.parse_args()
    print(f"python {platform.python_version()} | torch {torch.__version__} | {os.cpu_count()} logical CPUs | "
          f"torch threads {torch.get_num_threads()} (train() uses 1) | load average at start: {load_average()}\n")
    time_tasks(args.tasks, args.seeds, args.threads)
    if args.smollm2:
        time_smollm2()


if __name__ == "__main__":
    main()
