"""Shared fixture of the MST reference test against OpenDP (``test_pgm_reference.py``) and of
the script that records OpenDP's releases (``make_pgm_reference.py``): the data set, the ρ, and
the two statistics compared.

OpenDP's contingency table adds a null key to every column (level K after the K public
levels), its model can put mass there and its sampler can draw it. ``mean_tvd`` counts such
mass and rows either way: left out (only the K × K public cells, renormalised: the
comparison of the mechanisms) or as error (over (K + 1)² cells with the truth's null cells
zero: what a user of OpenDP's synthetic data sees). Our releases have no null level, which is
the same as a null cell of zero.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

N = 2000
LEVELS = 3
COLUMNS = ("c0", "c1", "c2", "c3")
RHO = 0.05
#: OpenDP's defaults: half of ρ on the one-way marginals, of the rest 90 % on measuring the
#: selected two-way marginals and 10 % on selecting them
ONEWAY_SPLIT, MEASURE_SPLIT = 0.5, 0.9
#: AIM's reference: the chain c0 → c1 → c2 only (one OpenDP AIM release on four columns
#: costs minutes), OpenDP's defaults otherwise: workload all 3-way marginals (here the one
#: full table), T = 16d = 48 rounds, 80 MB model limit, ONEWAY_SPLIT and MEASURE_SPLIT
AIM_COLUMNS, AIM_DEGREE, AIM_ROUNDS, AIM_MAX_SIZE = 3, 3, 48, 80.0


def reference_codes() -> np.ndarray:
    """The data set (n, p) of codes: a chain c0 → c1 → c2 of dependent columns and an
    independent c3, so that the spanning tree MST selects is clear."""
    rng = np.random.default_rng(20240611)
    c0 = rng.choice(LEVELS, N, p=[0.5, 0.3, 0.2])
    c1 = np.where(rng.random(N) < 0.7, c0, rng.integers(0, LEVELS, N))
    c2 = np.where(rng.random(N) < 0.6, c1, rng.integers(0, LEVELS, N))
    c3 = rng.choice(LEVELS, N, p=[0.2, 0.3, 0.5])
    return np.stack([c0, c1, c2, c3], axis=1)


def pair_table(codes: np.ndarray, a: int, b: int, width: int = LEVELS + 1) -> np.ndarray:
    """Counts of the (width × width) table of columns a, b of records ``codes`` (n, p)."""
    return np.bincount(codes[:, a] * width + codes[:, b], minlength=width * width).reshape(
        width, width).astype(float)


def aim_cliques() -> list[tuple[int, ...]]:
    """AIM's candidates on the reference data (the workload's downward closure), by size."""
    cols = range(AIM_COLUMNS)
    return [c for s in range(1, AIM_DEGREE + 1) for c in combinations(cols, s)]


def clique_table(codes: np.ndarray, clique, width: int = LEVELS + 1) -> np.ndarray:
    """Counts of the cross-table of ``clique``'s columns of records ``codes`` (n, p), cells
    in row-major order, ``width`` levels per column (OpenDP's null the last)."""
    cell = np.zeros(codes.shape[0], dtype=np.int64)
    for c in clique:
        cell = cell * width + codes[:, c].astype(np.int64)
    return np.bincount(cell, minlength=width ** len(clique)).astype(float)


def mean_tvd(tables, codes: np.ndarray, drop_null: bool) -> float:
    """Mean over the column pairs (in ``combinations`` order) of the TVD between the tables
    (counts, K × K or (K + 1) × (K + 1) with a null level) and the data's two-way tables,
    each normalised. ``drop_null``: only the K × K public cells, renormalised (null mass and
    null rows are left out); else over (K + 1)² cells with the truth's null cells zero (null
    mass and null rows count as error)."""
    pairs = list(combinations(range(codes.shape[1]), 2))
    out = []
    for table, (a, b) in zip(tables, pairs, strict=True):
        truth = pair_table(codes, a, b)
        est = np.zeros_like(truth)
        t = np.maximum(np.asarray(table, dtype=float), 0.0)
        est[:t.shape[0], :t.shape[1]] = t
        if drop_null:
            est, truth = est[:LEVELS, :LEVELS], truth[:LEVELS, :LEVELS]
        out.append(0.5 * float(np.abs(est / est.sum() - truth / truth.sum()).sum()))
    return float(np.mean(out))
