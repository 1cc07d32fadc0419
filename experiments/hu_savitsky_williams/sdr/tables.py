"""The SDR application of Hu, Savitsky & Williams (§3) beside ours: Tables 2–3 cell by cell, the
RMSE summaries behind Fig. 2, the Lipschitz bounds of Fig. 1 and the stand-in's calibration.

Our Tables 2–3 show replicate 0, one release of each method, as the paper's do; the RMSE tables
average the paper's cell RMSE √((θ̂ − θ̂_sample)² + SE²) over the study's releases of the one
sample. The paper's RMSEs are computed here from its printed Tables 2–3 with the same formula,
so no derived number is typed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.claims import MissingInput
from harness.paper import Table

from ..paper_numbers import FIG_1_BOUNDS, SDR_COLUMNS, TABLE_2, TABLE_3
from .standin import TARGETS

CELLS = tuple(TABLE_2)  # the paper's 27 cells in its row order
#: our roster label of each column of Tables 2–3
METHOD_OF = {"Sample": "ori", "Laplace": "Laplace", "FBS": "FBS", "FBP": "FBP"}
PRIVATE = ("Laplace", "FBS", "FBP")
KINDS = {"count": TABLE_2, "mean": TABLE_3}


def paper_rmse(kind: str) -> pd.DataFrame:
    """The paper's cell RMSEs from its printed tables (index: cells, columns: methods)."""
    printed = KINDS[kind]
    out = {}
    for j, method in enumerate(SDR_COLUMNS):
        if method == "Sample":
            continue
        out[method] = [float(np.hypot(printed[c][j][0] - printed[c][0][0], printed[c][j][1]))
                       for c in CELLS]
    return pd.DataFrame(out, index=list(CELLS))


def _metric(metrics: pd.DataFrame, method: str, name: str, column: str = "value") -> float:
    sel = (metrics["method"] == method) & (metrics["metric"] == name)
    hit = metrics.loc[sel, column]
    if hit.empty:  # the method did not run
        raise MissingInput(f"{method} {name}")
    if len(hit) != 1:
        raise KeyError(f"{method} {name}: {len(hit)} rows")
    return float(hit.iloc[0])


def our_rmse(metrics: pd.DataFrame, kind: str, column: str = "value") -> pd.DataFrame:
    """Our cell RMSEs (mean over releases; ``column="mcse"`` their MCSEs)."""
    return pd.DataFrame({m: [_metric(metrics, m, f"rmse_{kind}_{c}", column) for c in CELLS]
                         for m in PRIVATE}, index=list(CELLS))


def _table(rows: pd.DataFrame, kind: str) -> pd.DataFrame:
    one = rows[rows["replicate"] == 0].set_index(["method", "estimand"])
    printed = KINDS[kind]
    out = pd.DataFrame(index=list(CELLS))
    for j, column in enumerate(SDR_COLUMNS):
        sub = one.loc[METHOD_OF[column]]
        est = sub["estimate"].reindex([f"{kind}_{c}" for c in CELLS]).to_numpy()
        se = np.sqrt(sub["variance"].reindex([f"{kind}_{c}" for c in CELLS]).to_numpy())
        out[column] = np.round(est, 0)
        out[f"{column}_se"] = np.round(se, 0)
        out[f"{column}_paper"] = [printed[c][j][0] for c in CELLS]
        out[f"{column}_se_paper"] = [printed[c][j][1] for c in CELLS]
    return out.rename_axis("cell").reset_index()


def table_2(rows: pd.DataFrame) -> pd.DataFrame:
    """Table 2 (counts): point and SE of each method in replicate 0 (one release), ours beside
    the paper's."""
    return _table(rows, "count")


def table_3(rows: pd.DataFrame) -> pd.DataFrame:
    """Table 3 (average salaries), as Table 2."""
    return _table(rows, "mean")


def rmse_cells(metrics: pd.DataFrame) -> pd.DataFrame:
    """Fig. 2's data: every cell's RMSE per method, ours (mean over releases) beside the paper's
    (from its Tables 2–3)."""
    parts = []
    for kind in KINDS:
        ours, paper = our_rmse(metrics, kind), paper_rmse(kind)
        frame = pd.DataFrame({"kind": kind, "cell": list(CELLS)})
        for m in PRIVATE:
            frame[m] = ours[m].round(0).to_numpy()
            frame[f"{m}_paper"] = paper[m].round(0).to_numpy()
        parts.append(frame)
    return pd.concat(parts, ignore_index=True)


def rmse_summary(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per table and method: median, mean and interquartile range over the 27 cells of the cell
    RMSE, ours beside the paper's; and the mean over releases of the per-release median and IQR
    with its MCSE (what the claims read)."""
    out = []
    for kind in KINDS:
        ours, paper = our_rmse(metrics, kind), paper_rmse(kind)
        for m in PRIVATE:
            q25, q75 = np.percentile(ours[m], [25, 75])
            p25, p75 = np.percentile(paper[m], [25, 75])
            out.append({
                "kind": kind, "method": m,
                "median": round(float(ours[m].median()), 0),
                "median_paper": round(float(paper[m].median()), 0),
                "mean": round(float(ours[m].mean()), 0),
                "mean_paper": round(float(paper[m].mean()), 0),
                "iqr": round(float(q75 - q25), 0), "iqr_paper": round(float(p75 - p25), 0),
                "release_median": round(_metric(metrics, m, f"rmse_median_{kind}"), 0),
                "release_median_mcse": round(_metric(metrics, m, f"rmse_median_{kind}", "mcse"),
                                             0),
                "release_iqr": round(_metric(metrics, m, f"rmse_iqr_{kind}"), 0),
                "release_iqr_mcse": round(_metric(metrics, m, f"rmse_iqr_{kind}", "mcse"), 0)})
    return pd.DataFrame(out)


def ratio_to_laplace(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per table and synthesizer: the median over cells of RMSE / RMSE_Laplace, ours and the
    paper's."""
    out = []
    for kind in KINDS:
        ours, paper = our_rmse(metrics, kind), paper_rmse(kind)
        for m in ("FBS", "FBP"):
            out.append({"kind": kind, "method": m,
                        "median_ratio": round(float((ours[m] / ours["Laplace"]).median()), 4),
                        "median_ratio_paper": round(float((paper[m] / paper["Laplace"])
                                                          .median()), 4)})
    return pd.DataFrame(out)


def lipschitz(metrics: pd.DataFrame, diagnostics: pd.DataFrame) -> pd.DataFrame:
    """Fig. 1: per synthesizer, the overall bound of the tuned and of the unweighted fit (mean
    over releases) beside the paper's, the share of records within 10% of the overall bound,
    the mean risk weight α and the tuned c₁."""
    out = []
    for m, (weighted_paper, unweighted_paper) in FIG_1_BOUNDS.items():
        d = diagnostics[diagnostics["method"] == m].groupby("diagnostic")["value"].mean()
        out.append({
            "method": m,
            "weighted_max": round(_metric(metrics, m, "bound_weighted_p100.0"), 3),
            "weighted_max_paper": weighted_paper,
            "unweighted_max": round(_metric(metrics, m, "bound_unweighted_p100.0"), 2),
            "unweighted_max_paper": unweighted_paper,
            "weighted_median": round(_metric(metrics, m, "bound_weighted_p050.0"), 3),
            "unweighted_median": round(_metric(metrics, m, "bound_unweighted_p050.0"), 3),
            "share_near_bound": round(_metric(metrics, m, "share_near_bound"), 4),
            "alpha_mean": round(float(d["alpha_mean"]), 3), "c1": round(float(d["c1"]), 3),
            "epsilon": round(2 * _metric(metrics, m, "bound_weighted_p100.0") * 3, 2)})
    return pd.DataFrame(out)


def calibration(metrics: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """The confidential sample against the stand-in's calibration targets (standin.py A5) and
    the paper's printed values."""
    one = rows[(rows["method"] == "ori") & (rows["replicate"] == 0)].set_index("estimand")
    lo, hi = TARGETS["count_sensitivity"]
    items = [
        ("corr_salary_weight", _metric(metrics, "ori", "corr_salary_weight"),
         f"{TARGETS['corr_salary_weight']:g} (§3)"),
        ("weight_total", _metric(metrics, "ori", "weight_total"),
         f"{TABLE_2['all_total'][0][0]} (Table 2)"),
        ("se_total_count", float(np.sqrt(one.loc["count_all_total", "variance"])),
         f"{TARGETS['se_total_count']:g} (Table 2)"),
        ("se_total_mean", float(np.sqrt(one.loc["mean_all_total", "variance"])),
         f"{TARGETS['se_total_mean']:g} (Table 3)"),
        ("total_mean", float(one.loc["mean_all_total", "estimate"]),
         f"{TABLE_3['all_total'][0][0]} (Table 3)"),
        ("count_sensitivity", _metric(metrics, "ori", "count_sensitivity"),
         f"{lo:g}-{hi:g} (Table 2 Laplace SEs)"),
        ("max_weight", _metric(metrics, "ori", "max_weight"), "-"),
    ]
    return pd.DataFrame([{"quantity": k, "ours": round(v, 3), "target": t}
                         for k, v, t in items])


#: Tables 2-3 print every method's column; a run without one says so (harness.paper.Table)
COLUMNS = tuple(METHOD_OF.values())

TABLES = {
    "table_2": Table(table_2, ("rows",), methods=COLUMNS),
    "table_3": Table(table_3, ("rows",), methods=COLUMNS),
    "rmse_cells": Table(rmse_cells, ("metrics",)),
    "rmse_summary": Table(rmse_summary, ("metrics",)),
    "ratio_to_laplace": Table(ratio_to_laplace, ("metrics",)),
    "lipschitz": Table(lipschitz, ("metrics", "diagnostics"), methods=tuple(FIG_1_BOUNDS)),
    "calibration": Table(calibration, ("metrics", "rows"), methods=("ori",)),
}
