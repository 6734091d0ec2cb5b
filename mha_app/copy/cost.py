"""The overview's cost table: parameters and multiply-adds of each step for the current sizes, h heads of width
d_k next to one head of width d_model, counted by mha_core.cost."""

from __future__ import annotations

from mha_core import cost
from mha_core.teaching.notation import kv_index, score_product

# (the key of cost.attention_flops, the words in the table, the learned arrays of that step); {kv} is the keys'
# and values' input: X in self-attention, Y in cross-attention; {scores} and {j} the product and K/V head's index
# of the notation (K_j where query heads share key/value heads).
STEPS = (
    ("project_q", "Step 1: queries Q = X W_Q", ("W_Q", "b_Q")),
    ("project_k", "Step 1: keys K = {kv} W_K", ("W_K", "b_K")),
    ("project_v", "Step 1: values V = {kv} W_V", ("W_V", "b_V")),
    ("scores", "Step 2: scores {scores}", ()),
    ("weighted_sum", "Step 2: weights × V_{j}", ()),
    (None, "Step 3: concatenate (no arithmetic)", ()),
    ("project_out", "Step 4: output = Concat W_O", ("W_O", "b_O")),
)


# What a multiply-add is, said where the pages first count them (the overview's cost tab, the cost page).
MULTIPLY_ADD = "a multiply-add is one multiplication and one addition, the step a matrix product repeats"


def _words(words: str, cross: bool, group_size: int) -> str:
    return words.format(kv="Y" if cross else "X", scores=score_product(group_size), j=kv_index(group_size))


def step_names(cross: bool = False, group_size: int = 1) -> dict[str, str]:
    """Each counted step's words, by its key in cost.attention_flops, with the keys' and values' input filled in and
    the notation of group_size query heads per key/value head."""
    return {key: _words(words, cross, group_size) for key, words, _ in STEPS if key}


def _size(shape: tuple) -> int:
    size = 1
    for dim in shape:
        size *= dim
    return size


def cost_rows(n: int, m: int, d_model: int, n_heads: int, bias: bool,
              n_kv_heads: int | None = None, cross: bool = False) -> list[dict[str, str]]:
    """One row per step and a total: parameters and multiply-adds with h heads (n_kv_heads of them for keys and
    values, with grouped-query attention) and with one head of width d_model (numbers written with thousands
    separators; a step without learned arrays has 0 parameters)."""
    shared = f", h_kv = {n_kv_heads}" if n_kv_heads not in (None, n_heads) else ""
    names = {"params_h": f"parameters, h = {n_heads}{shared}", "params_1": "parameters, h = 1",
             "flops_h": f"multiply-adds, h = {n_heads}{shared}", "flops_1": "multiply-adds, h = 1"}
    configs = {"h": (n_heads, n_kv_heads), "1": (1, None)}
    shapes = {key: cost.param_shapes(d_model, heads, kv, bias=bias) for key, (heads, kv) in configs.items()}
    flops = {key: cost.attention_flops(n, m, d_model, heads, kv) for key, (heads, kv) in configs.items()}
    rows, total = [], dict.fromkeys(names, 0)
    for flop_key, words, arrays in STEPS:
        row = {}
        for key in configs:
            row[f"params_{key}"] = sum(_size(shapes[key][name]) for name in arrays if name in shapes[key])
            row[f"flops_{key}"] = flops[key][flop_key] if flop_key else 0
        total = {name: total[name] + row[name] for name in names}
        rows.append({"step": _words(words, cross, n_heads // (n_kv_heads or n_heads)), **row})
    rows.append({"step": "total", **total})
    return [{"step": row["step"], **{names[k]: f"{row[k]:,}" for k in names}} for row in rows]


def what_grows(n: int, m: int, n_heads: int) -> str:
    """The one cost that grows with h, in words and numbers for the current sizes."""
    many, one = cost.score_values(n, m, n_heads), cost.score_values(n, m, 1)
    return (f"What does grow with h: the attention weights. {n_heads} heads make {n_heads} matrices of attention "
            f"weights of {n} × {m}, {many:,} numbers in all, where one head makes one matrix of {one:,}; softmax "
            "takes an exponential of every one of them, and a model that returns its attention weights keeps them "
            "in memory.")


def rope_note(n: int, m: int, d_model: int, n_heads: int, n_kv_heads: int | None, rope: bool) -> str:
    """For a layer with RoPE, the multiplications of the rotation, which the table leaves out ("" without RoPE)."""
    if not rope:
        return ""
    count = cost.rope_multiplications(n, m, d_model, n_heads, n_kv_heads)
    return (f"Not counted above: RoPE turns every number of Q and K by its position, 2 multiplications each "
            f"({count:,} here), small next to the projections.")
