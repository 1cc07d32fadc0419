"""Appendix F of Hu, Savitsky & Williams beside ours: Tables 4–5 (coverage and average CI length
per cell at m = 3, Δ = 1.8), the FBP/FBS CI-length ratios of the captions of Figures 10–17, and
the average CI length and coverage of every method by m and Δ. All read the aggregated metrics.

"Average CI length" is the engine's ``width`` (mean over replicates of the pooled interval's
length), "coverage" its ``coverage``; the caption ratio is the mean over the 24 cells (interior
cells and field totals) of width_FBP / width_FBS (spec §8: the tables give 1.377 and 0.968).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.paper import Table

from ..paper_numbers import CAPTION_FIGURES, CAPTION_RATIOS, TABLE_4, TABLE_5

CELLS = tuple(TABLE_4)  # the paper's 24 cells: per field, the total and both genders
KINDS = ("count", "mean")


def cell_metric(metrics: pd.DataFrame, method: str, metric: str, kind: str, m: int,
                delta: float, column: str = "value") -> pd.Series:
    """One metric of the 24 cells (index: cell names) for a method, m and Δ."""
    sel = ((metrics["method"] == method) & (metrics["metric"] == metric)
           & (metrics["m"] == m) & np.isclose(metrics["privacy"], delta))
    if method == "ori":
        sel = (metrics["method"] == method) & (metrics["metric"] == metric)
    rows = metrics[sel].set_index("estimand")[column]
    return rows.reindex([f"{kind}_{c}" for c in CELLS]).set_axis(list(CELLS))


def _appendix_table(metrics, kind: str, printed: dict, m: int = 3, delta: float = 1.8):
    out = pd.DataFrame(index=list(CELLS))
    for method, offset in (("FBS", 0), ("FBP", 2)):
        out[f"{method}_cov"] = cell_metric(metrics, method, "coverage", kind, m, delta).round(2)
        out[f"{method}_cov_paper"] = [printed[c][offset] for c in CELLS]
        out[f"{method}_ci"] = cell_metric(metrics, method, "width", kind, m, delta).round(0)
        out[f"{method}_ci_paper"] = [printed[c][offset + 1] for c in CELLS]
        out[f"{method}_ci_ratio"] = (out[f"{method}_ci"] / out[f"{method}_ci_paper"]).round(2)
    return out.rename_axis("cell").reset_index()


def table_4(metrics: pd.DataFrame) -> pd.DataFrame:
    """Table 4 (counts, m = 3, Δ = 1.8): coverage and average CI length, ours and the paper's,
    and ours over the paper's CI length."""
    return _appendix_table(metrics, "count", TABLE_4)


def table_5(metrics: pd.DataFrame) -> pd.DataFrame:
    """Table 5 (mean salaries, m = 3, Δ = 1.8), as Table 4."""
    return _appendix_table(metrics, "mean", TABLE_5)


def ci_ratio(metrics, kind: str, m: int, delta: float) -> tuple[float, float]:
    """Mean over the 24 cells of width_FBP / width_FBS and its MCSE (delta method per cell,
    root-sum-of-squares over the cells / 24)."""
    a, b = (cell_metric(metrics, k, "width", kind, m, delta) for k in ("FBP", "FBS"))
    sa, sb = (cell_metric(metrics, k, "width", kind, m, delta, "mcse") for k in ("FBP", "FBS"))
    r = a / b
    se = r * np.sqrt((sa / a) ** 2 + (sb / b) ** 2)
    return float(r.mean()), float(np.sqrt((se ** 2).sum()) / len(r))


def caption_ratios(metrics: pd.DataFrame) -> pd.DataFrame:
    """The FBP/FBS average-CI-length ratios of the captions of Figures 10–17, ours (± MCSE)
    beside the paper's."""
    out = []
    for (m, delta), (p_count, p_mean) in CAPTION_RATIOS.items():
        c, cse = ci_ratio(metrics, "count", m, delta)
        mu, mse = ci_ratio(metrics, "mean", m, delta)
        out.append({"figure": CAPTION_FIGURES[(m, delta)], "m": m, "delta": delta,
                    "epsilon": round(2 * delta * m, 1), "counts": round(c, 3),
                    "counts_mcse": round(cse, 3), "counts_paper": p_count,
                    "means": round(mu, 3), "means_mcse": round(mse, 3), "means_paper": p_mean})
    return pd.DataFrame(out).sort_values(["delta", "m"]).reset_index(drop=True)


def by_method(metrics: pd.DataFrame) -> pd.DataFrame:
    """Average CI length, coverage and RMSE of every method, m and Δ, each the mean over the 24
    cells, for counts and for means (the sample and Laplace: one set; Laplace at ε = 2·Δ·3)."""
    out = []
    keys = metrics[["method", "m", "privacy"]].drop_duplicates()
    for row in keys.itertuples():
        delta = float(row.privacy) if np.isfinite(row.privacy) else np.nan
        rec = {"method": row.method, "m": int(row.m), "delta": delta}
        sel = (metrics["method"] == row.method) & (metrics["m"] == row.m)
        if np.isfinite(delta):
            sel &= np.isclose(metrics["privacy"], delta)
        sub = metrics[sel]
        rec["epsilon"] = round(float(sub["epsilon"].iloc[0]), 1) if np.isfinite(delta) else np.nan
        for kind in KINDS:
            names = [f"{kind}_{c}" for c in CELLS]
            for metric, label, digits in (("width", "ci", 0), ("coverage", "cov", 3),
                                          ("rmse", "rmse", 0)):
                v = sub[(sub["metric"] == metric) & sub["estimand"].isin(names)]["value"]
                rec[f"{kind}_{label}"] = round(float(v.mean()), digits)
        out.append(rec)
    return pd.DataFrame(out)


def paper_coverage_means() -> dict[str, float]:
    """The paper's mean coverage over the 24 cells (spec §9.3 [derived]), for the report."""
    return {f"{kind}_{method}": float(np.mean([t[c][i] for c in CELLS]))
            for kind, t in (("count", TABLE_4), ("mean", TABLE_5))
            for method, i in (("FBS", 0), ("FBP", 2))}


#: Fig. 3 (one simulated sample, Δ = 1.8): the unweighted fits' Lipschitz bounds
FIG_3_UNWEIGHTED = {"FBS": 8.89, "FBP": 9.92}


def lipschitz(diagnostics: pd.DataFrame) -> pd.DataFrame:
    """Per synthesizer and Δ: the realised bound of the tuned fit, the unweighted fit's bound
    (the paper's Fig. 3 values from one sample beside it) and the mean risk weight α, each the
    mean over replicates (of the per-replicate diagnostic rows)."""
    d = diagnostics[diagnostics["diagnostic"].isin(
        ["lipschitz_realised", "lipschitz_unweighted", "alpha_mean"])]
    d = d.groupby(["method", "privacy", "diagnostic"])["value"].mean().unstack().reset_index()
    d["unweighted_fig3"] = d["method"].map(FIG_3_UNWEIGHTED)
    d = d.rename(columns={"privacy": "delta"})
    cols = ["method", "delta", "lipschitz_realised", "lipschitz_unweighted", "unweighted_fig3",
            "alpha_mean"]
    return d[cols].round(3).sort_values(["method", "delta"], ascending=[False, True])


TABLES = {
    "table_4": Table(table_4, reads=("metrics",)),
    "table_5": Table(table_5, reads=("metrics",)),
    "caption_ratios": Table(caption_ratios, reads=("metrics",)),
    "by_method": Table(by_method, reads=("metrics",)),
    "lipschitz": Table(lipschitz, reads=("diagnostics",)),
}
