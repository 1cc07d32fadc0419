"""SPECKS and pMSE (harness.metrics.propensity): hand cases, R 4.2.2 reference values, and the
pattern-level KS against scipy's record-level two-sample KS (loop oracle)."""

import numpy as np
import pytest
from scipy import stats

from harness.inference.design import dummy_design
from harness.metrics.propensity import (
    ks_two_groups,
    pmse_null_expectation,
    propensity_utility,
    specks,
)


def _arith_data():
    """The same arithmetic in R (i <- 0:299; a <- i %% 2; ...)."""
    i = np.arange(300)
    original = np.column_stack([i % 2, (i * 7) % 3, (i * 13) % 17 < 6]).astype(int)
    synthetic = np.column_stack([(i * 5) % 7 < 3, (i * 11) % 3, (i * 3) % 5 < 2]).astype(int)
    return original, synthetic


def test_specks_and_pmse_reproduce_r():
    # R: glm(t ~ (a + b + c)^2, binomial); ks.test(ps[t == 1], ps[t == 0]); mean((ps - .5)^2)
    original, synthetic = _arith_data()
    out = propensity_utility(original, synthetic, [2, 3, 2])
    print(f"KS {out.ks[0]:.12g} (R 0.0733333333333), pMSE {out.pmse[0]:.12g} "
          f"(R 0.00199361652858), rank {out.rank[0]} (R 10)")
    assert out.ks[0] == pytest.approx(0.0733333333333, abs=1e-10)
    assert out.pmse[0] == pytest.approx(0.00199361652858, rel=1e-8)
    assert out.rank[0] == 10 and out.converged[0]
    # Snoke et al.: E0[pMSE] = (k − 1)(1 − c)²c/N with c = 1/2, N = 600
    assert out.pmse_null[0] == pytest.approx(9 * 0.25 * 0.5 / 600)
    assert out.pmse_ratio[0] == pytest.approx(out.pmse[0] / out.pmse_null[0])


def test_synthetic_equal_to_the_original_rows_scores_zero():
    original, _ = _arith_data()
    shuffled = original[np.random.default_rng(0).permutation(300)]
    out = propensity_utility(original, np.stack([original, shuffled]), [2, 3, 2])
    assert np.all(out.ks == 0.0) and np.allclose(out.pmse, 0.0, atol=1e-20)
    assert specks(original, original, [2, 3, 2]) == 0.0


def test_pmse_hand_case_main_effects():
    # one binary attribute: original 3 zeros 1 one, synthetic 1 zero 3 ones; the main-effect
    # model is saturated, so e = 1/4 for x = 0 and 3/4 for x = 1: pMSE = (1/4)², KS = 1/2
    original = np.array([[0], [0], [0], [1]])
    synthetic = np.array([[0], [1], [1], [1]])
    out = propensity_utility(original, synthetic, [2], interactions=False)
    assert out.pmse[0] == pytest.approx(1 / 16, abs=1e-12)
    assert out.ks[0] == pytest.approx(0.5, abs=1e-12)
    assert pmse_null_expectation(2, 0.5, 8) == pytest.approx(0.25 * 0.5 / 8)


def test_pattern_level_ks_equals_record_level_ks():
    rng = np.random.default_rng(5)
    for _ in range(20):
        g = rng.integers(1, 12)
        scores = rng.choice([0.1, 0.2, 0.35, 0.5, 0.9], size=g)  # ties across rows too
        c0, c1 = rng.integers(0, 5, g), rng.integers(0, 5, g)
        c0[0] += 1
        c1[-1] += 1
        a, b = np.repeat(scores, c0), np.repeat(scores, c1)
        assert ks_two_groups(scores, c0, c1) == pytest.approx(stats.ks_2samp(a, b).statistic,
                                                              abs=1e-12)


def test_design_has_r_model_matrix_columns():
    _, names = dummy_design(np.array([[0, 0], [1, 1], [2, 2]]), [3, 3])
    # R: colnames(model.matrix(~ (a + b)^2)): a1 a2 b1 b2 a1:b1 a2:b1 a1:b2 a2:b2
    assert names == ["(Intercept)", "x0_1", "x0_2", "x1_1", "x1_2", "x0_1:x1_1", "x0_2:x1_1",
                     "x0_1:x1_2", "x0_2:x1_2"]
    # 12 binary attributes, one with 5, 14 and 6 levels: 1 + 34 + 467 = 502 columns
    levels = [2] * 12 + [5, 14, 6]
    x, _ = dummy_design(np.zeros((1, 15), int), levels)
    assert x.shape == (1, 502)


def test_design_with_numeric_column_and_chosen_interactions():
    # 14 predictors: 11 binary, age numeric (codes 0..4 = 18..22), income (14), residence (6),
    # plus one binary × binary interaction: 1 + 11 + 1 + 13 + 5 + 1 = 32 columns (spec 003 §5.5)
    levels = [2] * 11 + [5, 14, 6]
    codes = np.zeros((3, 14), int)
    codes[:, 11] = [0, 2, 4]
    codes[1, [0, 1]] = 1
    x, names = dummy_design(codes, levels, interactions=[(0, 1)], numeric={11: range(18, 23)},
                            names=[f"b{j}" for j in range(11)] + ["age", "inc", "lor"])
    assert x.shape == (3, 32) and names[12] == "age" and names[-1] == "b0_1:b1_1"
    np.testing.assert_array_equal(x[:, 12], [18, 20, 22])
    np.testing.assert_array_equal(x[:, -1], [0, 1, 0])
    with pytest.raises(ValueError, match="interaction"):
        dummy_design(codes, levels, interactions=[(1, 0)])


def test_collapsed_fit_equals_the_record_level_fit():
    # oracle: the stacked records fitted one by one, scipy's KS on the record-level scores
    from harness.inference import glm_logit

    original, synthetic = _arith_data()
    stacked = np.concatenate([original, synthetic])
    label = np.r_[np.zeros(300), np.ones(300)]
    x, _ = dummy_design(stacked, [2, 3, 2])
    e = glm_logit(x, label).fitted
    ks = stats.ks_2samp(e[label == 1], e[label == 0]).statistic
    out = propensity_utility(original, synthetic, [2, 3, 2])
    assert out.ks[0] == pytest.approx(ks, abs=1e-12)
    assert out.pmse[0] == pytest.approx(np.mean((e - 0.5) ** 2), rel=1e-9)


def test_records_impossible_in_the_original_separate():
    # synthetic records in a cell the original never has (a structural zero) get scores ≈ 1
    # (quasi-separation: R's glm stops when the deviance settles, with the a1:c1 coefficient
    # large), and KS is at least their share of the synthetic set
    original, synthetic = _arith_data()
    original = original.copy()
    original[(original[:, 0] == 1) & (original[:, 2] == 1), 2] = 0
    synthetic = synthetic.copy()
    synthetic[:30, 0], synthetic[:30, 2] = 1, 1
    out = propensity_utility(original, synthetic, [2, 3, 2])
    share = np.mean((synthetic[:, 0] == 1) & (synthetic[:, 2] == 1))
    print(f"KS {out.ks[0]:.4f}, share of impossible records {share:.4f}")
    assert out.ks[0] >= share


def test_empty_interaction_cell_is_aliased_as_in_r():
    # R: the same data with b = 2 & c = 1 emptied: b2:c1 is NA, rank 9, KS .13
    i = np.arange(300)
    a, b, c = i % 2, (i * 7) % 3, ((i * 13) % 17 < 6).astype(int)
    sa, sb, sc = ((i * 5) % 7 < 3).astype(int), (i * 11) % 3, ((i * 3) % 5 < 2).astype(int)
    c[b == 2] = 0
    sc[sb == 2] = 0
    sa[:40], sc[:40], sb[:40] = 1, 1, 0
    out = propensity_utility(np.c_[a, b, c], np.c_[sa, sb, sc], [2, 3, 2])
    assert out.rank[0] == 9 and out.converged[0]
    assert out.ks[0] == pytest.approx(0.13, abs=1e-12)
    assert out.pmse[0] == pytest.approx(0.0100060223981, rel=1e-8)


def test_metric_rows_per_replicate_and_set():
    from harness.metrics.propensity import propensity_metrics

    original, synthetic = _arith_data()
    rows = propensity_metrics(np.stack([original, synthetic]),
                              np.stack([np.stack([synthetic, original]),
                                        np.stack([original, original])]), [2, 3, 2])
    assert rows["specks"].shape == (2, 2)
    # replicate 1: (synthetic, a copy of the original); replicate 2: groups swapped (KS is
    # symmetric), twice
    np.testing.assert_allclose(rows["specks"], [[0.0733333333333, 0.0],
                                                [0.0733333333333, 0.0733333333333]])
    assert rows["propensity_converged"].all()
