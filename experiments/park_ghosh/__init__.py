"""Park & Ghosh, "Perturbed Gibbs Samplers for Synthetic Data Release" (arXiv 1312.5370; spec
001): the paper's 13-variable discharge schema, the stand-in data generator, and the paper's
regression models. Study files are added separately."""
