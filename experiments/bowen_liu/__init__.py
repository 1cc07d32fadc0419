"""Bowen & Liu (2020), "Comparative Study of Differentially Private Data Synthesis Methods",
Statistical Science 35(2)."""
