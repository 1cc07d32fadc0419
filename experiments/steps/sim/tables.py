"""The simulation's summaries (spec 003 §5.2, §9.4): per (model, n, ε, method) the mean over the
coefficients of |bias|, RMSE and |coverage − 0.95|, and the prediction RMSE, each with its
Monte Carlo SE (the SE of a mean over k coefficients taken as sqrt(Σ se²)/k)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.paper import Table

DP_METHODS = ("STEPS", "STEPS-em", "UH-mod", "PrivBayes", "PrivBayes-DS2019")
STATS = ("abs_bias", "rmse", "cp_gap", "pred_rmse")


def _coef_rows(mx: pd.DataFrame, metric: str) -> pd.DataFrame:
    d = mx[(mx["metric"] == metric) & (mx["estimand"].fillna("") != "")].copy()
    if metric == "bias":
        d["value"] = d["value"].abs()
    if metric == "coverage":
        d["value"] = (d["value"] - 0.95).abs()
    return d


def summary(mx: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, n, swept ε ``privacy``, method): mean |bias|, RMSE and |CP − .95|
    over the coefficients, prediction RMSE, each with ``<stat>_mcse``."""
    keys = ["model", "n", "privacy", "method"]
    mx = mx.assign(privacy=mx["privacy"].fillna(0.0))  # Ori (no ε) as 0, restored below
    parts = []
    for stat, metric in (("abs_bias", "bias"), ("rmse", "rmse"), ("cp_gap", "coverage")):
        d = _coef_rows(mx, metric)
        g = d.groupby(keys, dropna=False)
        parts.append(pd.DataFrame({
            stat: g["value"].mean(),
            f"{stat}_mcse": g["mcse"].apply(lambda s: float(np.sqrt((s ** 2).sum()) / len(s)))}))
    p = mx[mx["metric"] == "pred_rmse"].set_index(keys)
    parts.append(pd.DataFrame({"pred_rmse": p["value"], "pred_rmse_mcse": p["mcse"]}))
    out = pd.concat(parts, axis=1).reset_index()
    out["privacy"] = out["privacy"].where(out["privacy"] > 0)
    return out.sort_values(keys, na_position="first").reset_index(drop=True)


TABLES = {"summary": Table(summary, reads=("metrics",))}
