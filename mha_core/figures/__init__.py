"""Plotly figures: pure functions (a trace or arrays in, a figure out) that work in a notebook as in the app.

`base` holds what every figure shares (the colour language, labels, layout, heatmap, small multiples); then one
module per family: `steps` (the four steps), `models` (trained models' layers and heads), `decoder` (RoPE, the
next token), `experiments` (experiments on heads), `lesson` (the classroom pages) and `inside` (inside a head).
`describe` makes each figure's text alternative from the same arrays (every figure carries one:
`Description.of(fig)`), and `theme.themed(fig, "dark")` gives a finished figure the dark palette. Every figure
function is also available here, e.g. `figures.head_grid_figure(trace, tokens)`, which returns a `Figure`: a dict of
plotly's JSON that a notebook draws as a chart (the others return plotly's go.Figure).
"""

from .base import (
    DARK,
    HEAD_COLOURS,
    LIGHT,
    MORE_LOOKS,
    PALETTES,
    SERIES,
    SIGNED_SCALE,
    WEIGHT_SCALE,
    Figure,
    group_rows,
    head_colour,
    heatmap,
    series_colour,
    token_labels,
)
from .decoder import next_token_figure, next_token_label, rope_distance_figure, rope_figure
from .describe import Description
from .experiments import (
    kv_groups_figure,
    layer_change_figure,
    output_change_figure,
    plant_figure,
    removal_figure,
    scale_summary_figure,
    scale_weights_figure,
)
from .inside import (
    contribution_grid_figure,
    qk_plane_figure,
    query_row_figure,
    rollout_figure,
    rollout_layers,
    special_share_figure,
    weight_share_figure,
)
from .lesson import dot_product_figure, flops_figure, kv_cache_figure, weight_shapes_figure
from .models import head_split_figure, head_summary_figure, model_grid_figure
from .steps import (
    MIX_KEYS,
    STAGE_TITLES,
    ZOOM,
    attention_figure,
    concat_figure,
    contribution_size_figure,
    contributions_figure,
    entropy_figure,
    head_grid_figure,
    head_panels,
    input_figure,
    input_output_figure,
    output_weight_figure,
    per_head_figure,
    pipeline_figure,
    projection_weight_figure,
    query_weights_figure,
    stage_title,
    value_mix_figure,
    zoom_figure,
    zoom_window,
)
from .theme import themed

__all__ = [
    "DARK", "Description", "Figure", "LIGHT", "MORE_LOOKS", "PALETTES", "themed",
    "HEAD_COLOURS", "SERIES", "MIX_KEYS", "SIGNED_SCALE", "STAGE_TITLES", "WEIGHT_SCALE", "ZOOM", "attention_figure",
    "concat_figure", "contribution_grid_figure", "contribution_size_figure", "contributions_figure",
    "dot_product_figure", "entropy_figure", "flops_figure", "group_rows", "head_colour", "head_grid_figure",
    "head_panels", "head_split_figure", "head_summary_figure", "heatmap", "input_figure", "input_output_figure",
    "kv_cache_figure", "kv_groups_figure", "layer_change_figure", "model_grid_figure", "next_token_figure",
    "next_token_label", "output_change_figure", "output_weight_figure", "per_head_figure", "pipeline_figure",
    "plant_figure", "projection_weight_figure", "qk_plane_figure", "query_row_figure", "query_weights_figure",
    "removal_figure", "rollout_figure", "rollout_layers", "rope_distance_figure", "rope_figure",
    "scale_summary_figure", "scale_weights_figure", "series_colour", "special_share_figure", "stage_title",
    "token_labels", "value_mix_figure", "weight_share_figure", "weight_shapes_figure", "zoom_figure", "zoom_window",
]
