"""Figures 2 and 3 of the simulation (spec 003 §7.1, §9.4) in the paper's layout: for each
model, rows bias, RMSE and coverage against ε (Model 1: one line per coefficient, each in its
own colour in every panel; Model 2: box plots over the 120 cell means), columns n × method, and
a bottom row of prediction RMSE. A legend on the right names the coefficients (Figure 2) or
what a box shows (Figure 3), the reference lines and the prediction line."""

from __future__ import annotations

from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from harness.plotting import methods_to_draw

METHODS = ("STEPS", "UH-mod", "PrivBayes", "PrivBayes-DS2019")
#: the roster's other methods, which the paper's figures do not show
NOT_SHOWN = ("Ori", "STEPS-fixed")
ROWS = (("bias", "bias"), ("rmse", "RMSE"), ("coverage", "CP"))


def _figure(metrics, model: str, boxes: bool) -> Figure | None:
    mx = metrics[metrics["model"] == model]
    methods = methods_to_draw(mx["method"], METHODS, known=NOT_SHOWN)  # and any plug-in
    ns = sorted(mx["n"].unique())
    if not methods or not ns:
        return None
    cols = [(n, m) for n in ns for m in methods]
    names = sorted(mx.loc[mx["estimand"].fillna("") != "", "estimand"].unique())
    style = _styles(names)
    fig = Figure(figsize=(2.2 * len(cols) + 1.6, 8.5))
    axes = fig.subplots(4, len(cols), sharey="row", squeeze=False)
    for c, (n, method) in enumerate(cols):
        d = mx[(mx["n"] == n) & (mx["method"] == method)]
        eps = sorted(d["privacy"].dropna().unique())
        for r, (metric, label) in enumerate(ROWS):
            ax = axes[r, c]
            e = d[(d["metric"] == metric) & (d["estimand"].fillna("") != "")]
            if boxes:
                ax.boxplot([e[e["privacy"] == x]["value"].to_numpy() for x in eps],
                           positions=range(len(eps)), widths=0.5, showfliers=False)
            else:
                for name, g in e.groupby("estimand"):
                    g = g.sort_values("privacy")
                    ax.plot(range(len(g)), g["value"], lw=0.8, marker=".", label=name,
                            **style[name])
            if metric == "coverage":
                ax.axhline(0.95, color="grey", lw=0.6, ls="--")
            if metric == "bias":
                ax.axhline(0.0, color="grey", lw=0.6, ls="--")
            ax.set_xticks(range(len(eps)), [f"{x:g}" for x in eps])
            if c == 0:
                ax.set_ylabel(label)
        p = d[d["metric"] == "pred_rmse"].sort_values("privacy")
        axes[3, c].plot(range(len(p)), p["value"], marker="o", color="k")
        axes[3, c].set_xticks(range(len(p)), [f"{x:g}" for x in p["privacy"]])
        axes[3, c].set_xlabel("ε")
        if c == 0:
            axes[3, c].set_ylabel("prediction RMSE")
        axes[0, c].set_title(f"n = {n}\n{method}", fontsize=8)
    fig.suptitle(f"{'Model 2 (saturated)' if boxes else 'Model 1 (main effects)'}")
    fig.legend(*_legend(names, style, boxes), loc="center right", fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0, 1 - 1.5 / fig.get_figwidth(), 1))
    return fig


def _styles(names) -> dict[str, dict]:
    """Line style of each coefficient, the same in every panel: a colour per variable (the
    part of the name before ``_``: X1..X4, the intercept) and a dash pattern per level."""
    families = list(dict.fromkeys(name.split("_")[0] for name in names))
    palette, dashes, seen = colormaps["tab10"], ("-", "--", ":", "-."), {}
    out = {}
    for name in names:
        family = name.split("_")[0]
        k = seen[family] = seen.get(family, -1) + 1
        out[name] = {"color": palette(families.index(family) % palette.N),
                     "ls": dashes[k % len(dashes)]}
    return out


def _legend(names, style, boxes: bool) -> tuple[list, list[str]]:
    """Handles and labels: the coefficients' lines (Figure 2) or the box (Figure 3), then the
    dashed references (bias 0, nominal coverage 0.95) and the prediction RMSE line."""
    if boxes:
        items = [(Patch(facecolor="white", edgecolor="k"),
                  f"the {len(names)} cell means:\nbox: quartiles and\nmedian; whiskers:\n1.5 IQR")]
    else:
        items = [(Line2D([], [], lw=0.8, marker=".", **style[name]), name) for name in names]
    items += [(Line2D([], [], color="grey", lw=0.6, ls="--"), "bias 0; CP 0.95"),
              (Line2D([], [], color="k", marker="o"), "prediction RMSE")]
    return [h for h, _ in items], [label for _, label in items]


def figure_2(metrics) -> Figure | None:
    return _figure(metrics, "main_effect", boxes=False)


def figure_3(metrics) -> Figure | None:
    return _figure(metrics, "saturated", boxes=True)


FIGURES = {"figure_2": figure_2, "figure_3": figure_3}
