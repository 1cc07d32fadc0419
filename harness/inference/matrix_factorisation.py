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
    return mf_sgd_many(users[None], items[None], r[None], n_users, n_items, [rng], dim=dim,
                       l2=l2, lr=lr, epochs=epochs, batch=batch, init_scale=init_scale)[0]


def mf_sgd_many(users, items, ratings, n_users: int, n_items: int, rngs, *, dim: int = 10,
                l2: float = 0.02, lr: float = 0.01, epochs: int = 20, batch: int = 256,
                init_scale: float = 0.1) -> list[FactorModel]:
    """J independent fits of :func:`mf_sgd` in one pass: fit j on ``users[j]``, ``items[j]``,
    ``ratings[j]`` (J, n) with its own generator ``rngs[j]``. Every fit draws from its stream
    in the same order as alone and every parameter gets the same operations, so fit j is bit
    for bit ``mf_sgd(users[j], items[j], ratings[j], ..., rngs[j])``; the J fits share each
    batch's numpy calls (J times fewer Python-level steps)."""
    users = np.asarray(users, dtype=np.int64)
    items = np.asarray(items, dtype=np.int64)
    r = np.asarray(ratings, dtype=float)
    if not (users.shape == items.shape == r.shape) or r.ndim != 2 or len(rngs) != r.shape[0]:
        raise ValueError("users, items and ratings must be (J, n) arrays with J generators")
    n_fits, n = r.shape
    mu = np.array([float(row.mean()) for row in r])[:, None]
    # the parameters column by column: plane c holds column c of every fit's table, whose row
    # u is (b_u, p_u) for users and row n_users + i is (b_i, q_i) for items. A batch is then
    # one gather and one scatter-add, and every step runs on long rows. The scatter-add runs
    # on the flat planes (numpy's fast 1-D ``add.at``): each parameter still receives its
    # batch's updates one by one in the batch's order, so the result is bit for bit that of
    # separate updates of b_u, b_i, p_u and q_i, fit by fit
    k = dim + 1
    n_rows = n_users + n_items
    planes = np.zeros((k, n_fits, n_rows))
    for j, rng in enumerate(rngs):
        planes[1:, j, :n_users] = rng.normal(0.0, init_scale, (n_users, dim)).T
        planes[1:, j, n_users:] = rng.normal(0.0, init_scale, (n_items, dim)).T
    flat = planes.reshape(-1)
    by_column = planes.reshape(k, -1)
    column_start = (np.arange(k) * (n_fits * n_rows))[:, None]
    first_row = (np.arange(n_fits) * n_rows)[:, None]  # fit j's rows start here in a plane
    for _ in range(int(epochs)):
        order = np.stack([rng.permutation(n) for rng in rngs])  # (J, n)
        u_all = np.take_along_axis(users, order, 1) + first_row
        i_all = np.take_along_axis(items, order, 1) + n_users + first_row
        r_all = np.take_along_axis(r, order, 1)
        for start in range(0, n, batch):
            stop = min(start + batch, n)
            b = stop - start
            rows = np.concatenate([u_all[:, start:stop], i_all[:, start:stop]], axis=1)
            rows = rows.reshape(-1)
            x = by_column.take(rows, axis=1).reshape(k, n_fits, 2 * b)  # users, then items
            xu, xi = x[:, :, :b], x[:, :, b:]
            err = r_all[:, start:stop] - (mu + xu[0] + xi[0] + _dot(xu, xi, k))
            err2 = np.concatenate([err, err], axis=1)
            step = np.concatenate([xi, xu], axis=2)  # a user's factor moves along its item's
            step *= err2
            step[0] = err2  # the biases' gradient is the error itself
            step -= np.multiply(x, l2, out=x)
            step *= lr
            np.add.at(flat, (column_start + rows).reshape(-1), step.reshape(-1))
    table = planes.transpose(1, 2, 0)  # (J, n_rows, k)
    return [FactorModel(float(mu[j, 0]), table[j, :n_users, 0].copy(),
                        table[j, n_users:, 0].copy(), table[j, :n_users, 1:].copy(),
                        table[j, n_users:, 1:].copy()) for j in range(n_fits)]


def _dot(xu, xi, k) -> np.ndarray:
    """Σ_t xu[t] xi[t] over the factor planes t = 1..k−1, summed in the order of numpy's
    pairwise sum, i.e. bit for bit ``np.sum(products, axis=-1)`` of the (…, k−1) products of
    one parameter row (eight running sums over strides of eight, combined pairwise, then the
    remainder in turn; one block, up to 127 factors)."""
    d = k - 1
    if d >= 128:
        return np.sum(np.moveaxis(xu[1:] * xi[1:], 0, -1), axis=-1)
    if d < 8:
        out = xu[1] * xi[1]
        for t in range(2, k):
            out += xu[t] * xi[t]
        return out
    prod = xu[1:] * xi[1:]  # (d, ...): one product per factor plane
    acc = prod[:8]  # the eight running sums: acc[t] = prod[t] + prod[t + 8] + ...
    for start in range(8, d - d % 8, 8):
        acc = acc + prod[start:start + 8]
    pairs = acc[0::2] + acc[1::2]  # (a0 + a1), (a2 + a3), (a4 + a5), (a6 + a7)
    out = (pairs[0] + pairs[1]) + (pairs[2] + pairs[3])
    for t in range(d - d % 8, d):
        out += prod[t]
    return out


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
