"""Bi & Shen S4: network reconstruction, the high-dimensional Gaussian graphical model (Table 1)."""
