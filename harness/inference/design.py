"""Model matrices of categorical records, as R's ``model.matrix`` builds them with treatment
contrasts: an intercept, then each column's dummies for levels 1..K−1 (level 0 the reference)
or, for a column declared numeric, one column of its values, then the requested two-way
interactions (products of the two columns' blocks, the first column's level varying fastest).
Pairs are listed as (a, b) with a < b; ``interactions=True`` means all of them, in the order
of ``~ (x0 + x1 + ...)^2``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np


def dummy_design(codes, n_levels: Sequence[int], *,
                 interactions: bool | Sequence[tuple[int, int]] = True,
                 numeric: Mapping[int, Sequence[float]] | None = None,
                 names: Sequence[str] | None = None) -> tuple[np.ndarray, list[str]]:
    """Design matrix (n, k) and column names of integer codes (n, p). ``numeric`` maps a column
    to the value of each of its codes (e.g. ages 18..22 for codes 0..4); ``names`` names the
    columns (default ``x0``, ``x1``, ...): a dummy is ``<name>_<level>``, an interaction
    ``<a>:<b>``."""
    codes = np.asarray(codes, dtype=np.int64)
    n, p = codes.shape
    if len(n_levels) != p:
        raise ValueError(f"dummy_design: {p} columns but {len(n_levels)} level counts")
    names = [f"x{j}" for j in range(p)] if names is None else list(names)
    numeric = dict(numeric or {})
    blocks, labels = [], []
    for j, k in enumerate(n_levels):
        if j in numeric:
            values = np.asarray(numeric[j], dtype=float)
            if values.shape != (k,):
                raise ValueError(f"dummy_design: numeric values of {names[j]} need {k} entries")
            blocks.append(values[codes[:, j]][:, None])
            labels.append([names[j]])
        else:
            blocks.append((codes[:, j, None] == np.arange(1, k)).astype(float))
            labels.append([f"{names[j]}_{lev}" for lev in range(1, k)])
    pairs = list(combinations(range(p), 2)) if interactions is True else \
        list(interactions or [])
    out = [np.ones((n, 1)), *blocks]
    out_names = ["(Intercept)", *[name for block in labels for name in block]]
    for a, b in pairs:
        if not 0 <= a < b < p:
            raise ValueError(f"dummy_design: interaction {(a, b)} needs 0 <= a < b < {p}")
        out.append((blocks[a][:, None, :] * blocks[b][:, :, None]).reshape(n, -1))
        out_names += [f"{la}:{lb}" for lb in labels[b] for la in labels[a]]
    return np.concatenate(out, axis=1), out_names


def sparse_dummy_design(codes, n_levels: Sequence[int], *,
                        interactions: bool | Sequence[tuple[int, int]] = True):
    """The columns of :func:`dummy_design` (all columns categorical) as a CSR matrix, built
    from the codes without the dense matrix: row i has a 1 in the intercept, in the dummy of
    each column's level when it is not the reference, and in each interaction whose two
    levels are both non-reference."""
    from scipy import sparse

    codes = np.asarray(codes, dtype=np.int64)
    n, p = codes.shape
    if len(n_levels) != p:
        raise ValueError(f"dummy_design: {p} columns but {len(n_levels)} level counts")
    k = np.asarray(n_levels, dtype=np.int64) - 1  # dummies per column
    pairs = list(combinations(range(p), 2)) if interactions is True else \
        list(interactions or [])
    for a, b in pairs:
        if not 0 <= a < b < p:
            raise ValueError(f"dummy_design: interaction {(a, b)} needs 0 <= a < b < {p}")
    main_offset = 1 + np.r_[0, np.cumsum(k)[:-1]]
    pair_a = np.array([a for a, _ in pairs], dtype=np.int64)
    pair_b = np.array([b for _, b in pairs], dtype=np.int64)
    pair_size = k[pair_a] * k[pair_b]
    pair_offset = 1 + k.sum() + np.r_[0, np.cumsum(pair_size)[:-1]].astype(np.int64)
    # column numbers in int32 throughout (an int64 operand would promote the (n, pairs) arrays)
    main_offset, pair_offset, k32 = (a.astype(np.int32) for a in (main_offset, pair_offset, k))
    level = (codes - 1).astype(np.int32)  # −1 for the reference level
    # each row's candidate columns (intercept, dummies, interactions), −1 where it is 0
    cols = np.empty((n, 1 + p + len(pairs)), dtype=np.int32)
    cols[:, 0] = 0
    cols[:, 1:p + 1] = np.where(level >= 0, main_offset + level, -1)
    ca, cb = level[:, pair_a], level[:, pair_b]
    both = (ca >= 0) & (cb >= 0)
    # the first attribute's level varies fastest within an interaction block
    cols[:, p + 1:] = np.where(both, pair_offset + ca + k32[pair_a] * cb, -1)
    present = cols >= 0
    counts = present.sum(axis=1)
    indptr = np.r_[0, np.cumsum(counts)]
    indices = cols[present]  # row-major: each row's columns in increasing order
    width = int(1 + k.sum() + pair_size.sum())
    return sparse.csr_matrix((np.ones(indices.size), indices, indptr), shape=(n, width))


def distinct_rows(codes, n_levels):
    """np.unique(codes, axis=0) with inverse and counts, via one mixed-radix integer key per
    row when the cross-table's size fits in int64 (the same rows in the same order)."""
    codes = np.asarray(codes, dtype=np.int64)
    levels = np.asarray(n_levels, dtype=np.int64)
    if codes.shape[1] == 0:  # one empty pattern
        return codes[:1], np.zeros(codes.shape[0], dtype=np.int64), np.array([codes.shape[0]])
    if np.prod(levels.astype(float)) >= 2.0 ** 62:
        first, index, counts = row_groups(codes)
        return codes[first], index, counts
    radix = np.r_[np.cumprod(levels[::-1])[::-1][1:], 1]  # the first column most significant
    keys, index, counts = np.unique(codes @ radix, return_inverse=True, return_counts=True)
    first = np.zeros(keys.size, dtype=np.int64)
    first[index] = np.arange(codes.shape[0])
    return codes[first], index.reshape(-1), counts


def row_groups(x) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Identical rows of a 2-D array, as ``np.unique(x, axis=0, return_index=True,
    return_inverse=True)`` orders them (lexicographically, first column first) but from one
    integer key per row: each column is ranked on its own and the ranks are combined in mixed
    radix, re-ranked whenever the key would exceed 2**62. Returns (index of each group's first
    row (G,), group of each row (n,), group sizes (G,))."""
    x = np.asarray(x)
    n = x.shape[0]
    key = np.zeros(n, dtype=np.int64)
    size = 1
    for column in np.ascontiguousarray(x.reshape(n, -1).T):  # contiguous columns
        rank, levels = _small_integer_rank(column)
        if rank is None:
            _, rank = np.unique(column, return_inverse=True)
            levels = int(rank.max()) + 1 if n else 1
        if size * levels > 2**62:
            _, key = np.unique(key, return_inverse=True)
            size = int(key.max()) + 1
        key = key * levels + rank.reshape(-1)
        size *= levels
    _, first, index, counts = np.unique(key, return_index=True, return_inverse=True,
                                        return_counts=True)
    return first, index.reshape(-1), counts


def _small_integer_rank(column) -> tuple[np.ndarray | None, int]:
    """(value − min as int64, max − min + 1) of a column of integer values (integer or float
    dtype) whose range is at most max(its length, 1024): a rank that orders and equates the
    values as their dense rank from ``np.unique`` does (it may skip levels), without the sort;
    (None, 0) for any other column (non-integer, non-finite, wide or empty)."""
    n = column.shape[0]
    if n == 0 or column.dtype.kind not in "biuf":
        return None, 0
    if column.dtype.kind == "b":
        column = column.astype(np.int64)
    lo, hi = column.min(), column.max()
    if column.dtype.kind == "f":
        if not (np.isfinite(lo) and np.isfinite(hi) and -2.0**52 < lo <= hi < 2.0**52):
            return None, 0
        if not np.all(column == np.floor(column)):
            return None, 0
    levels = int(hi) - int(lo) + 1
    if levels > max(n, 1024):
        return None, 0
    return (column - lo).astype(np.int64), levels


#: :func:`collapse_batch` collapses only when a data set's distinct rows are at most this
#: share of its rows (else the fit on the collapsed rows saves too little to pay for the sort)
COLLAPSE_SHARE = 0.5


def collapse_batch(*blocks, max_share: float = COLLAPSE_SHARE):
    """Identical records of each data set of a batch merged. ``blocks`` (B, n, k_i) are the
    records' columns in groups (e.g. covariates and response), joined along the last axis
    into k = Σ k_i columns. Returns (rows (B, G, k), counts (B, G)), G the largest number of
    distinct records of a data set, shorter data sets padded with zero rows of count 0; every
    data set's rows in increasing mixed-radix key order (the first column most significant).
    None when a value is not an integer, when the key of the batch's cross-table would exceed
    2**53 (keys are formed exactly in floating point, by one matrix product), or when some
    data set keeps more than ``max_share`` of its records (collapsing pays only when records
    repeat). A fit weighting each row by its count (e.g. ``posterior_mode(..., weights=)``)
    is the fit of the records, up to the order of its sums."""
    arrays = [np.asarray(b, dtype=float) for b in blocks]
    B, n = arrays[0].shape[:2]
    if B == 0 or n == 0 or not all(np.all(a[:, :8] == np.rint(a[:, :8])) for a in arrays):
        return None  # (a first look at a few records rejects continuous data cheaply)
    # one copy, a row per column: the checks, minima and maxima run along contiguous rows
    widths = [a.shape[-1] for a in arrays]
    k = sum(widths)
    columns = np.empty((k, B * n))
    for j, a in zip(np.cumsum([0, *widths[:-1]]), arrays, strict=True):
        columns[j:j + a.shape[-1]] = np.reshape(a, (B * n, -1)).T
    if not np.all(columns == np.floor(columns)):
        return None
    lo, hi = columns.min(axis=1), columns.max(axis=1)
    span = [int(h - m) + 1 for m, h in zip(lo, hi, strict=True)]
    radix = [1] * k
    for j in range(k - 2, -1, -1):
        radix[j] = radix[j + 1] * span[j + 1]
    cells = radix[0] * span[0]
    largest = sum(int(max(abs(m), abs(h))) * r for m, h, r in zip(lo, hi, radix, strict=True))
    if (cells * B >= 2**53) or (largest + cells * B >= 2**53):
        return None
    radix_f = np.array(radix, dtype=float)
    # exact: every product and partial sum is an integer below 2**53
    key = radix_f @ columns - float(lo @ radix_f)
    key = key.astype(np.int64).reshape(B, n) + np.arange(B, dtype=np.int64)[:, None] * cells
    key = np.sort(key.ravel())
    start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    keys = key[start]
    counts = np.diff(np.r_[start, key.size])
    owner = keys // cells
    per_set = np.bincount(owner, minlength=B)
    g = int(per_set.max())
    if g > max_share * n:
        return None
    slot = np.arange(keys.size) - np.r_[0, np.cumsum(per_set)[:-1]][owner]
    cell = keys - owner * cells
    rows = np.zeros((B, g, k))
    weights = np.zeros((B, g))
    rows[owner, slot] = lo + (cell[:, None] // np.array(radix)) % np.array(span)
    weights[owner, slot] = counts
    return rows, weights
