"""Multi-head attention, step by step: the entry point owns navigation and the shared sidebar controls."""

import streamlit as st

from pages import setup

st.set_page_config(page_title="Multi-head attention, step by step", page_icon=":material/hub:", layout="wide")

STEPS = "pages/steps"
PAGES = [
    st.Page(f"{STEPS}/overview.py", title="Overview", icon=":material/home:", default=True),
    st.Page(f"{STEPS}/projection.py", title="1 · Projection", icon=":material/grid_on:", url_path="projection"),
    st.Page(f"{STEPS}/attention.py", title="2 · Attention per head", icon=":material/visibility:",
            url_path="attention"),
    st.Page(f"{STEPS}/concatenation.py", title="3 · Concatenation", icon=":material/view_column:",
            url_path="concatenation"),
    st.Page(f"{STEPS}/output.py", title="4 · Output projection", icon=":material/output:", url_path="output"),
]

page = st.navigation(PAGES, position="top")
setup(page.url_path)
page.run()
