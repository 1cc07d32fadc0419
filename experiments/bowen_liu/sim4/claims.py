"""The conclusions of Bowen & Liu (2020) §4.3.2 for Simulation 4 (spec 000 §5.5), split into
testable parts, as claims on the aggregated metrics.

How the words are made testable (fixed from the wording before looking at paper-profile
results):
* "ε > e^-1": ln ε ≥ 0; "ε > e^-2": ln ε ≥ −1; "ε < e": ln ε ≤ 0; "ε > e": ln ε ≥ 2.
* The β's of the MODIPS methods at ln ε ≤ −2 are not plotted by the paper ("fail to converge"),
  so claims on plotted β results use ln ε ≥ −1 for them.
* β = the 17 coefficients of β1…β4; Σ = σ1², σ2², ρ; μ = μ1, μ2.
* Every comparison is decided (``harness.claims.decide``) against 2 MCSE of its statistic:
  PASS or FAIL beyond them, UNDECIDED within (former "+ 2·MCSE" allowances are that band).
* "close to zero" bias: |bias| ≤ 0.1, for every estimand of the group.
* CP "at or above 95%": CP ≥ 0.95 (MCSE floored at 0.005); "about 95%": CP ≥ 0.90; "severe
  under-coverage": CP < 0.80; "under-coverage": mean CP over the group < 0.90.
* "large RMSE compared to Ori": mean over the estimands of RMSE/RMSE(Ori) ≥ 2 at every ln ε.
* "smaller": value(A) < value(B), decided against the MCSE of the difference (MCSEs combined
  as independent).
* "similar": ratio within [2/3, 3/2]; "varied little with ε": max/min of the width over the
  grid ≤ 2 for every estimand; "wide CIs": width(MODIPS-Correct) > width(NP-DIPS).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.claims import (
    PASS,
    Claim,
    ClaimResult,
    MissingInput,
    all_of,
    any_of,
    count_verdicts,
    decide,
    decide_cells,
    median_with_mcse,
    ratio_mcse,
)

MC, MW, NP = "MODIPS-Correct", "MODIPS-Wrong", "NP-DIPS"
METHODS = (MC, MW, NP, "MS", "Ori")
MU = ("mu1", "mu2")
SIGMA = ("sigma1_sq", "sigma2_sq", "rho")
BETA_P = {"beta1": 3, "beta2": 4, "beta3": 5, "beta4": 5}
BETA = tuple(f"{b}_{i}" for b, p in BETA_P.items() for i in range(p))
ALL = MU + SIGMA + BETA


def _dp(mx, metric, estimands, methods, lmin=-np.inf, lmax=np.inf, col="value"):
    """(estimand, ln ε) × method table of a metric, with the paper's omission of MODIPS β's at
    ln ε ≤ −2."""
    m = mx[(mx["metric"] == metric) & mx["estimand"].isin(estimands) & mx["method"].isin(methods)
           & mx["epsilon"].notna() & (mx["log_epsilon"] >= lmin) & (mx["log_epsilon"] <= lmax)]
    hidden = (m["method"].str.startswith("MODIPS") & m["estimand"].str.startswith("beta")
              & (m["log_epsilon"] <= -2))
    m = m[~hidden]
    if m.empty:
        raise MissingInput(f"no {metric} rows for {estimands} at ln ε in [{lmin}, {lmax}]")
    return m.pivot_table(index=["estimand", "log_epsilon"], columns="method", values=col)


def _ref(mx, metric, method="Ori", col="value"):
    m = mx[(mx["metric"] == metric) & (mx["method"] == method)]
    return m.set_index("estimand")[col]


def _fmt(s: pd.Series, digits=3) -> str:
    return ", ".join(f"{k if isinstance(k, str) else format(k, 'g')}: {v:.{digits}g}"
                     for k, v in s.items())


# --- deciding against Monte Carlo error --------------------------------------------------------
# Every comparison is decided by ``decide`` against 2 MCSE of its statistic: a cell's ``mcse``;
# hypot(se_a, se_b) for a difference of two cells (independent, conservative under common random
# numbers); the delta method |a/b|·sqrt((se_a/a)² + (se_b/b)²) for a ratio; sqrt(Σ se²)/k for a
# mean over k estimands; for a median the MCSE of the median cell(s).


def _mean_se(se: pd.Series, level=1) -> pd.Series:
    g = (se ** 2).groupby(level=level)
    return np.sqrt(g.sum()) / g.count()


def _by_ori(mx, metric, methods, lmin=-np.inf):
    """value/RMSE(Ori) per (estimand, ln ε) for one method, and its delta-method MCSE."""
    (meth,) = methods
    v = _dp(mx, metric, ALL, [meth], lmin=lmin)[meth]
    se = _dp(mx, metric, ALL, [meth], lmin=lmin, col="mcse")[meth]
    if metric == "bias":
        v = v.abs()
    est = v.index.get_level_values(0)
    ori = pd.Series(est.map(_ref(mx, "rmse")).to_numpy(float), index=v.index)
    ori_se = pd.Series(est.map(_ref(mx, "rmse", col="mcse")).to_numpy(float), index=v.index)
    return v / ori, ratio_mcse(v, ori, se, ori_se)


def _claim_wrong_bias(mx):
    b = _dp(mx, "bias", ALL, [MW], lmin=-1)[MW].abs()
    se = _dp(mx, "bias", ALL, [MW], lmin=-1, col="mcse")[MW]
    r, rse = _by_ori(mx, "bias", [MW], lmin=-1)
    ratio, ratio_se = r.groupby(level=1).mean(), _mean_se(rse)
    sig = (b > 2 * se).groupby(level=1).mean()
    parts = decide_cells(ratio, ratio_se, 1.0)
    return ClaimResult(all_of(*parts),
                       f"MODIPS-Wrong mean |bias|/RMSE(Ori) over the 22 estimands by ln ε: "
                       f"{_fmt(ratio)} (> 1 everywhere; largest MCSE {ratio_se.max():.2g}; "
                       f"{count_verdicts(parts)}); share of estimands with |bias| > 2 MCSE: "
                       f"{_fmt(sig, 2)}")


def _claim_wrong_cover(mx):
    t = _dp(mx, "coverage", ALL, [MW], lmin=-1)[MW]
    c = t.groupby(level=1).mean()
    cse = _mean_se(_dp(mx, "coverage", ALL, [MW], lmin=-1, col="mcse")[MW])
    parts = decide_cells(c, cse, 0.90, above=False)
    return ClaimResult(all_of(*parts),
                       f"MODIPS-Wrong mean CP over the 22 estimands by ln ε: {_fmt(c)} (< 0.90; "
                       f"largest MCSE {cse.max():.2g}; {count_verdicts(parts)})")


def _claim_correct_bias_zero(mx):
    # "close to zero": |bias| <= 0.1, decided against 2 MCSE of the cell (the former "or within
    # 2 MCSE of 0" allowance is the decide band: such a cell is not FAIL unless 0.1 + 2 MCSE is
    # exceeded)
    b = _dp(mx, "bias", ALL, [MC], lmin=0)[MC]
    se = _dp(mx, "bias", ALL, [MC], lmin=0, col="mcse")[MC]
    parts = pd.Series(decide_cells(b.abs(), se, 0.1, above=False), index=b.index)
    worst = b.abs().groupby(level=1).max()
    bad = b[parts != PASS].abs().sort_values(ascending=False).head(4)
    return ClaimResult(all_of(*parts),
                       f"MODIPS-Correct largest |bias| by ln ε >= 0: {_fmt(worst)}; (estimand, "
                       f"ln ε) close to 0: {count_verdicts(list(parts))}; worst not PASS: "
                       + ", ".join(f"{k[0]}@{k[1]:g} {v:.2f} ± {se[k]:.2f}"
                                   for k, v in bad.items()))


def _claim_correct_bias_small_eps(mx):
    # not plotted by the paper: compare the mean |bias| of the β's at ln ε <= −2
    m = mx[(mx["metric"] == "bias") & mx["estimand"].isin(BETA) & (mx["log_epsilon"] <= -2)
           & mx["method"].isin([MC, MW, NP])]
    g = m.assign(value=m["value"].abs(), se2=m["mcse"] ** 2).groupby(["log_epsilon", "method"])
    t = g["value"].mean().unstack("method")
    s = (np.sqrt(g["se2"].sum()) / g["se2"].count()).unstack("method")
    parts = [decide(t.loc[x, MC] - t.loc[x, o], 0.0, float(np.hypot(s.loc[x, MC], s.loc[x, o])))
             for x in t.index for o in (MW, NP)]
    return ClaimResult(all_of(*parts), "mean |bias| of the β's at ln ε <= -2: "
                       + "; ".join(f"{x:g}: MC {r[MC]:.2f} ± {s.loc[x, MC]:.2f}, MW {r[MW]:.2f}, "
                                   f"NP {r[NP]:.2f}" for x, r in t.iterrows())
                       + f" (MC largest: {count_verdicts(parts)})")


def _claim_np_bias_persists(mx):
    b = _dp(mx, "bias", BETA + SIGMA, [NP])[NP].abs().groupby(level=1).mean()
    bse = _mean_se(_dp(mx, "bias", BETA + SIGMA, [NP], col="mcse")[NP])
    ratio = b.loc[4] / b.loc[-1]
    rse = float(ratio_mcse(pd.Series([b.loc[4]]), pd.Series([b.loc[-1]]),
                          pd.Series([bse.loc[4]]), pd.Series([bse.loc[-1]])).iloc[0])
    v = all_of(decide(ratio, 0.5, rse), decide(b.loc[4], 0.1, bse.loc[4]))
    return ClaimResult(v, f"NP-DIPS mean |bias| over β's and Σ by ln ε: {_fmt(b)}; ln ε = 4 vs "
                       f"−1: {ratio:.2f} ± {rse:.2f} (> 0.5 and > 0.1: does not diminish)")


def _claim_rmse_large(mx):
    out, parts = [], []
    for meth in (MC, MW, NP):
        r, rse = _by_ori(mx, "rmse", [meth])
        ratio, ratio_se = r.groupby(level=1).mean(), _mean_se(rse)
        cells = decide_cells(ratio, ratio_se, 2)
        parts += cells
        out.append(f"{meth} min over ln ε {ratio.min():.2f} ± {ratio_se[ratio.idxmin()]:.2f} "
                   f"(at {ratio.idxmin():g}; {count_verdicts(cells)})")
    return ClaimResult(all_of(*parts), "mean RMSE/RMSE(Ori) over the estimands, smallest by "
                       "method: " + "; ".join(out) + " (>= 2 at every ln ε)")


def _claim_correct_cover(mx):
    # CP >= 0.95 decided against 2 MCSE, the MCSE floored at 0.005 (a CP of 1 has MCSE 0)
    c = _dp(mx, "coverage", BETA, [MC], lmin=0)[MC]
    se = _dp(mx, "coverage", BETA, [MC], lmin=0, col="mcse")[MC]
    parts = decide_cells(c, se.clip(lower=0.005), 0.95)
    worst = c.groupby(level=1).min()
    return ClaimResult(all_of(*parts),
                       f"MODIPS-Correct smallest β CP by ln ε >= 0: {_fmt(worst)}; cells vs "
                       f"0.95: {count_verdicts(parts)}")


def _claim_correct_wide(mx):
    w = _dp(mx, "width", BETA + MU + SIGMA, [MC, NP], lmin=-1)
    ws = _dp(mx, "width", BETA + MU + SIGMA, [MC, NP], lmin=-1, col="mcse")
    r, rse = w[MC] / w[NP], ratio_mcse(w[MC], w[NP], ws[MC], ws[NP])
    med = {x: median_with_mcse(g.droplevel(1), rse.xs(x, level=1))
           for x, g in r.groupby(level=1)}
    parts = [decide(v, 1.0, e) for v, e in med.values()]
    return ClaimResult(all_of(*parts),
                       "median width(MODIPS-Correct)/width(NP-DIPS) by ln ε >= −1: "
                       + ", ".join(f"{x:g}: {v:.3g} ± {e:.2g}" for x, (v, e) in med.items())
                       + " (> 1: wide CIs)")


def _claim_np_cover_varies(mx):
    c = _dp(mx, "coverage", ALL, [NP])[NP]
    cs = _dp(mx, "coverage", ALL, [NP], col="mcse")[NP]
    cmax = c.groupby(level=0).max()
    cmin = c.groupby(level=0).min()
    # per estimand: severe at every ε (all CP < 0.80) and fine at every ε (all CP >= 0.90),
    # each decided per cell; the claim needs at least one estimand of each kind
    sev = {e: all_of(*decide_cells(g, cs.loc[e], 0.80, above=False)) for e, g in c.groupby(level=0)}
    fin = {e: all_of(*decide_cells(g, cs.loc[e], 0.90)) for e, g in c.groupby(level=0)}
    severe = sorted(e for e, v in sev.items() if v == PASS)
    fine = sorted(e for e, v in fin.items() if v == PASS)
    small_only = sorted(set(cmin[cmin < 0.80].index) - set(cmax[cmax < 0.80].index))
    v = all_of(any_of(*sev.values()), any_of(*fin.values()))
    return ClaimResult(v, f"NP-DIPS: severe under-coverage at every ε (decided) for {len(severe)} "
                       f"({', '.join(severe[:6])}...), CP >= 0.90 at every ε for {len(fine)} "
                       f"({', '.join(fine)}), under-coverage only at some ε for {len(small_only)}")


def _claim_np_width_flat(mx):
    w = _dp(mx, "width", ALL, [NP])[NP]
    ws = _dp(mx, "width", ALL, [NP], col="mcse")[NP]
    hi, lo = w.groupby(level=0).idxmax(), w.groupby(level=0).idxmin()
    ratio = pd.Series(w[hi].to_numpy() / w[lo].to_numpy(), index=hi.index)
    rse = ratio_mcse(pd.Series(w[hi].to_numpy()), pd.Series(w[lo].to_numpy()),
                    pd.Series(ws[hi].to_numpy()), pd.Series(ws[lo].to_numpy()))
    parts = decide_cells(ratio, rse, 2, above=False)
    return ClaimResult(all_of(*parts),
                       f"NP-DIPS max/min CI width over ln ε, largest: {ratio.max():.2f} "
                       f"({ratio.idxmax()}), median {ratio.median():.2f} (<= 2 for all; "
                       f"{count_verdicts(parts)})")


def _claim_mu_np_better_small(mx):
    out, parts = [], []
    for metric in ("bias", "rmse", "width"):
        v = _dp(mx, metric, MU, [MC, NP], lmax=0)
        s = _dp(mx, metric, MU, [MC, NP], lmax=0, col="mcse")
        a, b = (v[NP].abs(), v[MC].abs()) if metric == "bias" else (v[NP], v[MC])
        cells = decide_cells(a - b, np.hypot(s[NP], s[MC]), 0.0, above=False)
        parts += cells
        out.append(f"{metric}: NP < MC {count_verdicts(cells)} of (μ, ln ε<=0)")
    return ClaimResult(all_of(*parts), "; ".join(out))


def _claim_mu_similar_large(mx):
    r = _dp(mx, "rmse", MU, [MC, NP], lmin=2)
    w = _dp(mx, "width", MU, [MC, NP], lmin=2)
    rs = _dp(mx, "rmse", MU, [MC, NP], lmin=2, col="mcse")
    wsd = _dp(mx, "width", MU, [MC, NP], lmin=2, col="mcse")
    rr, wr = r[NP] / r[MC], w[NP] / w[MC]
    rr_se, wr_se = ratio_mcse(r[NP], r[MC], rs[NP], rs[MC]), ratio_mcse(w[NP], w[MC], wsd[NP],
                                                                       wsd[MC])
    parts = (decide_cells(rr, rr_se, 2 / 3) + decide_cells(rr, rr_se, 1.5, above=False)
             + decide_cells(wr, wr_se, 2 / 3) + decide_cells(wr, wr_se, 1.5, above=False))
    return ClaimResult(all_of(*parts), f"μ at ln ε >= 2, RMSE ratio NP/MC {rr.min():.2f}–"
                       f"{rr.max():.2f}, width ratio {wr.min():.2f}–{wr.max():.2f} (within "
                       f"[0.67, 1.5]; {count_verdicts(parts)})")


def _claim_mu_cover(mx):
    c = _dp(mx, "coverage", MU, [MC, NP])
    s = _dp(mx, "coverage", MU, [MC, NP], col="mcse")
    parts = decide_cells(c[[MC, NP]], s[[MC, NP]], 0.90)
    return ClaimResult(all_of(*parts),
                       f"μ CP min: MODIPS-Correct {c[MC].min():.3f}, NP-DIPS {c[NP].min():.3f} "
                       f"(>= 0.90 at every ln ε; {count_verdicts(parts)})")


def _claim_mu_wrong(mx):
    r = _dp(mx, "rmse", MU, [MW])[MW]
    rs = _dp(mx, "rmse", MU, [MW], col="mcse")[MW]
    c = _dp(mx, "coverage", MU, [MW])[MW]
    cs = _dp(mx, "coverage", MU, [MW], col="mcse")[MW]
    falls = all_of(*decide_cells(r.xs(4, level=1) - r.xs(-4, level=1),
                           np.hypot(rs.xs(4, level=1), rs.xs(-4, level=1)), 0.0, above=False))
    # CP < 0.90 somewhere, for each μ: any ln ε decided below 0.90
    off = all_of(*(any_of(*decide_cells(g, cs.loc[e], 0.90, above=False))
                   for e, g in c.groupby(level=0)))
    return ClaimResult(all_of(falls, off), f"MODIPS-Wrong μ RMSE ln ε −4 → 4: "
                       f"{_fmt(r.xs(-4, level=1))} → {_fmt(r.xs(4, level=1))} ({falls}); "
                       f"smallest CP: {_fmt(c.groupby(level=0).min())} ({off}) (RMSE falls and "
                       "CP < 0.90 somewhere)")


def _claim_sigma_severe(method):
    def check(mx):
        c = _dp(mx, "coverage", SIGMA, [method])[method]
        cs = _dp(mx, "coverage", SIGMA, [method], col="mcse")[method]
        cmax = c.groupby(level=0).max()
        parts = decide_cells(c, cs, 0.80, above=False)
        top = c.idxmax()
        return ClaimResult(all_of(*parts), f"{method} largest CP over ε: {_fmt(cmax)} (< 0.80 "
                           f"at every ε; largest {c[top]:.3f} ± {cs[top]:.3f}; "
                           f"{count_verdicts(parts)})")
    return check


def _claim_sigma_correct(mx):
    c = _dp(mx, "coverage", SIGMA, [MC], lmin=-1)[MC]
    cs = _dp(mx, "coverage", SIGMA, [MC], lmin=-1, col="mcse")[MC]
    parts = decide_cells(c, cs, 0.93)
    out = []
    for metric in ("bias", "rmse"):
        v = _dp(mx, metric, SIGMA, [MC, NP], lmin=-1)
        s = _dp(mx, metric, SIGMA, [MC, NP], lmin=-1, col="mcse")
        a, b = (v[MC].abs(), v[NP].abs()) if metric == "bias" else (v[MC], v[NP])
        cells = decide_cells(a - b, np.hypot(s[NP], s[MC]), 0.0, above=False)
        parts += cells
        out.append(f"{metric} MC < NP {count_verdicts(cells)}")
    return ClaimResult(all_of(*parts), f"Σ, ln ε >= −1: MODIPS-Correct smallest CP "
                       f"{c.min():.3f} ± {cs[c.idxmin()]:.3f} (>= 0.93); " + "; ".join(out))


def _claim_sigma_wide(mx):
    w = _dp(mx, "width", SIGMA, [MC, NP], lmax=0)
    ws = _dp(mx, "width", SIGMA, [MC, NP], lmax=0, col="mcse")
    ratio = w[MC] / w[NP]
    parts = decide_cells(ratio, ratio_mcse(w[MC], w[NP], ws[MC], ws[NP]), 1.0)
    return ClaimResult(all_of(*parts), f"Σ width MC/NP at ln ε <= 0: "
                       f"{ratio.min():.2f}–{ratio.max():.2f} (> 1; {count_verdicts(parts)})")


CLAIMS = [
    Claim("1a", "MODIPS-Wrong is biased (§4.3.2, 1)", _claim_wrong_bias, METHODS),
    Claim("1b", "MODIPS-Wrong under-covers (§4.3.2, 1)", _claim_wrong_cover, METHODS),
    Claim("2a", "MODIPS-Correct bias close to 0 for ε > e^-1 (§4.3.2, 2)",
          _claim_correct_bias_zero, METHODS),
    Claim("2b", "MODIPS-Correct β bias larger than the other methods at small ε (§4.3.2, 2)",
          _claim_correct_bias_small_eps, METHODS),
    Claim("2c", "NP-DIPS bias does not diminish at large ε (§4.3.2, 2)",
          _claim_np_bias_persists, METHODS),
    Claim("3", "RMSE of all DIPS large compared to Ori (§4.3.2, 3)", _claim_rmse_large,
          METHODS),
    Claim("4a", "MODIPS-Correct CP at or above 95% for ε > e^-1 (§4.3.2, 4)",
          _claim_correct_cover, METHODS),
    Claim("4b", "MODIPS-Correct at the cost of wide CIs (§4.3.2, 4)", _claim_correct_wide,
          METHODS),
    Claim("4c", "NP-DIPS CP varies across parameters (§4.3.2, 4)", _claim_np_cover_varies,
          METHODS),
    Claim("4d", "NP-DIPS CI width varies little with ε (§4.3.2, 4)", _claim_np_width_flat,
          METHODS),
    Claim("5a", "μ: NP-DIPS smaller bias, RMSE, width than MODIPS-Correct for ε < e (§4.3.2, 5)",
          _claim_mu_np_better_small, METHODS),
    Claim("5b", "μ: NP-DIPS and MODIPS-Correct similar for ε > e (§4.3.2, 5)",
          _claim_mu_similar_large, METHODS),
    Claim("5c", "μ: both about 95% CP (§4.3.2, 5)", _claim_mu_cover, METHODS),
    Claim("5d", "μ: MODIPS-Wrong RMSE falls with ε, CP stays off (§4.3.2, 5)", _claim_mu_wrong,
          METHODS),
    Claim("6a-NP", "Σ: NP-DIPS severe under-coverage at every ε (§4.3.2, 6)",
          _claim_sigma_severe(NP), METHODS),
    Claim("6a-MW", "Σ: MODIPS-Wrong severe under-coverage at every ε (§4.3.2, 6)",
          _claim_sigma_severe(MW), METHODS),
    Claim("6a-MW-marginal", "Σ: MODIPS-Wrong (marginal Σ scale) severe under-coverage at every ε",
          _claim_sigma_severe("MODIPS-Wrong-marginal"), (*METHODS, "MODIPS-Wrong-marginal")),
    Claim("6b", "Σ: MODIPS-Correct nominal CP, smaller bias and RMSE than NP-DIPS for ε > e^-2 "
          "(§4.3.2, 6)", _claim_sigma_correct, METHODS),
    Claim("6c", "Σ: MODIPS-Correct wide CIs for ε < e (§4.3.2, 6)", _claim_sigma_wide, METHODS),
]

