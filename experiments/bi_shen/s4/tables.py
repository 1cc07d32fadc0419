"""Tables of S4 (the high-dimensional Gaussian graphical model, Table 1). The grid and DIP's
improvements are S3's tables (:mod:`experiments.bi_shen.s3.tables`) on S4's cells; Table 1 puts
the paper's DIP losses (mean and SD) beside ours, each cell's gap decided against the Monte
Carlo error of both means, and ``table_1_summary`` gives the verdict per network;
``competitors`` shows, per method and cell, what lies behind the paper's "infinite loss": the
finite (slogdet) loss, the share of replicates whose direct det(Ω⁻¹Ω̂) underflows, whose Ω̂ is
the zero matrix, whose CV fits all converged, and the mean log10 diagonal of Ω̂."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from harness.claims import FAIL, PASS, UNDECIDED, Z_DECIDE, all_of, decide
from harness.paper import Table

from ..paper_numbers import (
    ANCHOR_TOLERANCE,
    TABLE_1,
    TABLE_1_EPSILONS,
    TABLE_1_REPLICATES,
    TABLE_1_SCENARIO,
)
from ..s3.tables import KEYS, METRIC, grid, ours
from ..tables import cells, tidy

#: the diagnostics of every fit (experiments/bi_shen/s4/study.py), beside the entropy loss
DIAGNOSTICS = ("naive_det_underflow", "precision_is_zero", "glasso_converged",
               "log10_mean_diagonal")


def table_1(metrics: pd.DataFrame) -> pd.DataFrame:
    """Table 1's 18 cells (network, hold-out, ε): the paper's DIP mean and SD beside ours (NaN
    where our grid has no N = 200, p = 250 scenario) and ours over the paper's. Each gap is
    read against the Monte Carlo error of both means, ``se`` = √(our MCSE² + (paper SD/√1000)²):
    ``z`` = (ours − paper)/se, and ``check`` whether ours lies within the spec's ±20 % band
    (§7.1): PASS when |ours/paper − 1| stays inside it by more than ``z_crit`` se/paper, FAIL
    when it lies outside by more than that, UNDECIDED in between (NOT RUN without the cell).
    ``z_crit`` (:func:`critical_value`) is the harness's 2, widened to Student's t quantile
    when our replicates are few, since our MCSE then comes from an SD of few values."""
    o = ours(metrics)
    at = (o["N"] == TABLE_1_SCENARIO["N"]) & (o["p"] == TABLE_1_SCENARIO["p"])
    dip = o[at & (o["method"] == "DIP")].set_index(["network", "holdout", "epsilon"])
    tol = ANCHOR_TOLERANCE["DIP"]
    z_crit = critical_value(metrics)
    rows = []
    for (network, holdout), values in TABLE_1.items():
        for eps, (mean, sd) in zip(TABLE_1_EPSILONS, values, strict=True):
            key = (network, holdout, float(eps))
            got = dip.loc[key] if key in dip.index else None
            v = np.nan if got is None else float(got["value"])
            mcse = np.nan if got is None else float(got["mcse"])
            se = float(np.hypot(mcse, sd / np.sqrt(TABLE_1_REPLICATES)))
            gap = abs(v / mean - 1)
            check = "NOT RUN" if got is None else decide_band(gap, se / mean, tol, z_crit)
            rows.append({"network": network, "holdout": holdout, "epsilon": float(eps),
                         "paper": mean, "paper_sd": sd,
                         "ours": v, "ours_sd": np.nan if got is None else float(got["sd"]),
                         "mcse": mcse, "ours_over_paper": v / mean, "z": (v - mean) / se,
                         "z_crit": z_crit, "check": check})
    return pd.DataFrame(rows)


def critical_value(metrics: pd.DataFrame) -> float:
    """The multiple of the SE that decides a Table 1 cell: the harness's :data:`Z_DECIDE`, or
    Student's t 97.5 % quantile on (replicates − 1) degrees of freedom when that is larger (12.7
    at 2 replicates, 1.97 at 200; the fewest replicates of any entropy-loss cell; NaN, hence
    nothing decided, at 1)."""
    n = int(metrics.loc[metrics["metric"] == METRIC, "n_rep"].min())
    return max(Z_DECIDE, float(student_t.ppf(0.975, n - 1))) if n > 1 else np.nan


def decide_band(gap: float, se: float, tol: float, z: float = Z_DECIDE) -> str:
    """A relative gap |ours/paper − 1| against the band ``tol``, with its SE ``se`` (relative):
    PASS inside by more than ``z`` SE, FAIL outside by more than that, else UNDECIDED (the
    harness's :func:`~harness.claims.decide`, with the gap below the band's edge)."""
    return decide(gap, tol, se, above=False, z=z)


def table_1_summary(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per network, the verdict on Table 1's nine DIP cells (FAIL if any cell lies outside the
    ±20 % band, PASS if every cell lies inside, beyond Monte Carlo error; :func:`table_1`), the
    cells' verdict counts, the range of ours over the paper's, and how many cells agree with
    the paper's within Monte Carlo error (|z| <= z_crit) with the largest |z|."""
    t = table_1(metrics)
    rows = []
    for network, cells_ in t.groupby("network", sort=False):
        run = cells_[cells_["check"] != "NOT RUN"]
        verdicts = list(run["check"])
        rows.append({"network": network, "cells": len(run),
                     "verdict": all_of(*verdicts) if verdicts else "NOT RUN",
                     "pass": verdicts.count(PASS), "fail": verdicts.count(FAIL),
                     "undecided": verdicts.count(UNDECIDED),
                     "ratio_min": run["ours_over_paper"].min(),
                     "ratio_max": run["ours_over_paper"].max(),
                     "within_mc_error": int((run["z"].abs() <= run["z_crit"]).sum()),
                     "max_abs_z": run["z"].abs().max(), "z_crit": cells_["z_crit"].iloc[0]})
    return pd.DataFrame(rows)


def competitors(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per (N, p, network, method, DIP hold-out, ε): the mean entropy loss and the replicate
    means of every diagnostic (:data:`DIAGNOSTICS`)."""
    base = ours(metrics)[[*KEYS, "method", "holdout", "epsilon", "value", "mcse"]]
    base = base.rename(columns={"value": "entropy_loss", "mcse": "entropy_loss_mcse"})
    for name in DIAGNOSTICS:
        c = cells(metrics, name, KEYS)
        share = c["method"].str.extract(r"^DIP_(\d+)$")[0].astype(float) / 100
        c = c.assign(holdout=share, method=c["method"].where(share.isna(), "DIP"))
        base = base.merge(c[[*KEYS, "method", "holdout", "epsilon", "value"]].rename(
            columns={"value": name}), on=[*KEYS, "method", "holdout", "epsilon"], how="left")
    rank = {"NP": 0, "DIP": 1, "NLRM": 2, "NOPM": 3}
    base = base.assign(_r=base["method"].map(rank), _h=base["holdout"].fillna(0))
    return base.sort_values([*KEYS, "_r", "_h", "epsilon"]).drop(columns=["_r", "_h"]) \
        .reset_index(drop=True)


TABLES = {"table_1": Table(lambda mx: tidy(table_1(mx)), reads=("metrics",)),
          "table_1_summary": Table(lambda mx: tidy(table_1_summary(mx)), reads=("metrics",)),
          "grid": Table(lambda mx: tidy(grid(mx)), reads=("metrics",)),
          "competitors": Table(lambda mx: tidy(competitors(mx)), reads=("metrics",))}
