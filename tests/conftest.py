"""What every layer of the tests shares: a marker per layer (the folder a test lives in), hypothesis' profiles, and
the trained models with their transformers references, each loaded once per session (once per worker under xdist).

Importable helpers live in helpers.py, references.py, screen.py, app_pages.py and crafted_links.py, never here.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

# One BLAS/OpenMP thread per process, set before NumPy or torch is imported: `pytest -n 3` runs three workers (and
# their app servers) on two cores, and each library's spare threads would spin against the other workers' (a test
# ran 3.6 times slower so). Each worker is one thread of the machine's work.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402 (after the thread settings above)
from hypothesis import HealthCheck, settings  # noqa: E402

from helpers import load_pretrained, remembered_runs  # noqa: E402

TESTS = Path(__file__).resolve().parent
LAYERS = ("unit", "reference", "app", "browser")
SHARED = ("page_run", "smollm2_reference", "bert")  # session fixtures whose work the modules using them share

# `ci`, the default: bounded, and the same examples on every run. `thorough` (pytest --hypothesis-profile=thorough):
# 20 times as many, new ones on every run, and 330 crafted links through the whole app (app/test_links_fuzz.py).
settings.register_profile("ci", max_examples=50, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(items):
    for item in items:
        layer = item.path.relative_to(TESTS).parts[0]
        if layer in LAYERS:
            item.add_marker(layer)
    # The longest work first, so that the workers end together. A browser module mostly waits on its server and
    # Chromium, so every third unit is one that computes (the units sharing a session fixture, then the layers, slowest
    # first) while two workers drive browsers: README's `pytest -n 3` keeps two cores busy.
    items.sort(key=lambda item: _rank(item.nodeid))
    units = list(dict.fromkeys(work_unit(item.nodeid) for item in items))
    browser = [u for u in units if u.startswith("tests/browser/")]
    computing = [u for u in units if not u.startswith("tests/browser/")]
    order = []
    while browser or computing:
        order += browser[:2] + computing[:1]
        browser, computing = browser[2:], computing[1:]
    place = {unit: n for n, unit in enumerate(order)}
    items.sort(key=lambda item: place[work_unit(item.nodeid)])


BROWSER = ("test_audit", "test_links", "test_pages", "test_explorer", "test_keyboard", "test_themes",
           "test_hosting")  # longest first


def _rank(nodeid: str) -> tuple[int, int]:
    unit = work_unit(nodeid)
    name = unit.rsplit("/", 1)[-1].removesuffix(".py")
    if unit.startswith("tests/browser/"):
        return 0, BROWSER.index(name) if name in BROWSER else len(BROWSER)
    if unit in SHARED:
        return 1, SHARED.index(unit)
    return {"app": 2, "reference": 3, "unit": 4}.get(unit.split("/")[1], 5), 0


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist (README's test command runs `pytest -n 3`), whole work units go to one worker each: the
    tests that share what a session fixture made (work_unit), else a module's tests with their module fixtures."""
    from xdist.scheduler import LoadScopeScheduling

    class SharedWork(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    config.option.loadscopereorder = False  # keep the collection's order (longest first), not "most tests first"
    return SharedWork(config, log)


def work_unit(nodeid: str) -> str:
    """The modules that use one of the SHARED fixtures, or the test's module (a browser module shares its worker's
    one app server and Chromium)."""
    path = nodeid.split("::")[0]
    source = _source(path)
    return next((name for name in SHARED if re.search(rf"def \w+\([^)]*\b{name}\b", source)), path)


@functools.cache
def _source(path: str) -> str:
    return (TESTS.parent / path).read_text(encoding="utf-8")


# --- the trained models, loaded once ----------------------------------------------------------------------------

@pytest.fixture(scope="session")
def minilm():
    """all-MiniLM-L6-v2 (a skip when it is not installed, see helpers.load_pretrained)."""
    from mha_core.pretrained import load_minilm

    return load_pretrained(load_minilm)


@pytest.fixture(scope="session")
def smollm2():
    """SmolLM2-135M-Instruct (a skip when it is not installed, see helpers.load_pretrained)."""
    from mha_core.pretrained import load_smollm2

    return load_pretrained(load_smollm2)


@pytest.fixture(scope="session")
def minilm_run(minilm):
    """minilm.run(text, backend, head_mask), remembered."""
    return remembered_runs(minilm)


@pytest.fixture(scope="session")
def smollm2_run(smollm2):
    """smollm2.run(text, backend, head_mask), remembered."""
    return remembered_runs(smollm2)


@pytest.fixture(scope="session")
def bert(minilm):
    """transformers' BertModel (eager attention, so that it returns the weights) and tokenizer from
    all-MiniLM-L6-v2's own files, offline.

    bert(text) -> (tokens, attentions (h, n, n) per layer, hidden states (n, d_model) per layer input and the
    output), remembered per text; bert.net and bert.tokenizer are the model and tokenizer.
    """
    import torch

    from mha_core.pretrained import MAX_MINILM_TOKENS

    transformers = pytest.importorskip("transformers")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        net = transformers.BertModel.from_pretrained(minilm.model_dir, attn_implementation="eager",
                                                     local_files_only=True).eval()
        tokenizer = transformers.AutoTokenizer.from_pretrained(minilm.model_dir, local_files_only=True)
    cache = {}

    def run(text):
        if text not in cache:
            enc = tokenizer(text, return_tensors="pt", truncation=True, max_length=MAX_MINILM_TOKENS)
            with torch.no_grad():
                out = net(**enc, output_attentions=True, output_hidden_states=True)
            cache[text] = (tokenizer.convert_ids_to_tokens(enc["input_ids"][0].tolist()),
                           [a[0].numpy() for a in out.attentions], [h[0].numpy() for h in out.hidden_states])
        return cache[text]

    run.net, run.tokenizer = net, tokenizer
    return run


@pytest.fixture(scope="session")
def smollm2_reference(smollm2):
    """transformers' Llama and tokenizer from the same GGUF file, offline.

    transformers reads the file with gguf, undoes llama.cpp's Q/K row order itself and runs its own Llama code
    (eager attention). run(text) -> (tokens, attentions (h, n, n) per layer, hidden states (n, d_model) per layer
    input, last logits), remembered per text; run.llama and run.tokenizer are the model and tokenizer.
    """
    import torch

    from mha_core.pretrained import MAX_SMOLLM2_TOKENS

    gguf = pytest.importorskip("gguf")
    transformers = pytest.importorskip("transformers")
    path = Path(smollm2.path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        # Speed only, the same numbers: transformers parses the file (its 49,152-token vocabulary) once for the
        # config, once for the weights and once more for the tokenizer, and builds the same tensor-name map for each
        # of the 272 tensors (about 14 of the 20 s this load took on one core). Each is made once here.
        mp.setattr(gguf, "GGUFReader", functools.cache(gguf.GGUFReader))
        mp.setattr(gguf, "get_tensor_name_map", functools.cache(gguf.get_tensor_name_map))
        transformers.utils.logging.disable_progress_bar()
        llama = transformers.AutoModelForCausalLM.from_pretrained(
            str(path.parent), gguf_file=path.name, attn_implementation="eager").eval()
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    cache = {}

    def run(text):
        if text not in cache:
            ids = tokenizer(text, return_tensors="pt")["input_ids"][:, :MAX_SMOLLM2_TOKENS]
            with torch.no_grad():
                out = llama(input_ids=ids, output_attentions=True, output_hidden_states=True)
            cache[text] = (tokenizer.convert_ids_to_tokens(ids[0].tolist()), [a[0].numpy() for a in out.attentions],
                           [h[0].numpy() for h in out.hidden_states], out.logits[0, -1].double())
        return cache[text]

    run.llama, run.tokenizer = llama, tokenizer
    return run
