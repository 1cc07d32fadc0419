"""Rank tables of methods over several metrics (e.g. Bowen, Liu & Su, Table 3; spec 003 §5.6):
within each block (e.g. one privacy level), every metric ranks the methods, best = 1, ties
sharing the smallest rank ("1, 2, 2, 4"); the overall score is the sum of a method's ranks,
lower is better."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
