"""Figures 5–9 of Park & Ghosh (§4.3–4.4; spec 001 E2–E5) from the aggregated metrics: each
panel is a metric against ε per synthetic sample on a log axis, as the paper plots it (the
release of 1000 records costs 1000 times that); the bootstrap reference is a horizontal line
(the sampling-noise floor of the distances, and the risk of releasing real records)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.plotting import methods_to_draw, metric_facet_figure

from ..data import ORDER
from .study import GIVEN, MODELS, short

METHODS = ("PeGS", "PeGS.rs", "PMI")
REFS = ("Boot",)


def per_sample(sub: pd.DataFrame) -> pd.DataFrame:
    """The x coordinate of every row: ln of ε per synthetic sample (the ``privacy`` column),
    not of the whole release's ε."""
    return sub.assign(log_epsilon=np.log(sub["privacy"].astype(float)))


def per_sample_axis(fig, privacy: pd.Series):
    """Label the x axes in ε per synthetic sample, ticks at the swept values."""
    grid = sorted(float(e) for e in privacy.dropna().unique())
    for ax in fig.axes:
        ax.set_xticks(np.log(grid))
        ax.set_xticklabels([f"{e:g}" for e in grid], fontsize=7)
        if ax.get_xlabel():
            ax.set_xlabel("ε per synthetic sample (log scale)")
    return fig


def panels(mx: pd.DataFrame, names: dict[str, str], title: str, value: str = "distance",
           methods=METHODS):
    """One panel per metric in ``names`` (metric -> panel title), side by side; ``methods``
    orders the lines."""
    sub = mx[mx["metric"].isin(list(names))].copy()
    if sub.empty:
        return None
    sub["panel"] = sub["metric"].map(names)
    sub["metric"] = value
    order = {t: i for i, t in enumerate(names.values())}
    sub["panel_order"] = sub["panel"].map(order)
    present = methods_to_draw(sub.loc[sub["epsilon"].notna(), "method"], methods)
    fig = metric_facet_figure(
        per_sample(sub), metrics_to_plot=(value,), column_keys=("panel_order",),
        column_label=lambda col: list(names.values())[int(col["panel_order"])],
        methods=present, reference_methods=REFS, title=title, sharey=False, wrap=5)
    return per_sample_axis(fig, sub["privacy"])


def figure5(mx):
    names = {"marginal_sum": "sum over variables"}
    names.update({f"marginal_{short(v)}": v for v in ORDER})
    return panels(mx, names, "Park & Ghosh Figure 5: marginal distance to the original")


def figure6(given: str):
    def draw(mx):
        g = short(given)
        names = {f"cond_{g}_sum": "sum over targets"}
        names.update({f"cond_{g}_{short(v)}": v for v in ORDER if v != given})
        return panels(mx, names, f"Park & Ghosh Figure 6: conditional distance given {given}")
    return draw


def figure7(mx):
    names = {f"reg_{k}{s}": f"{k}{' (no intercept)' if s else ''}"
             for k in MODELS for s in ("", "_noint")}
    return panels(mx, names, "Park & Ghosh Figure 7: regression distance to the original")


def figure8(mx):
    from ..regression import COEFFICIENTS

    names = {}
    for k in MODELS:
        for c in ("intercept", *COEFFICIENTS[1:]):
            names[f"coef_{k}_{c}"] = f"{k}: {c}"
    sub = mx[mx["metric"].isin(list(names))]
    orig = mx[mx["metric"].str.startswith("orig_coef_") & (mx["method"] == "Boot")].copy()
    orig["metric"] = orig["metric"].str.replace("orig_coef_", "coef_", regex=False)
    orig["method"] = "Original"
    both = pd.concat([sub, orig], ignore_index=True)
    sub = both[both["metric"].isin(list(names))].copy()
    if sub.empty:
        return None
    sub["panel"] = sub["metric"].map(names)
    sub["panel_order"] = sub["panel"].map({t: i for i, t in enumerate(names.values())})
    sub["metric"] = "coefficient"
    present = methods_to_draw(sub.loc[sub["epsilon"].notna(), "method"], METHODS)
    fig = metric_facet_figure(
        per_sample(sub), metrics_to_plot=("coefficient",), column_keys=("panel_order",),
        column_label=lambda col: list(names.values())[int(col["panel_order"])],
        methods=present, reference_methods=("Original", "Boot"),
        title="Park & Ghosh Figure 8: coefficients of the two models against ε", sharey=False,
        wrap=6)
    return per_sample_axis(fig, sub["privacy"])


def figure9(mx):
    names = {"mdc_error": "(a) MDC attack error", "charge_mae": "(b) charge attack MAE (bins)",
             "unique_share": "(c) unique records (age, sex, zip)",
             "unique_in_original": "(c') unique in the original"}
    return panels(mx, names, "Park & Ghosh Figure 9: intruder scenarios", value="risk")


FIGURES = {
    "figure5_marginal": figure5,
    **{f"figure6_given_{short(g)}": figure6(g) for g in GIVEN},
    "figure7_regression": figure7,
    "figure8_coefficients": figure8,
    "figure9_risk": figure9,
}
