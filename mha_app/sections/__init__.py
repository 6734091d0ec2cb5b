"""What the pages draw, by topic: each function draws one section of a page from the example on view."""
