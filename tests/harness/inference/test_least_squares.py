"""OLS and GCV ridge inference (harness/inference/least_squares.py) against statsmodels and a
direct solve per λ."""

import numpy as np
import statsmodels.api as sm

from harness.inference.least_squares import ols_inference, ridge_gcv, ridge_gcv_moments


def test_ols_matches_statsmodels_and_flags_aliased_designs():
    rng = np.random.default_rng(0)
    x = np.column_stack([np.ones(60), rng.normal(size=(60, 3))])
    y = x @ [1, 2, -1, 0.5] + rng.normal(size=60)
    beta, var = ols_inference(np.stack([x, x]), np.stack([y, -y]))
    fit = sm.OLS(y, x).fit()
    np.testing.assert_allclose(beta[0], fit.params, rtol=1e-10)
    np.testing.assert_allclose(np.sqrt(var[0]), fit.bse, rtol=1e-10)
    np.testing.assert_allclose(beta[1], -fit.params, rtol=1e-10)
    aliased = np.column_stack([x, x[:, 1]])
    b, v = ols_inference(aliased, y)
    assert np.isnan(b).all() and np.isnan(v).all()


def test_ridge_gcv_equals_a_direct_solve_at_the_grid_minimum():
    rng = np.random.default_rng(1)
    n, d = 80, 6
    x = rng.normal(size=(3, n, d))
    y = (x @ rng.normal(size=d)) + rng.normal(size=(3, n))
    grid = 10.0 ** np.linspace(-4, 2, 25)
    beta, var, lam = ridge_gcv(x, y, grid)
    for r in range(3):
        scores, fits = [], []
        for lmb in grid:
            a = x[r].T @ x[r] + lmb * np.eye(d)
            b = np.linalg.solve(a, x[r].T @ y[r])
            h = x[r] @ np.linalg.solve(a, x[r].T)
            rss = ((y[r] - x[r] @ b) ** 2).sum()
            scores.append(n * rss / (n - np.trace(h)) ** 2)
            ainv = np.linalg.inv(a)
            cov = rss / (n - np.trace(h)) * ainv @ x[r].T @ x[r] @ ainv
            fits.append((b, np.diag(cov)))
        k = int(np.argmin(scores))
        assert lam[r] == grid[k]
        np.testing.assert_allclose(beta[r], fits[k][0], rtol=1e-8)
        np.testing.assert_allclose(var[r], fits[k][1], rtol=1e-8)


def test_ridge_on_cell_indicators_has_the_closed_form_of_spec_003():
    """Cell-means coding: β̂_c = Σ_c y / (n_c + λ) and Var β̂_c = σ̂² n_c / (n_c + λ)², an empty
    cell is shrunk to 0 with variance 0 (spec 003 §5.2)."""
    rng = np.random.default_rng(2)
    cells = rng.integers(0, 5, 200)
    cells[cells == 4] = 3  # cell 4 empty
    x = np.eye(5)[cells]
    y = cells * 1.0 + rng.normal(size=200)
    beta, var, lam = ridge_gcv(x, y, [0.5])
    nc = np.bincount(cells, minlength=5)
    sums = np.bincount(cells, weights=y, minlength=5)
    np.testing.assert_allclose(beta, sums / (nc + 0.5), atol=1e-10)
    rss = ((y - beta[cells]) ** 2).sum()
    sigma2 = rss / (200 - (nc / (nc + 0.5)).sum())
    np.testing.assert_allclose(var, sigma2 * nc / (nc + 0.5) ** 2, atol=1e-12)
    assert var[4] == 0 and beta[4] == 0 and lam == 0.5


def test_ridge_from_moments_and_from_a_diagonal_equal_the_design_fit():
    """ridge_gcv_moments (XᵀX, Xᵀy, yᵀy, n) gives ridge_gcv's numbers; a cell-indicator design's
    diagonal XᵀX given as its diagonal too (no eigensolver), empty cells included."""
    rng = np.random.default_rng(3)
    cells = rng.integers(0, 6, (2, 150))
    cells[cells == 5] = 4  # cell 5 empty
    x = np.eye(6)[cells]
    y = cells * 0.7 + rng.normal(size=(2, 150))
    grid = 10.0 ** np.linspace(-4, 2, 13)
    want = ridge_gcv(x, y, grid)
    xtx = np.swapaxes(x, -1, -2) @ x
    xty = (np.swapaxes(x, -1, -2) @ y[..., None])[..., 0]
    full = ridge_gcv_moments(xtx, xty, (y ** 2).sum(-1), 150, grid)
    diag = ridge_gcv_moments(np.diagonal(xtx, axis1=-2, axis2=-1), xty, (y ** 2).sum(-1), 150,
                             grid)
    for got in (full, diag):
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)
