import numpy as np
import pytest

from harness.privacy.postprocess import (
    clamp,
    floor_at_zero,
    largest_remainder_round,
    reviewer_bounds,
)

# ---------------------------------------------------------------- largest_remainder_round


@pytest.mark.parametrize("k", [1, 2, 3, 7, 25])
def test_largest_remainder_sums_exactly_and_stays_within_one(k):
    rng = np.random.default_rng(k)
    r, m = 50, 8
    w = rng.exponential(size=(r, m, k)) * rng.integers(0, 2, size=(r, m, k))  # some zeros
    w[0, 0] = 0.0  # an all-zero row
    w[1, 1] *= 1e-300  # tiny but positive weights
    w[2, 2] *= 1e300  # huge weights
    total = rng.integers(0, 1000, size=(r, m))
    counts = largest_remainder_round(w, total)
    assert counts.shape == (r, m, k)
    assert np.issubdtype(counts.dtype, np.integer)
    assert np.all(counts >= 0)
    np.testing.assert_array_equal(counts.sum(axis=-1), total)
    s = w.sum(axis=-1, keepdims=True)
    share = np.where(s > 0, w / np.where(s > 0, s, 1.0), 1.0 / k)
    exact = share * total[..., None]
    assert np.all(np.abs(counts - exact) < 1)
    # a cell with zero weight in a row with positive weight never receives a unit
    zero_cell = (w == 0) & (s > 0)
    assert np.all(counts[zero_cell] == 0)


def test_largest_remainder_many_random_rows_property():
    rng = np.random.default_rng(2024)
    for _ in range(200):
        k = int(rng.integers(1, 12))
        w = rng.dirichlet(np.full(k, 0.5), size=int(rng.integers(1, 6)))
        total = int(rng.integers(0, 10_000))
        counts = largest_remainder_round(w, total)
        assert np.all(counts.sum(axis=-1) == total)
        exact = w / w.sum(axis=-1, keepdims=True) * total
        assert np.all(np.abs(counts - exact) < 1)
        # largest remainder: every cell that got a leftover unit has a fractional part at least
        # as large as every cell that did not
        frac = exact - np.floor(exact)
        got = counts > np.floor(exact)
        for row in range(w.shape[0]):
            if got[row].any() and (~got[row]).any():
                assert frac[row][got[row]].min() >= frac[row][~got[row]].max() - 1e-9


def test_largest_remainder_known_example():
    # exact shares 3.5, 2.1, 1.4: floors 3, 2, 1 and the leftover unit goes to the .5
    np.testing.assert_array_equal(largest_remainder_round(np.array([0.5, 0.3, 0.2]), 7), [4, 2, 1])
    # Hamilton apportionment of 10 seats to votes 43/29/28 (shares 4.3, 2.9, 2.8)
    np.testing.assert_array_equal(largest_remainder_round(np.array([43, 29, 28]), 10), [4, 3, 3])


def test_largest_remainder_all_zero_rows_are_uniform():
    out = largest_remainder_round(np.zeros((2, 4)), np.array([8, 10]))
    np.testing.assert_array_equal(out, [[2, 2, 2, 2], [3, 3, 2, 2]])


def test_largest_remainder_ties_go_to_lower_index():
    w = np.ones(3)
    np.testing.assert_array_equal(largest_remainder_round(w, 1), [1, 0, 0])
    np.testing.assert_array_equal(largest_remainder_round(w, 2), [1, 1, 0])
    np.testing.assert_array_equal(largest_remainder_round(w, 4), [2, 1, 1])
    np.testing.assert_array_equal(largest_remainder_round(np.array([0.0, 1.0, 0.0, 1.0]), 1),
                                  [0, 1, 0, 0])


def test_largest_remainder_total_broadcasts_over_leading_axes():
    w = np.ones((3, 2, 2))
    total = np.array([[1], [2], [3]])  # broadcast against (3, 2)
    out = largest_remainder_round(w, total)
    np.testing.assert_array_equal(out.sum(axis=-1), np.broadcast_to(total, (3, 2)))


@pytest.mark.parametrize("bad", [[1.0, -0.1, 2.0], [1.0, np.nan], [np.inf, 1.0]])
def test_largest_remainder_rejects_negative_or_non_finite_weights(bad):
    with pytest.raises(ValueError):
        largest_remainder_round(np.array(bad), 5)


# ---------------------------------------------------------------- clamp / floor / bounds


def test_clamp():
    v = np.array([-3.0, 0.0, 0.5, 1.0, 7.0])
    np.testing.assert_array_equal(clamp(v, 0.0, 1.0), [0.0, 0.0, 0.5, 1.0, 1.0])
    # per-element bounds broadcast
    out = clamp(np.array([[5.0, -5.0], [0.5, 0.5]]), np.array([0.0, -1.0]), np.array([1.0, 2.0]))
    np.testing.assert_array_equal(out, [[1.0, -1.0], [0.5, 0.5]])


def test_floor_at_zero():
    v = np.array([-2.5, -0.0, 0.0, 3.25])
    out = floor_at_zero(v)
    np.testing.assert_array_equal(out, [0.0, 0.0, 0.0, 3.25])
    assert v[0] == -2.5  # input not modified


def test_reviewer_bounds():
    lo, hi = reviewer_bounds(0.5, 2.0, np.array([10, 20]))
    assert lo == -0.5
    np.testing.assert_array_equal(hi, [12.0, 22.0])
    lo, hi = reviewer_bounds(1, 1, 30)
    assert (lo, float(hi)) == (-1.0, 31.0)
    # the bounds keep both Beta posterior parameters a + n1 and b + n - n1 non-negative
    a, b, n = 0.5, 2.0, 10
    lo, hi = reviewer_bounds(a, b, n)
    assert a + lo == 0 and b + n - hi == 0
