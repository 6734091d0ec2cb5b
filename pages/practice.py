"""Practice: questions with checked answers, generated from the published shapes of real models."""

import streamlit as st

from mha_app.copy.practice import COST_LINK, INTRO, SOURCE_BOX, answer_label, source_line
from mha_app.run.view import view
from mha_app.ui.asides import symbols
from mha_app.ui.charts import plot
from mha_app.ui.pickers import setting_widget
from mha_core import cost
from mha_core.figures.lesson import weight_shapes_figure
from mha_core.teaching.practice import practice_questions
from mha_core.teaching.published import preset

settings, ex = view()
st.title("Practice: the numbers of real models")
st.markdown(INTRO)
shape = preset(setting_widget("preset"))
st.latex(r"\text{%s:}\quad d_{model} = %s,\; h = %d,\; h_{kv} = %d,\; L = %d \text{ layers}"
         % (shape.name, cost.latex_count(shape.d_model), shape.n_heads, shape.n_kv_heads, shape.n_layers))
plot(weight_shapes_figure(shape), key="weight_shapes")
symbols("d_{model}", "h", "h_{kv}", "d_k")


def _check(key: str) -> None:
    st.session_state[f"checked_{key}"] = st.session_state[f"answer_{key}"]


for number, q in enumerate(practice_questions(shape), start=1):
    with st.container(border=True):
        st.markdown(f"**{number}.** {q.prompt}")
        left, right = st.columns([3, 1], vertical_alignment="bottom")
        value = left.number_input(answer_label(q.unit), min_value=0 if q.whole else 0.0, value=None,
                                  step=1 if q.whole else 0.01, format=None if q.whole else "%.3f",
                                  key=f"answer_{q.key}")
        right.button("Check", key=f"check_{q.key}", on_click=_check, args=(q.key,), width="stretch")
        checked = st.session_state.get(f"checked_{q.key}", "unchecked")
        if checked != "unchecked" and checked == value:
            right_answer, message = q.check(value)
            (st.success if right_answer else st.error)(message)
        with st.expander("Hint"):
            st.markdown(q.hint)
        with st.expander("Worked answer"):
            st.markdown(q.worked)

with st.expander(SOURCE_BOX):
    st.caption(source_line(shape.source))

st.page_link("pages/cost.py", label=COST_LINK, icon=":material/calculate:")
