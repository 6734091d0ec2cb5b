"""The engine's own source lines for each step, so the app shows the code that really ran."""

from __future__ import annotations

import functools
import inspect
import textwrap

from ..attention import engine


@functools.cache  # the source of a loaded module does not change: read it once, not on every rerun
def step_source(step: int) -> str:
    """The lines of engine.attention_steps under the comment "# Step {step}:" (1 to 4), dedented."""
    lines = inspect.getsource(engine.attention_steps).splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(f"# Step {step}:"))
    end = next((i for i in range(start + 1, len(lines))
                if lines[i].strip().startswith(("# Step", "return"))), len(lines))
    return textwrap.dedent("\n".join(lines[start:end])).strip()
