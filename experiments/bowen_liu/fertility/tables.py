"""Tables 4 and 5 of the Bowen & Liu (2020) case study, ours beside the paper's (spec 000 §5.1).

Both read the per-replicate metric rows of the sweep (its metric evaluation).
Ours are means over the repetitions with their Monte Carlo SE (SD/√R). Methods whose label ends
in ``-nonempty`` perturb only the non-empty cells of the training table: they are **not DP** and
are shown as a diagnostic (spec §6 item 24 REVIEW (b)), never as the paper's method.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.claims import MissingInput
from harness.paper import Table

from ..paper_numbers import TABLE_4, TABLE_5

CONFUSION = ("tp", "fn", "fp", "tn", "consistency_rate")
STATISTICS = ("age_mean", "age_sd", "hours_mean", "hours_sd", "tvd_1", "tvd_2", "tvd_3", "tvd_8")


def _label(method: str) -> str:
    return f"{method} (non-DP diagnostic)" if method.endswith("-nonempty") else method


def _paper_method(method: str) -> str:
    return method.removesuffix("-nonempty")


def _summary(rows: pd.DataFrame) -> pd.DataFrame:
    g = rows.groupby(["split_seed", "method", "metric"], sort=False)["value"]
    out = g.agg(mean="mean", sd="std", R="size").reset_index()
    out["mcse"] = out["sd"] / np.sqrt(out["R"])
    return out


def table_4(rows: pd.DataFrame) -> pd.DataFrame:
    """Averaged confusion matrix on the 20 test cases ("+" = altered) and consistency rate,
    ours (mean ± MCSE over the repetitions) and the paper's, per split seed and method."""
    s = _summary(rows[rows["metric"].isin(CONFUSION)])
    if s.empty:  # no method that classifies ran
        raise MissingInput(", ".join(TABLE_4))
    out = []
    for (seed, method), grp in s.groupby(["split_seed", "method"], sort=False):
        v = grp.set_index("metric")
        row = {"split_seed": seed, "method": _label(method), "R": int(v["R"].iloc[0])}
        for k in CONFUSION:
            row[k] = round(float(v.loc[k, "mean"]), 3)
        row["cr_mcse"] = round(float(v.loc["consistency_rate", "mcse"]), 3)
        paper = TABLE_4.get(_paper_method(method))
        for k, p in zip(CONFUSION, paper or (np.nan,) * 5, strict=True):
            row[f"paper_{k}"] = p
        out.append(row)
    return pd.DataFrame(out)


def table_5(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean (SD) of age and hours and the averaged TVDs of the 1-, 2-, 3- and 8-way tables:
    ours (mean over repetitions, its MCSE) and the paper's, per split seed, method and
    statistic. The TVD reference (training records or full file) is ``study.tvd_reference``."""
    s = _summary(rows[rows["metric"].isin(STATISTICS)])
    if s.empty:  # no method that releases records ran
        raise MissingInput(", ".join(TABLE_5))
    out = []
    for r in s.itertuples():
        paper = TABLE_5.get(_paper_method(r.method), {}).get(r.metric, np.nan)
        out.append({"split_seed": r.split_seed, "statistic": r.metric,
                    "method": _label(r.method), "ours": round(r.mean, 3),
                    "mcse": round(r.mcse, 4), "paper": paper})
    t = pd.DataFrame(out)
    order = {k: i for i, k in enumerate(STATISTICS)}
    return t.sort_values(["split_seed", "statistic"], key=lambda c: c.map(order)
                         if c.name == "statistic" else c, kind="stable").reset_index(drop=True)


TABLES = {"table_4": Table(table_4, reads=("replicate_metrics",)),
          "table_5": Table(table_5, reads=("replicate_metrics",))}
