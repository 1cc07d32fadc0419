"""Empirical differential-privacy audit of a sampled mechanism.

The idea follows StatDP (Ding, Wang, Wang, Zhang & Kifer 2018, "Detecting Violations of
Differential Privacy", CCS) and DP-Sniper (Bichsel, Steffen, Bogunovic & Vechev 2021,
"DP-Sniper: Black-Box Discovery of Differential Privacy Violations using Classifiers", IEEE S&P):
an ε-DP mechanism M satisfies, for neighbouring data sets x, x′ and *every* measurable event S,

    P[M(x) ∈ S] ≤ e^ε · P[M(x′) ∈ S]     (and the same with x and x′ swapped),

so ε_S = log(P[M(x) ∈ S] / P[M(x′) ∈ S]) is a lower bound on the privacy loss actually realised
by the mechanism on that pair. The audit draws samples of M(x) and M(x′), searches a family of
simple events for a large ratio on one half of the samples (the *selection* half), and then
bounds the ratio of that single event with exact Clopper–Pearson intervals on the other half
(the *validation* half). Because the event is a function of the selection half only, it is
fixed with respect to the validation half and no multiple-comparison correction is needed:
with probability ≥ 1 − α both one-sided intervals (each at level α/2) cover, and then

    log(p_num_lower / p_den_upper) ≤ ε_S ≤ ε_true.

``passed`` is False when this lower confidence bound exceeds the claimed ε, i.e. the sampled
output is statistically incompatible with the claim at level α.

Auditing a scalar summary is legitimate: by the post-processing property, any (measurable)
function f of an ε-DP release is itself ε-DP, so f∘M must also satisfy the inequality above.
A realised loss above ε on a summary such as one coordinate, a sum of coordinates, or a
rounded / clamped count therefore proves that the release itself violates ε-DP. (The converse
does not hold: passing says only that no violation was detected on this pair of neighbours,
with these events and this many samples.)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# Minimum selection-half count of the numerator event; rarer events have too noisy a ratio
# estimate to be worth validating (waived only if no candidate reaches it).
_MIN_COUNT = 10
# Pseudo-count of the plug-in probability estimate p̂ = (count + 1) / (n + 2) used to break ties
# of the selection score, so that empty cells never give an infinite ratio.
_PSEUDO = 1.0


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_mechanism`.

    ``epsilon_lower_bound`` is a (1 − α) lower confidence bound on the realised privacy loss,
    ``epsilon_point`` the plug-in log ratio of the chosen event on the validation half (±inf if
    one side never hit it), ``event`` a description of that event, ``p_x`` / ``p_x_prime`` its
    empirical probabilities on the validation samples from x and x′, ``n_samples`` the number of
    outputs drawn per data set, and ``passed`` is ``epsilon_lower_bound <= claimed_epsilon``.
    """

    claimed_epsilon: float
    epsilon_lower_bound: float
    epsilon_point: float
    event: str
    p_x: float
    p_x_prime: float
    n_samples: int
    passed: bool

    def summary(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        return (
            f"[{verdict}] claimed ε = {self.claimed_epsilon:.4g}; "
            f"{'' if self.passed else 'violation: '}"
            f"lower bound ε ≥ {self.epsilon_lower_bound:.4g} "
            f"(point estimate {self.epsilon_point:.4g}) on event {self.event}; "
            f"P(event | x) = {self.p_x:.4g}, P(event | x') = {self.p_x_prime:.4g}; "
            f"{self.n_samples} samples per data set"
        )


@dataclass(frozen=True)
class _Event:
    stat: int  # column of the statistics matrix; d (the last one) is the sum of coordinates
    kind: str  # ">=", "<=" or "=="
    threshold: float
    x_over_x_prime: bool  # numerator is P(event | x)


def _beta_ppf(q, a, b):
    """scipy.stats.beta.ppf, imported at call time (importing scipy.stats costs every process
    ~1 s)."""
    from scipy.stats import beta

    return beta.ppf(q, a, b)


def _clopper_pearson_lower(k: int, n: int, level: float) -> float:
    """One-sided lower confidence bound of a binomial proportion, coverage 1 − level."""
    return 0.0 if k == 0 else float(_beta_ppf(level, k, n - k + 1))


def _clopper_pearson_upper(k: int, n: int, level: float) -> float:
    """One-sided upper confidence bound of a binomial proportion, coverage 1 − level."""
    return 1.0 if k == n else float(_beta_ppf(1.0 - level, k + 1, n - k))


def _event_counts(sorted_y: np.ndarray, kind: str, t: np.ndarray) -> np.ndarray:
    """Number of samples in {y >= t}, {y <= t} or {y == t} for every t at once."""
    n = sorted_y.shape[0]
    if kind == ">=":
        return n - np.searchsorted(sorted_y, t, side="left")
    if kind == "<=":
        return np.searchsorted(sorted_y, t, side="right")
    return np.searchsorted(sorted_y, t, side="right") - np.searchsorted(sorted_y, t, side="left")


def _candidates(a: np.ndarray, b: np.ndarray, n_candidates: int):
    """Candidate events of one scalar statistic and their counts in the selection samples
    a (from x) and b (from x′): returns (kinds, thresholds, counts under x, counts under x′)."""
    a = np.sort(a)
    b = np.sort(b)
    pooled = np.concatenate([a, b])
    distinct = np.unique(pooled)
    if distinct.size <= n_candidates:
        # discrete output with few values: every value is a threshold and a singleton
        thresholds = distinct
        kinds = (">=", "<=", "==")
    else:
        levels = np.arange(1, n_candidates + 1) / (n_candidates + 1)
        thresholds = np.unique(np.quantile(pooled, levels))
        kinds = (">=", "<=")
    kind = np.repeat(np.array(kinds), thresholds.size)
    t = np.tile(thresholds, len(kinds))
    ca = np.concatenate([_event_counts(a, k, thresholds) for k in kinds])
    cb = np.concatenate([_event_counts(b, k, thresholds) for k in kinds])
    return kind, t, ca, cb


def _select(num: np.ndarray, den: np.ndarray, n: int, level: float) -> int:
    """Index of the (event, direction) with the largest selection score.

    The score is log(CP_lower(num) / CP_upper(den)) on the selection half with one-sided
    Clopper–Pearson bounds at ``level``: a conservative estimate of the log probability ratio
    that predicts the bound the event will earn on the validation half. With a Bonferroni level
    over all candidates it also corrects for the winner's curse, so a large but noisy ratio of a
    rare event (e.g. a far-tail singleton) does not beat a slightly smaller well-estimated one.
    Ties (e.g. all scores −∞ with very few samples) go to the larger pseudo-count plug-in ratio.
    """
    with np.errstate(divide="ignore"):
        lo = np.where(num > 0, _beta_ppf(level, np.maximum(num, 1), n - num + 1), 0.0)
        hi = np.where(den < n, _beta_ppf(1 - level, den + 1, np.maximum(n - den, 1)), 1.0)
        score = np.log(lo) - np.log(hi)
    plug = np.log((num + _PSEUDO) / (den + _PSEUDO))
    eligible = num >= _MIN_COUNT
    if not eligible.any():
        eligible[:] = True
    score = np.where(eligible, score, -np.inf)
    plug = np.where(eligible, plug, -np.inf)
    return int(np.lexsort((plug, score))[-1])


def _statistics(y: np.ndarray) -> np.ndarray:
    """(size, m) matrix of the scalar summaries to audit: the output itself, or every
    coordinate plus the sum of coordinates."""
    if y.ndim == 1:
        return y[:, None]
    return np.concatenate([y, y.sum(axis=1, keepdims=True)], axis=1)


def _describe(ev: _Event, d: int | None) -> str:
    if d is None:
        name = "output"
    elif ev.stat == d:
        name = "sum of coordinates"
    else:
        name = f"coordinate {ev.stat}"
    direction = "x over x'" if ev.x_over_x_prime else "x' over x"
    return f"{name} {ev.kind} {ev.threshold:.6g} ({direction})"


def _draw(sample: Callable, data, rng: np.random.Generator, size: int) -> np.ndarray:
    y = np.asarray(sample(data, rng, size), dtype=float)
    if y.ndim not in (1, 2) or y.shape[0] != size:
        raise ValueError(f"sample must return shape (size,) or (size, d); got {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("sample returned non-finite outputs")
    return y


def audit_mechanism(
    sample: Callable[[object, np.random.Generator, int], np.ndarray],
    x,
    x_prime,
    *,
    claimed_epsilon: float,
    n_samples: int,
    rng: np.random.Generator,
    alpha: float = 0.05,
    n_candidates: int = 64,
) -> AuditResult:
    """Empirically audit the claim that ``sample`` is ``claimed_epsilon``-DP on the neighbouring
    data sets ``x`` and ``x_prime`` (see the module docstring for the method and its validity).

    ``sample(data, rng, size)`` must return ``size`` independent outputs of the mechanism on
    ``data``: shape (size,) for scalar outputs (discrete or continuous) or (size, d) for vector
    outputs, in which case every coordinate and the sum of coordinates are audited and the
    most revealing one is kept. ``n_samples`` outputs are drawn on each data set; the first half
    selects the event, the second half validates it.

    Candidate events are {y ≥ t} and {y ≤ t} with t on ``n_candidates`` interior quantiles of the
    pooled selection outputs; when a statistic takes at most ``n_candidates`` distinct values,
    every value is a threshold and the singletons {y = v} are candidates too. Each event is
    tried in both directions (x over x′ and x′ over x). Among events whose numerator count is at
    least 10, the one with the largest conservative estimate of the log probability ratio is
    chosen: log(CP_lower(numerator) / CP_upper(denominator)) on the selection half with
    Clopper–Pearson bounds at the Bonferroni level α / (2 · number of (event, direction)
    pairs), ties broken
    by the pseudo-count plug-in ratio (count + 1) / (n + 2). The penalty keeps rare events
    whose large ratio is mostly noise (e.g. far-tail singletons of a discrete output) from
    winning. The selection rule affects only the power of the audit, never its validity.

    Returns an :class:`AuditResult` whose ``epsilon_lower_bound`` is a (1 − ``alpha``) lower
    confidence bound on the privacy loss realised on (x, x′): the log ratio of the
    Clopper–Pearson lower bound of the numerator probability and the upper bound of the
    denominator probability, each one-sided at level α/2, on the validation half (0 when that
    ratio is ≤ 1).
    """
    if not (claimed_epsilon >= 0 and math.isfinite(claimed_epsilon)):
        raise ValueError(f"claimed_epsilon must be finite and >= 0, got {claimed_epsilon!r}")
    if not (0 < alpha < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    n_samples = int(n_samples)
    if n_samples < 4:
        raise ValueError(f"n_samples must be at least 4, got {n_samples}")
    if int(n_candidates) < 1:
        raise ValueError(f"n_candidates must be >= 1, got {n_candidates}")
    n_candidates = int(n_candidates)

    ya = _draw(sample, x, rng, n_samples)
    yb = _draw(sample, x_prime, rng, n_samples)
    if ya.shape[1:] != yb.shape[1:]:
        raise ValueError(f"outputs on x and x' differ in shape: {ya.shape} vs {yb.shape}")
    d = None if ya.ndim == 1 else ya.shape[1]
    sa, sb = _statistics(ya), _statistics(yb)

    n_sel = n_samples // 2
    n_val = n_samples - n_sel
    parts = [_candidates(sa[:n_sel, j], sb[:n_sel, j], n_candidates) for j in range(sa.shape[1])]
    stat = np.concatenate([np.full(p[1].size, j) for j, p in enumerate(parts)])
    kind = np.concatenate([p[0] for p in parts])
    thr = np.concatenate([p[1] for p in parts])
    ca = np.concatenate([p[2] for p in parts])
    cb = np.concatenate([p[3] for p in parts])
    m = ca.size
    # both directions: first m entries are "x over x′", the next m "x′ over x"
    i = _select(np.concatenate([ca, cb]), np.concatenate([cb, ca]), n_sel, alpha / (4 * m))
    best = _Event(int(stat[i % m]), str(kind[i % m]), float(thr[i % m]), i < m)

    # validation half: count the single chosen event
    va, vb = sa[n_sel:, best.stat], sb[n_sel:, best.stat]
    t = np.array([best.threshold])
    ka = int(_event_counts(np.sort(va), best.kind, t)[0])
    kb = int(_event_counts(np.sort(vb), best.kind, t)[0])
    k_num, k_den = (ka, kb) if best.x_over_x_prime else (kb, ka)

    p_num_lo = _clopper_pearson_lower(k_num, n_val, alpha / 2)
    p_den_hi = _clopper_pearson_upper(k_den, n_val, alpha / 2)
    lower = math.log(p_num_lo / p_den_hi) if p_num_lo > p_den_hi else 0.0

    if k_num == 0:
        point = 0.0 if k_den == 0 else -math.inf
    elif k_den == 0:
        point = math.inf
    else:
        point = math.log(k_num / k_den)

    return AuditResult(
        claimed_epsilon=float(claimed_epsilon),
        epsilon_lower_bound=lower,
        epsilon_point=point,
        event=_describe(best, d),
        p_x=ka / n_val,
        p_x_prime=kb / n_val,
        n_samples=n_samples,
        passed=lower <= claimed_epsilon,
    )


@dataclass(frozen=True)
class DeltaAuditResult:
    """Outcome of :func:`audit_delta`: ``delta_lower_bound`` is a (1 − α) lower confidence bound
    on P[M(x) ∈ S] − e^ε P[M(x′) ∈ S] for the fixed event S; (ε, δ)-DP requires it ≤ δ."""

    claimed_epsilon: float
    claimed_delta: float
    delta_lower_bound: float
    p_x: float
    p_x_prime: float
    n_samples: int
    passed: bool

    def summary(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        return (f"[{verdict}] claimed (ε, δ) = ({self.claimed_epsilon:.4g}, "
                f"{self.claimed_delta:.3g}); lower bound on P(S | x) − e^ε P(S | x') = "
                f"{self.delta_lower_bound:.4g}; P(S | x) = {self.p_x:.4g}, "
                f"P(S | x') = {self.p_x_prime:.4g}; {self.n_samples} samples per data set")


def audit_delta(
    sample: Callable[[object, np.random.Generator, int], np.ndarray],
    x,
    x_prime,
    events: Callable[[np.ndarray], np.ndarray] | list[Callable[[np.ndarray], np.ndarray]],
    *,
    claimed_epsilon: float,
    claimed_delta: float,
    n_samples: int,
    rng: np.random.Generator,
    alpha: float = 0.05,
) -> DeltaAuditResult:
    """Audit an (ε, δ) claim on events S fixed in advance (``event(outputs)`` → booleans), e.g.
    half-lines on which the privacy loss of a Gaussian mechanism exceeds ε (such an event
    realises its δ exactly). (ε, δ)-DP requires P[M(x) ∈ S] ≤ e^ε P[M(x′) ∈ S] + δ for every S;
    for each event the left side minus e^ε times the right is bounded from below with one-sided
    Clopper–Pearson bounds at level α/(2J) each (Bonferroni over the J events), and the largest
    bound is returned. Since the events do not depend on the samples, no sample splitting is
    needed."""
    n_samples = int(n_samples)
    if n_samples < 4:
        raise ValueError(f"n_samples must be at least 4, got {n_samples}")
    if not (0 < alpha < 1):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    events = [events] if callable(events) else list(events)
    if not events:
        raise ValueError("audit_delta needs at least one event")
    ya, yb = _draw(sample, x, rng, n_samples), _draw(sample, x_prime, rng, n_samples)
    level = alpha / (2 * len(events))
    best = None
    for event in events:
        ka, kb = int(np.count_nonzero(event(ya))), int(np.count_nonzero(event(yb)))
        lower = (_clopper_pearson_lower(ka, n_samples, level)
                 - math.exp(claimed_epsilon) * _clopper_pearson_upper(kb, n_samples, level))
        if best is None or lower > best[0]:
            best = (lower, ka / n_samples, kb / n_samples)
    lower, p_x, p_xp = best
    return DeltaAuditResult(claimed_epsilon, claimed_delta, lower, p_x, p_xp, n_samples,
                            lower <= claimed_delta)
