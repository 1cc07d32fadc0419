"""Disclosure-risk metrics of released categorical records (intruder attacks and uniqueness;
e.g. Park & Ghosh §4.4; spec 001 §4, E5).

An intruder knows some key columns of a target record (demographics, say) and matches them
against the released records. Keys are integer code arrays (n, k) (any k >= 1); a key value
that matches is the same row of codes. Everything is vectorised: keys are joined to integer ids
once (``np.unique`` over rows), counts per (key, value) come from one ``bincount``.

* :func:`mode_attack_error`: the intruder infers the most frequent target value among the
  released records sharing the target's key (ties to the lowest code); a target whose key no
  released record has gets the release's overall mode (or is dropped, ``drop_unmatched``). The
  result is the error rate E[1(inferred ≠ true)] over targets, with the match rate.
* :func:`mean_attack_mae`: the intruder infers the mean of a numeric value over the matching
  released records (fallback: the overall mean); the result is E|inferred − true|. NaN values
  are missing: such targets are left out, such released records match but carry no value.
* :func:`uniqueness`: the fraction and count of released records whose key occurs exactly once
  in the release; with ``reference`` (e.g. the original data), also the fraction of released
  records whose key is unique in the reference.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class AttackResult(NamedTuple):
    value: float  # error rate (mode attack) or mean absolute error (mean attack)
    match_rate: float  # share of the scored targets with at least one matching released record
    n_targets: int  # targets scored


def _as_keys(keys) -> np.ndarray:
    keys = np.asarray(keys)
    return keys[:, None] if keys.ndim == 1 else keys


def joint_ids(*key_arrays) -> tuple[list[np.ndarray], int]:
    """Integer ids of the rows of several key arrays (n_a, k), equal rows sharing an id across
    arrays, and the number of distinct rows."""
    arrays = [_as_keys(a).astype(np.int64) for a in key_arrays]
    stacked = np.concatenate(arrays, axis=0)
    span = np.ptp(stacked, axis=0) + 1 if stacked.size else None
    if span is not None and np.prod(span.astype(float)) < 2.0**62:  # one int64 per row
        radix = np.concatenate([[1], np.cumprod(span[::-1])[:-1]])[::-1]
        _, ids = np.unique((stacked - stacked.min(axis=0)) @ radix, return_inverse=True)
    else:
        _, ids = np.unique(stacked, axis=0, return_inverse=True)
    ids = ids.reshape(-1)
    bounds = np.cumsum([0] + [a.shape[0] for a in arrays])
    return [ids[bounds[i]:bounds[i + 1]] for i in range(len(arrays))], int(ids.max(initial=-1) + 1)


def mode_attack_error(target_keys, target_values, released_keys, released_values,
                      n_levels: int, *, drop_unmatched: bool = False) -> AttackResult:
    """Error rate of the most-frequent-value attack (module docstring): ``target_keys`` (T, k)
    with true codes ``target_values`` (T,); ``released_keys`` (S, k) with codes
    ``released_values`` (S,) in 0..n_levels−1."""
    (tid, rid), n_ids = joint_ids(target_keys, released_keys)
    rv = np.asarray(released_values, dtype=np.int64)
    tv = np.asarray(target_values, dtype=np.int64)
    counts = np.bincount(rid * n_levels + rv, minlength=n_ids * n_levels).reshape(n_ids, n_levels)
    matched = counts.sum(axis=1)[tid] > 0
    overall = int(np.argmax(np.bincount(rv, minlength=n_levels)))
    inferred = np.where(matched, np.argmax(counts, axis=1)[tid], overall)  # argmax: lowest tie
    scored = matched if drop_unmatched else np.ones(tv.size, dtype=bool)
    n = int(scored.sum())
    error = float(np.mean(inferred[scored] != tv[scored])) if n else float("nan")
    return AttackResult(error, float(matched.mean()) if tv.size else float("nan"), n)


def mean_attack_mae(target_keys, target_values, released_keys, released_values, *,
                    drop_unmatched: bool = False) -> AttackResult:
    """Mean absolute error of the matching-mean attack (module docstring); values are numbers
    (e.g. ordinal bin indices), NaN for missing."""
    tv = np.asarray(target_values, dtype=float)
    rv = np.asarray(released_values, dtype=float)
    (tid, rid), n_ids = joint_ids(target_keys, released_keys)
    has = ~np.isnan(rv)
    sums = np.bincount(rid[has], weights=rv[has], minlength=n_ids)
    counts = np.bincount(rid[has], minlength=n_ids)
    matched = counts[tid] > 0
    overall = rv[has].mean() if has.any() else np.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        inferred = np.where(matched, sums[tid] / np.maximum(counts[tid], 1), overall)
    scored = ~np.isnan(tv) & (matched if drop_unmatched else True)
    n = int(scored.sum())
    mae = float(np.mean(np.abs(inferred[scored] - tv[scored]))) if n else float("nan")
    valid = ~np.isnan(tv)
    rate = float(matched[valid].mean()) if valid.any() else float("nan")
    return AttackResult(mae, rate, n)


class Uniqueness(NamedTuple):
    fraction: float  # released records whose key is unique in the release
    count: int
    unique_in_reference: float  # released records whose key is unique in the reference (or NaN)


def uniqueness(released_keys, reference_keys=None) -> Uniqueness:
    """Uniqueness of released records on their key columns (module docstring)."""
    if reference_keys is None:
        (rid,), n_ids = joint_ids(released_keys)
        ref_frac = float("nan")
    else:
        (rid, fid), n_ids = joint_ids(released_keys, reference_keys)
        ref_frac = float(np.mean(np.bincount(fid, minlength=n_ids)[rid] == 1))
    once = np.bincount(rid, minlength=n_ids)[rid] == 1
    return Uniqueness(float(once.mean()), int(once.sum()), ref_frac)
