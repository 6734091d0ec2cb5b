"""The app's few layout rules beyond Streamlit's theme: a constant stylesheet (no user text ever goes in here)."""

# One idea per screen: on a 1280 × 800 window a step page's title, its short text and its main figure fit without
# scrolling. Streamlit's main column starts 6rem down and its h1 is large; these take a little less of the screen.
COMPACT = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 4.5rem; }
[data-testid="stMain"] h1 { font-size: 2.1rem; padding: 0.5rem 0 0.25rem 0; }
</style>"""
