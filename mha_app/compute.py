"""The app's computations, cached: the example of a spec, a pretrained model, the check against PyTorch."""

from __future__ import annotations

import streamlit as st

from mha_core import reference

from .example import Example, build_example
from .settings import Spec


@st.cache_resource(show_spinner="Loading the trained model…")
def pretrained_model(name: str):
    """A pretrained model, loaded once per process and shared (it is read-only)."""
    from mha_core.pretrained import MODELS

    return MODELS[name].load()


@st.cache_data(max_entries=16, show_spinner="Computing attention…")
def _example(spec: Spec) -> Example:
    return build_example(spec, pretrained_model(spec.model) if spec.card else None)


def example(spec: Spec, layer: int = 1) -> Example:
    """The example of `spec`, at `layer` for a pretrained model (every layer is computed once, for any layer)."""
    ex = _example(spec)
    return ex if ex.run is None else ex.at_layer(layer, pretrained_model(spec.model))


@st.cache_data(max_entries=16, show_spinner=False)
def torch_difference(spec: Spec, layer: int) -> float:
    """Largest |difference| from torch.nn.MultiheadAttention on the shown layer (see mha_core.reference)."""
    ex = example(spec, layer)
    return reference.torch_difference(ex.trace, ex.weights, ex.cfg)
