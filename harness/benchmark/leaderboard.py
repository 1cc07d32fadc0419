"""The benchmark's leaderboard (issue 24 item 5): headline metrics per study, ranks decided
against Monte Carlo error, and an overall score as the sum of per-study ranks (the rule of
Bowen, Liu & Su's STEPS paper, Table 3: rank the methods per criterion, sum the ranks).

Rows (``COLUMNS``): one per (study, scenario, realised ε, method, metric), where a metric
of an interval estimand is ``<metric>:<estimand>``:

* interval estimands: ``coverage``, ``coverage_error`` = |coverage − 0.95|, and CI width and
  RMSE relative to the study's original-data method (``width_rel``, ``rmse_rel``; ``width``
  and ``rmse`` when the study has none). The MCSE of a ratio is the numerator's MCSE over the
  Ori value (Ori's own MCSE is left out);
* metric studies: their declared headline metrics (``benchmark.headline``: name → ``lower``
  or ``higher`` is better).

Ranks: within one cell (study, scenario, realised ε, metric) the private methods are ranked
(methods with nested m at each ε they reach; only cells holding a benchmarked method);
method a is better than b when its value is better by more than 2 combined Monte Carlo SEs,
|a − b| > 2·√(MCSE_a² + MCSE_b²), and a method's rank is 1 + the number of methods better than
it (so methods within 2 MCSE of each other tie). ``coverage`` itself is not ranked (its error
is), nor are non-private baselines. A study's rank of a method is its place (1 = best, ties
share the smaller place) by its mean cell rank over the study's ranked cells; the overall score
of a benchmarked method is the sum of its study ranks over the studies every benchmarked method
was ranked on (a sum of ranks compares methods over the same studies only).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: the files a benchmark writes (and ``--collect`` commits, ``--merge`` updates)
FILES = ("leaderboard.csv", "study_ranks.csv", "scores.csv", "skipped.csv", "timings.csv",
         "interface.csv")
COLUMNS = ["paper", "study", "scenario", "epsilon", "relation", "method", "metric", "value",
           "mcse", "rank"]
#: the nominal level every interval's coverage is judged against
NOMINAL = 0.95
#: a difference is a difference when it exceeds this many combined Monte Carlo SEs
TIE_MCSE = 2.0
#: interval metrics that are ranked, and their direction
INTERVAL_RANKED = {"coverage_error": "lower", "width_rel": "lower", "rmse_rel": "lower",
                   "width": "lower", "rmse": "lower"}


def _release_rows(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per method, scenario, realised ε, estimand and metric: a method that pools
    nested m sets (rows per m at their own realised ε) keeps every ε it reaches, and at one ε
    its largest m (e.g. m draws of one fitted model, all at the model's ε)."""
    if "m" not in metrics or metrics.empty:
        return metrics
    keys = [k for k in ("method", "scenario", "epsilon", "estimand", "metric") if k in metrics]
    return metrics.sort_values("m", kind="stable").drop_duplicates(keys, keep="last")


def study_rows(metrics: pd.DataFrame, *, paper: str, study: str, original: str | None,
               headline: dict | None, relations: dict[str, str]) -> pd.DataFrame:
    """Leaderboard rows (``COLUMNS`` without rank, plus ``privacy`` and ``direction``) of one
    study's aggregated metrics (``metrics.parquet``)."""
    m = _release_rows(metrics)
    out = []
    interval = m[m["metric"].isin(["coverage", "width", "rmse"])].copy()
    if not interval.empty:
        keys = ["scenario", "estimand", "metric"]
        ori = (interval[interval["method"] == original].set_index(keys)["value"]
               if original else None)
        for name, part in interval.groupby("metric"):
            part = part.copy()
            if name == "coverage":
                out.append(part.assign(metric="coverage", direction=None))
                out.append(part.assign(metric="coverage_error", value=(part["value"] - NOMINAL)
                                       .abs(), direction="lower"))
                continue
            if ori is not None and len(ori):
                base = ori.reindex(pd.MultiIndex.from_frame(part[keys])).to_numpy()
                with np.errstate(divide="ignore", invalid="ignore"):
                    part["value"] = part["value"].to_numpy() / base
                    part["mcse"] = part["mcse"].to_numpy() / np.abs(base)
                name = f"{name}_rel"
            out.append(part.assign(metric=name, direction="lower"))
        out = [p.assign(metric=p["metric"] + ":" + p["estimand"].astype(str)) for p in out]
    for name, direction in (headline or {}).items():
        part = m[(m["metric"] == name)]
        out.append(part.assign(direction=direction))
    if not out:
        return pd.DataFrame(columns=[*COLUMNS[:-1], "privacy", "direction"])
    rows = pd.concat(out, ignore_index=True)
    rows["paper"], rows["study"] = paper, study
    rows["relation"] = [relations.get(m, "") for m in rows["method"]]
    return rows[[*COLUMNS[:-1], "privacy", "direction"]]


def rank_cells(rows: pd.DataFrame, focus=None) -> pd.DataFrame:
    """``rows`` with ``rank``: within each (study, scenario, realised ε, metric) cell of private
    methods with a direction, 1 + the number of methods better by more than 2 combined MCSE.
    With ``focus`` (the benchmarked methods), only cells holding one of them are ranked."""
    rows = rows.copy()
    rows["rank"] = np.nan
    rows["_eps"] = rows["epsilon"].astype(float).round(10)  # one ε, however it was computed
    ranked = rows["direction"].notna() & rows["_eps"].notna() & rows["value"].notna()
    for _, cell in rows[ranked].groupby(["study", "scenario", "_eps", "metric"]):
        if focus is not None and not cell["method"].isin(focus).any():
            continue
        v = cell["value"].to_numpy(dtype=float)
        se = np.nan_to_num(cell["mcse"].to_numpy(dtype=float))
        sign = 1.0 if cell["direction"].iloc[0] == "lower" else -1.0
        with np.errstate(over="ignore", invalid="ignore"):  # an infinite MCSE: a tie
            better = (sign * (v[None, :] - v[:, None]) >
                      TIE_MCSE * np.hypot(se[None, :], se[:, None]))
        # better[i, j]: method i beats method j; rank of j = 1 + number of i beating it
        rows.loc[cell.index, "rank"] = 1 + better.sum(axis=0)
    return rows.drop(columns="_eps")


def study_ranks(rows: pd.DataFrame) -> pd.DataFrame:
    """Per study and method: mean cell rank, cells ranked, and the study rank (1 = best)."""
    ranked = rows[rows["rank"].notna()]
    if ranked.empty:
        return pd.DataFrame(columns=["paper", "study", "method", "mean_rank", "cells",
                                     "study_rank"])
    mean = (ranked.groupby(["paper", "study", "method"])["rank"].agg(["mean", "size"])
            .reset_index().rename(columns={"mean": "mean_rank", "size": "cells"}))
    mean["study_rank"] = mean.groupby("study")["mean_rank"].rank(method="min")
    return mean


def overall_scores(ranks: pd.DataFrame, focus=None) -> pd.DataFrame:
    """Per method: the sum of its study ranks (lower is better), the studies it is ranked on
    and its mean study rank, sorted best first (STEPS Table 3's rule).

    A sum of ranks compares methods only over the same studies. With ``focus`` (the
    benchmarked methods), the score of each of them is the sum over the studies on which
    every one of them is ranked (``common``), and the reference methods, which each run on
    their own study only, get no score (NaN) and are listed after them by mean study rank."""
    cols = ["method", "score", "studies", "mean_study_rank"]
    if ranks.empty:
        return pd.DataFrame(columns=cols)
    out = (ranks.groupby("method")["study_rank"].agg(["sum", "size", "mean"]).reset_index()
           .rename(columns={"sum": "score", "size": "studies", "mean": "mean_study_rank"}))
    if focus is None:
        return out.sort_values(["score", "method"]).reset_index(drop=True)[cols]
    focused = ranks[ranks["method"].isin(focus)]
    per_study = focused.groupby("study")["method"].nunique()
    n_focus = focused["method"].nunique()
    common = per_study.index[per_study == n_focus]
    score = (focused[focused["study"].isin(common)].groupby("method")["study_rank"].sum())
    out["score"] = out["method"].map(score).astype(float)
    out["_ref"] = out["score"].isna()
    out = out.sort_values(["_ref", "score", "mean_study_rank", "method"])
    return out.reset_index(drop=True)[cols]


def leaderboard(parts: list[pd.DataFrame], focus=None
                ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(leaderboard rows in ``COLUMNS`` order, study ranks, overall scores) of studies' rows;
    ``focus``: the benchmarked methods (:func:`rank_cells`)."""
    rows = rank_cells(pd.concat(parts, ignore_index=True), focus) if parts else \
        pd.DataFrame(columns=[*COLUMNS, "privacy", "direction"])
    ranks = study_ranks(rows)
    board = rows.sort_values(["paper", "study", "scenario", "epsilon", "metric", "method"],
                             na_position="first")[COLUMNS].reset_index(drop=True)
    return board, ranks, overall_scores(ranks, focus)


def summarise(board: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard averaged over the estimands of each metric (``coverage:mu`` →
    ``coverage``): per (paper, study, scenario, ε, relation, method, metric) the mean value,
    mean MCSE and mean rank, and the number of rows averaged (``cells``). The committed form of
    a benchmark (the full leaderboard of interval studies holds one row per estimand)."""
    if board.empty:
        return board.assign(cells=pd.Series(dtype=int))
    b = board.assign(metric=board["metric"].str.split(":").str[0])
    keys = ["paper", "study", "scenario", "epsilon", "relation", "method", "metric"]
    out = (b.groupby(keys, dropna=False)
           .agg(value=("value", "mean"), mcse=("mcse", "mean"), rank=("rank", "mean"),
                cells=("value", "size")).reset_index())
    return out[[*COLUMNS, "cells"]]
