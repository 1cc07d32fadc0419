"""The conclusions of Hu, Savitsky & Williams on the repeated-sampling study (appendix F, with
§4's statements it echoes) as claims on the aggregated metrics, each decided against its Monte
Carlo error (``harness.claims.decide``: PASS/FAIL only beyond 2 MCSEs of the threshold).

Thresholds come from the wording, fixed before the paper-profile run. Statistics over cells are
means over the paper's 24 cells (interior cells and field totals); the MCSE of a mean over k
cells is sqrt(Σ se²)/k and of a difference the hypot of the two (cells treated as independent;
conservative where replicates are shared). Δ = 1.8 and m = 3 (ε = 10.8) unless stated.
"""

from __future__ import annotations

import numpy as np

from harness.claims import Claim, ClaimResult, all_of, decide, median_with_mcse, ratio_mcse

from .tables import CELLS, cell_metric, ci_ratio

SYNTHS = ("FBS", "FBP")
DELTAS = (1.8, 3.4)


def _cells(mx, method, metric, kind, m=3, delta=1.8, names=CELLS):
    v = cell_metric(mx, method, metric, kind, m, delta)
    s = cell_metric(mx, method, metric, kind, m, delta, "mcse")
    return v.loc[list(names)], s.loc[list(names)]


def _mean(mx, method, metric, kinds=("count", "mean"), m=3, delta=1.8, names=CELLS):
    """Mean of a metric over the cells of ``kinds`` and its MCSE."""
    vals, ses = [], []
    for kind in kinds:
        v, s = _cells(mx, method, metric, kind, m, delta, names)
        vals.append(v.to_numpy())
        ses.append(s.to_numpy())
    v, s = np.concatenate(vals), np.concatenate(ses)
    return float(v.mean()), float(np.sqrt((s ** 2).sum()) / len(v))


def _f(x):
    return f"{x:.3g}"


def _mean_ratio(a, sa, b, sb) -> tuple[float, float]:
    """Mean over cells of a/b and its MCSE (delta method per cell, sqrt(Σ se²)/k)."""
    se = ratio_mcse(a, b, sa, sb)
    return float((a / b).mean()), float(np.sqrt((se ** 2).sum()) / len(a))


def _m_coverage(mx):
    parts, text = [], []
    for method in SYNTHS:
        for delta in DELTAS:
            c1, s1 = _mean(mx, method, "coverage", m=1, delta=delta)
            c3, s3 = _mean(mx, method, "coverage", m=3, delta=delta)
            parts.append(decide(c3 - c1, 0.0, np.hypot(s1, s3)))
            text.append(f"{method} Δ={delta}: {_f(c1)} -> {_f(c3)}")
    return ClaimResult(all_of(*parts), "mean coverage of the 48 count and mean cells, m = 1 -> "
                       "m = 3: " + "; ".join(text) + " (higher at m = 3)")


def _m_shorter(mx):
    parts, text = [], []
    for method in SYNTHS:
        for kind in ("count", "mean"):
            mean, mse = _mean_ratio(*_cells(mx, method, "width", kind, m=10),
                                    *_cells(mx, method, "width", kind, m=3))
            parts.append(decide(mean, 1.0, mse, above=False))
            text.append(f"{method} {kind}s {_f(mean)} ± {_f(mse)}")
    return ClaimResult(all_of(*parts), "mean over cells of avg CI length m = 10 / m = 3: "
                       + "; ".join(text) + " (< 1)")


def _delta_utility(mx):
    parts, text = [], []
    for method in SYNTHS:
        mean, mse = _mean_ratio(*_cells(mx, method, "rmse", "mean", delta=3.4),
                                *_cells(mx, method, "rmse", "mean", delta=1.8))
        parts.append(decide(mean, 1.0, mse, above=False))
        text.append(f"{method} {_f(mean)} ± {_f(mse)}")
    return ClaimResult(all_of(*parts), "mean over the 24 mean-salary cells of RMSE at Δ = 3.4 / "
                       "Δ = 1.8 (m = 3): " + "; ".join(text) + " (< 1)")


def _settings():
    return [(m, d) for d in DELTAS for m in (1, 3, 5, 10)]


def _fbp_counts_longer(mx):
    parts, text = [], []
    for m, d in _settings():
        r, se = ci_ratio(mx, "count", m, d)
        parts.append(decide(r, 1.0, se))
        text.append(f"m={m},Δ={d}: {_f(r)}")
    return ClaimResult(all_of(*parts), "FBP/FBS avg count CI length (caption ratio): "
                       + "; ".join(text) + " (> 1)")


def _means_similar(mx):
    parts, text = [], []
    for m, d in _settings():
        r, se = ci_ratio(mx, "mean", m, d)
        parts.append(decide(abs(r - 1.0), 0.10, se, above=False))
        text.append(f"m={m},Δ={d}: {_f(r)}")
    return ClaimResult(all_of(*parts), "FBP/FBS avg mean-salary CI length (caption ratio): "
                       + "; ".join(text) + " (within 0.10 of 1)")


F7 = ("F7_total", "F7_Male")
NOT_F7 = tuple(c for c in CELLS if c not in F7)


def _fbp_overcovers(mx):
    p, ps = _mean(mx, "FBP", "coverage", ("count",), names=NOT_F7)
    s, ss = _mean(mx, "FBS", "coverage", ("count",), names=NOT_F7)
    return ClaimResult(decide(p - s, 0.0, np.hypot(ps, ss)),
                       f"mean count coverage over the 22 cells other than F7 total/Male: FBP "
                       f"{_f(p)} ± {_f(ps)}, FBS {_f(s)} ± {_f(ss)} (FBP higher)")


def _fbp_field7(mx):
    v, s = _cells(mx, "FBP", "coverage", "count", names=F7)
    parts = [decide(v[c], 0.80, s[c], above=False) for c in F7]
    return ClaimResult(all_of(*parts), "FBP count coverage: " + ", ".join(
        f"{c} {_f(v[c])} ± {_f(s[c])}" for c in F7) + " (< 0.80; paper 0.51 / 0.51)")


def _fbs_totals_undercover(mx):
    totals = tuple(c for c in CELLS if c.endswith("total"))
    v, s = _mean(mx, "FBS", "coverage", ("count",), names=totals)
    return ClaimResult(decide(v, 0.95, s, above=False),
                       f"FBS mean count coverage of the 8 field totals {_f(v)} ± {_f(s)} "
                       f"(< 0.95; paper 0.87)")


def _fbs_means_coverage(mx):
    s, ss = _mean(mx, "FBS", "coverage", ("mean",))
    p, ps = _mean(mx, "FBP", "coverage", ("mean",))
    return ClaimResult(decide(s - p, 0.0, np.hypot(ss, ps)),
                       f"mean coverage of the 24 mean-salary cells: FBS {_f(s)} ± {_f(ss)}, "
                       f"FBP {_f(p)} ± {_f(ps)} (FBS higher; paper 0.903 / 0.858)")


def _beats_laplace(mx):
    parts, text = [], []
    for method in SYNTHS:
        for kind in ("count", "mean"):
            a, sa = _cells(mx, method, "rmse", kind)
            b, sb = _cells(mx, "Laplace", "rmse", kind, m=1)
            med, se = median_with_mcse(a / b, ratio_mcse(a, b, sa, sb))
            parts.append(decide(med, 1.0, se, above=False))
            text.append(f"{method} {kind}s {_f(med)} ± {_f(se)}")
    return ClaimResult(all_of(*parts), "median over the 24 cells of RMSE / RMSE_Laplace at "
                       "ε = 10.8: " + "; ".join(text) + " (< 1)")


CLAIMS = [
    Claim("m-coverage", "App. F: at m = 1 both synthesizers under-cover more seriously than at "
          "m = 3 (mean coverage of the 48 count and mean cells higher at m = 3, each synthesizer "
          "and Δ)", _m_coverage, SYNTHS),
    Claim("m-shorter", "§4/App. F: more synthetic sets give shorter intervals (avg CI length "
          "m = 10 below m = 3, counts and means, each synthesizer, Δ = 1.8)", _m_shorter, SYNTHS),
    Claim("delta-utility", "§4.3/App. F: the larger Δ = 3.4 improves both synthesizers on means "
          "(lower RMSE of the mean-salary cells than at Δ = 1.8, m = 3)", _delta_utility,
          SYNTHS),
    Claim("fbp-counts-longer", "App. F captions: FBP count intervals are longer than FBS's "
          "(caption ratio > 1 at every m and Δ; paper 1.38-1.81)", _fbp_counts_longer, SYNTHS),
    Claim("means-similar", "App. F: for means FBS and FBP have similar CI lengths (caption ratio "
          "within 0.10 of 1 at every m and Δ; paper 0.93-0.97)", _means_similar, SYNTHS),
    Claim("fbp-overcovers-counts", "App. F: for counts FBP has higher coverage than FBS except "
          "in Field 7 total and male", _fbp_overcovers, SYNTHS),
    Claim("fbp-field7", "App. F: FBP under-covers the Field 7 total and Field 7 male counts "
          "(coverage below 0.80; paper 0.51)", _fbp_field7, ("FBP",)),
    Claim("fbs-totals-undercover", "App. F: FBS slightly under-covers counts (field totals "
          "below 0.95)", _fbs_totals_undercover, ("FBS",)),
    Claim("fbs-means-coverage", "App. F: for means FBS has slightly better coverage than FBP",
          _fbs_means_coverage, SYNTHS),
    Claim("beats-laplace", "§4.3 (Fig. 5): at equal ε = 10.8 FBS and FBP beat the Laplace "
          "mechanism on counts and means (median RMSE ratio < 1)", _beats_laplace,
          (*SYNTHS, "Laplace")),
]
