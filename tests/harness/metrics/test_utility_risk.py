"""Utility and risk metrics (harness/metrics/utility.py, risk.py) against brute-force loops on
small random data, plus the edge cases their docstrings promise."""

import warnings
from collections import Counter

import numpy as np
import pytest

from harness.inference.combine import combine
from harness.metrics.risk import mean_attack_mae, mode_attack_error, uniqueness
from harness.metrics.utility import (
    conditional_distance,
    marginal_distance,
    mi_combine,
    regression_distance,
)

SEEDS = range(12)


def brute_marginal(o, s, k):
    return sum((list(s).count(v) / len(s) - list(o).count(v) / len(o)) ** 2 for v in range(k))


def brute_conditional(oi, oj, si, sj, ki, kj, skip):
    total = 0.0
    for xj in range(kj):
        no = sum(1 for b in oj if b == xj)
        ns = sum(1 for b in sj if b == xj)
        if skip and (no == 0 or ns == 0):
            continue
        for xi in range(ki):
            po = sum(1 for a, b in zip(oi, oj, strict=True) if a == xi and b == xj) / no if no \
                else 0.0
            ps = sum(1 for a, b in zip(si, sj, strict=True) if a == xi and b == xj) / ns if ns \
                else 0.0
            total += (ps - po) ** 2
    return total


@pytest.mark.parametrize("seed", SEEDS)
def test_marginal_distance_matches_loop(seed):
    g = np.random.default_rng(seed)
    k = int(g.integers(2, 7))
    o = g.integers(0, k - 1, 40)  # the top level is absent from the original
    s = g.integers(0, k, (3, 25))  # three synthetic sets at once
    got = marginal_distance(o, s, k)
    assert got.shape == (3,)
    assert np.allclose(got, [brute_marginal(o, s[r], k) for r in range(3)])
    assert marginal_distance(o, o, k) == 0


@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_conditional_distance_matches_loop(seed, skip):
    g = np.random.default_rng(seed)
    ki, kj = int(g.integers(2, 5)), int(g.integers(2, 6))
    oi, oj = g.integers(0, ki, 30), g.integers(0, kj - 1, 30)  # level kj-1 absent from o
    si, sj = g.integers(0, ki, (2, 15)), g.integers(0, kj, (2, 15))
    got = conditional_distance(oi, oj, si, sj, ki, kj, skip_missing=skip)
    want = [brute_conditional(oi, oj, si[r], sj[r], ki, kj, skip) for r in range(2)]
    assert np.allclose(got, want)


def test_conditional_distance_penalises_a_missing_level():
    o_i, o_j = np.array([0, 1, 0, 1]), np.array([0, 0, 1, 1])
    s_i, s_j = np.array([0, 1]), np.array([0, 0])  # level 1 of j absent from the release
    # absent level: zero vector against (0.5, 0.5) -> 0.5; present level matches exactly
    assert conditional_distance(o_i, o_j, s_i, s_j, 2, 2) == pytest.approx(0.5)
    assert conditional_distance(o_i, o_j, s_i, s_j, 2, 2, skip_missing=True) == 0


@pytest.mark.parametrize("seed", SEEDS)
def test_regression_distance_matches_loop(seed):
    g = np.random.default_rng(seed)
    bo, bs = g.normal(size=6), g.normal(size=(4, 6))
    for intercept in (True, False):
        want = [sum(abs(bs[r, k] - bo[k]) / abs(bo[k]) for k in range(6) if intercept or k)
                for r in range(4)]
        assert np.allclose(regression_distance(bs, bo, include_intercept=intercept), want)


def test_regression_distance_skips_tiny_original_coefficients_with_a_warning():
    bo, bs = np.array([1.0, 1e-9, -2.0]), np.array([2.0, 5.0, -1.0])
    with pytest.warns(RuntimeWarning, match="1 original coefficient"):
        assert regression_distance(bs, bo) == pytest.approx(1.0 + 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert regression_distance(bs[::2], bo[::2], include_intercept=False) == \
            pytest.approx(0.5)


def test_mi_combine_formulas_and_agreement_with_the_full_rule():
    g = np.random.default_rng(0)
    q, v = g.normal(size=(5, 3)), g.random((5, 3))
    out = mi_combine(q, v)
    qbar = [sum(q[k, e] for k in range(5)) / 5 for e in range(3)]
    b = [sum((q[k, e] - qbar[e]) ** 2 for k in range(5)) / 4 for e in range(3)]
    vbar = [sum(v[k, e] for k in range(5)) / 5 for e in range(3)]
    assert np.allclose(out.qbar, qbar) and np.allclose(out.b, b) and np.allclose(out.vbar, vbar)
    assert np.allclose(out.t_s, [1.2 * b[e] - vbar[e] for e in range(3)])
    full = combine(q, v, rule="full")  # same T where the full rule needs no fallback
    positive = out.t_s > 0
    assert np.allclose(full.variance[positive], out.t_s[positive])
    assert (mi_combine(np.zeros((3, 1)), np.ones((3, 1))).t_s < 0).all()  # negative allowed
    with pytest.raises(ValueError):
        mi_combine(q[:1], v[:1])


def brute_mode_attack(tk, tv, rk, rv, k, drop):
    overall = min(range(k), key=lambda c: (-list(rv).count(c), c))
    errors, matched = [], []
    for key, true in zip(map(tuple, tk), tv, strict=True):
        vals = [v for rkey, v in zip(map(tuple, rk), rv, strict=True) if rkey == key]
        matched.append(bool(vals))
        if not vals and drop:
            continue
        if vals:
            c = Counter(vals)
            guess = min(c, key=lambda x: (-c[x], x))
        else:
            guess = overall
        errors.append(guess != true)
    return np.mean(errors) if errors else np.nan, np.mean(matched), len(errors)


@pytest.mark.parametrize("drop", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_mode_attack_matches_loop(seed, drop):
    g = np.random.default_rng(seed)
    k = 4
    tk, tv = g.integers(0, 3, (60, 2)), g.integers(0, k, 60)
    rk, rv = g.integers(0, 3, (25, 2)), g.integers(0, k, 25)  # few records: ties, misses
    got = mode_attack_error(tk, tv, rk, rv, k, drop_unmatched=drop)
    want = brute_mode_attack(tk, tv, rk, rv, k, drop)
    assert got.value == pytest.approx(want[0]) and got.match_rate == pytest.approx(want[1])
    assert got.n_targets == want[2]


def test_mode_attack_ties_go_to_the_lowest_code_and_fallback_to_the_overall_mode():
    rk = np.array([[0], [0], [1], [1], [1]])
    rv = np.array([2, 1, 3, 3, 0])
    res = mode_attack_error(np.array([[0], [5]]), np.array([1, 3]), rk, rv, 4)
    assert res.value == 0 and res.match_rate == 0.5  # tie {1, 2} -> 1; no match -> mode 3


def brute_mean_attack(tk, tv, rk, rv, drop):
    valid = [v for v in rv if not np.isnan(v)]
    overall = sum(valid) / len(valid)
    errs, matched = [], []
    for key, true in zip(map(tuple, tk), tv, strict=True):
        if np.isnan(true):
            continue
        vals = [v for rkey, v in zip(map(tuple, rk), rv, strict=True)
                if rkey == key and not np.isnan(v)]
        matched.append(bool(vals))
        if not vals and drop:
            continue
        errs.append(abs((sum(vals) / len(vals) if vals else overall) - true))
    return np.mean(errs), np.mean(matched), len(errs)


@pytest.mark.parametrize("drop", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_mean_attack_matches_loop(seed, drop):
    g = np.random.default_rng(seed)
    tk, tv = g.integers(0, 3, (50, 3)), g.integers(1, 25, 50).astype(float)
    rk, rv = g.integers(0, 3, (40, 3)), g.integers(1, 25, 40).astype(float)
    tv[::7] = np.nan  # missing target values are left out
    rv[::5] = np.nan  # missing released values carry no value
    got = mean_attack_mae(tk, tv, rk, rv, drop_unmatched=drop)
    want = brute_mean_attack(tk, tv, rk, rv, drop)
    assert got.value == pytest.approx(want[0]) and got.match_rate == pytest.approx(want[1])
    assert got.n_targets == want[2]


@pytest.mark.parametrize("seed", SEEDS)
def test_uniqueness_matches_loop(seed):
    g = np.random.default_rng(seed)
    rel, ref = g.integers(0, 3, (30, 3)), g.integers(0, 3, (60, 3))
    got = uniqueness(rel, ref)
    rel_t, ref_t = list(map(tuple, rel)), list(map(tuple, ref))
    once = [rel_t.count(r) == 1 for r in rel_t]
    assert got.count == sum(once) and got.fraction == pytest.approx(np.mean(once))
    assert got.unique_in_reference == pytest.approx(np.mean([ref_t.count(r) == 1
                                                             for r in rel_t]))
    assert np.isnan(uniqueness(rel).unique_in_reference)
    assert uniqueness(np.array([1, 1, 2])).count == 1  # a 1-D key column


def test_joint_ids_match_row_identity_for_any_key_range():
    """Rows get one id per distinct row, shared across arrays, whatever the keys' offsets and
    spans (the fast mixed-radix path and the row-wise fallback for huge spans)."""
    from harness.metrics.risk import joint_ids

    rng = np.random.default_rng(5)
    for low, high in ((0, 3), (5, 8), (-4, 2), (0, 2**40)):
        a = rng.integers(low, high, size=(300, 3))
        b = np.concatenate([a[:50], rng.integers(low, high, size=(80, 3))])
        (ia, ib), n = joint_ids(a, b)
        rows = [tuple(r) for r in np.concatenate([a, b])]
        ids = np.concatenate([ia, ib])
        assert n == len(set(rows))
        first = {}
        for r, i in zip(rows, ids, strict=True):
            assert first.setdefault(r, i) == i  # equal rows, equal ids
        assert len(first) == len(set(first.values()))  # distinct rows, distinct ids
