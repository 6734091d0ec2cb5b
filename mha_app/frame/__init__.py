"""What app.py runs around every page: the sidebar, presentation mode, the style sheet, the footer."""
