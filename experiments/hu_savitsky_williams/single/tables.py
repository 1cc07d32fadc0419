"""The single-sample runs of Hu, Savitsky & Williams beside the paper (§4.2–§4.4): the RMSE-ratio
violins of Figs 5–7 summarised, the Lipschitz bounds of Fig. 3 with the paper's printed values,
and the weight spreads of Fig. 4. Each value is the mean over the study's samples of the paper's
one-sample statistic; replicate 0 (the "selected sample") is shown beside it where the figure
rests on it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.paper import Table

from ..paper_numbers import FIG_3_UNWEIGHTED, FIG_3_WEIGHTED
from .claims import MS, SYNTHS, stat
from .study import KINDS


def rmse_ratios(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per method, Δ, m (ε = 2·Δ·m; Laplace at 2·Δ·3) and table: the median, IQR and share
    below 1 of the 27 cell RMSE ratios of one sample (the violins of Figs 5–7), each the mean
    over samples, with the MCSE of the median."""
    out = []
    runs = [(m, d, s) for m in SYNTHS for d in (1.8, 3.4) for s in MS]
    runs += [("Laplace", d, 1) for d in (1.8, 3.4)]
    for method, delta, m in runs:
        eps = 2 * delta * (3 if method == "Laplace" else m)
        for kind in KINDS:
            med, se = stat(metrics, method, f"ratio_median_{kind}", m, delta)
            out.append({"method": method, "delta": delta, "m": m if method != "Laplace" else "",
                        "epsilon": round(eps, 1), "kind": kind, "median": round(med, 3),
                        "median_mcse": round(se, 3),
                        "iqr": round(stat(metrics, method, f"ratio_iqr_{kind}", m, delta)[0], 3),
                        "below_one": round(stat(metrics, method, f"ratio_below_one_{kind}", m,
                                                delta)[0], 3)})
    return pd.DataFrame(out)


def lipschitz(metrics: pd.DataFrame, diagnostics: pd.DataFrame) -> pd.DataFrame:
    """Per synthesizer and Δ: the tuned fit's realised bound and the unweighted fit's bound, the
    mean α and the tuned c₁, each the mean over samples and in replicate 0, with the paper's
    Fig. 3 values (one sample; Δ = 1.8)."""
    out = []
    d = diagnostics
    for method in SYNTHS:
        for delta in (1.8, 3.4):
            first = d[(d["method"] == method) & np.isclose(d["privacy"], delta)
                      & (d["replicate"] == d["replicate"].min())]
            first = dict(zip(first["diagnostic"], first["value"], strict=True))
            rec = {"method": method, "delta": delta}
            for key in ("lipschitz_realised", "lipschitz_unweighted", "alpha_mean"):
                rec[key] = round(stat(metrics, method, key, delta=delta)[0], 3)
                rec[f"{key}_sample0"] = round(first[key], 3)
            rec["weighted_paper"] = FIG_3_WEIGHTED if delta == 1.8 else np.nan
            rec["unweighted_paper"] = FIG_3_UNWEIGHTED[method] if delta == 1.8 else np.nan
            out.append(rec)
    return pd.DataFrame(out)


def weights(metrics: pd.DataFrame) -> pd.DataFrame:
    """Fig. 4: the spread of the weights of the confidential sample and of the smoothed weights
    of FBS and FBP (Δ = 1.8, per set, mean over the m = 3 sets and over samples): the residual
    SD of log weight about its line on log salary (the width of the salary–weight cloud), the
    coefficient of variation and the SD of the log weights."""
    keys = ("weight_resid_sd", "weight_cv", "weight_sd_log")
    out = [{"method": "ori", **{k: stat(metrics, "ori", k, 1, None)[0] for k in keys}}]
    for method in SYNTHS:
        out.append({"method": method, **{k: stat(metrics, method, k)[0] for k in keys}})
    return pd.DataFrame(out).round(3)


TABLES = {
    "rmse_ratios": Table(rmse_ratios, reads=("metrics",)),
    "lipschitz": Table(lipschitz, reads=("metrics", "diagnostics")),
    "weights": Table(weights, reads=("metrics",)),
}
