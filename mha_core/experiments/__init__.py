"""Experiments on heads: switching heads off (ablation), planting a head with a chosen pattern, and the
1/sqrt(d_k) scaling switched off."""
