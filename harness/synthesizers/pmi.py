"""Perturbed Multiple Imputation (PMI; Park & Ghosh §3.5, §4.3): fully synthetic categorical
records from GLM conditionals perturbed by a Dirichlet-style floor.

Model. For every feature i of M categorical features, an elastic-net regularised multinomial
logistic regression of x_i on the one-hot coding of x_-i (all levels, intercept unpenalised,
symmetric coefficients for all classes) gives
g_j(x_-i) = Pr_ŵ(x_i = j | x_-i) ∝ exp(c_ij + β_ijᵀ x_-i). λ is chosen by k-fold
cross-validation on the multinomial deviance over a path of ``n_lambda`` values from λ_max (all
slopes zero) down to λ_max·``lambda_min_ratio``, with the one-standard-error rule
(``lambda_rule="1se"``, R's ``lambda.1se``: the largest λ whose mean CV deviance is within one
standard error of the best) or the best λ (``"min"``). Fits use at most ``fit_n`` rows,
a subsample drawn without replacement. ``standardize`` (default False) scales each one-hot
column to unit variance before penalising, as R's glmnet does by default; it is off by default
because standardised columns of rare levels (an NA level of 0.5 %, say) made glmnet's
multinomial solver fail to converge beyond the first λ values of the path and slowed saga by
an order of magnitude, while 0/1 columns are on a common scale already. λ values where the
solver does not converge count as infinite CV deviance (never chosen) and are counted in the
diagnostic ``pmi_unconverged_fits``.

Perturbation (§3.5): g^α_j = (g_j + α)/(Σ_j g_j + C_i·α) = (g_j + α)/(1 + C_i·α) with
α = 1/expm1(ε/M), ε the privacy value *per synthetic record* (``epsilon_sample``; spec 001
§1.4 on the direction of the paper's Eq. 6). With α = 0 this is plain GLM multiple imputation.

Sampling (spec 001 §1.7, §1.8): each synthetic record is one systematic-scan Gibbs sweep
(features in schema order, updated in place) from a seed record; seeds are rows of the original
data drawn uniformly without replacement (``pool="original"``) or uniform random categories
(``pool="uniform"``). Vectorised over records (``harness.synthesizers.gibbs``), deterministic
given the rng.

Privacy, honestly stated. The GLM fit (coefficients, λ, the CV folds and the subsample) is
**not** private: it is a deterministic function of the data and is never released. What the
paper credits (§3.5, "the proof is analogous to the proof for PeGS") is the perturbation: since
every g_j lies in [0, 1], for *any* two fitted models the ratio (g_j + α)/(g'_j + α) lies in
[α/(1+α), (1+α)/α], so each of the M conditional draws of a sweep changes the probability of an
output record by at most a factor 1 + 1/α, whatever the data did to the fit, and one record
costs M·log(1 + 1/α) = ε. That bound conditions on the seed: seeds drawn from the original rows
(the default, as in the paper) are data-dependent and not covered. The ledger records only this
per-record perturbation: one entry per released set, ε = n_out·ε_per_sample (the n_out records
of a set compose sequentially), so a release claims m·n_out·ε_per_sample.

Backends: ``glmnet`` (python-glmnet, GPL, the optional extra ``dips-harness[glmnet]``, imported
lazily), ``sklearn`` (scikit-learn's saga solver) or ``cd`` (the harness's block coordinate
descent for one-hot designs, :mod:`harness.inference.categorical_logit`: the same objective with
glmnet's convergence rule ``thresh``, at most ``max_sweeps`` sweeps per λ); ``auto`` takes
glmnet when installed, else sklearn. All run the same CV loop (same folds, same λ path;
sklearn's C = 1/(n_train·λ)), so only the solver differs; ``max_iter`` and ``tol`` are saga's
(glmnet keeps its defaults, 1e-7 and 1e5). glmnet's multinomial solver can fail to converge on
many-class features (18 and 25 levels with rare levels, in the stand-in discharge data: it then
returns the first λ values of the path only); ``auto`` refits such a feature with sklearn. On
that data one replicate's fits took about ten minutes with glmnet or saga and about one with
``cd`` (5,000 rows). The backend of every feature is recorded on the prepared model
(``PMIModel.backend``: "glmnet", "sklearn", "cd" or "glmnet+sklearn"), in the ledger note and
as the diagnostic ``pmi_glmnet_share`` (the share of features fitted by glmnet).

The fits do not depend on ε: ``prepare`` computes them once per task and every release over the
ε grid reuses them (spec 001 §6, "Budget").
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..data import RecordBatch
from ..errors import ConfigError, allowed
from ..inference.categorical_logit import LogitProblem, fit_logit_paths
from ..privacy.ledger import LedgerEntry
from ..validation import check_number
from .base import Synthesizer
from .gibbs import draw_seeds, gibbs_sweep
from .pegs import alpha_for  # the same calibration as PeGS (Eq. 6, spec §1.4)
from .registry import register

BACKENDS = ("auto", "glmnet", "sklearn", "cd")
LAMBDA_RULES = ("1se", "min")
POOLS = ("original", "uniform")
_PROB_FLOOR = 1e-10  # held-out probabilities are clipped here in the CV deviance


def perturb(g: np.ndarray, alpha: float) -> np.ndarray:
    """g^α = (g + α)/(1 + C·α) over the last axis (C categories; rows of g sum to 1)."""
    return (g + alpha) / (1.0 + g.shape[-1] * alpha)


def glmnet_available() -> bool:
    try:
        import glmnet  # noqa: F401
    except ImportError:
        return False
    return True


def resolve_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise allowed("backend", backend, BACKENDS)
    if backend == "auto":
        return "glmnet" if glmnet_available() else "sklearn"
    if backend == "glmnet" and not glmnet_available():
        raise ConfigError("backend: 'glmnet' needs python-glmnet (pip install "
                          "'dips-harness[glmnet]'; allowed: auto, sklearn)")
    return backend


def one_hot(codes: np.ndarray, cards) -> np.ndarray:
    """Full one-hot coding (n, Σ C_k) of integer codes (n, p): every level of every column."""
    offsets = np.concatenate([[0], np.cumsum(cards)[:-1]]).astype(np.int64)
    out = np.zeros((codes.shape[0], int(np.sum(cards))))
    rows = np.arange(codes.shape[0])
    for k, off in enumerate(offsets):
        out[rows, off + codes[:, k]] = 1.0
    return out


def lambda_path(x: np.ndarray, y: np.ndarray, n_levels: int, n_lambda: int,
                min_ratio: float, l1_ratio: float, standardize: bool = False) -> np.ndarray:
    """Decreasing λ path of ``n_lambda`` values, log-spaced from λ_max (every slope zero; on
    the standardised columns with ``standardize``) to λ_max·``min_ratio`` (glmnet's
    construction)."""
    xs = (x - x.mean(0)) / (_sd(x) if standardize else 1.0)
    yc = np.eye(n_levels)[y]
    yc = yc - yc.mean(0)
    lam_max = np.abs(xs.T @ yc).max() / x.shape[0] / max(l1_ratio, 1e-3)
    lam_max = max(lam_max, 1e-8)
    return np.geomspace(lam_max, lam_max * min_ratio, n_lambda)


def _sd(x: np.ndarray) -> np.ndarray:
    sd = x.std(axis=0)
    return np.where(sd > 0, sd, 1.0)


def _sklearn_version() -> tuple[int, int]:
    import sklearn

    major, minor = sklearn.__version__.split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


def _fit_path_sklearn(x, y, lambdas, l1_ratio, seed, max_iter, tol, standardize):
    """(coef (L, K', p), intercept (L, K'), classes) along the λ path by saga with warm starts;
    K' = 1 for two observed classes (binomial form), else the observed classes."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    classes = np.unique(y)
    mean, sd = (x.mean(0), _sd(x)) if standardize else (np.zeros(x.shape[1]), 1.0)
    xs = (x - mean) / sd
    kw = {"l1_ratio": l1_ratio, "solver": "saga", "warm_start": True, "max_iter": max_iter,
          "tol": tol, "random_state": seed}
    if _sklearn_version() < (1, 8):
        kw["penalty"] = "elasticnet"
    model = LogisticRegression(C=1.0, **kw)
    coefs, intercepts = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for lam in lambdas:
            model.set_params(C=1.0 / (x.shape[0] * lam))
            model.fit(xs, y)
            beta = model.coef_ / sd  # back to the one-hot scale
            coefs.append(beta)
            intercepts.append(model.intercept_ - beta @ mean)
    return np.array(coefs), np.array(intercepts), classes


def _fit_path_glmnet(x, y, lambdas, l1_ratio, seed, max_iter, tol, standardize):
    """As :func:`_fit_path_sklearn`; λ values glmnet did not converge at (it returns only the
    first ones of the path then) get NaN coefficients."""
    from glmnet import LogitNet

    classes = np.unique(y)
    # glmnet's own convergence threshold and iteration cap (tol and max_iter are saga's)
    model = LogitNet(alpha=l1_ratio, lambda_path=lambdas, standardize=standardize, n_splits=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(x, y)
    coef = np.moveaxis(model.coef_path_, -1, 0)  # (L, K', p)
    intercept = np.moveaxis(np.atleast_2d(model.intercept_path_), -1, 0)  # (L, K')
    n = len(lambdas)
    if coef.shape[0] != n:  # glmnet did not converge beyond its first solutions
        coef = np.concatenate([coef, np.full((n - coef.shape[0], *coef.shape[1:]), np.nan)])
        intercept = np.concatenate([intercept, np.full((n - len(intercept),
                                                        *intercept.shape[1:]), np.nan)])
    return coef, intercept, classes


def _fit_paths_cd(folds, lambdas, l1_ratio, standardize, thresh, max_sweeps):
    """:func:`~harness.inference.categorical_logit.fit_logit_paths` over ``folds`` (a list of
    (codes of x_-i, cards of x_-i, y)) solved as one batch, in the format of the other fitters:
    (coef (L, K', p), intercept (L, K'), classes) per fold, K' the observed classes."""
    problems, classes = [], []
    cards_x = folds[0][1]
    for codes_x, _, y in folds:
        weights = None
        if standardize:  # glmnet's standardised penalty: a one-hot column's sd (0 -> 1)
            weights = tuple(_sd_of_share(np.bincount(codes_x[:, f], minlength=c) / y.size)
                            for f, c in enumerate(cards_x))
        problems.append(LogitProblem(codes_x, y, lambdas, weights))
        classes.append(np.unique(y))
    n_levels = max(int(y.max()) + 1 for _, _, y in folds)
    paths = fit_logit_paths(problems, cards_x, n_levels, l1_ratio=l1_ratio, thresh=thresh,
                            max_sweeps=max_sweeps)
    return [(np.moveaxis(path.coef, 2, 1)[:, cls], path.intercept[:, cls], cls)
            for path, cls in zip(paths, classes, strict=True)]


def _sd_of_share(share: np.ndarray) -> np.ndarray:
    sd = np.sqrt(share * (1.0 - share))
    return np.where(sd > 0, sd, 1.0)


_FITTERS = {"sklearn": _fit_path_sklearn, "glmnet": _fit_path_glmnet}


def class_probs(x, coef, intercept, classes, n_levels) -> np.ndarray:
    """Probabilities (n, n_levels) of a fitted multinomial (or binomial, K' = 1) model;
    levels not seen in the fit get probability 0."""
    eta = x @ coef.T + intercept
    if len(classes) == 1:
        p = np.ones((x.shape[0], 1))
    elif coef.shape[0] == 1:  # binomial form: class 1 against class 0
        p1 = 1.0 / (1.0 + np.exp(-eta[:, 0]))
        p = np.column_stack([1 - p1, p1])
    else:
        eta = eta - eta.max(axis=1, keepdims=True)
        p = np.exp(eta)
        p /= p.sum(axis=1, keepdims=True)
    out = np.zeros((x.shape[0], n_levels))
    out[:, classes] = p
    return out


@dataclass(frozen=True)
class ConditionalFit:
    """The fitted conditional of one feature: probabilities from the one-hot coding of the
    whole record (the feature's own columns have zero coefficients)."""

    coef: np.ndarray  # (K', D) over the full one-hot columns
    intercept: np.ndarray  # (K',)
    classes: np.ndarray  # the observed levels
    n_levels: int
    lam: float
    cv_deviance: np.ndarray  # mean CV deviance per λ of the path (empty: no CV; inf: a fold's
    #                          fit did not converge at that λ)
    unconverged: int = 0  # fits (fold × λ, and the refit) the solver did not converge at
    backend: str = ""

    def probs(self, onehot: np.ndarray) -> np.ndarray:
        return class_probs(onehot, self.coef, self.intercept, self.classes, self.n_levels)


@dataclass(frozen=True)
class PMIModel:
    """The ε-free stage of PMI for one data set: one :class:`ConditionalFit` per feature."""

    fits: tuple[ConditionalFit, ...]
    cards: tuple[int, ...]
    fit_rows: int

    @property
    def backend(self) -> str:
        """The backend of every fit ("glmnet" or "sklearn"), or "glmnet+sklearn" when
        ``backend="auto"`` refitted some features with sklearn."""
        used = sorted({f.backend for f in self.fits})
        return "+".join(used)

    @property
    def glmnet_share(self) -> float:
        return float(np.mean([f.backend == "glmnet" for f in self.fits]))

    def conditional(self, i: int, state: np.ndarray) -> np.ndarray:
        return self.fits[i].probs(one_hot(state, self.cards))


class Unconverged(RuntimeError):
    """A GLM solver did not converge along the λ path (``fit_conditional(fail_fast=True)``)."""


def choose_lambda(deviance: np.ndarray, rule: str = "1se") -> int:
    """Index into a decreasing λ path from CV deviances (folds, L): ``"min"``, the smallest mean
    deviance (first on ties); ``"1se"``, the first (largest) λ whose mean deviance is at most
    the best mean plus the best λ's standard error across folds (sd/√k), as cv.glmnet."""
    mean = deviance.mean(0)
    best = int(np.argmin(mean))
    if not np.isfinite(mean[best]):
        raise RuntimeError("pmi: the GLM solver converged at no λ of the path in some fold")
    if rule == "min":
        return best
    with np.errstate(invalid="ignore"):
        se = deviance.std(0, ddof=1) / np.sqrt(deviance.shape[0])
    return int(np.flatnonzero(mean <= mean[best] + se[best])[0])


def fit_conditional(codes: np.ndarray, cards, i: int, *, backend: str = "sklearn",
                    l1_ratio: float = 1.0, cv_folds: int = 3, lambda_rule: str = "1se",
                    n_lambda: int = 8, lambda_min_ratio: float = 1e-3,
                    rng: np.random.Generator, max_iter: int = 200, tol: float = 1e-4,
                    standardize: bool = False, lam: float | None = None,
                    fail_fast: bool = False, thresh: float = 1e-7,
                    max_sweeps: int = 10_000) -> ConditionalFit:
    """Fit x_i ~ one-hot(x_-i) on ``codes`` (n, p). With ``lam`` given, fit at that λ only (no
    CV). Otherwise k-fold CV (folds from ``rng``) on the mean held-out deviance
    (−2·mean log-likelihood, probabilities clipped at 1e−10) picks λ by ``lambda_rule``, and the
    model is refitted on all rows along the path down to it. λ values where a fold's solver
    did not converge count as infinite deviance; a refit that does not reach the chosen λ keeps
    its last converged one (``lam`` records the λ used). ``fail_fast`` raises
    :class:`Unconverged` at the first fold with such a λ instead."""
    codes = np.asarray(codes, dtype=np.int64)
    y = codes[:, i]
    x_all = one_hot(codes, cards)
    offsets = np.concatenate([[0], np.cumsum(cards)])
    keep = np.r_[0:offsets[i], offsets[i + 1]:offsets[-1]]
    x = x_all[:, keep]
    codes_x = codes[:, [k for k in range(codes.shape[1]) if k != i]]
    cards_x = tuple(int(c) for k, c in enumerate(cards) if k != i)

    def fitters(rows_list, path):  # one (coef, intercept, classes) per set of rows
        if backend == "cd":
            return _fit_paths_cd([(codes_x[r], cards_x, y[r]) for r in rows_list], path,
                                 l1_ratio, standardize, thresh, max_sweeps)
        return [_FITTERS[backend](x[r], y[r], path, l1_ratio, seed, max_iter, tol, standardize)
                for r in rows_list]

    def fitter(xs, ys, path):
        return _FITTERS[backend](xs, ys, path, l1_ratio, seed, max_iter, tol, standardize)

    seed = int(rng.integers(2**31 - 1))
    n_levels = int(cards[i])

    def widen(coef):  # (K', p_-i) -> (K', D)
        out = np.zeros((coef.shape[0], x_all.shape[1]))
        out[:, keep] = coef
        return out

    if len(np.unique(y)) == 1:  # one observed level: a constant model
        return ConditionalFit(np.zeros((1, x_all.shape[1])), np.zeros(1), np.unique(y),
                              n_levels, float("nan"), np.empty(0), 0, backend)
    lambdas = lambda_path(x, y, n_levels, n_lambda, lambda_min_ratio, l1_ratio, standardize)
    everything = np.arange(y.size)
    if lam is not None:  # a short warm-start path from λ_max down to λ
        path = np.geomspace(max(lambdas[0], lam), lam, 5)
        return _final(*fitters([everything], path)[0], path, widen, n_levels, np.empty(0), 0,
                      backend)
    fold = rng.permutation(y.size) % cv_folds
    deviance = np.empty((cv_folds, lambdas.size))
    fold_fits = fitters([np.flatnonzero(fold != f) for f in range(cv_folds)], lambdas) \
        if backend == "cd" else None
    for f in range(cv_folds):
        train, test = fold != f, fold == f
        coef, intercept, classes = (fold_fits[f] if fold_fits is not None
                                    else fitter(x[train], y[train], lambdas))
        if fail_fast and np.isnan(coef).any():
            raise Unconverged(f"feature {i}: {backend} did not converge in fold {f}")
        for k in range(lambdas.size):
            if np.isnan(coef[k]).any():
                deviance[f, k] = np.inf
                continue
            p = class_probs(x[test], coef[k], intercept[k], classes, n_levels)
            p_obs = np.clip(p[np.arange(test.sum()), y[test]], _PROB_FLOOR, 1.0)
            deviance[f, k] = -2.0 * np.log(p_obs).mean()
    chosen = choose_lambda(deviance, lambda_rule)
    path = lambdas[:chosen + 1]
    return _final(*fitters([everything], path)[0], path, widen, n_levels, deviance.mean(0),
                  int(np.isinf(deviance).sum()), backend)


def _final(coef, intercept, classes, path, widen, n_levels, cv_deviance, unconverged,
           backend):
    """The fit at the last converged λ of ``path`` (normally its last)."""
    ok = np.flatnonzero(~np.isnan(coef).reshape(len(path), -1).any(axis=1))
    if ok.size == 0:
        raise RuntimeError("pmi: the GLM solver did not converge at the largest λ")
    last = int(ok[-1])
    unconverged += int(last != len(path) - 1)
    return ConditionalFit(widen(coef[last]), intercept[last], classes, n_levels,
                          float(path[last]), cv_deviance, unconverged, backend)


def fit_pmi(codes: np.ndarray, cards, rng: np.random.Generator, *, backend: str = "auto",
            fit_n: int = 20_000, **options) -> PMIModel:
    """The ε-free PMI model of one data set (codes (n, p)): a subsample of at most ``fit_n``
    rows (without replacement, from ``rng``), then :func:`fit_conditional` for each feature.
    With ``backend="auto"`` and glmnet installed, a feature whose glmnet fits failed to
    converge at some λ (of a fold or the refit) is refitted with sklearn (same folds)."""
    resolved = resolve_backend(backend)
    codes = np.asarray(codes, dtype=np.int64)
    if codes.shape[0] > fit_n:
        codes = codes[np.sort(rng.choice(codes.shape[0], fit_n, replace=False))]
    fits = []
    fallback = backend == "auto" and resolved == "glmnet"
    for i in range(codes.shape[1]):
        state = rng.bit_generator.state
        try:
            fit = fit_conditional(codes, cards, i, backend=resolved, rng=rng,
                                  fail_fast=fallback, **options)
        except Unconverged:
            fit = None
        if fallback and (fit is None or fit.unconverged):
            rng.bit_generator.state = state  # the same folds and seed
            fit = fit_conditional(codes, cards, i, backend="sklearn", rng=rng, **options)
        fits.append(fit)
    return PMIModel(tuple(fits), tuple(int(c) for c in cards), int(codes.shape[0]))


def pmi_sample(model: PMIModel, seeds: np.ndarray, alpha: float,
               rng: np.random.Generator) -> np.ndarray:
    """One systematic Gibbs sweep from each seed record (n_out, p) under the perturbed
    conditionals g^α: synthetic codes (n_out, p)."""
    return gibbs_sweep(seeds, lambda i, s: perturb(model.conditional(i, s), alpha), rng)


def categorical_cards(data: RecordBatch, method: str = "pmi") -> tuple[int, ...]:
    """Levels per column of a batch whose schema is all categorical (a one-line error naming
    ``method`` otherwise)."""
    schema = getattr(data, "schema", None)
    if not isinstance(data, RecordBatch) or schema is None or \
            len(schema.categorical) != len(schema.columns):
        raise ConfigError(f"data: {method} needs records (RecordBatch) with an all-categorical "
                          f"schema")
    return schema.cell_shape()


@register
class PerturbedMultipleImputation(Synthesizer):
    """PMI (Park & Ghosh §3.5): see the module docstring. Releases ``m`` sets of ``n_out``
    synthetic records per replicate; privacy value: ε per synthetic record."""

    name = "pmi"
    privacy_parameter = "epsilon_sample"
    input_kind = "coded"
    uses_prepare = True

    def __init__(self, n_out: int = 1000, m: int = 1, l1_ratio: float = 1.0, cv_folds: int = 3,
                 lambda_rule: str = "1se", fit_n: int = 20_000, n_lambda: int = 8,
                 lambda_min_ratio: float = 1e-3, backend: str = "auto", pool: str = "original",
                 max_iter: int = 200, tol: float = 1e-4, standardize: bool = False,
                 thresh: float = 1e-7, max_sweeps: int = 10_000):
        super().__init__(m)
        self.n_out = int(check_number("n_out", n_out, integer=True, minimum=1))
        self.l1_ratio = float(check_number("l1_ratio", l1_ratio, minimum=0.0))
        if self.l1_ratio > 1:
            raise ConfigError(f"l1_ratio: must be a number in [0, 1], got {l1_ratio!r}")
        self.cv_folds = int(check_number("cv_folds", cv_folds, integer=True, minimum=2))
        if lambda_rule not in LAMBDA_RULES:
            raise allowed("lambda_rule", lambda_rule, LAMBDA_RULES)
        self.lambda_rule = lambda_rule
        self.fit_n = int(check_number("fit_n", fit_n, integer=True, minimum=10))
        self.n_lambda = int(check_number("n_lambda", n_lambda, integer=True, minimum=2))
        self.lambda_min_ratio = check_number("lambda_min_ratio", lambda_min_ratio,
                                             open_interval=(0.0, 1.0))
        if backend not in BACKENDS:
            raise allowed("backend", backend, BACKENDS)
        self.backend = backend
        if pool not in POOLS:
            raise allowed("pool", pool, POOLS)
        self.pool = pool
        self.max_iter = int(check_number("max_iter", max_iter, integer=True, minimum=1))
        self.tol = check_number("tol", tol, minimum=0.0)
        if not isinstance(standardize, bool):
            raise ConfigError(f"standardize: must be true or false, got {standardize!r}")
        self.standardize = standardize
        self.thresh = check_number("thresh", thresh, open_interval=(0.0, 1.0))
        self.max_sweeps = int(check_number("max_sweeps", max_sweeps, integer=True, minimum=1))

    def claimed_epsilon(self, privacy, data=None):
        return self.m * self.n_out * float(privacy)

    def prepare(self, data, rng):
        """One :class:`PMIModel` per replicate (ε-free; reused over the ε grid)."""
        cards = categorical_cards(data)
        options = {"l1_ratio": self.l1_ratio, "cv_folds": self.cv_folds,
                   "lambda_rule": self.lambda_rule, "n_lambda": self.n_lambda,
                   "lambda_min_ratio": self.lambda_min_ratio, "max_iter": self.max_iter,
                   "tol": self.tol, "standardize": self.standardize, "thresh": self.thresh,
                   "max_sweeps": self.max_sweeps}
        return [fit_pmi(data.values[r], cards, rng, backend=self.backend, fit_n=self.fit_n,
                        **options) for r in range(data.n_replicates)]

    def _release(self, data, epsilon_sample, ledger, rng, prepared):
        cards = categorical_cards(data)
        models = prepared
        alpha = alpha_for(epsilon_sample, len(cards))
        r_count = data.n_replicates
        out = np.empty((r_count, self.m, self.n_out, len(cards)))
        for j in range(self.m):
            ledger.for_set(j).record(LedgerEntry(
                statistic=f"{self.n_out} synthetic records (one Gibbs sweep each)",
                mechanism="perturbed GLM conditionals (g + α)/(1 + C·α)",
                epsilon=self.n_out * epsilon_sample,
                note=f"α = {alpha:.6g} = 1/expm1(ε/M), M = {len(cards)}; per record "
                     f"M·log(1 + 1/α) = {epsilon_sample:g}; backend {models[0].backend}; "
                     f"the GLM fit is not private and not released; seeds: {self.pool}"))
            for r in range(r_count):
                if self.pool == "original":
                    seeds = draw_seeds(data.values[r].astype(np.int64), self.n_out, rng)
                else:
                    seeds = np.column_stack([rng.integers(c, size=self.n_out) for c in cards])
                out[r, j] = pmi_sample(models[r], seeds, alpha, rng)
        diagnostics = {
            "pmi_alpha": np.full((r_count, self.m), alpha),
            "pmi_glmnet_share": np.array([[mod.glmnet_share] * self.m for mod in models]),
            "pmi_fit_rows": np.array([[float(mod.fit_rows)] * self.m for mod in models]),
            "pmi_unconverged_fits": np.array([[float(sum(f.unconverged for f in mod.fits))]
                                              * self.m for mod in models]),
        }
        release = RecordBatch(out, None, 1, data.columns, None, None, data.schema)
        return release, diagnostics
