"""What the attention explorer says: the sentences its payload's header carries (the browser only lays them out),
the zoom window's note, and the saved page's lines."""

from __future__ import annotations

from collections.abc import Sequence

from mha_app.copy.words import plural

# --- In the payload's header (payload._header): the same for every layer of an example --------------------------


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


NO_SHARES = "no contribution shares"
ALL_BLOCKED = "every key is blocked."
BLOCKED = {  # a blocked cell's tooltip, by stage
    "weights": "blocked by the mask: weight 0",
    "contributions": "blocked by the mask: weight 0, so it adds nothing",
    "scaled": "blocked by the mask (−∞ after it)",
}
MASK_CELL = {"blocked": "blocked: M = −∞", "open": "open: M = 0"}


def header_text(heads: int, layer_count: int, step: int, grid_step: int, window: Sequence[int] | None) -> dict:
    """Every sentence the explorer shows for an example, by name (the header's `text`; each stage's note, stage_note,
    goes with its stage): plain strings, and lists by head or by layer (0-based) where a sentence names one."""
    return {
        "head_off": [head_off(i) for i in range(1, heads + 1)],
        "loading": [loading(layer) for layer in range(1, layer_count + 1)],
        "pooled": pooled(step) if step > 1 else "",
        "grid": {"weights": grid_title(heads, False, grid_step), "contributions": grid_title(heads, True, grid_step)},
        "zoom": zoom_title(window) if window else "",
        "bar_zoom": bar_zoom(window) if window else "",
        "bar_pooled": bar_pooled(step, window is not None) if step > 1 else "",
        "shares_one": shares_note(1), "shares_many": shares_note(2),
        "no_shares": NO_SHARES, "all_blocked": ALL_BLOCKED, "blocked": BLOCKED, "mask": MASK_CELL,
    }


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
