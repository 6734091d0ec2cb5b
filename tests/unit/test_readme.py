"""README.md for the people who use it: at most 200 lines, and every ```python snippet in it runs as written.

Each snippet runs alone in a fresh interpreter at the repository root. A snippet that names a trained model's
package (its comment says where the weights come from) needs that package: without it, it is skipped with the
command that installs it, and REQUIRE_MODELS=1 (as CI sets) makes that skip a failure.
"""

from __future__ import annotations

import os
import re

import pytest

from helpers import ROOT, run_python
from mha_core.pretrained import MODELS

README = (ROOT / "README.md").read_text(encoding="utf-8")
SNIPPETS = re.findall(r"^```python\n(.*?)^```$", README, re.S | re.M)
MAX_LINES = 200


def test_the_readme_is_at_most_200_lines():
    assert len(README.splitlines()) <= MAX_LINES


def test_the_readme_has_python_snippets():
    assert len(SNIPPETS) >= 3  # the engine, the trained models, training


@pytest.mark.parametrize("code", SNIPPETS, ids=[f"snippet{i + 1}" for i in range(len(SNIPPETS))])
def test_every_python_snippet_runs_as_written(code):
    for card in MODELS.values():
        if card.package in code and not card.installed():
            reason = f"this snippet needs {card.name}: {card.install}"
            if os.environ.get("REQUIRE_MODELS") == "1":
                pytest.fail(f"REQUIRE_MODELS=1, but {reason}")
            pytest.skip(f"{reason} (REQUIRE_MODELS=1 turns this skip into a failure)")
    done = run_python(code)
    assert done.returncode == 0, f"{code}\n{done.stderr[-3000:]}"
