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
* "smaller": NP-DIPS < MODIPS decided against the MCSE of the difference of the group means
  (MCSEs combined as independent, a conservative choice for common random numbers): PASS below
  −2 MCSE, FAIL above +2 MCSE, UNDECIDED between. Every other comparison is likewise decided
  against 2 MCSE of its statistic (delta method for ratios).
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

from harness.claims import (
    Claim,
    ClaimResult,
    MissingInput,
    all_of,
    count_verdicts,
    decide_cells,
    ratio_mcse,
)

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
        raise MissingInput(f"no {metric} rows for {group} at ln ε >= {min_log_eps}")
    return out


def _fmt_series(s: pd.Series, digits: int = 3) -> str:
    return ", ".join(f"{k:g}: {v:.{digits}g}" for k, v in s.items())


# --- deciding against Monte Carlo error --------------------------------------------------------
# Each comparison is decided by ``decide`` against the MCSE of its statistic: a group mean's
# MCSE as in ``group_table``; hypot of the two MCSEs for a difference (independent, conservative
# under common random numbers); the delta method |a/b|·sqrt((se_a/a)² + (se_b/b)²) for a ratio.


def _np_smaller(group: str, metric: str, label: str):
    def check(mx):
        t = group_table(mx, group, metric, -1)
        diff = t["value"]["NP-DIPS"] - t["value"]["MODIPS"]
        se = np.hypot(t["mcse"]["NP-DIPS"], t["mcse"]["MODIPS"])
        parts = decide_cells(diff, se, 0.0, above=False)  # NP-DIPS − MODIPS < 0 at every ln ε
        return ClaimResult(
            all_of(*parts),
            f"mean {label} by ln ε, NP-DIPS [{_fmt_series(t['value']['NP-DIPS'])}] vs MODIPS "
            f"[{_fmt_series(t['value']['MODIPS'])}]; NP-DIPS < MODIPS beyond 2 MCSE at every "
            f"ln ε >= -1: {count_verdicts(parts)} (largest excess in MCSE units "
            f"{float((diff / se).max()):.2f})",
        )

    return check


def _np_ratio_at_most(group: str, metric: str, label: str, threshold: float, shown: str):
    """NP-DIPS's ``metric`` over MODIPS's is at most ``threshold`` at every ln ε >= -1, each
    ratio decided against its delta-method MCSE (``shown``: the threshold as the text says)."""
    def check(mx):
        t = group_table(mx, group, metric, -1)
        v, e = t["value"], t["mcse"]
        ratio = v["NP-DIPS"] / v["MODIPS"]
        se = ratio_mcse(v["NP-DIPS"], v["MODIPS"], e["NP-DIPS"], e["MODIPS"])
        parts = decide_cells(ratio, se, threshold, above=False)
        return ClaimResult(
            all_of(*parts),
            f"{label}(NP-DIPS)/{label}(MODIPS) by ln ε: {_fmt_series(ratio)} (<= {shown} at "
            f"every ln ε >= -1; largest MCSE {float(se.max()):.2g}; {count_verdicts(parts)})",
        )

    return check


def _np_rmse_similar(group: str):
    return _np_ratio_at_most(group, "rmse", "RMSE", 1.10, "1.10")


def _np_narrower(group: str):
    return _np_ratio_at_most(group, "width", "width", 1.0, "1")


def _per_estimand(mx: pd.DataFrame, metric: str, min_log_eps: float,
                  value: str = "value") -> pd.DataFrame:
    m = mx[mx["estimand"].isin(VARIANCES) & (mx["metric"] == metric)]
    dp = m[m["epsilon"].notna() & (m["log_epsilon"] >= min_log_eps)]
    if dp.empty:
        raise MissingInput(f"no {metric} rows for σ², ρ at ln ε >= {min_log_eps}")
    return dp.pivot_table(index=["estimand", "log_epsilon"], columns="method", values=value)


def _claim2a(mx):
    b = _per_estimand(mx, "bias", 0).abs()
    r = _per_estimand(mx, "rmse", 0)
    bs, rs = _per_estimand(mx, "bias", 0, "mcse"), _per_estimand(mx, "rmse", 0, "mcse")
    # every (estimand, ln ε) ratio MODIPS/NP-DIPS <= 0.5, delta-method MCSE per cell
    ratio_b = b["MODIPS"] / b["NP-DIPS"]
    ratio_r = r["MODIPS"] / r["NP-DIPS"]
    se_b = ratio_mcse(b["MODIPS"], b["NP-DIPS"], bs["MODIPS"], bs["NP-DIPS"])
    se_r = ratio_mcse(r["MODIPS"], r["NP-DIPS"], rs["MODIPS"], rs["NP-DIPS"])
    parts = (decide_cells(ratio_b, se_b, 0.5, above=False)
             + decide_cells(ratio_r, se_r, 0.5, above=False))
    rb = ratio_b.groupby(level="estimand").max()
    rr = ratio_r.groupby(level="estimand").max()
    return ClaimResult(
        all_of(*parts),
        "largest ratio MODIPS/NP-DIPS over ln ε >= 0 (<= 0.5): |bias| "
        + ", ".join(f"{k} {v:.3g}" for k, v in rb.items())
        + "; RMSE " + ", ".join(f"{k} {v:.3g}" for k, v in rr.items())
        + f" (cells {count_verdicts(parts)})",
    )


def _claim2b(mx):
    c, cs = _per_estimand(mx, "coverage", 1), _per_estimand(mx, "coverage", 1, "mcse")
    w, ws = _per_estimand(mx, "width", 1), _per_estimand(mx, "width", 1, "mcse")
    ori = mx[mx["estimand"].isin(VARIANCES) & (mx["metric"] == "width")
             & (mx["method"] == "Ori")].set_index("estimand")
    est = w.index.get_level_values("estimand")
    base = pd.Series(ori["value"].reindex(est).to_numpy(), index=w.index)
    base_se = pd.Series(ori["mcse"].reindex(est).to_numpy(), index=w.index)
    cov_min = c["MODIPS"].groupby(level="estimand").min()
    w_ratio = w["MODIPS"] / base
    w_se = ratio_mcse(w["MODIPS"], base, ws["MODIPS"], base_se)  # delta method
    w_max = w_ratio.groupby(level="estimand").max()
    cov_parts = decide_cells(c["MODIPS"], cs["MODIPS"], 0.93)
    w_parts = decide_cells(w_ratio, w_se, 3, above=False)
    return ClaimResult(
        all_of(*cov_parts, *w_parts),
        "MODIPS at ln ε >= 1: min CP " + ", ".join(f"{k} {v:.3f}" for k, v in cov_min.items())
        + f" (>= 0.93; cells {count_verdicts(cov_parts)}); max width/Ori "
        + ", ".join(f"{k} {v:.3g}" for k, v in w_max.items())
        + f" (<= 3; cells {count_verdicts(w_parts)})",
    )


def _claim2c(mx):
    c = _per_estimand(mx, "coverage", -np.inf)
    cs = _per_estimand(mx, "coverage", -np.inf, "mcse")
    cmax = c["NP-DIPS"].groupby(level="estimand").max()
    parts = decide_cells(c["NP-DIPS"], cs["NP-DIPS"], 0.80, above=False)
    return ClaimResult(
        all_of(*parts),
        "NP-DIPS largest CP over all ε: " + ", ".join(f"{k} {v:.3f}" for k, v in cmax.items())
        + f" (< 0.80: severe under-coverage at every ε; cells {count_verdicts(parts)})",
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

