"""Tables of ParaEst. The paper draws the study (Figure ParaEst) and prints only the improvement
range of LRM, OPM and EXM over DIP, so the study prints its full grid (S1's grid over n at
ε = 1: mean, SD, MCSE and 100·(competitor − DIP)/DIP) and our improvement range per competitor,
and over the paper's three competitors together, beside the paper's quoted range."""

from __future__ import annotations

import pandas as pd

from harness.paper import Table

from ..known_f.tables import METRIC, grid, ranges
from ..paper_numbers import PARAEST_IMPROVEMENT_PCT
from ..tables import tidy

#: the competitors the paper's range covers (App.: "LRM, OPM, and EXM")
COMPETITORS = ("LRM", "OPM", "EXM")
KEYS = ("dist", "n")
#: the row of :func:`quoted` that pools the paper's three competitors
POOLED = "+".join(COMPETITORS)


def paraest_grid(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per (dist, n, method) at ε = 1: ours, ours_sd, mcse, realised ε, DIP's improvement (%)."""
    return grid(metrics, METRIC["s1"], realised=True, keys=KEYS)


def quoted(metrics: pd.DataFrame) -> pd.DataFrame:
    """Our error range and our range of DIP's improvement per competitor over the 80 (dist, n)
    cells, and over LRM, OPM and EXM together (row ``LRM+OPM+EXM``), beside the paper's one
    quoted range (its competitors' rows only)."""
    g = paraest_grid(metrics)
    pooled = g[g["method"].isin(COMPETITORS)].assign(method=POOLED)
    impr = {m: PARAEST_IMPROVEMENT_PCT for m in (*COMPETITORS, POOLED)}
    return ranges(pd.concat([g, pooled], ignore_index=True), {}, impr)


TABLES = {"grid": Table(lambda mx: tidy(paraest_grid(mx)), reads=("metrics",)),
          "quoted_ranges": Table(lambda mx: tidy(quoted(mx)), reads=("metrics",))}
