"""Histogram library: Scott's rule over public bounds, grouped bin counts against
np.histogramdd, sampling frequencies and within-bin uniformity, sanitized probabilities."""

import numpy as np
import pytest
from scipy import stats

from harness.histograms import BinGrid, histogram_probabilities, scott_bins


def test_scott_bins_one_and_two_dimensions():
    # 1-D: h = 3.5 * 1 * 40^(-1/3) = 1.0235; the asymmetric box [-3, 4] has width 7 -> 7 bins
    assert scott_bins([1.0], 40, [-3.0], [4.0]).tolist() == [7]
    # n = 1000: h = 0.35, 7 / 0.35 = 20 (the paper's median 21 comes from clamped data, S < 1)
    assert scott_bins([0.99], 1000, [-3.0], [4.0]).tolist() == [21]
    # 2-D: h_j = 3.5 * S_j * n^(-1/4); a GLOM cell of 41 records, box width 8: 6 x 6 = 36 bins
    assert scott_bins([1.0, 1.0], 41, [0, 0], [8, 8]).tolist() == [6, 6]
    assert scott_bins([1.0, 2.0], 1000, [0, 0], [8, 8]).tolist() == [13, 7]
    # batched, with degenerate groups (n < 2, sd = 0) getting one bin and a cap
    k = scott_bins(np.array([[1.0], [0.0], [1.0]]), np.array([40, 40, 1]), [-3.0], [4.0])
    assert k.ravel().tolist() == [7, 1, 1]
    assert scott_bins([0.01], 1000, [0.0], [1.0], max_bins=50).tolist() == [50]


def _grid(rng):
    lower = np.array([[0.0, 0.0], [-1.0, 2.0], [5.0, 5.0]])
    upper = lower + np.array([[1.0, 1.0], [2.0, 4.0], [3.0, 1.0]])
    bins = np.array([[[2, 3], [4, 4], [1, 5]], [[3, 3], [2, 2], [5, 1]]])  # (R=2, G=3, d=2)
    return BinGrid(lower, upper, bins)


def test_counts_match_histogramdd_per_group():
    rng = np.random.default_rng(3)
    grid = _grid(rng)
    groups = rng.integers(0, 3, size=(2, 400))
    x = grid.lower[0][groups] + rng.random((2, 400, 2)) * (grid.upper[0] - grid.lower[0])[groups]
    counts = grid.counts(x, groups)
    assert counts.shape == (2, 3, grid.size) and grid.size == 16
    for r in range(2):
        for g in range(3):
            edges = [np.linspace(grid.lower[r, g, j], grid.upper[r, g, j], grid.bins[r, g, j] + 1)
                     for j in range(2)]
            ref, _ = np.histogramdd(x[r][groups[r] == g], bins=edges)
            total = grid.total[r, g]
            np.testing.assert_array_equal(counts[r, g, :total], ref.ravel())
            assert counts[r, g, total:].sum() == 0
    assert counts.sum() == 800


def test_sampling_frequencies_and_uniformity_within_bins():
    rng = np.random.default_rng(4)
    grid = _grid(rng)
    valid = grid.valid()
    raw = rng.random(valid.shape) * valid
    raw[0, 1, 3] = 0.0  # a valid bin with zero probability is never drawn
    probs = histogram_probabilities(raw, valid)
    n = 60_000
    groups = np.tile(np.repeat(np.arange(3), n // 3), (2, 1))
    x = grid.sample(probs, groups, rng)
    assert x.shape == (2, n, 2)
    lo = grid.lower[0][groups[0]]
    hi = grid.upper[0][groups[0]]
    assert np.all((x >= lo) & (x <= hi))
    back = grid.counts(x, groups)
    for r in range(2):
        for g in range(3):
            t = grid.total[r, g]
            expected = probs[r, g, :t] * n / 3
            keep = expected > 0
            assert back[r, g, :t][~keep].sum() == 0
            chi2 = ((back[r, g, :t][keep] - expected[keep]) ** 2 / expected[keep]).sum()
            assert stats.chi2.sf(chi2, keep.sum() - 1) > 1e-4
    # within a bin the point is uniform: position inside the bin, scaled to [0, 1)
    width = (hi - lo) / grid.bins[0][groups[0]]
    frac = ((x[0] - lo) / width) % 1.0
    assert stats.kstest(frac[:, 0], "uniform").pvalue > 1e-4
    assert stats.kstest(frac[:, 1], "uniform").pvalue > 1e-4


def test_single_group_without_labels():
    rng = np.random.default_rng(5)
    grid = BinGrid(np.array([[0.0]]), np.array([[7.0]]), np.array([[7]]))
    probs = np.zeros((1, 7))
    probs[0, 2] = 1.0
    x = grid.sample(probs[None], None, rng, n=100)
    assert x.shape == (1, 100, 1) and np.all((x >= 2) & (x < 3))
    with pytest.raises(ValueError, match="needs the number of records"):
        grid.sample(probs[None], None, rng)


def test_histogram_probabilities_floor_and_uniform_fallback():
    valid = np.array([[True, True, True, False], [True, True, False, False]])
    noisy = np.array([[2.0, -1.0, 6.0, 9.0], [-3.0, -0.5, 4.0, 1.0]])
    p = histogram_probabilities(noisy, valid)
    np.testing.assert_allclose(p, [[0.25, 0.0, 0.75, 0.0], [0.5, 0.5, 0.0, 0.0]])


def test_bad_grids_are_rejected():
    with pytest.raises(ValueError, match="at least one bin"):
        BinGrid(np.zeros((1, 1)), np.ones((1, 1)), np.zeros((1, 1)))
    with pytest.raises(ValueError, match="upper > lower"):
        BinGrid(np.ones((1, 1)), np.ones((1, 1)), np.ones((1, 1)))
