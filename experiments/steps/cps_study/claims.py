"""The CPS study's conclusions (§4.2, §5; spec 003 §7.5) as claims on the aggregated metrics.
Thresholds are fixed from the wording; the MCSE of each mean over repetitions is the engine's.
The paper's PrivBayes is the paper-era code (``PrivBayes-DS2019``, spec §3.2); claims about
PrivBayes are checked on it. "Best"/"better" compare means over the ε grid (each method's
mean of the per-ε means; MCSE sqrt(Σ se²)/k).

On the stand-in data these claims test the pipeline and the qualitative orderings only; the
paper's numbers are not reproducible without the real file (spec §4.3).
"""

from __future__ import annotations

import numpy as np

from harness.claims import FAIL, PASS, UNDECIDED, Claim, ClaimResult, MissingInput, all_of, decide
from harness.metrics.ranking import mc_rank_bounds

from .tables import DIRECTIONS, PAPER_NAME, wide_with_mcse

PB = "PrivBayes-DS2019"
TREES = ("FlatLaplace", "UH-2", "UH-3", "STEPS-2", "STEPS-3")


def _series(mx, method, metric):
    d = mx[(mx["method"] == method) & (mx["metric"] == metric)].sort_values("log_epsilon")
    if d.empty:
        raise MissingInput(f"no {metric} rows for {method} in this run")
    return d["log_epsilon"].to_numpy(float), d["value"].to_numpy(float), \
        d["mcse"].fillna(0).to_numpy(float)


def _mean(mx, method, metric):
    _, v, s = _series(mx, method, metric)
    return float(v.mean()), float(np.sqrt((s ** 2).sum()) / len(v))


def _f(x):
    return f"{x:.3g}"  # three significant digits, as the report's tables


def _rises(metrics, methods, lower_better=()):
    """The metric at the largest ε is better than at the smallest, for every method."""
    def check(mx):
        parts, text = [], []
        for method in methods:
            for metric in metrics:
                _, v, s = _series(mx, method, metric)
                gain = (v[0] - v[-1]) if metric in lower_better else (v[-1] - v[0])
                parts.append(decide(gain, 0.0, float(np.hypot(s[0], s[-1]))))
                text.append(f"{method} {metric} {_f(v[0])} -> {_f(v[-1])}")
        return ClaimResult(all_of(*parts), "; ".join(text))
    return check


def _better(method, others, metric, lower=False):
    def check(mx):
        a, sa = _mean(mx, method, metric)
        parts, text = [], []
        for o in others:
            b, sb = _mean(mx, o, metric)
            parts.append(decide((b - a) if lower else (a - b), 0.0, float(np.hypot(sa, sb))))
            text.append(f"{o} {_f(b)}")
        return ClaimResult(all_of(*parts), f"mean {metric} over ε: {method} {_f(a)} vs "
                           + ", ".join(text))
    return check


def _steps_beat_uh(mx):
    parts, text = [], []
    for steps, uh in (("STEPS-2", "UH-2"), ("STEPS-3", "UH-3")):
        for metric, lower in (("specks", True), ("cr5", False), ("ci_reg", False)):
            r = _better(steps, (uh,), metric, lower)(mx)
            parts.append(r.verdict)
            text.append(r.evidence)
    return ClaimResult(all_of(*parts), "; ".join(text))


#: the headline's order (§5): STEPS-2 and STEPS-3, then the flat Laplace sanitizer, then the rest
HEADLINE_TIERS = (("STEPS-2", "STEPS-3"), ("FlatLaplace",), ("UH-2", "UH-3", PB))


def overall_scores(mx) -> dict[str, tuple[int, int]]:
    """Each Table 3 method's overall score (the sum of its 8 per-metric ranks, §5.6) summed over
    the run's ε, as bounds (best, worst) with ranks decided against Monte Carlo error: two
    methods within 2 MCSE of each other on a metric share the better rank at best and may
    swap at worst (:func:`harness.metrics.ranking.mc_rank_bounds`)."""
    w = wide_with_mcse(mx)
    w = w[w["method"].isin(list(PAPER_NAME))]
    missing = sorted(set(PAPER_NAME) - set(w["method"]))
    if missing:
        raise MissingInput(f"no Table 3 rows for {missing} in this run")
    gaps = w[list(DIRECTIONS)].isna().any(axis=1)
    if gaps.any():
        raise MissingInput("Table 3 metrics missing for "
                           + ", ".join(sorted(set(w.loc[gaps, "method"]))) + " in this run")
    b = mc_rank_bounds(w, DIRECTIONS, by=["log_epsilon"])
    tot = b.groupby("method")[["overall_lo", "overall_hi"]].sum()
    return {m: (int(r.overall_lo), int(r.overall_hi)) for m, r in tot.iterrows()}


def ordered(scores: dict[str, tuple[int, int]], tiers) -> ClaimResult:
    """PASS if every method of a tier has a lower summed score than every method of the later
    tiers at every resolution of the open rank pairs (its worst below their best), FAIL if some
    pair is reversed or tied at every resolution (the earlier one's best at or above the later
    one's worst), else UNDECIDED. The bounds of two methods are taken apart, so this is
    conservative: an open pair may leave UNDECIDED what a joint resolution would decide."""
    parts = []
    for i, tier in enumerate(tiers):
        for a in tier:
            for later in tiers[i + 1:]:
                for b in later:
                    (a_lo, a_hi), (b_lo, b_hi) = scores[a], scores[b]
                    parts.append(PASS if a_hi < b_lo else FAIL if a_lo >= b_hi else UNDECIDED)
    text = ", ".join(f"{m} {lo}" + (f"–{hi}" if hi != lo else "")
                     for m, (lo, hi) in sorted(scores.items(), key=lambda kv: kv[1]))
    return ClaimResult(all_of(*parts), "overall score summed over ε (best–worst under "
                       "2-MCSE rank ties; lower is better): " + text)


def _steps_best_overall(mx):
    return ordered(overall_scores(mx), HEADLINE_TIERS)


CLAIMS = [
    Claim("utility_rises_with_eps",
          "Utility (SPECKS, χ² consistency) rises with ε for every method (§4.2, Figs 5-6)",
          _rises(("specks", "cr5"), (*TREES, PB), lower_better=("specks",)), (*TREES, PB)),
    Claim("privbayes_best_specks",
          "PrivBayes is best on SPECKS by a large margin (§4.2, Fig 5)",
          _better(PB, TREES, "specks", lower=True), (*TREES, PB)),
    Claim("privbayes_poor_chi2",
          "PrivBayes is poor on the χ² tests (lowest consistency at α = 5 %) (§4.2, Fig 6)",
          _better("FlatLaplace", (PB,), "cr5"), ("FlatLaplace", PB)),
    Claim("laplace_best_chi2",
          "The flat Laplace sanitizer is best on the χ² tests (α = 5 %) (§4.2, Fig 6)",
          _better("FlatLaplace", ("UH-2", "UH-3", "STEPS-2", "STEPS-3", PB), "cr5"),
          (*TREES, PB)),
    Claim("steps_beat_uh",
          "STEPS beats the random-partition UH-mod (SPECKS, χ² at 5 %, Reg CI overlap) (§4.2)",
          _steps_beat_uh, ("STEPS-2", "STEPS-3", "UH-2", "UH-3")),
    Claim("steps_beat_laplace_specks",
          "On SPECKS, STEPS-2 and STEPS-3 are better than the flat Laplace sanitizer (§4.2)",
          lambda mx: ClaimResult(all_of(
              _better("STEPS-2", ("FlatLaplace",), "specks", True)(mx).verdict,
              _better("STEPS-3", ("FlatLaplace",), "specks", True)(mx).verdict),
              _better("STEPS-2", ("FlatLaplace",), "specks", True)(mx).evidence + "; "
              + _better("STEPS-3", ("FlatLaplace",), "specks", True)(mx).evidence),
          ("STEPS-2", "STEPS-3", "FlatLaplace")),
    Claim("focal_overlap_high",
          "The focal DID coefficients' CI overlaps are about 0.75 or higher for the tree "
          "methods (here: mean over ε of Prereg and Prereg × Reg above 0.7) (§4.2, Fig 7)",
          lambda mx: ClaimResult(all_of(*[
              decide(_mean(mx, m, k)[0], 0.7, _mean(mx, m, k)[1])
              for m in TREES for k in ("ci_prereg", "ci_pxr")]),
              "; ".join(f"{m} {k} {_f(_mean(mx, m, k)[0])}" for m in TREES
                        for k in ("ci_prereg", "ci_pxr"))), TREES),
    Claim("steps_best_overall",
          "Taking all analyses together, STEPS-2 and STEPS-3 are best, followed by the flat "
          "Laplace sanitizer (§5; here: Table 3's overall score, the sum of the 8 per-metric "
          "ranks, summed over ε, ranks tied within 2 MCSE)",
          _steps_best_overall, (*TREES, PB)),
]
