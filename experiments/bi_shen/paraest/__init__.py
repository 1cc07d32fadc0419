"""Bi & Shen "ParaEst" (appendix, univariate discrete distributions; spec 004 §3 S1, §5.5): S1's
discrete means at ε = 1 with n from 100 to 2000, the figure of error against n and the quoted
improvement range 41.2 %–1874.7 %."""
