"""Faceted metric-versus-ln(epsilon) figures in the layout of Bowen & Liu (2020), Figure 2.

Rows are metrics, columns are scenarios, the x axis is ln(epsilon); each DP method is a line
with markers (optionally with +-2 MCSE error bars) and each non-private reference method
(NaN epsilon, e.g. "Ori", "MS") is a horizontal line. Figures are built on the Agg canvas
without pyplot, so no display or global figure state is involved.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .colours import method_colour

METRIC_LABELS = {
    "usable_prop": "Usable proportion",
    "bias": "Bias",
    "rel_bias": "Relative bias",
    "mse": "MSE",
    "rmse": "RMSE",
    "scaled_rmse": "Scaled RMSE",
    "coverage": "{pct}% CP",
    "width": "{pct}% CI width",
    "log_rmse": "log(RMSE)",
    "log_width": "log({pct}% CI width)",
    "scaled_width": "Scaled {pct}% CI width",
    "emp_se": "Empirical SE",
    "model_se": "Model SE",
    "rel_error_model_se": "Rel. error of model SE (%)",
}
SYMBOLS = {
    "pi": "π",
    "epsilon": "ε",
    "eps": "ε",
    "sigma": "σ",
    "sigma2": "σ²",
    "mu": "μ",
    "rho": "ρ",
    "theta": "θ",
    "delta": "δ",
    "beta": "β",
}
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_REF_DASHES = ("--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)))
_GUIDE = {"color": "0.6", "linestyle": "--", "linewidth": 0.8, "zorder": 0}


def _fmt(v: object) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return f"{float(v):g}"
    return str(v)


def default_column_label(values: Mapping[str, object]) -> str:
    """E.g. ``{"n": 40, "pi": 0.25}`` -> ``"n = 40, π = 0.25"``."""
    return ", ".join(f"{SYMBOLS.get(k, k)} = {_fmt(v)}" for k, v in values.items())


def _styles(dp: Sequence[str], refs: Sequence[str], custom: Mapping[str, Mapping] | None):
    """Line styles: each method's colour is its own in every figure (:func:`method_colour`),
    markers and dashes follow the order of the methods drawn."""
    styles = {
        m: {
            "color": method_colour(m),
            "marker": _MARKERS[i % len(_MARKERS)],
            "linestyle": "-",
            "linewidth": 1.2,
            "markersize": 4,
        }
        for i, m in enumerate(dp)
    }
    for i, m in enumerate(refs):
        styles[m] = {
            "color": method_colour(m),
            "linestyle": _REF_DASHES[i % len(_REF_DASHES)],
            "linewidth": 1.2,
        }
    for m, style in (custom or {}).items():
        styles.setdefault(m, {}).update(style)
    return styles


def _check(metrics: pd.DataFrame, column_keys: Sequence[str]) -> None:
    need = {*column_keys, "method", "epsilon", "log_epsilon", "metric", "value", "mcse"}
    missing = need - set(metrics.columns)
    if missing:
        raise KeyError(f"metrics lacks columns {sorted(missing)}")
    if "estimand" in metrics.columns and metrics["estimand"].nunique(dropna=False) > 1:
        raise ValueError("metrics holds several estimands; filter to one before plotting")
    keys = [*column_keys, "method", "epsilon", "metric"]
    if metrics.duplicated(keys).any():
        raise ValueError(f"several rows per {keys}; filter the table before plotting")


def _draw_panel(ax, panel, dp, refs, styles, errorbars):
    for m in dp:
        pts = panel[panel["method"] == m].sort_values("log_epsilon")
        if pts.empty:
            continue
        x, y = pts["log_epsilon"].to_numpy(float), pts["value"].to_numpy(float)
        ax.plot(x, y, label=m, **styles[m])
        if errorbars:
            ax.errorbar(
                x,
                y,
                yerr=2 * pts["mcse"].to_numpy(float),
                fmt="none",
                ecolor=styles[m].get("color"),
                elinewidth=0.8,
                capsize=2,
            )
    for m in refs:
        pts = panel[panel["method"] == m]
        if pts.empty or not np.isfinite(pts["value"].iloc[0]):
            continue
        value = float(pts["value"].iloc[0])
        ax.axhline(value, label=m, **styles[m])
        half = 2 * float(pts["mcse"].iloc[0])
        if errorbars and np.isfinite(half) and half > 0:
            ax.axhspan(
                value - half, value + half, color=styles[m].get("color"), alpha=0.08, linewidth=0
            )


def metric_facet_figure(
    metrics: pd.DataFrame,
    *,
    metrics_to_plot: Sequence[str] = ("bias", "rmse", "coverage", "width"),
    column_keys: Sequence[str] = ("n",),
    column_label: Callable[[dict], str] | None = None,
    methods: Sequence[str] | None = None,
    reference_methods: Sequence[str] | None = ("Ori", "MS"),
    method_styles: Mapping[str, Mapping] | None = None,
    nominal_coverage: float = 0.95,
    title: str | None = None,
    errorbars: bool = True,
    sharey: bool = True,
    wrap: int | None = None,
    others: bool = True,
) -> Figure:
    """Grid of metric (rows) by scenario (columns) panels against ln(epsilon).

    ``metrics`` is the long table of :func:`harness.metrics.performance_metrics` for ONE
    estimand, carrying the ``column_keys`` columns. ``methods`` orders the DP methods (rows
    with finite epsilon; default: order of appearance). ``reference_methods`` lists the NaN-epsilon
    methods drawn as horizontal lines (None: all of them). ``column_label`` maps a dict
    ``{key: value}`` to a column title. ``others`` (default): every other method present is
    drawn too, after the listed ones (a plug-in, a method added to the roster: a figure shows
    every method of the sweep), private ones as lines, non-private ones as reference lines;
    ``others=False`` draws the listed methods only. Each method has its own colour in every
    figure (:func:`harness.plotting.method_colour`). Error bars and reference bands are +-2
    MCSE. Grey dashed guides mark 0 for bias-type metrics and ``nominal_coverage`` for
    coverage. ``sharey=False`` gives every panel its own y axis (panels of one row on different
    scales). ``wrap``: with one metric, its scenario panels fill rows of at most ``wrap``
    panels, each titled.
    """
    column_keys = list(column_keys)
    _check(metrics, column_keys)
    label_of = column_label or default_column_label
    private = metrics["epsilon"].notna()
    dp_present = list(pd.unique(metrics.loc[private, "method"]))
    ref_present = list(pd.unique(metrics.loc[~private, "method"]))
    dp = list(methods) if methods is not None else dp_present
    refs = (
        ref_present
        if reference_methods is None
        else [m for m in reference_methods if m in ref_present]
    )
    if others:
        dp += [m for m in dp_present if m not in dp and m not in refs]
        refs += [m for m in ref_present if m not in refs and m not in dp]
    styles = _styles(dp, refs, method_styles)
    if column_keys:
        columns = metrics[column_keys].drop_duplicates().sort_values(column_keys)
        columns = [dict(zip(column_keys, r, strict=True)) for r in columns.itertuples(index=False)]
    else:
        columns = [{}]

    wrapped = bool(wrap) and len(metrics_to_plot) == 1 and len(columns) > wrap
    n_rows, n_cols = len(metrics_to_plot), len(columns)
    if wrapped:
        n_rows, n_cols = math.ceil(len(columns) / wrap), wrap
    fig, axes = _panel_grid(n_rows, n_cols, title=bool(title), sharey=sharey)
    pct = f"{100 * nominal_coverage:g}"
    for i, metric in enumerate(metrics_to_plot):
        of_metric = metrics[metrics["metric"] == metric]
        for j, col in enumerate(columns):
            ax = axes[divmod(j, wrap)] if wrapped else axes[i, j]
            keep = np.ones(len(of_metric), dtype=bool)
            for k, v in col.items():
                keep &= (of_metric[k] == v).to_numpy()
            _draw_panel(ax, of_metric[keep], dp, refs, styles, errorbars)
            if metric in ("bias", "rel_bias", "rel_error_model_se"):
                ax.axhline(0.0, label="_guide", **_GUIDE)
            elif metric == "coverage":
                ax.axhline(nominal_coverage, label="_guide", **_GUIDE)
            row, first_col = (j // wrap, j % wrap == 0) if wrapped else (i, j == 0)
            if row == 0 or wrapped:
                ax.set_title(label_of(col), fontsize=10)
            if first_col:
                ax.set_ylabel(METRIC_LABELS.get(metric, metric).format(pct=pct))
            if row == n_rows - 1 or (wrapped and j + wrap >= len(columns)):
                ax.set_xlabel("ln ε")
                ax.xaxis.set_tick_params(labelbottom=True)
            ax.grid(alpha=0.25, linewidth=0.5)
    for ax in (axes.flat[len(columns):] if wrapped else []):
        ax.set_visible(False)

    x = metrics.loc[private, "log_epsilon"].to_numpy(float)
    x = x[np.isfinite(x)]
    if x.size:
        axes[0, 0].set_xticks(np.arange(math.floor(x.min()), math.ceil(x.max()) + 1))
    handles = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    order = [m for m in (*dp, *refs) if m in handles]
    if order:
        ncol = max(1, min(len(order), 7, int(fig.get_figwidth() // _LEGEND_ENTRY_WIDTH)))
        legend_rows = math.ceil(len(order) / ncol)
        bottom = _MARGIN["bottom"] + _LEGEND_ROW_HEIGHT * (legend_rows - 1)
        height = fig.get_figheight()
        fig.set_figheight(height + bottom - _MARGIN["bottom"])
        _place_panels(fig, n_rows, n_cols, bool(title), bottom, sharey)
        fig.legend(
            [handles[m] for m in order],
            order,
            loc="lower center",
            bbox_to_anchor=(0.5, 0.0),
            ncol=ncol,
            frameon=False,
        )
    if title:
        fig.suptitle(title, y=1 - 0.08 / fig.get_figheight(), va="top")
    return fig


_LEGEND_ENTRY_WIDTH = 1.25  # inches a legend entry takes (a marker, a line and a short name)
_LEGEND_ROW_HEIGHT = 0.25  # inches

#: margins of a panel grid, in inches: fixed, so no layout engine has to measure the figure
#: (constrained layout doubled the time of saving a 57-panel figure); the left margin holds the
#: row's metric label and tick labels, the bottom one the ln ε label and the legend
_MARGIN = {"left": 0.85, "right": 0.12, "top": 0.42, "title": 0.32, "bottom": 0.95,
           "wspace": 0.16, "hspace": 0.32}


def _panel_grid(n_rows: int, n_cols: int, title: bool, sharey: bool = True):
    """A figure of n_rows × n_cols panels of 2.8 × 2.1 inches (rows share y unless ``sharey``
    is False, all share x), with fixed margins (``_MARGIN``)."""
    m = _MARGIN
    width = 2.8 * n_cols + 0.8 + (0.0 if sharey else _OWN_Y_LABELS * (n_cols - 1))
    height = 2.1 * n_rows + 0.9 + (m["title"] if title else 0.0)
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    _place_panels(fig, n_rows, n_cols, title, m["bottom"], sharey)
    axes = fig.subplots(n_rows, n_cols, sharex=True, sharey="row" if sharey else False,
                        squeeze=False)
    return fig, axes


_OWN_Y_LABELS = 0.45  # inches between panels for the tick labels of an unshared y axis


def _place_panels(fig: Figure, n_rows: int, n_cols: int, title: bool, bottom: float,
                  sharey: bool = True) -> None:
    """Position the panel grid in the figure with the fixed margins, ``bottom`` inches below."""
    m = dict(_MARGIN, wspace=_MARGIN["wspace"] + (0.0 if sharey else _OWN_Y_LABELS))
    width, height = fig.get_figwidth(), fig.get_figheight()
    top = m["top"] + (m["title"] if title else 0.0)
    panel_w = (width - m["left"] - m["right"]) / n_cols
    panel_h = (height - top - bottom) / n_rows
    fig.subplots_adjust(left=m["left"] / width, right=1 - m["right"] / width,
                        top=1 - top / height, bottom=bottom / height,
                        wspace=m["wspace"] / max(panel_w - m["wspace"], 1e-9),
                        hspace=m["hspace"] / max(panel_h - m["hspace"], 1e-9))


def save_figure(fig: Figure, path: str | os.PathLike) -> Path:
    """Write ``fig`` as a PNG (dpi 150) atomically: temp file in the same folder, then replace."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fig.savefig(fh, format="png", dpi=150)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600 files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
