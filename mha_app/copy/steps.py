"""What the pages say about the four steps."""

from __future__ import annotations

from mha_app.copy.words import count, heads, readable, verb

# One line under each step's code: the names in it that the pages have not introduced.
CODE_NAMES = {
    1: "`x` is X (n × d_model); `x_kv` is what the keys and values are made from: X itself in self-attention, "
       "another sequence of m tokens (Y) in cross-attention. `linear(x, W, b)` computes x @ W.T + b, with W stored as "
       "PyTorch stores it, (out, in); `split_heads` cuts the h·d_k columns into h blocks of d_k, one per head. "
       "`apply_rope` turns each query and key by its position; it runs only when `cfg.rope_theta` is set (RoPE, "
       "as in Llama-style decoders).",
    2: "`q`, `k`, `v` hold every head (head first); `m` is the number of keys. `cfg.group_size` is how many query "
       "heads share one key/value head: 1 in plain multi-head attention, more in grouped-query attention (Ainslie "
       "et al. 2023); `k_i`, `v_i` are the keys and values each query head reads. `mask` is True where a pair is "
       "blocked; `softmax_rows` turns each row into weights that sum to 1.",
    3: "`transpose(1, 0, 2)` puts the tokens first, (n, h, d_k); `reshape(n, h * d_k)` then lays each token's h "
       "head outputs side by side in one row.",
    4: "`linear(concat, w.W_O, w.b_O)` computes concat @ W_O.T + b_O, with W_O stored as PyTorch stores it, "
       "(d_model, h·d_k).",
}


# --- The overview ------------------------------------------------------------------------------------------------

def _kv_sharing(kv_heads: int, group_size: int) -> str:
    """With grouped-query attention, how many key/value heads are made and how many query heads read each."""
    made = (f"{kv_heads} key/value heads are made, each read by {group_size} heads" if kv_heads > 1 else
            f"one key/value head is made, read by all {group_size} heads")
    return f"; keys and values are shared (grouped-query attention): only {made}"


def overview_intro(n_heads: int, d_k: int, kv_heads: int, group_size: int, rope_decoder: bool) -> str:
    """What multi-head attention does, for these sizes (rope_decoder: a decoder's layer with a causal mask and
    RoPE)."""
    projections = "projections of the input" if group_size == 1 else "query projection of the input"
    sharing = _kv_sharing(kv_heads, group_size) if group_size > 1 else ""
    decoder = (" The layer shown is a decoder's: a causal mask lets each token see only itself and the tokens before "
               "it, and RoPE turns every query and key by its position before they are compared (Step 1b)."
               if rope_decoder else "")
    steps = ("Each of the four steps below has its own page, which shows the real numbers of this example."
             f"{decoder}")
    if n_heads == 1:
        return ("Attention lets every token gather information from the other tokens. **Multi-head** attention "
                "does this with several heads, each in a smaller space of its own; here **h = 1**: one head, with "
                f"projections of the input into the full **d_k = d_model / h = {d_k}** dimensions. Its result is "
                "mixed back to d_model by one more matrix, W_O, as with many heads (Vaswani et al. 2017). "
                f"{steps}")
    return ("Attention lets every token gather information from the other tokens. **Multi-head** attention does this "
            f"**h = {n_heads}** times in parallel: each head gets its own {projections} into a smaller space of "
            f"**d_k = d_model / h = {d_k}** dimensions, so it can look for its own kind of relation{sharing}. The "
            "heads' results are then placed side by side and mixed back to d_model by one more matrix, W_O (Vaswani "
            f"et al. 2017). {steps}")


SOURCE_TOKENS = "The source sentence's tokens: each becomes one row of Y (keys and values)."


def tokens_caption(cross: bool, source: str) -> str:
    """The caption of the token table: what each token is a row of, then where X comes from (`source`)."""
    rows = ("The sentence being written, split into tokens; each token is one row of X (the queries)." if cross else
            "The input split into tokens; each token is one row of X.")
    return f"{rows} {source}"


def cost_question(d_model: int, multiply_add: str) -> str:
    """The overview's cost tab before the cost page's question is answered: the question, and where to answer it."""
    return (f"Does splitting d_model = {d_model} into h heads of d_k = d_model / h cost more multiply-adds "
            f"({multiply_add}) than one head of full width, fewer, or the same? Predict it on the cost page: once you "
            "have answered there, this tab shows the counts of this example.")


def cost_answer(group_size: int, multiply_add: str) -> str:
    """The answer, above the cost table (with what grouped-query attention saves where query heads share K/V)."""
    shared = (f" Here grouped-query attention shares each key/value head among {group_size} query heads, so W_K and "
              "W_V, and the work of projecting K and V, are smaller still (Ainslie et al. 2023)."
              if group_size > 1 else "")
    return ("Splitting d_model across the heads keeps the parameters and the multiply-adds of the matrix products "
            f"({multiply_add}) exactly those of one head of full width; what grows with h is the number of attention "
            f"weights, and softmax's exponentials with them.{shared}")


def cost_caption(n_heads: int, d_k: int, d_model: int, grows: str, rope: str = "") -> str:
    """Under the cost table: what h and 1 stand for, then what grows with h (`grows`) and the RoPE note, if any."""
    return (f"h = {n_heads}: {count(n_heads, 'head')} of d_k = {d_k} each; h = 1: one head of d_k = {d_model}. "
            f"{grows}" + (f" {rope}" if rope else ""))


def torch_check(agrees: bool, difference: float) -> str:
    """The overview's badge: whether PyTorch, computing the layer its own way, gets the same output."""
    if agrees:
        return (":material/check_circle: Checked: PyTorch computes this layer its own way and gets the same output, "
                f"up to rounding (largest difference {readable(difference, 3)}).")
    return (f"PyTorch, computing this layer its own way, gets another output: the largest difference is "
            f"{readable(difference, 3)}, more than rounding.")


def how_checked(how: str) -> str:
    """How the check was made: PyTorch's way of computing it (`how`), then the comparison."""
    return f"{how} The two outputs are compared number by number."


# --- Step 1: projection ------------------------------------------------------------------------------------------

def projection_intro(d_model: int, h: int, d_k: int, kv_heads: int, cross: bool, m: int, rope: bool) -> str:
    """What the three projections make, and which block of columns each head owns (kv_heads < h: query heads share
    key/value heads; m: the source sentence's tokens in cross-attention)."""
    inputs = ("X into queries (what a token is looking for), and Y into keys (what it offers to be found by) and "
              "values (what it passes on once found). " if cross else
              "X into queries (what a token is looking for), keys (what it offers to be found by) and values (what it "
              "passes on once found). ")
    if h == 1:
        blocks = (f"Each matrix has h · d_k = 1 · {d_k} = {d_k} columns, all of them the one head's: one view of "
                  "the input.")
    elif kv_heads == h:
        blocks = (f"Each matrix has h · d_k = {h} · {d_k} = {h * d_k} columns, and head *i* owns its own block of "
                  f"{d_k} of them: the same input, {h} different views of it.")
    else:
        blocks = (f"W_Q has h · d_k = {h} · {d_k} = {h * d_k} columns, one block of {d_k} per query head; W_K and W_V "
                  f"have only {kv_heads} · {d_k} = {kv_heads * d_k}, one block per key/value head, each shared by "
                  f"{h // kv_heads} query heads.")
    source = (f" The queries come from X, the sentence being written; the keys and values from Y, the source sentence "
              f"({count(m, 'token')})." if cross else "")
    turn = " Then every query and key is turned by its position (RoPE, Step 1b below)." if rope else ""
    return f"Each token is a row of X with **{d_model}** numbers. Three projection matrices turn {inputs}{blocks}" \
           f"{source}{turn}"


def projection_caption(bias_note: str, bias: bool) -> str:
    """Under the formulas: the biases (`bias_note`), and how PyTorch stores and applies each matrix."""
    return (f"{bias_note} PyTorch stores each matrix transposed, as (out_features, in_features), and computes "
            f"x @ W.T{' + b' if bias else ''}; the figures show W the way the formula uses it.")


INPUT_X_TITLE = "Input X (queries): one row per token"
INPUT_Y_TITLE = "Input Y (keys and values): one row per token"


def projection_code_note(cross: bool, rope_theta: float | None) -> str:
    """Under Step 1's code: what `x_kv` is here, and whether the rotation ran."""
    kv = ("Here `x_kv` is Y, the source sentence (cross-attention). " if cross else
          "Here `x_kv` is X itself (self-attention). ")
    turn = (f"`cfg.rope_theta` = {rope_theta:g}, so the rotation ran." if rope_theta else
            "`cfg.rope_theta` is None: no rotation, q and k are the projections themselves.")
    return kv + turn


# --- Step 3: concatenation ---------------------------------------------------------------------------------------

def concat_intro(h: int, d_v: int) -> str:
    """What concatenation does with the h head outputs of width d_v."""
    each = f"Each of the {h} heads" if h > 1 else "The one head"
    return (f"{each} produced one output row per token, of d_v = {d_v} numbers (d_v, the width of the values, equals "
            "d_k here). Concatenation places the heads' outputs side by side, token by token. "
            "Nothing is added or mixed: every column still belongs to exactly one head.")


def concat_heads_off(off) -> str:
    """The switched-off heads' columns of the concatenation, and why they are zero ("" when none is off)."""
    if not off:
        return ""
    n = len(off)
    return (f"Switched off: {heads(off)}. Each head's output is multiplied by its head-mask factor (0 for "
            f"{verb(n, 'that head', 'those')}, 1 for the others) as it goes in, so {verb(n, 'its', 'their')} columns "
            "of the concatenation are zero.")


CONCAT_COLOURS = ("The head's number above each block, in that head's colour, and the block's frame say which head; a "
                  "cell's colour is its value.")


def concat_check(same: bool, heads_off: bool) -> str:
    """Whether each head's block of columns equals that head's output (times its head-mask factor, heads_off)."""
    factor = " times its head-mask factor" if heads_off else ""
    return (f"Check: columns (i−1)·d_v+1 … i·d_v of the concatenation equal head i{factor} exactly: "
            f"**{same}**.")


# --- Step 4: output ----------------------------------------------------------------------------------------------

def output_intro(d_v: int, bias: bool) -> str:
    """How W_O splits into one block per head, and what that makes of the output."""
    return ("The last matrix, **W_O**, is where the heads finally meet. Because the concatenation is split into head "
            f"blocks of d_v = {d_v} columns, W_O splits into blocks of {d_v} rows, one per head: the output is the sum "
            f"of each head's output times its own block of W_O{', plus the bias b_O' if bias else ''}. Without W_O the "
            "heads would only sit next to each other; with it, every output number can draw on all heads.")


def contributions_check(gap: float, bias: bool) -> str:
    """How far the sum of the heads' contributions (plus b_O) is from the output."""
    return (f"Check: the sum of the head contributions{' plus b_O' if bias else ''} differs from the output by at most "
            f"{readable(gap)} (rounding only).")
