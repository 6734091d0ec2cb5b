"""Reading a trace: statistics of heads, pooling for display, W_O read head by head, cost counts, an independent
check against PyTorch, and the export of a trace."""
