"""The app's computations, cached: the example of a spec, a pretrained model, the check against PyTorch, and the
experiments' comparisons.

Every cache is bounded in entries and in bytes. Results that hold arrays are kept once for the whole server and
handed to every session as they are, read-only (`shared`): st.cache_data would give each session its own copy (a
class that opens one shared link would hold one copy per student) and has no bound in bytes, while one example of
a long sequence takes hundreds of MB. Results that are a few numbers stay in st.cache_data.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools

import streamlit as st

from mha_app.state.cache import BoundedCache, read_only
from mha_app.state.example import Example, build_example, model_head_mask
from mha_app.state.settings import Spec
from mha_core import QKPlane
from mha_core import qk_plane as plane_of
from mha_core import rollout as rollout_of
from mha_core.analysis import contributions, head_stats, reference
from mha_core.analysis.stats import row_entropy
from mha_core.experiments import ablation, scaling
from mha_core.pretrained import MODELS

MAX_EXAMPLES = 16
# In all. The largest example the app allows (n = 2048, h = 16, with a mask: scores, masked scores, weights and the
# mask, about 0.9 GB) fits, so a rerun at n = 2048 finds it instead of recomputing it; the next one evicts it.
MAX_EXAMPLE_BYTES = 1024 * 2**20


def shared(max_entries: int, max_bytes: int, spinner: str | None = None):
    """Cache a function of hashable inputs (never of a user) once for every session: read-only results, at most
    max_entries of them and max_bytes in all (see BoundedCache)."""
    def decorate(fn):
        cache = BoundedCache(max_entries, max_bytes)

        @functools.wraps(fn)
        def cached(*args):
            def compute():
                with st.spinner(spinner) if spinner else contextlib.nullcontext():
                    return read_only(fn(*args))
            return cache.get(args, compute)

        cached.cache, cached.clear = cache, cache.clear  # clear() as st.cache_data's functions have it
        return cached
    return decorate


@st.cache_resource(show_spinner="Loading the trained model…", max_entries=len(MODELS))
def pretrained_model(name: str):
    """A pretrained model, loaded once per process and shared (it is read-only)."""
    return MODELS[name].load()


@shared(MAX_EXAMPLES, MAX_EXAMPLE_BYTES, "Computing attention…")
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


@shared(32, 64 * 2**20, "Measuring how focused each head is…")
def entropy(spec: Spec, layer: int):
    """Row entropy in bits, (h, n), of the shown layer's weights."""
    return row_entropy(example(spec, layer).trace.weights)


@st.cache_data(max_entries=16, show_spinner=False)  # a few numbers for each of the model's heads
def _head_summary(spec: Spec, ablated_layer: int) -> list[dict]:
    model = pretrained_model(spec.model)
    return head_stats.head_summary(example(spec, ablated_layer).run, parts=head_stats.parts_for(model))


def head_summary(spec: Spec, layer: int) -> list[dict]:
    """Every head's statistics on a trained model's run of spec.text (head_stats.head_summary): computed once per
    text, not on every rerun; the layer counts only when heads are switched off in it (see example)."""
    return _head_summary(spec, layer if spec.ablate else 1)


@st.cache_data(max_entries=16, show_spinner=False)  # a few numbers for each of the model's heads
def _contribution_summary(spec: Spec, ablated_layer: int) -> list[dict]:
    model = pretrained_model(spec.model)
    return contributions.contribution_summary(example(spec, ablated_layer).run,
                                              [layer.attention for layer in model.layer_weights],
                                              parts=head_stats.parts_for(model))


def contribution_summary(spec: Spec, layer: int) -> list[dict]:
    """head_summary's statistics made from each head's contribution shares (what each key really adds) instead of
    its weights: computed once per text, as head_summary is."""
    return _contribution_summary(spec, layer if spec.ablate else 1)


@shared(32, 64 * 2**20)  # (h, m) each
def value_sizes(spec: Spec, layer: int):
    """‖v_s W^O_i‖ for every head i and key s of the shown layer (h, m): what a key adds per unit of weight."""
    ex = example(spec, layer)
    return contributions.value_sizes(ex.trace, ex.weights)


@shared(32, 128 * 2**20)  # a few (n, d_k) arrays each
def qk_plane(spec: Spec, layer: int, head: int) -> QKPlane:
    """Head `head` (0-based) of the shown layer: its queries and keys in one plane (mc.qk_plane)."""
    return plane_of(example(spec, layer).trace, head)


@shared(8, 256 * 2**20)  # (layers, n, n) each
def _rollout(spec: Spec, ablated_layer: int):
    return rollout_of(example(spec, ablated_layer).run)


def rollout(spec: Spec, layer: int):
    """Attention rollout of a trained model's run (mc.rollout, residual share 0.5 as in the paper): once per text;
    the layer counts only when heads are switched off in it (see example)."""
    return _rollout(spec, layer if spec.ablate else 1)


@st.cache_data(max_entries=64, show_spinner=False)  # one number each
def torch_difference(spec: Spec, layer: int) -> float:
    """Largest |difference| from PyTorch's own attention on the shown layer (see mha_core.analysis.reference)."""
    ex = example(spec, layer)
    return reference.torch_difference(ex.trace, ex.weights, ex.cfg)


@shared(16, 256 * 2**20, "Softmaxing the scores with and without 1/√d_k…")  # two (n, m) matrices each
def _scale_comparison(spec: Spec, layer: int) -> scaling.ScaleComparison:
    ex = example(spec, layer)
    return scaling.compare_scaling(ex.trace, ex.cfg, 0)


@shared(16, 256 * 2**20)
def scale_comparison(spec: Spec, layer: int, head: int) -> scaling.ScaleComparison:
    """The shown layer's raw scores softmaxed with and without 1/√d_k (head: 0-based, whose weights are kept). Every
    head's means are computed once per layer; another head only softmaxes its own scores twice."""
    ex = example(spec, layer)
    return scaling.with_head(_scale_comparison(spec, layer), ex.trace, ex.cfg, head)


@st.cache_data(max_entries=16, show_spinner="Switching off each head of this layer in turn…")  # 2 x h numbers
def model_head_ranking(spec: Spec, layer: int) -> ablation.ModelRanking:
    """For a trained model: what removing each head of `layer` alone does to the rest of the model."""
    full = full_example(spec, layer)
    return ablation.rank_heads_in_model(pretrained_model(spec.model), full.run, layer - 1, spec.backend)


@st.cache_data(max_entries=16, show_spinner="Reading the second sentence…")  # two numbers
def sentence_similarity(spec: Spec, layer: int, other: str) -> tuple[float, float]:
    """Cosine similarity of the sentence vectors of spec.text and `other`: with every head, and with spec.ablate off."""
    model = pretrained_model(spec.model)
    return ablation.embedding_similarity(model, spec.text, other, model_head_mask(spec, model, layer),
                                         spec.backend)
