"""Figures 5–7 of the CPS study (spec 003 §7.1, §9.4) in the paper's layout, against log ε, one
line per method: Fig. 5 SPECKS (mean ± SD over the repetitions; the right panel leaves the
PrivBayes variants out, the paper's zoom on the tree methods), Fig. 6 the χ² consistency rates
at α = 1, 5 and 10 %, Fig. 7 the DID model's CI overlap (all 32 coefficients and the three focal
ones). One legend on the right names every method drawn in any panel."""

from __future__ import annotations

from matplotlib.figure import Figure

from harness.plotting import method_colour, methods_to_draw

from .study import CR_NAMES

METHODS = ("FlatLaplace", "PrivBayes", "PrivBayes-DS2019", "UH-2", "UH-3", "STEPS-2", "STEPS-3")
PRIVBAYES = ("PrivBayes", "PrivBayes-DS2019")
OVERLAPS = (("ci_all", "all 32 coefficients"), ("ci_prereg", "Preregistration State"),
            ("ci_reg", "Registration Status"), ("ci_pxr", "Prereg. × Reg."))


def _lines(ax, metrics, metric: str, methods, error: str | None = None) -> None:
    """One line per method of ``methods`` present, then per other method the figure does not
    know (a plug-in), each in its own colour."""
    for method in methods_to_draw(metrics["method"], methods, known=METHODS):
        d = metrics[(metrics["method"] == method) & (metrics["metric"] == metric)]
        if d.empty:
            continue
        d = d.sort_values("log_epsilon")
        yerr = None
        if error is not None:
            e = metrics[(metrics["method"] == method) & (metrics["metric"] == error)]
            yerr = e.set_index("log_epsilon")["value"].reindex(d["log_epsilon"]).to_numpy()
        ax.errorbar(d["log_epsilon"], d["value"], yerr=yerr, marker="o", ms=3, lw=1,
                    capsize=2, label=method, color=method_colour(method))
    ax.set_xlabel("log ε")


def _panels(metrics, specs, title: str, methods_of=lambda i: METHODS, error=None) -> Figure:
    fig = Figure(figsize=(3.6 * len(specs) + 1.4, 3.4))
    axes = fig.subplots(1, len(specs), squeeze=False)[0]
    for i, (metric, label) in enumerate(specs):
        _lines(axes[i], metrics, metric, methods_of(i), error=error(metric) if error else None)
        axes[i].set_title(label, fontsize=9)
    handles = {}  # every method drawn in any panel (Fig. 5's zoom leaves PrivBayes out)
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, h)
    fig.legend(list(handles.values()), list(handles), loc="center right", fontsize=7,
               frameon=False)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1 - 1.4 / fig.get_figwidth(), 1))
    return fig


def figure_5(metrics) -> Figure | None:
    if "specks" not in set(metrics["metric"]):
        return None
    return _panels(metrics, (("specks", "all methods"), ("specks", "without PrivBayes")),
                   "Fig. 5: SPECKS (KS distance of propensity scores), mean ± SD",
                   methods_of=lambda i: METHODS if i == 0 else
                   tuple(m for m in METHODS if m not in PRIVBAYES),
                   error=lambda metric: f"{metric}_sd")


def figure_6(metrics) -> Figure | None:
    labels = ("α = 1 %", "α = 5 %", "α = 10 %")
    return _panels(metrics, tuple(zip(CR_NAMES, labels, strict=True)),
                   "Fig. 6: χ² consistency rate of the 105 pairwise tests")


def figure_7(metrics) -> Figure | None:
    return _panels(metrics, OVERLAPS, "Fig. 7: CI overlap of the DID logistic model")


FIGURES = {"figure_5": figure_5, "figure_6": figure_6, "figure_7": figure_7}
