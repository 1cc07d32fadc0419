"""Figures of Bowen & Liu (2020) Simulation 4 in the paper's layout: Figure 6 (β2), Figure 7
(β3), Supplementary Figure 9 (μ1, μ2), Supplementary Figure 10 (σ1², σ2², ρ), Supplementary
Figure 11 (β1), and β4 (announced by the supplement, no caption of its own). Rows: bias,
log(RMSE), 95% CP, log(95% CI width) (the paper's scales; bias and CP plain); one column per
parameter; one line per DP method (MODIPS-Correct, MODIPS-Wrong, MODIPS-Wrong-marginal,
NP-DIPS), MS and Ori as reference lines; x = ln ε.

As in the paper, the β's of the MODIPS methods are not drawn at the ln ε listed under
``not_plotted`` of the config (ε = e^-4 … e^-2: "the logistic regression based on the synthetic
data from the MODIPS approach fail to converge thus the results were not available for
plotting"); the rows are kept and the non-convergence shares are in the replicate metrics.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.plotting import methods_to_draw, metric_facet_figure

DP_METHODS = ["MODIPS-Correct", "MODIPS-Wrong", "MODIPS-Wrong-marginal", "NP-DIPS"]
NOT_PLOTTED = {"methods": ["MODIPS-Correct", "MODIPS-Wrong", "MODIPS-Wrong-marginal"],
               "prefix": "beta", "max_log_epsilon": -2}
ROWS = ("bias", "log_rmse", "coverage", "log_width")


def coefficient_labels(beta: str, p: int) -> dict[str, str]:
    names = ["intercept", "z1", "z2", "w1", "w2"][:p]
    return {f"{beta}_{i}": f"{beta[:4]}{beta[4:]} {names[i]}".replace("beta", "β")
            for i in range(p)}


def drop_not_plotted(m: pd.DataFrame, rule: dict = NOT_PLOTTED) -> pd.DataFrame:
    """Leave out the rows the paper does not plot (MODIPS β's at ln ε ≤ −2)."""
    out = (m["method"].isin(rule["methods"]) & m["estimand"].str.startswith(rule["prefix"])
           & (m["log_epsilon"] <= rule["max_log_epsilon"]))
    return m[~out]


def with_logs(m: pd.DataFrame) -> pd.DataFrame:
    """Add log(RMSE) and log(width) rows (MCSE by the delta method: mcse/value)."""
    parts = [m]
    for src, dst in (("rmse", "log_rmse"), ("width", "log_width")):
        s = m[m["metric"] == src].copy()
        with np.errstate(divide="ignore", invalid="ignore"):
            s["mcse"] = s["mcse"] / s["value"]
            s["value"] = np.log(s["value"])
        s["metric"] = dst
        parts.append(s)
    return pd.concat(parts, ignore_index=True)


def params_figure(metrics: pd.DataFrame, names: dict[str, str], title: str):
    m = metrics[metrics["estimand"].isin(list(names))]
    if m.empty:
        return None
    m = with_logs(drop_not_plotted(m))
    m = m[m["metric"].isin(ROWS)]
    frame = m.assign(param=pd.Categorical(m["estimand"].map(names), categories=list(
        names.values()), ordered=True)).drop(columns=["estimand"])
    dp = methods_to_draw(frame.loc[frame["epsilon"].notna(), "method"], DP_METHODS)
    return metric_facet_figure(
        frame, metrics_to_plot=ROWS, column_keys=("param",),
        column_label=lambda v: str(v["param"]), methods=dp, reference_methods=["Ori", "MS"],
        title=title,
    )


FIGURES = {
    "figure6_beta2": lambda mx: params_figure(
        mx, coefficient_labels("beta2", 4), "Bowen & Liu Simulation 4 (Figure 6): β2"),
    "figure7_beta3": lambda mx: params_figure(
        mx, coefficient_labels("beta3", 5), "Figure 7: β3 (W3 = 2 vs 1)"),
    "supp_figure9_mu": lambda mx: params_figure(
        mx, {"mu1": "μ1", "mu2": "μ2"}, "Supp. Figure 9: μ1, μ2"),
    "supp_figure10_sigma": lambda mx: params_figure(
        mx, {"sigma1_sq": "σ1²", "sigma2_sq": "σ2²", "rho": "ρ"},
        "Supp. Figure 10: σ1², σ2², ρ"),
    "supp_figure11_beta1": lambda mx: params_figure(
        mx, coefficient_labels("beta1", 3), "Supp. Figure 11: β1"),
    "supp_beta4": lambda mx: params_figure(
        mx, coefficient_labels("beta4", 5), "Supplement (announced, no caption): β4 (W3 = 3 vs 1)"),
}
