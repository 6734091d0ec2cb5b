"""Shared test helpers: the repository root and an AppTest runner for the Streamlit app."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A free loopback port for a test server: within MHA_PORTS (e.g. 8620-8629) when it is set, else any."""
    import socket

    span = os.environ.get("MHA_PORTS", "")
    candidates = range(int(span.split("-")[0]), int(span.split("-")[1]) + 1) if "-" in span else [0]
    for port in candidates:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise RuntimeError(f"no free port in MHA_PORTS={span}")


def run_app(params: dict | None = None, page: str | None = None, answered: bool = True, context: dict | None = None,
            opened: dict | None = None):
    """Run app.py in AppTest with these URL query parameters, optionally switching to a page file; `context` seeds
    what a browser would report in st.context (e.g. {"theme": "dark"}).

    answered: the page's prediction questions are taken as answered, so the page shows everything (as it does for
    a student who has answered); False shows a page whose questions still wait (tests/app/test_questions_wait.py).
    opened: the lazy tabs and expanders to open, by key (mha_app.toolkit.tabs and expander compute only what is
    open): {"attention_tab": "The mask", "input_box": True}. Closed, their content is not on the page.
    """
    from streamlit.testing.v1 import AppTest

    from mha_core.teaching.questions import KINDS

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update(params or {})
    for kind in KINDS if answered else ():
        at.session_state[f"answered_{kind}"] = "revealed"
    for key, value in (opened or {}).items():
        at.session_state[key] = value
    at.context.update(context or {})
    at.run()
    if page:
        at.switch_page(page).run()
    return at


def figures(at) -> list[dict]:
    """The plotly figure specs on the current page, in order."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def figure_titled(at, prefix: str) -> dict:
    matches = [f for f in figures(at) if f["layout"]["title"]["text"].startswith(prefix)]
    assert matches, f"no figure titled {prefix!r} in {[f['layout']['title']['text'] for f in figures(at)]}"
    return matches[0]


def explorer(at):
    """The attention explorer on the current page: (header, arrays, view), its payload decoded as the browser reads it
    (mha_app.explorer.payload.read_payload) and the view the server hands it (layer, head, query, stage)."""
    from mha_app.explorer.payload import read_payload

    parts = {e.proto.component_name: e.proto for e in at.get("bidi_component")}
    assert "mha_app.attention_explorer" in parts, f"no explorer on the page, only {sorted(parts)}"
    header, arrays = read_payload(parts["mha_app.attention_explorer"].bytes)
    return header, arrays, json.loads(parts["mha_app.attention_explorer_view"].json)["view"]


def explorer_matrix(at, stage: str | None = None, head: int | None = None):
    """One head's matrix (1-based head) at a stage as the explorer draws it (default: the view's head and stage)."""
    header, arrays, view = explorer(at)
    stack = arrays[f"{view['layer']}/{stage or view['stage']}"]
    return stack[0 if len(stack) == 1 else (head or view["head"]) - 1]  # a mask alike in every head is sent once


@pytest.fixture
def app():
    return run_app


def biased_weights(cfg, dtype, seed: int = 0):
    """mc.init_weights plus clearly nonzero random biases (init_weights starts them at 0, which hides bias bugs)."""
    import dataclasses

    import numpy as np

    import mha_core as mc

    w = mc.init_weights(cfg, seed=seed, dtype=dtype)
    if not cfg.bias:
        return w
    rng = np.random.default_rng(seed + 1)
    return dataclasses.replace(w, **{name: rng.uniform(-0.5, 0.5, getattr(w, name).shape).astype(dtype)
                                     for name in ("b_Q", "b_K", "b_V", "b_O")})


@pytest.fixture(scope="session")
def bert():
    """(transformers' BertModel with eager attention, its tokenizer) from all-MiniLM-L6-v2's own files, offline."""
    from mha_core.pretrained import load_minilm

    model_dir = load_minilm().model_dir
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        transformers = pytest.importorskip("transformers")
        net = transformers.BertModel.from_pretrained(model_dir, attn_implementation="eager",
                                                     local_files_only=True).eval()
        tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    return net, tokenizer


def zero_heads_hook(encoder_layer, heads, d_k: int):
    """A forward hook on a BertLayer's self-attention that zeroes these heads' slice of its context (the heads side
    by side, before the output dense layer W_O); returns the handle (call .remove())."""
    def hook(_module, _inputs, output):
        context = output[0].clone()
        for i in heads:
            context[..., i * d_k:(i + 1) * d_k] = 0.0
        return (context, *output[1:])

    return encoder_layer.attention.self.register_forward_hook(hook)


def as_array(value):
    """A plotly JSON array (plain list or base64 typed array) as NumPy."""
    import base64

    import numpy as np

    if isinstance(value, dict) and "bdata" in value:
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if shape:
            data = data.reshape([int(s) for s in str(shape).split(",")])
        return data
    return np.array(value, dtype=float)


def load_pretrained(load):
    """A pretrained model from its loader; a skip when its weights package is not installed, unless the environment
    says REQUIRE_MODELS=1 (as CI does), which makes that a failure."""
    from mha_core.pretrained import ModelNotInstalledError

    try:
        return load()
    except ModelNotInstalledError as exc:
        if os.environ.get("REQUIRE_MODELS") == "1":
            pytest.fail(f"REQUIRE_MODELS=1, but: {exc}")
        pytest.skip(f"{exc} (REQUIRE_MODELS=1 turns this skip into a failure)")


# Python code that makes every network call fail, for tests that load a model "offline".
BLOCK_NETWORK = """
import socket
def blocked(*args, **kwargs):
    raise OSError("network access attempted")
socket.socket.connect = socket.socket.connect_ex = blocked
socket.create_connection = socket.getaddrinfo = blocked
"""


def run_python(code: str, **env):
    """Run code in a fresh interpreter at the repository root (extra environment variables in env)."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env})


def complex_rope(x, theta: float, positions=None):
    """x (heads, n, d_k) turned by position as Llama's RoPE, written with complex numbers, in float64: in each head,
    dimensions i and i + d_k/2 are one complex number, multiplied by exp(1j * p * theta^(-2i/d_k)) at position p."""
    import numpy as np

    heads, n, d_k = x.shape
    half = d_k // 2
    positions = np.arange(n) if positions is None else np.asarray(positions)
    z = x[..., :half].astype(np.float64) + 1j * x[..., half:].astype(np.float64)
    freq = theta ** (-2.0 * np.arange(half) / d_k)                        # (d_k/2,)
    z = z * np.exp(1j * positions[:, None] * freq[None, :])               # (heads, n, d_k/2)
    return np.concatenate([z.real, z.imag], axis=-1)


def remembered_runs(model):
    """model.run, remembered per text and backend (runs are read-only, so sharing them between tests is safe)."""
    cache = {}

    def run(text, backend="numpy"):
        if (text, backend) not in cache:
            cache[text, backend] = model.run(text, backend=backend)
        return cache[text, backend]

    return run


def mosaic_panels(figure: dict) -> dict[tuple[int, int], object]:
    """The model view's panels by (layer, head), 1-based, read back from its one heatmap: each column is labelled
    "head h, key ...", each row "layer l, query ..." (the empty gaps between panels have other labels)."""
    import re

    import numpy as np

    trace = figure["data"][0]
    z = as_array(trace["z"]).reshape(len(trace["y"]), len(trace["x"]))

    def blocks(labels: list[str], word: str) -> dict[int, list[int]]:
        found: dict[int, list[int]] = {}
        for i, label in enumerate(labels):
            match = re.match(rf"{word} (\d+), ", label)
            if match:
                found.setdefault(int(match.group(1)), []).append(i)
        return found

    rows, cols = blocks(trace["y"], "layer"), blocks(trace["x"], "head")
    return {(l, h): z[np.ix_(r, c)] for l, r in rows.items() for h, c in cols.items()}


def mosaic_outline(figure: dict) -> tuple[int, int]:
    """The (layer, head), 1-based, of the model view's panel that its red outline frames exactly."""
    trace, shape = figure["data"][0], figure["layout"]["shapes"][0]
    cells_x = [i for i in range(len(trace["x"])) if shape["x0"] < i < shape["x1"]]
    cells_y = [i for i in range(len(trace["y"])) if shape["y0"] < i < shape["y1"]]
    heads = {trace["x"][i].split(",")[0] for i in cells_x}
    layers = {trace["y"][i].split(",")[0] for i in cells_y}
    assert len(heads) == len(layers) == 1, (heads, layers)
    head, layer = heads.pop(), layers.pop()
    # the outline holds the whole panel: every column of that head and every row of that layer
    assert len(cells_x) == sum(label.startswith(head + ",") for label in trace["x"])
    assert len(cells_y) == sum(label.startswith(layer + ",") for label in trace["y"])
    return int(layer.split()[1]), int(head.split()[1])


@pytest.fixture(scope="session")
def smollm2():
    """SmolLM2-135M-Instruct, loaded once for the session (a skip when it is not installed, see load_pretrained)."""
    from mha_core.pretrained import load_smollm2

    return load_pretrained(load_smollm2)


@pytest.fixture(scope="session")
def smollm2_reference(smollm2):
    """transformers' Llama and tokenizer from the same GGUF file, offline, loaded once for the session.

    transformers reads the file with gguf, undoes llama.cpp's Q/K row order itself and runs its own Llama code
    (eager attention). run(text) -> (tokens, attentions (h, n, n) per layer, hidden states (n, d_model) per layer
    input, last logits), remembered per text; run.llama and run.tokenizer are the model and tokenizer.
    """
    from pathlib import Path

    import torch

    from mha_core.pretrained import MAX_SMOLLM2_TOKENS

    pytest.importorskip("gguf")
    transformers = pytest.importorskip("transformers")
    path = Path(smollm2.path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
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


def llama_gated_logits(reference, text: str, gates) -> object:
    """The logits (n, vocab), float64, of transformers' Llama on text with every head's output scaled by its gate
    (gates: (n_layers, h), 1 = kept, 0 = switched off): a pre-hook on each layer's o_proj scales the heads' slices
    of its input (the heads side by side, before W_O)."""
    import numpy as np
    import torch

    gates = np.asarray(gates, dtype=np.float64)
    d_k = reference.llama.config.head_dim
    handles = []

    def scale(row):
        def hook(_module, args):
            x = args[0].clone()
            for i, factor in enumerate(row):
                if factor != 1.0:
                    x[..., i * d_k:(i + 1) * d_k] *= float(factor)
            return (x,)
        return hook

    for layer, row in enumerate(gates):
        if (row != 1.0).any():
            handles.append(reference.llama.model.layers[layer].self_attn.o_proj.register_forward_pre_hook(scale(row)))
    try:
        ids = reference.tokenizer(text, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            return reference.llama(input_ids=ids).logits[0].double()
    finally:
        for handle in handles:
            handle.remove()


def llama_without_heads(reference, text: str, layer: int, heads) -> object:
    """The next-token probabilities (vocab,) of transformers' Llama on text with these heads (0-based) of `layer`
    (0-based) switched off (see llama_gated_logits)."""
    import numpy as np
    import torch

    config = reference.llama.config
    gates = np.ones((config.num_hidden_layers, config.num_attention_heads))
    gates[layer, list(heads)] = 0.0
    return torch.softmax(llama_gated_logits(reference, text, gates)[-1], -1).numpy()


def as_figure(fig):
    """A figure function's result as plotly's object: a figure dict (mha_core.figures.base) is built into a go.Figure,
    which checks every property of it against plotly's schema; a go.Figure is returned as it is."""
    import plotly.graph_objects as go

    return go.Figure(fig) if isinstance(fig, dict) else fig


class PlotlyObjects:
    """A module of figure functions (mha_core.figures or one of its modules) whose figures come back as go.Figure
    objects (as_figure: a figure dict is checked by plotly on the way); everything else (labels, numbers, a go.Figure,
    the other parts of a tuple) as the function returns it. Tests of what a figure holds then read plotly's objects,
    whichever kind the function builds."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name: str):
        value = getattr(self._module, name)
        if not callable(value) or isinstance(value, type):
            return value

        def wrapped(*args, **kwargs):
            result = value(*args, **kwargs)
            if isinstance(result, tuple) and result and isinstance(result[0], dict) and "layout" in result[0]:
                return (as_figure(result[0]), *result[1:])
            return as_figure(result) if isinstance(result, dict) and "layout" in result else result

        return wrapped
