"""What the pages say about the cost of heads: the cost table (parameters and multiply-adds of each step for the
current sizes, h heads of width d_k next to one head of width d_model, counted by mha_core.cost), the cost page's
words on what grows with h, the clock, and the K/V cache of real models."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mha_app.copy.words import count
from mha_core import cost
from mha_core.teaching.notation import kv_index, score_product
from mha_core.teaching.published import kv_variants

if TYPE_CHECKING:
    from mha_core.teaching.published import ModelShape

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


PAPER = ("The paper that introduced multi-head attention says: *“Due to the reduced dimension of each head, the total "
         "computational cost is similar to that of single-head attention with full dimensionality”* (Vaswani et al. "
         "2017, §3.2.2). The counts below are this example's, step by step.")
SINGLE_HEAD = "This example has a single head: choose more heads in the sidebar to compare."
MEASURE = "Measure one head against h heads"
MEASURE_HELP = "Takes a few seconds at most: each is run several times."
REAL_MODELS = ("The same counting for models with published sizes, and for the trained models of this app. One "
               "attention block has four matrices, W_Q, W_K, W_V and W_O; their size is set by d_model and by how many "
               "K/V heads the model keeps (grouped-query attention, GQA, shares each K/V head among several query "
               "heads; multi-query attention, MQA, keeps one).")
BLOCK_PARAMETERS_HELP = ("Parameters of one attention block: W_Q, W_K, W_V and W_O, with their biases if the model has "
                         "them")
KV_CACHE = ("To write its next token, a decoder keeps the key and value of every earlier token, in every layer and "
            "every K/V head: the K/V cache. At 16 bits (2 bytes) per number it takes **2 · layers · h_kv · d_k · 2 "
            "bytes per token**, times the tokens of every sequence in the batch (sizes below in MiB, 2²⁰ bytes, and "
            "GiB, 2³⁰ bytes). GQA and MQA (Ainslie et al. 2023; Shazeer 2019) exist to shrink it.")
CITATIONS = ("Ainslie et al. 2023, GQA: Training Generalized Multi-Query Transformer Models from Multi-Head "
             "Checkpoints. Shazeer 2019, Fast Transformer Decoding: One Write-Head is All You Need.")
PRACTICE_LINK = "Practice: work these numbers out yourself →"


def one_head(d_model: int) -> str:
    """The name of one head of full width, in the cost page's tables, metrics and chart."""
    return f"1 head of d_model = {d_model}"


def many_heads(n_heads: int, d_k: int) -> str:
    """The name of the example's h heads of width d_k, beside one_head."""
    return f"{count(n_heads, 'head')} of d_k = {d_k}"


def intro(n: int, m: int, d_model: int, n_heads: int, d_k: int) -> str:
    """The cost page's question, with this example's shapes."""
    return (f"Does splitting d_model into h heads make attention dearer? Predict, then check with this example's own "
            f"shapes: {many_heads(n_heads, d_k)} against one head of d_model = {d_model}, for n = {n} queries and "
            f"m = {m} keys, counted in multiply-adds ({MULTIPLY_ADD}).")


def shared_kv(n_heads: int, n_kv_heads: int) -> str:
    """Under the cost table, where query heads share key/value heads."""
    return (f"This example's {n_heads} query heads share {count(n_kv_heads, 'K/V head')} (grouped-query attention), so "
            "its K and V projections are smaller than one wide head's.")


def kept_table(n: int, m: int, d_model: int, n_heads: int, d_k: int, itemsize: int) -> dict[str, list[str]]:
    """The attention weights kept by one head and by h heads, as numbers and as memory at `itemsize` bytes each, by
    column."""
    one, many = cost.score_values(n, m, 1), cost.score_values(n, m, n_heads)
    return {"what is kept": ["attention weights (n × m each)", f"their memory at {8 * itemsize} bits"],
            one_head(d_model): [f"{one:,}", cost.human_bytes(one * itemsize)],
            many_heads(n_heads, d_k): [f"{many:,}", cost.human_bytes(many * itemsize)]}


def parameters_caption(n_heads: int, n_kv_heads: int, bias: bool, params: int) -> str:
    """That the parameters do not grow with h (the example's own `params` numbers), and that more heads cost
    capacity."""
    start = ("The parameters do not grow: " if n_kv_heads == n_heads else
             f"The parameters do not grow; they even shrink here, because {n_heads} query heads share "
             f"{count(n_kv_heads, 'K/V head')}: ")
    return (start + f"the example's own W_Q, W_K, W_V and W_O{' and biases' if bias else ''} hold {params:,} numbers, "
            f"the parameters' total for h = {n_heads} in the table above. What more heads cost in compute is the "
            "memory and the exponentials of the attention weights. They also cost capacity: with d_model fixed, each "
            "head is narrower (d_k = d_model / h), so each compares tokens on fewer dimensions. In Vaswani et al. "
            "(2017, Table 3, rows A) one head scored 0.9 BLEU below the best setting (BLEU: a score of how closely a "
            "machine translation matches human ones), and quality also fell with too many heads (h = 32, d_k = 16): "
            "more heads is not always better.")


def measured_intro(d_model: int, n_heads: int, d_k: int) -> str:
    """What the clock measures: the engine on this input, with one head and with h."""
    return ("Counting is one thing; the clock is another. This runs the engine on this example's input, once with one "
            f"head of {d_model} and once with {count(n_heads, 'head')} of {d_k}, with random weights of those shapes "
            "(time does not depend on the values), and reports the median of several runs.")


def ratio_label(n_heads: int) -> str:
    """The metric of h heads' time over one head's."""
    return f"{count(n_heads, 'head')} ÷ 1 head"


def timing_caption(runs: int, device: str, backend: str, n_heads: int) -> str:
    """How the times were taken, and why equal multiply-adds need not take equal time."""
    return (f"Median of {runs} runs each on {device}, {backend}. Equal multiply-adds need not take equal time: "
            f"{n_heads} smaller products, {n_heads} matrices of attention weights to write and read, and each call's "
            "fixed work all count, and how much depends on the machine and the sizes.")


def total_column(seq_len: int, batch: int) -> str:
    """The K/V cache table's column for `batch` sequences of seq_len tokens."""
    return f"at {seq_len:,} tokens × {batch}"


def cache_caption(shapes: tuple[ModelShape, ...]) -> str:
    """Under the K/V cache table: the encoders' rows, how a GQA variant is chosen, and what each context means."""
    encoders = ", ".join(p.name for p in shapes if not p.decoder)
    grouped = ", ".join(f"{p.name}: h = {p.n_heads} → {kv_variants(p)['GQA']}" for p in shapes
                        if p.n_kv_heads == p.n_heads and kv_variants(p)["GQA"])
    return (f"Encoders ({encoders}) read the whole input at once and keep no cache: their rows show what a decoder of "
            "the same shape would keep. GQA, for a model that does not group its heads, takes as many K/V heads as "
            "possible up to 8, as long as they divide h and are fewer than h: 8, as in Llama 2 70B's GQA-8, when h "
            f"is a multiple of 8 above 8; fewer otherwise ({grouped}). Context: the longest input a model's "
            f"positions allow, in tokens"
            + "".join(f"; {p.name}: {p.context_words}, because {p.no_context}" for p in shapes if p.no_context)
            + "".join(f"; {p.name}: {p.context_note}" for p in shapes if p.context_note)
            + ".")


def formula_intro(name: str, n_layers: int, d_k: int) -> str:
    """Above one model's K/V cache in the formula."""
    return (f"**{name}**: {n_layers} layers, d_k = {d_k}, K/V cache = 2 · layers · h_kv · d_k · tokens · batch · 2 "
            "bytes:")


def no_gqa(kind: str, n_heads: int) -> str:
    """Where h cannot be grouped, in place of the kind's formula."""
    return f"{kind}: h = {n_heads} has no divisor between 1 and h, so there is no GQA in between."


def sources(shapes: tuple[ModelShape, ...]) -> str:
    """The models' sources, numbered as in the table of real models."""
    return "\n".join(f"{i + 1}. **{p.name}**: {p.source}" for i, p in enumerate(shapes))
