"""What each head of a training run does, measured with the head statistics of mha_core.head_stats.

A tiny model is a decoder (causal attention), so its heads are measured with the decoder's split: the previous-token
share, the first-token share, the induction score (the mean weight from each repeated token to the token after its
earlier occurrence, head_stats.induction_pairs), the row entropy, and so on; the same numbers the head summary
page shows for SmolLM2.
"""

from __future__ import annotations

import numpy as np

from ..analysis.head_stats import decoder_parts, layer_summary
from ..attention.config import ConfigError
from .trainer import TrainingRun

PARTS = decoder_parts()


def head_scores(run: TrainingRun, statistic: str, tokens=None, step: int | None = None) -> np.ndarray:
    """(n_layers, h): one statistic (a column of the decoder split, e.g. "prev" or "induction") of every head on one
    sequence (default: the task's example) at a checkpoint (None = the last)."""
    if statistic not in PARTS.stat_columns:
        raise ConfigError(f"statistic must be one of {', '.join(PARTS.stat_columns)}; got {statistic!r}.")
    tokens = run.task.example if tokens is None else tokens
    labels = run.task.decode(run.task.encode(tokens))
    return np.stack([layer_summary(trace.weights, labels, PARTS)[statistic] for trace in run.traces(tokens, step)])


def score_history(run: TrainingRun, statistic: str, tokens=None) -> np.ndarray:
    """(n_checkpoints, n_layers, h): head_scores at every checkpoint, in order."""
    return np.stack([head_scores(run, statistic, tokens, c.step) for c in run.checkpoints])


def strongest_head(scores: np.ndarray, statistic: str) -> tuple[int, int]:
    """(layer, head), 0-based, of the head that shows the statistic most: the largest score (the smallest for the
    entropy, where focused means low)."""
    values = np.where(np.isnan(scores), np.inf if statistic == "entropy" else -np.inf, scores)
    flat = np.argmin(values) if statistic == "entropy" else np.argmax(values)
    layer, head = np.unravel_index(flat, scores.shape)
    return int(layer), int(head)
