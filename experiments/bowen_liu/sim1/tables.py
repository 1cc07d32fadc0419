"""Supplementary Table 1 of Bowen & Liu (2020): the proportion of usable repeats (a release
holding both levels of the binary variable), with the paper's numbers beside ours.

Usable is judged on the pooled release (spec §4.1, verified): a repeat is unusable when every
released set holds only the same single level, i.e. T = 0. Our table gives the proportion for
every method, so the paper's statement that only LAP had unusable repeats can be checked.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.paper import Table

from ..paper_numbers import SUPP_TABLE_1, SUPP_TABLE_1_REPLICATES


def usable_by_method(metrics: pd.DataFrame) -> pd.DataFrame:
    """Proportion of usable repeats per (n, π, method, ln ε) with its binomial MCSE: the
    aggregated ``usable_prop`` of the estimand π (over all replicates, usable or not)."""
    r = metrics[metrics["epsilon"].notna() & (metrics["metric"] == "usable_prop")
                & (metrics["estimand"] == "pi")]
    out = r[["n", "pi", "method", "log_epsilon", "value", "n_rep", "mcse"]]
    out = out.rename(columns={"value": "usable", "n_rep": "R"})
    return out.sort_values(["n", "pi", "method", "log_epsilon"]).reset_index(drop=True)


def supp_table_1(metrics: pd.DataFrame) -> pd.DataFrame:
    """LAP usable proportions at ln ε ∈ {−4, −2, 0}: ours, the paper's and the difference in
    units of the combined Monte Carlo SE (ours and the paper's 5000 repeats)."""
    ours = usable_by_method(metrics)
    ours = ours[ours["method"] == "LAP"]
    out = []
    for (n, pi), cols in SUPP_TABLE_1.items():
        for log_eps, paper in cols.items():
            hit = ours[(ours["n"] == n) & np.isclose(ours["pi"], pi)
                       & np.isclose(ours["log_epsilon"], log_eps)]
            if hit.empty:
                continue
            row = hit.iloc[0]
            se = np.hypot(row["mcse"], np.sqrt(paper * (1 - paper) / SUPP_TABLE_1_REPLICATES))
            z = (row["usable"] - paper) / se if se > 0 else 0.0
            out.append({"n": n, "pi": pi, "log_epsilon": log_eps, "paper": paper,
                        "ours": round(row["usable"], 4), "ours_mcse": round(row["mcse"], 4),
                        "R": int(row["R"]), "z": round(z, 2)})
    return pd.DataFrame(out)


def usable_all_methods(metrics: pd.DataFrame) -> pd.DataFrame:
    """Usable proportions of every DP method wherever any repeat was unusable."""
    t = usable_by_method(metrics)
    wide = t.pivot_table(index=["n", "pi", "log_epsilon"], columns="method", values="usable")
    return wide[(wide < 1).any(axis=1)].round(4).reset_index()


TABLES = {"supp_table_1": Table(supp_table_1, reads=("metrics",)),
          "usable_repeats_all_methods": Table(usable_all_methods, reads=("metrics",))}
