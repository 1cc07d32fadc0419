"""Matrix-factorisation collaborative filtering trained by stochastic gradient descent (Funk
2006, "Netflix update: try this at home"; spec 004 §4 R3): ratings r_ui ≈ μ + b_u + b_i + p_uᵀq_i,
minimising Σ (r_ui − r̂_ui)² + λ(b_u² + b_i² + ‖p_u‖² + ‖q_i‖²) over the observed ratings.

Each epoch visits the ratings in a random order in mini-batches of ``batch`` ratings: the
gradient of every rating in a batch is taken at the batch's start and the updates are summed
(``np.add.at``), so ``batch=1`` is Funk's per-rating SGD and larger batches trade a little
fidelity for numpy speed. μ is the training mean (not learned)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..metrics.accuracy import rmse


@dataclass(frozen=True)
class FactorModel:
    mean: float
    user_bias: np.ndarray
    item_bias: np.ndarray
    user_factors: np.ndarray
    item_factors: np.ndarray

    def predict(self, users, items, clip: tuple[float, float] | None = None) -> np.ndarray:
        """r̂ for (user, item) index pairs; unknown indices are refused by numpy indexing."""
        users, items = np.asarray(users), np.asarray(items)
        pred = (self.mean + self.user_bias[users] + self.item_bias[items]
                + np.sum(self.user_factors[users] * self.item_factors[items], axis=-1))
        return pred if clip is None else np.clip(pred, *clip)


def mf_sgd(users, items, ratings, n_users: int, n_items: int, rng: np.random.Generator, *,
           dim: int = 10, l2: float = 0.02, lr: float = 0.01, epochs: int = 20,
           batch: int = 256, init_scale: float = 0.1) -> FactorModel:
    """Fit the biased factor model by (mini-batch) SGD; see the module docstring."""
    users = np.asarray(users, dtype=np.int64)
    items = np.asarray(items, dtype=np.int64)
    r = np.asarray(ratings, dtype=float)
    if not (users.shape == items.shape == r.shape) or r.ndim != 1:
        raise ValueError("users, items and ratings must be 1-D arrays of one length")
    mu = float(r.mean())
    pu = rng.normal(0.0, init_scale, (n_users, dim))
    qi = rng.normal(0.0, init_scale, (n_items, dim))
    # one parameter table: row u = (b_u, p_u) for users, row n_users + i = (b_i, q_i) for items,
    # so that a batch is one gather and one scatter-add. The scatter-add runs on the flat table
    # (numpy's fast 1-D ``add.at``): each parameter still receives its batch's updates one by
    # one in the batch's order, so the result is bit for bit that of separate updates of
    # b_u, b_i, p_u and q_i
    k = dim + 1
    table = np.zeros((n_users + n_items, k))
    table[:n_users, 1:] = pu
    table[n_users:, 1:] = qi
    flat = table.reshape(-1)
    cols = np.arange(k)
    n = r.size
    for _ in range(int(epochs)):
        order = rng.permutation(n)
        u_all, i_all, r_all = users[order], items[order] + n_users, r[order]
        for start in range(0, n, batch):
            stop = min(start + batch, n)
            b = stop - start
            rows = np.concatenate([u_all[start:stop], i_all[start:stop]])
            x = table[rows]  # (2b, k): the users' rows, then the items'
            xu, xi = x[:b], x[b:]
            err = r_all[start:stop] - (mu + xu[:, 0] + xi[:, 0]
                                       + np.sum(xu[:, 1:] * xi[:, 1:], axis=1))
            err2 = np.concatenate([err, err])
            step = np.concatenate([xi, xu])  # a user's factor moves along its item's and back
            step *= err2[:, None]
            step[:, 0] = err2  # the biases' gradient is the error itself
            step -= l2 * x
            step *= lr
            np.add.at(flat, (rows[:, None] * k + cols).reshape(-1), step.reshape(-1))
    return FactorModel(mu, table[:n_users, 0].copy(), table[n_users:, 0].copy(),
                       table[:n_users, 1:].copy(), table[n_users:, 1:].copy())


def mf_cv(users, items, ratings, n_users: int, n_items: int, rng: np.random.Generator, *,
          grid, folds: int = 3, clip: tuple[float, float] | None = None,
          **fixed) -> tuple[FactorModel, int, np.ndarray]:
    """Hyper-parameters of :func:`mf_sgd` by ``folds``-fold cross-validation on the given
    ratings, then the chosen fit on all of them (the tuning a data user runs, e.g. R
    ``recosystem``'s ``tune()`` then ``train()``). ``grid`` is a sequence of settings (dicts of
    :func:`mf_sgd` keyword arguments overriding ``fixed``); the ratings are split at random into
    ``folds`` parts, each setting is fitted on all parts but one and scored by the RMSE of its
    (``clip``-ped) predictions on the part left out, and the setting with the lowest mean RMSE
    wins (the first on ties). Returns (the fit, the chosen setting's index, the mean validation
    RMSE of every setting)."""
    users = np.asarray(users, dtype=np.int64)
    items = np.asarray(items, dtype=np.int64)
    r = np.asarray(ratings, dtype=float)
    grid = [dict(g) for g in grid]
    if not grid or int(folds) < 2 or r.size < int(folds):
        raise ValueError("mf_cv needs a non-empty grid, folds >= 2 and at least folds ratings")
    fold = rng.permutation(r.size) % int(folds)
    scores = np.zeros(len(grid))
    for k in range(int(folds)):
        train, valid = fold != k, fold == k
        for g, setting in enumerate(grid):
            fit = mf_sgd(users[train], items[train], r[train], n_users, n_items, rng,
                         **{**fixed, **setting})
            scores[g] += float(rmse(fit.predict(users[valid], items[valid], clip=clip), r[valid]))
    scores /= int(folds)
    best = int(np.argmin(scores))
    return mf_sgd(users, items, r, n_users, n_items, rng, **{**fixed, **grid[best]}), best, scores
