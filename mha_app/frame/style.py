"""The app's few layout and reading rules beyond Streamlit's theme: a constant stylesheet (no user text ever goes in
here)."""

# One idea per screen: on a 1280 × 800 window a step page's title, its short text and its main figure fit without
# scrolling. Streamlit's main column starts 6rem down (under the top bar, 3.75rem) and its h1 is large; these take a
# little less of the screen, and keep a step's title on one line.
# Headings follow the page's outline (h1 the title, h2 its sections, h3 theirs), which a screen reader lists; a
# section's h2 keeps the size Streamlit gives a subheader.
# Captions: Streamlit fades them with opacity 0.6, which gives 4.1:1 on the light sidebar (WCAG asks 4.5:1) and
# fades their inline code too (3.0:1). Here a caption's text takes 72% of the colour around it instead (currentColor
# in `color` is the inherited colour): 5.6:1 or more in the light theme, 7.2:1 in the dark, on either background;
# its inline code keeps its own full colour.
COMPACT = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 4rem; }
[data-testid="stMain"] h1 { font-size: 1.9rem; padding: 0.5rem 0 0.25rem 0; }
[data-testid="stMain"] h2 { font-size: 1.75rem; }
[data-testid="stMain"] h3 { font-size: 1.4rem; }
[data-testid="stCaptionContainer"] { opacity: 1; color: color-mix(in srgb, currentColor 72%, transparent); }
</style>"""
