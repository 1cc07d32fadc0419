"""Claims of the worked example, each decided against its Monte Carlo error
(``harness.claims.decide``): PASS or FAIL only when the statistic clears its threshold by two
MCSEs, UNDECIDED otherwise."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.claims import Claim, ClaimResult, all_of, decide


def _cells(mx: pd.DataFrame, method: str, metric: str, **where) -> pd.DataFrame:
    sel = (mx["method"] == method) & (mx["metric"] == metric)
    for key, value in where.items():
        sel &= mx[key] == value
    return mx[sel]


def _ori_covers(mx):
    c = _cells(mx, "Ori", "coverage")
    c = c[c["n_per_stratum"] == c["n_per_stratum"].max()]
    parts = [decide(abs(r.value - 0.95), 0.025, r.mcse, above=False) for r in c.itertuples()]
    worst = c.loc[(c["value"] - 0.95).abs().idxmax()]
    return ClaimResult(all_of(*parts), f"{len(c)} cells; farthest from 0.95: {worst.value:.3f} "
                                       f"± {worst.mcse:.3f} ({worst.estimand}, {worst.scenario})")


def _exp_biased(mx):
    b = _cells(mx, "ExpSynth", "bias", m=5).assign(abs_bias=lambda d: d["value"].abs())
    worst = b.loc[b.groupby(["scenario", "privacy"])["abs_bias"].idxmax()]  # per cell
    parts = [decide(r.abs_bias, 0.02, r.mcse) for r in worst.itertuples()]
    least = worst.loc[worst["abs_bias"].idxmin()]
    return ClaimResult(all_of(*parts), f"largest |bias| of the shares, smallest over "
                                       f"{len(worst)} cells: {least.abs_bias:.4f} ± "
                                       f"{least.mcse:.4f} ({least.estimand}; > 0.02)")


def _more_sets_less_spread(mx):
    e = _cells(mx, "ExpSynth", "emp_se")
    one = e[e["m"] == 1].set_index(["scenario", "privacy", "estimand"])
    five = e[e["m"] == 5].set_index(["scenario", "privacy", "estimand"])
    ratio = five["value"] / one["value"]
    # the mean ratio over the cells, with the delta-method MCSE of a ratio of independent
    # estimates (conservative: the m = 1 and m = 5 pools share their first set)
    se = ratio * np.sqrt((one["mcse"] / one["value"]) ** 2 + (five["mcse"] / five["value"]) ** 2)
    mean, mean_se = ratio.mean(), np.sqrt((se ** 2).sum()) / len(ratio)
    return ClaimResult(decide(mean, 1.0, mean_se, above=False),
                       f"mean emp. SE ratio m = 5 / m = 1 over {len(ratio)} cells: {mean:.3f} ± "
                       f"{mean_se:.3f} (< 1)")


def _model_learns(mx):
    a = _cells(mx, "PrivMode", "holdout_accuracy")
    parts, text = [], []
    for scenario, cells in a.groupby("scenario"):
        lo, hi = cells.loc[cells["privacy"].idxmin()], cells.loc[cells["privacy"].idxmax()]
        parts.append(decide(hi.value - lo.value, 0.0, np.hypot(hi.mcse, lo.mcse)))
        text.append(f"{scenario}: {lo.value:.3f} -> {hi.value:.3f}")
    return ClaimResult(all_of(*parts), "; ".join(text))


CLAIMS = [
    Claim("ori-covers", "At the larger sample size, the original data's intervals cover the "
          "population shares at 95 % (within 0.025)", _ori_covers, ("Ori",)),
    Claim("exp-biased", "Drawing records by the exponential mechanism on stratum counts biases "
          "the shares at every ε_draw of the grid (largest |bias| > 0.02, m = 5)", _exp_biased,
          ("ExpSynth",)),
    Claim("nested-m", "Pooling 5 synthetic sets instead of 1 lowers the estimates' empirical SE",
          _more_sets_less_spread, ("ExpSynth",)),
    Claim("model-learns", "The private modal model predicts held-out outcomes better at the "
          "largest ε_draw than at the smallest", _model_learns, ("PrivMode",)),
]
