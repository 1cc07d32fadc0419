"""Figures 3–9 of Hu, Savitsky & Williams (§4.2–§4.4, appendix E) for the single-sample runs.

* Figs 5–7 (from the aggregated metrics): violins of the 27 cell RMSE ratios, counts (left) and
  mean salaries (right); each cell's ratio is its mean over the study's samples (with one sample,
  the paper's figure). Fig. 5: FBS, FBP and Laplace at m = 3, Δ = 1.8 (ε = 10.8); Figs 6–7: FBS
  and FBP at m = 1, 3, 5 for Δ = 1.8 and 3.4, with the red dashed line at 1.
* Figs 3, 4, 8, 9 (record level): drawn from **replicate 0 of the study's profile=paper sweep**,
  "the selected sample", replayed with the sweep's own random streams (``selected_sample``:
  same root seed, block, data, prepare and release streams, so the same sample, fits and
  synthetic sets as the sweep's replicate 0). Fig. 3: violins of the record-level Lipschitz
  bounds of the unweighted fit (Δ_i) and of the tuned α-weighted fit (Δ_{α,i}), FBS | FBP, at
  Δ = 1.8. Fig. 4: salary against weight, the confidential sample | FBS synthetic salary with
  smoothed weights | FBP's. Figs 8 (FBS) and 9 (FBP): the confidential sample | one synthetic set
  with the synthesized weights | the same set with the smoothed weights.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from harness import rng as rng_mod
from harness.data import RecordBatch
from harness.synthesizers import make_synthesizer

from ..mc.study import ESTIMANDS
from .claims import MS, SYNTHS

STUDY = "hu_savitsky_williams_single"
#: the profile whose sweep's replicate 0 the record-level figures replay
REPLAY_PROFILE = "paper"
COLORS = {"ori": "tab:green", "FBS": "goldenrod", "FBP": "tab:blue", "Laplace": "tab:red"}
KIND_TITLES = {"count": "counts", "mean": "average salary"}


def cell_ratios(metrics: pd.DataFrame, method: str, kind: str, m: int, delta: float):
    """The 27 cell RMSE ratios of a table (mean over samples), as an array."""
    names = [f"rmse_ratio_{e}" for e in ESTIMANDS if e.startswith(kind + "_")]
    sel = ((metrics["method"] == method) & (metrics["m"] == m)
           & np.isclose(metrics["privacy"], delta) & metrics["metric"].isin(names))
    return metrics.loc[sel, "value"].to_numpy(float)


def _canvas(n_cols: int, width: float = 4.2, height: float = 3.6, title: str = ""):
    fig = Figure(figsize=(width * n_cols, height))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, n_cols, squeeze=False)[0]
    if title:
        fig.suptitle(title, fontsize=10)
    return fig, axes


def _violins(ax, groups: list[tuple[str, np.ndarray]], colors: list[str]):
    data = [g[1] for g in groups]
    if not data or not all(len(d) for d in data):
        return False
    parts = ax.violinplot(data, showmedians=True)
    for body, color in zip(parts["bodies"], colors, strict=True):
        body.set_facecolor(color)
        body.set_alpha(0.6)
    ax.set_xticks(np.arange(1, len(groups) + 1), [g[0] for g in groups], fontsize=8)
    return True


def figure5(metrics: pd.DataFrame):
    """Fig. 5: RMSE ratios of FBS, FBP and Laplace (m = 3, Δ = 1.8, ε = 10.8)."""
    methods = [m for m in (*SYNTHS, "Laplace") if m in set(metrics["method"])]
    fig, axes = _canvas(2, title="Hu, Savitsky & Williams Figure 5: RMSE ratios at ε = 10.8 "
                        "(m = 3, Δ = 1.8; mean over samples per cell)")
    for ax, kind in zip(axes, ("count", "mean"), strict=True):
        groups = [(m, cell_ratios(metrics, m, kind, 1 if m == "Laplace" else 3, 1.8))
                  for m in methods]
        if not _violins(ax, groups, [COLORS[m] for m in methods]):
            return None
        ax.set_yscale("log")
        ax.axhline(1.0, color="red", linestyle="--", linewidth=0.8)
        ax.set_title(KIND_TITLES[kind], fontsize=10)
        ax.set_ylabel("RMSE ratio (method / sample)")
    return fig


def _by_m(delta: float, number: int):
    def draw(metrics: pd.DataFrame):
        fig, axes = _canvas(2, width=5.0, title=f"Hu, Savitsky & Williams Figure {number}: RMSE "
                            f"ratios by m at Δ = {delta} (ε = "
                            + ", ".join(f"{2 * delta * m:g}" for m in MS) + ")")
        for ax, kind in zip(axes, ("count", "mean"), strict=True):
            groups, colors = [], []
            for m in MS:
                for method in SYNTHS:
                    groups.append((f"{method}\nm={m}", cell_ratios(metrics, method, kind, m,
                                                                   delta)))
                    colors.append(COLORS[method])
            if not _violins(ax, groups, colors):
                return None
            ax.axhline(1.0, color="red", linestyle="--", linewidth=0.8)
            ax.set_title(KIND_TITLES[kind], fontsize=10)
            ax.set_ylabel("RMSE ratio (method / sample)")
        return fig
    return draw


# --- the selected sample (replicate 0 of the paper sweep), replayed --------------------------


@dataclass(frozen=True)
class SelectedSample:
    """Replicate 0 of a sweep: the confidential salaries and weights, and per synthesizer the
    record risks of the unweighted fit, the record bounds of the tuned fit, and the first
    synthetic set's salaries with its synthesized and smoothed weights."""

    salary: np.ndarray
    weights: np.ndarray
    cells: np.ndarray  # field × gender cell codes (field-major)
    risk: dict
    record_bounds: dict
    synthetic_salary: dict
    synthesized_weights: dict
    smoothed_weights: dict
    realised: dict


def _first_replicate(batch: RecordBatch) -> RecordBatch:
    return RecordBatch(batch.values[:1], None, 1, batch.columns, batch.weights[:1],
                       batch.strata[:1], batch.schema)


@functools.lru_cache(maxsize=2)
def selected_sample(profile: str = "paper", delta: float = 1.8, seed: int | None = None):
    """Replay replicate 0 of the study's sweep at ``profile`` (root ``seed``: the config's by
    default) with the sweep's own streams: the block-0 data of the profile's block (replicate 0
    is its first row), FBS's and FBP's prepare streams, and their release streams at Δ = ``delta``
    (the first draw of which seeds the tuning, as in the release)."""
    from harness import config
    from harness.engine.grid import expand_grid, scenario_key
    from harness.engine.study import load_study

    cfg = config.load([f"study={STUDY}", f"profile={profile}"]
                      + ([] if seed is None else [f"seed={seed}"]))
    study = load_study(cfg["study"])
    scenario = dict(expand_grid(study.grid_axes())[0])
    key, root = scenario_key(scenario), int(cfg["seed"])
    block = study.generate(scenario, rng_mod.data_stream(root, study.name, key, 0),
                           min(int(cfg["block_size"]), int(cfg["n_replicates"])))
    data = _first_replicate(block)
    out = {k: {} for k in ("risk", "record_bounds", "synthetic_salary", "synthesized_weights",
                           "smoothed_weights", "realised")}
    salary = data.columns.index("salary")
    for label in SYNTHS:
        name, params = study.roster_entry(label)
        params.setdefault("outcome", "salary")
        synth = make_synthesizer(name, **params)
        prepared = synth.prepare(data, rng_mod.prepare_stream(root, study.name, key, 0, label))
        stream = rng_mod.method_stream(root, study.name, key, 0, label, delta)
        tuned = synth.tune(prepared[0], delta, int(stream.integers(2**63)))
        out["risk"][label] = prepared[0].risk
        out["record_bounds"][label] = tuned.record_bounds
        out["realised"][label] = tuned.bound
        for kind in ("smoothed", "synthesized"):
            other = make_synthesizer(name, **dict(params, released_weights=kind))
            rel = other.release(data, delta, rng_mod.method_stream(root, study.name, key, 0,
                                                                   label, delta),
                                prepared=prepared)
            out[f"{kind}_weights"][label] = rel.sets.weights[0, 0]
            out["synthetic_salary"][label] = rel.sets.values[0, 0, :, salary]
    codes = data.values[0].astype(np.int64)
    cells = codes[:, data.columns.index("field")] * 2 + codes[:, data.columns.index("gender")]
    return SelectedSample(data.values[0, :, salary], data.weights[0], cells, **out)


def figure3(metrics=None):
    s = selected_sample(REPLAY_PROFILE)
    fig, axes = _canvas(2, title="Hu, Savitsky & Williams Figure 3: record-level Lipschitz "
                        "bounds, unweighted and weighted (Δ = 1.8; replicate 0)")
    for ax, label in zip(axes, SYNTHS, strict=True):
        _violins(ax, [("unweighted", s.risk[label]), ("weighted", s.record_bounds[label])],
                 ["0.6", COLORS[label]])
        ax.set_title(f"{label}: max {s.risk[label].max():.2f} -> {s.realised[label]:.2f}",
                     fontsize=10)
        ax.set_ylabel("record Lipschitz bound")
    return fig


def _scatter(ax, salary, weights, color, title):
    ax.scatter(weights, salary / 1000, s=4, alpha=0.5, color=color, linewidths=0)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("weight")


def figure4(metrics=None):
    s = selected_sample(REPLAY_PROFILE)
    fig, axes = _canvas(3, width=3.6, title="Hu, Savitsky & Williams Figure 4: salary against "
                        "weights (replicate 0; one synthetic set)")
    _scatter(axes[0], s.salary, s.weights, COLORS["ori"], "confidential sample")
    for ax, label in zip(axes[1:], SYNTHS, strict=True):
        _scatter(ax, s.synthetic_salary[label], s.smoothed_weights[label], COLORS[label],
                 f"{label}: synthetic salary, smoothed weights")
    axes[0].set_ylabel("salary (thousands)")
    for ax in axes[1:]:
        ax.sharex(axes[0])
        ax.sharey(axes[0])
    return fig


def _appendix(label: str, number: int):
    def draw(metrics=None):
        s = selected_sample(REPLAY_PROFILE)
        fig, axes = _canvas(3, width=3.6, title=f"Hu, Savitsky & Williams Figure {number}: "
                            f"salary against weights for {label} (replicate 0)")
        _scatter(axes[0], s.salary, s.weights, COLORS["ori"], "confidential sample")
        _scatter(axes[1], s.synthetic_salary[label], s.synthesized_weights[label],
                 COLORS[label], "synthesized weights")
        _scatter(axes[2], s.synthetic_salary[label], s.smoothed_weights[label], COLORS[label],
                 "smoothed weights")
        axes[0].set_ylabel("salary (thousands)")
        return fig
    return draw


FIGURES = {
    "figure3_lipschitz": figure3,
    "figure4_weights": figure4,
    "figure5_rmse_ratios": figure5,
    "figure6_rmse_ratios_delta1.8": _by_m(1.8, 6),
    "figure7_rmse_ratios_delta3.4": _by_m(3.4, 7),
    "figure8_fbs_weights": _appendix("FBS", 8),
    "figure9_fbp_weights": _appendix("FBP", 9),
}
