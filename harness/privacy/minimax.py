"""Locally private minimax mechanisms of Duchi, Jordan & Wainwright (2018, "Minimax optimal
procedures for locally private estimation", JASA; spec 004 §2 OPM).

* :func:`l2_ball_mechanism` — the ℓ2-ball sampling mechanism of their §4.2.3: for v with
  ‖v‖₂ ≤ r, draw Ṽ = +r·v/‖v‖ with probability 1/2 + ‖v‖/(2r) and −r·v/‖v‖ otherwise, then
  T ~ Bernoulli(e^α/(1 + e^α)) and output a point uniform on the sphere of radius B in the
  half-space ⟨z, Ṽ⟩ > 0 if T = 1 (⟨z, Ṽ⟩ ≤ 0 if T = 0), with

      B = r·(e^α + 1)/(e^α − 1)·√π·Γ((d + 1)/2)/Γ(d/2),

  which makes the output unbiased for v (B = r(e^α + 1)/(e^α − 1) at d = 1; spec §2 REVIEW).
  Any two inputs in the ball give output densities within a factor e^α: the mechanism is
  α-DP for the whole vector (hence for any change of one of its coordinates).
* :func:`linf_mean_mechanism` — their §3.2.1 one-dimensional mean: clip(Z, −T, T) + (2T/α)·W,
  W ~ Laplace(1), per record, i.e. the Laplace mechanism with sensitivity 2T on the clipped
  value; the truncation level T = r(nα²)^{1/(2k)} for E|X|^k ≤ r^k (T = r for k = ∞,
  :func:`truncation_level`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from .ledger import LedgerEntry, PrivacyLedger
from .mechanisms import _check, laplace_mechanism


def l2_sphere_radius(radius, epsilon: float, d: int):
    """B = r·(e^α + 1)/(e^α − 1)·√π·Γ((d+1)/2)/Γ(d/2) (log-gamma, so d may be ~10⁷)."""
    ratio = math.exp(0.5 * math.log(math.pi) + gammaln((d + 1) / 2) - gammaln(d / 2))
    return np.asarray(radius, dtype=float) * (1.0 / math.tanh(epsilon / 2.0)) * ratio


def l2_ball_mechanism(
    values,
    *,
    radius,
    epsilon: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    statistic: str,
    parallel_group: str | None = None,
    note: str = "",
) -> np.ndarray:
    """Duchi et al. §4.2.3 on every vector of ``values`` (..., d) (leading axes independent),
    each in the ℓ2 ball of ``radius`` (broadcasting to the leading axes). Vectors longer than
    the radius are refused (the guarantee needs ‖v‖ ≤ r). One ledger entry: ε = α, the
    sensitivity recorded is the radius (its maximum over the batch), the scale B."""
    _check(epsilon, radius)
    v = np.asarray(values, dtype=float)
    if v.ndim < 1 or v.shape[-1] < 1:
        raise ValueError("values must have shape (..., d) with d >= 1")
    lead, d = v.shape[:-1], v.shape[-1]
    r = np.broadcast_to(np.asarray(radius, dtype=float), lead)
    norm = np.linalg.norm(v, axis=-1)
    if np.any(norm > r * (1 + 1e-12)):
        raise ValueError(f"{statistic}: a vector lies outside the l2 ball of its radius")
    big_b = l2_sphere_radius(r, epsilon, d)
    extra = (f"l2-ball sampling (Duchi et al. 2018 §4.2.3), d = {d}; ε-DP for any two vectors "
             f"in the ball")
    ledger.record(LedgerEntry(statistic, "duchi_l2_ball", epsilon, float(r.max()),
                              float(np.max(big_b)), parallel_group,
                              f"{note}; {extra}" if note else extra))
    # a zero vector takes a uniform direction: its normals are drawn for every vector (the
    # stream stays the same whatever the data) but normalised only where they are used
    spare = rng.standard_normal(v.shape)
    zero = ~(norm > 0)
    direction = v / np.where(zero, 1.0, norm)[..., None]
    if zero.any():
        direction[zero] = _normalised(spare[zero])
    sign = np.where(rng.random(lead) < 0.5 + norm / (2.0 * r), 1.0, -1.0)
    tilde = sign[..., None] * direction  # the direction of Ṽ (its length r does not matter)
    same_side = rng.random(lead) < math.exp(epsilon) / (1.0 + math.exp(epsilon))
    z = _unit(rng, v.shape)
    dot = np.sum(z * tilde, axis=-1)
    flip = np.where(same_side, dot <= 0, dot > 0)
    # z on the flipped side is −z: (−z)·B = −(z·B) exactly, so the sign goes on B
    return z * np.where(flip, -big_b, big_b)[..., None]


def _normalised(g: np.ndarray) -> np.ndarray:
    return g / np.linalg.norm(g, axis=-1, keepdims=True)


def _unit(rng: np.random.Generator, shape) -> np.ndarray:
    """A uniform point on the unit sphere (last axis): normal draws, normalised."""
    return _normalised(rng.standard_normal(shape))


def truncation_level(bound, n: int, epsilon: float, k: float = math.inf):
    """T = r(nα²)^{1/(2k)} of Duchi et al. §3.2.1 (r = ``bound``, the k-th moment bound);
    T = r for k = ∞."""
    r = np.asarray(bound, dtype=float)
    if math.isinf(k):
        return r
    return r * (n * epsilon**2) ** (1.0 / (2.0 * k))


def linf_mean_mechanism(
    values,
    *,
    truncation,
    epsilon: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    statistic: str,
    parallel_group: str | None = None,
    note: str = "",
) -> np.ndarray:
    """clip(Z, −T, T) + Laplace(2T/α) per record (Duchi et al. §3.2.1): the Laplace mechanism
    on the clipped value, whose range 2T is its sensitivity. ``truncation`` T broadcasts
    against ``values`` (e.g. one T per replicate)."""
    t = np.asarray(truncation, dtype=float)
    clipped = np.clip(np.asarray(values, dtype=float), -t, t)
    extra = "values clipped to [-T, T] (Duchi et al. 2018 §3.2.1), sensitivity 2T"
    return laplace_mechanism(clipped, sensitivity=2.0 * t, epsilon=epsilon, rng=rng,
                             ledger=ledger, statistic=statistic, parallel_group=parallel_group,
                             note=f"{note}; {extra}" if note else extra)
