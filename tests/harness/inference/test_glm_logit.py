"""The R-glm-like logistic fit (harness.inference.glm_logit) against statsmodels on well-behaved
data and against R 4.2.2's ``glm(family = binomial)`` (numbers printed by R, 12 digits) under
quasi-complete separation, aliasing and complete separation."""

import numpy as np
import pytest
import statsmodels.api as sm

from harness.errors import ConfigError
from harness.inference.design import row_groups
from harness.inference.glm_logit import GlmControl, collapse_rows, glm_logit


def _well_behaved(n=1500, seed=11):
    rng = np.random.default_rng(seed)
    x = np.column_stack([np.ones(n), rng.normal(size=(n, 3)), rng.integers(0, 2, n)])
    beta = np.array([-0.5, 1.0, -0.5, 0.25, 0.8])
    y = (rng.random(n) < 1 / (1 + np.exp(-x @ beta))).astype(float)
    return x, y


def test_matches_statsmodels_glm_on_well_behaved_data():
    x, y = _well_behaved()
    ours = glm_logit(x, y)
    ref = sm.GLM(y, x, family=sm.families.Binomial()).fit(tol=1e-12)
    print("coef", ours.coef, ref.params, "\nse", ours.bse, ref.bse)
    assert ours.converged and ours.rank == 5 and not ours.warnings
    np.testing.assert_allclose(ours.coef, ref.params, atol=1e-6)
    np.testing.assert_allclose(ours.bse, ref.bse, atol=1e-6)
    assert ours.deviance == pytest.approx(ref.deviance, abs=1e-6)
    np.testing.assert_allclose(ours.conf_int(), ref.conf_int(), atol=1e-5)


def _did_like():
    """A small difference-in-differences design whose outcome is 0 whenever reg = 0 (as voting
    needs registration), the same arithmetic in R: i <- 0:799; reg <- i %% 2; ..."""
    i = np.arange(800)
    reg, pre = i % 2, (i // 2) % 2
    age, inc = 18 + (i // 4) % 5, (i // 20) % 4
    u = ((i * 7919) % 101) / 101
    y = ((reg == 1) & (u < 0.35 + 0.2 * pre + 0.03 * (age - 20) + 0.1 * (inc == 2)))
    return i, reg, pre, age, inc, y.astype(float)


SOLVERS = pytest.mark.parametrize("solver", ["qr", "sparse"])


@SOLVERS
def test_quasi_separation_reproduces_r(solver):
    # R: glm(voted ~ reg + pre + age + inc + pre:reg, family = binomial)
    _, reg, pre, age, inc, y = _did_like()
    x = np.column_stack([np.ones(800), reg, pre, age, inc == 1, inc == 2, inc == 3,
                         pre * reg]).astype(float)
    fit = glm_logit(x, y, control=GlmControl(solver=solver))
    r_coef = [-22.5418871133, 19.0891885952, 3.10784382595e-09, 0.142025984881,
              0.042331266339, 0.336845238239, 0.0845331442535, 0.802979255355]
    r_se = [756.765701306, 756.764244081, 1070.22623686, 0.0729507775783, 0.290979337425,
            0.290878570155, 0.29078979518, 1070.22625664]
    print("ours", fit.coef, fit.bse, "\nR   ", r_coef, r_se)
    assert fit.iterations == 18 and fit.converged  # R: iter 18, converged TRUE
    assert fit.deviance == pytest.approx(532.92964795, abs=1e-6)
    np.testing.assert_allclose(fit.coef, r_coef, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(fit.bse, r_se, rtol=1e-6)
    # the fingerprint of spec 003 §5.5: prereg and prereg × reg share one huge SE
    assert fit.bse[2] == pytest.approx(fit.bse[7], rel=1e-6) and fit.bse[2] > 1000


@SOLVERS
def test_aliased_columns_are_na_as_in_r(solver):
    # R: glm(voted ~ age + reg + reg2 + inc + z) with reg2 = reg and z = 0: NA for reg2 and z
    _, reg, _, age, inc, y = _did_like()
    x = np.column_stack([np.ones(800), age, reg, reg, inc == 1, inc == 2, inc == 3,
                         0 * age]).astype(float)
    control = GlmControl(solver=solver)
    fit = glm_logit(x, y, control=control)
    r_coef = [-22.4256042521, 0.136519246216, 19.4926872553, np.nan, 0.0407003059366,
              0.323793230308, 0.0812709146197, np.nan]
    print("ours", fit.coef, "\nR   ", r_coef)
    assert fit.aliased.tolist() == [False, False, False, True, False, False, False, True]
    assert fit.rank == 6 and fit.iterations == 18 and fit.converged
    np.testing.assert_allclose(fit.coef, r_coef, rtol=1e-6)
    assert np.isnan(fit.bse[[3, 7]]).all() and np.isnan(fit.cov[3]).all()
    # dqrdc2's in-order rule: a column spanned by earlier ones is set aside, so with
    # "income > 0" placed before the income dummies, the last dummy (= it minus the others) goes
    some = (inc > 0).astype(float)
    order = glm_logit(np.column_stack([x[:, :3], some, x[:, 4:7]]), y, control=control)
    assert order.aliased.tolist() == [False] * 6 + [True]


@SOLVERS
def test_complete_separation_hits_the_iteration_cap_as_r(solver):
    # R: x <- ((i * 37) %% 800 - 399.5)/100; y <- x > 0; glm(y ~ x): 25 iterations, not
    # converged, "fitted probabilities numerically 0 or 1 occurred"
    i = np.arange(800)
    x = ((i * 37) % 800 - 399.5) / 100
    fit = glm_logit(np.column_stack([np.ones(800), x]), (x > 0).astype(float),
                    control=GlmControl(solver=solver))
    print("ours", fit.coef, fit.bse, "R slope 2307.5868125, SE 137.3817277 27466.5248897")
    assert fit.iterations == 25 and not fit.converged and fit.fitted_0_or_1
    assert "glm.fit: algorithm did not converge" in fit.warnings
    assert abs(fit.coef[0]) < 1e-9
    assert fit.coef[1] == pytest.approx(2307.5868125, rel=1e-6)
    np.testing.assert_allclose(fit.bse, [137.3817277, 27466.5248897], rtol=1e-6)
    capped = glm_logit(np.column_stack([np.ones(800), x]), (x > 0).astype(float),
                       control=GlmControl(maxit=5, solver=solver))
    assert capped.iterations == 5 and capped.coef[1] < fit.coef[1]


def test_collapsed_rows_give_the_fit_of_the_records():
    _, reg, pre, age, inc, y = _did_like()
    x = np.column_stack([np.ones(800), reg, pre, age, inc == 1, inc == 2, inc == 3,
                         pre * reg]).astype(float)
    records = glm_logit(x, y)
    rows, prop, counts, index = collapse_rows(x, y)
    grouped = glm_logit(rows, prop, counts)
    assert rows.shape[0] < 200 and grouped.iterations == records.iterations
    np.testing.assert_allclose(grouped.coef, records.coef, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(grouped.bse, records.bse, rtol=1e-7)
    np.testing.assert_allclose(grouped.fitted[index], records.fitted, atol=1e-12)
    assert grouped.deviance == pytest.approx(records.deviance, rel=1e-10)


@pytest.mark.parametrize("shape, levels, step", [((500, 3), 2, 0.5), ((3000, 40), 10, 0.5),
                                                 ((200, 1), 50, 0.5), ((3000, 40), 10, 1.0),
                                                 ((500, 3), 3000, 1.0)])
def test_row_groups_order_rows_as_numpy_unique(shape, levels, step):
    # 40 columns of 10 levels overflow one int64 key: the key is re-ranked on the way; integer
    # values (step 1) are ranked without a sort, unless their range exceeds the rows
    x = np.random.default_rng(3).integers(0, levels, size=shape).astype(float) * step - 1.0
    x[shape[0] // 2:] = x[: shape[0] - shape[0] // 2]  # every row twice or more
    rows, first, inverse, counts = np.unique(x, axis=0, return_index=True, return_inverse=True,
                                             return_counts=True)
    got_first, got_inverse, got_counts = row_groups(x)
    np.testing.assert_array_equal(x[got_first], rows)
    np.testing.assert_array_equal(got_inverse, inverse.reshape(-1))
    np.testing.assert_array_equal(got_counts, counts)
    np.testing.assert_array_equal(got_first, first)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="y must lie in"):
        glm_logit(np.ones((3, 1)), np.array([0.0, 2.0, 1.0]))
    with pytest.raises(ValueError, match="need shape"):
        glm_logit(np.ones((3, 1)), np.array([0.0, 1.0]))


def test_normal_equations_solver_agrees_with_qr():
    x, y = _well_behaved()
    qr, normal = glm_logit(x, y), glm_logit(x, y, control=GlmControl(solver="normal"))
    np.testing.assert_allclose(normal.coef, qr.coef, atol=1e-10)
    np.testing.assert_allclose(normal.bse, qr.bse, atol=1e-10)
    _, reg, pre, age, inc, yd = _did_like()  # quasi-separation: QR steps where needed
    xd = np.column_stack([np.ones(800), reg, pre, age, inc == 1, inc == 2, inc == 3,
                          pre * reg]).astype(float)
    a, b = glm_logit(xd, yd), glm_logit(xd, yd, control=GlmControl(solver="normal"))
    assert a.iterations == b.iterations
    np.testing.assert_allclose(b.coef, a.coef, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(b.bse, a.bse, rtol=1e-6)
    with pytest.raises(ConfigError, match="solver"):
        GlmControl(solver="lbfgs")
    with pytest.raises(ConfigError, match="maxit"):
        GlmControl(maxit=0)
