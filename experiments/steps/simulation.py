"""The simulation designs of Bowen, Liu & Su §4.1 (spec 003 §4.1, §5.2): four categorical
predictors X1..X4 with 2, 3, 4 and 5 levels and a normal outcome Y, under

* **Model 1** (main effects): Y = β0 + Σ_j β_j X_j + e, dummy coding with the first level as
  reference (spec [R]), 11 coefficients;
* **Model 2** (saturated): Y = βᵀ X_1234 + e, the 120 cell indicators of the four-way
  interaction (cell-means coding, no intercept; spec [R]), β ~ N(0, 1) drawn once from a fixed
  seed and held fixed;

e ~ N(0, 1). X is independent and uniform over its levels by default (spec A3 [R]; ``x_probs``
overrides). Y is cut into 15 equal-width bins over a *public* range, the 0.0005 and 0.9995
quantiles of Y's true marginal under the generating model (spec A5 [R]), computed here exactly
from the normal mixture rather than by Monte Carlo; values outside are clipped into the end bins.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from scipy import optimize, stats

from harness.errors import ConfigError

#: levels of X1..X4 (§4.1)
X_LEVELS = (2, 3, 4, 5)
X_NAMES = ("X1", "X2", "X3", "X4")
MODELS = ("main_effect", "saturated")
#: Model 1's true coefficients (§4.1): intercept, X1, X2 (2), X3 (3), X4 (4)
MODEL1_BETA = (0.0, 0.5, 0.5, -0.8, 1.0, 0.5, 0.5, 0.5, 0.7, 0.8, 0.5)
#: the fixed seed of Model 2's β ~ N(0, 1) (the paper draws it once; the value is ours)
MODEL2_BETA_SEED = 20200831
#: the two tail probabilities of the public Y range (spec A5 [R])
Y_TAIL = 0.0005
Y_BINS = 15


def check_model(model: str, key: str = "study.model") -> str:
    if model not in MODELS:
        raise ConfigError(f"{key}: {model!r} is not a model (allowed: {', '.join(MODELS)})")
    return model


def model1_names() -> tuple[str, ...]:
    """Coefficient names of Model 1 in :data:`MODEL1_BETA` order."""
    names = ["(Intercept)"]
    for name, k in zip(X_NAMES, X_LEVELS, strict=True):
        names += [f"{name}_{level}" for level in range(2, k + 1)]
    return tuple(names)


def model2_names() -> tuple[str, ...]:
    """Model 2's 120 cell names x1.x2.x3.x4 (levels from 1), in C order of the cross-table."""
    return tuple(".".join(str(v + 1) for v in idx) for idx in np.ndindex(*X_LEVELS))


@lru_cache(maxsize=1)
def model2_beta() -> np.ndarray:
    """Model 2's 120 cell means, β ~ N(0, 1) from :data:`MODEL2_BETA_SEED`."""
    beta = np.random.default_rng(MODEL2_BETA_SEED).standard_normal(int(np.prod(X_LEVELS)))
    beta.setflags(write=False)
    return beta


def true_beta(model: str) -> np.ndarray:
    return np.asarray(MODEL1_BETA) if check_model(model) == "main_effect" else model2_beta()


def coefficient_names(model: str) -> tuple[str, ...]:
    return model1_names() if check_model(model) == "main_effect" else model2_names()


def x_distribution(x_probs: Sequence | None = None) -> list[np.ndarray]:
    """The marginal probabilities of X1..X4: uniform, or ``x_probs`` (one list per X)."""
    if x_probs is None or x_probs == "uniform":
        return [np.full(k, 1.0 / k) for k in X_LEVELS]
    if len(x_probs) != len(X_LEVELS) or any(len(p) != k for p, k in zip(x_probs, X_LEVELS,
                                                                          strict=True)):
        raise ConfigError("study.x_probs: give 'uniform' or four lists of 2, 3, 4 and 5 "
                          "probabilities")
    out = [np.asarray(p, dtype=float) for p in x_probs]
    if any((p < 0).any() or abs(p.sum() - 1) > 1e-9 for p in out):
        raise ConfigError("study.x_probs: each list must be non-negative and sum to 1")
    return out


def design(model: str, x: np.ndarray) -> np.ndarray:
    """The model's design matrix for codes ``x`` (n, 4): Model 1 dummies (n, 11) with an
    intercept, Model 2 cell indicators (n, 120)."""
    x = np.asarray(x)
    if check_model(model) == "saturated":
        cell = np.ravel_multi_index(tuple(x.T), X_LEVELS)
        out = np.zeros((x.shape[0], int(np.prod(X_LEVELS))))
        out[np.arange(x.shape[0]), cell] = 1.0
        return out
    cols = [np.ones(x.shape[0])]
    for j, k in enumerate(X_LEVELS):
        cols += [(x[:, j] == level).astype(float) for level in range(1, k)]
    return np.stack(cols, axis=1)


def cell_means(model: str) -> np.ndarray:
    """E[Y | X] on the (2, 3, 4, 5) cross-table."""
    grid = np.array(list(np.ndindex(*X_LEVELS)))
    return (design(model, grid) @ true_beta(model)).reshape(X_LEVELS)


def simulate(model: str, n: int, rng: np.random.Generator,
             x_probs: Sequence | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One data set: codes x (n, 4) int64 and outcome y (n,)."""
    probs = x_distribution(x_probs)
    x = np.stack([np.searchsorted(np.cumsum(p), rng.random(n), side="right").clip(0, p.size - 1)
                  for p in probs], axis=1).astype(np.int64)
    y = design(model, x) @ true_beta(model) + rng.standard_normal(n)
    return x, y


def y_edges(model: str, x_probs: Sequence | None = None, bins: int = Y_BINS,
            tail: float = Y_TAIL) -> np.ndarray:
    """``bins`` + 1 equal-width edges over the [tail, 1 − tail] quantiles of Y's true marginal
    (a mixture of N(E[Y | x], 1) over the X cells), solved exactly (spec A5 [R])."""
    probs = x_distribution(x_probs)
    weight = probs[0]
    for p in probs[1:]:
        weight = np.multiply.outer(weight, p)
    mu, w = cell_means(model).ravel(), weight.ravel()

    def quantile(q):
        f = lambda y: float(w @ stats.norm.cdf(y - mu)) - q  # noqa: E731
        return optimize.brentq(f, mu.min() - 10, mu.max() + 10, xtol=1e-12)

    return np.linspace(quantile(tail), quantile(1 - tail), bins + 1)


def bin_y(y: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin codes 0..len(edges)−2 of y, values outside the range clipped into the end bins."""
    return np.clip(np.searchsorted(edges, y, side="right") - 1, 0, len(edges) - 2)
