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
from ..inference.design import collapse_batch
from ..inference.regression import with_intercept
from ..privacy.ledger import SUBSTITUTION
from ..privacy.minimax import l2_ball_mechanism
from ..validation import check_number
from .base import Synthesizer
from .dip import check_records
from .registry import register

BOUND_RULES = ("max_norm",)
#: a shared design's row outer products (rows × d² numbers) are kept up to this many
OUTER_PRODUCTS_LIMIT = 2**22
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


class _Designs:
    """The terms of the score equations for one design per data set, x (B, n, d); ``idx``
    selects data sets (None: all, without copying the designs)."""

    def __init__(self, x):
        self.x = x

    def _x(self, idx):
        return self.x if idx is None else self.x[idx]

    def objective(self, idx, s, theta):
        eta = (self._x(idx) @ theta[..., None])[..., 0]
        return np.sum(s * theta, axis=-1) - np.sum(np.logaddexp(0.0, eta), axis=-1)

    def grad_hess(self, idx, s, theta):
        xa = self._x(idx)
        p = expit((xa @ theta[..., None])[..., 0])
        grad = s - np.einsum("bn,bnd->bd", p, xa)
        hess = np.einsum("bn,bnd,bne->bde", p * (1 - p), xa, xa)
        return grad, hess

    def fitted_sum(self, theta):
        p = expit((self.x @ theta[..., None])[..., 0])
        return np.einsum("bn,bnd->bd", p, self.x)


class _SharedDesign:
    """The same terms when every data set has the same design x (n, d) (a fixed design, e.g.
    the replicates of one data set): its distinct rows x_g with their counts c_g
    (:func:`harness.inference.design.collapse_batch`; every row when not integer-valued), so
    that Σ_i σ(x_iᵀθ) x_i = Σ_g c_g σ(x_gᵀθ) x_g, one matrix product for all data sets."""

    def __init__(self, x):
        grouped = collapse_batch(x[None], max_share=1.0)
        if grouped is None:
            self.rows, self.counts = x, np.ones(x.shape[0])
        else:
            self.rows, self.counts = grouped[0][0], grouped[1][0]
        d = x.shape[1]
        # the rows' outer products make every Hessian one matrix product, when they are few
        self.outer = (self.rows[:, :, None] * self.rows[:, None, :]).reshape(-1, d * d) \
            if self.rows.shape[0] * d * d <= OUTER_PRODUCTS_LIMIT else None

    def objective(self, idx, s, theta):
        eta = theta @ self.rows.T
        return np.sum(s * theta, axis=-1) - np.logaddexp(0.0, eta) @ self.counts

    def grad_hess(self, idx, s, theta):
        p = expit(theta @ self.rows.T)  # (A, G)
        cp = p * self.counts
        grad = s - cp @ self.rows
        d = theta.shape[-1]
        w = cp * (1 - p)
        if self.outer is not None:
            return grad, (w @ self.outer).reshape(-1, d, d)
        return grad, np.stack([self.rows.T @ (self.rows * wb[:, None]) for wb in w])

    def fitted_sum(self, theta):
        return (expit(theta @ self.rows.T) * self.counts) @ self.rows


@np.errstate(over="ignore", invalid="ignore")
def logistic_score_solve(design, target, *, maxit: int = 25, tol: float = 1e-8):
    """θ (B, d) solving Σ_i σ(x_iᵀθ) x_i = ``target`` (B, d) for designs (B, n, d), or one
    design (n, d) shared by every data set (faster: its distinct rows with counts, one matrix
    product per step for all data sets): Newton–Raphson from 0 with step halving on the
    concave objective θᵀt − Σ log(1 + e^{x_iᵀθ}), at most ``maxit`` steps, stopping when the
    objective's relative change is below ``tol`` (R ``glm``'s rule); the last iterate is kept
    when not converged. Returns (θ, converged), where converged also needs the equations to
    hold at θ (max residual ≤ √tol·(max|t| + 1)): with no solution the iterates run off to
    infinity and the objective's change settles too."""
    x = np.asarray(design, dtype=float)
    s = np.asarray(target, dtype=float)
    B, d = s.shape
    terms = _SharedDesign(x) if x.ndim == 2 else _Designs(x)
    theta = np.zeros((B, d))
    value = terms.objective(None, s, theta)
    done = np.zeros(B, dtype=bool)
    for _ in range(int(maxit)):
        act = np.flatnonzero(~done)
        if act.size == 0:
            break
        idx = None if act.size == B else act
        th = theta if idx is None else theta[act]
        grad, hess = terms.grad_hess(idx, s[act], th)
        # run off to where every fitted probability is 0 or 1: no curvature left, stop there
        stuck = ~(np.isfinite(hess).all(axis=(1, 2)) & (np.abs(hess).max(axis=(1, 2)) > 0))
        if stuck.any():
            done[act[stuck]] = True
            act, th, grad, hess = (a[~stuck] for a in (act, th, grad, hess))
            if act.size == 0:
                break
            idx = act
        step = np.stack([np.linalg.lstsq(h, g, rcond=None)[0] for h, g in zip(hess, grad,
                                                                              strict=True)])
        t = np.ones(act.size)
        new = th + step
        sa = s[act]
        new_value = terms.objective(idx, sa, new)
        for _ in range(30):  # halve until the concave objective does not decrease
            worse = ~(new_value >= value[act])
            if not worse.any():
                break
            t = np.where(worse, t / 2, t)
            # only the data sets still halving are re-evaluated (the others keep their values)
            w = slice(None) if worse.all() else np.flatnonzero(worse)
            new[w] = th[w] + t[w, None] * step[w]
            new_value[w] = terms.objective(idx if worse.all() else act[w], sa[w], new[w])
        settled = np.abs(new_value - value[act]) < tol * (np.abs(new_value) + 0.1)
        theta[act], value[act] = new, new_value
        done[act] = settled
    # a run-off to infinity also settles the objective's relative change: converged means the
    # score equations hold (|residual| small against the target's scale)
    residual = np.abs(s - terms.fitted_sum(theta)).max(axis=-1)
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
        # a fixed design shared by every replicate (one data set, as in a benchmark on real
        # records): its norms are computed, and its score equations solved, once for all
        shared = bool(np.all(design == design[:1]))
        norms = np.broadcast_to(np.linalg.norm(design[0], axis=-1), (R, n)) if shared else \
            np.linalg.norm(design, axis=-1)
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
        solve_design = design[0] if shared else design
        eps_set = self.set_budget(epsilon)
        coefs, ok = [], []
        for j in range(self.m):
            z = l2_ball_mechanism(y[..., None] * design, radius=np.repeat(radius[:, None], n, 1),
                                  epsilon=eps_set, rng=rng, ledger=ledger.for_set(j),
                                  statistic=f"set {j + 1}: y_i x_i of every record", note=note)
            theta, done = logistic_score_solve(solve_design, z.sum(axis=1), maxit=self.maxit)
            coefs.append(theta)
            ok.append(done)
        return CoefficientBatch(np.stack(coefs, axis=1), np.stack(ok, axis=1)), {}
