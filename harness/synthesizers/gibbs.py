"""Generic pieces of Gibbs-type record synthesizers: vectorised categorical draws, seed pools and
one systematic-scan sweep over many chains at once.

A *chain state* is an integer array (chains, p) of category codes. A sweep visits the features in
a fixed order; feature i is redrawn from ``conditional_fn(i, state)``, the (chains, C_i)
probabilities of x_i given the current values of the other features, so features already
updated in this sweep enter with their new values (a systematic scan). Synthesizers that differ
only in their conditionals (perturbed GLMs, perturbed hashed count tables, ...) share this code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


def draw_categorical(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One category per row of ``probs`` (..., C) (rows sum to 1, up to rounding), by inverse
    CDF with one uniform per row: codes (...,) in 0..C−1."""
    cdf = np.cumsum(probs, axis=-1)
    u = rng.random(cdf.shape[:-1]) * cdf[..., -1]
    codes = (cdf <= u[..., None]).sum(axis=-1)
    return np.minimum(codes, probs.shape[-1] - 1)


def draw_seeds(records: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` seed records (n, p) drawn from the rows of ``records`` uniformly at random, without
    replacement while n ≤ the number of rows, and as whole passes over a permutation otherwise
    (every row used once per pass)."""
    rows = records.shape[0]
    passes = -(-n // rows)
    index = np.concatenate([rng.permutation(rows) for _ in range(passes)])[:n]
    return np.array(records[index], dtype=np.int64)


def gibbs_sweep(state: np.ndarray, conditional_fn: Callable[[int, np.ndarray], np.ndarray],
                rng: np.random.Generator, order: Sequence[int] | None = None) -> np.ndarray:
    """One systematic-scan sweep of every chain: for i in ``order`` (default 0..p−1), x_i ~
    ``conditional_fn(i, state)`` (probabilities (chains, C_i)), written into a copy of
    ``state`` at once, so the next feature's conditional sees it. Returns the new state."""
    state = np.array(state, dtype=np.int64, copy=True)
    for i in range(state.shape[1]) if order is None else order:
        state[:, i] = draw_categorical(conditional_fn(i, state), rng)
    return state
