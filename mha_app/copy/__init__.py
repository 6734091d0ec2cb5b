"""Every sentence the app says, made by small pure functions from plain values (no Streamlit): the pages, the sidebar
and the components call them, and the unit tests test them."""
