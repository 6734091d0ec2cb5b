"""What the page 'One attention weight, by hand' says: the four small steps, the cell picked, and the check against
the engine's own numbers."""

from __future__ import annotations

from mha_app.copy.markup import quote
from mha_app.copy.words import count
from mha_core.teaching.worked import WorkedCell, fmt

MAX_SUBTRACTED = ("Each score has the row's largest score subtracted before e^: that divides every e^ of the row by "
                  "the same number, so the weights do not change, and no e^ can grow too large for the computer.")
WHOLE_ROW = "Softmax needs every score of the row: the attention weight of one key depends on all the others."


def intro(tiny: bool) -> str:
    """The four steps behind every attention weight, and where numbers small enough to check by hand are (tiny: the
    example on view is the tiny one)."""
    return ("Every number in the attention matrix comes from four small steps: multiply the query's and the key's "
            "numbers pair by pair and add them up (the dot product), scale the sum, take the exponential of every "
            "score in the row, and divide by their total (softmax). Pick a cell and follow it. "
            + ("In the tiny example every number is small enough to check with pencil and paper." if tiny else
               "For numbers small enough to check with pencil and paper, choose random weights, then the *tiny* "
               "input, in the sidebar: the tiny example brings its own small hand-set weights in place of the "
               "random ones."))


def shared_kv(head: int, kv_head: int, group_size: int) -> str:
    """Which key/value head query head `head` reads, and how many other query heads read it (1-based heads)."""
    return (f"Query head {head} reads K/V head {kv_head}, which it shares with "
            f"{count(group_size - 1, 'other query head')}.")


def rope_caption(query: int, key: int) -> str:
    """With RoPE: the q and k of the cell are the rotated ones, by the positions `query` and `key` (1-based)."""
    return (f"q and k are the rotated ones (RoPE, Step 1b): the query turned by the angle of position {query}, the key "
            f"by that of position {key}.")


def cell_header(query: int, query_token: str, key: int, key_token: str) -> str:
    """The worked cell: its query and key, numbered from 1, with their tokens quoted."""
    return f"Query {query} {quote(query_token)} and key {key} {quote(key_token)}"


def engine_check(cell: WorkedCell, same: bool) -> str:
    """The engine's own score and weight beside the ones worked by hand, and whether they agree to the digits
    shown."""
    sd, wd = cell.score_decimals, cell.weight_decimals
    return (f"The engine's own cell: score {fmt(cell.engine_score, sd)}, weight {fmt(cell.engine_weight, wd)}; by "
            f"hand: {fmt(cell.score, sd)} and {fmt(cell.weight, wd)}. "
            + ("The same to the last digit shown." if same else "They differ."))


def fewer_decimals(decimals: int) -> str:
    """Why a number is shown to fewer than `decimals` decimals."""
    return (f"Shown to fewer than {decimals} decimals where the engine's float32 arithmetic (numbers kept to about 7 "
            f"significant digits) rounds the {decimals}th decimal the other way.")
