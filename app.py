"""Multi-head attention, step by step: the entry point owns navigation, and runs the shared sidebar before a page."""

import streamlit as st

from mha_app.sidebar import prepare

st.set_page_config(page_title="Multi-head attention, step by step", page_icon=":material/hub:", layout="wide")

PAGES = [
    st.Page("pages/overview.py", title="Overview", icon=":material/home:", default=True),
    st.Page("pages/projection.py", title="1 · Projection", icon=":material/grid_on:", url_path="projection"),
    st.Page("pages/attention.py", title="2 · Attention per head", icon=":material/visibility:",
            url_path="attention"),
    st.Page("pages/concatenation.py", title="3 · Concatenation", icon=":material/view_column:",
            url_path="concatenation"),
    st.Page("pages/output.py", title="4 · Output projection", icon=":material/output:", url_path="output"),
    st.Page("pages/model_view.py", title="Model view", icon=":material/apps:"),
    st.Page("pages/head_summary.py", title="Head summary", icon=":material/table_chart:"),
]
# Every url_path equals its file's name: Streamlit answers a server's first request in its older multipage mode,
# which finds pages by file name (see mha_app.toolkit.view).

page = st.navigation(PAGES, position="top")
prepare(page.url_path)
page.run()
