"""Multi-head attention, step by step: the entry point owns navigation, and runs the shared sidebar before a page."""

import streamlit as st

from mha_app.frame import present, style
from mha_app.frame.sidebar import keep_ask_in_address, prepare
from mha_app.run import theme

presenting = present.requested()  # present=1: the lesson, large, sidebar collapsed (only set_page_config can)
st.set_page_config(page_title="Multi-head attention, step by step", page_icon=":material/hub:", layout="wide",
                   initial_sidebar_state="collapsed" if presenting else "auto")

# The steps stay in view in the top bar; the other pages open from two menus ("" = no menu of its own).
PAGES = {
    "": [
        st.Page("pages/overview.py", title="Overview", icon=":material/home:", default=True),
        st.Page("pages/projection.py", title="1 · Projection", icon=":material/grid_on:", url_path="projection"),
        st.Page("pages/attention.py", title="2 · Attention per head", icon=":material/visibility:",
                url_path="attention"),
        st.Page("pages/concatenation.py", title="3 · Concatenation", icon=":material/view_column:",
                url_path="concatenation"),
        st.Page("pages/output.py", title="4 · Output projection", icon=":material/output:", url_path="output"),
    ],
    "Trained heads": [
        st.Page("pages/model_view.py", title="Model view", icon=":material/apps:"),
        st.Page("pages/head_summary.py", title="Head summary", icon=":material/table_chart:"),
    ],
    "Classroom": [
        st.Page("pages/cost.py", title="Cost of heads", icon=":material/calculate:", url_path="cost"),
        st.Page("pages/by_hand.py", title="By hand", icon=":material/edit_note:", url_path="by_hand"),
        st.Page("pages/practice.py", title="Practice", icon=":material/quiz:", url_path="practice"),
        st.Page("pages/lesson.py", title="Lesson", icon=":material/co_present:", url_path="lesson"),
        st.Page("pages/heads_learn.py", title="Heads learn", icon=":material/model_training:",
                url_path="heads_learn"),
    ],
}
# Every url_path equals its file's name: Streamlit answers a server's first request in its older multipage mode,
# which finds pages by file name (see mha_app.run.view).

page = st.navigation(PAGES, position="hidden" if presenting else "top")
st.html(style.COMPACT)
if presenting and page.url_path != "lesson":
    st.switch_page(present.LESSON_SCRIPT, query_params={k: st.query_params.get_all(k) for k in st.query_params})
prepare(page.url_path)
theme.follow()  # charts follow the page's theme: a rerun when it changes
page.run()
keep_ask_in_address()  # the page may have named a view in the address (its tab): `ask` follows
