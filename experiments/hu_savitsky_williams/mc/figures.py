"""Figures 10–17 of Hu, Savitsky & Williams (appendix F): coverage against coefficient of
variation of the 24 cells (16 interior cells and 8 field totals), FBS and FBP, counts (left)
and mean salaries (right), with the red dashed line at the nominal 0.95; one figure per
(m, Δ) of the captions, whose FBP/FBS CI-length ratios (ours, and the paper's) head the figure.

CV of a cell = model SE / mean estimate over the replicates, √(mean T) / mean q̄ (read from the
aggregated metrics ``model_se`` and ``bias``); the paper's "SE scaled by the estimate" per
replicate and averaged (spec §8) differs from it only by second-order terms of the replicate
spread."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from harness.plotting import method_colour, methods_to_draw

from ..paper_numbers import CAPTION_FIGURES, CAPTION_RATIOS
from .tables import CELLS, cell_metric, ci_ratio

SYNTHS = ("FBS", "FBP")
NOT_SHOWN = ("ori", "Laplace")  # the sample, and Laplace (no m, no Δ: not in these figures)
KIND_TITLES = {"count": "counts", "mean": "average salary"}


def coverage_and_cv(metrics: pd.DataFrame, method: str, kind: str, m: int, delta: float):
    """(coverage, CV) of the 24 cells, two arrays."""
    cov = cell_metric(metrics, method, "coverage", kind, m, delta)
    se = cell_metric(metrics, method, "model_se", kind, m, delta)
    bias = cell_metric(metrics, method, "bias", kind, m, delta)
    sel = ((metrics["method"] == method) & (metrics["metric"] == "bias") & (metrics["m"] == m)
           & np.isclose(metrics["privacy"], delta))
    truth = metrics[sel].set_index("estimand")["truth"]
    truth = truth.reindex([f"{kind}_{c}" for c in CELLS]).to_numpy(float)
    return cov.to_numpy(float), se.to_numpy(float) / (truth + bias.to_numpy(float))


def coverage_cv_figure(m: int, delta: float):
    number = CAPTION_FIGURES[(m, delta)]
    paper = CAPTION_RATIOS[(m, delta)]

    def draw(metrics: pd.DataFrame):
        have = metrics[(metrics["m"] == m) & np.isclose(metrics["privacy"], delta)]
        if not {"FBS", "FBP"} <= set(have["method"]):
            return None
        ours = [ci_ratio(metrics, kind, m, delta)[0] for kind in ("count", "mean")]
        fig = Figure(figsize=(9.0, 4.3))
        FigureCanvasAgg(fig)
        axes = fig.subplots(1, 2)
        fig.subplots_adjust(top=0.80, wspace=0.3)
        fig.suptitle(f"Hu, Savitsky & Williams Figure {number}: coverage vs CV, m = {m}, "
                     f"Δ = {delta} (ε = {2 * delta * m:g})\nFBP/FBS CI length: counts "
                     f"{ours[0]:.2f} (paper {paper[0]}), means {ours[1]:.2f} (paper "
                     f"{paper[1]})", fontsize=9)
        for ax, kind in zip(axes, ("count", "mean"), strict=True):
            # the two synthesizers, and any other method run at this m and Δ (a plug-in)
            for method in methods_to_draw(have["method"], SYNTHS, known=NOT_SHOWN):
                cov, cv = coverage_and_cv(metrics, method, kind, m, delta)
                ax.scatter(cov, cv, s=16, color=method_colour(method), label=method,
                           alpha=0.8)
            ax.axvline(0.95, color="red", linestyle="--", linewidth=0.8)
            ax.set_title(KIND_TITLES[kind], fontsize=10)
            ax.set_xlabel("coverage")
            ax.set_ylabel("CV")
        axes[0].legend(frameon=False, fontsize=8)
        return fig
    return draw


FIGURES = {f"figure{n}_coverage_cv": coverage_cv_figure(m, d)
           for (m, d), n in sorted(CAPTION_FIGURES.items(), key=lambda kv: kv[1])}
