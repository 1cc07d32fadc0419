"""Supplementary Tables 4 and 5 of Bowen & Liu (2020) for Simulation 3, ours beside the paper's:
the number of observations per cell and the number of 2-D histogram bins per cell (NP-DIPS),
each as min / mean / median / max over the replicates.

Both come from the NP-DIPS release diagnostics (``n_cell_kk``: the original cell count;
``bins_cell_kk``: the cell's number of bins), which are per replicate. With the paper's binning
(Scott's n = the true n_k) they do not depend on ε; the smallest ln ε of the run is used.
``z_mean`` is (ours − paper) over the combined Monte Carlo SE of the two means (the paper's SD is
not printed; ours stands in for it).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.paper import Table

from ...common import per_cell_diagnostic
from .paper_numbers import SUPP_TABLE_4, SUPP_TABLE_5, SUPP_TABLES_REPLICATES

METHOD = "NP-DIPS"


def _per_cell(diagnostics: pd.DataFrame, prefix: str, paper: dict) -> pd.DataFrame:
    per_cell = per_cell_diagnostic(diagnostics, METHOD, prefix)
    if not per_cell:
        return pd.DataFrame()
    out = []
    for cell, v in per_cell.items():
        p = paper[cell]
        se = v.std(ddof=1) / np.sqrt(v.size) * np.sqrt(1 + v.size / SUPP_TABLES_REPLICATES)
        out.append({
            "cell": cell,
            "paper_min": p[0], "ours_min": v.min(),
            "paper_mean": p[1], "ours_mean": round(v.mean(), 3),
            "paper_median": p[2], "ours_median": np.median(v),
            "paper_max": p[3], "ours_max": v.max(),
            "z_mean": round((v.mean() - p[1]) / se, 2) if se > 0 else 0.0,
            "R": v.size,
        })
    return pd.DataFrame(out)


def supp_table_4(diagnostics: pd.DataFrame) -> pd.DataFrame:
    """Cell counts of the original data over the replicates, beside Supp. Table 4."""
    return _per_cell(diagnostics, "n_cell_", SUPP_TABLE_4)


def supp_table_5(diagnostics: pd.DataFrame) -> pd.DataFrame:
    """Bins of the within-cell 2-D histograms over the replicates, beside Supp. Table 5, with a
    column saying whether the medians agree."""
    t = _per_cell(diagnostics, "bins_cell_", SUPP_TABLE_5)
    if not t.empty:
        t["median_match"] = t["ours_median"] == t["paper_median"]
    return t


TABLES = {"supp_table_4": Table(supp_table_4, reads=("diagnostics",)),
          "supp_table_5": Table(supp_table_5, reads=("diagnostics",))}
