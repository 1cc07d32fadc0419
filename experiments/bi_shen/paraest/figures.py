"""Figure ParaEst of Bi & Shen (App., univariate discrete distributions; spec 004 §5.5): the
mean |mean(Z̃) − E_F Z| against the sample size n at ε = 1, one panel per distribution, one line
per method (the paper's NP, DIP, LRM, OPM and EXM), with ±2 Monte Carlo SE bars. The y axis is
logarithmic [ours: the paper's figure is not in the text, and EXM's error is orders of
magnitude above DIP's]."""

from __future__ import annotations

from matplotlib.figure import Figure

from ..known_f.tables import METRIC

METHODS = ("NP", "DIP", "LRM", "OPM", "EXM")
#: the panels in the appendix's order of the distributions
DISTS = ("bernoulli", "binomial", "poisson", "geometric")
STYLE = {"NP": {"color": "black", "linestyle": "--", "marker": ""},
         "DIP": {"color": "tab:green", "marker": "o"},
         "LRM": {"color": "tab:blue", "marker": "s"},
         "OPM": {"color": "tab:red", "marker": "^"},
         "EXM": {"color": "tab:purple", "marker": "D"}}


def error_against_n(metrics, metric: str = METRIC["s1"], methods=METHODS) -> Figure | None:
    """One panel per ``dist`` of ``metric`` against ``n`` (the study's single ε)."""
    mx = metrics[(metrics["metric"] == metric) & metrics["method"].isin(methods)]
    dists = sorted(set(mx["dist"]), key=lambda d: (DISTS + (d,)).index(d))
    if mx.empty or mx["n"].nunique() < 2:
        return None
    fig = Figure(figsize=(3.0 * len(dists), 3.2))
    axes = fig.subplots(1, len(dists), squeeze=False)[0]
    for ax, dist in zip(axes, dists, strict=True):
        d = mx[mx["dist"] == dist]
        for m in methods:
            g = d[d["method"] == m].sort_values("n")
            if not g.empty:
                ax.errorbar(g["n"], g["value"], yerr=2 * g["mcse"], label=m, lw=1.1,
                            markersize=3, capsize=0, **STYLE.get(m, {}))
        ax.set_yscale("log")
        ax.set_title(dist.capitalize(), fontsize=9)
        ax.set_xlabel("n")
    axes[0].set_ylabel("|mean error| (ε = 1)")
    axes[-1].legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


FIGURES = {"figure_paraest": error_against_n}
