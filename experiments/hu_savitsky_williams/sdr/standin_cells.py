"""Why is one cell of the SDR stand-in far from its target? (issue 25, item 6)

The stand-in's one confidential sample (``standin.py``, population seed 0, sample seed 0) is
the reference every method of the SDR study is judged against (§3.3: a cell's RMSE is
√((θ̂ − θ̂_sample)² + SE²)). This computation describes, for every field × gender cell, how
that sample's weighted mean salary (the Hájek estimator Σ w y / Σ w of Table 3) arises:

* the pseudo-population's cell mean (A2 makes it Table 3's "Sample" mean in expectation);
* the record with the largest share of the cell's Σ w y: its salary, its log-scale z within
  the cell's log-normal (A2), its weight, how often the with-replacement PPS design (A4) drew
  that unit, the share of Σ w y its copies carry, and the cell's estimate without them;
* the spread of the cell's estimate over ``samples`` further samples of the same population
  (sample seeds 1, 2, …, each drawn as ``standin_sample`` draws seed 0): its mean and SD, the
  seed-0 estimate's z within it, and the share of samples at least that far above the mean.

``python -m experiments.hu_savitsky_williams.sdr.standin_cells`` prints the table;
``harness report paper=hu_savitsky_williams`` collects it among the SDR study's tables
(``paper.py``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..population import GENDERS
from .standin import CELL_MEANS, SALARY_SD, draw_sdr_sample, make_sdr_population

NAME = "hu_savitsky_williams_sdr_standin"
SETTINGS = {"population_seed": 0, "sample_seed": 0, "samples": 1000}


def _cell_estimates(batch) -> np.ndarray:
    """The weighted mean salary Σ w y / Σ w of every field × gender cell (16,)."""
    v, w = batch.values[0], np.asarray(batch.weights)[0]
    cell = (v[:, 0].astype(int) * len(GENDERS) + v[:, 1].astype(int))
    k = CELL_MEANS.size
    return (np.bincount(cell, weights=w * v[:, 2], minlength=k)
            / np.bincount(cell, weights=w, minlength=k))


def make_tables(settings=SETTINGS) -> dict[str, pd.DataFrame]:
    """One table, ``standin_cells``: a row per interior cell (``F<f>_<gender>``)."""
    pop = make_sdr_population(np.random.default_rng(int(settings["population_seed"])))
    batch = draw_sdr_sample(pop, np.random.default_rng(int(settings["sample_seed"])))
    first = settings["sample_seed"] + 1
    spread = np.array([_cell_estimates(draw_sdr_sample(pop, np.random.default_rng(s)))
                       for s in range(first, first + int(settings["samples"]))])
    v, w = batch.values[0], np.asarray(batch.weights)[0]
    cell = v[:, 0].astype(int) * len(GENDERS) + v[:, 1].astype(int)
    estimate = _cell_estimates(batch)
    pop_mean = pop.cell_means().ravel()
    log_mu = np.log(CELL_MEANS.ravel()) - SALARY_SD**2 / 2.0
    rows = []
    for k in range(CELL_MEANS.size):
        idx = np.flatnonzero(cell == k)
        wy = w[idx] * v[idx, 2]
        top = idx[np.argmax(wy)]
        copies = idx[(v[idx, 2] == v[top, 2]) & (w[idx] == w[top])]
        rest = np.setdiff1d(idx, copies)
        sd, mean = spread[:, k].std(ddof=1), spread[:, k].mean()
        rows.append({
            "cell": f"F{k // len(GENDERS) + 1}_{GENDERS[k % len(GENDERS)]}",
            "n": idx.size, "paper_mean": CELL_MEANS.ravel()[k], "pop_mean": pop_mean[k],
            "sample_mean": estimate[k], "top_salary": v[top, 2],
            "top_log_z": (np.log(v[top, 2]) - log_mu[k]) / SALARY_SD,
            "top_weight": w[top], "top_copies": copies.size,
            "top_share": w[copies] @ v[copies, 2] / wy.sum(),
            "mean_without_top": w[rest] @ v[rest, 2] / w[rest].sum(),
            "samples": int(settings["samples"]), "samples_mean": mean, "samples_sd": sd,
            "sample_z": (estimate[k] - mean) / sd,
            "samples_at_least": float(np.mean(spread[:, k] >= estimate[k]))})
    return {"standin_cells": pd.DataFrame(rows).round(4)}


def main() -> None:  # pragma: no cover - a command
    with pd.option_context("display.width", 220):
        print(make_tables()["standin_cells"].to_string(index=False))


if __name__ == "__main__":  # pragma: no cover
    main()
