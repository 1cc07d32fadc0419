"""Figures 1–2 of Hu, Savitsky & Williams (§3) from the aggregated metrics.

* Fig. 1: violins of the record-level Lipschitz bounds, unweighted (α ≡ 1) and weighted (the
  tuned fit), FBS left, FBP right. The study keeps 41 percentiles (0, 2.5, …, 100) of each
  release's record bounds; the violins are drawn from their means over releases, so their
  shape is that of the percentile points (the maximum, the overall bound, is exact).
* Fig. 2: violins of the 27 cell RMSEs of counts (left) and mean salaries (right) per method
  (mean over releases), on a log scale (Laplace's mean-salary RMSEs are ~40× the others').
"""

from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .study import ESTIMANDS, PERCENTILES, percentile_name

COLORS = {"Laplace": "#7f7f7f", "FBS": "#e6ab02", "FBP": "#1f78b4",
          "unweighted": "#bdbdbd", "weighted": "#d95f02"}


def _values(mx, method: str, names) -> np.ndarray | None:
    sub = mx[(mx["method"] == method) & mx["metric"].isin(list(names))]
    if len(sub) != len(names):
        return None
    return sub.set_index("metric")["value"].reindex(list(names)).to_numpy(dtype=float)


def _violin(ax, data, labels, colors):
    parts = ax.violinplot(data, showmedians=True, showextrema=True)
    for body, color in zip(parts["bodies"], colors, strict=True):
        body.set_facecolor(color)
        body.set_alpha(0.7)
    ax.set_xticks(range(1, len(labels) + 1), labels)


def figure1(mx):
    """Fig. 1: record-level Lipschitz bounds of FBS and FBP, unweighted and weighted."""
    fig = Figure(figsize=(8, 3.6))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2, sharey=True)
    for ax, method in zip(axes, ("FBS", "FBP"), strict=True):
        data = [_values(mx, method, [percentile_name(k, q) for q in PERCENTILES])
                for k in ("unweighted", "weighted")]
        if any(d is None for d in data):
            return None
        _violin(ax, data, ["unweighted", "weighted"], [COLORS["unweighted"],
                                                       COLORS["weighted"]])
        ax.set_title(f"{method}: max {data[0][-1]:.1f} / {data[1][-1]:.2f}")
    axes[0].set_ylabel("record Lipschitz bound")
    fig.suptitle("Hu, Savitsky & Williams Fig. 1 (SDR stand-in, m = 3, ε = 10.8)")
    fig.tight_layout()
    return fig


def figure2(mx):
    """Fig. 2: the 27 cell RMSEs of counts and mean salaries for Laplace, FBS and FBP."""
    methods = ("Laplace", "FBS", "FBP")
    fig = Figure(figsize=(8, 3.6))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2)
    for ax, kind, title in zip(axes, ("count", "mean"), ("counts", "average salary"),
                               strict=True):
        names = [f"rmse_{e}" for e in ESTIMANDS if e.startswith(f"{kind}_")]
        data = [_values(mx, m, names) for m in methods]
        if any(d is None for d in data):
            return None
        _violin(ax, [np.log10(d) for d in data], list(methods), [COLORS[m] for m in methods])
        ax.set_title(title)
        ax.set_ylabel("log10 RMSE")
    fig.suptitle("Hu, Savitsky & Williams Fig. 2 (SDR stand-in, 27 cells, ε = 10.8)")
    fig.tight_layout()
    return fig


FIGURES = {"figure1_lipschitz": figure1, "figure2_rmse": figure2}
