"""Figures of Bowen & Liu (2020) Simulation 3: Figure 5 (bias, RMSE, CP and CI width of Π and
μ1), Supplementary Figure 6 (μ2 and ρ) and Supplementary Figure 7 (σ1², σ2²); methods MODIPS,
NP-DIPS, MS and Ori; x = ln ε.

Layout. For Π and the cell means the paper draws several lines per method ("each line presents
a different marginal probability"; for μ1 "the lines represent the min, med, max, Q1, Q3 of the
true 24 cell means"), so those figures have one column per method and one line per marginal or
per order statistic; MS and Ori, which spend no ε, are flat lines across the ε grid. σ1², σ2²
and ρ have one column per estimand and one line per method (Ori and MS as reference lines).

The μ lines have two readings (spec 000 §6 item 15), both drawn:
(a) ``cells``: the cells whose true mean is the min, Q1, median, Q3 and max of the 24 true cell
    means (type-7 quantiles fall between two cells: the cell nearest to the quantile is used);
(b) ``order statistics``: min, Q1, median, Q3 and max of the per-cell metric across the 24 cells
    (no MCSE is drawn for these).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.plotting import methods_to_draw, metric_facet_figure

METHODS = ["MODIPS", "NP-DIPS", "MS", "Ori"]
PI_LABELS = {
    "Pi_w1_1": "Pr(w1=1)", "Pi_w2_1": "Pr(w2=1)", "Pi_w2_2": "Pr(w2=2)",
    "Pi_w3_1": "Pr(w3=1)", "Pi_w3_2": "Pr(w3=2)", "Pi_w3_3": "Pr(w3=3)",
}
STAT_ORDER = ["min", "Q1", "median", "Q3", "max"]


def _spread_baselines(m: pd.DataFrame) -> pd.DataFrame:
    """Repeat the rows of methods without ε (MS, Ori) at every ln ε of the DP methods."""
    eps = m.loc[m["epsilon"].notna(), ["epsilon", "log_epsilon"]].drop_duplicates()
    base = m[m["epsilon"].isna()].drop(columns=["epsilon", "log_epsilon"])
    if base.empty or eps.empty:
        return m
    spread = base.merge(eps, how="cross")
    return pd.concat([m[m["epsilon"].notna()], spread], ignore_index=True)


def _lines_by_method(m: pd.DataFrame, line: pd.Series, title: str, errorbars: bool = True,
                     order: list[str] | None = None):
    """One column per method, one line per value of ``line`` (aligned with m's rows), in
    ``order`` (default: order of appearance)."""
    m = m.assign(line=line.to_numpy())
    m = _spread_baselines(m)
    present = methods_to_draw(m["method"], METHODS)  # a plug-in gets its own column too
    if not present:
        return None
    frame = m.assign(synth=pd.Categorical(m["method"], categories=present, ordered=True))
    frame = frame.drop(columns=["method", "estimand"]).rename(columns={"line": "method"})
    present_lines = list(pd.unique(frame["method"]))
    order = [x for x in (order or present_lines) if x in present_lines]
    return metric_facet_figure(
        frame, column_keys=("synth",), column_label=lambda v: str(v["synth"]),
        methods=order, reference_methods=[], title=title, errorbars=errorbars,
    )


def true_order_cells(truth: pd.Series) -> dict[str, str]:
    """Reading (a): statistic → estimand of the cell whose true mean is nearest the type-7
    min/Q1/median/Q3/max of the 24 true cell means."""
    values = truth.to_numpy(float)
    qs = np.quantile(values, [0, 0.25, 0.5, 0.75, 1.0])
    out = {}
    for name, q in zip(STAT_ORDER, qs, strict=True):
        i = int(np.argmin(np.abs(values - q)))
        out[name] = truth.index[i]
    return out


def mu_cells_figure(metrics: pd.DataFrame, j: int, title: str):
    m = metrics[metrics["estimand"].str.startswith(f"mu{j}_")]
    if m.empty:
        return None
    truth = m.drop_duplicates("estimand").set_index("estimand")["truth"].sort_index()
    pick = true_order_cells(truth)
    label = {est: f"{s} (cell {int(est.split('_')[1])}, μ = {truth[est]:.3f})"
             for s, est in pick.items()}
    m = m[m["estimand"].isin(list(pick.values()))]
    return _lines_by_method(m, m["estimand"].map(label), title,
                            order=[label[pick[s]] for s in STAT_ORDER])


def mu_order_statistics_figure(metrics: pd.DataFrame, j: int, title: str):
    m = metrics[metrics["estimand"].str.startswith(f"mu{j}_")]
    if m.empty:
        return None
    keys = ["method", "epsilon", "log_epsilon", "metric"]
    rows = []
    for key, g in m.groupby(keys, dropna=False, sort=False):
        v = g["value"].to_numpy(float)
        v = v[np.isfinite(v)]
        if not v.size:
            continue
        for name, q in zip(STAT_ORDER, np.quantile(v, [0, .25, .5, .75, 1]), strict=True):
            rows.append({**dict(zip(keys, key, strict=True)), "estimand": f"mu{j}",
                         "line": name, "value": q, "mcse": np.nan})
    if not rows:
        return None
    frame = pd.DataFrame(rows)
    return _lines_by_method(frame.drop(columns="line"), frame["line"], title, errorbars=False,
                            order=STAT_ORDER)


def pi_figure(metrics: pd.DataFrame, title: str):
    m = metrics[metrics["estimand"].isin(list(PI_LABELS))]
    if m.empty:
        return None
    return _lines_by_method(m, m["estimand"].map(PI_LABELS), title,
                            order=list(PI_LABELS.values()))


def params_figure(metrics: pd.DataFrame, names: dict[str, str], title: str):
    m = metrics[metrics["estimand"].isin(list(names))]
    if m.empty:
        return None
    frame = m.assign(param=m["estimand"].map(names)).drop(columns=["estimand"])
    dp = methods_to_draw(frame.loc[frame["epsilon"].notna(), "method"], ("MODIPS", "NP-DIPS"))
    return metric_facet_figure(
        frame, column_keys=("param",), column_label=lambda v: str(v["param"]), methods=dp,
        reference_methods=["Ori", "MS"], title=title,
    )


FIGURES = {
    "figure5_Pi": lambda mx: pi_figure(
        mx, "Bowen & Liu Simulation 3 (Figure 5): Π, one line per marginal probability"),
    "figure5_mu1_cells": lambda mx: mu_cells_figure(
        mx, 1, "Figure 5: μ1, cells at the min/Q1/median/Q3/max of the true means (reading a)"),
    "figure5_mu1_order_statistics": lambda mx: mu_order_statistics_figure(
        mx, 1, "Figure 5: μ1, min/Q1/median/Q3/max of the metric over the 24 cells (reading b)"),
    "supp_figure6_mu2_cells": lambda mx: mu_cells_figure(
        mx, 2, "Supp. Figure 6: μ2, cells at the min/Q1/median/Q3/max of the true means (a)"),
    "supp_figure6_mu2_order_statistics": lambda mx: mu_order_statistics_figure(
        mx, 2, "Supp. Figure 6: μ2, min/Q1/median/Q3/max of the metric over the cells (b)"),
    "supp_figure6_rho": lambda mx: params_figure(
        mx, {"rho": "ρ"}, "Supp. Figure 6: ρ"),
    "supp_figure7_sigma2": lambda mx: params_figure(
        mx, {"sigma1_sq": "σ1²", "sigma2_sq": "σ2²"}, "Supp. Figure 7: σ1², σ2²"),
}
