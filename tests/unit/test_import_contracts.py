"""The layers of the code are a contract (pyproject.toml, [tool.importlinter]), checked by import-linter."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def lint_imports(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    command = shutil.which("lint-imports", path=os.path.dirname(sys.executable)) or "lint-imports"
    env = {**os.environ, "PYTHONPATH": f"{ROOT / '.ci'}{os.pathsep}{cwd}"}
    return subprocess.run([command, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_every_import_contract_is_kept():
    done = lint_imports("--no-cache")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 kept, 0 broken" in done.stdout


def test_the_private_names_contract_catches_an_underscore_import(tmp_path):
    """The home-made contract is not vacuous: a module that imports another's underscore name breaks it."""
    package = tmp_path / "mha_core"
    shutil.copytree(ROOT / "mha_core", package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "mha_app", tmp_path / "mha_app", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (package / "analysis" / "stats.py").write_text(
        (package / "analysis" / "stats.py").read_text() + "\nfrom ..attention.engine import _check_backend\n")
    done = lint_imports("--no-cache", cwd=tmp_path)
    assert done.returncode != 0
    assert "mha_core.analysis.stats" in done.stdout and "_check_backend" in done.stdout
