"""Watch heads learn: tiny attention models trained on tasks with a known answer, and the claims about heads as
experiments. Torch trains them; the learned layers are ordinary MHAWeights that mc.forward computes.

The tasks need NumPy only; everything that needs torch (train, TrainingRun, the experiments) is imported on first use,
so that reading the task list costs no torch import.
"""

import importlib

from .tasks import IGNORE, TASKS, Task, get_task

# Where each name that needs torch lives.
_LAZY = {"SOLVED": "trainer", "Checkpoint": "trainer", "TrainingRun": "trainer", "held_out": "trainer",
         "train": "trainer", "one_thread": "trainer"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["IGNORE", "SOLVED", "TASKS", "Checkpoint", "Task", "TrainingRun", "get_task", "held_out", "one_thread",
           "train"]
