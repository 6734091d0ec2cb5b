"""Every figure the app can draw, built once from small examples (a causal, grouped-query, RoPE layer among them):
for the tests that hold for all figures (the colour language, the dark theme, a text alternative on each)."""

from __future__ import annotations

import numpy as np

import mha_core as mc
from mha_core import figures as F
from mha_core.analysis.contributions import contribution_shares
from mha_core.analysis.cost import attention_flops
from mha_core.analysis.decompose import head_contributions
from mha_core.analysis.head_stats import ENCODER, decoder_parts, head_summary
from mha_core.attention.rope import relative_scores
from mha_core.experiments import ablation, plant, scaling
from mha_core.figures import decoder as D
from mha_core.figures import experiments as X
from mha_core.figures import inside as I
from mha_core.figures import lesson as L
from mha_core.pretrained.smollm2 import NextToken
from mha_core.teaching.published import kv_cache_table, preset, presets
from mha_core.teaching.worked import work_cell

TOKENS = ["The", "*cat*", "<b>sat</b>", "on", "$5", "mat"]  # markup that must stay text


def catalogue() -> dict[str, object]:
    """name -> figure, for every figure function of mha_core.figures."""
    cfg = mc.MHAConfig(16, 4, causal=True)
    w = mc.init_weights(cfg, seed=0)
    x = mc.random_input(6, 16, seed=0)
    tr = mc.forward(x, w, cfg)
    gqa_cfg = mc.MHAConfig(24, 6, n_kv_heads=2, causal=True, rope_theta=10_000.0)
    gqa_w = mc.init_weights(gqa_cfg, seed=1)
    gqa = mc.forward(mc.random_input(6, 24, seed=1), gqa_w, gqa_cfg)
    contrib = head_contributions(tr, w)
    rng = np.random.default_rng(0)
    attn = rng.random((3, 4, 6, 6))
    attn /= attn.sum(-1, keepdims=True)
    rows = head_summary(list(attn), ["[CLS]", "a", "b", "c", "d", "[SEP]"])
    cmp = scaling.compare_scaling(tr, cfg, head=1)
    planted_w = mc.plant_head(w, cfg, 1, "next", 3.0, x)
    planted = mc.forward(x, planted_w, cfg)
    off = mc.forward(x, w, cfg, head_mask=np.array([1.0, 0.0, 1.0, 1.0]))
    layers = ablation.LayerChange(relative=np.array([[0, 0], [0.1, 0.3], [0.2, 0.2]]), cosine=np.ones((3, 2)))
    rel = relative_scores(gqa.q_before_rope[4, 5], gqa.k_before_rope[1, 2], 10_000.0, 6)
    next_tokens = [NextToken(token="Ġmat", text=" mat", id=1, probability=0.6),
                   NextToken(token="<|im_end|>", text="", id=2, probability=0.1)]
    shares = contribution_shares(mc.contributions(gqa, gqa_w))
    rollout = mc.rollout([tr, tr, tr])
    shape = presets()[0]
    table = kv_cache_table(4096)
    return {
        "pipeline": F.pipeline_figure(6, 16, 4, 4),
        "input": F.input_figure(tr.x, TOKENS),
        "projection weights": F.projection_weight_figure(gqa_w.W_K, 2, "W_K", group_size=3, kv=True),
        "per head": F.per_head_figure(gqa.q, TOKENS, "Q", group_size=3),
        **{f"attention {stage}": F.attention_figure(tr, 1, TOKENS, stage, cfg.softmax_scale)
           for stage in ("raw", "scaled", "mask", "weights")},
        "zoom": F.zoom_figure(tr, 1, TOKENS, "weights", F.zoom_window(6, 6, 2, 1, size=4)),
        "head grid": F.head_grid_figure(gqa, TOKENS, group_size=3),
        "query weights": F.query_weights_figure(tr, 2, 3, TOKENS),
        "value mix": F.value_mix_figure(gqa, 4, 3, TOKENS, group_size=3),
        "entropy": F.entropy_figure(tr, TOKENS),
        "concat": F.concat_figure(tr, TOKENS),
        "output weights": F.output_weight_figure(w.W_O, 4),
        "contributions": F.contributions_figure(contrib, tr.output, TOKENS),
        "contribution sizes": F.contribution_size_figure(contrib),
        "input and output": F.input_output_figure(tr.x, tr.output, TOKENS),
        "model grid": F.model_grid_figure(attn.astype(np.float32), TOKENS, selected=(1, 2), group_size=2,
                                          mask=tr.mask),
        "head summary shares": F.head_summary_figure(np.array([[r["cls"] for r in rows[i * 4:(i + 1) * 4]]
                                                               for i in range(3)]), "cls"),
        "head summary entropy": F.head_summary_figure(rng.random((3, 4)) * 2, "entropy"),
        "head split": F.head_split_figure(rows[:4], "Layer 1", ENCODER),
        "head split, decoder": F.head_split_figure(
            head_summary(list(attn), list("abcdef"), decoder_parts())[:4], "Layer 1", decoder_parts()),
        "rope": D.rope_figure(gqa, 4, TOKENS, group_size=3),
        "rope distance": D.rope_distance_figure(rel, "'sat'", "'on'", 4),
        "next token": D.next_token_figure(next_tokens, "the"),
        "kv groups": X.kv_groups_figure(6, 2),
        "scale weights": X.scale_weights_figure(cmp, TOKENS, mask=tr.mask[1]),
        "scale summary": X.scale_summary_figure(cmp),
        "plant": X.plant_figure(planted, 1, plant.fit(planted, 1, "next", 3.0), TOKENS),
        "output change": X.output_change_figure(ablation.output_change(off, w), TOKENS, (2,)),
        "removal": X.removal_figure(np.array([0.3, 0.1, 0.2, 0.4]), "Switching one head off", "|change|", off=(2,)),
        "layer change": X.layer_change_figure(layers, 1),
        "flops": L.flops_figure(attention_flops(6, 6, 16, 1), attention_flops(6, 6, 16, 4), 16, 4,
                                {k: k for k in attention_flops(6, 6, 16, 4)}),
        "weight shapes": L.weight_shapes_figure(shape),
        "dot product": L.dot_product_figure(work_cell(tr, 1, 3, 2, cfg.softmax_scale), "4 on", "3 sat"),
        "kv cache": L.kv_cache_figure(table, 4096, 1),
        "qk plane": I.qk_plane_figure(mc.qk_plane(gqa, 4), TOKENS, 2, group_size=3),  # keys 4-6 blocked
        "query row": I.query_row_figure(tr, 1, 3, TOKENS),
        "contribution grid": I.contribution_grid_figure(shares, TOKENS, group_size=3, mask=gqa.mask),
        "rollout": I.rollout_figure(rollout, TOKENS),
        "special share": I.special_share_figure(rng.random((3, 4)), rng.random((3, 4))),
        "published shape": L.weight_shapes_figure(preset(shape.key)),
    }
