"""What the attention explorer says: the sentences its payload's header carries (the browser only lays them out),
the zoom window's note, and the saved page's lines.

A sentence that holds what only the browser knows (the head or query on view, a number under the pointer) goes as a
template with named placeholders, "head {head} of 12", which shared.js's fill(template, values) fills; one that
depends on a count goes in both forms, {"one": ..., "many": ...} (forms), and pick(forms, n) takes one."""

from __future__ import annotations

from collections.abc import Sequence

from mha_app.copy.words import plural

# --- In the payload's header (payload._header): the same for every layer of an example --------------------------

NO_SHARES = "no contribution shares"
ALL_BLOCKED = "every key is blocked."


def head_off(head: int) -> str:
    """Why a switched-off head (1-based) shows no contribution shares: a tooltip line, and the note under its bars."""
    return f"head {head} is switched off: Step 3 multiplies its output by 0, so none of its keys reaches the output"


def loading(layer: int) -> str:
    """What the canvas says while a layer's numbers are on their way."""
    return f"Loading layer {layer}…"


def stage_note(stage: str, scale: float) -> str:
    """The line under a head's matrix at a stage (scale 1: the scores are not scaled)."""
    if stage == "raw":
        sub = "not scaled here; before the mask" if scale == 1 else "before the scale and the mask"
    elif stage == "mask":
        sub = "hatched = blocked (M = −∞)"
    else:
        sub = "hatched = blocked by the mask"
    return f"rows: queries · columns: keys · {sub}"


def forms(one: str, many: str) -> dict[str, str]:
    """A sentence for one thing and for several, as the browser's pick(forms, n) takes them."""
    return {"one": one, "many": many}


def loading_label(layer: int) -> str:
    """The canvas's name for a screen reader while a layer's numbers are on their way."""
    return f"Attention explorer: {loading(layer)}"


def status(layer_count: int, heads: int) -> str:
    """The line under the explorer: the view (a template: {layer}, {head}, {stage}, {query}, {token}, and {set},
    in_set's words or nothing)."""
    layer = "Layer {layer} · " if layer_count > 1 else ""
    return layer + f"head {{head}} of {heads} · {{stage}} · query {{query}} {{token}}{{set}}"


def in_set(queries: int) -> str:
    """After the status line, when a set of queries is chosen (a template: {count})."""
    return f" · {{count}} {plural(queries, 'query', 'queries')} in the set"


def who(queries: int) -> str:
    """The query or queries the canvas's description is about (a template: {token} and {query}, or {queries})."""
    return "query '{token}' ({query})" if queries == 1 else "queries {queries} (their mean)"


def strongest(keys: int) -> str:
    """The description's keys with the most weight, one or two (a template: {key} and {weight}, then {next} and
    {next_weight})."""
    return "most weight on {key} ({weight})" + (", then {next} ({next_weight})" if keys > 1 else "") + "."


DESCRIBE = "Attention explorer, layer {layer}, head {head}, {who}: {weights}"
"""The canvas in words, for a screen reader (a template: {who}, and {weights}: strongest's words or ALL_BLOCKED)."""
KEY_NAMED = "'{token}' ({key})"
KEYS = "keys {keys}"  # a block of keys, "keys 5–8"


def bar_title(what: str | None, queries: int, summed: bool = False) -> str:
    """The title over the query's bars (a template: {head}, {names}, and {count} for several queries): what its bars
    show ("weights", "contribution shares", or None: a switched-off head, no shares); summed: one query's exact
    values, with their sum ({total})."""
    named = "Head {head}, query {names}" if queries == 1 else "Head {head}, {count} queries ({names})"
    if what is None:
        return f"{named}: {NO_SHARES}"
    if queries > 1:
        return f"{named}: their {what} averaged (left axis) and summed (right axis)"
    return f"{named}: its {what}" + (" sum to {total}" if summed else "")


def value_names(scale: float) -> dict[str, str]:
    """What a tooltip calls a cell's number, by stage (scale 1: the scores are not scaled), and a bar's weight and a
    share's weight α."""
    return {"raw": "raw score", "scaled": "score (not scaled)" if scale == 1 else "scaled score", "mask": "mask",
            "weights": "softmax weight", "contributions": "contribution share", "weight": "weight",
            "alpha": "weight α"}


TIP = {  # a tooltip's lines (templates); {name}: a value_names name
    "pair": "query {query} {token} → key {key} {key_token}",
    "key": "key {key}",
    "keys": KEYS,
    "block": "queries {queries} × keys {keys}",
    "block_masked": "{percent}% of the {rows}×{cols} block blocked",
    "block_blocked": "the whole {rows}×{cols} block is blocked by the mask",
    "block_mean": "head {head} · mean of the {rows}×{cols} block: {name} = {value}",
    "head_value": "head {head} · {name}",
    "before_mask": "{name} before the mask",
    "row_mean": "mean of a block row: {name} = {mean}",
    "sum": "sum = {sum}",
    "weight": "weight = {weight}",
    "weight_mean": "weight: mean = {mean}",
    "size": "‖v_s W^O_i‖ = {size}",
}


def mean_over(queries: int) -> str:
    """A bar's tooltip line for a set of queries (a template: {name}, {count}, {mean})."""
    return f"{{name}}: mean over {{count}} {plural(queries, 'query', 'queries')} = {{mean}}"


def matrix_title(step: int, window: Sequence[int] | None) -> dict[str, str]:
    """The title over a head's matrix (a template: {head} and {title}, the stage's title), whole (its block size
    named when pooled) and in the zoom window."""
    return {"whole": "Head {head}: {title}" + (f"  {pooled(step)}" if step > 1 else ""),
            "zoom": f"Head {{head}}: {{title}}: {zoom_title(window)}" if window else ""}


def pooled(step: int) -> str:
    """After a title, when each cell is the mean of a step × step block."""
    return f"(means of {step}×{step} blocks)"


def grid_title(heads: int, shares: bool, grid_step: int) -> str:
    """The title over every head's small matrix: their weights, or their contribution shares."""
    return (f"All {heads} heads: {'contribution shares' if shares else 'softmax weights'}"
            + (f" {pooled(grid_step)}" if grid_step > 1 else ""))


def zoom_title(window: Sequence[int]) -> str:
    """After the zoom window's matrix title: the rows r0:r1 and columns c0:c1 it shows."""
    r0, r1, c0, c1 = window
    return f"queries {r0 + 1}–{r1} × keys {c0 + 1}–{c1}, every cell exact"


def bar_zoom(window: Sequence[int]) -> str:
    """Under the query's bars, when they are the zoom window's exact cells."""
    return f"keys {window[2] + 1}–{window[3]} (the zoom window)"


def bar_pooled(step: int, zoom: bool) -> str:
    """Under the query's bars, when they are block means (zoom: a zoom window exists, which could give the exact
    weights)."""
    return f"means of {step}×{step} blocks" + ("; move the zoom window over the query for its exact weights" if zoom
                                               else "")


def shares_note(queries: int) -> str:
    """Under the contribution shares' bars of one query, or of several (their mean weight outlined)."""
    return ("bars: the share of what the query receives that each key adds · outlines: "
            + ("its weight" if queries == 1 else "the mean weight"))


BLOCKED = {  # a blocked cell's tooltip, by stage
    "weights": "blocked by the mask: weight 0",
    "contributions": "blocked by the mask: weight 0, so it adds nothing",
    "scaled": "blocked by the mask (−∞ after it)",
}
MASK_CELL = {"blocked": "blocked: M = −∞", "open": "open: M = 0"}


def header_text(heads: int, layer_count: int, step: int, grid_step: int, window: Sequence[int] | None, *,
                scale: float) -> dict:
    """Every sentence the explorer shows for an example, by name (the header's `text`; each stage's note, stage_note,
    goes with its stage): plain strings, templates and forms (see the module docstring), and lists by head or by
    layer (0-based) where a sentence names one."""
    shown = {"weights": "weights", "contributions": "contribution shares"}
    return {
        "head_off": [head_off(i) for i in range(1, heads + 1)],
        "loading": [loading(layer) for layer in range(1, layer_count + 1)],
        "loading_label": [loading_label(layer) for layer in range(1, layer_count + 1)],
        "status": status(layer_count, heads), "in_set": forms(in_set(1), in_set(2)),
        "describe": {"sentence": DESCRIBE, "who": forms(who(1), who(2)), "key": KEY_NAMED, "keys": KEYS,
                     "strongest": forms(strongest(1), strongest(2)), "all_blocked": ALL_BLOCKED},
        "grid": {"weights": grid_title(heads, False, grid_step), "contributions": grid_title(heads, True, grid_step)},
        "matrix": matrix_title(step, window),
        "bar": {**{stage: forms(bar_title(what, 1), bar_title(what, 2)) for stage, what in shown.items()},
                "off": forms(bar_title(None, 1), bar_title(None, 2)),
                "summed": {stage: bar_title(what, 1, summed=True) for stage, what in shown.items()}},
        "bar_zoom": bar_zoom(window) if window else "",
        "bar_pooled": bar_pooled(step, window is not None) if step > 1 else "",
        "shares": forms(shares_note(1), shares_note(2)),
        "names": value_names(scale), "tip": TIP, "mean_over": forms(mean_over(1), mean_over(2)),
        "blocked": BLOCKED, "mask": MASK_CELL, "lines": lines_text(scale),
    }


LINES_VIEWS = {"heatmap": "Heatmap", "lines": "Lines"}  # the explorer's two drawings of step 2, by their key


def lines_title(count: int) -> str:
    """The lines view's title for {heads} (one head or several): what a line joins."""
    return f"{'Head' if count == 1 else 'Heads'} {{heads}}: each query (left) joined to each key (right)"


def lines_note(stage: str, scale: float) -> str:
    """The line under the lines view at a stage: what a line's opacity is (scale 1: the scores are not scaled)."""
    if stage == "mask":
        return "a line for each open pair; a blocked pair has none"
    if stage in ("raw", "scaled"):
        what = value_names(scale)[stage]
        blocked = "before the mask" if stage == "raw" else "blocked pairs: no line"
        return f"opacity = |{what}| ÷ the head's largest |{what}| · the sign is on the heatmap · {blocked}"
    return f"opacity = the {value_names(scale)[stage]} · blocked pairs: no line"


LINES_HINT = "hover a token for its lines alone · click a head's square for that head, shift-click to add heads"


def lines_text(scale: float) -> dict:
    """The lines view's words: the toggle's labels, titles, each stage's note, the hint and a token's tooltip."""
    return {"views": LINES_VIEWS, "title": forms(lines_title(1), lines_title(2)),
            "note": {stage: lines_note(stage, scale) for stage in ("raw", "scaled", "mask", "weights",
                                                                  "contributions")},
            "hint": LINES_HINT, "query": "query {query} {token}: its lines alone",
            "key": "key {key} {token}: its lines alone", "view_label": "Drawing"}


# --- Around the explorer -----------------------------------------------------------------------------------------


def zoom_intro(zoom: int) -> str:
    """Above the zoom window's controls: how many cells it shows (zoom × zoom at most)."""
    return (f"**Zoom window**: up to {zoom} × {zoom} cells, each the exact number the engine computed and every "
            "token named, outlined on the head's matrix; hover over a cell for its query and key tokens.")


def spans(layers: Sequence[int]) -> str:
    """[1, 2, 3, 7] -> "1 to 3 and 7": runs of consecutive layers."""
    runs: list[list[int]] = []
    for layer in sorted(layers):
        if runs and layer == runs[-1][-1] + 1:
            runs[-1].append(layer)
        else:
            runs.append([layer])
    parts = [f"{run[0]} to {run[-1]}" if len(run) > 2 else ", ".join(map(str, run)) for run in runs]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def saved_choices(count: int, held: Sequence[int]) -> str:
    """The saved page's line on what can be chosen, and which of a model's `count` layers it holds (`held`)."""
    choose = "a head, a query, a stage or a layer" if len(held) > 1 else "a head, a query or a stage"
    layers = ("" if count == 1 else f" This file holds all {count} layers." if len(held) == count else
              f" This file holds {plural(len(held), 'layer')} {spans(held)} of {count}; the app has them all.")
    return f"Step 2 of every head: choose {choose}.{layers}"


SAVED_FROM = "Saved from the MHA visualiser: this page opens in any browser, with no server and no internet."
