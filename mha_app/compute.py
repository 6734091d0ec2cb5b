"""The app's computations, cached: the example of a spec, a pretrained model, the check against PyTorch.

Every cache is bounded in entries and bytes. Examples are kept once for the whole server and handed to each session
as they are, read-only: st.cache_data would give every session its own copy (a class that opens one shared link
would hold one copy per student) and has no bound in bytes, while a long sequence takes hundreds of MB.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from mha_core import reference
from mha_core.pretrained import MODELS

from .cache import BoundedCache
from .example import Example, build_example
from .settings import Spec

MAX_EXAMPLES = 16
MAX_EXAMPLE_BYTES = 512 * 2**20  # in all; an example larger than this alone is computed for its run, not kept


@st.cache_resource(show_spinner="Loading the trained model…", max_entries=len(MODELS))
def pretrained_model(name: str):
    """A pretrained model, loaded once per process and shared (it is read-only)."""
    return MODELS[name].load()


@st.cache_resource
def _examples() -> BoundedCache:
    """The one example cache of the server. Its keys are Specs, its values depend on nothing else (no user)."""
    return BoundedCache(MAX_EXAMPLES, MAX_EXAMPLE_BYTES)


def _read_only(ex: Example) -> Example:
    """The example with every array of its trace and weights made read-only: sessions share it."""
    for part in (ex.trace, ex.weights):
        for array in vars(part).values():
            if isinstance(array, np.ndarray):
                array.setflags(write=False)
    return ex


def _build(spec: Spec) -> Example:
    with st.spinner("Computing attention…"):
        return _read_only(build_example(spec, pretrained_model(spec.model) if spec.card else None))


def example(spec: Spec, layer: int = 1) -> Example:
    """The example of `spec`, at `layer` for a pretrained model (every layer is computed once, for any layer)."""
    ex = _examples().get(spec, lambda: _build(spec))
    return ex if ex.run is None else ex.at_layer(layer, pretrained_model(spec.model))


@st.cache_data(max_entries=64, show_spinner=False)  # one float per entry
def torch_difference(spec: Spec, layer: int) -> float:
    """Largest |difference| from torch.nn.MultiheadAttention on the shown layer (see mha_core.reference)."""
    ex = example(spec, layer)
    return reference.torch_difference(ex.trace, ex.weights, ex.cfg)
