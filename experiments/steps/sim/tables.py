"""The simulation's summaries (spec 003 §5.2, §9.4): per (model, n, ε, method) the mean over the
coefficients of |bias|, RMSE and |coverage − 0.95|, and the prediction RMSE, each with its
Monte Carlo SE (the SE of a mean over k coefficients taken as sqrt(Σ se²)/k); and the law of
STEPS's split (:func:`split_law`), a computation outside the sweep."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import softmax

from harness import config, rng
from harness.engine.study import load_study
from harness.paper import Table
from harness.synthesizers.importance import (
    aic_univariate,
    marginal_counts,
    split_utility,
    two_cluster_splits,
)

DP_METHODS = ("STEPS", "STEPS-fixed", "UH-mod", "PrivBayes", "PrivBayes-DS2019")
STATS = ("abs_bias", "rmse", "cp_gap", "pred_rmse")


def _coef_rows(mx: pd.DataFrame, metric: str) -> pd.DataFrame:
    d = mx[(mx["metric"] == metric) & (mx["estimand"].fillna("") != "")].copy()
    if metric == "bias":
        d["value"] = d["value"].abs()
    if metric == "coverage":
        d["value"] = (d["value"] - 0.95).abs()
    return d


def summary(mx: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, n, swept ε ``privacy``, method): mean |bias|, RMSE and |CP − .95|
    over the coefficients, prediction RMSE, each with ``<stat>_mcse``."""
    keys = ["model", "n", "privacy", "method"]
    mx = mx.assign(privacy=mx["privacy"].fillna(0.0))  # Ori (no ε) as 0, restored below
    parts = []
    for stat, metric in (("abs_bias", "bias"), ("rmse", "rmse"), ("cp_gap", "coverage")):
        d = _coef_rows(mx, metric)
        g = d.groupby(keys, dropna=False)
        parts.append(pd.DataFrame({
            stat: g["value"].mean(),
            f"{stat}_mcse": g["mcse"].apply(lambda s: float(np.sqrt((s ** 2).sum()) / len(s)))}))
    p = mx[mx["metric"] == "pred_rmse"].set_index(keys)
    parts.append(pd.DataFrame({"pred_rmse": p["value"], "pred_rmse_mcse": p["mcse"]}))
    out = pd.concat(parts, axis=1).reset_index()
    out["privacy"] = out["privacy"].where(out["privacy"] > 0)
    return out.sort_values(keys, na_position="first").reset_index(drop=True)


TABLES = {"summary": Table(summary, reads=("metrics",))}


#: what :func:`split_law` computes: the study and profile whose grid, ε and STEPS it reads, the
#: data sets drawn per (model, n) and the stream they are drawn from
SPLIT_SETTINGS = {"study": "steps_sim", "profile": "paper", "method": "STEPS", "draws": 200,
                  "stream": "split_law"}


def split_law(settings=SPLIT_SETTINGS) -> dict[str, pd.DataFrame]:
    """The probability that the simulation's STEPS (the paper's AIC/EM rule, ``tree_mode:
    em_grouped``) puts each two-cluster split into its tree, per (model, n) and ε: its
    exponential mechanism's law, P(split) ∝ exp(u · r(ε/m) / (2 δ_u)) with u the l1 difference
    of the clusters' mean AIC (§2.2.3), averaged over ``draws`` data sets of the model (drawn
    from their own stream, not the sweep's). Table ``split_law``: per split (layer 1 → layer 2,
    the cluster of lower mean AIC first; two orders of one split count as one), its mean
    utility, its rank by it (1: the largest) and one probability column per ε; the split the
    paper reports (``steps_levels``) is flagged ``reported: yes``."""
    cfg = config.load([f"study={settings['study']}", f"profile={settings['profile']}"])
    study = load_study(cfg["study"])
    names = None
    rows = []
    for model in study.grid_axes()["model"]:
        for n in study.grid_axes()["n"]:
            scenario = {"model": model, "n": n}
            syn = study.method(settings["method"], scenario)
            data = study.generate(scenario, rng.generator(int(cfg["seed"]), settings["stream"],
                                                          study.name, model, int(n)),
                                  int(settings["draws"])).train
            coding = syn.coding(data)
            names = list(coding.schema.names)
            codes = coding.encode(data.values)
            aic = np.stack([aic_univariate(c) for c in marginal_counts(codes, coding.cards)], -1)
            splits = two_cluster_splits(codes.shape[-1])
            u = split_utility(aic, splits)  # (draws, S)
            law = {eps: softmax(u * syn.r * eps / syn.m / (2 * syn.delta_u), axis=-1).mean(0)
                   for eps in study.epsilons()}
            for k, split in enumerate(splits):
                c1, c2 = np.flatnonzero(split), np.flatnonzero(~split)
                first = aic[:, c1].mean() <= aic[:, c2].mean()
                layers = (c1, c2) if first else (c2, c1)
                row = {"model": model, "n": int(n),
                       "layer_1": ", ".join(names[a] for a in layers[0]),
                       "layer_2": ", ".join(names[a] for a in layers[1]),
                       "mean_u": float(u[:, k].mean())}
                row.update({f"P(ε:{eps:g})": float(law[eps][k]) for eps in law})
                rows.append(row)
    out = pd.DataFrame(rows)
    fixed = [", ".join(g) for g in cfg["study"].get("steps_levels")]
    out["reported"] = np.where((out["layer_1"] == fixed[0]) & (out["layer_2"] == fixed[1]),
                               "yes", "")
    out = out.sort_values(["model", "n", "mean_u"], ascending=[True, True, False])
    out.insert(2, "rank", out.groupby(["model", "n"]).cumcount() + 1)
    return {"split_law": out.reset_index(drop=True)}
