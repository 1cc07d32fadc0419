"""The CPS study's tables (spec 003 §4.2, §5.6, §7.3–§7.4, §9.4): Tables 1–2 of the original
data, Table 3 (the eight utility measures with their ranks and overall scores per log ε,
beside the paper's printed values, ranks and scores) and the appendix cross-tabs of p-value
categories (Tables 4–9, repetition 1, beside the paper's).

Table 3 ranks the paper's six methods, with the paper-era PrivBayes (``PrivBayes-DS2019``, the
code the paper ran) in PrivBayes's place; the DP ``PrivBayes`` (``correct``) is listed below
them, unranked. Our values are means over the repetitions (spec A8); a metric a profile did not
compute (SPECKS at profile=ci for some methods) is missing and ranks last."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness import config
from harness.engine.study import load_study
from harness.metrics.ranking import rank_table
from harness.paper import Table

from .. import cps
from .. import paper_numbers as pn
from .study import CR_NAMES, P_CATEGORIES

#: roster label -> Table 3's method name
PAPER_NAME = {"FlatLaplace": "flat Laplace", "PrivBayes-DS2019": "PrivBayes", "UH-2": "UH mod-2",
              "UH-3": "UH mod-3", "STEPS-2": "STEPS-2", "STEPS-3": "STEPS-3"}
#: Table 3's columns -> our metric names
METRIC_OF = {"KS": "specks", "CR1": CR_NAMES[0], "CR5": CR_NAMES[1], "CR10": CR_NAMES[2],
             "CIall": "ci_all", "Prereg": "ci_prereg", "Reg": "ci_reg", "PxR": "ci_pxr"}
DIRECTIONS = {m: ("min" if m in pn.LOWER_IS_BETTER else "max") for m in pn.METRICS}


def _wide(mx: pd.DataFrame, value: str = "value", suffix: str = "") -> pd.DataFrame:
    """One row per (log ε, method), one column per Table 3 metric (``<metric><suffix>``) holding
    the metrics' ``value`` column (the mean, or its ``mcse``)."""
    d = mx[mx["metric"].isin(list(METRIC_OF.values()))]
    w = d.pivot_table(index=["log_epsilon", "method"], columns="metric", values=value,
                      aggfunc="first")
    w = w.reindex(columns=list(METRIC_OF.values()))
    w.columns = [f"{m}{suffix}" for m in METRIC_OF]
    return w.reset_index()


def wide_with_mcse(mx: pd.DataFrame) -> pd.DataFrame:
    """Table 3's metrics per (log ε, method) with their Monte Carlo SEs (``<metric>_mcse``)."""
    return _wide(mx).merge(_wide(mx, "mcse", "_mcse"), on=["log_epsilon", "method"],
                          how="left")


def table_3(mx: pd.DataFrame) -> pd.DataFrame:
    """Ours (values rounded to 3 decimals, ranks, score) beside the paper's (``paper_*``)."""
    w = _wide(mx)
    w["log_epsilon"] = w["log_epsilon"].round(6)
    ranked = w[w["method"].isin(list(PAPER_NAME))].copy()
    ranked = rank_table(ranked, DIRECTIONS, by=["log_epsilon"], decimals=3)
    extra = w[~w["method"].isin(list(PAPER_NAME))].copy()
    out = pd.concat([ranked, extra], ignore_index=True)
    for metric in pn.METRICS:
        out[f"paper_{metric}"] = np.nan
        out[f"paper_{metric}_rank"] = np.nan
    out["paper_score"] = np.nan
    for i, row in out.iterrows():
        key = (int(round(row["log_epsilon"])), PAPER_NAME.get(row["method"], ""))
        printed = pn.TABLE_3.get(key)
        if printed is None:
            continue
        for metric in pn.METRICS:
            out.loc[i, f"paper_{metric}"] = printed["values"][metric]
            out.loc[i, f"paper_{metric}_rank"] = printed["ranks"][metric]
        out.loc[i, "paper_score"] = printed["score"]
    cols = ["log_epsilon", "method"]
    for metric in pn.METRICS:
        cols += [metric, f"{metric}_rank", f"paper_{metric}", f"paper_{metric}_rank"]
    cols += ["overall", "paper_score"]
    out = out.reindex(columns=cols)
    for metric in pn.METRICS:
        out[metric] = out[metric].round(3)
    return out.sort_values(["log_epsilon", "method"]).reset_index(drop=True)


def crosstabs(replicate_metrics: pd.DataFrame) -> pd.DataFrame:
    """Repetition 1's 4×4 cross-tab (original p-value category × synthetic) per method and log ε,
    one row per original category, beside the paper's row (Tables 4–9), and the consistency
    count (diagonal sum)."""
    rm = replicate_metrics[(replicate_metrics["replicate"] == 0)
                           & replicate_metrics["metric"].str.startswith("xtab_")]
    rows = []
    for (log_eps, method), g in rm.groupby(["log_epsilon", "method"], sort=True):
        v = dict(zip(g["metric"], g["value"], strict=True))
        cells = np.array([[v[f"xtab_{o}_{s}"] for s in P_CATEGORIES] for o in P_CATEGORIES])
        paper = pn.CROSSTABS.get((PAPER_NAME.get(method, ""), int(round(log_eps))))
        for i, o in enumerate(P_CATEGORIES):
            rows.append({"log_epsilon": round(float(log_eps), 6), "method": method,
                         "original": o, **{s: int(cells[i, j])
                                           for j, s in enumerate(P_CATEGORIES)},
                         "paper": "" if paper is None else ",".join(map(str, paper[i])),
                         "consistency_count": int(np.trace(cells)),
                         "paper_count": np.nan if paper is None else
                         int(sum(paper[k][k] for k in range(4)))})
    return pd.DataFrame(rows)


TABLES = {"table_3": Table(table_3, reads=("metrics",)),
          "crosstabs": Table(crosstabs, reads=("replicate_metrics",))}


# --- Tables 1 and 2 (§4.2): the original data beside the paper's, a report Computation that
# reads the study's config, not a sweep (on the stand-in they show how close the generator comes
# to what the paper describes; with study.data_csv they describe the real file)

DATA_TABLES = "steps_cps_data"
DATA_SETTINGS = {"study": "steps_cps", "profile": "paper"}


def original_codes(settings=DATA_SETTINGS) -> np.ndarray:
    """The study's original data (the stand-in drawn from its seed, or the user's CSV)."""
    cfg = config.load([f"study={settings['study']}", f"profile={settings['profile']}"])
    study = load_study(cfg["study"])
    return study.original_codes(int(cfg["study"]["grid"]["n"][0]))


def table_1(codes: np.ndarray) -> pd.DataFrame:
    """Per attribute and level: the paper's printed percentage and ours (binary attributes by
    their "yes" share; income by the min, median and max of its 14 level shares, all the paper
    prints)."""
    rows = []
    for name in cps.ORDER:
        share = 100 * np.bincount(codes[:, cps.COL[name]], minlength=len(cps.LEVELS[name]))
        share = share / codes.shape[0]
        if name in pn.TABLE_1_YES:
            rows.append((name, "yes", pn.TABLE_1_YES[name], share[1]))
        elif name == "income":
            ours = {"min": share.min(), "median": np.median(share), "max": share.max()}
            rows += [(name, f"{k} of 14 levels", v, ours[k]) for k, v in pn.TABLE_1_INCOME.items()]
        else:
            paper = {"age": pn.TABLE_1_AGE, "lor": pn.TABLE_1_LOR}[name]
            rows += [(name, str(level), p, o)
                     for level, p, o in zip(cps.LEVELS[name], paper, share, strict=True)]
    out = pd.DataFrame(rows, columns=["attribute", "level", "paper %", "ours %"])
    out["ours − paper"] = out["ours %"] - out["paper %"]
    return out.round(2)


def table_2(codes: np.ndarray) -> pd.DataFrame:
    """Cells of the 15-way table (without the structural zero voted & not registered) by their
    number of records: the paper's counts and shares beside ours."""
    levels = [len(v) for v in cps.LEVELS.values()]
    radix = np.r_[np.cumprod(levels[::-1])[::-1][1:], 1]
    _, sizes = np.unique(codes.astype(np.int64) @ radix, return_counts=True)
    n_cells = pn.N_CELLS
    ours = {0: n_cells - sizes.size, **{k: int((sizes == k).sum()) for k in range(1, 6)},
            ">5": int((sizes > 5).sum())}
    rows = [(str(k), pn.TABLE_2_CELLS[k], 100 * pn.TABLE_2_CELLS[k] / n_cells, ours[k],
             100 * ours[k] / n_cells) for k in pn.TABLE_2_CELLS]
    return pd.DataFrame(rows, columns=["cell size", "paper cells", "paper %", "ours cells",
                                       "ours %"]).round(3)


def data_tables(settings=DATA_SETTINGS) -> dict[str, pd.DataFrame]:
    codes = original_codes(settings)
    return {"table_1": table_1(codes), "table_2": table_2(codes)}
