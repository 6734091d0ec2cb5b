"""The app's computations, cached: the example of a spec, a pretrained model, the check against PyTorch."""

from __future__ import annotations

import dataclasses

import streamlit as st

from mha_core import ablation, reference, scaling

from .example import Example, build_example, model_head_mask
from .settings import BACKENDS, Spec


@st.cache_resource(show_spinner="Loading the trained model…")
def pretrained_model(name: str):
    """A pretrained model, loaded once per process and shared (it is read-only)."""
    from mha_core.pretrained import MODELS

    return MODELS[name].load()


@st.cache_data(max_entries=16, show_spinner="Computing attention…")
def _example(spec: Spec, ablated_layer: int | None) -> Example:
    return build_example(spec, pretrained_model(spec.model) if spec.card else None, layer=ablated_layer or 1)


def example(spec: Spec, layer: int = 1) -> Example:
    """The example of `spec`, at `layer` for a pretrained model (every layer is computed once, for any layer).

    A trained model's switched-off heads are those of the layer on view, so that layer is part of the computation
    (and of the cache key) when heads are switched off, and only then.
    """
    ex = _example(spec, layer if spec.card and spec.ablate else None)
    return ex if ex.run is None else ex.at_layer(layer, pretrained_model(spec.model))


def full_example(spec: Spec, layer: int = 1) -> Example:
    """The same example with every head kept (itself when no head is switched off)."""
    return example(dataclasses.replace(spec, ablate=()), layer)


@st.cache_data(max_entries=16, show_spinner=False)
def torch_difference(spec: Spec, layer: int) -> float:
    """Largest |difference| from PyTorch's own attention on the shown layer (see mha_core.reference)."""
    ex = example(spec, layer)
    return reference.torch_difference(ex.trace, ex.weights, ex.cfg)


@st.cache_data(max_entries=16, show_spinner="Softmaxing the scores with and without 1/√d_k…")
def scale_comparison(spec: Spec, layer: int, head: int) -> scaling.ScaleComparison:
    """The shown layer's raw scores softmaxed with and without 1/√d_k (head: 0-based, whose weights are kept)."""
    ex = example(spec, layer)
    return scaling.compare_scaling(ex.trace, ex.cfg, head)


@st.cache_data(max_entries=16, show_spinner="Switching off each head of this layer in turn…")
def model_head_ranking(spec: Spec, layer: int) -> ablation.ModelRanking:
    """For a trained model: what removing each head of `layer` alone does to the rest of the model."""
    full = full_example(spec, layer)
    return ablation.rank_heads_in_model(pretrained_model(spec.model), full.run, layer - 1, BACKENDS[spec.backend])


@st.cache_data(max_entries=16, show_spinner="Reading the second sentence…")
def sentence_similarity(spec: Spec, layer: int, other: str) -> tuple[float, float]:
    """Cosine similarity of the sentence vectors of spec.text and `other`: with every head, and with spec.ablate off."""
    model = pretrained_model(spec.model)
    return ablation.embedding_similarity(model, spec.text, other, model_head_mask(spec, model, layer),
                                         BACKENDS[spec.backend])
