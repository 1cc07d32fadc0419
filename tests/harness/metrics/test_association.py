"""Pairwise χ² tests, D2 pooling and consistency (harness.metrics.association): R's
``chisq.test`` values, a record-level loop oracle (scipy's chi2_contingency per pair and set),
the pooling of constructed tables, and hand-counted consistency rates and cross-tabs."""

import numpy as np
import pytest
from scipy import stats

from harness.inference import d2_test
from harness.metrics.association import (
    chi2_pvalues,
    chi2_statistic,
    consistency_rate,
    pairwise_chi2,
    pooled_pvalues,
    pvalue_crosstab,
)


def test_chi2_matches_r_chisq_test():
    # R: chisq.test(matrix(c(12, 5, 3, 9), 2)) (Yates) and a 2 × 3 table (no correction)
    s, df = chi2_statistic(np.array([[12, 3], [5, 9]]))
    assert df == 1 and s == pytest.approx(4.17145774977, abs=1e-10)
    assert chi2_pvalues(s, df) == pytest.approx(0.0411104141943, abs=1e-12)
    s, df = chi2_statistic(np.array([[10, 6, 8], [4, 2, 7]]))
    assert df == 2 and s == pytest.approx(1.50044261294, abs=1e-10)


def test_empty_rows_and_columns_are_dropped():
    # a 3 × 3 table with an empty row and column is the 2 × 2 table, Yates included
    t = np.zeros((3, 3))
    t[np.ix_([0, 2], [1, 2])] = [[12, 3], [5, 9]]
    s, df = chi2_statistic(t)
    assert df == 1 and s == pytest.approx(4.17145774977, abs=1e-10)
    s, df = chi2_statistic(np.array([[4, 0], [7, 0]]))  # one live column: nothing to test
    assert df == 0 and s == 0 and chi2_pvalues(s, df) == 1.0


def _oracle(codes, n_levels):
    out = []
    p = codes.shape[1]
    for a in range(p):
        for b in range(a + 1, p):
            t = np.zeros((n_levels[a], n_levels[b]))
            for r in codes:
                t[r[a], r[b]] += 1
            t = t[t.sum(1) > 0][:, t.sum(0) > 0]
            if min(t.shape) < 2:
                out.append((0.0, 0))
                continue
            res = stats.chi2_contingency(t, correction=True)
            out.append((res.statistic, res.dof))
    return np.array(out)


def test_vectorised_pairs_and_sets_equal_the_record_level_loop():
    rng = np.random.default_rng(2)
    levels = [2, 3, 4, 2]
    codes = np.stack([rng.integers(0, k, size=(3, 60)) for k in levels], axis=-1)
    codes[1, :, 2] = np.minimum(codes[1, :, 2], 1)  # a set with empty levels
    stat, df = pairwise_chi2(codes, levels)
    assert stat.shape == (3, 6)
    for j in range(3):
        ref = _oracle(codes[j], levels)
        np.testing.assert_allclose(stat[j], ref[:, 0], rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(df[j], ref[:, 1])


def test_pooling_constructed_2x2_tables():
    # five synthetic 2 × 2 tables: D2 of their Yates statistics on k = 1 df
    tables = np.array([[[12, 3], [5, 9]], [[10, 5], [6, 8]], [[14, 2], [6, 7]],
                       [[9, 6], [7, 7]], [[11, 4], [4, 10]]])
    d = np.array([chi2_statistic(t)[0] for t in tables])
    p = pooled_pvalues(d[:, None], np.array([1]))
    assert p.shape == (1,) and p[0] == pytest.approx(d2_test(d, 1).pvalue, rel=1e-12)
    # by hand: r2 = (1 + 1/m) Var(√d), D2 = (d̄/k − (m+1)/(m−1) r2)/(1 + r2), F(1, ν2)
    m = 5
    r2 = (1 + 1 / m) * np.var(np.sqrt(d), ddof=1)
    stat = (d.mean() - (m + 1) / (m - 1) * r2) / (1 + r2)
    nu = (m - 1) * (1 + 1 / r2) ** 2
    print(f"d {d.round(4)}, D2 {stat:.5f}, nu {nu:.3f}, p {p[0]:.5f}")
    assert p[0] == pytest.approx(stats.f.sf(stat, 1, nu), rel=1e-12)
    # k = 0 (a degenerate original table) gives p = 1; one set gives its own χ² p-value
    assert pooled_pvalues(np.c_[d, d], np.array([1, 0]))[1] == 1.0
    assert pooled_pvalues(d[:1, None], [1])[0] == pytest.approx(0.0411104141943, abs=1e-12)


def test_consistency_rate_and_crosstab_by_hand():
    po = np.array([0.001, 0.03, 0.07, 0.5, 0.009, 0.2])
    ps = np.array([0.004, 0.2, 0.08, 0.04, 0.5, 0.3])
    # α = .01: all agree but test 5 → 5/6; α = .05: tests 1, 3, 6 → 3/6; α = .10: 1, 3, 6
    rates = consistency_rate(po, ps, [0.01, 0.05, 0.10])
    np.testing.assert_allclose(rates, [5 / 6, 3 / 6, 3 / 6])
    tab = pvalue_crosstab(po, ps)
    expected = np.zeros((4, 4), int)
    for i, j in [(0, 0), (1, 3), (2, 2), (3, 1), (0, 3), (3, 3)]:
        expected[i, j] += 1
    np.testing.assert_array_equal(tab, expected)
    assert np.trace(tab) == 3
    # boundaries: p = .01 is in the first category, .05 in the second
    np.testing.assert_array_equal(pvalue_crosstab([0.01, 0.05], [0.05, 0.1]).nonzero(),
                                  ([0, 1], [1, 2]))


def test_chi2_consistency_of_copies_and_of_noise():
    from harness.metrics.association import chi2_consistency

    rng = np.random.default_rng(8)
    levels = [2, 3, 2, 4]
    n = 400
    z = rng.integers(0, 2, n)  # a common cause: every pair is associated
    orig = np.column_stack([(z + (rng.random(n) < 0.2)) % k for k in levels])
    noise = np.stack([np.column_stack([rng.integers(0, k, n) for k in levels])
                      for _ in range(3)])
    res = chi2_consistency(orig[None], np.stack([np.stack([orig] * 3), noise]),
                           levels, [0.01, 0.05, 0.10])
    assert res.rates.shape == (2, 3) and res.crosstab.shape == (2, 4, 4)
    # copies: d identical over the sets, r2 = 0, the χ²_k limit on d̄ = d: p_syn = p_orig
    np.testing.assert_allclose(res.p_synthetic[0], res.p_original[0], rtol=1e-9)
    np.testing.assert_array_equal(res.rates[0], 1.0)
    assert (res.p_original[0] < 0.01).all()  # all 6 pairs associated in the original
    assert res.rates[1, 0] < 0.5 and res.crosstab[1].sum() == 6


#: spec 003 §7.4 (appendix Tables 4 and 8): cross-tabs of p-value categories, original (rows)
#: by synthetic (columns), and the consistency rates Table 3 prints for the same cells
APPENDIX = {
    "laplace_-2": ([[5, 5, 0, 79], [0, 0, 0, 1], [0, 2, 0, 2], [1, 0, 0, 10]],
                   (.190, .210, .210)),
    "laplace_-1": ([[4, 6, 0, 79], [0, 0, 0, 1], [0, 2, 0, 2], [1, 0, 0, 10]],
                   (.181, .210, .210)),
    "steps2_-1": ([[1, 2, 0, 86], [0, 0, 0, 1], [0, 0, 0, 4], [0, 0, 0, 11]],
                  (.162, .171, .133)),
}


@pytest.mark.parametrize("key", sorted(APPENDIX))
def test_rates_from_the_appendix_crosstabs_equal_table_3(key):
    tab, printed = APPENDIX[key]
    mids = np.array([0.005, 0.03, 0.07, 0.5])  # one p-value inside each category
    rows, cols = np.nonzero(np.asarray(tab))
    counts = np.asarray(tab)[rows, cols]
    po, ps = np.repeat(mids[rows], counts), np.repeat(mids[cols], counts)
    assert po.size == 105
    np.testing.assert_array_equal(pvalue_crosstab(po, ps), tab)
    rates = consistency_rate(po, ps, [0.01, 0.05, 0.10])
    print(key, "ours", rates.round(3), "paper", printed)
    np.testing.assert_allclose(rates.round(3), printed)
