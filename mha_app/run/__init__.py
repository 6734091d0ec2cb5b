"""What each script run gets from Streamlit: its settings and example, the cached computations, the page's theme."""
