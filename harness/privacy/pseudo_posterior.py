"""The risk-weighted pseudo-posterior mechanism (Savitsky et al. 2022; Hu, Savitsky & Williams
§2, Eq. 1): ξ^α(θ | y) ∝ Π_i p(y_i | x_i, θ)^{α_i} ξ(θ), α_i ∈ [0, 1].

Algorithm (the paper's summary of Savitsky et al. 2020, Alg. 1):

1. fit the unweighted model (α ≡ 1), keep S draws; record risk Δ_i = max_s |log p(y_i | θ_s)|
   (``record_risk``; a non-finite log likelihood gives Δ_i = ∞ and α_i = 0);
2. α_i ∝ 1/Δ_i scaled and shifted by (c₁, c₂) and clipped to [0, 1]
   (``risk_weights``: ``inv_clip`` α_i = clip(c₁/Δ_i + c₂, 0, 1), the clipped form, not a
   max-normalised one; or ``minmax_linear``);
3. refit the α-weighted pseudo posterior and compute its Lipschitz bound local to the data,
   Δ_α = max_i α_i max_s |log p(y_i | θ^α_s)| (``lipschitz_bounds``);
4. tune c₁ so that the *re-fitted* Δ_α hits a target (``tune_risk_weights``: a bracketing
   search whose every evaluation is a refit with the same generator seed, common random numbers,
   so Δ_α(c₁) is a deterministic function); the kept c₁ never exceeds the target, so the
   target is an upper bound of the realised Δ_α on the data it was tuned on;
5. release m synthetic sets, each from one draw of the pseudo posterior: ε = 2·Δ_α per set
   under the paper's bounded (substitution) neighbour relation, 2·Δ_α·m in all
   (``record_pseudo_posterior_sets``). The guarantee is the paper's *asymptotic* DP (local
   bounds contract onto the global one), not a worst-case ε-DP proof.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .ledger import SUBSTITUTION, LedgerEntry, PrivacyLedger

ALPHA_FORMS = ("inv_clip", "minmax_linear")


def record_risk(loglik: np.ndarray) -> np.ndarray:
    """Δ_i = max_s |log p_is| of an (S, n) log-likelihood matrix; ∞ where any draw is
    non-finite."""
    a = np.abs(np.asarray(loglik, dtype=float))
    risk = a.max(axis=0)
    return np.where(np.isfinite(a).all(axis=0), risk, np.inf)


def risk_weights(risk: np.ndarray, c1: float, c2: float = 0.0,
                 form: str = "inv_clip") -> np.ndarray:
    """α_i from record risks Δ_i: ``inv_clip`` clip(c₁/Δ_i + c₂, 0, 1); ``minmax_linear``
    clip(c₁(1 − (Δ_i − min Δ)/(max Δ − min Δ)) + c₂, 0, 1) over the finite risks. α_i = 0 where
    Δ_i is non-finite."""
    if form not in ALPHA_FORMS:
        raise ValueError(f"alpha_form must be one of {ALPHA_FORMS}, got {form!r}")
    risk = np.asarray(risk, dtype=float)
    finite = np.isfinite(risk)
    with np.errstate(divide="ignore", invalid="ignore"):
        if form == "inv_clip":
            raw = c1 / risk + c2
        else:
            lo, hi = risk[finite].min(), risk[finite].max()
            span = hi - lo if hi > lo else 1.0
            raw = c1 * (1.0 - (risk - lo) / span) + c2
    return np.where(finite, np.clip(raw, 0.0, 1.0), 0.0)


def lipschitz_bounds(loglik: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Record bounds Δ_{α,i} = α_i max_s |log p_is| (0 for records with α_i = 0)."""
    risk = np.abs(np.asarray(loglik, dtype=float)).max(axis=0)
    return np.where(alpha > 0, alpha * risk, 0.0)


@dataclass(frozen=True)
class TunedWeights:
    """Result of ``tune_risk_weights``: the kept c₁, weights α, the refit's draws, record bounds
    Δ_{α,i}, the realised bound Δ_α = max_i Δ_{α,i} (≤ the target), the number of refits and the
    generator seed every refit used."""

    c1: float
    alpha: np.ndarray
    draws: object
    record_bounds: np.ndarray
    bound: float
    refits: int
    seed: int
    converged: bool


def tune_risk_weights(
    refit: Callable[[np.ndarray, np.random.Generator], object],
    loglik: Callable[[object], np.ndarray],
    risk: np.ndarray,
    target: float,
    *,
    seed: int,
    min_weight_sum: float,
    c2: float = 0.0,
    form: str = "inv_clip",
    tol: float = 0.01,
    max_refits: int = 30,
) -> TunedWeights:
    """Tune c₁ so that the re-fitted pseudo posterior's Δ_α lies in [target − tol, target].

    ``refit(alpha, rng)`` returns S draws of the α-weighted posterior, ``loglik(draws)`` their
    (S, n) record log likelihoods. Every refit gets ``np.random.default_rng(seed)`` (common
    random numbers). No c₁ below the smallest with Σα ≥ ``min_weight_sum`` is tried (so the
    conjugate draws stay proper); the upper end is where α ≡ 1 (or, for ``minmax_linear``,
    doubled until Δ_α exceeds the target). The search is false position
    on c₁ with a bisection safeguard; the bracket keeps a c₁ with Δ_α ≤ target, which is the one
    returned (if α ≡ 1 already gives Δ_α ≤ target, that fit). The lower end is found by
    stepping c₁ down from min(target, 0.9·upper end); a ValueError if no c₁ down to the smallest
    admissible one gives Δ_α ≤ target."""
    risk = np.asarray(risk, dtype=float)
    finite = risk[np.isfinite(risk)]
    if finite.size == 0:
        raise ValueError("every record has a non-finite log likelihood")
    count = 0

    def evaluate(c1):
        nonlocal count
        count += 1
        alpha = risk_weights(risk, c1, c2, form)
        draws = refit(alpha, np.random.default_rng(seed))
        bounds = lipschitz_bounds(loglik(draws), alpha)
        return TunedWeights(c1, alpha, draws, bounds, float(bounds.max()), count, seed, True)

    def weight_sum(c1):
        return risk_weights(risk, c1, c2, form).sum()

    hi_c = float(finite.max()) if form == "inv_clip" else 1.0
    hi = evaluate(hi_c)
    for _ in range(10):
        if hi.bound > target or (hi.alpha[np.isfinite(risk)] >= 1.0).all():
            break
        hi = evaluate(hi.c1 * 2.0)
    if hi.bound <= target:
        return hi
    if weight_sum(hi_c) < min_weight_sum:
        raise ValueError(f"too few records: Σα = {weight_sum(hi_c):.3g} < {min_weight_sum}")
    a, c_min = 0.0, hi.c1  # smallest c1 with enough weight: bisection on the monotone Σα(c1)
    for _ in range(60):
        mid = 0.5 * (a + c_min)
        a, c_min = (a, mid) if weight_sum(mid) >= min_weight_sum else (mid, c_min)
    # the lower end: step c1 down from near the target (where risky records get α_i Δ_i ≈ c1)
    # until the refit's bound is within the target. Δ_α(c1) is not monotone as c1 → 0 (a diffuse
    # posterior inflates |log p|), so the search starts near the target, not at c_min.
    c = max(min(target, 0.9 * hi.c1), c_min)
    while True:
        probe = evaluate(c)
        if probe.bound <= target:
            lo = probe
            break
        hi = probe  # a tighter upper end
        if c <= c_min or count >= max_refits:
            raise ValueError(f"cannot reach the target Lipschitz bound {target}: down to c1 = "
                             f"{c:.4g} (Σα = {weight_sum(c):.3g}; at least {min_weight_sum} "
                             f"needed) the refit's Δ_α is {probe.bound:.4g}")
        c = max(c_min, c * min(0.8, target / probe.bound))
    while target - lo.bound > tol:
        if count >= max_refits or hi.c1 - lo.c1 <= 1e-12 * hi.c1:
            return TunedWeights(lo.c1, lo.alpha, lo.draws, lo.record_bounds, lo.bound, count,
                                seed, False)
        width = hi.c1 - lo.c1
        c = lo.c1 + (target - lo.bound) / (hi.bound - lo.bound) * width
        c = min(max(c, lo.c1 + 0.05 * width), hi.c1 - 0.05 * width)
        new = evaluate(c)
        if new.bound <= target:
            lo = new
        else:
            hi = new
    return TunedWeights(lo.c1, lo.alpha, lo.draws, lo.record_bounds, lo.bound, count, seed, True)


def record_pseudo_posterior_sets(ledger: PrivacyLedger, lipschitz_bound: float, m: int,
                                 realised: float | None = None) -> float:
    """Record the m released sets of a pseudo-posterior mechanism: one entry per set spending
    2·Δ_α (each set is one draw of a mechanism whose log likelihood is Δ_α-Lipschitz under the
    substitution of one record; ε ≤ 2Δ, Dimitrakakis et al. 2017), 2·Δ_α·m in all. Returns the
    total."""
    if not (lipschitz_bound > 0 and np.isfinite(lipschitz_bound)):
        raise ValueError(f"lipschitz_bound must be finite and > 0, got {lipschitz_bound!r}")
    note = "asymptotic DP (Savitsky et al. 2022): ε = 2·Δ_α per set"
    if realised is not None:
        note += f"; realised Δ_α = {realised:.6g} ≤ {lipschitz_bound:.6g}"
    for j in range(m):
        ledger.for_set(j).record(LedgerEntry(
            f"set {j + 1}: one draw of the risk-weighted pseudo posterior",
            "risk_weighted_pseudo_posterior", 2.0 * lipschitz_bound, lipschitz_bound,
            note=note, relation=SUBSTITUTION))
    return 2.0 * lipschitz_bound * m
