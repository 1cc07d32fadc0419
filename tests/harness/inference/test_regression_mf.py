"""OLS with intercept, unpenalised logistic regression and SGD matrix factorisation (spec 004
§3 S5, §4 R2–R3), each against an independent computation."""

import numpy as np
import pytest
import statsmodels.api as sm
from float_compare import assert_close_ulps

from harness.inference.matrix_factorisation import FactorModel, mf_cv, mf_sgd, mf_sgd_many
from harness.inference.regression import (
    GRAM_CONDITION_LIMIT,
    logistic_mle,
    logistic_probabilities,
    ols,
    ols_fitted,
)


def test_ols_with_intercept_matches_lstsq_per_replicate():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 50, 3))
    y = 2.0 + x @ np.array([1.0, -1.0, 0.5]) + rng.normal(size=(4, 50))
    beta = ols(x, y)
    for r in range(4):
        design = np.column_stack([np.ones(50), x[r]])
        assert np.allclose(beta[r], np.linalg.lstsq(design, y[r], rcond=None)[0])
        assert np.allclose(ols_fitted(x, y)[r], design @ beta[r])
    assert np.allclose(ols(x, y, intercept=False)[0],
                       np.linalg.lstsq(x[0], y[0], rcond=None)[0])


def test_ols_normal_equations_agree_with_the_pseudo_inverse_and_fall_back_to_it():
    """The batched normal-equation solve gives the pseudo-inverse's coefficients to rounding on
    well-conditioned designs (S5's covariates: normal sd 10, Poisson 5, Bernoulli); a
    rank-deficient design of the batch takes the pseudo-inverse (minimum-norm) path."""
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.normal(0, 10, (3, 200, 4)), rng.poisson(5, (3, 200, 4)),
                        rng.binomial(1, 0.5, (3, 200, 4))], -1).astype(float)
    y = x.sum(-1) + rng.normal(size=(3, 200))
    design = np.concatenate([np.ones((3, 200, 1)), x], -1)
    pinv = (np.linalg.pinv(design) @ y[..., None])[..., 0]
    np.testing.assert_allclose(ols(x, y), pinv, rtol=1e-9, atol=1e-12)
    x[1, :, 5] = 2 * x[1, :, 0]  # collinear columns in one replicate: its fit alone
    design = np.concatenate([np.ones((3, 200, 1)), x], -1)
    beta = ols(x, y)
    # the pseudo-inverse's coefficients, to the rounding of its product with y (a batched gemm
    # there, a gemv here: their summation order is the BLAS kernel's, which depends on the CPU)
    want = np.linalg.pinv(design[1]) @ y[1]
    assert_close_ulps(beta[1], want, ulps=8, scale=np.abs(want).max())
    np.testing.assert_allclose(beta[[0, 2]], pinv[[0, 2]], rtol=1e-9, atol=1e-12)


def test_ols_of_badly_scaled_columns_takes_the_scaled_equations_and_agrees_with_pinv():
    """An intercept beside columns of scale 10⁷ (S5's OPM releases): the Gram matrix is ill
    conditioned, the column-scaled one is not, and its solve gives the pseudo-inverse's
    coefficients to rounding; a design that stays ill conditioned after scaling (nearly
    collinear columns) still takes the pseudo-inverse."""
    rng = np.random.default_rng(3)
    x = rng.normal(0, 1e7, (4, 300, 5))
    y = x.sum(-1) + rng.normal(0, 1e7, (4, 300))
    design = np.concatenate([np.ones((4, 300, 1)), x], -1)
    gram = np.swapaxes(design, -1, -2) @ design
    assert np.all(np.linalg.cond(gram) > GRAM_CONDITION_LIMIT)
    pinv = (np.linalg.pinv(design) @ y[..., None])[..., 0]
    beta = ols(x, y)
    np.testing.assert_allclose(beta, pinv, rtol=1e-9, atol=1e-9 * np.abs(pinv).max())
    x[2, :, 1] = x[2, :, 0] * (1 + 1e-12)  # collinear up to rounding, whatever the scaling
    design = np.concatenate([np.ones((4, 300, 1)), x], -1)
    beta = ols(x, y)
    want = np.linalg.pinv(design[2]) @ y[2]  # to rounding, as above
    assert_close_ulps(beta[2], want, ulps=8, scale=np.abs(want).max())


def test_logistic_mle_matches_statsmodels_and_flags_separation():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 400, 2))
    p = 1 / (1 + np.exp(-(0.3 + x @ np.array([1.0, -0.7]))))
    y = (rng.random((3, 400)) < p).astype(float)
    beta, ok = logistic_mle(x, y)
    assert ok.all()
    for r in range(3):
        ref = sm.Logit(y[r], sm.add_constant(x[r])).fit(disp=0).params
        assert np.allclose(beta[r], ref, atol=1e-6)
    prob = logistic_probabilities(x, beta)
    assert np.allclose(prob[0], 1 / (1 + np.exp(-(sm.add_constant(x[0]) @ beta[0]))))
    separated = (x[0, :, 0] > 0).astype(float)
    _, ok = logistic_mle(x[0], separated)
    assert not ok


def test_mf_single_rating_batches_are_funk_sgd():
    """batch=1: one hand-written epoch of per-rating SGD on the same draws gives the same model."""
    users = np.array([0, 1, 2, 0, 1])
    items = np.array([0, 1, 0, 2, 2])
    r = np.array([4.0, 3.0, 5.0, 1.0, 2.0])
    lr, l2, dim = 0.05, 0.1, 2
    model = mf_sgd(users, items, r, 3, 3, np.random.default_rng(3), dim=dim, l2=l2, lr=lr,
                   epochs=1, batch=1)
    rng = np.random.default_rng(3)
    mu = r.mean()
    bu, bi = np.zeros(3), np.zeros(3)
    pu, qi = rng.normal(0, 0.1, (3, dim)), rng.normal(0, 0.1, (3, dim))
    for k in rng.permutation(5):
        u, i = users[k], items[k]
        e = r[k] - (mu + bu[u] + bi[i] + pu[u] @ qi[i])
        bu[u] += lr * (e - l2 * bu[u])
        bi[i] += lr * (e - l2 * bi[i])
        pu[u], qi[i] = pu[u] + lr * (e * qi[i] - l2 * pu[u]), qi[i] + lr * (e * pu[u] - l2 * qi[i])
    assert np.allclose(model.user_bias, bu) and np.allclose(model.item_factors, qi)
    assert np.allclose(model.user_factors, pu)


@pytest.mark.parametrize("dim", [3, 10, 19])  # 10, 19: the factor dot in pairwise order
def test_mf_batches_equal_a_record_loop_bit_for_bit(dim):
    """Mini-batches with repeated users and items: every gradient of a batch taken at the batch's
    start, then the updates added rating by rating in the batch's order (the record-level loop
    oracle of the vectorised gather/scatter) — the same floats, not only close ones. Exact on
    any CPU: the operation order is the same (elementwise products and sums, the factor dot in
    numpy's pairwise order, which ``_dot`` spells out and ``np.sum`` of a 1-D array follows;
    ``np.add.at`` adds one update at a time in the batch's order)."""
    rng = np.random.default_rng(11)
    nu, ni, n, lr, l2, batch = 5, 4, 60, 0.05, 0.1, 7
    users, items = rng.integers(0, nu, n), rng.integers(0, ni, n)
    r = rng.integers(1, 11, n) / 2
    model = mf_sgd(users, items, r, nu, ni, np.random.default_rng(3), dim=dim, l2=l2, lr=lr,
                   epochs=3, batch=batch)
    rng = np.random.default_rng(3)
    mu = float(r.mean())
    bu, bi = np.zeros(nu), np.zeros(ni)
    pu, qi = rng.normal(0, 0.1, (nu, dim)), rng.normal(0, 0.1, (ni, dim))
    for _ in range(3):
        order = rng.permutation(n)
        for start in range(0, n, batch):
            ks = order[start:start + batch]
            old = bu.copy(), bi.copy(), pu.copy(), qi.copy()
            for k in ks:
                u, i = users[k], items[k]
                e = r[k] - (mu + old[0][u] + old[1][i] + np.sum(old[2][u] * old[3][i]))
                bu[u] += lr * (e - l2 * old[0][u])
                bi[i] += lr * (e - l2 * old[1][i])
                pu[u] += lr * (e * old[3][i] - l2 * old[2][u])
                qi[i] += lr * (e * old[2][u] - l2 * old[3][i])
    for got, want in ((model.user_bias, bu), (model.item_bias, bi),
                      (model.user_factors, pu), (model.item_factors, qi)):
        np.testing.assert_array_equal(got, want)


def test_mf_many_fits_are_the_single_fits_bit_for_bit():
    """Fits batched over replicates (each its own data and stream, a short last batch) are the
    fits ``mf_sgd`` makes one at a time (the same path: ``mf_sgd`` is ``mf_sgd_many`` of one
    fit, and every operation there is elementwise over the fits, so exact on any CPU)."""
    rng = np.random.default_rng(12)
    nu, ni, n = 30, 20, 500
    users, items = rng.integers(0, nu, (3, n)), rng.integers(0, ni, (3, n))
    r = rng.integers(1, 11, (3, n)) / 2
    kw = {"dim": 10, "l2": 0.05, "lr": 0.02, "epochs": 2, "batch": 64}
    many = mf_sgd_many(users, items, r, nu, ni, [np.random.default_rng(s) for s in range(3)],
                       **kw)
    for j, fit in enumerate(many):
        one = mf_sgd(users[j], items[j], r[j], nu, ni, np.random.default_rng(j), **kw)
        assert fit.mean == one.mean
        for name in ("user_bias", "item_bias", "user_factors", "item_factors"):
            np.testing.assert_array_equal(getattr(fit, name), getattr(one, name))


def test_mf_recovers_a_low_rank_signal():
    rng = np.random.default_rng(4)
    nu, ni = 200, 150
    a, b = rng.normal(size=(nu, 2)), rng.normal(size=(ni, 2))
    u, i = rng.integers(0, nu, 16_000), rng.integers(0, ni, 16_000)
    r = 3 + 0.5 * np.sum(a[u] * b[i], axis=1) + rng.normal(0, 0.3, u.size)
    model = mf_sgd(u[:12_000], i[:12_000], r[:12_000], nu, ni, np.random.default_rng(5), dim=2,
                   lr=0.02, epochs=30, batch=64)
    assert isinstance(model, FactorModel)
    test_rmse = np.sqrt(np.mean((model.predict(u[12_000:], i[12_000:]) - r[12_000:]) ** 2))
    assert test_rmse < 0.45 < np.std(r)  # well below the spread, near the noise SD 0.3
    assert model.predict([0], [0], clip=(2.9, 3.1))[0] <= 3.1


def test_mf_cv_picks_the_setting_with_the_lower_validation_error_and_refits():
    """A penalty of 50 shrinks every factor and bias to 0 (predicts the mean); cross-validation
    must prefer the small penalty on data with a strong low-rank signal, report one mean
    validation RMSE per setting, and refit the chosen setting on all ratings."""
    rng = np.random.default_rng(6)
    nu, ni = 120, 90
    a, b = rng.normal(size=(nu, 2)), rng.normal(size=(ni, 2))
    u, i = rng.integers(0, nu, 6_000), rng.integers(0, ni, 6_000)
    r = 3 + 0.8 * np.sum(a[u] * b[i], axis=1) + rng.normal(0, 0.3, u.size)
    grid = [{"l2": 50.0}, {"l2": 0.01}]
    model, best, scores = mf_cv(u, i, r, nu, ni, np.random.default_rng(7), grid=grid, folds=2,
                                dim=2, lr=0.02, epochs=15, batch=64)
    print(scores)
    assert best == 1 and scores.shape == (2,) and scores[1] < 0.8 * scores[0]
    assert scores[0] == pytest.approx(np.std(r), rel=0.1)  # the mean predictor
    fit_rmse = np.sqrt(np.mean((model.predict(u, i) - r) ** 2))
    assert fit_rmse < scores[1]  # refitted on all ratings, scored on its own data
    with pytest.raises(ValueError, match="folds"):
        mf_cv(u, i, r, nu, ni, np.random.default_rng(7), grid=grid, folds=1)
