"""The ratings of Bi & Shen's R3 benchmark (MovieLens 25M, GroupLens; spec 004 §4 R3): a scaled-
down stand-in, and a loader for the real ``ratings.csv`` when a user has it.

[paper] 25,000,095 ratings from 162,541 users on 59,047 movies, in {0.5, 1, …, 5}. The real file
is not shipped (no network; 25M ratings with 50 partitions and matrix-factorisation fits do not
fit this machine anyway, spec §7.2). The stand-in is an [assumption] throughout (spec §4 R3),
scaled down [ours] to fit a 2-core machine: users with lognormal activity, items with Zipf(1)
popularity, latent scores r* = 3.53 + b_u + b_i + p_u·q_i + N(0, 0.8²) (dim 10, b_u ~ N(0, .45²),
b_i ~ N(0, .5²), p, q ~ N(0, .3² I)), cut into half stars at the quantiles of the ML-25M
histogram (approximate, from memory)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.datafiles import read_table
from harness.errors import ConfigError

#: the public rating grid {0.5, 1, …, 5}
GRID = tuple(np.arange(1, 11) / 2)
#: [assumption] the ML-25M share of each half star 0.5 … 5 (spec §4 R3)
HISTOGRAM = (0.016, 0.031, 0.016, 0.066, 0.050, 0.196, 0.127, 0.266, 0.088, 0.144)
#: the columns of a user's ratings.csv (GroupLens); ``timestamp`` is read and ignored
CSV_COLUMNS = ("userId", "movieId", "rating", "timestamp")


def standin_ratings(n_users: int, n_items: int, mean_activity: float, seed: int,
                    dim: int = 10) -> np.ndarray:
    """(N, 3) float array of (user index, item index, rating), every (user, item) pair at most
    once; see the module docstring for the assumptions. ``mean_activity``: the mean number of
    ratings per user (lognormal with σ = 1, at least 5, at most n_items)."""
    rng = np.random.default_rng(seed)
    sigma = 1.0
    counts = rng.lognormal(np.log(mean_activity) - sigma**2 / 2, sigma, n_users)
    counts = np.clip(np.round(counts), 5, n_items).astype(int)
    popularity = 1.0 / np.arange(1, n_items + 1)
    log_pop = np.log(popularity / popularity.sum())
    users, items = [], []
    for u, k in enumerate(counts):  # k items without replacement ∝ popularity (Gumbel top-k)
        keys = log_pop + rng.gumbel(size=n_items)
        users.append(np.full(k, u))
        items.append(np.argpartition(-keys, k - 1)[:k])
    users, items = np.concatenate(users), np.concatenate(items)
    b_u, b_i = rng.normal(0, 0.45, n_users), rng.normal(0, 0.5, n_items)
    p_u, q_i = rng.normal(0, 0.3, (n_users, dim)), rng.normal(0, 0.3, (n_items, dim))
    latent = (3.53 + b_u[users] + b_i[items] + np.sum(p_u[users] * q_i[items], axis=1)
              + rng.normal(0, 0.8, users.size))
    cuts = np.quantile(latent, np.cumsum(HISTOGRAM)[:-1])
    ratings = np.asarray(GRID)[np.searchsorted(cuts, latent)]
    return np.column_stack([users, items, ratings]).astype(float)


def load_ratings_csv(path: str | Path, key: str = "study.data_csv") -> np.ndarray:
    """(N, 3) (user index, item index, rating) of a user's GroupLens ``ratings.csv`` (columns
    userId, movieId, rating, timestamp; ids re-indexed 0..). A missing or unknown column, an id
    that is not an integer, a rating off the grid {0.5, …, 5}, or fewer than 100 ratings is a
    one-line ConfigError naming ``key``; nothing is written."""
    import pandas as pd

    frame = read_table(path, key, dtype=str, keep_default_na=False, skip_blank_lines=False)
    unknown = [c for c in frame.columns if c not in CSV_COLUMNS]
    if unknown:
        raise ConfigError(f"{key}: unknown column {unknown[0]!r} in {path} (allowed: "
                          f"{', '.join(CSV_COLUMNS)})")
    missing = [c for c in CSV_COLUMNS[:3] if c not in frame.columns]
    if missing:
        raise ConfigError(f"{key}: {path} has no column {missing[0]!r}")
    out = []
    for col in ("userId", "movieId"):
        text = frame[col].str.strip()
        ok = text.str.fullmatch(r"\d+").to_numpy()
        if not ok.all():
            i = int(np.argmin(ok))
            raise ConfigError(f"{key}: row {i + 1} of {path} has {col} {text.iloc[i]!r} "
                              f"(allowed: an integer id)")
        out.append(np.unique(text.astype(np.int64).to_numpy(), return_inverse=True)[1])
    text = frame["rating"].str.strip()
    r = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isin(r, GRID)
    if bad.any():
        i = int(np.argmax(bad))
        raise ConfigError(f"{key}: row {i + 1} of {path} has rating {text.iloc[i]!r} (allowed: "
                          f"0.5, 1, …, 5)")
    if r.size < 100:
        raise ConfigError(f"{key}: {path} has {r.size} ratings (allowed: at least 100)")
    return np.column_stack([out[0], out[1], r]).astype(float)
