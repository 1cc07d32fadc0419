"""Supplementary Figure 8 of Bowen & Liu (2020): MCMC trace plots of β1 in one repeat of
Simulation 4, for MS (flat prior, raw predictors) and MODIPS-Correct (N(0, 1/λ) prior, λ = 0.50,
on the normalised predictors), before MODIPS's Chaudhuri–Monteleoni noise (§4.3.2: "MCMC trace
plots from a random sample out of the 1000 repeats on β1"; supplement, Figure 8).

The sampler is the paper's: random-walk Metropolis (``harness.models.random_walk_metropolis``)
with its 2 chains of 10,000 iterations, burn-in 1,500 and thinning 10 (§4.3.2; spec 000 §4.4),
on the first replicate of the study's own data stream (block 0 at profile=paper), seeded from
the root seed (``harness.rng.generator``). The sweep itself draws β with the independence
sampler of ``posterior_draws``; this shows the paper's sampler on the same data. A report
computation (:class:`harness.paper.Computation`, ``NAME``): the thinned traces, a summary
(posterior mean and SD, split R-hat, bulk ESS, acceptance) and the figure.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness import rng as rng_mod
from harness.config import load
from harness.engine.grid import scenario_key
from harness.engine.study import load_study
from harness.models import random_walk_metropolis
from harness.models.diagnostics import effective_sample_size, split_rhat

from .model import decode_cells

NAME = "bowen_liu_sim4_traces"
#: §4.3.2: 2 chains, 10,000 iterations, burn-in 1,500, thinning 10; replicate 0 of profile=paper
SETTINGS = {"chains": 2, "iterations": 10_000, "burn_in": 1_500, "thin": 10, "replicate": 0,
            "profile": "paper"}
SAMPLERS = (("MS", False), ("MODIPS-Correct", True))
COEFFICIENTS = ("intercept", "z1", "z2")


def traces(settings=SETTINGS) -> pd.DataFrame:
    """The thinned post-burn-in chains of β1: sampler, chain, iteration, one column per
    coefficient."""
    cfg = load(["study=bowen_liu_sim4", f"profile={settings['profile']}"])
    study = load_study(cfg["study"])
    scenario = {"n": int(cfg["study"]["grid"]["n"][0])}
    data = study.generate(scenario, rng_mod.data_stream(cfg["seed"], study.name,
                                                        scenario_key(scenario), 0),
                          settings["replicate"] + 1)
    z, cells = data.values[settings["replicate"]], data.cells[settings["replicate"]]
    w1, w2, _ = decode_cells(cells)
    keep = np.arange(settings["burn_in"], settings["iterations"], settings["thin"])
    parts = []
    for label, prior in SAMPLERS:
        model = study.slomag_model(prior)
        x = model.scaled_designs(z, w1, w2)[0]
        chains, _ = random_walk_metropolis(
            x, w1, settings["iterations"], rng_mod.generator(cfg["seed"], NAME, label),
            n_chains=settings["chains"], prior_precision=model.prior_precision)
        for c in range(settings["chains"]):
            frame = pd.DataFrame(chains[c, keep].round(5), columns=list(COEFFICIENTS))
            parts.append(frame.assign(sampler=label, chain=c + 1, iteration=keep + 1))
    cols = ["sampler", "chain", "iteration", *COEFFICIENTS]
    return pd.concat(parts, ignore_index=True)[cols]


def summary(tr: pd.DataFrame) -> pd.DataFrame:
    """Per sampler and coefficient: posterior mean and SD, split R-hat and bulk ESS over the
    thinned chains."""
    rows = []
    for label, g in tr.groupby("sampler", sort=False):
        for coef in COEFFICIENTS:
            x = np.stack([c[coef].to_numpy() for _, c in g.groupby("chain")])
            rows.append({"sampler": label, "coefficient": coef, "mean": x.mean(),
                         "sd": x.std(ddof=1), "split_rhat": float(split_rhat(x)),
                         "ess": float(effective_sample_size(x)), "draws": x.size})
    return pd.DataFrame(rows)


def make_tables(settings=SETTINGS) -> dict[str, pd.DataFrame]:
    tr = traces(settings)
    return {"beta1_traces": tr, "beta1_trace_summary": summary(tr)}


def figure(tables: dict):
    """Supplementary Figure 8: one panel per (sampler, coefficient), one line per chain."""
    from matplotlib.figure import Figure

    tr = tables["beta1_traces"]
    fig = Figure(figsize=(11, 5.5), layout="constrained")
    axes = fig.subplots(len(SAMPLERS), len(COEFFICIENTS), squeeze=False)
    for i, (label, _) in enumerate(SAMPLERS):
        g = tr[tr["sampler"] == label]
        scale = "normalised predictors" if label == "MODIPS-Correct" else "raw predictors"
        for j, coef in enumerate(COEFFICIENTS):
            ax = axes[i, j]
            for chain, c in g.groupby("chain"):
                ax.plot(c["iteration"], c[coef], lw=0.6, label=f"chain {chain}")
            ax.set_title(f"{label}: β1 {coef} ({scale})", fontsize=9)
            ax.set_xlabel("iteration")
            if j == 0:
                ax.legend(fontsize=7, loc="upper right")
    fig.suptitle("Bowen & Liu Supp. Figure 8: random-walk Metropolis traces of β1 (one "
                 "repeat; burn-in 1500, thinning 10)")
    return fig


FIGURES = {"supp_figure8_traces": figure}
