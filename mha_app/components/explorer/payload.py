"""What the attention explorer receives, once per example: step 2 of every head, packed as binary arrays.

A pure function of traces and tokens (no Streamlit), so it can be tested and used in a notebook. For each layer sent,
every head at every stage of step 2: the raw scores Q_i K_iᵀ, the scaled scores, the mask and the softmax weights,
queries as rows and keys as columns; and, given the layer's weights, what each key adds (contribution shares,
mha_core.analysis.contributions; see contribution_arrays). Up to pooling.OVERVIEW_CELLS cells a matrix goes exactly as
the engine computed it (in the trace's own dtype: a float32 engine value is sent as that float32, not rounded again); a
longer one is averaged over blocks of s × s cells, as the app's overviews have always been (pooling.pool_stage, float32
means), and the zoom window's cells (figures.zoom_window, up to 64 × 64) then go exactly as well. Without pooling, the
zoom window is only a place (the browser takes its cells from the whole matrices). The head grid's panels are
pooling.pool_heads of the weights (the weights themselves when nothing is pooled, and then not sent twice). A trained
model sends every layer in one payload when all of them fit in LAYERS_BUDGET bytes; otherwise the explorer gets a frame
(build_frame: the header alone, the same whatever the layer on view) and each layer goes in a payload of its own
(build_layer, a carrier), so that changing the layer needs no server either way, and no payload depends on the layer
on view.

Layout of the bytes: b"MHAX", the header's length (uint32, little-endian), the header (JSON, UTF-8), zero padding to a
multiple of 8 bytes, then each array, little-endian and C-ordered, at an offset from there that is a multiple of 8 (so
the browser can view it as a typed array without copying). The header names each array "<layer>/<part>", part one of
raw, scaled, mask, weights, grid, grid/mask, zoom/raw, zoom/scaled, zoom/mask, zoom/weights, and with the layer's
weights contributions/sizes (h, m), contributions/totals (h, n), and where pooled contributions and grid/contributions,
each with its dtype ("<f4", "<f8", "|u1"), shape and offset. A mask that is the same in every head (every mask this app
makes) is sent once, shape (1, rows, cols); a layer without a mask sends none. The header's `id` is a hash of everything
else: equal ids, equal payloads. A frame has no arrays, `layers` empty and `carried`, each layer's carrier id by
layer; a carrier's header has its `layer`, the `scale` and `derived`: the parts left out because the browser makes
them bit for bit (the scaled scores, see scaled_is_derived).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence

import numpy as np
from plotly.colors import get_colorscale

from mha_app.copy.explorer import header_text, stage_note
from mha_app.state.settings import STAGES, control
from mha_core import MHAWeights, Trace, figures
from mha_core.analysis import pooling
from mha_core.analysis.contributions import contribution_shares, head_contributions, head_gates, value_sizes

MAGIC = b"MHAX"
VERSION = 1
STEP2 = pooling.STAGES                    # raw, scaled, mask, weights: read from the trace
# STAGES: those, then contributions (what each key adds), made from the trace and the layer's weights
SIGNED = ("raw", "scaled")                # drawn on the diverging scale, centred on 0
CONTRIBUTIONS = "Contribution shares ‖α_ts v_s W^O_i‖ ÷ the row's sum"
LAYERS_BUDGET = 4 * 2**20                 # bytes: a trained model's layers all go when they fit in this
CARRIERS_BUDGET = 24 * 2**20              # bytes of carriers sent with the page: the layers nearest the one on view
ALIGN = 8


def overview_step(n: int, m: int) -> int:
    """The block size s of an (n, m) matrix's overview (1: every cell exact), as pooling.pool_stage chooses it."""
    return pooling.block_step(n, m, pooling.OVERVIEW_CELLS)


def _one_or_all(a: np.ndarray) -> np.ndarray:
    """A stack over heads (h, rows, cols), or its first matrix alone, (1, rows, cols), when every head has the same."""
    return a[:1] if (a == a[:1]).all() else a


def _mask_heads(trace: Trace) -> range:
    """The mask's heads to send: one when every head has the same mask (the app's masks), else all; none without."""
    return range(0 if trace.mask is None else len(_one_or_all(trace.mask)))


def overview_arrays(trace: Trace, weights: MHAWeights | None = None) -> dict[str, np.ndarray]:
    """One layer's matrices by part, every head at every stage and the grid's panels (see the module docstring),
    and with the layer's weights its contribution_arrays: the slow part of a payload at large n, and the same
    wherever the zoom window is."""
    h, n, m = trace.weights.shape
    step = overview_step(n, m)
    out: dict[str, np.ndarray] = {}
    for stage in STEP2:
        heads = _mask_heads(trace) if stage == "mask" else range(h)
        if step == 1:  # exact: the engine's own numbers, in its dtype; the mask as 0/1 bytes
            z = [trace.mask[i].astype(np.uint8) if stage == "mask" else pooling.stage_matrix(trace, i, stage)
                 for i in heads]
        elif stage == "mask":  # the share of each block that is blocked
            z = [pooling.shown(*pooling.pool(pooling.stage_matrix(trace, i, stage), pooling.OVERVIEW_CELLS))
                 for i in heads]
        else:          # each head's overview, as pooling.pool_stage draws it (blocked pairs left out of the means)
            z = [pooling.pool_stage(trace, i, stage)[0] for i in heads]
        if z:
            out[stage] = np.stack(z)                                                # (heads, ⌈n/s⌉, ⌈m/s⌉)
    grid, grid_step = pooling.pool_heads(trace.weights, trace.mask)                 # (h, ⌈n/g⌉, ⌈m/g⌉)
    if grid_step > 1:
        out["grid"] = grid
        if trace.mask is not None:  # the share of each panel block that is blocked
            blocked = trace.mask[list(_mask_heads(trace))].astype(np.float32)       # (mask heads, n, m)
            out["grid/mask"] = pooling.pool_stack(blocked, pooling.grid_budget(h))[0]
    return out | (contribution_arrays(trace, weights) if weights is not None else {})


def contribution_arrays(trace: Trace, weights: MHAWeights) -> dict[str, np.ndarray]:
    """What the explorer needs to show contribution shares (analysis.contributions: share_ts = α_ts ‖v_s W^O_i‖ over
    its row's sum), in a few numbers per token: each key's size ‖v_s W^O_i‖ (contributions/sizes, (h, m)), each
    head's gate |g_i| (contributions/gates, (h,): 0 for a head switched off, whose values are still computed) and
    each query row's sum Σ_s |g_i| α_ts ‖v_s W^O_i‖ (contributions/totals, (h, n)), in float64. From these and the
    exact weights, the browser makes each share as contribution_shares does (|g_i| α_ts · size_s / total_t, 0 in a
    head switched off), so no (h, n, m) array of shares is sent. Where the weights go as block means, the shares'
    block means go as well (contributions, grid/contributions), as pooling does the weights'."""
    h, n, m = trace.weights.shape
    step, grid_step = overview_step(n, m), pooling.block_step(n, m, pooling.grid_budget(h))
    sizes = value_sizes(trace, weights)                                             # (h, m)
    gates = np.abs(head_gates(trace))                                               # (h,)
    totals = np.empty((h, n))
    overview, grid = [], []
    for i in range(h):  # one head at a time: an (n, m) float64 temporary, never (h, n, m)
        contribution = head_contributions(trace, sizes, i)                          # (n, m) ‖g_i α_ts v_s W^O_i‖
        totals[i] = contribution.sum(axis=-1)                                       # (n,)
        if step > 1 or grid_step > 1:
            share = contribution_shares(contribution)                               # (n, m), rows sum to 1
            overview += [pooling.block_mean(share, step)] if step > 1 else []       # (⌈n/s⌉, ⌈m/s⌉)
            grid += [pooling.block_mean(share, grid_step)] if grid_step > 1 else []  # (⌈n/g⌉, ⌈m/g⌉)
    out = {"contributions/sizes": sizes, "contributions/gates": gates, "contributions/totals": totals}
    if overview:
        out["contributions"] = np.stack(overview).astype(np.float32)                # (h, ⌈n/s⌉, ⌈m/s⌉)
    if grid:
        out["grid/contributions"] = np.stack(grid).astype(np.float32)               # (h, ⌈n/g⌉, ⌈m/g⌉)
    return out


def zoom_arrays(trace: Trace, window: tuple[int, int, int, int] | None) -> dict[str, np.ndarray]:
    """The zoom window's cells (window = figures.zoom_window(...)) of every head at every stage, exact, when the
    overview is pooled; nothing when it is not (every cell is sent exactly already) or without a window."""
    h, n, m = trace.weights.shape
    if overview_step(n, m) == 1 or window is None:
        return {}
    r0, r1, c0, c1 = window
    out = {}
    for stage in STEP2:
        heads = _mask_heads(trace) if stage == "mask" else range(h)
        z = [trace.mask[i, r0:r1, c0:c1].astype(np.uint8) if stage == "mask" else
             pooling.stage_matrix(trace, i, stage)[r0:r1, c0:c1] for i in heads]
        if z:
            out[f"zoom/{stage}"] = np.stack(z)                                      # (heads, r1-r0, c1-c0)
    return out


def layer_arrays(trace: Trace, window: tuple[int, int, int, int] | None = None,
                 weights: MHAWeights | None = None) -> dict[str, np.ndarray]:
    """One layer's arrays by part: its overviews (with its weights: and contributions) and its zoom window's cells."""
    return overview_arrays(trace, weights) | zoom_arrays(trace, window)


def layer_bytes(trace: Trace, window: tuple[int, int, int, int] | None = None,
                weights: MHAWeights | None = None) -> int:
    """The bytes one layer's arrays take in a payload."""
    return sum(_padded(a.nbytes) for a in layer_arrays(trace, window, weights).values())


def layers_that_fit(traces: Sequence[Trace], current: int, window=None, budget: int = LAYERS_BUDGET,
                    weights: Sequence[MHAWeights] | None = None) -> list[int]:
    """The layers (1-based) to send: every one of `traces` (a model's layers, alike in shape; `weights`: each
    layer's, when contributions go too) when all fit in budget bytes, else the current one alone."""
    chosen = None if weights is None else weights[current - 1]
    if len(traces) > 1 and len(traces) * layer_bytes(traces[current - 1], window, chosen) <= budget:
        return list(range(1, len(traces) + 1))
    return [current]


def carriers_to_send(sizes: Mapping[int, int], current: int, budget: int = CARRIERS_BUDGET) -> list[int]:
    """The layers (1-based) whose carriers go with the page, in the order they go: the one on view, then the others
    from the nearest (the lower first), as long as their bytes (sizes: each layer's) fit in budget; so
    all-MiniLM-L6-v2's 6 layers of 3.5 MB at 150 tokens all go, SmolLM2's 30 of 1.9 MB the 13 nearest, and a layer
    further away comes when the view moves towards it."""
    order = sorted(sizes, key=lambda layer: (abs(layer - current), layer))
    chosen, total = [], 0
    for layer in order:
        if chosen and total + sizes[layer] > budget:
            break
        chosen.append(layer)
        total += sizes[layer]
    return chosen


def _padded(size: int) -> int:
    return -(-size // ALIGN) * ALIGN


def _stage_label(stage: str, scale: float) -> str:
    """A stage's button: the scores stay "scores (not scaled)" when no scale was chosen (scale 1), as the title says."""
    return "scores (not scaled)" if stage == "scaled" and scale == 1 else control("stage").label_of(stage)


def _scale(stops) -> list:
    """A colour scale as [position, colour] pairs: plotly's named scale, or a palette's even stops."""
    if isinstance(stops, str):
        return [[float(position), colour] for position, colour in get_colorscale(stops)]
    return [[i / (len(stops) - 1), colour] for i, colour in enumerate(stops)]


def _palette(palette) -> dict:
    """A figures.base Palette for the browser: its scales as stops, its roles by name."""
    return {"weights": _scale(palette.sequential), "signed": _scale(palette.diverging), "heads": list(palette.heads),
            **{role: getattr(palette, role) for role in ("background", "text", "muted", "neutral", "pale", "faint",
                                                          "highlight")}}


def _header(first: Trace, tokens: Sequence[str], key_tokens: Sequence[str] | None, *, layer_count: int,
            scale: float, window: tuple[int, int, int, int] | None, contributions: bool) -> dict:
    """What the explorer needs besides the arrays, the same for every layer of an example (first: one layer's
    trace, for the shapes): tokens, sizes, the zoom window, the stages and their titles and notes, the sentences
    the explorer shows (copy.explorer.header_text), the palettes."""
    h, n, m = first.weights.shape
    group = first.q.shape[0] // first.k.shape[0]  # query heads per key/value head
    masked = first.mask is not None
    step, grid_step = overview_step(n, m), pooling.block_step(n, m, pooling.grid_budget(h))
    return {
        "version": VERSION,
        "tokens": list(tokens), "key_tokens": None if key_tokens is None else list(key_tokens),
        "n": n, "m": m, "heads": h, "group_size": group,
        "layer_count": layer_count,
        "step": step, "grid_step": grid_step,
        "window": None if window is None else list(window),
        "masked": masked, "scale": float(scale),
        "stages": [{"key": key, "label": _stage_label(key, scale), "title": CONTRIBUTIONS
                    if key == "contributions" else figures.stage_title(key, group, scale, masked),
                    "note": stage_note(key, scale), "signed": key in SIGNED}
                   for key in (STAGES if contributions else STEP2)],
        "text": header_text(h, layer_count, step, grid_step, window, scale=scale),
        "palettes": {name: _palette(palette) for name, palette in figures.PALETTES.items()},
    }


def _pack(header: dict, arrays: Mapping[str, np.ndarray], known_id: str | None = None) -> bytes:
    """The header (with the arrays' index and an `id`: known_id, else a hash of everything) and the arrays, in the
    layout of the module docstring."""
    index, offset, laid = {}, 0, {}
    for name, a in arrays.items():
        a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
        laid[name] = a
        index[name] = {"dtype": a.dtype.str, "shape": list(a.shape), "offset": offset}
        offset += _padded(a.nbytes)
    body = bytearray(offset)
    for name, a in laid.items():
        start = index[name]["offset"]
        body[start:start + a.nbytes] = a.tobytes()
    header = header | {"arrays": index}
    digest = hashlib.blake2b(json.dumps(header, sort_keys=True).encode(), digest_size=16)
    digest.update(body)
    header["id"] = known_id or digest.hexdigest()
    text = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode()
    start = _padded(len(MAGIC) + 4 + len(text))
    return b"".join([MAGIC, len(text).to_bytes(4, "little"), text, bytes(start - len(MAGIC) - 4 - len(text)), body])


def build_payload(layers: Mapping[int, Trace], tokens: Sequence[str], key_tokens: Sequence[str] | None = None, *,
                  layer_count: int = 1, scale: float = 1.0, window: tuple[int, int, int, int] | None = None,
                  weights: Mapping[int, MHAWeights] | None = None,
                  overviews: Mapping[int, dict[str, np.ndarray]] | None = None) -> bytes:
    """The explorer's bytes for these layers (1-based layer -> its trace, all of one shape) of a model with
    layer_count layers. scale: the factor of the scaled scores (named in a title); window: figures.zoom_window(...);
    weights: each layer's attention weights (MHAWeights), for the contributions stage (without them, step 2 alone);
    overviews: each layer's overview_arrays (of these weights), when they are already computed."""
    arrays = {f"{layer}/{part}": a for layer, trace in sorted(layers.items())
              for part, a in ((overviews or {}).get(layer)
                              or overview_arrays(trace, (weights or {}).get(layer))).items()}
    arrays |= {f"{layer}/{part}": a for layer, trace in sorted(layers.items())
               for part, a in zoom_arrays(trace, window).items()}
    header = _header(next(iter(layers.values())), tokens, key_tokens, layer_count=layer_count, scale=scale,
                     window=window, contributions=bool(weights))
    return _pack(header | {"layers": sorted(layers)}, arrays)


def scaled_is_derived(trace: Trace, scale: float) -> bool:
    """Whether the scaled scores are the raw scores times the scale, both float32, bit for bit (x · 2^-k is, for
    SmolLM2's 1/√64; MiniLM's 1/√32 is not, the engine scales q first): then the browser makes them as
    Math.fround(raw × scale), the same float32, and they need not be sent."""
    raw = trace.raw_scores()                                                        # (h, n, m)
    return (raw.dtype == np.float32 and trace.scores.dtype == np.float32
            and np.array_equal(raw * np.float32(scale), trace.scores))


def build_layer(trace: Trace, layer: int, *, scale: float = 1.0, window: tuple[int, int, int, int] | None = None,
                weights: MHAWeights | None = None, overview: dict[str, np.ndarray] | None = None,
                name: str | None = None) -> bytes:
    """One layer's arrays alone (as build_payload's "<layer>/<part>"), for its own carrier element: a pure function
    of the example and the layer, so a rerun sends the same message. Where every cell is exact and the scaled
    scores are derived bit for bit (scaled_is_derived), they are left out and the header's `derived` names them.
    name: its id, when one is known before the bytes (a hash of what they are a function of), else their hash."""
    h, n, m = trace.weights.shape
    arrays = dict(overview if overview is not None else overview_arrays(trace, weights)) | zoom_arrays(trace, window)
    derived = overview_step(n, m) == 1 and scaled_is_derived(trace, scale)
    if derived:
        del arrays["scaled"]
    return _pack({"version": VERSION, "layer": layer, "scale": float(scale), "derived": ["scaled"] if derived else []},
                 {f"{layer}/{part}": a for part, a in arrays.items()}, name)


def build_frame(first: Trace, tokens: Sequence[str], key_tokens: Sequence[str] | None = None, *,
                carried: Mapping[int, str], scale: float = 1.0,
                window: tuple[int, int, int, int] | None = None, contributions: bool = True) -> bytes:
    """The explorer's bytes when a model's layers do not fit in one payload: build_payload's header without a layer
    (the same whatever the layer on view; first: any layer's trace, for the shapes), and `carried`, each layer's
    carrier id (1-based layer -> the id of its build_layer bytes), so that the browser takes this example's only."""
    header = _header(first, tokens, key_tokens, layer_count=len(carried), scale=scale, window=window,
                     contributions=contributions)
    return _pack(header | {"layers": [], "carried": {str(layer): name for layer, name in sorted(carried.items())}},
                 {})


def read_header(blob: bytes) -> dict:
    """The header of a payload (build_payload, build_layer or build_frame)."""
    if blob[:len(MAGIC)] != MAGIC:
        raise ValueError("not an explorer payload")
    size = int.from_bytes(blob[4:8], "little")
    return json.loads(blob[8:8 + size])


def read_payload(blob: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    """(header, arrays by name): build_payload undone, as the browser reads it."""
    header = read_header(blob)
    start = _padded(8 + int.from_bytes(blob[4:8], "little"))
    arrays = {}
    for name, info in header["arrays"].items():
        dtype, shape = np.dtype(info["dtype"]), tuple(info["shape"])
        arrays[name] = np.frombuffer(blob, dtype, int(np.prod(shape)), start + info["offset"]).reshape(shape)
    return header, arrays
