"""Bowen, Liu & Su, "Differentially private data release via statistical election to partition
sequentially" (STEPS; seed 003, spec 003): the paper's data, printed numbers and studies."""
