"""What the app holds without Streamlit: the settings and their links, the example they describe, the caches, the
exports."""
