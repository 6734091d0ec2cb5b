"""The layout the code promises: an engine free of app code, two parallel backends, settings that follow fields."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from dataclasses import fields

import pytest

from app_pages import app_pages
from helpers import ROOT, run_python
from mha_app.state import url
from mha_app.state.settings import FIELDS, Settings, Spec, View, control, default, to_url
from mha_core.attention import engine


def test_the_engine_imports_no_streamlit():
    code = ("import mha_core, mha_core.figures, mha_core.pretrained, mha_core.analysis.head_stats, "
            "mha_core.analysis.export, mha_core.teaching.formulas, sys; "
            "assert 'streamlit' not in sys.modules, 'streamlit was imported'")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_no_app_words_in_the_engine_package():
    for path in (ROOT / "mha_core").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"import streamlit|from streamlit|query_params|session_state|st\.cache", text), path


def test_the_two_backends_read_alike():
    torch_backend = pytest.importorskip("mha_core.attention.torch_backend")
    for name in ("linear", "split_heads", "softmax_rows", "attention_steps"):
        assert callable(getattr(engine, name)) and callable(getattr(torch_backend, name)), name

    def comments(module) -> list[str]:
        return [line.strip() for line in inspect.getsource(module.attention_steps).splitlines()
                if line.strip().startswith("#")]

    steps = comments(engine)
    assert [c[:8] for c in steps if c.startswith("# Step")] == ["# Step 1", "# Step 2", "# Step 3", "# Step 4"]
    assert comments(torch_backend) == steps, "same step comments, in the same order, in both backends"


def test_the_shown_code_says_where_it_counts_heads_from_0():
    """Step 2's code, shown on the attention page, counts heads from 0 ("query heads g*j ... g*j+g-1") and says so,
    with the page's count from 1 beside it (query head i reads K/V head ⌈i/g⌉)."""
    from mha_core.teaching.source import step_source

    comments = " ".join(line.strip("# ") for line in step_source(2).splitlines() if line.strip().startswith("#"))
    assert "g*j ... g*j+g-1" in comments
    assert "0-based here" in comments and "query head i reads key/value head ⌈i/g⌉" in comments


def test_pages_folder_holds_only_pages_and_the_app_lists_them_all():
    scripts = {p.script for p in app_pages()}
    on_disk = {f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py")}
    assert scripts == on_disk, "every file in pages/ is a page of app.py, and only pages live there"
    for script in scripts:
        assert "view()" in (ROOT / script).read_text(encoding="utf-8"), script


def test_spec_is_hashable_and_the_view_is_not_part_of_it():
    a = Settings.of(h=4, head=2, query=3, stage="mask")
    b = Settings.of(h=4, head=5)
    assert a.spec == b.spec and hash(a.spec) == hash(b.spec)
    assert a.view != b.view
    assert {f.name for f in fields(Spec)}.isdisjoint(f.name for f in fields(View))


def _example_value(name: str):
    """A valid, non-default value for each setting, read from its field."""
    c, d = control(name), default(name)
    if name == "h":
        return 4  # h must also divide the default d_model
    if isinstance(d, bool):
        return not d
    if c.choices:
        return next(choice for choice in c.choices if choice != d)
    if isinstance(d, int):
        return d + 1 if d + 1 <= c.hi else d - 1
    if isinstance(d, float):
        return d + 0.5
    if isinstance(d, tuple):
        return (c.lo, c.lo + 2)
    return d + " more"


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_every_setting_travels_through_a_link(name):
    value = _example_value(name)
    settings = Settings.of(**{name: value})
    params = settings.query_params()
    # `ask` travels too where the link alone would not say it (a link that names a view opens it drawn)
    assert {k: v for k, v in params.items() if k != "ask" or name == "ask"} == {name: to_url(value)}
    assert url.link_asks(params) == settings.view.ask
    problems, kept = url.check(params)
    assert problems == [] and kept == params
    assert settings.values()[name] == value


@pytest.mark.parametrize("raw", ["inf", "-inf", "1e309", "-1e309", "nan", "8.0", "", "٣", "9" * 40])
def test_number_settings_refuse_what_is_not_a_whole_number_in_range(raw):
    for name in ("d_model", "seed", "query", "pad", "n"):
        problems, kept = url.check({name: raw})
        assert name not in kept and problems, (name, raw)


NUMPY_ONLY = """
import sys
import mha_core as mc
import mha_core.analysis.stats
cfg = mc.MHAConfig(16, 4, causal=True)
w = mc.init_weights(cfg, seed=0)
x = mc.embed(mc.tokenize("The cat sat."), 16)
t = mc.forward(x, w, cfg, key_padding_mask=mc.padding_mask(4, 1), backend="numpy")
mha_core.stats.row_entropy(t.weights)
loaded = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
assert not loaded, loaded
print("OK")
"""


def test_numpy_path_does_not_import_torch():
    result = run_python(NUMPY_ONLY)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "OK"


def test_torch_backend_does_import_torch():
    """Control for the test above: the same check does see torch once the torch backend runs."""
    code = NUMPY_ONLY.replace('backend="numpy"', 'backend="torch", device="cpu"')
    result = run_python(code)
    assert result.returncode != 0 and "AssertionError" in result.stderr
