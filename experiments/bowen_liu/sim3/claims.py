"""The conclusions of Bowen & Liu (2020) §4.3.1 for Simulation 3 (spec 000 §5.5), split into
testable parts, as claims on the aggregated metrics.

Conclusion 1: "NP-DIPS performed better than MODIPS in the inferences of μ1, μ2 and Π with
smaller bias, similar or smaller RMSE, closer-to-nominal coverage and slightly narrower CIs for
ε > e^-2." Conclusion 2: "MODIPS outperformed NP-DIPS in the inferences on σ1², σ2², ρ with much
smaller bias and RMSE when ε > e^-1 and delivered nominal CP with reasonable CI widths when
ε > 1; NP-DIPS experienced severe undercoverage in all 3 variance/covariance components and
never reached the nominal level of 95% at all level of ε."

How the words are made testable (fixed before looking at results, from the wording):
* "for ε > e^-2": every ln ε of the grid above −2 (−1, …, 4); "ε > e^-1": ln ε ≥ 0; "ε > 1":
  ln ε ≥ 1.
* Group summaries: μ = all 48 cell means (μ1 and μ2), Π = the six marginals; per ln ε the mean
  over the group's estimands of |bias|, RMSE, |CP − 0.95| and width.
* "smaller" allows Monte Carlo noise: NP-DIPS ≤ MODIPS + 2·MCSE of the difference of the group
  means (MCSEs combined as independent, a conservative choice for common random numbers).
* "similar or smaller RMSE": RMSE(NP-DIPS)/RMSE(MODIPS) ≤ 1.10 (group means).
* "slightly narrower": width(NP-DIPS) ≤ width(MODIPS) (group means; "slightly" is not tested).
* "much smaller bias and RMSE": MODIPS ≤ ½ × NP-DIPS, per estimand.
* "nominal CP": within 0.02 of 0.95 (CP ≥ 0.93); "reasonable widths": at most 3 × Ori's width.
* "severe undercoverage … never reached 95% at any ε": NP-DIPS CP < 0.80 at every ln ε for
  each of σ1², σ2², ρ.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.claims import Claim, ClaimResult

METHODS = ("MODIPS", "NP-DIPS", "MS", "Ori")
VARIANCES = ("sigma1_sq", "sigma2_sq", "rho")
PI = ("Pi_w1_1", "Pi_w2_1", "Pi_w2_2", "Pi_w3_1", "Pi_w3_2", "Pi_w3_3")


def _is_mu(names: pd.Series) -> pd.Series:
    return names.str.startswith("mu1_") | names.str.startswith("mu2_")


def group_table(mx: pd.DataFrame, group: str, metric: str, min_log_eps: float) -> pd.DataFrame:
    """Per (ln ε, method): mean over the group's estimands of the metric value and the MCSE of
    that mean (root mean square of the MCSEs over the number of estimands)."""
    names = mx["estimand"]
    sel = _is_mu(names) if group == "mu" else names.isin(PI)
    m = mx[sel & (mx["metric"] == metric) & (mx["log_epsilon"] >= min_log_eps)
           & mx["method"].isin(["MODIPS", "NP-DIPS"])].copy()
    if metric == "bias":
        m["value"] = m["value"].abs()
    if metric == "coverage":
        m["value"] = (m["value"] - 0.95).abs()
    g = m.groupby(["log_epsilon", "method"])
    out = pd.DataFrame({
        "value": g["value"].mean(),
        "mcse": g["mcse"].apply(lambda s: float(np.sqrt(np.nanmean(s**2) / s.size))),
    }).unstack("method")
    if out.empty:
        raise ValueError(f"no {metric} rows for {group} at ln ε >= {min_log_eps}")
    return out


def _fmt_series(s: pd.Series, digits: int = 3) -> str:
    return ", ".join(f"{k:g}: {v:.{digits}g}" for k, v in s.items())


def _np_smaller(group: str, metric: str, label: str):
    def check(mx):
        t = group_table(mx, group, metric, -1)
        diff = t["value"]["NP-DIPS"] - t["value"]["MODIPS"]
        se = np.hypot(t["mcse"]["NP-DIPS"], t["mcse"]["MODIPS"])
        ok = bool((diff <= 2 * se).all())
        return ClaimResult(
            ok,
            f"mean {label} by ln ε, NP-DIPS [{_fmt_series(t['value']['NP-DIPS'])}] vs MODIPS "
            f"[{_fmt_series(t['value']['MODIPS'])}]; NP-DIPS <= MODIPS + 2 MCSE at every "
            f"ln ε >= -1: {ok} (largest excess in MCSE units "
            f"{float((diff / se).max()):.2f})",
        )

    return check


def _np_rmse_similar(group: str):
    def check(mx):
        t = group_table(mx, group, "rmse", -1)["value"]
        ratio = t["NP-DIPS"] / t["MODIPS"]
        return ClaimResult(
            bool((ratio <= 1.10).all()),
            f"RMSE(NP-DIPS)/RMSE(MODIPS) by ln ε: {_fmt_series(ratio)} (<= 1.10 at every "
            "ln ε >= -1)",
        )

    return check


def _np_narrower(group: str):
    def check(mx):
        t = group_table(mx, group, "width", -1)["value"]
        ratio = t["NP-DIPS"] / t["MODIPS"]
        return ClaimResult(
            bool((ratio <= 1.0).all()),
            f"width(NP-DIPS)/width(MODIPS) by ln ε: {_fmt_series(ratio)} (<= 1 at every "
            "ln ε >= -1)",
        )

    return check


def _per_estimand(mx: pd.DataFrame, metric: str, min_log_eps: float) -> pd.DataFrame:
    m = mx[mx["estimand"].isin(VARIANCES) & (mx["metric"] == metric)]
    dp = m[m["epsilon"].notna() & (m["log_epsilon"] >= min_log_eps)]
    if dp.empty:
        raise ValueError(f"no {metric} rows for σ², ρ at ln ε >= {min_log_eps}")
    return dp.pivot_table(index=["estimand", "log_epsilon"], columns="method", values="value")


def _claim2a(mx):
    b = _per_estimand(mx, "bias", 0).abs()
    r = _per_estimand(mx, "rmse", 0)
    rb = (b["MODIPS"] / b["NP-DIPS"]).groupby(level="estimand").max()
    rr = (r["MODIPS"] / r["NP-DIPS"]).groupby(level="estimand").max()
    ok = bool((rb <= 0.5).all() and (rr <= 0.5).all())
    return ClaimResult(
        ok,
        "largest ratio MODIPS/NP-DIPS over ln ε >= 0 (<= 0.5): |bias| "
        + ", ".join(f"{k} {v:.3g}" for k, v in rb.items())
        + "; RMSE " + ", ".join(f"{k} {v:.3g}" for k, v in rr.items()),
    )


def _claim2b(mx):
    c = _per_estimand(mx, "coverage", 1)
    w = _per_estimand(mx, "width", 1)
    base = mx[mx["estimand"].isin(VARIANCES) & (mx["metric"] == "width")
              & (mx["method"] == "Ori")].set_index("estimand")["value"]
    cov_min = c["MODIPS"].groupby(level="estimand").min()
    w_ratio = (w["MODIPS"] / base.reindex(w.index.get_level_values("estimand")).to_numpy())
    w_max = w_ratio.groupby(level="estimand").max()
    ok = bool((cov_min >= 0.93).all() and (w_max <= 3).all())
    return ClaimResult(
        ok,
        "MODIPS at ln ε >= 1: min CP " + ", ".join(f"{k} {v:.3f}" for k, v in cov_min.items())
        + " (>= 0.93); max width/Ori " + ", ".join(f"{k} {v:.3g}" for k, v in w_max.items())
        + " (<= 3)",
    )


def _claim2c(mx):
    c = _per_estimand(mx, "coverage", -np.inf)
    cmax = c["NP-DIPS"].groupby(level="estimand").max()
    return ClaimResult(
        bool((cmax < 0.80).all()),
        "NP-DIPS largest CP over all ε: " + ", ".join(f"{k} {v:.3f}" for k, v in cmax.items())
        + " (< 0.80: severe under-coverage at every ε)",
    )


_C1 = "NP-DIPS better than MODIPS for ε > e^-2 (§4.3.1, 1)"
_C2 = "MODIPS better than NP-DIPS for σ1², σ2², ρ (§4.3.1, 2)"

CLAIMS = [
    Claim("1a-mu", f"{_C1}: smaller bias for μ1, μ2", _np_smaller("mu", "bias", "|bias|"),
          METHODS),
    Claim("1b-mu", f"{_C1}: similar or smaller RMSE for μ1, μ2", _np_rmse_similar("mu"), METHODS),
    Claim("1c-mu", f"{_C1}: closer-to-nominal coverage for μ1, μ2",
          _np_smaller("mu", "coverage", "|CP - 0.95|"), METHODS),
    Claim("1d-mu", f"{_C1}: slightly narrower CIs for μ1, μ2", _np_narrower("mu"), METHODS),
    Claim("1a-Pi", f"{_C1}: smaller bias for Π", _np_smaller("Pi", "bias", "|bias|"), METHODS),
    Claim("1b-Pi", f"{_C1}: similar or smaller RMSE for Π", _np_rmse_similar("Pi"), METHODS),
    Claim("1c-Pi", f"{_C1}: closer-to-nominal coverage for Π",
          _np_smaller("Pi", "coverage", "|CP - 0.95|"), METHODS),
    Claim("1d-Pi", f"{_C1}: slightly narrower CIs for Π", _np_narrower("Pi"), METHODS),
    Claim("2a", f"{_C2}: much smaller bias and RMSE for ε > e^-1", _claim2a, METHODS),
    Claim("2b", f"{_C2}: MODIPS nominal CP with reasonable CI widths for ε > 1", _claim2b,
          METHODS),
    Claim("2c", "NP-DIPS severely under-covers σ1², σ2², ρ at every ε (§4.3.1, 2)", _claim2c,
          METHODS),
]

#: verdicts at profile=paper (5000 replicates, seed 20200501; README "Bowen & Liu Simulation 3");
#: profile=ci (50 replicates) must give the same (tests/bowen_liu/test_sim3_study.py)
VERDICT_AT_PAPER_PROFILE = {
    "1a-mu": True, "1b-mu": True, "1c-mu": False, "1d-mu": True,
    "1a-Pi": True, "1b-Pi": True, "1c-Pi": True, "1d-Pi": True,
    "2a": False, "2b": False, "2c": True,
}
