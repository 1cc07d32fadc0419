"""Figure 2 of Bowen & Liu (2020) (bias, RMSE, 95% CP and CI width of π over ln ε; one panel per
n and π; MODIPS, LAP, MD, BB-MR as lines, Ori and MS as reference lines) and Supplementary
Figure 1 (the zoom at π = 0.5: bias, RMSE, CP)."""

from __future__ import annotations

import numpy as np

from harness.plotting import methods_to_draw, metric_facet_figure

DP_METHODS = ["MODIPS", "LAP", "MD", "BB-MR"]


def _label(v):
    return f"n = {v['n']}, π = {v['pi']:g}"


def _present(m):
    """The paper's DP methods present, then any other private method of the sweep (a
    plug-in): a figure shows every method the sweep holds."""
    return methods_to_draw(m.loc[m["epsilon"].notna(), "method"], DP_METHODS)


def figure_2(metrics, pis=None):
    m = metrics[metrics["estimand"] == "pi"]
    if pis is not None:
        m = m[np.isin(m["pi"], pis)]
    if m.empty or not _present(m):
        return None
    return metric_facet_figure(
        m, column_keys=("pi", "n"), column_label=_label, methods=_present(m),
        title="Bowen & Liu Simulation 1 (Figure 2): inference on π",
    )


def supp_figure_1(metrics):
    m = metrics[(metrics["estimand"] == "pi") & np.isclose(metrics["pi"], 0.5)]
    if m.empty or not _present(m):
        return None
    return metric_facet_figure(
        m, metrics_to_plot=("bias", "rmse", "coverage"), column_keys=("n",),
        column_label=_label_n, methods=_present(m),
        title="Bowen & Liu Simulation 1, π = 0.5 (Supplementary Figure 1)",
    )


def _label_n(v):
    return f"n = {v['n']}, π = 0.5"


def _per_pi(pi):
    return lambda metrics: figure_2(metrics, [pi])


FIGURES = {
    "figure2_main_text_pi": lambda mx: figure_2(mx, [0.10, 0.25, 0.50]),
    "figure2_pi0.15": _per_pi(0.15),
    "supp_figure1_pi0.5": supp_figure_1,
}
