"""The cost of heads: h heads of d_k = d_model / h cost what one head of d_model costs; what grows is memory."""

import streamlit as st

from mha_app.copy.cost import MULTIPLY_ADD, cost_rows, rope_note, what_grows
from mha_app.run.view import view
from mha_app.sections.cost import plot_step_costs, step_costs
from mha_app.ui.charts import plot
from mha_app.ui.pickers import setting_widget
from mha_app.ui.questions import predict
from mha_core import cost
from mha_core.analysis.timing import time_heads
from mha_core.figures.lesson import kv_cache_figure, weight_shapes_figure
from mha_core.teaching.published import cache_length_note, kv_cache_table, kv_variants, preset, presets

settings, ex = view()
s, one, many, _ = step_costs(ex)
n, m, d, h, kv, d_k = s["n"], s["m"], s["d_model"], s["n_heads"], s["n_kv_heads"], s["d_k"]
bias = ex.weights.b_Q is not None

st.title("The cost of heads")
st.markdown(f"Does splitting d_model into h heads make attention dearer? Predict, then check with this example's own "
            f"shapes: {h} head{'s' if h > 1 else ''} of d_k = {d_k} against one head of d_model = {d}, for n = {n} "
            f"queries and m = {m} keys, counted in multiply-adds ({MULTIPLY_ADD}).")
timing_key = (settings.spec, ex.layer, h)
one_name, many_name = f"1 head of d_model = {d}", f"{h} head{'s' if h > 1 else ''} of d_k = {d_k}"


def counts_section() -> None:
    """This example's multiply-adds, step by step, for h heads and for one."""
    st.markdown(
        "The paper that introduced multi-head attention says: *“Due to the reduced dimension of each head, the total "
        "computational cost is similar to that of single-head attention with full dimensionality”* (Vaswani et al. "
        "2017, §3.2.2). The counts below are this example's, step by step.")
    plot_step_costs(ex)

    st.dataframe(cost_rows(n, m, d, h, bias, kv, ex.key_tokens is not None), hide_index=True, width="stretch")
    st.latex(r"\text{scores: } h \cdot n \cdot m \cdot d_k = %d \cdot %d \cdot %d \cdot %d = %s"
             r" = 1 \cdot %d \cdot %d \cdot %d" % (h, n, m, d_k, cost.latex_count(many["scores"]), n, m, d))
    if kv < h:
        st.caption(f"This example's {h} query heads share {kv} K/V heads (grouped-query attention), so its K and V "
                   "projections are smaller than one wide head's.")
    if ex.cfg.rope_theta is not None:
        st.caption(rope_note(n, m, d, h, kv, rope=True))
    with st.expander("Count it yourself (mha_core.cost)"):
        st.code(f"import mha_core as mc\n\n"
                f"mc.cost.attention_flops(n={n}, m={m}, d_model={d}, n_heads={h}, n_kv_heads={kv})  # per step\n"
                f"mc.cost.attention_flops(n={n}, m={m}, d_model={d}, n_heads=1)\n"
                f"mc.cost.attention_params(d_model={d}, n_heads={h}, n_kv_heads={kv}, bias={bias})\n"
                f"mc.cost.kv_cache_bytes(n_layers=80, n_kv_heads=8, d_k=128, seq_len=4096)  # Llama 2 70B, 16 bits",
                language="python")


def _measure() -> None:
    st.session_state.head_timing = (timing_key, time_heads(ex.trace.x, h, kv, backend=settings.spec.backend,
                                                           causal=ex.cfg.causal))


def what_grows_section() -> None:
    """What does grow with h (it tells the answer, so it waits for it)."""
    st.header("What grows with h: the attention weights kept")
    st.markdown(what_grows(n, m, h))
    held_one, held_many = cost.score_values(n, m, 1), cost.score_values(n, m, h)
    size = ex.trace.weights.dtype.itemsize
    st.dataframe({
        "what is kept": ["attention weights (n × m each)", f"their memory at {8 * size} bits"],
        one_name: [f"{held_one:,}", cost.human_bytes(held_one * size)],
        many_name: [f"{held_many:,}", cost.human_bytes(held_many * size)],
    }, hide_index=True)
    real = sum(a.size for a in ex.weights.arrays().values())
    st.caption(("The parameters do not grow: " if kv == h else
                f"The parameters do not grow; they even shrink here, because {h} query heads share {kv} K/V heads: ")
               + f"the example's own W_Q, W_K, W_V and W_O{' and biases' if bias else ''} hold {real:,} numbers, the "
               f"parameters' total for h = {h} in the table above. What more heads cost in compute is the memory and "
               "the exponentials of the attention weights. They also cost capacity: with d_model fixed, each head is "
               "narrower (d_k = d_model / h), so each compares tokens on fewer dimensions. In Vaswani et al. (2017, "
               "Table 3, rows A) one head scored 0.9 BLEU below the best setting (BLEU: a score of how closely a "
               "machine translation matches human ones), and quality also fell with too many heads (h = 32, "
               "d_k = 16): more heads is not always better.")


def measured_section() -> None:
    """One head against h heads on the clock (a hint at the answer too, so it waits for it)."""
    st.header("Measured on this machine")
    st.markdown(
        "Counting is one thing; the clock is another. This runs the engine on this example's input, once with one head "
        f"of {d} and once with {h} heads of {d_k}, with random weights of those shapes (time does not depend on the "
        "values), and reports the median of several runs."
    )
    if h == 1:
        st.info("This example has a single head: choose more heads in the sidebar to compare.")
    else:
        st.button("Measure one head against h heads", icon=":material/timer:", key="measure", on_click=_measure,
                  help="Takes a few seconds at most: each is run several times.")
    timing = st.session_state.get("head_timing")
    if h > 1 and timing and timing[0] == timing_key:
        t = timing[1]
        left, middle, right = st.columns(3)
        left.metric(one_name, f"{t.one_head * 1e3:.3g} ms")
        middle.metric(many_name, f"{t.many_heads * 1e3:.3g} ms")
        right.metric(f"{h} heads ÷ 1 head", f"{t.ratio:.2f}×")  # h > 1 here
        st.caption(f"Median of {t.runs} runs each on {t.device}, {settings.spec.backend}. Equal multiply-adds need not "
                   f"take equal time: {h} smaller products, {h} matrices of attention weights to write and read, and "
                   "each call's fixed work all count, and how much depends on the machine and the sizes.")


if predict("heads_cost"):  # until it is answered, nothing below the question may tell the answer
    counts_section()
    what_grows_section()
    measured_section()

st.header("Real models")
shapes = presets()
st.markdown(
    "The same counting for models with published sizes, and for the trained models of this app. One attention block "
    "has four matrices, W_Q, W_K, W_V and W_O; their size is set by d_model and by how many K/V "
    "heads the model keeps (grouped-query attention, GQA, shares each K/V head among several query heads; "
    "multi-query attention, MQA, keeps one)."
)
st.dataframe([{"model": f"{p.name} [{i + 1}]", "kind": p.kind, "layers": p.n_layers, "d_model": p.d_model,
               "heads h": p.n_heads, "K/V heads h_kv": p.n_kv_heads, "d_k": p.d_k, "attention": p.attention,
               "block parameters": f"{p.params_per_layer():,}"}
              for i, p in enumerate(shapes)], hide_index=True,
             column_config={"block parameters": st.column_config.TextColumn(  # a short header: the table fits 1280 px
                 help="Parameters of one attention block: W_Q, W_K, W_V and W_O, with their biases if the model has "
                      "them")})

st.subheader("The K/V cache: MHA, GQA and MQA")
st.markdown(
    "To write its next token, a decoder keeps the key and value of every earlier token, in every layer and every K/V "
    "head: the K/V cache. At 16 bits (2 bytes) per number it takes **2 · layers · h_kv · d_k · 2 bytes per token**, "
    "times the tokens of every sequence in the batch (sizes below in MiB, 2²⁰ bytes, and GiB, 2³⁰ bytes). GQA and "
    "MQA (Ainslie et al. 2023; Shazeer 2019) exist to shrink it."
)
left, right = st.columns(2)
seq_len = setting_widget("seq_len", left)
batch = setting_widget("batch", right)
table = kv_cache_table(seq_len, batch)
total_name = f"at {seq_len:,} tokens × {batch}"
st.dataframe([{"model": r["model"], "attention": r["attention"], "K/V heads h_kv": r["kv_heads"],
               "as published": "✓" if r["own"] else "",
               "context": r["context_words"], "per token": cost.human_bytes(r["per_token"]),
               total_name: cost.human_bytes(r["total"])} for r in table],
             hide_index=True, height=min(760, 35 * len(table) + 38))
encoders = [p.name for p in shapes if not p.decoder]
st.caption(f"Encoders ({', '.join(encoders)}) read the whole input at once and keep no cache: their rows show what a "
           "decoder of the same shape would keep. GQA, for a model that does not group its heads: the largest "
           "number of K/V heads from 2 to 8 that divides h and is smaller than h, so 8 as in Llama 2 70B's GQA-8 "
           "when h is a multiple of 8 above 8 ("
           + ", ".join(f"{p.name}: h = {p.n_heads} → {kv_variants(p)['GQA']}" for p in shapes
                       if p.n_kv_heads == p.n_heads and kv_variants(p)["GQA"]) + "). Context: the longest "
           "input a model's positions allow, in tokens"
           + "".join(f"; {p.name}: {p.context_words}, because {p.no_context}" for p in shapes if p.no_context)
           + "".join(f"; {p.name}: {p.context_note}" for p in shapes if p.context_note)
           + ".")
plot(kv_cache_figure(table, seq_len, batch), key="kv_cache")
st.caption(cache_length_note(seq_len))

st.subheader("One model, its numbers in the formula")
chosen = preset(setting_widget("preset"))
st.markdown(f"**{chosen.name}**: {chosen.n_layers} layers, d_k = {chosen.d_k}, K/V cache = 2 · layers · h_kv "
            f"· d_k · tokens · batch · 2 bytes:")
for kind, heads in kv_variants(chosen).items():
    if heads is None:
        st.caption(f"{kind}: h = {chosen.n_heads} has no divisor between 1 and h, so there is no GQA in between.")
        continue
    total = chosen.kv_cache_bytes(seq_len, batch, n_kv_heads=heads)
    st.latex(r"\text{%s: } 2 \cdot %d \cdot %d \cdot %d \cdot %s \cdot %d \cdot 2 = %s \text{ bytes} = \text{%s}"
             % (kind, chosen.n_layers, heads, chosen.d_k, cost.latex_count(seq_len), batch,
                cost.latex_count(total), cost.human_bytes(total)))
plot(weight_shapes_figure(chosen), key="weight_shapes")

st.subheader("Sources")
st.markdown("\n".join(f"{i + 1}. **{p.name}**: {p.source}" for i, p in enumerate(shapes)))
st.caption("Ainslie et al. 2023, GQA: Training Generalized Multi-Query Transformer Models from Multi-Head "
           "Checkpoints. Shazeer 2019, Fast Transformer Decoding: One Write-Head is All You Need.")
st.page_link("pages/practice.py", label="Practice: work these numbers out yourself →", icon=":material/quiz:")
