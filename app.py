"""Multi-head attention, step by step: the entry point owns navigation and the shared sidebar controls."""

import streamlit as st

from pages.shared import setup

st.set_page_config(page_title="Multi-head attention, step by step", page_icon=":material/hub:", layout="wide")

PAGES = [
    st.Page("pages/overview.py", title="Overview", icon=":material/home:", default=True),
    st.Page("pages/projection.py", title="1 · Projection", icon=":material/grid_on:", url_path="projection"),
    st.Page("pages/attention.py", title="2 · Attention per head", icon=":material/visibility:",
            url_path="attention"),
    st.Page("pages/concatenation.py", title="3 · Concatenation", icon=":material/view_column:",
            url_path="concatenation"),
    st.Page("pages/output.py", title="4 · Output projection", icon=":material/output:", url_path="output"),
    st.Page("pages/model_view.py", title="Model view", icon=":material/apps:", url_path="model"),
    st.Page("pages/head_summary.py", title="Head summary", icon=":material/table_chart:", url_path="heads"),
]

page = st.navigation(PAGES, position="top")
try:
    setup(page.url_path)
    page.run()
finally:
    st.session_state.pop("view", None)  # a page that runs without app.py must not see a stale view
