"""The conclusions of Hu, Savitsky & Williams on the SDR application (§3, Figs 1–2) as claims on
the aggregated metrics, each decided against its Monte Carlo error (``harness.claims.decide``).

The Monte Carlo error here is that of the releases: every replicate re-releases the *same*
sample with fresh method randomness. A cell RMSE is the paper's √((θ̂ − θ̂_sample)² + SE²)
(spec §8); "median RMSE" is the mean over releases of the median over the 27 cells of one
release, "spread" the same for the interquartile range over the cells. Methods' releases are
independent, so the MCSE of a difference is the hypot of the two. Thresholds come from the
wording, fixed before the paper-profile run.
"""

from __future__ import annotations

import numpy as np

from harness.claims import Claim, ClaimResult, all_of, decide, one_value, ratio_mcse

SYNTHS = ("FBS", "FBP")
TARGET = 1.8  # Δ_α of both synthesizers (Fig. 1)
TARGET_TOL = 0.02  # "about 1.8": within 0.02 below or above
DRAMATIC = 0.1  # "dramatically outperform": an order of magnitude lower median RMSE
MUCH = 0.8  # "much better": at least 20% lower median RMSE


def _get(mx, method: str, metric: str) -> tuple[float, float]:
    sel = (mx["method"] == method) & (mx["metric"] == metric)
    return one_value(mx[sel], f"{method} {metric}")


def _f(x):
    return f"{x:.4g}"


def _lower(mx, a: str, b: str, metric: str, what: str) -> ClaimResult:
    """``a``'s metric below ``b``'s (difference b − a above 0)."""
    va, sa = _get(mx, a, metric)
    vb, sb = _get(mx, b, metric)
    return ClaimResult(decide(vb - va, 0.0, np.hypot(sa, sb)),
                       f"{what}: {a} {_f(va)} ± {_f(sa)}, {b} {_f(vb)} ± {_f(sb)} "
                       f"({a} lower)")


def _ratio_below(mx, a: str, b: str, metric: str, threshold: float):
    va, sa = _get(mx, a, metric)
    vb, sb = _get(mx, b, metric)
    r, se = va / vb, float(ratio_mcse(np.array([va]), np.array([vb]), np.array([sa]),
                                      np.array([sb]))[0])
    return decide(r, threshold, se, above=False), f"{a}/{b} {_f(r)} ± {_f(se)}"


def _fbs_beats_laplace_counts(mx):
    return _lower(mx, "FBS", "Laplace", "rmse_median_count", "median count RMSE")


def _synths_beat_laplace_means(mx):
    parts, text = [], []
    for m in SYNTHS:
        v, t = _ratio_below(mx, m, "Laplace", "rmse_median_mean", DRAMATIC)
        parts.append(v)
        text.append(t)
    return ClaimResult(all_of(*parts), "median mean-salary RMSE ratio: " + "; ".join(text)
                       + f" (< {DRAMATIC})")


def _fbs_much_better_counts(mx):
    v, t = _ratio_below(mx, "FBS", "FBP", "rmse_median_count", MUCH)
    return ClaimResult(v, f"median count RMSE ratio {t} (< {MUCH})")


def _fbp_better_means(mx):
    return _lower(mx, "FBP", "FBS", "rmse_median_mean", "median mean-salary RMSE")


def _fbp_counts_more_variable(mx):
    return _lower(mx, "FBS", "FBP", "rmse_iqr_count",
                  "interquartile range over the 27 cells of the count RMSE")


def _fbp_means_contracted(mx):
    return _lower(mx, "FBP", "FBS", "rmse_iqr_mean",
                  "interquartile range over the 27 cells of the mean-salary RMSE")


def _bounds_hit_target(mx):
    parts, text = [], []
    for m in SYNTHS:
        v, s = _get(mx, m, "bound_weighted_p100.0")
        parts.append(decide(abs(v - TARGET), TARGET_TOL, s, above=False))
        text.append(f"{m} {_f(v)} ± {_f(s)}")
    return ClaimResult(all_of(*parts), "overall Lipschitz bound of the tuned fit: "
                       + "; ".join(text) + f" (within {TARGET_TOL} of {TARGET}; ε = 10.8)")


def _fbp_unweighted_higher(mx):
    return _lower(mx, "FBS", "FBP", "bound_unweighted_p100.0",
                  "overall Lipschitz bound of the unweighted fit (paper 11.0 / 15.9)")


def _fbs_more_near_bound(mx):
    return _lower(mx, "FBP", "FBS", "share_near_bound",
                  "share of records with Δ_α,i ≥ 0.9·Δ_α")


def _margins(mx):
    parts, text = [], []
    for m in SYNTHS:
        v, s = _get(mx, m, "margin_gap_count")
        parts.append(decide(v, 1e-9, s, above=False))
        text.append(f"{m} {v:.2g}")
    v, s = _get(mx, "Laplace", "margin_gap_count")
    parts.append(decide(v, 1e-3, s))
    text.append(f"Laplace {v:.2g} ± {s:.2g}")
    return ClaimResult(all_of(*parts), "largest relative gap |male + female − total| / total "
                       "of the count margins: " + "; ".join(text)
                       + " (FBS, FBP < 1e-9; Laplace > 1e-3)")


CLAIMS = [
    Claim("fbs-beats-laplace-counts", "§3.3 (Fig. 2): for the counts, FBS slightly outperforms "
          "the Laplace mechanism (lower median RMSE at ε = 10.8)", _fbs_beats_laplace_counts,
          ("FBS", "Laplace")),
    Claim("synths-beat-laplace-means", "§3.3 (Fig. 2): on average salaries FBS and FBP "
          "dramatically outperform the Laplace mechanism (median RMSE an order of magnitude "
          "lower)", _synths_beat_laplace_means, (*SYNTHS, "Laplace")),
    Claim("fbs-much-better-counts", "§3.3: between the two, FBS performs much better on counts "
          "(median count RMSE at least 20% below FBP's)", _fbs_much_better_counts, SYNTHS),
    Claim("fbp-better-means", "§3.3: FBP performs slightly better on average salaries (lower "
          "median RMSE than FBS)", _fbp_better_means, SYNTHS),
    Claim("fbp-counts-more-variable", "§3.3 (Fig. 2): FBP expresses more variation in the "
          "count RMSEs (wider spread over the cells than FBS)", _fbp_counts_more_variable,
          SYNTHS),
    Claim("fbp-means-contracted", "§3.3 (Fig. 2): FBP produces an even more contracted "
          "mean-salary RMSE distribution (narrower spread over the cells than FBS)",
          _fbp_means_contracted, SYNTHS),
    Claim("bounds-hit-target", "§3.2 (Fig. 1): the weighted FBS and FBP have equal overall "
          "Lipschitz bounds of about 1.8 (ε = 2 × 1.8 × 3 = 10.8)", _bounds_hit_target,
          SYNTHS),
    Claim("fbp-unweighted-higher", "§3.2 (Fig. 1): without α the overall bound of FBP exceeds "
          "FBS's (paper 15.9 vs 11.0)", _fbp_unweighted_higher, SYNTHS),
    Claim("fbs-more-near-bound", "§3.2 (Fig. 1): FBS has more records with bounds concentrated "
          "around the overall bound than FBP (FBP downweights more)", _fbs_more_near_bound,
          SYNTHS),
    Claim("margins-add-up", "§4.3, Table 2: FBS and FBP counts add up over the margins, the "
          "Laplace mechanism's do not", _margins, (*SYNTHS, "Laplace")),
]
