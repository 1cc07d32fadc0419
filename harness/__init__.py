"""DIPS harness: Monte Carlo studies of differentially private data synthesis.

This package is a research tool for *studying* DP methods. It uses seeded, floating-point
numpy generators and is not a tool for releasing real confidential data.
"""

__version__ = "0.1.0"
