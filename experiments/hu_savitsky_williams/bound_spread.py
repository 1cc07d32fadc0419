"""How noisy is a tuned Lipschitz bound Δ_α? (spec 002 §2.2 step 4, §2.4; issue 11)

The pseudo posterior's bound Δ_α = max_i max_s |α_i log p(z_i | x_i, θ^α_s)| (the paper's
summary of Algorithm 1 of Savitsky et al.) is a maximum over the S posterior draws of one fit,
and ε = 2Δ_α m is released with it. The c₁ search keeps the first draw set whose Δ_α lands in
[Δ − tol, Δ]; a
fresh set of S draws at the same α gives another maximum. This computation measures that
spread under the default (exact conjugate) engine: on the validation sample of
``nuts_validation`` (n = 1000, seed streams of that computation) FBS and FBP are tuned to
Δ = ``lipschitz_bound`` and then refitted ``refits`` times at the tuned α with new seeds
(refit j uses the stream (``fresh``, j), so its first 20 refits are the NUTS computation's
``lipschitz_bound_fresh_*`` rows).

``python -m experiments.hu_savitsky_williams.bound_spread`` prints the table;
``harness report paper=hu_savitsky_williams`` collects it (``paper.py``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import nuts_validation as nv

NAME = "hu_savitsky_williams_bound_spread"
SETTINGS = {"seed": nv.SETTINGS["seed"], "population_seed": nv.SETTINGS["population_seed"],
            "n": nv.SETTINGS["n"], "lipschitz_bound": nv.SETTINGS["lipschitz_bound"],
            "draws": nv.SETTINGS["draws"], "tol": nv.SETTINGS["tol"],
            "max_refits": nv.SETTINGS["max_refits"], "m": nv.SETTINGS["m"], "refits": 100}


def spread_row(model: str, batch, settings=SETTINGS) -> dict:
    """The tuned fit's c₁ and Δ_α, and the distribution of Δ_α over the refits at its α."""
    synth, mod, _, prepared = nv.unweighted_fit(model, "conjugate", batch, settings)
    tuned = nv.tune_conjugate(model, synth, prepared, settings)
    bounds = nv.refit_bounds(model, mod, prepared, tuned.alpha, settings["refits"], settings)
    target = settings["lipschitz_bound"]
    return {"model": nv.MODELS[model], "target": target, "tol": settings["tol"], "c1": tuned.c1,
            "tuned_bound": tuned.bound, "refits": len(bounds), "refit_min": bounds.min(),
            "refit_q10": np.quantile(bounds, 0.1), "refit_median": np.median(bounds),
            "refit_mean": bounds.mean(), "refit_q90": np.quantile(bounds, 0.9),
            "refit_max": bounds.max(), "refit_sd": bounds.std(ddof=1),
            "pct_above_target": 100.0 * float(np.mean(bounds > target)),
            "tuned_pct_rank": 100.0 * float(np.mean(bounds < tuned.bound)),
            # the ε = 2 Δ_α m that each bound would release with m sets
            "epsilon_tuned": 2.0 * tuned.bound * settings["m"],
            "epsilon_refit_min": 2.0 * bounds.min() * settings["m"],
            "epsilon_refit_max": 2.0 * bounds.max() * settings["m"]}


def make_tables(settings=SETTINGS) -> dict[str, pd.DataFrame]:
    """One table, ``bound_spread``: a row per model (FBS, FBP)."""
    batch = nv.validation_sample(settings)
    rows = [spread_row(model, batch, settings) for model in nv.MODELS]
    return {"bound_spread": pd.DataFrame(rows).round(4)}


def main() -> None:  # pragma: no cover - a command
    with pd.option_context("display.width", 200):
        print(make_tables()["bound_spread"].to_string(index=False))


if __name__ == "__main__":  # pragma: no cover
    main()
