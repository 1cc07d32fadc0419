"""The repeated-sampling (Monte Carlo) study of Hu, Savitsky & Williams (appendix F)."""
