"""What the pages say about the four steps."""

from __future__ import annotations

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
