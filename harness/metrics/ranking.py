"""Rank tables of methods over several metrics (e.g. Bowen, Liu & Su, Table 3; spec 003 §5.6):
within each block (e.g. one privacy level), every metric ranks the methods, best = 1, ties
sharing the smallest rank ("1, 2, 2, 4"); the overall score is the sum of a method's ranks,
lower is better."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import allowed

DIRECTIONS = ("min", "max")


def rank_table(metrics: pd.DataFrame, directions: Mapping[str, str], *,
               by: Sequence[str] = (), ties: str = "min",
               decimals: int | None = None) -> pd.DataFrame:
    """Ranks of the rows of ``metrics`` (one row per method and block) on each metric column of
    ``directions`` (column → ``min`` if lower is better, ``max`` if higher is better), within
    the groups of the ``by`` columns. Returns ``metrics`` with a ``<metric>_rank`` column per
    metric and ``overall`` (the sum of the ranks). ``decimals`` rounds the values before
    ranking (ties as a printed table shows them); a missing value ranks last."""
    for name, d in directions.items():
        if d not in DIRECTIONS:
            raise allowed(f"directions.{name}", d, DIRECTIONS)
        if name not in metrics.columns:
            raise allowed("directions", name, list(metrics.columns))
    out = metrics.copy()
    rank_cols = []
    for name, d in directions.items():
        values = out[name] if decimals is None else out[name].round(decimals)
        col = values if not by else values.groupby([out[b] for b in by], sort=False)
        out[f"{name}_rank"] = col.rank(method=ties, ascending=(d == "min"),
                                       na_option="bottom").astype(int)
        rank_cols.append(f"{name}_rank")
    out["overall"] = out[rank_cols].sum(axis=1)
    return out


def mc_rank_bounds(metrics: pd.DataFrame, directions: Mapping[str, str], *,
                   by: Sequence[str] = (), z: float = 2.0) -> pd.DataFrame:
    """The ranks of :func:`rank_table` decided against Monte Carlo error: ``metrics`` holds, per
    metric column of ``directions``, its Monte Carlo SE in ``<metric>_mcse`` (NaN read as 0).
    Two methods differ on a metric when their values differ by more than ``z`` times the SE of
    the difference (sqrt of the sum of the squared SEs); within it their order is open. A
    method's best rank is 1 + the number of methods clearly better (an open pair ranks as a
    tie, sharing the smaller rank, as :func:`rank_table`'s ``ties="min"``), its worst rank adds
    the open pairs whose values are not exactly equal. Returns ``metrics`` with
    ``<metric>_rank_lo``/``_rank_hi`` and ``overall_lo``/``overall_hi`` (their sums); with
    every SE 0 the lo ranks are :func:`rank_table`'s. A missing value ranks last."""
    for name, d in directions.items():
        if d not in DIRECTIONS:
            raise allowed(f"directions.{name}", d, DIRECTIONS)
        for col in (name, f"{name}_mcse"):
            if col not in metrics.columns:
                raise allowed("directions", col, list(metrics.columns))
    out = metrics.copy().reset_index(drop=True)
    groups = (out.groupby(list(by), sort=False).indices.values() if by
              else [np.arange(len(out))])
    lo_cols, hi_cols = [], []
    for name, d in directions.items():
        sign = -1.0 if d == "min" else 1.0
        lo = np.ones(len(out), dtype=int)
        hi = np.ones(len(out), dtype=int)
        for idx in groups:
            v = sign * out[name].to_numpy(float)[idx]
            se = np.nan_to_num(out[f"{name}_mcse"].to_numpy(float)[idx])
            v = np.where(np.isnan(v), -np.inf, v)  # missing: worse than any value
            diff = v[None, :] - v[:, None]  # [i, j] > 0: j better than i
            tol = z * np.hypot(se[:, None], se[None, :])
            clear = (diff > tol) & (diff > 0)
            open_ = ~clear & (diff.T <= tol) & (diff != 0)
            np.fill_diagonal(open_, False)
            lo[idx] = 1 + clear.sum(axis=1)
            hi[idx] = lo[idx] + open_.sum(axis=1)
        out[f"{name}_rank_lo"], out[f"{name}_rank_hi"] = lo, hi
        lo_cols.append(f"{name}_rank_lo")
        hi_cols.append(f"{name}_rank_hi")
    out["overall_lo"] = out[lo_cols].sum(axis=1)
    out["overall_hi"] = out[hi_cols].sum(axis=1)
    return out
