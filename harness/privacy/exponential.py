"""The exponential mechanism (McSherry & Talwar 2007), drawn exactly by the Gumbel-max trick:
argmax_k (ε·u_k/(2Δu) + G_k) with G_k iid standard Gumbel picks candidate k with probability
∝ exp(ε·u_k/(2Δu)) (∝ exp(ε·u_k/Δu) for scores monotone in the data). Vectorised over leading
replicate axes; the spend is recorded in the release's :class:`PrivacyLedger`."""

from __future__ import annotations

import numpy as np

from .ledger import LedgerEntry, PrivacyLedger
from .mechanisms import _check
from .relation import resolve


def exponential_mechanism(
    scores,
    *,
    sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    statistic: str,
    monotone: bool = False,
    parallel_group: str | None = None,
    draws_axis: int | None = None,
) -> np.ndarray:
    """Indices (shape ``scores.shape[:-1]``) chosen by the exponential mechanism over the last
    axis of ``scores`` (McSherry & Talwar 2007, Thm 6). ``sensitivity`` is Δu, the largest
    change of any candidate's score between neighbouring data sets. ``monotone=True`` (every
    score moves in the same direction between neighbours) halves the exponent's denominator.
    A score of −inf excludes its candidate; every row needs one finite score.

    Leading axes are independent replicates (one spend). ``draws_axis`` names a leading axis
    whose entries are repeated draws on the same data set (e.g. one draw per synthetic record):
    they compose sequentially, so the ledger records ``size of that axis × ε``. A
    :class:`~harness.privacy.relation.Sensitivity` is resolved under the ledger's relation."""
    sensitivity = resolve(sensitivity, ledger)
    _check(epsilon, sensitivity)
    u = _checked_scores(scores)
    denominator = float(sensitivity) if monotone else 2.0 * float(sensitivity)
    draws = 1 if draws_axis is None else u.shape[:-1][draws_axis]
    note = f"{draws} draws of ε = {epsilon:g} each, composed sequentially" if draws > 1 else ""
    ledger.record(LedgerEntry(statistic, "exponential_monotone" if monotone else "exponential",
                              draws * epsilon, float(sensitivity), denominator / epsilon,
                              parallel_group, note))
    if not np.isfinite(draws * epsilon):
        raise ValueError(f"the spend {draws} × ε overflows at ε = {epsilon:g} "
                         f"(harness.privacy.ranges.MECHANISM_RANGE['exponential'])")
    return gumbel_argmax(u, epsilon / denominator, rng)


def _checked_scores(scores) -> np.ndarray:
    u = np.asarray(scores, dtype=float)
    if u.ndim < 1 or u.shape[-1] < 1:
        raise ValueError(f"scores need a last axis of candidates, got shape {u.shape}")
    if np.isnan(u).any() or np.isposinf(u).any():
        raise ValueError("scores must be finite or -inf")
    if np.isneginf(u).all(axis=-1).any():
        raise ValueError("every row of scores needs at least one candidate with a finite score")
    return u


def gumbel_argmax(scores, factor: float, rng: np.random.Generator) -> np.ndarray:
    """argmax over the last axis of factor·u + G, G iid standard Gumbel: candidate k with
    probability ∝ exp(factor·u_k) (the draw of every exponential mechanism here). Exponents
    that overflow are an error, not a silent choice (``harness.privacy.ranges``)."""
    u = _checked_scores(scores)
    with np.errstate(over="ignore", invalid="ignore"):
        exponent = u * factor
    if np.isnan(exponent).any() or np.isposinf(exponent).any():
        raise ValueError(f"the exponents u·{factor:g} overflow "
                         f"(harness.privacy.ranges.MECHANISM_RANGE['exponential'])")
    return np.argmax(exponent + rng.gumbel(size=u.shape), axis=-1)
