"""The cost of heads: h heads of d_k = d_model / h cost what one head of d_model costs; what grows is memory."""

import streamlit as st

from mha_app.copy import cost as say
from mha_app.run.view import view
from mha_app.sections.cost import plot_step_costs, step_costs
from mha_app.ui.charts import plot
from mha_app.ui.layout import table_height
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
st.markdown(say.intro(n, m, d, h, d_k))
timing_key = (settings.spec, ex.layer, h)
one_name, many_name = say.one_head(d), say.many_heads(h, d_k)


def counts_section() -> None:
    """This example's multiply-adds, step by step, for h heads and for one."""
    st.markdown(say.PAPER)
    plot_step_costs(ex)

    st.dataframe(say.cost_rows(n, m, d, h, bias, kv, ex.key_tokens is not None), hide_index=True, width="stretch")
    st.latex(r"\text{scores: } h \cdot n \cdot m \cdot d_k = %d \cdot %d \cdot %d \cdot %d = %s"
             r" = 1 \cdot %d \cdot %d \cdot %d" % (h, n, m, d_k, cost.latex_count(many["scores"]), n, m, d))
    if kv < h:
        st.caption(say.shared_kv(h, kv))
    if ex.cfg.rope_theta is not None:
        st.caption(say.rope_note(n, m, d, h, kv, rope=True))
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
    st.markdown(say.what_grows(n, m, h))
    st.dataframe(say.kept_table(n, m, d, h, d_k, ex.trace.weights.dtype.itemsize), hide_index=True)
    real = sum(a.size for a in ex.weights.arrays().values())
    st.caption(say.parameters_caption(h, kv, bias, real))


def measured_section() -> None:
    """One head against h heads on the clock (a hint at the answer too, so it waits for it)."""
    st.header("Measured on this machine")
    st.markdown(say.measured_intro(d, h, d_k))
    if h == 1:
        st.info(say.SINGLE_HEAD)
    else:
        st.button(say.MEASURE, icon=":material/timer:", key="measure", on_click=_measure, help=say.MEASURE_HELP)
    timing = st.session_state.get("head_timing")
    if h > 1 and timing and timing[0] == timing_key:
        t = timing[1]
        left, middle, right = st.columns(3)
        left.metric(one_name, f"{t.one_head * 1e3:.3g} ms")
        middle.metric(many_name, f"{t.many_heads * 1e3:.3g} ms")
        right.metric(say.ratio_label(h), f"{t.ratio:.2f}×")  # h > 1 here
        st.caption(say.timing_caption(t.runs, t.device, settings.spec.backend, h))


if predict("heads_cost"):  # until it is answered, nothing below the question may tell the answer
    counts_section()
    what_grows_section()
    measured_section()

st.header("Real models")
shapes = presets()
st.markdown(say.REAL_MODELS)
st.dataframe([{"model": f"{p.name} [{i + 1}]", "kind": p.kind, "layers": p.n_layers, "d_model": p.d_model,
               "heads h": p.n_heads, "K/V heads h_kv": p.n_kv_heads, "d_k": p.d_k, "attention": p.attention,
               "block parameters": f"{p.params_per_layer():,}"}
              for i, p in enumerate(shapes)], hide_index=True,
             column_config={"block parameters": st.column_config.TextColumn(  # a short header: the table fits 1280 px
                 help=say.BLOCK_PARAMETERS_HELP)})

st.subheader("The K/V cache: MHA, GQA and MQA")
st.markdown(say.KV_CACHE)
left, right = st.columns(2)
seq_len = setting_widget("seq_len", left)
batch = setting_widget("batch", right)
table = kv_cache_table(seq_len, batch)
total_name = say.total_column(seq_len, batch)
st.dataframe([{"model": r["model"], "attention": r["attention"], "K/V heads h_kv": r["kv_heads"],
               "as published": "✓" if r["own"] else "",
               "context": r["context_words"], "per token": cost.human_bytes(r["per_token"]),
               total_name: cost.human_bytes(r["total"])} for r in table],
             hide_index=True, height=table_height(len(table), cap=760))
st.caption(say.cache_caption(shapes))
plot(kv_cache_figure(table, seq_len, batch), key="kv_cache")
st.caption(cache_length_note(seq_len))

st.subheader("One model, its numbers in the formula")
chosen = preset(setting_widget("preset"))
st.markdown(say.formula_intro(chosen.name, chosen.n_layers, chosen.d_k))
for kind, heads in kv_variants(chosen).items():
    if heads is None:
        st.caption(say.no_gqa(kind, chosen.n_heads))
        continue
    total = chosen.kv_cache_bytes(seq_len, batch, n_kv_heads=heads)
    st.latex(r"\text{%s: } 2 \cdot %d \cdot %d \cdot %d \cdot %s \cdot %d \cdot 2 = %s \text{ bytes} = \text{%s}"
             % (kind, chosen.n_layers, heads, chosen.d_k, cost.latex_count(seq_len), batch,
                cost.latex_count(total), cost.human_bytes(total)))
plot(weight_shapes_figure(chosen), key="weight_shapes")

st.subheader("Sources")
st.markdown(say.sources(shapes))
st.caption(say.CITATIONS)
st.page_link("pages/practice.py", label=say.PRACTICE_LINK, icon=":material/quiz:")
