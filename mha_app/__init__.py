"""The Streamlit app around mha_core: settings and links, the sidebar run before each page, and the pages' toolkit.

Not a page folder: Streamlit never lists these modules as pages. app.py runs sidebar.prepare before each page;
pages call toolkit.
"""
