"""Privacy mechanisms. Every noise scale or privacy-calibrated prior used by a synthesizer is
computed here and recorded in the release's :class:`PrivacyLedger`; no synthesizer computes a
noise scale by hand.
"""

from __future__ import annotations

import math

import numpy as np

from .ledger import LedgerEntry, PrivacyLedger
from .postprocess import clamp
from .relation import resolve

POSTPROCESS_RULES = ("clamp", "redraw")


def _check(epsilon: float, sensitivity=None) -> None:
    if not (epsilon > 0 and np.isfinite(epsilon)):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}")
    if sensitivity is not None:
        s = np.asarray(sensitivity, dtype=float)
        if s.size == 0 or not np.all((s > 0) & np.isfinite(s)):
            raise ValueError(f"sensitivity must be finite and > 0, got {sensitivity!r}")


def _laplace_entry(statistic, mechanism, epsilon, sensitivity, parallel_group, note=""):
    """Ledger entry of a Laplace release. An array ``sensitivity`` (one value per element, e.g.
    the data-dependent 8/n_k of GLOM cell means, spec 000 §4.3) is recorded once: its maximum as
    the sensitivity and scale, its range in the note. Returns (entry, scale array or float)."""
    s = np.asarray(sensitivity, dtype=float)
    if s.ndim == 0:
        return LedgerEntry(
            statistic, mechanism, epsilon, float(s), float(s) / epsilon, parallel_group, note
        ), float(s) / epsilon
    lo, hi = float(s.min()), float(s.max())
    extra = f"per-element sensitivity in [{lo:.6g}, {hi:.6g}], each element its own scale"
    note = f"{note}; {extra}" if note else extra
    return LedgerEntry(
        statistic, mechanism, epsilon, hi, hi / epsilon, parallel_group, note
    ), s / epsilon


def laplace_mechanism(
    values,
    *,
    sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    statistic: str,
    parallel_group: str | None = None,
    note: str = "",
) -> np.ndarray:
    """The Laplace mechanism (Bowen & Liu Def. 3; Dwork et al. 2006): s* = s + e with
    e iid Lap(0, Δ/ε) per element, where Δ is the global l1 sensitivity of the whole vector s.

    ``values`` may carry leading replicate axes; each replicate gets independent noise and the
    ledger records the mechanism once (it applies identically to every replicate).

    ``sensitivity`` may also be an array broadcasting against ``values``: element i then gets
    noise Lap(0, Δ_i/ε). This is the form of a vector of statistics over disjoint cells released
    in parallel (Thm 2b), each with its own sensitivity, e.g. GLOM cell means with Δ = 8/n_k
    (Bowen & Liu §4.3.1; spec 000 §4.3). The ledger records it once (see ``_laplace_entry``).
    ``note`` goes into the ledger entry (e.g. what the guarantee is conditional on, or that
    the sensitivity is a local one). A :class:`~harness.privacy.relation.Sensitivity` is
    resolved under the ledger's neighbour relation (so are the other mechanisms' here).
    """
    sensitivity = resolve(sensitivity, ledger)
    _check(epsilon, sensitivity)
    entry, scale = _laplace_entry(statistic, "laplace", epsilon, sensitivity, parallel_group,
                                  note)
    ledger.record(entry)
    values = np.asarray(values, dtype=float)
    return values + rng.laplace(0.0, 1.0, size=values.shape) * scale


def misscaled_laplace_mechanism(
    values,
    *,
    sensitivity: float,
    claimed_epsilon: float,
    scale: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    statistic: str,
    note: str = "",
) -> np.ndarray:
    """Laplace noise Lap(0, ``scale``) that a published implementation added while claiming
    ``claimed_epsilon`` for a statistic of l1 sensitivity Δ = ``sensitivity``: for reproducing
    such results only, never as a DP release. The noise really spends Δ/scale; the ledger
    entry records the claim as ``epsilon`` (so the release's accounting is the published one)
    and the real spend as ``actual_epsilon``, with mechanism ``laplace_MISSCALED`` and a note
    saying both, so that ``PrivacyLedger.understated`` flags the release."""
    sensitivity = resolve(sensitivity, ledger)
    _check(claimed_epsilon, sensitivity)
    if not (scale > 0 and np.isfinite(scale)):
        raise ValueError(f"scale must be finite and > 0, got {scale!r}")
    actual = float(sensitivity) / float(scale)
    flag = (f"MISSCALED: claims ε = {claimed_epsilon:.6g} but the noise scale {scale:.6g} "
            f"spends Δ/scale = {actual:.6g}")
    ledger.record(LedgerEntry(statistic, "laplace_MISSCALED", float(claimed_epsilon),
                              float(sensitivity), float(scale), None,
                              f"{flag}; {note}" if note else flag, actual_epsilon=actual))
    values = np.asarray(values, dtype=float)
    return values + rng.laplace(0.0, 1.0, size=values.shape) * float(scale)


#: the smallest ε/Δ (≈ the success probability 1 − e^(−ε/Δ)) whose int64 geometric draws
#: cannot saturate
GEOMETRIC_MIN_RATIO = 1e-15


def geometric_mechanism(
    values,
    *,
    sensitivity: int,
    epsilon: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    statistic: str,
    parallel_group: str | None = None,
) -> np.ndarray:
    """Integer ``values`` plus two-sided geometric noise P(Z = z) = (1 − α)/(1 + α) α^|z|,
    α = exp(−ε/Δ), for an integer l1 sensitivity Δ ≥ 1 (Ghosh et al. 2009). The noise is drawn
    exactly as the difference of two iid geometric variables. Returns int64."""
    sensitivity = resolve(sensitivity, ledger)
    _check(epsilon, sensitivity)
    if float(sensitivity) != int(sensitivity):
        raise ValueError(f"sensitivity of the geometric mechanism must be an integer, "
                         f"got {sensitivity!r}")
    v = np.asarray(values)
    if not np.issubdtype(v.dtype, np.integer) and not np.all(v == np.round(v)):
        raise ValueError("the geometric mechanism releases integer values")
    p = -math.expm1(-epsilon / float(sensitivity))  # success probability 1 − α
    if epsilon / float(sensitivity) < GEOMETRIC_MIN_RATIO:  # int64 draws would saturate: noise 0
        raise ValueError(f"geometric mechanism: ε/Δ = {epsilon / float(sensitivity):g} is below "
                         f"{GEOMETRIC_MIN_RATIO:g} (harness.privacy.ranges.MECHANISM_RANGE)")
    ledger.record(LedgerEntry(statistic, "geometric", epsilon, float(sensitivity),
                              float(sensitivity) / epsilon, parallel_group))
    noise = rng.geometric(p, size=v.shape) - rng.geometric(p, size=v.shape)
    return v.astype(np.int64) + noise


def bounded_laplace_mechanism(
    values,
    *,
    sensitivity: float,
    epsilon: float,
    lower,
    upper,
    rule: str,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    statistic: str,
    parallel_group: str | None = None,
    max_redraws: int = 10_000,
) -> np.ndarray:
    """Laplace mechanism whose output is brought inside public bounds [lower, upper]
    (Bowen & Liu §4.1):

    * ``clamp``: boundary-inflated truncation of s + Lap(Δ/ε), a post-processing step.
    * ``redraw``: out-of-bounds outputs are thrown away and redrawn, i.e. a draw from the
      Laplace distribution truncated to the bounds. The paper treats this as post-processing;
      it is not: conditioning on the bounds rescales the output density by a data-dependent
      constant, so the worst-case privacy loss is 2ε, not ε (recorded in the ledger note).
    """
    if rule not in POSTPROCESS_RULES:
        raise ValueError(f"postprocess rule must be one of {POSTPROCESS_RULES}, got {rule!r}")
    sensitivity = resolve(sensitivity, ledger)
    values = np.asarray(values, dtype=float)
    lower = np.broadcast_to(np.asarray(lower, dtype=float), values.shape)
    upper = np.broadcast_to(np.asarray(upper, dtype=float), values.shape)
    if np.any(lower > upper):
        raise ValueError(f"bounds for {statistic!r} need lower <= upper")
    if rule == "clamp":
        noisy = laplace_mechanism(
            values, sensitivity=sensitivity, epsilon=epsilon, rng=rng, ledger=ledger,
            statistic=statistic, parallel_group=parallel_group,
        )
        return clamp(noisy, lower, upper)
    _check(epsilon, sensitivity)
    entry, scale = _laplace_entry(
        statistic, "laplace_truncated_by_redraw", epsilon, sensitivity, parallel_group,
        note="worst-case privacy loss 2·epsilon (data-dependent truncation)",
    )
    ledger.record(entry)
    scale = np.broadcast_to(np.asarray(scale, dtype=float), values.shape)
    # np.asarray: for 0-d input the sum is a NumPy scalar, which does not support item assignment
    out = np.asarray(values + rng.laplace(0.0, 1.0, size=values.shape) * scale)
    bad = (out < lower) | (out > upper)
    for _ in range(max_redraws):
        if not bad.any():
            return out
        out[bad] = values[bad] + rng.laplace(0.0, 1.0, size=int(bad.sum())) * scale[bad]
        bad = (out < lower) | (out > upper)
    raise RuntimeError(f"truncated Laplace for {statistic!r}: no in-bounds draw after redraws")


def dirichlet_prior_pseudocount(
    n, *, epsilon: float, ledger: PrivacyLedger, statistic: str = "cell counts"
) -> np.ndarray:
    """Pseudo-count α* = n / (e^ε − 1) that makes the Multinomial-Dirichlet synthesizer ε-DP
    (Machanavajjhala et al. 2008; Abowd & Vilhuber 2008; Bowen & Liu §3.2.1 and §4.1)."""
    _check(epsilon)
    ledger.record(LedgerEntry(statistic, "multinomial_dirichlet_prior", epsilon))
    return np.asarray(n, dtype=float) / np.expm1(epsilon)


def mcclure_reiter_pseudocount(
    n, *, epsilon: float, ledger: PrivacyLedger, statistic: str = "count of ones"
) -> np.ndarray:
    """Pseudo-count α* = (e^{ε/n} − 1)^{-1} of the Binomial-Beta synthesizer of McClure & Reiter
    (2012) (Bowen & Liu §3.2.1 and §4.1). With p* = (n₁+α*)/(n+2α*) and one released set of n
    Bernoulli(p*) records, the likelihood ratio between neighbours is at most (1+1/α*)^n = e^ε."""
    _check(epsilon)
    ledger.record(LedgerEntry(statistic, "mcclure_reiter_prior", epsilon))
    n = np.asarray(n, dtype=float)
    return 1.0 / np.expm1(epsilon / n)


CM2009_TARGETS = ("regularized_minimizer", "posterior_draw")


def chaudhuri_monteleoni_noise(
    values,
    *,
    n,
    regularization: float,
    epsilon: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    statistic: str,
    applied_to: str = "regularized_minimizer",
    parallel_group: str | None = None,
) -> np.ndarray:
    """Output perturbation of Chaudhuri & Monteleoni (2009), Algorithm 1, for L2-regularised
    logistic regression (Bowen & Liu 2020 §4.3.2; spec 000 §1.2, §4.4, §6 item 21):
    β* = β + e with density f(e) ∝ exp(−nλε‖e‖/2) on R^d.

    Sampling (spec §1.2 note): in polar form the density of r = ‖e‖ is ∝ r^{d−1} e^{−ar},
    a = nλε/2, so ‖e‖ ~ Gamma(shape d, scale 2/(nλε)), independent of a direction uniform on
    the unit sphere (a normalised standard normal vector). ``values`` (..., d): d is the last
    axis (for a multinomial-logistic model pass the flattened coefficient vector); every
    leading index gets independent noise. ``n`` (records) may be an array broadcasting to the
    leading axes.

    Guarantee (CM2009 Thm 2 / Chaudhuri, Monteleoni & Sarwate 2011 Cor. 8): for the minimiser
    β̂ of (1/n) Σ log(1 + exp(−y_i βᵀx_i)) + (λ/2)‖β‖² with ‖x_i‖₂ ≤ 1, the L2 sensitivity of β̂
    is 2/(nλ), and β̂ + e is ε-DP (d = 1: e ~ Laplace(2/(nλε)), the Laplace mechanism).
    The CM2009 theorem covers a binary response; applying the same noise to the multinomial
    (β3, β4) is the paper's extension. Bowen & Liu add e to a draw from the posterior under a
    N(0, 1/λ) prior instead of to β̂ (``applied_to="posterior_draw"``): that is the paper's
    heuristic, not a proven DP guarantee — a posterior draw is not the regularised minimiser
    (its sensitivity is not bounded by 2/(nλ), and the paper's prior variance 1/λ corresponds to
    the penalty λ/(2n)‖β‖² on the average loss, not (λ/2)‖β‖²). The ledger entry says which.
    """
    _check(epsilon)
    if applied_to not in CM2009_TARGETS:
        raise ValueError(f"applied_to must be one of {CM2009_TARGETS}, got {applied_to!r}")
    if not (regularization > 0 and np.isfinite(regularization)):
        raise ValueError(f"regularization λ must be finite and > 0, got {regularization!r}")
    values = np.asarray(values, dtype=float)
    if values.ndim < 1 or values.shape[-1] < 1:
        raise ValueError("values must have shape (..., d) with d >= 1")
    n_arr = np.asarray(n, dtype=float)
    if n_arr.size == 0 or not np.all((n_arr > 0) & np.isfinite(n_arr)):
        raise ValueError(f"n must be finite and > 0, got {n!r}")
    d = values.shape[-1]
    sensitivity = 2.0 / (n_arr * regularization)  # L2 sensitivity of the regularised minimiser
    scale = sensitivity / epsilon  # Gamma scale of ‖e‖ = 1/a, a = nλε/2
    note = (f"L2 sensitivity 2/(nλ) with λ = {regularization:g}; ‖e‖ ~ Gamma({d}, 2/(nλε)), "
            "direction uniform; requires ‖x_i‖ ≤ 1")
    if applied_to == "posterior_draw":
        note += ("; added to a posterior draw (Bowen & Liu §4.3.2 heuristic): not a proven DP "
                 "guarantee")
    ledger.record(LedgerEntry(statistic, "chaudhuri_monteleoni_2009", epsilon,
                              float(sensitivity.max()), float(scale.max()), parallel_group, note))
    lead = values.shape[:-1]
    radius = rng.standard_gamma(float(d), size=lead) * np.broadcast_to(scale, lead)
    direction = rng.standard_normal(values.shape)
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    return values + direction * radius[..., None]


def smoothed_histogram_weight(
    n, bins, *, epsilon: float, ledger: PrivacyLedger, statistic: str = "histogram",
    parallel_group: str | None = None,
) -> np.ndarray:
    """Mixing weight λ = K / (K + n(e^{ε/n} − 1)) of the smoothed histogram of Wasserman & Zhou
    (2010), Bowen & Liu Eqs. 6–7 (the bound of Eq. 7 taken with equality, spec 000 §2.3):
    f̂* = (1 − λ) f̂_K + λ · uniform on the public box, from which n records are released.

    Moving one record changes one bin probability of f̂_K by at most 1/n, so the density ratio
    between neighbours is at most 1 + K(1 − λ)/(nλ) per record and (1 + K(1 − λ)/(nλ))^n = e^ε
    for the n released records. The guarantee holds for a number of bins K fixed independently
    of the data (Bowen & Liu choose K from the data's SD, which the paper does not account for).
    ``n`` and ``bins`` broadcast (e.g. per replicate, or per replicate and group).
    """
    _check(epsilon)
    ledger.record(LedgerEntry(statistic, "smoothed_histogram_weight", epsilon,
                              parallel_group=parallel_group))
    n = np.asarray(n, dtype=float)
    k = np.asarray(bins, dtype=float)
    return k / (k + n * np.expm1(epsilon / n))


def private_svm_laplace(
    weights,
    *,
    n: int,
    features: int,
    epsilon: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    lipschitz: float = 1.0,
    cost: float = 1.0,
    kernel_bound: float = 3.0,
    statistic: str = "linear SVM weights",
) -> np.ndarray:
    """PrivateSVM (Rubinstein et al. 2009, Alg. 2; Bowen & Liu 2020 §5): the weight vector w of
    the primal ½‖w‖² + (C/n) Σ_i ℓ(y_i, ⟨w, x_i⟩) with an L-Lipschitz loss, released with
    Laplace noise of l1 sensitivity Δ = 4 L C κ √F / n, where κ bounds the kernel (the paper
    plugs in κ = 9 for F = 9 features with |x_j| ≤ 1, giving Δ = 1.35; with k(x, x) ≤ κ² the bound
    κ = 3 gives 0.45, spec 000 §4.5 REVIEW (ii)). ``weights`` (..., F)."""
    delta = 4.0 * lipschitz * cost * kernel_bound * np.sqrt(features) / n
    return laplace_mechanism(weights, sensitivity=delta, epsilon=epsilon, rng=rng, ledger=ledger,
                             statistic=f"{statistic} (Δ = 4LCκ√F/n = {delta:.4g})")
