"""Claim helpers shared by the hold-out studies of Bi & Shen (S5 linear regression, S3 Gaussian
graphical model). Each reads a tidy frame of our cells (``method``, ``holdout`` — NaN for the
methods that do not read it —, ``epsilon``, ``value`` (the mean over replicates), ``mcse``, and
the study's own keys) and decides against Monte Carlo error (:func:`harness.claims.decide`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.claims import ClaimResult, all_of, count_verdicts, decide, decide_cells

from .tables import pooled_mean, ratio_se


def by(o: pd.DataFrame, method: str) -> pd.DataFrame:
    return o[o["method"] == method]


def _sum_se(s: pd.Series) -> float:
    return float(np.sqrt((s ** 2).sum()) / len(s))


def mean_over_epsilon(d: pd.DataFrame, keys: list[str]) -> tuple[pd.Series, pd.Series]:
    """Mean of ``value`` over ε per ``keys`` and its MCSE sqrt(Σ se²)/k (independent cells)."""
    g = d.groupby(keys)
    return g["value"].mean(), g["mcse"].apply(_sum_se)


def pooled_deviation(num: pd.DataFrame, den: pd.DataFrame):
    """num/den − 1 per cell (frames indexed alike), its mean over the cells and that mean's
    MCSE: (deviations, mean, mcse)."""
    dev = num["value"] / den["value"] - 1
    se = ratio_se(num["value"], den["value"], num["mcse"], den["mcse"])
    mean, mse = pooled_mean(dev, se)
    return dev, mean, mse


def dip_flat_eps(o: pd.DataFrame, keys: list[str], tol: float = 0.10,
                 high: float = 4.0) -> ClaimResult:
    """"DIP is insensitive to ε": DIP(ε = 1)/DIP(ε = ``high``) − 1, averaged over the cells
    ``keys`` (hold-out included), lies within ±``tol``."""
    d = by(o, "DIP").set_index([*keys, "epsilon"])
    dev, mean, mse = pooled_deviation(d.xs(1.0, level="epsilon"), d.xs(high, level="epsilon"))
    return ClaimResult(decide(abs(mean), tol, mse, above=False),
                       f"mean over {len(dev)} cells of DIP(ε=1)/DIP(ε={high:g}) − 1: "
                       f"{mean:+.3f} ± "
                       f"{mse:.3f} (insensitive: |·| <= {tol:.2f}); largest |cell| "
                       f"{dev.abs().max():.3f}")


def ratio_cells(o: pd.DataFrame, competitors, on: list[str], factor: float,
                column: str = "value", se_column: str = "mcse"):
    """Each competitor's ``column`` over DIP's in the same cell (``on`` + ε; every DIP hold-out
    share), decided against ``factor``: (cell verdicts, one text per competitor)."""
    dip = by(o, "DIP")
    parts, lows = [], []
    for comp in competitors:
        c = by(o, comp)[[*on, column, se_column]]
        j = dip.merge(c, on=on, suffixes=("_dip", ""))
        ratio = j[column] / j[f"{column}_dip"]
        se = ratio_se(j[column], j[f"{column}_dip"], j[se_column], j[f"{se_column}_dip"])
        parts += decide_cells(ratio, se, factor)
        lows.append(f"{comp}/DIP min {ratio.min():.1f} ± {se[ratio.idxmin()]:.1f}")
    return parts, lows


def competitors_tradeoff(o: pd.DataFrame, competitors, keys: list[str],
                         cells: str) -> ClaimResult:
    """"The competitors lose accuracy as ε decreases": each competitor's error at ε = 1 above
    that at ε = 4 in every cell of ``keys`` (named ``cells`` in the evidence)."""
    parts, text = [], []
    for comp in competitors:
        c = by(o, comp).set_index([*keys, "epsilon"])
        e1, e4 = c.xs(1.0, level="epsilon"), c.xs(4.0, level="epsilon")
        parts += decide_cells(e1["value"] - e4["value"], np.hypot(e1["mcse"], e4["mcse"]), 0.0)
        r = e1["value"] / e4["value"]
        text.append(f"{comp} ε=1/ε=4 ratio {float(r.min()):.2f}–{float(r.max()):.2f}")
    return ClaimResult(all_of(*parts), "; ".join(text) + f" (ε=1 above ε=4 in every {cells}: "
                       f"{count_verdicts(parts)})")


def dip_holdout(o: pd.DataFrame, group: list[str], larger_is_better: bool = True,
                digits: int = 3) -> ClaimResult:
    """"DIP improves as the hold-out share grows": DIP's error averaged over ε decreases at
    every step 15 → 25 → 35 % within each cell of ``group`` (increases, when not
    ``larger_is_better``: R3's "better with a smaller hold-out")."""
    mean, se = mean_over_epsilon(by(o, "DIP"), [*group, "holdout"])
    parts, text = [], []
    for key, m in mean.groupby(level=group):
        key = key if isinstance(key, tuple) else (key,)
        m, s = m.droplevel(group), se.xs(key, level=group)
        hs = sorted(m.index)
        for a, b in zip(hs, hs[1:], strict=False):
            step = m[a] - m[b] if larger_is_better else m[b] - m[a]
            parts.append(decide(step, 0.0, float(np.hypot(s[a], s[b]))))
        label = ",".join(f"{k}={v}" for k, v in zip(group, key, strict=True))
        text.append(f"{label}: " + (" > " if larger_is_better else " < ").join(
            f"{m[h]:.{digits}g}" for h in hs))
    return ClaimResult(all_of(*parts), "DIP mean over ε by hold-out 15/25/35 %: "
                       + "; ".join(text) + f" (each step decided: {count_verdicts(parts)})")
