"""Bi & Shen S3: the low-dimensional Gaussian graphical model simulation (appendix)."""
