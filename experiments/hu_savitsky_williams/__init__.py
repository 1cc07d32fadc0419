"""Hu, Savitsky & Williams, "Private tabular survey data products through synthetic microdata
generation" (spec 002): the paper's constants, its simulation population and design. The
methods (risk-weighted pseudo posteriors FBS and FBP, the Laplace table baseline, survey
inference) are library code under ``harness/``; studies, figures and the report come later."""
