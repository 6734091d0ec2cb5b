"""What the pages teach with: formulas, predict-then-reveal questions, practice, one weight worked by hand, the
engine's own source lines, the tiny example, and the published shapes of well-known models."""
