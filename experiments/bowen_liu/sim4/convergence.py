"""Convergence diagnostics of the SLOMAG posterior sampler on the actual Simulation 4 data
(Bowen & Liu 2020 §4.3.2 checked psrf with R ``coda``; spec 000 §6 item 20).

For a sample of replicates of the study's original data (the sweep's own data stream, block 0
at profile=paper), every regression (β1, β2, (β3, β4)) under both priors (flat: MS; N(0, 1/λ) on
normalised predictors: MODIPS-Correct) is sampled with 4 independence-MH chains of ``steps``
steps (the sampler of ``harness.models.logistic.posterior_draws``, started at proposal draws);
split R-hat and the bulk ESS (``harness.models.diagnostics``) are computed per coefficient over
the second half of the chains.

    python -m experiments.bowen_liu.sim4.convergence [--replicates 20] [--steps 400]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from harness import rng as rng_mod
from harness.config import load
from harness.engine.grid import scenario_key
from harness.engine.study import load_study
from harness.models.diagnostics import effective_sample_size, split_rhat
from harness.models.logistic import posterior_draws

from .model import REGRESSIONS, decode_cells


def diagnostics(replicates: int = 20, steps: int = 400, chains: int = 4, profile: str = "paper",
                seed: int = 11) -> pd.DataFrame:
    cfg = load(["study=bowen_liu_sim4", f"profile={profile}"])
    study = load_study(cfg["study"])
    scenario = {"n": int(cfg["study"]["grid"]["n"][0])}
    data = study.generate(scenario, rng_mod.data_stream(cfg["seed"], study.name,
                                                        scenario_key(scenario), 0), replicates)
    w1, w2, w3 = decode_cells(data.cells)
    rng = np.random.default_rng(seed)
    rows = []
    for prior, label in ((False, "flat (MS)"), (True, "N(0, 1/λ), normalised (MODIPS-Correct)")):
        model = study.slomag_model(prior)
        xs = model.scaled_designs(data.values, w1, w2)
        for (name, _, k), x, y in zip(REGRESSIONS, xs, (w1, w2, w3), strict=True):
            post = posterior_draws(x, y, chains, rng, n_categories=k,
                                   prior_precision=model.prior_precision, n_steps=steps,
                                   keep_trace=True)
            tr = post.trace[..., steps // 2:, :]  # (R, chains, iterations, d)
            tr = np.moveaxis(tr, -1, 1)  # (R, d, chains, iterations)
            rhat = split_rhat(tr)
            ess = effective_sample_size(tr) / (chains * tr.shape[-1])
            rows.append({"regression": name, "prior": label, "replicates": replicates,
                         "acceptance_mean": float(np.nanmean(post.acceptance)),
                         "acceptance_min": float(np.nanmin(post.acceptance)),
                         "max_split_rhat": float(np.nanmax(rhat)),
                         "min_ess_per_draw": float(np.nanmin(ess)),
                         "all_modes_found": bool(post.ok.all())})
    return pd.DataFrame(rows)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--replicates", type=int, default=20)
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--profile", default="paper")
    a = p.parse_args(argv)
    print(diagnostics(a.replicates, a.steps, profile=a.profile).to_string(index=False,
                                                                          float_format="%.3f"))


if __name__ == "__main__":
    main()
