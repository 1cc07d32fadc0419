"""DIP building blocks (spec 004 §1.2–§1.5; §7.3 required unit tests 1 and 4): G against the
Monte Carlo CDF of U + Laplace and its symmetry, continualization and the ceiling back
(discrete support, infinite lattice, mixed), F_V(a_k) = F(a_k), and the smoothed ECDF."""

import numpy as np
import pytest
from scipy import stats

from harness.errors import ConfigError
from harness.synthesizers.dip_transform import (
    ceiling_back,
    column_kind,
    continualize,
    ecdf_cdf,
    ecdf_cell,
    ecdf_knots,
    ecdf_ppf,
    take_last,
    uniform_laplace_cdf,
    uniform_laplace_sf,
)


@pytest.mark.parametrize("b", [0.1, 1.0, 5.0, 250.0])
def test_g_matches_monte_carlo_cdf_of_uniform_plus_laplace(b):
    rng = np.random.default_rng(1)
    w = rng.random(400_000) + rng.laplace(0.0, b, 400_000)
    grid = np.quantile(w, np.linspace(0.001, 0.999, 41))
    empirical = (w[:, None] <= grid).mean(axis=0)
    # DKW: sup |F_n − F| ≤ sqrt(log(2/α)/(2n)) with prob. 1 − α; α = 1e-6 gives 0.0042
    assert np.max(np.abs(uniform_laplace_cdf(grid, b) - empirical)) < 0.0042


@pytest.mark.parametrize("b", [0.01, 0.3, 1.0, 250.0])
def test_g_symmetry_monotonicity_and_survival(b):
    x = np.linspace(-3.0, 4.0, 2001)
    g = uniform_laplace_cdf(x, b)
    assert np.allclose(g + uniform_laplace_cdf(1.0 - x, b), 1.0, atol=1e-12)
    assert np.allclose(uniform_laplace_sf(x, b), 1.0 - g, atol=1e-12)
    assert np.all(np.diff(g) >= 0) and g[0] >= 0 and g[-1] <= 1
    # continuous at 0 and 1 (the three pieces meet)
    eps = 1e-9
    for knot in (0.0, 1.0):
        assert abs(uniform_laplace_cdf(knot - eps, b) - uniform_laplace_cdf(knot + eps, b)) < 1e-6
    # the survival keeps relative precision far in the upper tail, where 1 − G rounds to 0
    far = 1.0 + 30.0 * b
    exact = 0.5 * b * np.exp(-30.0) * -np.expm1(-1.0 / b)
    assert uniform_laplace_sf(far, b) == pytest.approx(exact, rel=1e-9)


def test_continualize_then_ceiling_returns_the_original_discrete_values():
    rng = np.random.default_rng(2)
    finite = column_kind("c", {"kind": "discrete", "support": [0.5, 1, 1.5, 2, 3.5, 5]})
    z = rng.choice(finite.support, size=20_000)
    v = continualize(z, finite, rng)
    assert np.all(v < z) or np.all(v <= z)
    assert np.array_equal(ceiling_back(v, finite), z)
    lattice = column_kind("c", {"kind": "discrete", "start": 0, "step": 1})
    z = rng.poisson(3.0, 20_000).astype(float)
    v = continualize(z, lattice, rng)
    assert np.all((v > z - 1) & (v <= z))
    assert np.array_equal(ceiling_back(v, lattice), z)
    # the generalized ceiling maps everything below a_1 to a_1 and above a_s to a_s (§1.7)
    assert np.array_equal(ceiling_back(np.array([-7.0, -0.2, 9.0]), finite), [0.5, 0.5, 5.0])
    assert np.array_equal(ceiling_back(np.array([-7.0, -1.0, 0.0, 0.3]), lattice),
                          [0.0, 0.0, 0.0, 1.0])


def test_continualized_cdf_agrees_with_f_at_the_support_points():
    """Lemma S1: V = Z − U(a_k − a_{k−1}) has F_V(a_k) = F(a_k), linear between (Bernoulli,
    Binomial on an unequal support)."""
    rng = np.random.default_rng(3)
    support = np.array([0.0, 1.0, 3.0, 4.0])
    probs = np.array([0.1, 0.4, 0.3, 0.2])
    kind = column_kind("c", {"kind": "discrete", "support": support.tolist()})
    z = rng.choice(support, p=probs, size=400_000)
    v = continualize(z, kind, rng)
    f = np.cumsum(probs)
    fv = (v[:, None] <= support).mean(axis=0)
    assert np.max(np.abs(fv - f)) < 0.004
    # linear inside (a_{k-1}, a_k]: the midpoint of (1, 3] holds F(1) + P(3)/2
    assert np.mean(v <= 2.0) == pytest.approx(f[1] + probs[2] / 2, abs=0.004)
    assert np.mean(v <= -0.5) == pytest.approx(probs[0] / 2, abs=0.004)  # a_0 = a_1 − 1


def test_mixed_continualization_round_trip_and_uniform_pit():
    """Eq. (5)–(6) with the unit interval (spec §1.4 resolution): 0.3·δ_0 + 0.2·δ_2 +
    0.5·Exp(1); L_0 returns the original values and F_V(V) is uniform."""
    rng = np.random.default_rng(4)
    n = 100_000
    kind = column_kind("c", {"kind": "mixed", "jumps": [0.0, 2.0]})
    part = rng.choice(3, p=[0.3, 0.2, 0.5], size=n)
    z = np.where(part == 0, 0.0, np.where(part == 1, 2.0, rng.exponential(1.0, n)))
    v = continualize(z, kind, rng)
    assert np.allclose(ceiling_back(v, kind), z)
    # atoms occupy [a_k + k − 1, a_k + k]: [−1, 0] and [2, 3]
    assert np.all((v[part == 0] > -1) & (v[part == 0] <= 0))
    assert np.all((v[part == 1] > 2) & (v[part == 1] <= 3))
    knots = ecdf_knots(v[:50_000])
    pit = ecdf_cdf(knots, v[50_000:])
    assert stats.kstest(pit, "uniform").pvalue > 1e-4


def test_smoothed_ecdf_interpolates_and_inverts():
    d = np.array([1.0, 2.0, 4.0, 8.0])
    knots = ecdf_knots(d)  # d0 = d1 − (d_m − d_1)/(m − 1) = 1 − 7/3
    assert knots[0] == pytest.approx(1 - 7 / 3)
    assert np.allclose(ecdf_cdf(knots, d), [0.25, 0.5, 0.75, 1.0])
    assert ecdf_cdf(knots, 3.0) == pytest.approx(0.5 + 0.25 * 0.5)
    assert ecdf_cdf(knots, -5.0) == 0.0 and ecdf_cdf(knots, 9.0) == 1.0
    g = np.linspace(0.001, 1.0, 999)
    assert np.allclose(ecdf_cdf(knots, ecdf_ppf(knots, g)), g)
    assert np.all(ecdf_ppf(knots, g) > knots[0]) and np.all(ecdf_ppf(knots, g) <= d[-1])
    assert ecdf_knots(d, "zero")[0] == 0.0 and ecdf_knots(d, "d1_minus_1")[0] == 0.0


@pytest.mark.parametrize("spec, match", [
    ({"kind": "ordinal"}, "kind: 'ordinal' is not allowed"),
    ({"kind": "discrete"}, "exactly one of support"),
    ({"kind": "discrete", "support": [2, 1]}, "support: give the support in increasing"),
    ({"kind": "discrete", "start": 0, "step": 0}, "step: must be"),
    ({"kind": "mixed"}, "jumps: give the jump points"),
    ({"kind": "continuous", "support": [1]}, "support: not a setting"),
])
def test_bad_column_kinds_are_one_line_config_errors(spec, match):
    with pytest.raises(ConfigError, match=match) as info:
        column_kind("columns[0]", spec)
    assert "\n" not in str(info.value) and str(info.value).startswith("columns[0]")


def test_flat_lookups_equal_numpy_per_row():
    """The flat-index gather and the sorted-order cell search give numpy's own answers row by
    row (take_along_axis; searchsorted on each row), ties and out-of-range values included."""
    rng = np.random.default_rng(8)
    knots = np.sort(rng.integers(0, 6, (3, 2, 9)).astype(float), axis=-1)  # ties in the knots
    x = rng.integers(-1, 8, (3, 2, 40)).astype(float)  # ties with the knots, values outside
    cells = ecdf_cell(knots, x)
    for r in range(3):
        for c in range(2):
            np.testing.assert_array_equal(cells[r, c], np.searchsorted(knots[r, c], x[r, c]))
    idx = rng.integers(0, 9, (3, 2, 40))
    np.testing.assert_array_equal(take_last(knots, idx), np.take_along_axis(knots, idx, -1))
    np.testing.assert_array_equal(take_last(knots[0, 0], idx[0, 0]), knots[0, 0][idx[0, 0]])
