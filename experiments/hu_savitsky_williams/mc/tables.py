"""Appendix F of Hu, Savitsky & Williams beside ours: Tables 4–5 (coverage and average CI length
per cell at m = 3, Δ = 1.8), the FBP/FBS CI-length ratios of the captions of Figures 10–17, and
the average CI length and coverage of every method by m and Δ. All read the aggregated metrics.

"Average CI length" is the engine's ``width`` (mean over replicates of the pooled interval's
length), "coverage" its ``coverage``; the caption ratio is the mean over the 24 cells (interior
cells and field totals) of width_FBP / width_FBS (spec §8: the tables give 1.377 and 0.968).
"""

from __future__ import annotations

import weakref

import numpy as np
import pandas as pd

from harness.claims import MissingInput
from harness.paper import Table

from ..paper_numbers import CAPTION_FIGURES, CAPTION_RATIOS, FIG_3_UNWEIGHTED, TABLE_4, TABLE_5

CELLS = tuple(TABLE_4)  # the paper's 24 cells: per field, the total and both genders
_CELL_INDEX = pd.Index(list(CELLS))
KINDS = ("count", "mean")


#: (a weak reference to the metrics frame last read, its rows by (method, metric))
_PARTS: tuple = (None, {})


def _parts(metrics: pd.DataFrame) -> dict:
    """The rows of ``metrics`` by (method, metric), split once per frame: a report's tables,
    claims and figures read about 1,800 cells of one frame, and a scan of the whole frame per
    cell was most of their time. Kept for the last frame read only (weakly: it does not keep
    the frame alive)."""
    global _PARTS
    ref, parts = _PARTS
    if ref is None or ref() is not metrics:
        parts = dict(tuple(metrics.groupby(["method", "metric"], sort=False)))
        _PARTS = (weakref.ref(metrics), parts)
    return parts


def cell_metric(metrics: pd.DataFrame, method: str, metric: str, kind: str, m: int,
                delta: float, column: str = "value") -> pd.Series:
    """One metric of the 24 cells (index: cell names) for a method, m and Δ."""
    part = _parts(metrics).get((method, metric), metrics.iloc[:0])
    keep = slice(None)
    if method != "ori":
        keep = (part["m"].to_numpy() == m) & np.isclose(part["privacy"].to_numpy(), delta)
    names, values = part["estimand"].to_numpy()[keep], part[column].to_numpy()[keep]
    found = dict(zip(names, values, strict=True))
    if values.dtype == np.float64 and len(found) == len(names):
        # the cells' values looked up by name: what the reindex below gives, without building
        # a frame per call (a report reads ~1,800 cells)
        return pd.Series([found.get(f"{kind}_{c}", np.nan) for c in CELLS], index=_CELL_INDEX,
                         dtype=np.float64, name=column)
    rows = part[keep].set_index("estimand")[column]
    return rows.reindex([f"{kind}_{c}" for c in CELLS]).set_axis(list(CELLS))


def _appendix_table(metrics, kind: str, printed: dict, m: int = 3, delta: float = 1.8):
    out = pd.DataFrame(index=list(CELLS))
    for method, offset in (("FBS", 0), ("FBP", 2)):
        out[f"{method}_cov"] = cell_metric(metrics, method, "coverage", kind, m, delta).round(2)
        out[f"{method}_cov_paper"] = [printed[c][offset] for c in CELLS]
        out[f"{method}_ci"] = cell_metric(metrics, method, "width", kind, m, delta).round(0)
        out[f"{method}_ci_paper"] = [printed[c][offset + 1] for c in CELLS]
        out[f"{method}_ci_ratio"] = (out[f"{method}_ci"] / out[f"{method}_ci_paper"]).round(2)
    return out.rename_axis("cell").reset_index()


def table_4(metrics: pd.DataFrame) -> pd.DataFrame:
    """Table 4 (counts, m = 3, Δ = 1.8): coverage and average CI length, ours and the paper's,
    and ours over the paper's CI length."""
    return _appendix_table(metrics, "count", TABLE_4)


def table_5(metrics: pd.DataFrame) -> pd.DataFrame:
    """Table 5 (mean salaries, m = 3, Δ = 1.8), as Table 4."""
    return _appendix_table(metrics, "mean", TABLE_5)


def ci_ratio(metrics, kind: str, m: int, delta: float) -> tuple[float, float]:
    """Mean over the 24 cells of width_FBP / width_FBS and its MCSE (delta method per cell,
    root-sum-of-squares over the cells / 24)."""
    a, b = (cell_metric(metrics, k, "width", kind, m, delta) for k in ("FBP", "FBS"))
    sa, sb = (cell_metric(metrics, k, "width", kind, m, delta, "mcse") for k in ("FBP", "FBS"))
    r = a / b
    se = r * np.sqrt((sa / a) ** 2 + (sb / b) ** 2)
    return float(r.mean()), float(np.sqrt((se ** 2).sum()) / len(r))


def caption_ratios(metrics: pd.DataFrame) -> pd.DataFrame:
    """The FBP/FBS average-CI-length ratios of the captions of Figures 10–17, ours (± MCSE)
    beside the paper's."""
    out = []
    for (m, delta), (p_count, p_mean) in CAPTION_RATIOS.items():
        c, cse = ci_ratio(metrics, "count", m, delta)
        mu, mse = ci_ratio(metrics, "mean", m, delta)
        out.append({"figure": CAPTION_FIGURES[(m, delta)], "m": m, "delta": delta,
                    "epsilon": round(2 * delta * m, 1), "counts": round(c, 3),
                    "counts_mcse": round(cse, 3), "counts_paper": p_count,
                    "means": round(mu, 3), "means_mcse": round(mse, 3), "means_paper": p_mean})
    return pd.DataFrame(out).sort_values(["delta", "m"]).reset_index(drop=True)


def by_method(metrics: pd.DataFrame) -> pd.DataFrame:
    """Average CI length, coverage and RMSE of every method, m and Δ, each the mean over the 24
    cells, for counts and for means (the sample and Laplace: one set; Laplace at ε = 2·Δ·3)."""
    out = []
    keys = metrics[["method", "m", "privacy"]].drop_duplicates()
    # the rows of each key and cell as masks over the columns' arrays (pandas comparisons of
    # the whole frame per key and metric were most of this table's time); each mean is still
    # pandas' mean of the same values in the same order
    col = {c: metrics[c].to_numpy() for c in ("method", "m", "privacy", "metric", "estimand",
                                              "value", "epsilon")}
    for row in keys.itertuples():
        delta = float(row.privacy) if np.isfinite(row.privacy) else np.nan
        rec = {"method": row.method, "m": int(row.m), "delta": delta}
        sel = (col["method"] == row.method) & (col["m"] == row.m)
        if np.isfinite(delta):
            sel &= np.isclose(col["privacy"], delta)
        sub = {c: a[sel] for c, a in col.items()}
        rec["epsilon"] = round(float(sub["epsilon"][0]), 1) if np.isfinite(delta) else np.nan
        for kind in KINDS:
            names = [f"{kind}_{c}" for c in CELLS]
            for metric, label, digits in (("width", "ci", 0), ("coverage", "cov", 3),
                                          ("rmse", "rmse", 0)):
                v = sub["value"][(sub["metric"] == metric) & np.isin(sub["estimand"], names)]
                rec[f"{kind}_{label}"] = round(float(pd.Series(v).mean()), digits)
        out.append(rec)
    return pd.DataFrame(out)


def paper_coverage_means() -> dict[str, float]:
    """The paper's mean coverage over the 24 cells (spec §9.3 [derived]), for the report."""
    return {f"{kind}_{method}": float(np.mean([t[c][i] for c in CELLS]))
            for kind, t in (("count", TABLE_4), ("mean", TABLE_5))
            for method, i in (("FBS", 0), ("FBP", 2))}


def lipschitz(diagnostics: pd.DataFrame) -> pd.DataFrame:
    """Per synthesizer and Δ: the realised bound of the tuned fit, the unweighted fit's bound
    (the paper's Fig. 3 values from one sample beside it) and the mean risk weight α, each the
    mean over replicates (of the per-replicate diagnostic rows)."""
    if "diagnostic" not in diagnostics:  # neither synthesizer ran: nothing reports a bound
        raise MissingInput("FBS, FBP")
    d = diagnostics[diagnostics["diagnostic"].isin(
        ["lipschitz_realised", "lipschitz_unweighted", "alpha_mean"])]
    d = d.groupby(["method", "privacy", "diagnostic"])["value"].mean().unstack().reset_index()
    d["unweighted_fig3"] = d["method"].map(FIG_3_UNWEIGHTED)
    d = d.rename(columns={"privacy": "delta"})
    cols = ["method", "delta", "lipschitz_realised", "lipschitz_unweighted", "unweighted_fig3",
            "alpha_mean"]
    return d[cols].round(3).sort_values(["method", "delta"], ascending=[False, True])


# --- summaries the report's findings quote (each a few numbers read from the tables above) ---

SYNTHS = ("FBS", "FBP")


def agreement(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per table (4: counts, 5: mean salaries) and synthesizer, at m = 3, Δ = 1.8: our average CI
    length over the paper's in the 24 cells of the table (min, median, max, as printed there),
    the mean coverage over the 24 cells, ours and the paper's, and the lower and upper quartile
    of the 16 interior cells' coverage, ours and the paper's."""
    out = []
    for table, kind, frame in ((4, "count", table_4(metrics)), (5, "mean", table_5(metrics))):
        interior = ~frame["cell"].str.endswith("total")
        paper = paper_coverage_means()
        for method in SYNTHS:
            r = frame[f"{method}_ci_ratio"]
            cov = cell_metric(metrics, method, "coverage", kind, 3, 1.8)
            ours_in = cov.to_numpy()[interior.to_numpy()]
            paper_in = frame.loc[interior, f"{method}_cov_paper"]
            out.append({
                "table": table, "kind": kind, "method": method,
                "ci_ratio_min": r.min(), "ci_ratio_median": r.median(), "ci_ratio_max": r.max(),
                "cov_mean": round(float(cov.mean()), 3),
                "cov_mean_paper": round(paper[f"{kind}_{method}"], 3),
                "interior_cov_q25": round(float(np.quantile(ours_in, 0.25)), 2),
                "interior_cov_q75": round(float(np.quantile(ours_in, 0.75)), 2),
                "interior_cov_paper_q25": round(float(np.quantile(paper_in, 0.25)), 2),
                "interior_cov_paper_q75": round(float(np.quantile(paper_in, 0.75)), 2)})
    return pd.DataFrame(out)


def caption_ranges(metrics: pd.DataFrame) -> pd.DataFrame:
    """The range (min, max) over m of the caption ratios, ours and the paper's, per Δ and over
    both (``delta`` = ``both``), for counts and for means."""
    c = caption_ratios(metrics)
    out = []
    for label, sub in (("1.8", c[c["delta"] == 1.8]), ("3.4", c[c["delta"] == 3.4]),
                       ("both", c)):
        rec = {"delta": label}
        for kind in ("counts", "means"):
            for col, suffix in ((kind, ""), (f"{kind}_paper", "_paper")):
                rec[f"{kind}{suffix}_min"] = sub[col].min()
                rec[f"{kind}{suffix}_max"] = sub[col].max()
        out.append(rec)
    return pd.DataFrame(out)


def delta_effect(metrics: pd.DataFrame) -> pd.DataFrame:
    """Δ = 3.4 against Δ = 1.8 on the 24 mean-salary cells at m = 3, per synthesizer: the mean
    over cells of the RMSE ratio (± MCSE, as claim ``delta-utility``), the fall in RMSE it
    means (%), and the mean coverage at each Δ."""
    out = []
    for method in SYNTHS:
        a, b = (cell_metric(metrics, method, "rmse", "mean", 3, d) for d in (3.4, 1.8))
        sa, sb = (cell_metric(metrics, method, "rmse", "mean", 3, d, "mcse") for d in (3.4, 1.8))
        r = a / b
        se = r * np.sqrt((sa / a) ** 2 + (sb / b) ** 2)
        ratio = float(r.mean())
        out.append({"method": method, "rmse_ratio": round(ratio, 3),
                    "rmse_ratio_mcse": round(float(np.sqrt((se ** 2).sum()) / len(r)), 3),
                    "rmse_fall_pct": round(100 * (1 - ratio), 1),
                    "cov_delta_1.8": round(float(
                        cell_metric(metrics, method, "coverage", "mean", 3, 1.8).mean()), 3),
                    "cov_delta_3.4": round(float(
                        cell_metric(metrics, method, "coverage", "mean", 3, 3.4).mean()), 3)})
    return pd.DataFrame(out)


def laplace(metrics: pd.DataFrame) -> pd.DataFrame:
    """The Laplace tables beside the synthesizers at each Δ (Laplace at ε = 2·Δ·3, the
    synthesizers at m = 3), per kind over the 24 cells: the median RMSE ratio of each
    synthesizer over Laplace (at Δ = 1.8 claim ``beats-laplace``), Laplace's average CI length
    over the confidential sample's (the means over the cells, as ``by_method``) and its mean
    coverage."""
    out = []
    for delta in (1.8, 3.4):
        for kind in KINDS:
            lap = cell_metric(metrics, "Laplace", "rmse", kind, 1, delta)
            rec = {"delta": delta, "epsilon": round(2 * delta * 3, 1), "kind": kind}
            for method in SYNTHS:
                rec[f"{method}_rmse_ratio_median"] = round(float(
                    (cell_metric(metrics, method, "rmse", kind, 3, delta) / lap).median()), 3)
            width = cell_metric(metrics, "Laplace", "width", kind, 1, delta).mean()
            rec["width_over_ori"] = round(float(
                width / cell_metric(metrics, "ori", "width", kind, 1, delta).mean()), 1)
            rec["cov_mean"] = round(float(
                cell_metric(metrics, "Laplace", "coverage", kind, 1, delta).mean()), 3)
            out.append(rec)
    return pd.DataFrame(out)


def fbs_count_variance(rows: pd.DataFrame, m: int = 3, delta: float = 1.8) -> pd.DataFrame:
    """Why FBS's count intervals under-cover (Table 4, issue 25): per cell of the 24 and their
    mean (``cell`` = mean), at m = 3, Δ = 1.8, FBS's coverage (with its binomial MCSE) beside
    the paper's; its bias over its SD across replicates; that SD beside the confidential
    sample's (``ori``); the pooled SE √T̄ (T = b/m + ū, means over replicates) over that SD, with
    its parts √ū (the linearised variance of the smoothed weights) and √(b/m) and the sample's
    own linearised SE; and the coverage of the same intervals of the replicate's confidential
    estimate instead of the population count."""
    kind_rows = rows[rows["estimand"].isin([f"count_{c}" for c in CELLS])]
    fbs = kind_rows[(kind_rows["method"] == "FBS") & (kind_rows["m"] == m)
                    & np.isclose(kind_rows["privacy"], delta)]
    ori = kind_rows[kind_rows["method"] == "ori"]
    fbs, ori = (f.set_index(["estimand", "replicate"]).sort_index() for f in (fbs, ori))
    ref = ori["estimate"].reindex(fbs.index)
    frame = pd.DataFrame({
        "covered": (fbs["ci_low"] <= fbs["truth"]) & (fbs["truth"] <= fbs["ci_high"]),
        "covers_sample": (fbs["ci_low"] <= ref) & (ref <= fbs["ci_high"]),
        "error": fbs["estimate"] - fbs["truth"], "estimate": fbs["estimate"],
        "variance": fbs["variance"], "within": fbs["within"],
        "between_m": fbs["between"] / fbs["m"]})
    g = frame.groupby(level="estimand")
    sd = g["estimate"].std(ddof=1)
    cov = g["covered"].mean()
    out = pd.DataFrame({
        "cov": cov, "cov_mcse": np.sqrt(cov * (1 - cov) / g.size()),
        "cov_paper": [TABLE_4[e.removeprefix("count_")][0] for e in cov.index],
        "bias_over_sd": g["error"].mean() / sd, "sd": sd,
        "ori_sd": ori.groupby(level="estimand")["estimate"].std(ddof=1),
        "se_over_sd": np.sqrt(g["variance"].mean()) / sd,
        "se": np.sqrt(g["variance"].mean()), "se_within": np.sqrt(g["within"].mean()),
        "se_between": np.sqrt(g["between_m"].mean()),
        "ori_se": np.sqrt(ori.groupby(level="estimand")["variance"].mean()),
        "cov_of_sample": g["covers_sample"].mean()})
    out = out.reindex([f"count_{c}" for c in CELLS]).set_axis(list(CELLS))
    mean = out.mean()
    mean["cov_mcse"] = float(np.sqrt((out["cov_mcse"] ** 2).sum()) / len(out))
    out.loc["mean"] = mean
    return out.round(4).rename_axis("cell").reset_index()


TABLES = {
    "table_4": Table(table_4, reads=("metrics",)),
    "table_5": Table(table_5, reads=("metrics",)),
    "caption_ratios": Table(caption_ratios, reads=("metrics",)),
    "by_method": Table(by_method, reads=("metrics",)),
    "lipschitz": Table(lipschitz, reads=("diagnostics",)),
    "agreement": Table(agreement, reads=("metrics",)),
    "caption_ranges": Table(caption_ranges, reads=("metrics",)),
    "delta_effect": Table(delta_effect, reads=("metrics",)),
    "laplace": Table(laplace, reads=("metrics",)),
    "fbs_count_variance": Table(fbs_count_variance, reads=("rows",), methods=("ori", "FBS")),
}

#: the tables of a variant sweep of FBS and FBP only (no sample, no Laplace)
VARIANT_TABLES = {k: t for k, t in TABLES.items()
                  if k not in ("by_method", "laplace", "fbs_count_variance")}
