"""Confidence-interval overlap of an analysis on released data with the same analysis on the
original data (Karr, Kohnen, Oganian, Reiter & Sanil 2006, §3; spec 003 §5.5).

For an original interval [L_o, U_o] and a synthetic one [L_s, U_s], with L = max(L_o, L_s) and
U = min(U_o, U_s):

    J = ½ [(U − L)/(U_o − L_o) + (U − L)/(U_s − L_s)]  if U ≥ L, else 0,

so J = 1 for identical intervals, J > ½ when one contains the other, and J = 0 when they are
disjoint. A synthetic interval that is not finite (the estimand was not estimable in the
released data, e.g. an aliased or absent level) gives J = 0.

:func:`pooled_ci_overlap` builds the synthetic interval from m per-set estimates and variances
with a combining rule of :mod:`harness.inference.combine` (default ``partial``: T = W + B/m,
t_ν quantiles), and the original interval as a Wald interval β̂ ± z·SE. ``missing`` says what a
set that could not estimate a coefficient (NaN) does: ``zero`` (the coefficient's J is 0) or
``drop_sets`` (the rule is applied to the sets that estimated it).

:func:`logistic_ci_overlap` runs the whole analysis for a logistic model: R-like fits on the
original and on each set, then :func:`pooled_ci_overlap`. An original coefficient that is
aliased (NaN) gives J = 0 (its interval is undefined). The original's fit is kept for the next
call with the same original data and control (a study evaluates one original against the
releases of every ε), keyed by a digest of its bytes.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from ..errors import allowed
from ..inference.combine import combine
from ..inference.glm_logit import GlmControl, collapse_rows, glm_logit

MISSING = ("zero", "drop_sets")


def ci_overlap(low_original, high_original, low_synthetic, high_synthetic) -> np.ndarray:
    """Karr et al. (2006) overlap J of the two intervals (broadcast arrays)."""
    lo_o, hi_o, lo_s, hi_s = (np.asarray(a, dtype=float) for a in
                              (low_original, high_original, low_synthetic, high_synthetic))
    lo = np.maximum(lo_o, lo_s)
    hi = np.minimum(hi_o, hi_s)
    with np.errstate(divide="ignore", invalid="ignore"):
        j = 0.5 * ((hi - lo) / (hi_o - lo_o) + (hi - lo) / (hi_s - lo_s))
    ok = np.isfinite(lo_s) & np.isfinite(hi_s) & np.isfinite(j) & (hi >= lo)
    return np.where(ok, j, 0.0)


def wald_interval(estimate, se, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """β̂ ∓ z_{(1+level)/2}·SE (R's ``confint.default``)."""
    z = float(ndtri(0.5 + level / 2.0))
    est = np.asarray(estimate, dtype=float)
    half = z * np.asarray(se, dtype=float)
    return est - half, est + half


def pooled_ci_overlap(original_estimate, original_se, set_estimates, set_variances, *,
                      rule: str = "partial", level: float = 0.95,
                      missing: str = "zero") -> np.ndarray:
    """J per coefficient (..., E) of the original's Wald interval against the interval pooled
    from m sets: ``set_estimates`` and ``set_variances`` (..., m, E), NaN where a set did not
    estimate a coefficient (see the module docstring for ``missing``)."""
    if missing not in MISSING:
        raise allowed("missing", missing, MISSING)
    q = np.asarray(set_estimates, dtype=float)
    u = np.asarray(set_variances, dtype=float)
    absent = np.isnan(q) | np.isnan(u)
    q = np.where(absent, np.nan, q)
    pooled = combine(q, np.where(absent, np.nan, u), rule=rule, level=level)
    lo_o, hi_o = wald_interval(original_estimate, original_se, level)
    j = ci_overlap(lo_o, hi_o, pooled.ci_low, pooled.ci_high)
    if missing == "zero":
        j = np.where(absent.any(axis=-2), 0.0, j)
    return j


@dataclass(frozen=True)
class LogisticOverlap:
    """Per coefficient (E,): the overlap ``j``, the original fit's estimate and SE, the
    synthetic sets' estimates and variances (m, E) (NaN where aliased); per fit: convergence
    and separation flags (original first, then the m sets)."""

    j: np.ndarray
    original_coef: np.ndarray
    original_se: np.ndarray
    set_coef: np.ndarray
    set_var: np.ndarray
    converged: np.ndarray
    fitted_0_or_1: np.ndarray


def _fit(x, y, control):
    rows, prop, counts, _ = collapse_rows(x, y)
    return glm_logit(rows, prop, counts, control=control)


_ORIGINAL_FITS: OrderedDict = OrderedDict()


def _fit_original(x, y, control):
    """:func:`_fit`, kept for the last few distinct (x, y, control) of this process."""
    x, y = np.ascontiguousarray(x, dtype=float), np.ascontiguousarray(y, dtype=float)
    digest = hashlib.blake2b(x.tobytes(), digest_size=16)
    digest.update(repr(x.shape).encode())
    digest.update(y.tobytes())
    key = (digest.hexdigest(), repr(control))
    if key not in _ORIGINAL_FITS:
        _ORIGINAL_FITS[key] = _fit(x, y, control)
        while len(_ORIGINAL_FITS) > 4:
            _ORIGINAL_FITS.popitem(last=False)
    return _ORIGINAL_FITS[key]


def logistic_ci_overlap(original_x, original_y, synthetic_x, synthetic_y, *,
                        control: GlmControl | None = None, rule: str = "partial",
                        level: float = 0.95, missing: str = "zero") -> LogisticOverlap:
    """CI overlap of a logistic model fitted as R's ``glm`` (:func:`harness.inference.
    glm_logit.glm_logit`) on the original design (n, E) and response (n,) and on each of m
    synthetic sets (sequences of (n_s, E) designs and (n_s,) responses): Wald intervals on the
    original, the combining rule over the sets (spec 003 §5.5)."""
    fits = [_fit_original(original_x, original_y, control)]
    fits += [_fit(x, y, control) for x, y in zip(synthetic_x, synthetic_y, strict=True)]
    est = np.stack([f.coef for f in fits[1:]])
    var = np.stack([f.bse**2 for f in fits[1:]])
    j = pooled_ci_overlap(fits[0].coef, fits[0].bse, est, var, rule=rule, level=level,
                          missing=missing)
    return LogisticOverlap(j, fits[0].coef, fits[0].bse, est, var,
                           np.array([f.converged for f in fits]),
                           np.array([f.fitted_0_or_1 for f in fits]))
