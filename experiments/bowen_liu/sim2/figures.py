"""Figures 3–4 of Bowen & Liu (2020) (Simulation 2, asymmetric bounds [μ − 3σ, μ + 4σ]) and
Supplementary Figures 2–5 (symmetric bounds [μ − 4σ, μ + 4σ]): one panel per (n, σ²), x = ln ε;
MODIPS, PERT and SMOOTH as lines, MS and Ori as reference lines (spec 000 §5.2, §5.4)."""

from __future__ import annotations

from harness.plotting import methods_to_draw, metric_facet_figure

DP_METHODS = ["MODIPS", "PERT", "SMOOTH"]
BOUNDS_TEXT = {"asym": "[μ − 3σ, μ + 4σ]", "sym": "[μ − 4σ, μ + 4σ]"}
ESTIMAND_TEXT = {"mu": "μ", "sigma2": "σ²"}


def _label(v):
    return f"n = {v['n']}, σ² = {v['sigma2']:g}"


def _figure(metrics, estimand, bounds, panels, title):
    m = metrics[(metrics["estimand"] == estimand) & (metrics["bounds"] == bounds)]
    present = methods_to_draw(m.loc[m["epsilon"].notna(), "method"], DP_METHODS)
    if m.empty or not present:
        return None
    return metric_facet_figure(
        m, metrics_to_plot=panels, column_keys=("n", "sigma2"), column_label=_label,
        methods=present, reference_methods=("MS", "Ori"),
        title=f"{title}: {ESTIMAND_TEXT[estimand]}, bounds {BOUNDS_TEXT.get(bounds, bounds)}",
    )


MU_ALL = ("bias", "rmse", "coverage", "width")
SIGMA2_ALL = ("rel_bias", "scaled_rmse", "coverage", "scaled_width")


def _make(estimand, bounds, panels, title):
    return lambda metrics: _figure(metrics, estimand, bounds, panels, title)


FIGURES = {
    "figure3_mu_asym": _make("mu", "asym", MU_ALL, "Bowen & Liu Simulation 2 (Figure 3)"),
    "figure4_sigma2_asym": _make("sigma2", "asym", SIGMA2_ALL,
                                 "Bowen & Liu Simulation 2 (Figure 4)"),
    "supp_figure2_mu_bias_rmse_sym": _make("mu", "sym", ("bias", "rmse"),
                                           "Simulation 2 (Supplementary Figure 2)"),
    "supp_figure3_mu_cp_width_sym": _make("mu", "sym", ("coverage", "width"),
                                          "Simulation 2 (Supplementary Figure 3)"),
    "supp_figure4_sigma2_bias_rmse_sym": _make("sigma2", "sym", ("rel_bias", "scaled_rmse"),
                                               "Simulation 2 (Supplementary Figure 4)"),
    "supp_figure5_sigma2_cp_width_sym": _make("sigma2", "sym", ("coverage", "scaled_width"),
                                              "Simulation 2 (Supplementary Figure 5)"),
}
