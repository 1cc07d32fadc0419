"""Bowen & Liu (2020) Simulation 1 as a plain per-replicate, record-level loop: the test oracle
of the vectorised path (``experiments.bowen_liu.sim1.study`` + ``harness.synthesizers``).

This module is written straight from the paper's text (Bowen & Liu 2020, §4.1; spec 000
§2.4–§2.6, §3 and §4.1), the way a researcher would write the simulation without the harness:
ONE replicate at a time, with the n original records and the n records of every synthetic set
drawn explicitly. It shares no code with ``harness.synthesizers``, ``harness.models``,
``harness.privacy`` or ``harness.inference``; the combining rule (Eqs. 9–11) is written out in
scalar form below. The vectorised path draws count tables instead of records; the two must agree
in distribution (``tests/bowen_liu/test_sim1_loop_vs_vectorised.py``), and ``harness bench``
times both.

Per replicate: x_i iid Bern(π), i = 1..n, and n₁ = Σ x_i. Per method, m sets with ε/m each:

* Ori: p̂ from x, v = p̂(1 − p̂)/n, Wald z interval.
* MS: π_j ~ Beta(a + n₁, b + n − n₁), x̃_ij ~ Bern(π_j).
* MODIPS: n₁* = n₁ + Lap(0, Δ·m/ε) brought into [0, n] (clamp = BIT, or redraw = truncation;
  ``reviewer``: clamp to [−a, b + n]), π* ~ Beta(a + n₁*, b + n − n₁*), x̃_ij ~ Bern(π*).
* LAP: n₁* = n₁ + Lap(0, Δ·m/ε) brought into [0, n]; the set is round(n₁*) ones and
  n − round(n₁*) zeros.
* MD: p* ~ Beta(α* + n₁, α* + n − n₁), α* = n/(e^{ε/m} − 1); x̃_ij ~ Bern(p*).
* BB-MR (m = 1, full ε): α* = 1/(e^{ε/n} − 1), p* = (n₁ + α*)/(n + 2α*), x̃_i ~ Bern(p*).

Every set is analysed with p̂_j = mean of its records and v_j = p̂_j(1 − p̂_j)/n, then pooled:
q̄ = mean p̂_j, B = Σ(p̂_j − q̄)²/(m − 1), W = mean v_j, T = B/m + W,
ν = (m − 1)(1 + mW/B)² (∞ when B = 0), CI q̄ ± t_{ν,0.975}√T; for m = 1, T = v and a z
interval. A replicate is usable when T > 0 (otherwise the CI is NaN).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy import special, stats

LEVEL = 0.95


def _number(value) -> float:
    """A config number; strings such as "1/3" are exact fractions."""
    if isinstance(value, str):
        return float(Fraction(value.replace(" ", "")))
    return float(value)


def _bern(p: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """n Bernoulli(p) records."""
    return rng.random(n) < p


def _beta(a: float, b: float, rng: np.random.Generator) -> float:
    """One Beta(a, b) draw; a parameter of exactly 0 (possible under the reviewer's bounds) is
    the point mass at the opposite end, the limit of the Beta distribution."""
    if a <= 0.0 and b <= 0.0:
        raise ValueError(f"Beta({a}, {b}) is undefined")
    if a <= 0.0:
        return 0.0
    if b <= 0.0:
        return 1.0
    return float(rng.beta(a, b))


def _sanitize_count(n1: int, scale: float, lower: float, upper: float, rule: str,
                    rng: np.random.Generator) -> float:
    """n₁ + Lap(0, scale), brought into [lower, upper] by clamping (BIT) or by redrawing."""
    noisy = n1 + rng.laplace(0.0, scale)
    if rule == "clamp":
        return min(max(noisy, lower), upper)
    if rule == "redraw":
        for _ in range(100_000):
            if lower <= noisy <= upper:
                return noisy
            noisy = n1 + rng.laplace(0.0, scale)
        raise RuntimeError("redraw: no in-bounds Laplace draw")
    raise ValueError(f"unknown post-processing rule {rule!r}")


def _analyse(records: np.ndarray) -> tuple[float, float]:
    """Sample proportion and its variance p̂(1 − p̂)/n."""
    n = records.size
    p = float(records.sum()) / n
    return p, p * (1.0 - p) / n


def pool_sets(estimates, variances, rule: str = "partial", level: float = LEVEL) -> dict:
    """Combine m per-set estimates and variances (Bowen & Liu Eqs. 9–11, scalar form).

    ``partial`` (the paper's, Reiter 2003): T = B/m + W, ν = (m − 1)(1 + mW/B)².
    ``full`` (ablation, Raghunathan et al. 2003): T = (1 + 1/m)B − W,
    ν = (m − 1)(1 − mW/((m + 1)B))², with T = W and ν = ∞ when that T is not positive.
    m = 1: T = v, ν = ∞ (z interval). B = 0: ν = ∞. T = 0: the CI is NaN, not usable.
    """
    q = [float(x) for x in estimates]
    u = [float(x) for x in variances]
    m = len(q)
    qbar = sum(q) / m
    w = sum(u) / m
    if m == 1:
        b = math.nan
        t = w
        df = math.inf
    else:
        b = sum((x - qbar) ** 2 for x in q) / (m - 1)
        if rule == "partial":
            t = b / m + w
            df = (m - 1) * (1.0 + m * w / b) ** 2 if b > 0 else math.inf
        elif rule == "full":
            t = (1.0 + 1.0 / m) * b - w
            df = (m - 1) * (1.0 - m * w / ((m + 1) * b)) ** 2 if b > 0 else math.inf
            if not t > 0:
                t, df = w, math.inf
        else:
            raise ValueError(f"unknown combining rule {rule!r}")
    usable = bool(math.isfinite(t) and t > 0 and math.isfinite(qbar))
    if usable:
        prob = 0.5 + level / 2.0
        # the t quantile as stats.t.ppf computes it (its _ppf is special.stdtrit), without the
        # argument checks of the distribution object, which cost more than the quantile
        quantile = stats.norm.ppf(prob) if math.isinf(df) else special.stdtrit(df, prob)
        half = float(quantile) * math.sqrt(t)
        low, high = qbar - half, qbar + half
    else:
        low = high = math.nan
    return {
        "estimate": qbar, "variance": t, "df": float(df), "ci_low": low, "ci_high": high,
        "between": b, "within": w, "usable": usable,
    }


def _check_epsilon(name: str, epsilon) -> float:
    if epsilon is None or not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"{name} needs a finite total ε > 0, got {epsilon!r}")
    return float(epsilon)


def release_and_pool(
    scenario: dict,
    label: str,
    epsilon: float | None,
    rng: np.random.Generator,
    study_config: dict,
) -> dict:
    """One replicate of Simulation 1 for roster entry ``label``: draw n Bernoulli(π) records,
    release m synthetic record sets with total budget ``epsilon`` (ignored by Ori and MS), analyse
    each set and pool them. Returns estimate, variance, df, ci_low, ci_high (floats) and usable.
    """
    n = int(scenario["n"])
    pi = float(scenario["pi"])
    spec = dict(study_config["roster"][label])
    name = spec.pop("synthesizer")
    prior = study_config.get("prior", {"a": "1/3", "b": "1/3"})
    a, b = _number(prior["a"]), _number(prior["b"])
    study_pp = study_config.get("postprocess", "clamp")
    rule = study_config.get("combining_rule", "partial")

    # the original data: n records
    x = _bern(pi, n, rng)
    n1 = int(x.sum())

    m = int(spec.get("m", 1))
    sets: list[np.ndarray] = []
    if name == "ori":
        sets.append(x)
    elif name == "ms":
        for _ in range(m):
            pi_j = _beta(a + n1, b + n - n1, rng)
            sets.append(_bern(pi_j, n, rng))
    elif name == "modips":
        eps = _check_epsilon(label, epsilon)
        pp = spec.get("postprocess", "redraw" if study_pp == "redraw" else "clamp")
        lower, upper = (-a, b + n) if study_pp == "reviewer" else (0.0, float(n))
        scale = 1.0 / (eps / m)  # Δ = 1 for the count n₁
        for _ in range(m):
            n1_star = _sanitize_count(n1, scale, lower, upper, pp, rng)
            pi_star = _beta(a + n1_star, b + n - n1_star, rng)
            sets.append(_bern(pi_star, n, rng))
    elif name == "laplace_sanitizer":
        eps = _check_epsilon(label, epsilon)
        if not spec.get("public_total", True) or spec.get("allocation", "largest_remainder") != (
            "largest_remainder"
        ):
            raise ValueError(f"{label}: the loop oracle covers Simulation 1's LAP only "
                             "(public_total, round(n1*) ones)")
        pp = spec.get("postprocess", "redraw" if study_pp == "redraw" else "clamp")
        scale = float(spec.get("sensitivity", 1.0)) / (eps / m)
        for _ in range(m):
            n1_star = _sanitize_count(n1, scale, 0.0, float(n), pp, rng)
            ones = int(math.floor(n1_star + 0.5))  # round(n1*); ties have probability 0
            records = np.zeros(n, dtype=bool)
            records[:ones] = True
            sets.append(records)
    elif name == "multinomial_dirichlet":
        eps_set = _check_epsilon(label, epsilon) / m
        alpha = n / math.expm1(eps_set)
        for _ in range(m):
            p_star = _beta(alpha + n1, alpha + n - n1, rng)
            sets.append(_bern(p_star, n, rng))
    elif name == "bb_mcclure_reiter":
        eps_set = _check_epsilon(label, epsilon) / m
        alpha = 1.0 / math.expm1(eps_set / n)
        p_star = (n1 + alpha) / (n + 2.0 * alpha)
        for _ in range(m):
            sets.append(_bern(p_star, n, rng))
    else:
        raise ValueError(f"{label}: synthesizer {name!r} is not part of Simulation 1")

    estimates, variances = zip(*(_analyse(s) for s in sets), strict=True)
    pooled = pool_sets(estimates, variances, rule=rule)
    return {k: pooled[k] for k in ("estimate", "variance", "df", "ci_low", "ci_high", "usable")}
