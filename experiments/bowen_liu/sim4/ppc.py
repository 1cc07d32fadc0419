"""Supplementary Table 8 of Bowen & Liu (2020): Bayesian posterior-predictive p-values of
selected statistics under the correct (SLOMAG) and the wrong (GLOM) model fitted to the
original Simulation 4 data (supplement, text before Table 8; spec 000 §4.4 [REVIEW]: the GLOM
with Σ's scale the pooled within-cell SSP gives p ≈ 0.6 for s1², s2², r; the marginal SSP
reproduces the table's ≥ 0.99).

For each of ``replicates`` original data sets (the study's own data stream, block 0 at
profile=paper, so the first replicates of the sweep), ``draws`` posterior-predictive data sets
are drawn with the non-DP MS machinery (``MultipleSynthesis`` with m = draws); p = the share of
replicated statistics ≥ the observed one. The table gives the summaries over the replicates
(min, Q1, mean, median, Q3, max) beside the paper's. A report computation
(:class:`harness.paper.Computation`, ``NAME``); also

    python -m experiments.bowen_liu.sim4.ppc [--replicates 100] [--draws 200]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from harness import rng as rng_mod
from harness.config import load
from harness.engine.grid import scenario_key
from harness.engine.study import load_study
from harness.synthesizers import make_synthesizer

from .model import decode_cells
from .paper_numbers import SUPP_TABLE_8, SUPP_TABLE_8_REPLICATES, SUPP_TABLE_8_STATS

NAME = "bowen_liu_sim4_ppc"
#: the paper's 100 repeats; 200 posterior-predictive sets each [OURS: the paper does not say]
SETTINGS = {"replicates": SUPP_TABLE_8_REPLICATES, "draws": 200, "profile": "paper"}
SUMMARIES = ("min", "Q1", "mean", "median", "Q3", "max")
STATS = SUPP_TABLE_8_STATS


def statistics(values, cells) -> np.ndarray:
    """(…, 9) statistics of records (…, n, 2) and w-cells (…, n); W levels 1-based as the
    paper's (W1 = 1 ↔ code 1)."""
    z1, z2 = values[..., 0], values[..., 1]
    w1, w2, w3 = decode_cells(cells)
    r = np.array([np.corrcoef(a, b)[0, 1] for a, b in zip(z1.reshape(-1, z1.shape[-1]),
                                                           z2.reshape(-1, z2.shape[-1]),
                                                           strict=True)]).reshape(z1.shape[:-1])
    return np.stack([z1.mean(-1), z2.mean(-1), z1.var(-1, ddof=1), z2.var(-1, ddof=1), r,
                     (w1 == 1).mean(-1), (w2 == 1).mean(-1), (w3 == 0).mean(-1),
                     (w3 == 1).mean(-1)], axis=-1)


def p_values(replicates: int = 100, draws: int = 200, profile: str = "paper") -> pd.DataFrame:
    cfg = load(["study=bowen_liu_sim4", f"profile={profile}"])
    study = load_study(cfg["study"])
    scenario = {"n": int(cfg["study"]["grid"]["n"][0])}
    data = study.generate(scenario, rng_mod.data_stream(cfg["seed"], study.name,
                                                        scenario_key(scenario), 0), replicates)
    obs = statistics(data.values, data.cells)  # (R, 9)
    # (label, the paper's row, model)
    models = (("SLOMAG", "Correct", study.slomag_model(prior=False)),
              ("GLOM-within", "Wrong", study.glom_model("within")),
              ("GLOM-marginal", "Wrong", study.glom_model("marginal")))
    rows = []
    for label, paper_row, model in models:
        rel = make_synthesizer("ms", model=model, m=draws).release(
            data, None, rng_mod.generator(cfg["seed"], NAME, label))
        rep = statistics(rel.sets.values, rel.sets.cells)  # (R, draws, 9)
        p = (rep >= obs[:, None]).mean(axis=1)  # (R, 9)
        for j, s in enumerate(STATS):
            q = np.quantile(p[:, j], [0, .25, .5, .75, 1])
            ours = dict(zip(SUMMARIES, (q[0], q[1], p[:, j].mean(), q[2], q[3], q[4]),
                            strict=True))
            paper = dict(zip(SUMMARIES, SUPP_TABLE_8[paper_row][s], strict=True))
            rows.append({"model": label, "statistic": s, "replicates": replicates,
                         **{f"ours_{k}": round(float(v), 4) for k, v in ours.items()},
                         "paper_model": paper_row,
                         **{f"paper_{k}": v for k, v in paper.items()}})
    return pd.DataFrame(rows)


def make_tables(settings=SETTINGS) -> dict[str, pd.DataFrame]:
    """The report computation: {"supp_table_8": ours beside the paper's}."""
    return {"supp_table_8": p_values(settings["replicates"], settings["draws"],
                                     settings["profile"])}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=SETTINGS["replicates"])
    ap.add_argument("--draws", type=int, default=SETTINGS["draws"])
    a = ap.parse_args(argv)
    print(p_values(a.replicates, a.draws).to_string(index=False))


if __name__ == "__main__":
    main()
