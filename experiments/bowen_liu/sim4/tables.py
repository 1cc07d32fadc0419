"""Supplementary Tables 6 and 7 of Bowen & Liu (2020) for Simulation 4, ours beside the paper's,
and the non-convergence of the Firth fits per method and ε.

Tables 6 (observations per w-cell) and 7 (2-D bins per w-cell, NP-DIPS) come from the NP-DIPS
release diagnostics (``n_cell_kk``, ``bins_cell_kk``; they do not depend on ε, the smallest ln ε
is used). The paper states neither table's cell order, and the two use different orders (spec
§6 items 18–19), so each table is printed twice: per our cell (w1, w2, w3) with the paper's row
of the same rank of the mean, and as a comparison of the paired means / medians.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.paper import Table

from ...common import per_cell_diagnostic
from .model import decode_cells
from .paper_numbers import SUPP_TABLE_6, SUPP_TABLE_7, SUPP_TABLES_REPLICATES

METHOD = "NP-DIPS"


def _per_cell(diagnostics: pd.DataFrame, prefix: str, paper: dict) -> pd.DataFrame:
    per_cell = per_cell_diagnostic(diagnostics, METHOD, prefix)
    if not per_cell:
        return pd.DataFrame()
    rows = []
    for cell, v in per_cell.items():
        w1, w2, w3 = (int(x) for x in decode_cells(cell - 1))
        rows.append({"cell": cell, "w1": w1, "w2": w2, "w3": w3 + 1, "ours_min": v.min(),
                     "ours_mean": round(v.mean(), 3), "ours_median": np.median(v),
                     "ours_max": v.max(), "sd": v.std(ddof=1), "R": v.size})
    ours = pd.DataFrame(rows)
    # pair by rank of the mean (the paper's cell order is unknown)
    paper_rows = sorted(paper.items(), key=lambda kv: kv[1][1])
    order = ours["ours_mean"].rank(method="first").astype(int).to_numpy() - 1
    p = [paper_rows[i] for i in order]
    ours["paper_cell_same_rank"] = [c for c, _ in p]
    for j, stat in enumerate(("min", "mean", "median", "max")):
        ours[f"paper_{stat}"] = [v[j] for _, v in p]
    se = ours["sd"] / np.sqrt(ours["R"]) * np.sqrt(1 + ours["R"] / SUPP_TABLES_REPLICATES)
    ours["z_mean"] = ((ours["ours_mean"] - ours["paper_mean"]) / se.where(se > 0)).round(2)
    return ours.drop(columns="sd")


def supp_table_6(diagnostics: pd.DataFrame) -> pd.DataFrame:
    """Original w-cell counts over the replicates beside Supp. Table 6 (paired by rank)."""
    return _per_cell(diagnostics, "n_cell_", SUPP_TABLE_6)


def supp_table_7(diagnostics: pd.DataFrame) -> pd.DataFrame:
    """Bins of the per-w-cell 2-D Scott histograms beside Supp. Table 7 (paired by the rank of
    the mean), with whether the medians agree."""
    t = _per_cell(diagnostics, "bins_cell_", SUPP_TABLE_7)
    if not t.empty:
        t["median_match"] = t["ours_median"] == t["paper_median"]
    return t


TABLES = {"supp_table_6": Table(supp_table_6, reads=("diagnostics",)),
          "supp_table_7": Table(supp_table_7, reads=("diagnostics",))}
