"""OPM for logistic regression: the locally private generalized linear model of Duchi, Jordan &
Wainwright (2018, "Minimax optimal procedures for locally private estimation", JASA, §5.2.1;
spec 004 §2, OPM variant 3 and its resolution).

The logistic model with design rows x_i = (1, covariates_i) has the score equations
Σ_i σ(x_iᵀθ) x_i = Σ_i y_i x_i, whose right-hand side is a sum of per-record vectors
Z_i = y_i x_i. Each record privatizes its Z_i with Duchi et al.'s ℓ2-ball sampling mechanism
(their §4.2.3, :func:`harness.privacy.minimax.l2_ball_mechanism`; unbiased, ε-DP for any two
vectors in the ball of radius r ≥ max_i ‖x_i‖, since y_i ∈ {0, 1}), and the analyst solves

    Σ_i σ(x_iᵀθ) x_i = Σ_i Z̃_i

by Newton–Raphson from θ = 0 (the maximiser of the concave θᵀS − Σ_i log(1 + e^{x_iᵀθ}),
S = Σ Z̃_i). The covariates enter the left-hand side as they are: Duchi et al.'s GLM is a
*fixed-design* problem, the design is public and only the responses are private, so the ε claim
covers the response of each record given the covariates (the ledger says so). When the noisy
S lies outside the set of attainable score sums (e.g. a negative count of ones), the equations
have no solution and the iterates run off to infinity; as R's ``glm`` does, at most ``maxit``
steps are taken and the last iterate is kept (``converged`` False), so fitted probabilities
can reach 0 or 1 in floating point.

The release is the fitted model (``release_kind = "model"``): coefficients (R, m, d), intercept
first, and whether each solve converged."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from ..errors import ConfigError, allowed
from ..inference.regression import with_intercept
from ..privacy.ledger import SUBSTITUTION
from ..privacy.minimax import l2_ball_mechanism
from ..validation import check_number
from .base import Synthesizer, register
from .dip import check_records

BOUND_RULES = ("max_norm",)
DATA_RULE_NOTE = "radius read from the released data (max_norm): not covered by the ε guarantee"


@dataclass(frozen=True)
class CoefficientBatch:
    """Released logistic models: ``coefficients`` (R, m, d), intercept first, and ``converged``
    (R, m)."""

    coefficients: np.ndarray
    converged: np.ndarray

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self.coefficients.shape[:-1]

    def first_sets(self, m: int) -> CoefficientBatch:
        return CoefficientBatch(self.coefficients[:, :m], self.converged[:, :m])


def _objective(design, s, theta):
    eta = (design @ theta[..., None])[..., 0]
    return np.sum(s * theta, axis=-1) - np.sum(np.logaddexp(0.0, eta), axis=-1)


@np.errstate(over="ignore", invalid="ignore")
def logistic_score_solve(design, target, *, maxit: int = 25, tol: float = 1e-8):
    """θ (B, d) solving Σ_i σ(x_iᵀθ) x_i = ``target`` (B, d) for designs (B, n, d): Newton–
    Raphson from 0 with step halving on the concave objective θᵀt − Σ log(1 + e^{x_iᵀθ}), at
    most ``maxit`` steps, stopping when the objective's relative change is below ``tol`` (R
    ``glm``'s rule); the last iterate is kept when not converged. Returns (θ, converged), where
    converged also needs the equations to hold at θ (max residual ≤ √tol·(max|t| + 1)): with
    no solution the iterates run off to infinity and the objective's change settles too."""
    x = np.asarray(design, dtype=float)
    s = np.asarray(target, dtype=float)
    B, _, d = x.shape
    theta = np.zeros((B, d))
    value = _objective(x, s, theta)
    done = np.zeros(B, dtype=bool)
    for _ in range(int(maxit)):
        act = np.flatnonzero(~done)
        if act.size == 0:
            break
        xa, th = (x, theta) if act.size == B else (x[act], theta[act])
        p = expit((xa @ th[..., None])[..., 0])
        grad = s[act] - np.einsum("bn,bnd->bd", p, xa)
        hess = np.einsum("bn,bnd,bne->bde", p * (1 - p), xa, xa)
        # run off to where every fitted probability is 0 or 1: no curvature left, stop there
        stuck = ~(np.isfinite(hess).all(axis=(1, 2)) & (np.abs(hess).max(axis=(1, 2)) > 0))
        if stuck.any():
            done[act[stuck]] = True
            act, xa, th, grad, hess = (a[~stuck] for a in (act, xa, th, grad, hess))
            if act.size == 0:
                break
        step = np.stack([np.linalg.lstsq(h, g, rcond=None)[0] for h, g in zip(hess, grad,
                                                                              strict=True)])
        t = np.ones(act.size)
        new = th + step
        sa = s[act]
        new_value = _objective(xa, sa, new)
        for _ in range(30):  # halve until the concave objective does not decrease
            worse = ~(new_value >= value[act])
            if not worse.any():
                break
            t = np.where(worse, t / 2, t)
            # only the data sets still halving are re-evaluated (the others keep their values)
            w = slice(None) if worse.all() else np.flatnonzero(worse)
            new[w] = th[w] + t[w, None] * step[w]
            new_value[w] = _objective(xa[w], sa[w], new[w])
        settled = np.abs(new_value - value[act]) < tol * (np.abs(new_value) + 0.1)
        theta[act], value[act] = new, new_value
        done[act] = settled
    # a run-off to infinity also settles the objective's relative change: converged means the
    # score equations hold (|residual| small against the target's scale)
    p = expit((x @ theta[..., None])[..., 0])
    residual = np.abs(s - np.einsum("bn,bnd->bd", p, x)).max(axis=-1)
    ok = done & np.isfinite(theta).all(axis=-1) & (
        residual <= math.sqrt(tol) * (np.abs(s).max(axis=-1) + 1.0))
    return theta, ok


@register
class PrivateLogisticGLM(Synthesizer):
    """The private logistic GLM (module docstring): column ``response`` holds y ∈ {0, 1}, the
    other columns are the covariates (a design with intercept). ``bound``: the radius r of the
    ℓ2 ball, a public number ≥ max_i ‖x_i‖ or ``max_norm`` (max_i ‖x_i‖ of the data, the
    paper-style rule read from the data, not covered by the claim). ``maxit``: Newton steps."""

    name = "opm_glm"
    release_kind = "model"
    neighbour_relation = SUBSTITUTION
    input_kind = "records"

    def __init__(self, m: int = 1, response: int = -1, bound="max_norm", maxit: int = 25):
        super().__init__(m)
        self.response = int(check_number("response", response, integer=True))
        if isinstance(bound, str):
            if bound not in BOUND_RULES:
                raise allowed("bound", bound, (*BOUND_RULES, "a number > 0"))
        elif not (isinstance(bound, (int, float)) and not isinstance(bound, bool)
                  and math.isfinite(bound) and bound > 0):
            raise allowed("bound", bound, (*BOUND_RULES, "a number > 0"))
        self.bound = bound if isinstance(bound, str) else float(bound)
        self.maxit = int(check_number("maxit", maxit, integer=True, minimum=1))

    def _split(self, values):
        p = values.shape[-1]
        col = self.response % p if -p <= self.response < p else None
        if col is None or p < 2:
            raise ConfigError(f"response: column {self.response} of {p} columns (needs a "
                              f"response and at least one covariate)")
        y = values[..., col]
        if not np.isin(y, (0.0, 1.0)).all():
            raise ConfigError(f"data: the response column {col} must hold 0/1")
        return with_intercept(np.delete(values, col, axis=-1)), y

    def _release(self, data, epsilon, ledger, rng):
        values = check_records("data", data).values  # (R, n, p)
        design, y = self._split(values)
        R, n, d = design.shape
        norms = np.linalg.norm(design, axis=-1)
        if self.bound == "max_norm":
            radius, note = norms.max(axis=1), DATA_RULE_NOTE
        else:
            if np.any(norms > self.bound * (1 + 1e-12)):
                raise ConfigError(f"bound: a design row has norm {norms.max():.4g} > the bound "
                                  f"{self.bound:g}")
            radius, note = np.full(R, self.bound), ""
        fixed = ("covariates treated as public (fixed design, Duchi et al. 2018 §5.2.1): the "
                 "claim covers each record's response given its covariates")
        note = "; ".join(s for s in (note, fixed) if s)
        eps_set = self.set_budget(epsilon)
        coefs, ok = [], []
        for j in range(self.m):
            z = l2_ball_mechanism(y[..., None] * design, radius=np.repeat(radius[:, None], n, 1),
                                  epsilon=eps_set, rng=rng, ledger=ledger.for_set(j),
                                  statistic=f"set {j + 1}: y_i x_i of every record", note=note)
            theta, done = logistic_score_solve(design, z.sum(axis=1), maxit=self.maxit)
            coefs.append(theta)
            ok.append(done)
        return CoefficientBatch(np.stack(coefs, axis=1), np.stack(ok, axis=1)), {}
