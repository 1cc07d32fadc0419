"""Bowen & Liu (2020), "Comparative Study of Differentially Private Data Synthesis Methods",
Statistical Science 35(2). Spec: shared/spec/000_bowen_liu_dips_comparison.md."""
